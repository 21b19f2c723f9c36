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


class Replicas:
    """The replicas behind ``target``, a channel for each: ``ipv4:h:p1,h:p2``
    (fixed), ``dns:///name:port`` (a headless Service: every address the
    name resolves to, looked up again every :data:`RESOLVE_S`), or
    ``host:port``."""

    def __init__(self, target: str) -> None:
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._retiring: set[asyncio.Task[None]] = set()
        self._resolving: asyncio.Task[None] | None = None
        self._resolved_at = float("-inf")
        self.addresses: list[str] = []
        self._name: tuple[str, str] | None = None
        if target.startswith("ipv4:"):
            self.addresses = [a for a in target.removeprefix("ipv4:").split(",") if a]
            return
        name = target.removeprefix("dns:///").removeprefix("dns:")
        host, _, port = name.rpartition(":")
        host = host.strip("[]")
        try:
            ipaddress.ip_address(host)
            self.addresses = [name]
        except ValueError:
            self._name = (host, port)
        if not host or not port.isdigit():
            raise ValueError(f"not a gRPC target of host:port: {target!r}")

    async def current(self) -> list[str]:
        """The replicas' addresses; a dns target is looked up when it is time
        (in the background once there is an answer to go on with)."""
        if self._name is not None:
            stale = asyncio.get_running_loop().time() - self._resolved_at >= RESOLVE_S
            if not self.addresses:
                await self.refresh(RESOLVE_MIN_S)
            elif stale and self._resolving is None:
                self._resolving = asyncio.create_task(self.refresh(0.0))
        return self.addresses

    async def refresh(self, min_s: float = RESOLVE_MIN_S) -> None:
        """Look a dns target up again (not sooner than ``min_s`` after the
        last time). A failed lookup keeps the addresses known."""
        loop = asyncio.get_running_loop()
        if self._name is None or loop.time() - self._resolved_at < min_s:
            return
        self._resolved_at = loop.time()
        host, port = self._name
        try:
            infos = await loop.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        except OSError as exc:
            log.warning("cannot look up %s: %s", host, exc)
            return
        finally:
            self._resolving = None
        found = sorted({(f"[{i[4][0]}]:{port}" if i[0] == socket.AF_INET6
                         else f"{i[4][0]}:{port}") for i in infos})
        for gone in set(self._channels) - set(found):
            self._retire(gone)
        self.addresses = found

    def _retire(self, addr: str) -> None:
        """Close a channel of a replica that is gone, once its calls are over."""
        ch = self._channels.pop(addr)

        async def later() -> None:
            await asyncio.sleep(RETIRE_S)
            await ch.close()
        task = asyncio.create_task(later())
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    def channel(self, addr: str) -> grpc.aio.Channel:
        ch = self._channels.get(addr)
        if ch is None:
            ch = self._channels[addr] = grpc.aio.insecure_channel(addr, options=_CHANNEL_OPTIONS)
        return ch

    async def close(self) -> None:
        for task in list(self._retiring):
            task.cancel()
        if self._resolving is not None:
            self._resolving.cancel()
        for ch in list(self._channels.values()):
            await ch.close()
        self._channels.clear()


# Every attempt of one Retrying call carries the same request id: the
# matchmaker carries a call out once per id and answers its attempts alike
# (docs/protocol.md 4.1)
REQUEST_MD = "ttanjit-request"
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class Retrying:
    """Calls (by ``stub_class``'s method names) to :class:`Replicas`, each to
    the replica that answered last (one picked at random at first, so
    gateways spread). A replica that does not answer an attempt in
    ``attempt_s`` (a frozen or partitioned replica holds a call without
    failing it, or a slow one has not finished) or is gone (UNAVAILABLE)
    hands the call to the next replica in turn, and later calls go there
    too, until ``timeout`` runs out. Every attempt carries the call's
    request id (:data:`REQUEST_MD`), so a retried call is carried out once:
    the leader answers an attempt with the outcome of the first one.
    ``on_retry(code)`` is told of each attempt that failed over."""

    def __init__(self, stub_class: Callable[[grpc.aio.Channel], Any], replicas: Replicas,
                 attempt_s: float = 2.5,
                 on_retry: Callable[[grpc.StatusCode], None] | None = None) -> None:
        self._stub_class = stub_class
        self._replicas = replicas
        self._attempt_s = attempt_s
        self._on_retry = on_retry
        self._stubs: dict[tuple[str, grpc.aio.Channel], Any] = {}
        self.good: str | None = None  # the replica calls go to first

    def _stub(self, addr: str) -> Any:
        ch = self._replicas.channel(addr)
        stub = self._stubs.get((addr, ch))
        if stub is None:
            if len(self._stubs) > 4 * len(self._replicas.addresses) + 8:
                self._stubs.clear()  # (channels of replicas gone)
            stub = self._stubs[(addr, ch)] = self._stub_class(ch)
        return stub

    def _pick(self, addrs: list[str], failed: str | None) -> str:
        """The replica for an attempt: the good one, or, right after a
        failure on it, the next in turn."""
        if self.good not in addrs:
            self.good = random.choice(addrs)
        if failed is None or failed != self.good:
            return self.good
        return addrs[(addrs.index(failed) + 1) % len(addrs)] if failed in addrs else self.good

    def _failed(self, addr: str, addrs: list[str]) -> None:
        if self.good == addr and addr in addrs:  # (not moved on by another call already)
            self.good = addrs[(addrs.index(addr) + 1) % len(addrs)]

    def __getattr__(self, name: str) -> Any:
        async def call(request: Any, timeout: float = 10.0, **kw: Any) -> Any:
            loop = asyncio.get_running_loop()
            end = loop.time() + timeout
            metadata = (*kw.pop("metadata", ()), (REQUEST_MD, secrets.token_hex(8)))
            failed: str | None = None
            failures = 0
            while True:
                addrs = await self._replicas.current()
                if not addrs:  # a dns name that does not resolve (yet)
                    if end - loop.time() <= 0.25:
                        raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE,
                                                   grpc.aio.Metadata(), grpc.aio.Metadata(),
                                                   details="no replica's address is known")
                    await asyncio.sleep(0.2)
                    continue
                addr = self._pick(addrs, failed)
                left = end - loop.time()
                try:
                    rep = await getattr(self._stub(addr), name)(
                        request, timeout=max(0.05, min(self._attempt_s, left)),
                        metadata=metadata, **kw)
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in RETRYABLE or end - loop.time() <= 0.05:
                        raise
                    self._failed(addr, addrs)
                    failed, failures = addr, failures + 1
                    if self._on_retry is not None:
                        self._on_retry(exc.code())
                    if failures >= len(addrs):  # every replica failed: are they still there?
                        await self._replicas.refresh()
                    await asyncio.sleep(0.05)
                    continue
                self.good = addr
                return rep

        return call
