"""Ownership upkeep (docs/protocol.md 5): this shard's lease in the owners
bucket, the watch that keeps :class:`~ttanjit.shard.ownership.OwnerBook`
current (with a watchdog), failover claims of games whose owner's lease ran
out, and heartbeats. A mixin of :class:`ttanjit.shard.service.Shard`.

Faults (issue 12): a shard that was cut off — frozen (SIGSTOP, a long GC or
VM pause) or without NATS for longer than its lease — wakes up with a stale
view of the bucket. It claims nothing until its own lease is renewed and
then one more ``lease_ms`` has passed (every live shard has renewed by then
and its watch has caught up), it re-checks the owner of every game it hosts
against the bucket and lets go of those another shard took, and a failover
claim is made only when a fresh read of the bucket shows the owner's lease
(same ``inc``) really expired — never on the watch's word alone. So a game
changes owner once per fault."""

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
from ttanjit.shard.ownership import SHARD_PREFIX, Lease, Owner, parse_lease, rendezvous
from ttanjit.shard.parts import ShardParts

log = logging.getLogger("ttanjit.shard")

KV_TIMEOUT_S = 1.0  # one lease read/renewal (a stuck request must not outlive the lease)


class Leases(ShardParts):
    # ======================================================================
    # leases and the owners bucket
    # ======================================================================
    def _lease_doc(self, now: int) -> bytes:
        return orjson.dumps({
            "shard": self.id, "inc": self.inc, "grpc": self.grpc_addr, "renewed_ms": now,
            "expires_ms": now + self.cfg.lease_ms, "draining": self.draining,
            "games": len(self.games)})

    async def _register_lease(self) -> None:
        now = wall_ms()
        self.lease_rev = await self.owners.put(SHARD_PREFIX + self.id, self._lease_doc(now))
        self.lease_expires = now + self.cfg.lease_ms  # only once it is stored

    async def _renew(self) -> None:
        async with self.renew_lock:  # one renewal at a time (the drain renews too)
            await self._renew_once()

    async def _renew_once(self) -> None:
        lapsed = wall_ms() > self.lease_expires  # cut off (frozen, NATS away) past our lease
        if not await self._update_lease():
            # Someone declared us dead and took our games: let them go, for
            # good (a new incarnation; the games' new owners are valid).
            log.error("lease lost: another shard took over my games", extra={"shard": self.id})
            for live in list(self.games.values()):
                m.losses.inc()
                self._drop(live, "lease lost")
            self.inc = secrets.token_hex(4)
            await self._register_lease()
            lapsed = True
        if lapsed:
            self._after_cutoff()

    async def _update_lease(self) -> bool:
        """Renew our lease entry (revision check); False: it is not ours any more."""
        key = SHARD_PREFIX + self.id
        for attempt in range(2):
            now = wall_ms()
            try:
                self.lease_rev = await asyncio.wait_for(
                    self.owners.update(key, self._lease_doc(now), last=self.lease_rev),
                    KV_TIMEOUT_S)
                self.lease_expires = now + self.cfg.lease_ms
                return True
            except KeyWrongLastSequenceError:
                # A renewal of ours whose answer we never got (timed out, NATS
                # restart) may have been stored after all: then it is ours.
                try:
                    entry = await asyncio.wait_for(self.owners.get(key), KV_TIMEOUT_S)
                    mine = parse_lease(orjson.loads(entry.value or b"{}"), entry.revision or 0)
                except NotFoundError:
                    return False
                if attempt or (mine.shard, mine.inc) != (self.id, self.inc):
                    return False
                self.lease_rev = mine.revision
        return False

    def _after_cutoff(self) -> None:
        """Our lease had run out before this renewal: our view of the bucket
        is stale. Claim nothing for one more lease (every live shard renews
        meanwhile, the watch catches up), and ask the bucket who owns each
        game we still host."""
        self.claims_from = max(self.claims_from, self.loop.time() + self.cfg.lease_ms / 1000)
        log.warning("lease had lapsed: re-checking my games, no claims for %d ms",
                    self.cfg.lease_ms, extra={"shard": self.id, "games": len(self.games)})
        asyncio.ensure_future(self._recheck_ownership("lease lapsed"))

    async def _recheck_ownership(self, why: str) -> None:
        """Re-read the owner entry of every game hosted here: drop those that
        name another owner (or are gone); re-arm the rest (timers, bots)."""
        sem = asyncio.Semaphore(32)

        async def one(live: Any) -> None:
            async with sem:
                if live.gone or live.frozen:
                    return
                try:
                    entry = await asyncio.wait_for(self.owners.get(live.game_id), KV_TIMEOUT_S)
                    own = orjson.loads(entry.value or b"{}")
                except NotFoundError:
                    own = None
                except Exception:  # noqa: BLE001 - NATS not back yet: the watch will tell
                    self._after_change(live)
                    return
                if live.gone:
                    return
                if own is None and live.hosted.finished:
                    return  # finished and released here
                if own is None or (own.get("shard"), own.get("inc")) != (self.id, self.inc):
                    owner = "nobody" if own is None else str(own.get("shard"))
                    log.warning("game taken by another shard",
                                extra={"game": live.game_id, "owner": owner, "why": why})
                    m.losses.inc()
                    self._drop(live, "taken by " + owner)
                    return
                self._after_change(live)

        await asyncio.gather(*(one(g) for g in list(self.games.values())))

    async def _on_disconnected(self) -> None:
        log.warning("nats disconnected")

    async def _on_reconnected(self) -> None:
        """NATS is back (a restarted server, or another member of the
        cluster): renew the lease at once, wake every request waiting for
        NATS (bot asks, re-claims), and re-check each game's owner (which
        re-arms its timer and re-asks its bots)."""
        log.warning("nats reconnected: resuming games", extra={"games": len(self.games)})
        self.nats_back_at = self.loop.time()
        self.nats_back.set()
        self.nats_back = asyncio.Event()

        async def resume() -> None:
            lapsed = wall_ms() > self.lease_expires  # then the renewal re-checks
            try:
                await self._renew()
            except Exception as exc:  # noqa: BLE001 - the lease loop retries
                log.warning("lease renewal after reconnect failed: %r", exc)
            if not lapsed:
                await self._recheck_ownership("nats reconnected")
        asyncio.ensure_future(resume())

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
            if live is not None and (entry.revision or 0) < live.owner_rev:
                continue  # older than our own claim: stale news
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

    def may_claim(self) -> bool:
        """Failover claims only from a shard whose own lease is current and
        that was not cut off within the last lease (its view may be stale)."""
        return (not self.draining and wall_ms() <= self.lease_expires
                and self.loop.time() >= self.claims_from)

    async def _claim_orphans(self) -> None:
        if not self.may_claim():
            return
        now = wall_ms()
        orphans = self.book.orphaned(now, self.id)
        if not orphans:
            return
        takers = self.book.takers(now)
        picked = []
        for gid, own, lease in orphans:
            if gid in self.games or gid in self.claiming:
                continue
            chosen = rendezvous(gid, takers)
            # the chosen shard claims at once; others step in when it did not
            overdue = lease is None or lease.expires_ms < now - 2000
            if chosen != self.id and not overdue:
                continue
            picked.append((gid, own))
        if not picked:
            return
        fresh: dict[str, Lease | None] = {}
        sem = asyncio.Semaphore(32)

        async def run(gid: str, seen: Owner) -> None:
            async with sem:
                got = await self._still_orphaned(gid, seen, fresh)
                if got is not None and self.may_claim():
                    own, dead_renewed = got
                    await self._claim(gid, "failover", own.revision, own.epoch,
                                      dead_renewed_ms=dead_renewed)

        await asyncio.gather(*(run(gid, own) for gid, own in picked))
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

    async def _lease_now(self, shard: str, fresh: dict[str, Lease | None]) -> Lease | None:
        """``shard``'s lease as the bucket holds it now (cached in ``fresh``
        for one scan; the book learns it too)."""
        if shard not in fresh:
            try:
                entry = await asyncio.wait_for(self.owners.get(SHARD_PREFIX + shard),
                                               KV_TIMEOUT_S)
                value = orjson.loads(entry.value or b"{}")
                fresh[shard] = parse_lease(value, entry.revision or 0)
                self.book.on_put(SHARD_PREFIX + shard, value, entry.revision or 0)
            except NotFoundError:
                fresh[shard] = None
        return fresh[shard]

    async def _still_orphaned(self, gid: str, seen: Owner, fresh: dict[str, Lease | None]
                              ) -> tuple[Owner, int] | None:
        """Check a game the book calls orphaned against the bucket itself:
        ``(owner, dead_renewed_ms)`` when its owner's lease of the same
        ``inc`` is really gone or expired, else None (never on the watch's
        word alone: after a freeze or a NATS outage the book is stale)."""

        def valid(lease: Lease | None, inc: str) -> bool:
            return lease is not None and lease.inc == inc and lease.expires_ms >= wall_ms()

        try:
            if valid(await self._lease_now(seen.shard, fresh), seen.inc):
                return None  # one read per shard and scan settles most
            entry = await asyncio.wait_for(self.owners.get(gid), KV_TIMEOUT_S)
            doc = orjson.loads(entry.value or b"{}")
            own = Owner(str(doc["shard"]), str(doc.get("inc", "")), int(doc.get("epoch", 0)),
                        entry.revision or 0)
            lease = await self._lease_now(own.shard, fresh)
        except NotFoundError:
            return None  # finished meanwhile
        except Exception as exc:  # noqa: BLE001 - NATS trouble: next scan
            log.debug("cannot check owner of %s: %r", gid, exc)
            return None
        if valid(lease, own.inc) or (own.shard, own.inc) == (self.id, self.inc):
            return None
        dead_renewed = lease.renewed_ms if lease is not None and lease.inc == own.inc else 0
        return own, dead_renewed

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

