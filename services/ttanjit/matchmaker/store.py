"""The lobby's durable state and the matchmaker leader lease (docs/protocol.md 4.1).

Every matchmaker replica runs :class:`LeaderLease`; the one holding the lease
(key ``leader.<lobby>`` in the ``ttanjit_lobby`` bucket, renewed with a
revision check) is the leader and the only replica that changes the lobby.
The lobby itself (tickets, matches being placed, rooms, players' seats, room
members away) is one JSON document under ``state.<lobby>``, written by
:class:`LobbyStore` with a revision check after every change and before any
reply or notification. A new leader first rewrites that document with its own
epoch: any write of a previous leader (a frozen process that thaws, a
partitioned one) then fails with a wrong last revision, and that replica steps
down (:class:`Fenced`). So the lobby has one writer at a time and loses
nothing a client was told about when any replica dies.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import orjson
from nats.js.errors import KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue

from ttanjit.games.base import JSON

log = logging.getLogger("ttanjit.matchmaker")



def now_ms() -> int:
    return int(time.time() * 1000)


class Fenced(Exception):
    """Another replica took the lead: this one's lobby is stale."""


class LobbyStore:
    """Group commit of the lobby document with fencing.

    ``commit()`` returns once a write that includes every change made before
    the call is durable; concurrent callers share one write. ``snapshot`` is
    the function that renders the current lobby."""

    def __init__(self, kv: KeyValue, lobby: str, snapshot: Callable[[], JSON]) -> None:
        self.kv = kv
        self.key = f"state.{lobby}"
        self.snapshot = snapshot
        self.rev = 0
        self.owner: tuple[str, int] = ("", 0)  # (replica id, epoch) stamped on writes
        self._waiters: list[asyncio.Future[None]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.writes = 0

    async def load(self) -> JSON | None:
        """The stored lobby (None when there is none yet); remembers its revision."""
        try:
            entry = await self.kv.get(self.key)
        except NotFoundError:
            self.rev = 0
            return None
        self.rev = entry.revision or 0
        if not entry.value:
            return None
        doc: JSON = orjson.loads(entry.value)
        return doc

    async def claim(self, replica: str, epoch: int) -> JSON | None:
        """Take the lobby for ``epoch``: read it and write it back stamped
        with this replica, which fences every earlier writer. Returns the
        lobby as it was (None for a new deployment)."""
        doc = await self.load()
        self.owner = (replica, epoch)
        body = dict(doc or {})
        body.update(leader=replica, epoch=epoch, written_ms=now_ms())
        await self._write(orjson.dumps(body))
        return doc

    async def _write(self, data: bytes) -> None:
        try:
            if self.rev == 0:
                self.rev = await self.kv.create(self.key, data)
            else:
                self.rev = await self.kv.update(self.key, data, last=self.rev)
        except KeyWrongLastSequenceError:
            await self._recheck(data)
        except Exception:
            # A timeout may hide a write that landed: look before failing.
            if not await self._landed(data):
                raise
        self.writes += 1

    async def _landed(self, data: bytes) -> bool:
        try:
            entry = await self.kv.get(self.key)
        except Exception:  # noqa: BLE001 - NATS still away: the write failed for us
            return False
        if entry.value == data:
            self.rev = entry.revision or self.rev
            return True
        return False

    async def _recheck(self, data: bytes) -> None:
        """Wrong last revision: either our own earlier write landed after a
        timeout (same owner stamp: adopt its revision and write again) or
        another replica claimed the lobby (fenced)."""
        try:
            entry = await self.kv.get(self.key)
        except NotFoundError:
            entry = None
        if entry is not None and entry.value:
            doc = orjson.loads(entry.value)
            if (doc.get("leader"), doc.get("epoch")) == self.owner:
                self.rev = entry.revision or 0
                self.rev = await self.kv.update(self.key, data, last=self.rev)
                return
        raise Fenced()

    async def commit(self) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await fut

    async def _flush(self) -> None:
        while self._waiters:
            waiters, self._waiters = self._waiters, []
            body = self.snapshot()
            body.update(leader=self.owner[0], epoch=self.owner[1], written_ms=now_ms())
            try:
                await self._write(orjson.dumps(body))
            except BaseException as exc:  # noqa: BLE001 - handed to every waiter
                for w in waiters:
                    if not w.done():
                        w.set_exception(Fenced() if isinstance(exc, Fenced) else exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                continue
            for w in waiters:
                if not w.done():
                    w.set_result(None)

    def cancel(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
        for w in self._waiters:
            if not w.done():
                w.set_exception(Fenced())
        self._waiters = []


class LeaderLease:
    """The leader lease ``leader.<lobby>``: ``{"id", "grpc", "epoch",
    "renewed_ms", "expires_ms"}``. The holder renews it every ``renew_ms``
    with a revision check; any replica takes it (epoch + 1) once
    ``expires_ms`` has passed. A leader that cannot renew before its own
    expiry stops leading at once, without waiting to learn who took over."""

    def __init__(self, kv: KeyValue, lobby: str, replica: str, grpc_addr: str,
                 lease_ms: int = 2000, renew_ms: int = 500) -> None:
        self.kv = kv
        self.key = f"leader.{lobby}"
        self.id = replica
        self.grpc = grpc_addr
        self.lease_ms = lease_ms
        self.renew_ms = renew_ms
        self.leading = False
        self.epoch = 0
        self.rev = 0
        self.expires_ms = 0
        self.leader_addr = ""  # the current leader's gRPC address as last seen
        self.leader_id = ""

    def _doc(self, epoch: int) -> bytes:
        now = now_ms()
        self.expires_ms = now + self.lease_ms
        return orjson.dumps({"id": self.id, "grpc": self.grpc, "epoch": epoch,
                             "renewed_ms": now, "expires_ms": self.expires_ms})

    async def step(self) -> bool:
        """One round: renew (leader) or look and maybe take over (follower).
        True when this replica has just become the leader."""
        if self.leading:
            try:
                self.rev = await self.kv.update(self.key, self._doc(self.epoch), last=self.rev)
            except KeyWrongLastSequenceError:
                log.error("leader lease lost to another replica")
                self.leading = False
            except Exception as exc:  # noqa: BLE001 - NATS away: lead until our own expiry
                if now_ms() >= self.expires_ms:
                    log.error("leader lease expired unrenewed: %r", exc)
                    self.leading = False
            return False
        try:
            entry = await self.kv.get(self.key)
        except NotFoundError:
            entry = None
        if entry is None or not entry.value:
            try:
                rev = await self.kv.create(self.key, self._doc(1))
            except Exception:  # noqa: BLE001 - another replica created it first
                return False
            return self._won(rev, 1)
        doc = orjson.loads(entry.value)
        self.leader_id, self.leader_addr = str(doc.get("id", "")), str(doc.get("grpc", ""))
        if int(doc.get("expires_ms", 0)) > now_ms():
            return False
        epoch = int(doc.get("epoch", 0)) + 1
        try:
            rev = await self.kv.update(self.key, self._doc(epoch), last=entry.revision)
        except KeyWrongLastSequenceError:
            return False
        return self._won(rev, epoch)

    def _won(self, rev: int, epoch: int) -> bool:
        self.rev, self.epoch, self.leading = rev, epoch, True
        self.leader_id, self.leader_addr = self.id, self.grpc
        log.info("leader of the lobby", extra={"epoch": epoch})
        return True

    async def release(self) -> None:
        """On a clean stop: let a follower take over at once."""
        if not self.leading:
            return
        self.leading = False
        try:
            await self.kv.update(self.key, orjson.dumps({
                "id": self.id, "grpc": "", "epoch": self.epoch, "renewed_ms": now_ms(),
                "expires_ms": 0}), last=self.rev)
        except Exception:  # noqa: BLE001 - someone else leads already, or NATS gone
            pass
