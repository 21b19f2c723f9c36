"""The game shard's asyncio layer (issue 5, DESIGN.md 1, 3.2, 4).

Moves bytes and owns clocks; the game logic is in :mod:`ttanjit.shard.game`
(sans-I/O) and the engines. Per game:

- commands (NATS request/reply) are applied at once at ``t`` from the shard's
  monotonic clock, then appended to the record (write-ahead, one append in
  flight per game, pipelined across games) and only then are the events
  published and the reply sent;
- one timer per game on the event loop's timer heap wakes at the engine's
  next deadline and feeds a clock-only input (recorded like any other);
- bot, substituted and autopilot seats are asked of the bot pool, after a
  thinking pause when humans play (``ttanjit.bots.timing``), at once in
  bot-only games (whose clock then jumps to the next deadline when nobody
  can act).

Ownership, failover and drain: see :mod:`ttanjit.shard.ownership` and
:mod:`ttanjit.shard.records`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import random
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from nats.js.errors import KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from ttanjit.common.config import Settings
from ttanjit.common.nats import (
    GAMES_BUCKET,
    OWNERS_BUCKET,
    Subjects,
    connect,
    ensure_jetstream,
)
from ttanjit.games.base import JSON, Result, SeatSpec, Setup
from ttanjit.shard import metrics as m
from ttanjit.shard import records
from ttanjit.shard.game import Applied, HostedGame, refusal
from ttanjit.shard.ownership import SHARD_PREFIX, Lease, OwnerBook, rendezvous

log = logging.getLogger("ttanjit.shard")

B32 = "abcdefghijklmnopqrstuvwxyz234567"
FINISHED_KEEP_S = 30.0  # a finished game answers sync this long, then goes
CMD_ID_MAX = 64
SKIP_FOR_BOTS = ("resume", "one_card")


def new_game_id() -> str:
    return "".join(secrets.choice(B32) for _ in range(12))


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class CreateError(ValueError):
    """CreateGame input the shard refuses (INVALID_ARGUMENT)."""


@dataclass(eq=False)
class Live:
    """A game this shard owns right now."""

    hosted: HostedGame
    epoch: int
    owner_rev: int
    last_seq: int  # stream sequence of the game's last record message
    t_base: int  # game t at mono_base
    mono_base: float
    pending: list[tuple[Applied, Msg | None, float]] = field(default_factory=list)
    flushing: bool = False
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    timer: asyncio.TimerHandle | None = None
    timer_due: float = 0.0
    bots: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    subs: list[Subscription] = field(default_factory=list)
    inflight: dict[tuple[str, str], list[Msg]] = field(default_factory=dict)
    windows: dict[int, asyncio.TimerHandle] = field(default_factory=dict)  # bot presses
    gone: bool = False  # lost / handed over / dropped
    frozen: bool = False  # being handed over
    finalized: bool = False
    msg_no: int = 0

    @property
    def game_id(self) -> str:
        return self.hosted.game_id

    @property
    def game(self) -> str:
        return self.hosted.setup.game

    def now_t(self, mono: float) -> int:
        t = self.t_base + int((mono - self.mono_base) * 1000)
        return max(t, self.hosted.engine.now)


class Shard:
    def __init__(self, settings: Settings) -> None:
        self.cfg = settings
        self.id = settings.shard_id or f"shard-{os.getpid()}"
        self.inc = secrets.token_hex(4)
        self.subj = Subjects(settings.prefix)
        self.games: dict[str, Live] = {}
        self.book = OwnerBook()
        self.draining = False
        self.stopping = asyncio.Event()
        self.grpc_addr = ""
        self.lease_rev = 0
        self.lease_expires = 0
        self.claiming: set[str] = set()
        self.rng = random.Random()
        self._tasks: list[asyncio.Task[Any]] = []
        self._out: list[tuple[str, bytes]] = []  # (subject, payload) to publish next
        self.loop = asyncio.get_running_loop()

    # ======================================================================
    # start / stop
    # ======================================================================
    async def start(self) -> None:
        self.nc = await connect(self.cfg.nats_url, f"shard {self.id}")
        self.js = self.nc.jetstream(timeout=5.0)
        buckets = await ensure_jetstream(self.js, self.subj, self.cfg.js_replicas)
        self.owners: KeyValue = buckets[OWNERS_BUCKET]
        self.directory: KeyValue = buckets[GAMES_BUCKET]
        await self._register_lease()
        self.watcher = await self.owners.watchall()
        self.watch_seen = self.loop.time()
        self.watch_task = asyncio.create_task(self._watch_owners(), name="watch-owners")
        self._tasks.append(asyncio.create_task(self._watchdog(), name="watchdog"))
        self._tasks.append(asyncio.create_task(self._lease_loop(), name="lease"))
        self._tasks.append(asyncio.create_task(self._heartbeat_loop(), name="heartbeat"))
        self._tasks.append(asyncio.create_task(self._orphan_loop(), name="orphans"))
        self.adopt_sub = await self.nc.subscribe(self.subj.adopt(self.id), cb=self._on_adopt)
        log.info("shard started", extra={"shard": self.id, "inc": self.inc,
                                          "grpc": self.grpc_addr})

    async def close(self) -> None:
        self.stopping.set()
        for task in [*self._tasks, self.watch_task]:
            task.cancel()
        left = [g for g in self.games.values() if not g.hosted.finished]
        for live in list(self.games.values()):
            self._drop(live, "shutdown")
        if not left:  # nothing to fail over: release the lease at once
            try:
                await self.owners.delete(SHARD_PREFIX + self.id, last=self.lease_rev)
            except Exception:  # noqa: BLE001
                pass
        try:
            await self.nc.drain()
        except Exception:  # noqa: BLE001 - closing anyway
            pass

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
                await self.watcher.stop()
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
        setup = Setup(game, opts, specs, seed if seed is not None else self.rng.getrandbits(48))
        return setup, players

    async def create_game(self, game: str, options: JSON, seats: list[JSON],
                          seed: int | None = None, game_id: str = "") -> str:
        if self.draining:
            raise RuntimeError("shard is draining")
        if sum(1 for g in self.games.values() if not g.hosted.finished) >= self.cfg.capacity:
            raise RuntimeError(f"shard is full ({self.cfg.capacity} games)")
        setup, players = self.build_setup(game, options, seats, seed)
        gid = game_id or new_game_id()
        if len(gid) != 12 or any(c not in B32 for c in gid):
            raise CreateError("game_id must be 12 lowercase base32 characters")
        now = wall_ms()
        try:
            hosted = HostedGame(gid, setup, players, now, self.cfg.backlog)
        except ValueError as exc:
            raise CreateError(str(exc)) from None
        try:
            rev = await self.owners.create(gid, orjson.dumps({
                "shard": self.id, "inc": self.inc, "epoch": 1, "reason": "create",
                "claimed_ms": now}))
        except KeyWrongLastSequenceError:
            raise CreateError(f"game {gid} exists already") from None
        subject = self.subj.record(gid)
        seq = await records.append(self.js, subject, hosted.header(), 0, f"{gid}:h")
        claim = {"claim": {"shard": self.id, "inc": self.inc, "epoch": 1, "reason": "create",
                           "origin_ms": now}}
        seq = await records.append(self.js, subject, claim, seq, f"{gid}:c1")
        await self.directory.put(gid, orjson.dumps(hosted.directory_entry()))
        live = Live(hosted, 1, rev, seq, 0, self.loop.time())
        await self._host(live, "create")
        return gid

    async def _claim(self, gid: str, reason: str, rev: int, epoch: int, *,
                     dead_renewed_ms: int = 0) -> bool:
        """Take a game: owner entry (revision check), record replay, claim
        marker (fences the old owner), then serve it."""
        if gid in self.games or gid in self.claiming:
            return gid in self.games
        self.claiming.add(gid)
        try:
            now = wall_ms()
            try:
                new_rev = await self.owners.update(gid, orjson.dumps({
                    "shard": self.id, "inc": self.inc, "epoch": epoch + 1, "reason": reason,
                    "claimed_ms": now}), last=rev)
            except KeyWrongLastSequenceError:
                return False  # another shard won the race
            subject = self.subj.record(gid)
            for _ in range(5):
                rec = await records.read(self.js, subject)
                if rec is None:
                    log.error("no record for game", extra={"game": gid})
                    await self.owners.delete(gid)
                    return False
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
                now = wall_ms()
                hosted.origin_ms = now - t
                marker = {"claim": {"shard": self.id, "inc": self.inc, "epoch": epoch + 1,
                                    "reason": reason, "origin_ms": now - t}}
                try:
                    seq = await records.append(self.js, subject, marker, rec.last_seq,
                                               f"{gid}:c{epoch + 1}:{self.inc}")
                except records.Fenced:
                    continue  # the old owner appended meanwhile: read again
                break
            else:
                return False
            live = Live(hosted, epoch + 1, new_rev, seq, t, self.loop.time())
            live.msg_no = len(rec.entries) + len(rec.markers) + 2
            if hosted.finished:
                self.games[gid] = live
                await self._finalize(live)
                return True
            await self._host(live, reason)
            log.info("claimed game", extra={"game": gid, "reason": reason, "t": t,
                                             "inputs": len(rec.entries)})
            return True
        except Exception:
            log.exception("claim failed", extra={"game": gid})
            return False
        finally:
            self.claiming.discard(gid)

    async def _reclaim(self, live: Live) -> None:
        """Re-host a game this shard dropped after an append failure (NATS
        down): replay its record, unless another shard has it by then."""
        gid, delay = live.game_id, 0.5
        while not self.stopping.is_set() and gid not in self.games:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
            try:
                entry = await self.owners.get(gid)
            except NotFoundError:
                return  # finished meanwhile
            except Exception:  # noqa: BLE001 - NATS still away: try again
                continue
            own = orjson.loads(entry.value or b"{}")
            if (own.get("shard"), own.get("inc")) != (self.id, self.inc):
                return  # someone else owns it now
            if await self._claim(gid, "failover", entry.revision or 0, int(own.get("epoch", 0))):
                return

    async def _host(self, live: Live, reason: str) -> None:
        gid = live.game_id
        self.games[gid] = live
        live.idle.set()
        live.subs = [
            await self.nc.subscribe(self.subj.cmd(gid), cb=self._cmd_cb(live)),
            await self.nc.subscribe(self.subj.sync(gid), cb=self._sync_cb(live)),
        ]
        # The server must route the game's subjects to us before CreateGame
        # (or a claim) returns. nats-py's flush() writes its PING ahead of
        # commands still queued for the flusher task, so push those first.
        await self.nc._flush_pending(force_flush=True)
        await self.nc.flush()
        m.claims.labels(reason).inc()
        if reason == "handover":
            m.handovers.labels("in").inc()
        self._gauges()
        if reason != "create":  # a One Card window still open: bots may press
            window = live.hosted.engine.view(None).get("window")
            if isinstance(window, dict):
                self._schedule_presses(live, window)
        self._after_change(live)

    def _drop(self, live: Live, why: str) -> None:
        """Stop serving a game here (lost, handed over, finished, shutdown)."""
        if live.gone:
            return
        live.gone = True
        if live.timer is not None:
            live.timer.cancel()
        for h in live.windows.values():
            h.cancel()
        for task in live.bots.values():
            task.cancel()
        for sub in live.subs:
            asyncio.ensure_future(sub.unsubscribe())
        for _, msg, _ in live.pending:
            if msg is not None and msg.reply:
                asyncio.ensure_future(msg.respond(orjson.dumps(refusal("game_unavailable"))))
        live.pending.clear()
        if self.games.get(live.game_id) is live:
            del self.games[live.game_id]
        log.info("game dropped", extra={"game": live.game_id, "why": why})
        self._gauges()

    def _gauges(self) -> None:
        counts = {"onecard": 0, "penalty_rows": 0, "hakka": 0}
        players = 0
        for live in self.games.values():
            if live.hosted.finished:
                continue
            counts[live.game] = counts.get(live.game, 0) + 1
            pres = live.hosted.engine.presence
            players += sum(1 for s in range(live.hosted.engine.n) if pres.is_active_human(s))
        for g, n in counts.items():
            m.games_live.labels(g).set(n)
        m.players.set(players)

    # ======================================================================
    # commands and sync
    # ======================================================================
    def _cmd_cb(self, live: Live) -> Any:
        async def cb(msg: Msg) -> None:
            self.on_command(live, msg)
            if self._out:
                await self._send_out()
        return cb

    def _sync_cb(self, live: Live) -> Any:
        async def cb(msg: Msg) -> None:
            self.on_sync(live, msg)
            if self._out:
                await self._send_out()
        return cb

    async def _send_out(self) -> None:
        """Publish what the synchronous parts queued (replies, events)."""
        out, self._out = self._out, []
        publish = self.nc.publish
        for subject, data in out:
            await publish(subject, data)

    def _reply(self, msg: Msg, doc: JSON | bytes, t0: float) -> None:
        if msg.reply:
            self._out.append((msg.reply, doc if isinstance(doc, bytes) else orjson.dumps(doc)))
        m.command_latency.observe(time.perf_counter() - t0)

    def on_command(self, live: Live, msg: Msg) -> None:
        t0 = time.perf_counter()
        game = live.game
        try:
            req = orjson.loads(msg.data)
        except orjson.JSONDecodeError:
            req = None
        if not isinstance(req, dict):
            m.commands.labels(game, "refused").inc()
            return self._reply(msg, refusal("bad_request"), t0)
        player, cmd_id, action = req.get("player"), req.get("cmd_id"), req.get("action")
        if not isinstance(cmd_id, str) or not cmd_id or len(cmd_id) > CMD_ID_MAX:
            m.commands.labels(game, "refused").inc()
            return self._reply(msg, refusal("bad_request", cmd_id if isinstance(
                cmd_id, str) else None), t0)
        if not isinstance(player, str):
            m.commands.labels(game, "refused").inc()
            return self._reply(msg, refusal("bad_request", cmd_id), t0)
        if live.gone or live.frozen:  # lost, or being handed over: retry finds the owner
            m.commands.labels(game, "error").inc()
            return self._reply(msg, refusal("game_unavailable", cmd_id), t0)
        hosted = live.hosted
        seen = hosted.seen(player, cmd_id)
        if seen is not None:
            m.commands.labels(game, "duplicate").inc()
            waiting = live.inflight.get((player, cmd_id))
            if waiting is not None:  # first one not durable yet: answer with it
                waiting.append(msg)
                return None
            return self._reply(msg, seen, t0)
        seat = hosted.seat_of(player)
        if seat is None:
            m.commands.labels(game, "refused").inc()
            return self._reply(msg, refusal("not_seated", cmd_id), t0)
        if not isinstance(action, dict):
            m.commands.labels(game, "refused").inc()
            reply = orjson.dumps(refusal("bad_action", cmd_id, "잘못된 요청이에요."))
            hosted.remember(player, cmd_id, reply)
            return self._reply(msg, reply, t0)
        t = live.now_t(self.loop.time())
        try:
            out = hosted.apply(t, seat, action, player=player, cmd_id=cmd_id,
                               server_ms=wall_ms())
        except Exception:  # an engine bug must not take the shard down
            log.exception("engine error", extra={"game": live.game_id, "action": action})
            m.commands.labels(game, "error").inc()
            return self._reply(msg, refusal("internal_error", cmd_id), t0)
        if isinstance(out, Result):
            m.commands.labels(game, "refused").inc()
            reply = orjson.dumps({"ok": False, "cmd_id": cmd_id, "code": out.code,
                                  "message": out.message})
            hosted.remember(player, cmd_id, reply)
            return self._reply(msg, reply, t0)
        m.commands.labels(game, "ok").inc()
        live.inflight[(player, cmd_id)] = []
        self._submit(live, out, msg, t0)
        return None

    def on_sync(self, live: Live, msg: Msg) -> None:
        try:
            req = orjson.loads(msg.data)
        except orjson.JSONDecodeError:
            req = None
        if not isinstance(req, dict):
            return self._respond(msg, refusal("bad_request"))
        if req.get("spectator"):
            player = None
        else:
            player = req.get("player")
            if not isinstance(player, str) or player not in live.hosted.players:
                return self._respond(msg, refusal("not_seated"))
        last = req.get("last_seq", 0)
        if not isinstance(last, int) or isinstance(last, bool):
            return self._respond(msg, refusal("bad_request"))
        if live.pending or live.flushing:  # answer only with durable events
            asyncio.ensure_future(self._sync_later(live, msg, player, last))
            return None
        return self._respond(msg, live.hosted.sync(player, last, wall_ms()))

    async def _sync_later(self, live: Live, msg: Msg, player: str | None, last: int) -> None:
        await live.idle.wait()
        self._respond(msg, live.hosted.sync(player, last, wall_ms()))

    def _respond(self, msg: Msg, doc: JSON | bytes) -> None:
        if msg.reply:
            self._out.append((msg.reply, doc if isinstance(doc, bytes) else orjson.dumps(doc)))
            if len(self._out) == 1:
                self.loop.call_soon(self._kick)

    def _kick(self) -> None:
        if self._out:
            asyncio.ensure_future(self._send_out())

    # ======================================================================
    # write-ahead, then publish
    # ======================================================================
    def _submit(self, live: Live, applied: Applied, msg: Msg | None, t0: float = 0.0) -> None:
        live.pending.append((applied, msg, t0))
        live.idle.clear()
        if not live.flushing:
            live.flushing = True
            asyncio.ensure_future(self._flush(live))
        for ev in applied.result.events:
            if ev.type == "one_card_window":
                self._schedule_presses(live, ev.data)
        self._after_change(live)

    async def _flush(self, live: Live) -> None:
        subject = self.subj.record(live.game_id)
        try:
            while live.pending and not live.gone:
                batch, live.pending = live.pending, []
                entries = [a.entry for a, _, _ in batch]
                doc = entries[0] if len(entries) == 1 else {"inputs": entries}
                live.msg_no += 1
                t0 = time.perf_counter()
                try:
                    live.last_seq = await records.append(
                        self.js, subject, doc, live.last_seq,
                        f"{live.game_id}:{live.epoch}:{live.msg_no}")
                except records.Fenced:
                    m.record_append_failures.inc()
                    m.losses.inc()
                    log.warning("fenced: another shard owns the game",
                                extra={"game": live.game_id})
                    live.pending[:0] = batch
                    self._drop(live, "fenced")
                    asyncio.ensure_future(self._reclaim(live))  # only if still ours
                    return
                except Exception:
                    m.record_append_failures.inc()
                    log.exception("record append failed", extra={"game": live.game_id})
                    live.pending[:0] = batch
                    self._drop(live, "append failed")
                    # its unacknowledged inputs are gone (their commands got
                    # game_unavailable); take the game back from its record
                    asyncio.ensure_future(self._reclaim(live))
                    return
                m.record_append.observe(time.perf_counter() - t0)
                self._publish(live, batch)
                await self._send_out()
        finally:
            live.flushing = False
            if not live.pending:
                live.idle.set()
        if live.hosted.finished and not live.finalized and not live.gone:
            await self._finalize(live)

    def _publish(self, live: Live, batch: list[tuple[Applied, Msg | None, float]]) -> None:
        subj, out = self.subj, self._out
        for applied, msg, t0 in batch:
            for pid, frame in applied.frames:
                target = subj.public(live.game_id) if pid is None else subj.player_events(pid)
                out.append((target, frame))
            reply = applied.reply
            if reply is not None:
                key = (applied.entry["player"], applied.entry["cmd"])
                dups = live.inflight.pop(key, [])
                if msg is not None:
                    self._reply(msg, reply, t0)
                for dup in dups:
                    self._respond(dup, reply)

    async def _finalize(self, live: Live) -> None:
        """A finished game: result stream, directory, owner entry released."""
        live.finalized = True
        hosted = live.hosted
        if live.timer is not None:
            live.timer.cancel()
        gid = live.game_id
        try:
            await self.js.publish(self.subj.result(hosted.setup.game),
                                  orjson.dumps(hosted.result_doc()),
                                  headers={records.MSG_ID: f"result:{gid}"})
            await self.directory.put(gid, orjson.dumps(hosted.directory_entry()))
            await self.owners.delete(gid)
        except Exception:
            log.exception("finalize failed", extra={"game": gid})
        log.info("game finished", extra={"game": gid, "inputs": hosted.inputs})
        self._gauges()

        def forget() -> None:
            if self.games.get(gid) is live:
                self._drop(live, "finished")
        self.loop.call_later(FINISHED_KEEP_S, forget)

    # ======================================================================
    # clocks: timers, bots, One Card presses
    # ======================================================================
    def _after_change(self, live: Live) -> None:
        if live.gone:
            return
        self._schedule_bots(live)
        self._arm(live)

    def _arm(self, live: Live) -> None:
        eng = live.hosted.engine
        nd = None if eng.finished else eng.next_deadline()
        if nd is None:
            if live.timer is not None:
                live.timer.cancel()
                live.timer = None
            return
        if not live.hosted.has_active_humans() and not live.bots:
            # bot-only game: played out at once; nobody can act until the
            # deadline, so its clock jumps there
            now_t = live.now_t(self.loop.time())
            if nd > now_t:
                live.t_base += nd - now_t
        due = live.mono_base + (nd - live.t_base) / 1000
        if live.timer is not None:
            if abs(live.timer_due - due) < 0.0005:
                return
            live.timer.cancel()
        live.timer_due = due
        live.timer = self.loop.call_at(due, self._fire, live, nd)

    def _fire(self, live: Live, nd: int) -> None:
        live.timer = None
        if live.gone:
            return
        mono = self.loop.time()
        m.timer_lag.observe(max(0.0, mono - live.timer_due))
        t = max(live.now_t(mono), nd)
        out = live.hosted.apply(t, server_ms=wall_ms())
        if isinstance(out, Result):  # cannot happen for a clock input; keep going
            log.error("clock input refused", extra={"game": live.game_id, "code": out.code})
            return
        self._submit(live, out, None)

    def _schedule_bots(self, live: Live) -> None:
        hosted = live.hosted
        if hosted.finished:
            return
        for seat in hosted.driven_seats():
            if seat in live.bots:
                continue
            acts = hosted.engine.legal_actions(seat)
            if not any(a.get("type") not in SKIP_FOR_BOTS for a in acts):
                continue
            live.bots[seat] = asyncio.ensure_future(self._bot_turn(live, seat))

    async def _bot_turn(self, live: Live, seat: int) -> None:
        """Ask the bot pool for ``seat``'s action and apply it (same
        validation as a human's command)."""
        from ttanjit.bots import timing

        hosted = live.hosted
        version = hosted.version
        try:
            level = hosted.level_of(seat)
            if hosted.has_active_humans():
                seed = hash((hosted.setup.seed, hosted.inputs, seat)) & 0xFFFFFFFF
                await asyncio.sleep(timing.thinking_ms(level, seed) / 1000)
                if live.gone or hosted.finished:
                    return
            version = hosted.version
            auto = hosted.on_autopilot(seat)
            eng = hosted.engine
            now_t = live.now_t(self.loop.time())
            nd = eng.next_deadline()
            budget = self.cfg.bot_wait_ms
            if nd is not None and hosted.has_active_humans():
                budget = max(50, min(budget, nd - now_t - 100))
            req = {"game": hosted.setup.game, "level": level, "seat": seat,
                   "view": eng.view(seat), "budget_ms": budget,
                   "rng": self.rng.getrandbits(31)}
            t0 = time.perf_counter()
            try:
                msg = await self.nc.request(self.subj.bots_decide, orjson.dumps(req),
                                            timeout=budget / 1000 + 0.2)
            except (TimeoutError, NatsTimeout, NoRespondersError):
                m.bot_timeouts.labels(hosted.setup.game).inc()
                return
            m.bot_request.labels(hosted.setup.game).observe(time.perf_counter() - t0)
            if live.gone or hosted.finished:
                return
            reply = orjson.loads(msg.data)
            action = reply.get("action") if isinstance(reply, dict) else None
            if not isinstance(action, dict):
                return
            if auto:
                action = {**action, "auto": True}
            out = hosted.apply(live.now_t(self.loop.time()), seat, action,
                               server_ms=wall_ms(), by="bot")
            if isinstance(out, Result):
                log.debug("bot action refused", extra={"game": live.game_id, "seat": seat,
                                                       "code": out.code})
                return
            if live.bots.get(seat) is asyncio.current_task():
                del live.bots[seat]
            self._submit(live, out, None)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot turn failed", extra={"game": live.game_id, "seat": seat})
        finally:
            if live.bots.get(seat) is asyncio.current_task():
                del live.bots[seat]
                if not live.gone:
                    if hosted.version != version:
                        self._after_change(live)
                    elif not live.bots:
                        self._arm(live)

    def _schedule_presses(self, live: Live, window: JSON) -> None:
        """RULES 1.7 / 4: bot-played seats press [원카드!] after their
        reaction delay (``ttanjit.bots.timing``), only while that window is
        still open (bots never make false calls). In bot-only games (played
        out at once, no real time) nobody presses: windows expire."""
        from ttanjit.bots import timing

        hosted = live.hosted
        if not hosted.has_active_humans():
            return
        for seat in hosted.driven_seats():
            old = live.windows.pop(seat, None)
            if old is not None:
                old.cancel()
            seed = hash((hosted.setup.seed, hosted.inputs, seat, 1)) & 0xFFFFFFFF
            delay = timing.press_delay_ms(hosted.level_of(seat), seed)
            if delay is None:
                continue
            live.windows[seat] = self.loop.call_later(delay / 1000, self._press, live, seat,
                                                      dict(window))

    def _press(self, live: Live, seat: int, window: JSON) -> None:
        live.windows.pop(seat, None)
        hosted = live.hosted
        if live.gone or live.frozen or hosted.finished:
            return
        now = hosted.engine.view(seat).get("window")
        if not isinstance(now, dict) or now.get("holder") != window.get("holder") or now.get(
                "closes_at") != window.get("closes_at"):
            return  # closed (or another window): no false calls
        if seat not in hosted.driven_seats():
            return
        action: JSON = {"type": "one_card"}
        if hosted.on_autopilot(seat):
            action["auto"] = True
        out = hosted.apply(live.now_t(self.loop.time()), seat, action, server_ms=wall_ms(),
                           by="bot")
        if not isinstance(out, Result):
            self._submit(live, out, None)

    # ======================================================================
    # drain and handover
    # ======================================================================
    async def drain(self, timeout_s: float | None = None) -> dict[str, int]:
        """Stop taking games; hand every live game to other shards."""
        if not self.draining:
            self.draining = True
            m.draining.set(1)
            log.info("draining", extra={"games": len(self.games)})
            try:
                await self._renew()
                await self._heartbeat()
            except Exception:  # noqa: BLE001
                pass
        deadline = self.loop.time() + (timeout_s or self.cfg.drain_timeout_s)
        handed = finished = 0
        while self.loop.time() < deadline:
            live_games = [g for g in self.games.values() if not g.hosted.finished]
            finished += sum(1 for g in self.games.values() if g.hosted.finished)
            for g in [g for g in self.games.values() if g.hosted.finished]:
                if g.finalized:
                    self._drop(g, "drain")
            if not live_games:
                break
            takers = self.book.takers(wall_ms(), exclude=self.id)
            if not takers:
                log.warning("no other shard to hand games to; their leases will expire and "
                            "the next shard to start takes them",
                            extra={"games": len(live_games)})
                break
            by_target: dict[str, list[Live]] = {}
            for g in live_games:
                by_target.setdefault(rendezvous(g.game_id, takers) or takers[0], []).append(g)
            results = await asyncio.gather(*(self._handover(tgt, gs)
                                             for tgt, gs in by_target.items()))
            handed += sum(results)
            if sum(results) == 0:
                await asyncio.sleep(0.5)
        left = sum(1 for g in self.games.values() if not g.hosted.finished)
        return {"handed_over": handed, "finished": finished, "left": left}

    async def _handover(self, target: str, games: list[Live], chunk: int = 100) -> int:
        done = 0
        for i in range(0, len(games), chunk):
            part = games[i:i + chunk]
            ready = await asyncio.gather(*(self._freeze(g, target) for g in part))
            offer = [{"game_id": g.game_id, "rev": g.owner_rev, "epoch": g.epoch}
                     for g, ok in zip(part, ready, strict=True) if ok]
            if not offer:
                continue
            try:
                msg = await self.nc.request(self.subj.adopt(target),
                                            orjson.dumps({"from": self.id, "games": offer}),
                                            timeout=10)
                taken = set(orjson.loads(msg.data).get("taken", []))
            except Exception as exc:  # noqa: BLE001
                log.warning("handover to %s failed: %r", target, exc)
                taken = set()
            for g, ok in zip(part, ready, strict=True):
                if not ok:
                    continue
                if g.game_id in taken:
                    m.handovers.labels("out").inc()
                    self._drop(g, f"handed over to {target}")
                    done += 1
                else:  # not taken: serve it again
                    self._thaw(g)
        return done

    async def _freeze(self, live: Live, target: str) -> bool:
        """Stop the game here and append the handover marker (with the exact t)."""
        live.frozen = True
        for sub in live.subs:
            await sub.unsubscribe()
        live.subs = []
        if live.timer is not None:
            live.timer.cancel()
            live.timer = None
        for task in list(live.bots.values()):
            task.cancel()
        live.bots.clear()
        await live.idle.wait()
        if live.gone:
            return False
        t = live.now_t(self.loop.time())
        live.msg_no += 1
        try:
            live.last_seq = await records.append(
                self.js, self.subj.record(live.game_id),
                {"handover": {"from": self.id, "to": target, "t": t}}, live.last_seq,
                f"{live.game_id}:{live.epoch}:{live.msg_no}")
        except Exception:  # noqa: BLE001
            log.exception("handover marker failed", extra={"game": live.game_id})
            self._thaw(live)
            return False
        return True

    def _thaw(self, live: Live) -> None:
        live.frozen = False
        if live.gone:
            return

        async def resub() -> None:
            gid = live.game_id
            live.subs = [
                await self.nc.subscribe(self.subj.cmd(gid), cb=self._cmd_cb(live)),
                await self.nc.subscribe(self.subj.sync(gid), cb=self._sync_cb(live)),
            ]
            self._after_change(live)
        asyncio.ensure_future(resub())

    async def _on_adopt(self, msg: Msg) -> None:
        try:
            req = orjson.loads(msg.data)
            games = req["games"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            return self._respond(msg, {"taken": [], "error": "bad_request"})
        if self.draining:
            return self._respond(msg, {"taken": []})
        sem = asyncio.Semaphore(32)

        async def take(g: JSON) -> str | None:
            async with sem:
                ok = await self._claim(g["game_id"], "handover", int(g["rev"]), int(g["epoch"]))
                return g["game_id"] if ok else None

        got = await asyncio.gather(*(take(g) for g in games))
        self._respond(msg, {"taken": [x for x in got if x]})
        return None

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
