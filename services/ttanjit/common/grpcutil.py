"""gRPC server helpers: an aio server with standard health checking
(``grpc.health.v1.Health``) so every gRPC server answers probes."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import random
import secrets
import socket
from collections.abc import Callable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

# CreateGame's FAILED_PRECONDITION (trailing metadata): the shard that owns
# the game id asked for (docs/protocol.md 4)
OWNER_MD = "ttanjit-owner"

log = logging.getLogger(__name__)


class HealthServer:
    """The health service; ``set(serving)`` flips both the overall status
    ("") and the named services."""

    def __init__(self, server: grpc.aio.Server, services: list[str]) -> None:
        self.servicer = health.aio.HealthServicer()
        self.services = ["", *services]
        health_pb2_grpc.add_HealthServicer_to_server(self.servicer, server)

    async def set(self, serving: bool) -> None:
        status = (health_pb2.HealthCheckResponse.SERVING if serving
                  else health_pb2.HealthCheckResponse.NOT_SERVING)
        for name in self.services:
            await self.servicer.set(name, status)


def aio_server(port: int, host: str = "0.0.0.0") -> tuple[grpc.aio.Server, int]:
    """A grpc.aio server bound to host:port (0 = any free port); returns the port."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot bind gRPC to {host}:{port}")
    return server, bound


# Calls to a replicated service (the matchmaker, docs/protocol.md 4.1) go
# to one replica at a time, each over its own channel (:class:`Replicas`),
# and stay with the one that answered last (:class:`Retrying`). With one
# round-robin channel over them all, a frozen replica (SIGSTOP: its
# connections stay up and it answers nothing; keepalive pings did not find
# it, measured) took the first attempt of every call, each waiting the whole
# attempt (trial: two players met 8.4 s after 빠른 대전, against 0.4 s).
# Nothing is left out: a call that fails on one replica tries the next in
# turn, so in a failover, where every replica fails calls for a while, all
# are still tried (gRPC's outlier detection, tried instead, ejected healthy
# replicas then: calls failed after their whole 10 s).
_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
]
RESOLVE_S = 5.0  # a dns target's addresses are looked up again this often ...
RESOLVE_MIN_S = 1.0  # ... and, when every replica failed a call, at most this often
RETIRE_S = 30.0  # a replica's channel stays this long after it left the answer


def _unavailable(details: str) -> grpc.aio.AioRpcError:
    """A call's failure with no replica to try (as gRPC's own)."""
    return grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(),
                                grpc.aio.Metadata(), details=details)


class Replicas:
    """The replicas behind ``target``, a channel and a ``stub_class`` stub
    for each. Targets as gRPC names them: ``ipv4:h:p1,h:p2`` and ``ipv6:[a]:p1,[b]:p2`` (fixed),
    ``dns:///name:port`` (a headless Service: every address the name
    resolves to, looked up again every :data:`RESOLVE_S`; an authority,
    ``dns://server/name:port``, is not supported), or ``host:port``."""

    def __init__(self, target: str, stub_class: Callable[[grpc.aio.Channel], Any]) -> None:
        self._stub_class = stub_class
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._stubs: dict[str, Any] = {}
        self._retiring: dict[asyncio.Task[None], grpc.aio.Channel] = {}
        self._lookup: asyncio.Task[None] | None = None
        self._resolved_at = float("-inf")
        self.closed = False
        self.addresses: list[str] = []
        self._name: tuple[str, str] | None = None
        scheme, sep, rest = target.partition(":")
        if sep and scheme in ("ipv4", "ipv6"):
            self.addresses = [a for a in rest.split(",") if a]
            if not self.addresses or not all(self._literal(a) and a.startswith("[") == (
                    scheme == "ipv6") for a in self.addresses):
                raise ValueError(f"not a list of {scheme} addresses with ports: {target!r}")
            return
        if target.startswith("dns:"):
            if target.startswith("dns://") and not target.startswith("dns:///"):
                raise ValueError(f"a dns target with an authority is not supported: {target!r}")
            target = target.removeprefix("dns:///").removeprefix("dns:")
        elif "/" in target or (sep and not rest[:1].isdigit() and not target.startswith("[")):
            raise ValueError(f"not a gRPC target this client reads: {target!r}")
        if self._literal(target):
            self.addresses = [target]
            return
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"not a gRPC target of host:port: {target!r}")
        self._name = (host, port)

    @staticmethod
    def _literal(addr: str) -> bool:
        """``ip:port`` or ``[ipv6]:port``."""
        host, _, port = addr.rpartition(":")
        if not port.isdigit():
            return False
        try:
            ipaddress.ip_address(host[1:-1] if host.startswith("[") and host.endswith("]")
                                 else host)
        except ValueError:
            return False
        return ":" not in host or host.startswith("[")

    async def current(self, timeout: float) -> list[str]:
        """The replicas' addresses (waiting at most ``timeout`` for the first
        answer of a dns target); a dns target is looked up again in the
        background when it is time."""
        if self._name is not None:
            if not self.addresses:
                try:
                    await asyncio.wait_for(asyncio.shield(self.refresh()), max(0.0, timeout))
                except TimeoutError:
                    pass
            elif asyncio.get_running_loop().time() - self._resolved_at >= RESOLVE_S:
                self.refresh(0.0)
        return self.addresses

    def refresh(self, min_s: float = RESOLVE_MIN_S) -> asyncio.Future[None]:
        """Look a dns target up again (it is time, or every replica failed a
        call: are they still there?): the lookup under way, or a new one if
        ``min_s`` has passed since the last began (one at a time, so answers
        land in order); done when it is (await it or not)."""
        loop = asyncio.get_running_loop()
        if self._lookup is None and self._name is not None and not self.closed \
                and loop.time() - self._resolved_at >= min_s:
            self._resolved_at = loop.time()
            self._lookup = asyncio.create_task(self._resolve())
        if self._lookup is None:
            done: asyncio.Future[None] = loop.create_future()
            done.set_result(None)
            return done
        return self._lookup

    async def _resolve(self) -> None:
        """A failed lookup, or one that found nothing, keeps the addresses
        known (a Service whose replicas are all unready for a moment)."""
        assert self._name is not None
        host, port = self._name
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, int(port),
                                                                 type=socket.SOCK_STREAM)
            found = sorted({(f"[{i[4][0]}]:{port}" if i[0] == socket.AF_INET6
                             else f"{i[4][0]}:{port}") for i in infos})
            if not found:
                raise OSError("no address")
        except (OSError, UnicodeError) as exc:  # (a name no lookup takes: UnicodeError)
            log.warning("cannot look up %s: %s", host, exc)
            return
        finally:
            self._lookup = None
        for gone in set(self._channels) - set(found):
            self._retire(gone)
        self.addresses = found

    def _retire(self, addr: str) -> None:
        """Close a channel of a replica that is gone, once its calls are over."""
        ch = self._channels.pop(addr)
        self._stubs.pop(addr, None)

        async def later() -> None:
            await asyncio.sleep(RETIRE_S)
            await ch.close()

        task = asyncio.create_task(later())
        self._retiring[task] = ch
        task.add_done_callback(lambda t: self._retiring.pop(t, None))

    def stub(self, addr: str) -> Any:
        """The replica's stub, over its channel (both made when first asked)."""
        if self.closed:
            raise _unavailable("the client is closed")
        stub = self._stubs.get(addr)
        if stub is None:
            ch = self._channels[addr] = grpc.aio.insecure_channel(addr, options=_CHANNEL_OPTIONS)
            stub = self._stubs[addr] = self._stub_class(ch)
        return stub

    async def close(self) -> None:
        self.closed = True
        if self._lookup is not None:
            self._lookup.cancel()
            await asyncio.gather(self._lookup, return_exceptions=True)
        channels = [*self._channels.values(), *self._retiring.values()]
        for task in list(self._retiring):
            task.cancel()
        self._channels.clear()
        self._stubs.clear()
        for ch in channels:
            await ch.close()


# Every attempt of one Retrying call carries the same request id: the
# matchmaker carries a call out once per id and answers its attempts alike
# (docs/protocol.md 4.1)
REQUEST_MD = "ttanjit-request"
# a lobby call's player connection: when its gateway accepted the socket
# (ms, Connection.opened_at); the matchmaker orders a player's connections
# by it (an Away of one opened before another it heard from is ignored)
OPENED_MD = "ttanjit-opened"
# and the gateway it is on (its id, the shards' route): the lobby asks that
# gateway whether it is still there (docs/protocol.md 4.1, a gateway killed)
GATEWAY_MD = "ttanjit-gateway"


def opened_md(opened_ms: int, gateway: str = "") -> tuple[tuple[str, str], ...]:
    """A call's metadata naming the player connection opened at
    ``opened_ms`` (on ``gateway``)."""
    if gateway:
        return ((OPENED_MD, str(opened_ms)), (GATEWAY_MD, gateway))
    return ((OPENED_MD, str(opened_ms)),)
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
PAUSE_S = 0.05  # between attempts; doubled (to PAUSE_MAX_S) while every replica fails
PAUSE_MAX_S = 0.8


class Retrying:
    """Calls (by the replicas' stub's method names) to :class:`Replicas`, each to
    the replica that answered last (one picked at random at first, so
    gateways spread). A replica that does not answer an attempt in
    ``attempt_s`` (a frozen or partitioned replica holds a call without
    failing it, or a slow one has not finished) or is gone (UNAVAILABLE)
    hands the call to the next replica in turn, and later calls go there
    too, until ``timeout`` runs out. Every attempt carries the call's
    request id (:data:`REQUEST_MD`), so a retried call is carried out once:
    the leader answers an attempt with the outcome of the first one.
    ``on_failed(code)`` is told of each attempt that failed so.

    Only news moves the calls: a failure moves them off a replica only if
    its attempt was sent after that replica last answered and after the
    calls last moved to it (an attempt that waited out a failover, or a
    call slow for its own reasons, ends long after), and a success moves
    them to its replica only if its attempt was sent after they last moved
    (a slow replica's late answers do not pull them back)."""

    def __init__(self, replicas: Replicas, attempt_s: float = 2.5,
                 on_failed: Callable[[grpc.StatusCode], None] | None = None) -> None:
        self._replicas = replicas
        self._attempt_s = attempt_s
        self._on_failed = on_failed
        self._answered: dict[str, float] = {}  # replica -> loop time it last answered
        self._moved = float("-inf")  # loop time ``good`` last changed
        self.good: str | None = None  # the replica calls go to first

    def _move(self, addr: str, now: float) -> None:
        if self.good != addr:
            self.good, self._moved = addr, now

    def _pick(self, addrs: list[str], tried: set[str], last: str | None, now: float) -> str:
        """The replica for an attempt: the good one, unless this call just
        failed on it or tried it this round; then the next in turn after
        the one it failed on last that it has not tried this round."""
        if self.good not in addrs:
            self._move(random.choice(addrs), now)
        assert self.good is not None
        if self.good != last and self.good not in tried:
            return self.good
        i = addrs.index(last) if last in addrs else -1
        for k in range(1, len(addrs) + 1):
            addr = addrs[(i + k) % len(addrs)]
            if addr not in tried and addr != last:
                return addr
        return addrs[(i + 1) % len(addrs)]

    def _failed(self, addr: str, addrs: list[str], sent: float, now: float) -> None:
        if self.good == addr and addr in addrs \
                and sent >= max(self._answered.get(addr, float("-inf")), self._moved):
            self._move(addrs[(addrs.index(addr) + 1) % len(addrs)], now)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        async def call(request: Any, timeout: float = 10.0, **kw: Any) -> Any:
            loop = asyncio.get_running_loop()
            end = loop.time() + timeout
            metadata = (*kw.pop("metadata", ()), (REQUEST_MD, secrets.token_hex(8)))
            tried: set[str] = set()  # replicas failed this round (a round: every replica)
            last: str | None = None  # the one failed last
            pause = PAUSE_S
            while True:
                if self._replicas.closed:  # (the client stopped: no attempt to make)
                    raise _unavailable("the client is closed")
                addrs = await self._replicas.current(end - loop.time() - 0.05)
                if not addrs:  # a dns name that does not resolve (yet)
                    if end - loop.time() <= 0.25:
                        raise _unavailable("no replica's address is known")
                    await asyncio.sleep(0.2)
                    continue
                sent = loop.time()
                addr = self._pick(addrs, tried, last, sent)
                try:
                    rep = await getattr(self._replicas.stub(addr), name)(
                        request, timeout=max(0.05, min(self._attempt_s, end - sent)),
                        metadata=metadata, **kw)
                except grpc.aio.AioRpcError as exc:
                    now = loop.time()
                    if exc.code() not in RETRYABLE:
                        self._answered[addr] = now  # (an answer: the call's own error)
                        raise
                    self._failed(addr, addrs, sent, now)
                    if self._on_failed is not None:
                        self._on_failed(exc.code())
                    if end - now <= 0.05:
                        raise
                    tried.add(addr)
                    last = addr
                    if tried >= set(addrs):  # every replica failed: still there?
                        self._replicas.refresh()
                        tried = set()  # (the next round goes on after the last)
                        pause = min(2 * pause, PAUSE_MAX_S)
                    await asyncio.sleep(min(pause, max(0.0, end - loop.time() - 0.05)))
                    continue
                now = loop.time()
                self._answered[addr] = now
                if sent >= self._moved:
                    self._move(addr, now)
                return rep

        return call
