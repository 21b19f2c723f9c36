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

Ownership, failover and drain: :mod:`ttanjit.shard.leases`,
:mod:`ttanjit.shard.handover`, :mod:`ttanjit.shard.ownership` and
:mod:`ttanjit.shard.records`; timers and bots: :mod:`ttanjit.shard.clocks`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import secrets
import time
from typing import Any

import orjson
from nats.aio.msg import Msg
from nats.js.errors import KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue

from ttanjit.common.config import Settings
from ttanjit.common.nats import (
    GAMES_BUCKET,
    OWNERS_BUCKET,
    RECORDS_STREAM,
    Subjects,
    connect,
    ensure_jetstream,
)
from ttanjit.games.base import ABANDONED, JSON, Result, SeatSpec, Setup, message_for
from ttanjit.shard import metrics as m
from ttanjit.shard import records
from ttanjit.shard.clocks import Clocks
from ttanjit.shard.game import Applied, HostedGame, refusal
from ttanjit.shard.handover import Handover
from ttanjit.shard.leases import Leases
from ttanjit.shard.live import B32, CreateError, Live, new_game_id, wall_ms
from ttanjit.shard.ownership import SHARD_PREFIX, OwnerBook

log = logging.getLogger("ttanjit.shard")

FINISHED_KEEP_S = 30.0  # a finished game answers sync this long, then goes
RECORD_READ_TIMEOUT_S = 3.0  # one record read of a claim (a stream without a leader never answers)
CMD_ID_MAX = 64


__all__ = ["CreateError", "Shard"]


class Shard(Leases, Clocks, Handover):
    """One shard process: the games it owns and everything around them.
    Mixins: :class:`Leases` (ownership upkeep, failover, heartbeats),
    :class:`Clocks` (timers, bots, presses), :class:`Handover` (drain)."""

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
        self.renew_lock = asyncio.Lock()
        self.claiming: set[str] = set()
        self.reclaiming: set[str] = set()
        self.claims_from = 0.0
        self.nats_back = asyncio.Event()
        self.nats_back_at = -1e9
        self.rng = random.Random()
        self._tasks: list[asyncio.Task[Any]] = []
        self._out: list[tuple[str, bytes]] = []  # (subject, payload) to publish next
        self.loop = asyncio.get_running_loop()

    # ======================================================================
    # start / stop
    # ======================================================================
    async def start(self) -> None:
        self.nc = await connect(self.cfg.nats_url, f"shard {self.id}",
                                disconnected_cb=self._on_disconnected,
                                reconnected_cb=self._on_reconnected)
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
        setup = Setup(game, opts, specs, seed if seed is not None else self.rng.getrandbits(48))
        return setup, players

    async def create_game(self, game: str, options: JSON, seats: list[JSON],
                          seed: int | None = None, game_id: str = "") -> str:
        if self.draining:
            raise RuntimeError("shard is draining")
        if sum(1 for g in self.games.values() if not g.hosted.finished) >= self.cfg.capacity:
            raise RuntimeError(f"shard is full ({self.cfg.capacity} games)")
        watch = True  # the table option ``spectators`` (관전), not the engine's
        if isinstance(options, dict) and "spectators" in options:
            options = dict(options)
            watch = options.pop("spectators") is not False
        setup, players = self.build_setup(game, options, seats, seed)
        gid = game_id or new_game_id()
        if len(gid) != 12 or any(c not in B32 for c in gid):
            raise CreateError("game_id must be 12 lowercase base32 characters")
        now = wall_ms()
        try:
            hosted = HostedGame(gid, setup, players, now, self.cfg.backlog)
        except ValueError as exc:
            raise CreateError(str(exc)) from None
        hosted.spectators = watch
        try:
            rev = await self.owners.create(gid, orjson.dumps({
                "shard": self.id, "inc": self.inc, "epoch": 1, "reason": "create",
                "claimed_ms": now}))
        except KeyWrongLastSequenceError:
            raise CreateError(f"game {gid} exists already") from None
        subject = self.subj.record(gid)
        try:
            seq = await records.append(self.js, subject, hosted.header(), 0, f"{gid}:h")
            claim = {"claim": {"shard": self.id, "inc": self.inc, "epoch": 1,
                               "reason": "create", "origin_ms": now}}
            seq = await records.append(self.js, subject, claim, seq, f"{gid}:c1")
            await self.directory.put(gid, orjson.dumps(hosted.directory_entry()))
        except Exception:
            # no half-made game left behind: the caller places it again
            try:
                await self.owners.delete(gid, last=rev)
            except Exception:  # noqa: BLE001
                log.warning("cannot remove owner entry of failed game", extra={"game": gid})
            raise
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
        owned = False  # the owner entry names us: a failure from here on retries
        try:
            now = wall_ms()
            try:
                new_rev = await self.owners.update(gid, orjson.dumps({
                    "shard": self.id, "inc": self.inc, "epoch": epoch + 1, "reason": reason,
                    "claimed_ms": now}), last=rev)
            except KeyWrongLastSequenceError:
                return False  # another shard won the race
            owned = True
            subject = self.subj.record(gid)
            for _ in range(5):
                rec = await asyncio.wait_for(records.read(self.js, subject),
                                             RECORD_READ_TIMEOUT_S)
                if rec is None:
                    log.error("no record for game", extra={"game": gid})
                    await self.owners.delete(gid)
                    owned = False
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
            if owned and gid not in self.games and not self.stopping.is_set():
                # e.g. the record stream between leaders: nobody else will
                # take a game whose owner entry names us, so keep trying
                asyncio.ensure_future(self._reclaim(gid))

    def _engine_failed(self, live: Live) -> None:
        """The engine raised mid-input: its state can no longer be trusted.
        Drop it and rebuild the game from the record (which holds only
        accepted inputs)."""
        self._drop(live, "engine error")
        asyncio.ensure_future(self._reclaim(live.game_id))

    async def _reclaim(self, gid: str) -> None:
        """Re-host a game this shard dropped after an append failure (NATS
        down) or failed to claim: replay its record, unless another shard
        has it by then."""
        if gid in self.reclaiming:
            return
        self.reclaiming.add(gid)
        try:
            await self._reclaim_loop(gid)
        finally:
            self.reclaiming.discard(gid)

    async def _reclaim_loop(self, gid: str) -> None:
        delay = 0.25
        while not self.stopping.is_set() and gid not in self.games:
            await self._nats_back(delay)  # at once when NATS reconnects
            delay = min(delay * 2, 1.0)
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
        # commands not yet durable (and their repeats): not applied after all
        for applied, msg, _ in live.pending:
            if msg is not None:
                self._respond(msg, refusal("game_unavailable", applied.entry.get("cmd")))
        for (_, cmd_id), dups in live.inflight.items():
            for dup in dups:
                self._respond(dup, refusal("game_unavailable", cmd_id))
        live.pending.clear()
        live.inflight.clear()
        live.idle.set()  # release syncs waiting for durability (they answer unavailable)
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
        if "auto" in action:
            # ``auto`` marks the shard's own autopilot/bot actions (it keeps
            # autopilot on); a player can never send it for themselves.
            action = {k: v for k, v in action.items() if k != "auto"}
        if hosted.engine.presence.substituted[seat]:
            # RULES.md 4: a bot took the seat; the player may watch (sync)
            # but not retake it — no game or presence action of theirs
            m.commands.labels(game, "refused").inc()
            reply = orjson.dumps(refusal("seat_is_bot", cmd_id, message_for("seat_is_bot")))
            hosted.remember(player, cmd_id, reply)
            return self._reply(msg, reply, t0)
        t = live.now_t(self.loop.time())
        try:
            out = hosted.apply(t, seat, action, player=player, cmd_id=cmd_id,
                               server_ms=wall_ms())
        except Exception:  # an engine bug must not take the shard down
            log.exception("engine error", extra={"game": live.game_id, "action": action})
            m.commands.labels(game, "error").inc()
            self._reply(msg, refusal("internal_error", cmd_id), t0)
            self._engine_failed(live)
            return None
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
            if not live.hosted.spectators:  # the host turned 관전 off
                return self._respond(msg, refusal("no_spectating"))
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
        return self._respond(msg, live.hosted.sync(player, last, wall_ms(),
                                                   live.now_t(self.loop.time())))

    async def _sync_later(self, live: Live, msg: Msg, player: str | None, last: int) -> None:
        await live.idle.wait()
        if live.gone:  # its last events may never have been durable here
            self._respond(msg, refusal("game_unavailable"))
        else:
            self._respond(msg, live.hosted.sync(player, last, wall_ms(),
                                                live.now_t(self.loop.time())))

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
                    asyncio.ensure_future(self._reclaim(live.game_id))  # only if still ours
                    return
                except Exception:
                    m.record_append_failures.inc()
                    log.exception("record append failed", extra={"game": live.game_id})
                    live.pending[:0] = batch
                    self._drop(live, "append failed")
                    # its unacknowledged inputs are gone (their commands got
                    # game_unavailable); take the game back from its record
                    asyncio.ensure_future(self._reclaim(live.game_id))
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
        ended_by = hosted.engine.result().get("ended_by")
        if ended_by == ABANDONED:  # RULES.md 4: every human away 10 min
            m.games_abandoned.labels(hosted.setup.game).inc()
        log.info("game finished", extra={"game": gid, "inputs": hosted.inputs,
                                          "ended_by": ended_by})
        self._gauges()

        def forget() -> None:
            if self.games.get(gid) is live:
                self._drop(live, "finished")
        self.loop.call_later(FINISHED_KEEP_S, forget)

