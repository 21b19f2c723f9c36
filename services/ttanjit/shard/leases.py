"""Ownership upkeep (docs/protocol.md 5): this shard's lease in the owners
bucket, the watch that keeps :class:`~ttanjit.shard.ownership.OwnerBook`
current (with a watchdog), failover claims of games whose owner's lease ran
out, and heartbeats. A mixin of :class:`ttanjit.shard.service.Shard`."""

from __future__ import annotations

import asyncio
import gc
import logging
import secrets
from typing import Any

import orjson
from nats.errors import TimeoutError as NatsTimeout
from nats.js.errors import KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KV_DEL, KV_PURGE

from ttanjit.shard import metrics as m
from ttanjit.shard.live import wall_ms
from ttanjit.shard.ownership import SHARD_PREFIX, Lease, rendezvous
from ttanjit.shard.parts import ShardParts

log = logging.getLogger("ttanjit.shard")


class Leases(ShardParts):
    # ======================================================================
    # leases and the owners bucket
    # ======================================================================
    def _lease_doc(self) -> bytes:
        now = wall_ms()
        self.lease_expires = now + self.cfg.lease_ms
        return orjson.dumps({
            "shard": self.id, "inc": self.inc, "grpc": self.grpc_addr, "renewed_ms": now,
            "expires_ms": self.lease_expires, "draining": self.draining,
            "games": len(self.games)})

    async def _register_lease(self) -> None:
        self.lease_rev = await self.owners.put(SHARD_PREFIX + self.id, self._lease_doc())

    async def _renew(self) -> None:
        async with self.renew_lock:  # one renewal at a time (the drain renews too)
            await self._renew_once()

    async def _renew_once(self) -> None:
        try:
            self.lease_rev = await self.owners.update(SHARD_PREFIX + self.id, self._lease_doc(),
                                                      last=self.lease_rev)
        except KeyWrongLastSequenceError:
            # Someone declared us dead and took our games: let them go.
            log.error("lease lost: another shard took over my games", extra={"shard": self.id})
            for live in list(self.games.values()):
                m.losses.inc()
                self._drop(live, "lease lost")
            self.inc = secrets.token_hex(4)
            await self._register_lease()

    async def _lease_loop(self) -> None:
        while True:
            await asyncio.sleep(self.cfg.renew_ms / 1000)
            try:
                await self._renew()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - NATS hiccup: retry next tick
                log.warning("lease renewal failed: %r", exc)

    async def _watchdog(self) -> None:
        """The owners watch must see our own lease renewals (every renew_ms);
        when it has gone quiet (e.g. after a NATS restart) start a new one, or
        failover detection would go blind."""
        quiet = max(3.0, 6 * self.cfg.renew_ms / 1000)
        while True:
            await asyncio.sleep(1.0)
            if self.loop.time() - self.watch_seen < quiet or not self.nc.is_connected:
                continue
            log.warning("owners watch went quiet: restarting it")
            self.watch_task.cancel()
            try:
                await self.watcher.stop()  # type: ignore[no-untyped-call]
            except Exception:  # noqa: BLE001
                pass
            try:
                self.watcher = await self.owners.watchall()
            except Exception as exc:  # noqa: BLE001
                log.warning("cannot watch owners: %r", exc)
                continue
            self.watch_seen = self.loop.time()
            self.watch_task = asyncio.create_task(self._watch_owners(), name="watch-owners")

    async def _watch_owners(self) -> None:
        while True:
            try:
                entry = await self.watcher.updates(timeout=3600)  # type: ignore[no-untyped-call]
            except NatsTimeout:
                continue
            self.watch_seen = self.loop.time()
            if entry is None:
                continue
            if entry.operation in (KV_DEL, KV_PURGE) or not entry.value:
                self.book.on_delete(entry.key)
                continue
            try:
                self.book.on_put(entry.key, orjson.loads(entry.value), entry.revision or 0)
            except (ValueError, KeyError, TypeError):
                log.warning("bad owners entry %s", entry.key)
                continue
            own = self.book.owners.get(entry.key)
            live = self.games.get(entry.key)
            if live is not None and own is not None and (own.shard, own.inc) != (self.id, self.inc):
                if not live.frozen:
                    log.warning("game taken by another shard",
                                extra={"game": entry.key, "owner": own.shard})
                    m.losses.inc()
                self._drop(live, "taken by " + own.shard)

    async def _orphan_loop(self) -> None:
        """Claim games whose owner's lease ran out (failover)."""
        await asyncio.sleep(0.5)
        while True:
            await asyncio.sleep(0.2)
            if self.draining:
                continue
            try:
                await self._claim_orphans()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001
                log.exception("orphan scan failed")

    async def _claim_orphans(self) -> None:
        now = wall_ms()
        orphans = self.book.orphaned(now, self.id)
        if not orphans:
            return
        takers = self.book.takers(now)
        jobs = []
        for gid, own, lease in orphans:
            if gid in self.games or gid in self.claiming:
                continue
            chosen = rendezvous(gid, takers)
            # the chosen shard claims at once; others step in when it did not
            overdue = lease is None or lease.expires_ms < now - 2000
            if chosen != self.id and not overdue:
                continue
            dead_renewed = lease.renewed_ms if lease is not None and lease.inc == own.inc else 0
            jobs.append(self._claim(gid, "failover", own.revision, own.epoch,
                                    dead_renewed_ms=dead_renewed))
        if jobs:
            sem = asyncio.Semaphore(32)

            async def run(job: Any) -> None:
                async with sem:
                    await job

            await asyncio.gather(*(run(j) for j in jobs))
        # a dead shard whose games are all gone: remove its lease entry
        for lease in list(self.book.leases.values()):
            if lease.expires_ms < now - self.cfg.lease_ms and lease.shard != self.id and not any(
                    o.shard == lease.shard and o.inc == lease.inc
                    for o in self.book.owners.values()):
                try:
                    await self.owners.delete(SHARD_PREFIX + lease.shard, last=lease.revision)
                except Exception:  # noqa: BLE001 - someone else did, or it came back
                    pass

    # ======================================================================
    # heartbeats and summaries
    # ======================================================================
    async def _heartbeat(self) -> None:
        live = [g for g in self.games.values() if not g.hosted.finished]
        players = sum(len(g.hosted.players) for g in live)
        await self.nc.publish(self.subj.heartbeat, orjson.dumps({
            "shard": self.id, "grpc": self.grpc_addr, "games": len(live), "players": players,
            "draining": self.draining, "capacity": self.cfg.capacity, "ts": wall_ms()}))

    async def _heartbeat_loop(self) -> None:
        frozen_at = 0
        while True:
            try:
                await self._heartbeat()
                self._gauges()
                if len(self.games) >= frozen_at + 50:
                    # Games are long-lived: move them out of the collector's
                    # sight so full passes stay short (PERFORMANCE.md).
                    gc.freeze()
                    frozen_at = len(self.games)
                elif len(self.games) < frozen_at - 50:
                    frozen_at = len(self.games)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001
                log.warning("heartbeat failed: %r", exc)
            await asyncio.sleep(1.0)

    def lease_of(self, shard: str) -> Lease | None:
        return self.book.leases.get(shard)

    async def owner_of(self, gid: str) -> str | None:
        try:
            entry = await self.owners.get(gid)
        except (NotFoundError, KeyError):
            return None
        if not entry.value:
            return None
        return str(orjson.loads(entry.value).get("shard"))

