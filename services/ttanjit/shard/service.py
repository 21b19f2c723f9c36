"""The game shard (issue 5, DESIGN.md 1, 3.2, 4): one small service object,
:class:`Shard`, owning the games hosted here — one
:class:`~ttanjit.shard.room.Room` each (commands, sync, clock, bots,
write-ahead record; read that file to follow a command) — and what is shared
by all of them: the NATS connection and the outbox, the games' ownership
(this shard's lease, the owners watch, claims on create, failover and
handover, re-claims), heartbeats, drain and handover, and shutdown. The gRPC
API (``ttanjit.shard.grpc_api``) calls :meth:`Shard.create_game` and
:meth:`Shard.drain`.

Ownership (docs/protocol.md 5; the bucket's book-keeping is the sans-I/O
:mod:`ttanjit.shard.ownership`, the record's :mod:`ttanjit.shard.records`).
Faults (issue 12): a shard that was cut off — frozen (SIGSTOP, a long GC or
VM pause) or without NATS for longer than its lease — wakes up with a stale
view of the bucket. It claims nothing until its own lease is renewed and
then one more ``lease_ms`` has passed (every live shard has renewed by then
and its watch has caught up), it re-checks the owner of every game it hosts
against the bucket and lets go of those another shard took, and a failover
claim is made only when a fresh read of the bucket shows the owner's lease
(same ``inc``) really expired — never on the watch's word alone. So a game
changes owner once per fault.

Drain (issue 5 item 5): a draining shard stops each game, appends a
``handover`` marker with the exact game ``t`` and asks another shard to
adopt it (``<prefix>.shard.<id>.adopt``); the taker claims, replays and
continues.

Every background task is started with :meth:`Shard.spawn` (kept until it
ends, cancelled on :meth:`Shard.close`).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import secrets
from collections.abc import Coroutine, Sequence
from typing import Any

import orjson
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from nats.js.errors import APIError, KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from ttanjit.common.config import Settings
from ttanjit.common.ids import is_game_id, new_game_id
from ttanjit.common.nats import (
    GAMES_BUCKET,
    OWNERS_BUCKET,
    RECORDS_STREAM,
    Expiring,
    Subjects,
    connect,
    ensure_jetstream,
    relayed,
    subscribed,
    unless_disconnected,
)
from ttanjit.games.base import JSON, SeatSpec, Setup
from ttanjit.shard import metrics as m
from ttanjit.shard import records
from ttanjit.shard.commit import Committer
from ttanjit.shard.game import HostedGame, Unreplayable
from ttanjit.shard.gateways import GatewayWatch
from ttanjit.shard.link import LinkServer
from ttanjit.shard.ownership import (
    SHARD_PREFIX,
    Lease,
    Owner,
    OwnerBook,
    parse_lease,
    rendezvous,
    replacing,
)
from ttanjit.shard.room import Outbox, Room, wall_ms

log = logging.getLogger("ttanjit.shard")

RECORD_READ_TIMEOUT_S = 3.0  # one record read of a claim (a stream without a leader never answers)
KV_TIMEOUT_S = 1.0  # one lease read/renewal (a stuck request must not outlive the lease)
UNREPLAYABLE_RETRY_S = 30.0  # a claim of a record this release cannot replay, tried again

__all__ = ["CreateError", "IdTaken", "OwnedElsewhere", "Shard"]


class CreateError(ValueError):
    """CreateGame input the shard refuses (INVALID_ARGUMENT)."""


class IdTaken(Exception):
    """CreateGame's ``game_id`` is another game's, or an undone making's
    (ALREADY_EXISTS): place the game again under a new id."""


class OwnedElsewhere(Exception):
    """CreateGame's ``game_id`` is owned by another shard (FAILED_PRECONDITION,
    the owner in ``ttanjit-owner``): an earlier try of the same placement
    made it there or is making it, so that shard answers for it."""

    def __init__(self, gid: str, owner: str) -> None:
        super().__init__(f"game {gid} is owned by {owner or 'another shard'}")
        self.owner = owner


def request_key(setup: Setup, players: dict[str, int], spectators: bool) -> bytes:
    """What a CreateGame asked for, but the seed: a retry of the same
    placement asks the same (the seed is the shard's when not given)."""
    return orjson.dumps({"game": setup.game, "options": setup.options,
                         "seats": [s.to_json() for s in setup.seats],
                         "players": players, "spectators": spectators},
                        option=orjson.OPT_SORT_KEYS)


class _TargetGone(Exception):
    """A handover's target stopped (its lease expired) before it answered."""


LATE_DRAIN_S = 5.0  # the least a stop signal's drain gets after an earlier drain


def stop_budget(drain_timeout_s: float, drain_until: float | None, now: float) -> float:
    """:meth:`Shard.stop_budget` (pure): the full ``drain_timeout_s`` when
    no drain ran before, else what is left of it, at least
    :data:`LATE_DRAIN_S` and never more than ``drain_timeout_s``."""
    if drain_until is None:
        return float(drain_timeout_s)
    return min(float(drain_timeout_s), max(LATE_DRAIN_S, drain_until - now))


class Shard:
    """One shard process: the rooms it hosts and everything around them."""

    def __init__(self, settings: Settings) -> None:
        self.cfg = settings
        # sign the records' messages (records.py): None, unsigned
        self.record_keys = records.keys_of(settings.record_key)
        self.id = settings.shard_id or f"shard-{os.getpid()}"
        self.inc = secrets.token_hex(4)
        self.subj = Subjects(settings.prefix)
        self.rooms: dict[str, Room] = {}
        self.book = OwnerBook()
        self.draining = False
        self.adopt_sub: Any = None  # handovers from other shards (gone once draining)
        self.not_taking: set[str] = set()  # this drain's targets found stopping
        self.drain_until: float | None = None  # loop time the first drain's budget ends
        self.stopping = asyncio.Event()
        self.grpc_addr = ""
        self.lease_rev = 0
        self.lease_expires = 0
        self.replaced: dict[str, int] = {}  # earlier incarnations' last renewals (Lease.replaced)
        self.renew_lock = asyncio.Lock()
        self.claiming: set[str] = set()
        # games being made (CreateGame), by id: (request_key, the making)
        self.creating: dict[str, tuple[bytes, asyncio.Task[str]]] = {}
        self.adopting = 0  # handovers accepted, their claims not all begun or done
        self.reclaiming: set[str] = set()
        # games owned here whose record this release cannot replay: tried
        # again slowly, said once (an upgrade's older shard, a rollback)
        self.unreplayable: set[str] = set()
        # games not claimed for their record's key: loop time of the last
        # look (said once; looked at again every UNREPLAYABLE_RETRY_S, and
        # counted with the unreplayable while it is that recent)
        self.not_ours: dict[str, float] = {}
        # a drain's games, by the shards that did not take them for that
        self.refused_by: dict[str, set[str]] = {}
        self.claims_from = 0.0  # loop time before which no failover claim is made
        self.nats_back = asyncio.Event()  # set (and replaced) when NATS reconnects
        self.nats_back_at = -1e9  # loop time of the last reconnect
        self.loop = asyncio.get_running_loop()
        self.out = Outbox(self)
        self.committer = Committer(self)  # the group commit of every room's appends
        self.link = LinkServer(self)  # gateways' direct connections (shard/link.py)
        self.gateways = GatewayWatch(self)  # players whose gateway is gone (shard/gateways.py)
        self.tasks: set[asyncio.Task[Any]] = set()  # every background task running
        self.loops: list[asyncio.Task[Any]] = []  # the service's own, stopped first

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str | None = None
              ) -> asyncio.Task[Any]:
        """Run ``coro`` in the background, kept until it ends (or
        :meth:`close` cancels it)."""
        task = self.loop.create_task(coro, name=name)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    # ======================================================================
    # start / stop
    # ======================================================================
    async def start(self) -> None:
        self.nc = await connect(self.cfg.nats_url, f"shard {self.id}",
                                disconnected_cb=self._on_disconnected,
                                reconnected_cb=self._on_reconnected)
        self.js = self.nc.jetstream(timeout=5.0)
        await self.committer.start()
        buckets = await ensure_jetstream(self.js, self.subj, self.cfg.js_replicas)
        self.owners: KeyValue = buckets[OWNERS_BUCKET]
        self.owner_entries = Expiring(self.js, self.owners, OWNERS_BUCKET)  # removal leaves nothing
        self.directory: KeyValue = buckets[GAMES_BUCKET]
        await self._register_lease()
        self.watcher = await self.owners.watchall()
        self.watch_seen = self.loop.time()
        self.watch_task = self.spawn(self._watch_owners(), "watch-owners")
        self.loops = [self.spawn(self._watchdog(), "watchdog"),
                      self.spawn(self._lease_loop(), "lease"),
                      self.spawn(self._heartbeat_loop(), "heartbeat"),
                      self.spawn(self._orphan_loop(), "orphans"),
                      self.spawn(self.gateways.run(), "gateways")]
        if not self.draining:
            self.adopt_sub = await self.nc.subscribe(self.subj.adopt(self.id), cb=self._on_adopt)
        log.info("shard started", extra={"shard": self.id, "inc": self.inc,
                                          "grpc": self.grpc_addr})

    async def close(self) -> None:
        """Stop: the service's loops first, then every game (their appends in
        flight finish while NATS drains), then whatever still runs."""
        self.stopping.set()
        self.link.close()
        for task in [*self.loops, self.watch_task]:
            task.cancel()
        left = [r for r in self.rooms.values() if not r.hosted.finished]
        for room in list(self.rooms.values()):
            self.drop(room, "shutdown")
        if not left:  # nothing to fail over: release the lease now (else it expires)
            release = self.owner_entries.remove(SHARD_PREFIX + self.id, last=self.lease_rev)
            await unless_disconnected(self.nc, release, 2.0)
        if await unless_disconnected(self.nc, self.nc.drain(), 5.0) is not None:
            try:  # stop its reconnecting
                await asyncio.wait_for(self.nc.close(), 1.0)
            except Exception:  # noqa: BLE001 - exiting anyway
                pass
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=1.0)

    async def nats_back_wait(self, timeout: float) -> None:
        """Sleep ``timeout`` s, or less: until NATS reconnects."""
        try:
            await asyncio.wait_for(self.nats_back.wait(), timeout)
        except TimeoutError:
            pass

    # ======================================================================
    # hosting and dropping rooms
    # ======================================================================
    async def _host(self, room: Room, reason: str) -> None:
        self.rooms[room.game_id] = room
        room.idle.set()
        await room.subscribe()
        # the server must route the game's subjects to us before CreateGame
        # (or a claim) returns
        await subscribed(self.nc)
        m.claims.labels(reason).inc()
        if reason == "handover":
            m.handovers.labels("in").inc()
        self.gauges()
        room.resume(reason)

    def drop(self, room: Room, why: str, reclaim: bool = False) -> None:
        """Stop serving a game here (lost, handed over, finished, shutdown);
        ``reclaim``: take it back from its record unless another shard
        owns it by then (append failure, fenced, engine error)."""
        gid = room.game_id
        # how far its clocks ran here (before close() forgets what was not written)
        ran_to = room.charged_t(self.loop.time()) if reclaim and not room.gone else 0
        if room.close():
            if self.rooms.get(gid) is room:
                del self.rooms[gid]
            log.info("game dropped", extra={"game": gid, "why": why})
            self.gauges()
        if reclaim:  # (a no-op when it is not ours any more)
            self.spawn(self._reclaim(gid, ran_to))

    def lacks_key_of(self, gid: str) -> bool:
        """Whether this shard found lately that ``gid``'s record is signed
        with a key it lacks (not asked again within UNREPLAYABLE_RETRY_S)."""
        looked = self.not_ours.get(gid)
        return looked is not None and self.loop.time() - looked < UNREPLAYABLE_RETRY_S

    def count_unreplayable(self) -> None:
        """``ttanjit_shard_unreplayable_games``: the games owned here whose
        record this shard cannot replay, and those it would take over but
        does not have the key of (looked at within the last minute and a
        half: a shard with the key may have taken them since)."""
        now = self.loop.time()
        for gid in [g for g, t in self.not_ours.items() if now - t > 3 * UNREPLAYABLE_RETRY_S]:
            del self.not_ours[gid]
        m.unreplayable.set(len(self.unreplayable | self.not_ours.keys()))

    def gauges(self) -> None:
        self.count_unreplayable()
        counts = {"onecard": 0, "penalty_rows": 0, "hakka": 0}
        players = 0
        for room in self.rooms.values():
            if room.hosted.finished:
                continue
            counts[room.game] = counts.get(room.game, 0) + 1
            pres = room.hosted.engine.presence
            players += sum(1 for s in range(room.hosted.engine.n) if pres.is_active_human(s))
        for g, n in counts.items():
            m.games_live.labels(g).set(n)
        m.players.set(players)

    # ======================================================================
    # creating and claiming games
    # ======================================================================
    def build_setup(self, game: str, options: JSON, seats: list[JSON],
                    seed: int | None) -> tuple[Setup, dict[str, int]]:
        from ttanjit.games import GAMES

        if game not in GAMES:
            raise CreateError(f"unknown game {game!r}")
        if not isinstance(options, dict):
            raise CreateError("options must be a JSON object")
        specs, players = [], {}
        for i, s in enumerate(seats):
            kind = s.get("kind") or "human"
            try:
                spec = SeatSpec.from_json({"kind": kind, **({"level": s["level"]}
                                                            if s.get("level") else {})})
            except ValueError as exc:
                raise CreateError(str(exc)) from None
            pid = s.get("player_id") or ""
            if kind == "human":
                if not pid:
                    raise CreateError(f"seat {i}: a human seat needs a player_id")
                if pid in players:
                    raise CreateError(f"player {pid} is seated twice")
                players[pid] = i
            elif pid:
                raise CreateError(f"seat {i}: only human seats have a player_id")
            specs.append(spec)
        opts = dict(options)
        opts.setdefault("seats", len(specs))
        if self.cfg.absence_ms and "absence_ms" not in opts:
            opts["absence_ms"] = self.cfg.absence_ms
        if self.cfg.abandon_ms and "abandon_ms" not in opts:
            opts["abandon_ms"] = self.cfg.abandon_ms
        # (a deal from the system's randomness: the shard's own Random was
        # a Mersenne Twister, its next seeds foretold by enough of its last)
        setup = Setup(game, opts, specs, seed if seed is not None else secrets.randbits(48))
        return setup, players

    async def create_game(self, game: str, options: JSON, seats: list[JSON],
                          seed: int | None = None, game_id: str = "") -> str:
        """Make a game and serve it; its id. With a caller-chosen ``game_id``
        (the matchmaker chooses one per placement) a call is idempotent, so a
        try whose answer was lost (a deadline, a cut connection) can be made
        again, here or on another shard, without making a second game:

        - the same request again answers the game made here, or waits for
          its making under way here (a making is not cut short by its
          caller going away: it ends made, or undone);
        - :class:`OwnedElsewhere`: another shard owns that id (an earlier
          try made it there, or is making it; ask that shard);
        - :class:`IdTaken`: the id is another game's, or an undone making's
          (its record began): the caller places it again under a new id."""
        if game_id and not is_game_id(game_id):
            raise CreateError("game_id must be 12 lowercase base32 characters")
        watch = True  # the table option ``spectators`` (관전), not the engine's
        if isinstance(options, dict) and "spectators" in options:
            options = dict(options)
            watch = options.pop("spectators") is not False
        setup, players = self.build_setup(game, options, seats, seed)
        # (only a caller-chosen id is asked for again: a new one needs no key)
        key = request_key(setup, players, watch) if game_id else b""
        if game_id:
            room = self.rooms.get(game_id)
            if room is not None:
                h = room.hosted
                if request_key(h.setup, h.players, h.spectators) != key:
                    raise IdTaken(f"game {game_id} exists already, not as asked")
                return game_id
            making = self.creating.get(game_id)
            if making is not None:
                if making[0] != key:
                    raise IdTaken(f"game {game_id} is being made, not as asked")
                return await asyncio.shield(making[1])
        if self.draining:
            raise RuntimeError("shard is draining")
        if sum(1 for r in self.rooms.values() if not r.hosted.finished) >= self.cfg.capacity:
            raise RuntimeError(f"shard is full ({self.cfg.capacity} games)")
        gid = game_id or new_game_id()
        now = wall_ms()
        try:
            hosted = HostedGame(gid, setup, players, now, self.cfg.backlog)
        except ValueError as exc:
            raise CreateError(str(exc)) from None
        hosted.spectators = watch
        # players without a connection at the start (room members away):
        # away from the first input on (not in the request key: a retry of
        # the same placement may say otherwise)
        away = [str(s["player_id"]) for s in seats if s.get("away") and s.get("player_id")]
        task = self.loop.create_task(self._make(hosted, now, away))
        self.creating[gid] = (key, task)
        task.add_done_callback(lambda t: self._made(gid, t))
        return await asyncio.shield(task)

    def _made(self, gid: str, task: asyncio.Task[str]) -> None:
        if self.creating.get(gid, (None, None))[1] is task:
            del self.creating[gid]
        if not task.cancelled() and task.exception() is not None:  # (retrieved: the
            # caller may be gone, e.g. its deadline passed)
            log.info("game not made", extra={"game": gid, "why": repr(task.exception())})

    async def _make(self, hosted: HostedGame, now: int, away: Sequence[str] = ()) -> str:
        """:meth:`create_game`'s durable part: owner entry (created: the id's
        one maker), record header and claim marker, directory entry; then
        serve it. A failure undoes the owner entry (the caller places the
        game again) and is raised."""
        gid = hosted.game_id
        try:
            rev = await self.owners.create(gid, orjson.dumps({
                "shard": self.id, "inc": self.inc, "epoch": 1, "reason": "create",
                "claimed_ms": now}))
        except KeyWrongLastSequenceError:
            raise OwnedElsewhere(gid, await self.owner_of(gid) or "") from None
        subject = self.subj.record(gid)
        try:
            try:
                # one making's own id: a record an undone making began is
                # not taken for this one's (its header is another's)
                seq = await records.append(self.js, subject, hosted.header(), 0,
                                           f"{gid}:h:{secrets.token_hex(4)}",
                                           keys=self.record_keys, skipped=m.skipped_at_append)
            except records.Fenced:
                raise IdTaken(f"game {gid} has a record already") from None
            claim = {"claim": {"shard": self.id, "inc": self.inc, "epoch": 1,
                               "reason": "create", "origin_ms": now}}
            seq = await records.append(self.js, subject, claim, seq, f"{gid}:c1",
                                       keys=self.record_keys, skipped=m.skipped_at_append)
            await self.directory.put(gid, orjson.dumps(hosted.directory_entry()))
        except BaseException:  # re-raised: no half-made game left behind
            # (the caller places it again)
            try:
                await self.owner_entries.remove(gid, last=rev)
            except Exception:  # noqa: BLE001 - logged; the first error is the one raised
                log.warning("cannot remove owner entry of failed game", extra={"game": gid})
            raise
        room = Room(self, hosted, 1, rev, seq, 0, self.loop.time())
        await self._host(room, "create")
        for player in away:
            room.mark_away(player, "away from the room at the start")
        # which shard got game X, and when (only its handovers, failovers and
        # end were in the logs: operator audit)
        log.info("game made", extra={"game": gid, "kind": hosted.setup.game,
                                     "seats": len(hosted.setup.seats), "humans": len(hosted.players)})
        return gid

    async def _claim(self, gid: str, reason: str, rev: int, epoch: int, *,
                     dead_renewed_ms: int = 0, ran_to: int = 0) -> bool:
        """Take a game: owner entry (revision check), record replay, claim
        marker (fences the old owner), then serve it."""
        if gid in self.rooms or gid in self.claiming:
            return gid in self.rooms
        self.claiming.add(gid)
        owned = False  # the owner entry names us: a failure from here on retries
        try:
            subject = self.subj.record(gid)
            looked = self.not_ours.get(gid)
            if self.lacks_key_of(gid):
                return False  # (review finding: asked 5 times a second by every shard)
            if not await records.holds(self.js, subject, self.record_keys):
                # what it appended the others would skip: the game is left
                # to a shard with the key its record is signed with
                if looked is None:
                    log.error("not claiming a game whose record is signed with a key this "
                              "shard does not have (TTANJIT_RECORD_KEY: %s)",
                              "none" if self.record_keys is None else "another",
                              extra={"game": gid})
                self.not_ours[gid] = self.loop.time()
                self.count_unreplayable()
                return False
            if looked is not None:
                self.not_ours.pop(gid, None)  # (the gauges may have pruned it meanwhile)
                self.count_unreplayable()
            now = wall_ms()
            try:
                new_rev = await self.owners.update(gid, orjson.dumps({
                    "shard": self.id, "inc": self.inc, "epoch": epoch + 1, "reason": reason,
                    "claimed_ms": now}), last=rev)
            except KeyWrongLastSequenceError:
                return False  # another shard won the race
            owned = True
            for _ in range(5):
                try:
                    rec = await asyncio.wait_for(records.read(self.js, subject,
                                                              keys=self.record_keys),
                                                 RECORD_READ_TIMEOUT_S)
                except records.NotOurKey as exc:  # (not "no record": the game waits)
                    raise Unreplayable(f"{exc}: is TTANJIT_RECORD_KEY the other shards'?") \
                        from None
                if rec is None:
                    log.error("no record for game", extra={"game": gid})
                    await self.owner_entries.remove(gid)
                    owned = False
                    return False
                if rec.signed and self.record_keys is None:
                    # what this shard appended unsigned the others would skip
                    raise Unreplayable("its record is signed and this shard has no "
                                       "TTANJIT_RECORD_KEY")
                if rec.foreign:  # (read on without them, the game would go back)
                    raise Unreplayable(
                        f"its record has {rec.foreign} messages of a shard without this "
                        "shard's keys (an ownership marker unsigned, or another key's): is "
                        "TTANJIT_RECORD_KEY the other shards'?")
                if rec.skipped:
                    log.warning("record has %d messages no shard wrote, skipped",
                                rec.skipped, extra={"game": gid})
                hosted = HostedGame.from_header(rec.header, self.cfg.backlog)
                for entry in rec.entries:
                    hosted.replay_entry(entry)
                t = hosted.engine.now
                origin = int(rec.header.get("origin_ms", 0))
                for _, marker in rec.markers:
                    if "claim" in marker:
                        origin = int(marker["claim"].get("origin_ms", origin))
                    elif "handover" in marker:
                        t = max(t, int(marker["handover"].get("t", 0)))
                if reason == "failover" and dead_renewed_ms:
                    # the clocks ran on the dead owner until its last renewal
                    t = max(t, dead_renewed_ms - origin)
                t = max(t, ran_to)  # ... or here, until this shard dropped it
                now = wall_ms()
                hosted.origin_ms = now - t
                marker = {"claim": {"shard": self.id, "inc": self.inc, "epoch": epoch + 1,
                                    "reason": reason, "origin_ms": now - t}}
                try:
                    seq = await records.append(self.js, subject, marker, rec.last_seq,
                                               f"{gid}:c{epoch + 1}:{self.inc}",
                                               keys=self.record_keys, stream_last=rec.stream_last,
                                               skipped=m.skipped_at_append)
                except records.Fenced:
                    continue  # the old owner appended meanwhile: read again
                if rec.skipped_after:  # gone past by this marker: counted once, here
                    m.record_skipped.labels("claim").inc(rec.skipped_after)
                break
            else:
                return False
            room = Room(self, hosted, epoch + 1, new_rev, seq, t, self.loop.time())
            room.msg_no = len(rec.entries) + len(rec.markers) + 2
            if hosted.finished:  # it ended before its owner could say so: say it now
                self.rooms[gid] = room
                room.finalized = True
                self.spawn(room.finalize())  # (tried again until done: not within the claim)
                return True
            await self._host(room, reason)
            log.info("claimed game", extra={"game": gid, "reason": reason, "t": t,
                                             "inputs": len(rec.entries)})
            return True
        except Exception as exc:  # noqa: BLE001 - logged; an owned game is re-claimed below
            if self.stopping.is_set() or self.nc.is_draining or self.nc.is_closed:
                # the stop outran the drain's wait (its budget ran out): the
                # owner entry names this shard, so the game is claimed from its
                # record when this shard's lease expires, as after a crash
                log.warning("claim cut short by the stop: %r", exc, extra={"game": gid})
            elif isinstance(exc, Unreplayable):
                # it stays so until a shard of a release that can replay it
                # comes: one error a game (a traceback a game a second, for
                # good, before: version-skew audit), tried again slowly
                if gid not in self.unreplayable:
                    log.error("cannot replay the game's record, the game waits for a shard "
                              "of a release that can: %s", exc, extra={"game": gid})
                self.unreplayable.add(gid)
                self.count_unreplayable()
            elif isinstance(exc, (APIError, NoRespondersError, TimeoutError)):  # NATS's too
                # JetStream refused or did not answer (its storage full, a
                # leader election): one line a try, not a traceback a game a second
                log.warning("claim failed, tried again: %r", exc, extra={"game": gid})
            else:
                log.exception("claim failed", extra={"game": gid})
            return False
        finally:
            self.claiming.discard(gid)
            if owned and gid not in self.rooms and not self.stopping.is_set():
                # e.g. the record stream between leaders: nobody else will
                # take a game whose owner entry names us, so keep trying
                self.spawn(self._reclaim(gid))

    async def _reclaim(self, gid: str, ran_to: int = 0) -> None:
        """Re-host a game this shard dropped after an append failure (NATS
        down) or failed to claim: replay its record, unless another shard
        has it by then."""
        if gid in self.reclaiming:
            return
        self.reclaiming.add(gid)
        try:
            await self._reclaim_loop(gid, ran_to)
        finally:
            self.reclaiming.discard(gid)
            if gid in self.unreplayable:  # taken, gone or ended
                self.unreplayable.discard(gid)
                self.count_unreplayable()

    async def _reclaim_loop(self, gid: str, ran_to: int) -> None:
        delay = 0.25
        while not self.stopping.is_set() and gid not in self.rooms:
            await self.nats_back_wait(delay)  # at once when NATS reconnects
            # (a record it cannot replay: every 30 s, for another owner or the end)
            delay = min(delay * 2, UNREPLAYABLE_RETRY_S if gid in self.unreplayable else 1.0)
            if not self.nc.is_connected:
                continue
            try:
                entry = await asyncio.wait_for(self.owners.get(gid), 2.0)
            except NotFoundError:
                return  # finished meanwhile
            except Exception:  # noqa: BLE001 - NATS still away: try again
                continue
            own = orjson.loads(entry.value or b"{}")
            if (own.get("shard"), own.get("inc")) != (self.id, self.inc):
                return  # someone else owns it now
            try:  # the record stream answers (it may be electing a leader)
                await asyncio.wait_for(self.js.get_last_msg(RECORDS_STREAM,
                                                            self.subj.record(gid)), 1.0)
            except NotFoundError:
                pass  # no record: the claim sorts that out
            except Exception:  # noqa: BLE001 - not yet: ask again in a moment
                delay = 0.25
                continue
            if await self._claim(gid, "failover", entry.revision or 0, int(own.get("epoch", 0)),
                                 ran_to=ran_to):
                return

    # ======================================================================
    # leases and the owners bucket
    # ======================================================================
    def _lease_doc(self, now: int) -> bytes:
        doc: dict[str, object] = {
            "shard": self.id, "inc": self.inc, "grpc": self.grpc_addr, "renewed_ms": now,
            "expires_ms": now + self.cfg.lease_ms, "draining": self.draining,
            "games": len(self.rooms)}
        if self.replaced:
            doc["replaced"] = self.replaced
        return orjson.dumps(doc)

    async def _register_lease(self) -> None:
        key = SHARD_PREFIX + self.id
        old: Lease | None = None
        try:  # an earlier incarnation's lease, which this one replaces: the
            # new lease names it with its last renewal, when the clocks of its
            # games stopped (whoever claims them: _still_orphaned)
            got = await self._read_lease(self.id)
            old = got[0] if got else None
        except (ValueError, KeyError, TypeError, TimeoutError) as exc:
            log.warning("cannot read the lease entry %s: %r", key, exc)
        self.replaced = replacing(old, self.inc, self.replaced)
        now = wall_ms()
        self.lease_rev = await self.owners.put(key, self._lease_doc(now))
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
            for room in list(self.rooms.values()):
                m.losses.inc()
                self.drop(room, "lease lost")
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
                got = await self._read_lease(self.id)
                if got is None:
                    return False
                mine = got[0]
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
                    self.cfg.lease_ms, extra={"shard": self.id, "games": len(self.rooms)})
        self.spawn(self._recheck_ownership("lease lapsed"))

    async def _recheck_ownership(self, why: str) -> None:
        """Re-read the owner entry of every game hosted here: drop those that
        name another owner (or are gone); re-arm the rest (timers, bots)."""
        sem = asyncio.Semaphore(32)

        async def one(room: Room) -> None:
            async with sem:
                if room.gone or room.frozen:
                    return
                try:
                    entry = await asyncio.wait_for(self.owners.get(room.game_id), KV_TIMEOUT_S)
                    own = orjson.loads(entry.value or b"{}")
                except NotFoundError:
                    own = None
                except Exception:  # noqa: BLE001 - NATS not back yet: the watch will tell
                    room.after_change()
                    return
                if room.gone:
                    return
                if own is None and room.hosted.finished:
                    return  # finished and released here
                if own is None or (own.get("shard"), own.get("inc")) != (self.id, self.inc):
                    owner = "nobody" if own is None else str(own.get("shard"))
                    log.warning("game taken by another shard",
                                extra={"game": room.game_id, "owner": owner, "why": why})
                    m.losses.inc()
                    self.drop(room, "taken by " + owner)
                    return
                room.after_change()

        await asyncio.gather(*(one(r) for r in list(self.rooms.values())))

    async def _on_disconnected(self) -> None:
        log.warning("nats disconnected")

    async def _on_reconnected(self) -> None:
        """NATS is back (a restarted server, or another member of the
        cluster): renew the lease at once, wake every request waiting for
        NATS (bot asks, re-claims), and re-check each game's owner (which
        re-arms its timer and re-asks its bots)."""
        log.warning("nats reconnected: resuming games", extra={"games": len(self.rooms)})
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
        self.spawn(resume())

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
            except Exception:  # noqa: BLE001 - the old watch is dead anyway
                pass
            try:
                self.watcher = await self.owners.watchall()
            except Exception as exc:  # noqa: BLE001 - NATS trouble: try again in a second
                log.warning("cannot watch owners: %r", exc)
                continue
            self.watch_seen = self.loop.time()
            self.watch_task = self.spawn(self._watch_owners(), "watch-owners")

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
            room = self.rooms.get(entry.key)
            if room is not None and (entry.revision or 0) < room.owner_rev:
                continue  # older than our own claim: stale news
            if room is not None and own is not None and (own.shard, own.inc) != (self.id, self.inc):
                if not room.frozen:
                    log.warning("game taken by another shard",
                                extra={"game": entry.key, "owner": own.shard})
                    m.losses.inc()
                self.drop(room, "taken by " + own.shard)

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
            except Exception:  # noqa: BLE001 - logged; the scan runs again in 0.2 s
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
            if gid in self.rooms or gid in self.claiming or self.lacks_key_of(gid):
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
        # a dead shard whose games (and those of the incarnations it replaced)
        # are all gone: remove its lease entry
        for lease in list(self.book.leases.values()):
            if lease.expires_ms < now - self.cfg.lease_ms and lease.shard != self.id and not any(
                    o.shard == lease.shard and lease.names(o.inc)
                    for o in self.book.owners.values()):
                try:
                    await self.owner_entries.remove(SHARD_PREFIX + lease.shard, last=lease.revision)
                except Exception:  # noqa: BLE001 - someone else did, or it came back
                    pass

    # ======================================================================
    # heartbeats and summaries
    # ======================================================================
    async def _heartbeat(self) -> None:
        live = [r for r in self.rooms.values() if not r.hosted.finished]
        players = sum(len(r.hosted.players) for r in live)
        await self.nc.publish(self.subj.heartbeat, orjson.dumps({
            "shard": self.id, "grpc": self.grpc_addr, "games": len(live), "players": players,
            "draining": self.draining, "capacity": self.cfg.capacity, "ts": wall_ms()}))

    async def _heartbeat_loop(self) -> None:
        frozen_at = 0
        while True:
            try:
                await self._heartbeat()
                self.gauges()
                if len(self.rooms) >= frozen_at + 50:
                    # Games are long-lived: move them out of the collector's
                    # sight so full passes stay short (PERFORMANCE.md).
                    gc.freeze()
                    frozen_at = len(self.rooms)
                elif len(self.rooms) < frozen_at - 50:
                    frozen_at = len(self.rooms)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - NATS hiccup: the next beat is in 1 s
                log.warning("heartbeat failed: %r", exc)
            await asyncio.sleep(1.0)

    async def _read_lease(self, shard: str) -> tuple[Lease, dict[str, object]] | None:
        """``shard``'s lease as the bucket holds it now, and its entry's value
        (None: no entry; raises on a malformed one, or after KV_TIMEOUT_S)."""
        try:
            entry = await asyncio.wait_for(self.owners.get(SHARD_PREFIX + shard), KV_TIMEOUT_S)
        except NotFoundError:
            return None
        value = orjson.loads(entry.value or b"{}")
        return parse_lease(value, entry.revision or 0), value

    async def _lease_now(self, shard: str, fresh: dict[str, Lease | None]) -> Lease | None:
        """``shard``'s lease as the bucket holds it now (cached in ``fresh``
        for one scan; the book learns it too)."""
        if shard not in fresh:
            got = await self._read_lease(shard)
            fresh[shard] = got[0] if got else None
            if got:
                self.book.on_put(SHARD_PREFIX + shard, got[1], got[0].revision)
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
        return own, lease.last_renewed(own.inc) if lease is not None else 0

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

    # ======================================================================
    # drain and handover
    # ======================================================================
    async def drain(self, timeout_s: float | None = None) -> dict[str, int]:
        """Stop taking games; hand every live game to other shards.

        Ends within ``timeout_s`` (default ``TTANJIT_DRAIN_TIMEOUT_S``), and at
        once when the NATS connection is lost (``make run``'s Ctrl-C stops
        nats-server beside the shards): a handover needs NATS, and without it
        every step would only wait for its own timeout. Games not handed over
        stay in their records; their leases expire and another shard (or the
        next to start) claims them, as after a crash.
        """
        budget = timeout_s or self.cfg.drain_timeout_s
        first = self.drain_until is None
        self.refused_by.clear()  # (a refusal of an earlier drain's: that shard may have the key now)
        self.stop_taking()
        if first:
            self.drain_until = asyncio.get_running_loop().time() + budget
            log.info("draining", extra={"games": len(self.rooms)})
        self.not_taking = set()
        finished = sum(1 for r in self.rooms.values() if r.hosted.finished)
        progress = {"handed_over": 0}
        why = await unless_disconnected(self.nc, self._hand_over_all(first, progress), budget)
        if why is not None:
            log.warning("drain stops: %s; the games not handed over are served here "
                        "until the shard exits, then claimed from their records when its "
                        "lease expires", why,
                        extra={"left": sum(1 for r in self.rooms.values()
                                           if not r.hosted.finished)})
        left = sum(1 for r in self.rooms.values() if not r.hosted.finished)
        finished = max(finished, len(self.rooms) - left)
        return {"handed_over": progress["handed_over"], "finished": finished, "left": left}

    def stop_taking(self) -> None:
        """No new game and no game handed over from now on (``create_game``
        and adoptions refuse; failover claims stop). A stop signal calls it
        before anything awaits, so a shard stopping beside this one cannot
        hand it a game in the moment before its drain begins."""
        if not self.draining:
            self.draining = True
            m.draining.set(1)
            # others asking it to adopt a game get "no responders" at once
            # from now on, not a refusal that may never be sent: a shard
            # stopping beside this one waited out its 10 s request for one
            self.spawn(self._stop_adopting(), "stop adopting")

    async def _stop_adopting(self) -> None:
        sub, self.adopt_sub = self.adopt_sub, None
        if sub is not None:
            try:
                await sub.unsubscribe()
                await self.nc.flush(timeout=2)
            except Exception:  # noqa: BLE001 - NATS away: nobody asks meanwhile
                pass

    def stop_budget(self) -> float:
        """The handover budget of the drain a stop signal starts: what is
        left of the first drain's (Kubernetes runs the preStop drain, then
        SIGTERM, both within one grace period: a second full budget would
        outlast it and end in SIGKILL), and at least :data:`LATE_DRAIN_S`."""
        return stop_budget(self.cfg.drain_timeout_s, self.drain_until,
                           asyncio.get_running_loop().time())

    async def _hand_over_all(self, first: bool, progress: dict[str, int]) -> None:
        if first:
            try:
                await self._renew()
                await self._heartbeat()
            except Exception:  # noqa: BLE001 - the lease and heartbeat loops tell the others
                pass
        while True:
            # taken or being made before the drain began: handed on
            while self.claiming or self.adopting or self.creating:
                await asyncio.sleep(0.02)
            live_games = [r for r in self.rooms.values() if not r.hosted.finished]
            for r in [r for r in self.rooms.values() if r.hosted.finished]:
                if r.finalized:
                    self.drop(r, "drain")
            if not live_games:
                return
            takers = [t for t in self.book.takers(wall_ms(), exclude=self.id)
                      if t not in self.not_taking]  # a stopping shard's flag may lag
            if not takers:
                log.warning("no other shard to hand games to; their leases will expire and "
                            "the next shard to start takes them",
                            extra={"games": len(live_games)})
                return
            by_target: dict[str, list[Room]] = {}
            for g in live_games:
                refused = self.refused_by.get(g.game_id, set())
                willing = [t for t in takers if t not in refused]
                if willing:
                    by_target.setdefault(rendezvous(g.game_id, willing) or willing[0],
                                         []).append(g)
            if not by_target:
                log.warning("no other shard has the key of these games' records; their leases "
                            "will expire and a shard with it takes them",
                            extra={"games": len(live_games)})
                return
            before = progress["handed_over"]
            await asyncio.gather(*(self._handover(tgt, gs, progress)
                                   for tgt, gs in by_target.items()))
            if progress["handed_over"] == before and not set(by_target) <= self.not_taking:
                # nobody took any: a moment, then again (at once when the
                # takers were stopping themselves: the next round goes without them)
                await asyncio.sleep(0.5)

    async def _handover(self, target: str, games: list[Room], progress: dict[str, int],
                        chunk: int = 100) -> None:
        """Hand ``games`` to ``target``, ``chunk`` at a time; each one taken
        counts in ``progress["handed_over"]``."""
        for i in range(0, len(games), chunk):
            part = games[i:i + chunk]
            try:
                await self._hand_over_part(target, part, progress)
            except asyncio.CancelledError:  # the drain stopped: serve them here again
                for g in part:
                    if g.frozen and not g.gone:
                        g.thaw()
                raise

    async def _hand_over_part(self, target: str, part: list[Room],
                              progress: dict[str, int]) -> None:
        ready = await asyncio.gather(*(g.freeze(target) for g in part))
        offer = [{"game_id": g.game_id, "rev": g.owner_rev, "epoch": g.epoch}
                 for g, ok in zip(part, ready, strict=True) if ok]
        if not offer:
            return
        try:
            msg = await self._ask_to_adopt(target, orjson.dumps({"from": self.id,
                                                                 "games": offer}))
            answer = orjson.loads(msg.data)
            taken = set(answer.get("taken", []))
            for gid in answer.get("not_ours", []):  # it lacks their record's key: offered
                # to another shard next time (review finding: to it again, a
                # handover marker a round, until the drain's budget ran out)
                self.refused_by.setdefault(str(gid), set()).add(target)
        except (NoRespondersError, _TargetGone) as exc:  # it stopped listening, or
            # stopped before it answered: it is stopping too
            log.info("handover: %s %s", target, "stopped before it answered"
                     if isinstance(exc, _TargetGone) else "is not taking games (stopping)",
                     extra={"games": len(offer)})
            self.not_taking.add(target)
            taken = set()
        except Exception as exc:  # noqa: BLE001 - no answer: serve them here again
            log.warning("handover to %s failed: %r", target, exc)
            taken = set()
        for g, ok in zip(part, ready, strict=True):
            if not ok:
                continue
            if g.game_id in taken:
                m.handovers.labels("out").inc()
                self.drop(g, f"handed over to {target}")
                progress["handed_over"] += 1
            else:  # not taken: serve it again
                g.thaw()

    async def _ask_to_adopt(self, target: str, data: bytes) -> Msg:
        """The handover request to ``target``: its answer, within 10 s. Given
        up (:class:`_TargetGone`) once the target's lease has expired or is
        gone: a shard stopping beside this one can receive the request in
        the moment it stops listening and exit without answering (its lease
        is then renewed no more), and a frozen one answers nobody; waiting
        out the 10 s kept this shard's stop, and its games, waiting."""
        ask = asyncio.ensure_future(self.nc.request(self.subj.adopt(target), data, timeout=10))
        try:
            while True:
                done, _ = await asyncio.wait({ask}, timeout=0.1)
                if done:
                    return ask.result()
                if not any(x.shard == target for x in self.book.alive(wall_ms())):
                    raise _TargetGone(target)
        finally:
            if not ask.done():
                ask.cancel()
                await asyncio.gather(ask, return_exceptions=True)

    async def _on_adopt(self, msg: Msg) -> None:
        if relayed(msg, self.subj.adopt(self.id)):  # (not a shard's: common.nats.relayed)
            log.warning("an adoption relayed by JetStream, dropped")
            return
        try:
            req = orjson.loads(msg.data)
            games = req["games"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return self.out.reply(msg, {"taken": [], "error": "bad_request"})
        if self.draining:  # at once, not through the outbox: it may be closing already
            try:
                await self.nc.publish(msg.reply, orjson.dumps({"taken": []}))
            except Exception:  # noqa: BLE001 - closed: the asker times out
                pass
            return None
        if not isinstance(games, list):
            return self.out.reply(msg, {"taken": [], "error": "bad_request"})
        # its own task, not the subscription's: a stop signal unsubscribes
        # (stop_taking), which must not cancel the claims under way
        self.adopting += 1  # (a drain that begins now waits for these claims)
        self.spawn(self._adopt(msg, games), "adopt")
        return None

    async def _adopt(self, msg: Msg, games: list[Any]) -> None:
        sem = asyncio.Semaphore(32)

        async def take(g: Any) -> str | None:
            try:
                gid, rev, epoch = str(g["game_id"]), int(g["rev"]), int(g["epoch"])
            except (KeyError, TypeError, ValueError):
                return None
            async with sem:
                ok = await self._claim(gid, "handover", rev, epoch)
                return gid if ok else None

        try:
            got = await asyncio.gather(*(take(g) for g in games))
        finally:
            self.adopting -= 1
        # those whose record's key it lacks: the drain offers them elsewhere
        offered = {str(g.get("game_id")) for g in games if isinstance(g, dict)}
        self.out.reply(msg, {"taken": [x for x in got if x],
                             "not_ours": sorted(offered & self.not_ours.keys())})
