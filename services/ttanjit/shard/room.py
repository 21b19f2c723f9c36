"""One game hosted by this shard, with everything around it (like a Colyseus
``Room``): the sans-I/O :class:`~ttanjit.shard.game.HostedGame`, its
subscriptions, its clock (one timer at the engine's next deadline), its bot
seats and ``[원카드!]`` presses, the write-ahead append to its record and the
publishing of its events and replies. The :class:`~ttanjit.shard.service.Shard`
owns the rooms (and their ownership: leases, claims, drain).

One command, in this file, in order (docs/protocol.md 1):

1. :meth:`Room.on_command` (the ``cmd`` subscription): refusals are answered
   at once through :meth:`Outbox.reply`; an accepted action is applied to
   the engine at ``t`` from the shard's monotonic clock (:meth:`now_t`);
2. :meth:`Room.submit` queues it for the write-ahead append (one append in
   flight per game, pipelined across games) and re-arms the clock and bots;
3. :meth:`Room.append_next` appends the batch to the record (fenced by the
   expected last sequence, ``ttanjit.shard.records``) through the shard's
   group commit (``ttanjit.shard.commit``), and only on its ack
   (:meth:`Room.durable`) :meth:`Room.publish` queues its events and
   replies, sent by :meth:`Outbox.send`.

Clock inputs (:meth:`Room.fire`), bot actions (:meth:`Room.bot_turn`) and
presses (:meth:`Room.press`) take steps 2-3 the same way.

A bot decision is asked again (docs/protocol.md 3) while its seat still has
to act and the game is still hosted here: each request waits at most its
budget plus a margin (a worker killed mid-decision costs that much, not the
turn timer); while NATS is away the room waits for it to come back and asks
at once. The thinking pause is taken once and counts from the game's last
input (``hosted.last_ms``), and the request (``rng`` included) is the same
every time, so an answer to a repeated request is the answer the lost one
would have had.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections import Counter
from typing import TYPE_CHECKING

import orjson
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.errors import BadSubjectError, ConnectionClosedError, NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from ttanjit.games.base import ABANDONED, JSON, Engine, Result, flat_object, message_for
from ttanjit.shard import metrics as m
from ttanjit.shard import records
from ttanjit.shard.game import (
    Applied,
    HostedGame,
    Part,
    coalesce,
    envelope,
    part_body,
    refusal,
)
from ttanjit.shard.link import LinkMsg

if TYPE_CHECKING:
    from ttanjit.shard.service import Shard

log = logging.getLogger("ttanjit.shard")

# A gateway's id as its commands and catch-ups name it (``gw``): one token
# of a NATS subject (the route of a player's parts, <prefix>.gw.<id>.games).
# Unchecked, an id with a space made the subject nats-py refuses, and the
# rest of that send was lost: other players' parts, replies and appends
# (review finding).
GATEWAY_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

FINALIZE_RETRY_S = 0.5  # a finalize that failed is tried again after this, doubling
FINALIZE_RETRY_MAX_S = 5.0
FINISHED_KEEP_S = 30.0  # a finished game answers sync this long, then goes
CMD_ID_MAX = 64
MAX_RECENT = 64  # the most past events a resync view carries (sync's `recent`)
SKIP_FOR_BOTS = ("resume", "one_card")
ASK_MARGIN_S = 0.2  # a bot request waits its budget plus this, then is asked again
HEDGE_S = 1.0  # no reply this long: the same request once more (first reply wins)
RETRY_MAX_S = 1.0  # the longest pause between two asks (no worker, NATS away)
NO_WORKER_GRACE_S = 3.0  # bot-only game: how long to wait for a replacement worker


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Outbox:
    """What the shard publishes next, in order: appends (with their reply
    subject and headers), events and replies of every room (sent together
    after each callback and each ack), and the one reply path of the shard
    (:meth:`reply`)."""

    def __init__(self, shard: Shard) -> None:
        self.shard = shard
        self.queue: list[tuple[str, bytes, str, dict[str, str] | None]] = []
        self.sending = False

    def put(self, subject: str, data: bytes, reply: str = "",
            headers: dict[str, str] | None = None) -> None:
        self.queue.append((subject, data, reply, headers))
        if len(self.queue) == 1:
            self.shard.loop.call_soon(self._kick)

    def reply(self, msg: Msg, doc: JSON | bytes, t0: float | None = None) -> None:
        """Answer a request. ``t0``: when a game command came in (its
        latency is measured, sent or not). Whoever queued it either sends
        right after (the subscription callbacks, the append loop) or leaves
        it to the send this schedules."""
        data = doc if isinstance(doc, bytes) else orjson.dumps(doc)
        if type(msg) is LinkMsg:  # came over a gateway's link: answered there
            msg.link.answer(msg.rid, data)
        elif msg.reply:
            link = self.shard.link.addr
            if link and msg.subject.endswith(".cmd") and b'"gw"' in msg.data:
                # a gateway's command over NATS: name this shard's link, so
                # the gateway sends the game's next commands there (shard/link.py)
                nl = data.find(b"\n")
                head, rest = (data, b"") if nl < 0 else (data[:nl], data[nl:])
                if head.endswith(b"}"):
                    data = head[:-1] + b',"link":"' + link.encode() + b'"}' + rest
            self.put(msg.reply, data)
        if t0 is not None:
            m.command_latency.observe(time.perf_counter() - t0)

    def _kick(self) -> None:
        if self.queue:
            self.shard.spawn(self.send())

    async def send(self) -> None:
        """Publish what is queued, in order. nats-py's ``publish`` can wait
        (its buffer over the pending limit forces a flush); a send started
        meanwhile must not overtake the rest of this one, so one runs at a
        time and goes on until the queue is empty (a second returns at once:
        the running one sends its messages next)."""
        if self.sending:
            return
        self.sending = True
        try:
            publish = self.shard.nc.publish
            while self.queue:
                out, self.queue = self.queue, []
                for subject, data, reply, headers in out:
                    try:
                        await publish(subject, data, reply, headers)
                    except BadSubjectError:  # one bad message costs itself, not the rest
                        log.error("not sent: a bad subject %r", subject)
        finally:
            self.sending = False


def recordable(engine: Engine, action: JSON) -> bool:
    """An action a record may hold as sent, a player's or a bot's: flat
    (nothing nested, no long text: games/base.py) and no field its type
    does not have (``Engine.foreign_fields``)."""
    return flat_object(action) and not engine.foreign_fields(action)


class Room:
    """A game this shard owns right now."""

    def __init__(self, shard: Shard, hosted: HostedGame, epoch: int, owner_rev: int,
                 last_seq: int, t_base: int, mono_base: float) -> None:
        self.shard = shard
        self.out = shard.out
        self.loop = shard.loop
        self.hosted = hosted
        self.epoch = epoch
        self.owner_rev = owner_rev
        self.last_seq = last_seq  # stream sequence of the game's last record message
        self.msg_no = 0  # of this owner's appends (their Nats-Msg-Id)
        self.t_base = t_base  # game t at mono_base
        self.mono_base = mono_base
        # accepted inputs not yet durable: (applied, command msg, its t0)
        self.pending: list[tuple[Applied, Msg | None, float]] = []
        self.flushing = False  # an append is in flight (``batch``)
        self.batch: list[tuple[Applied, Msg | None, float]] = []
        self.batch_doc: JSON = {}
        self.batch_id = ""
        self.batch_t0 = 0.0
        self.idle = asyncio.Event()  # set while nothing waits to be durable
        self.inflight: dict[tuple[str, str], list[Msg]] = {}  # repeats of pending commands
        self.timer: asyncio.TimerHandle | None = None
        self.timer_due = 0.0
        self.bots: dict[int, asyncio.Task[None]] = {}
        self.windows: dict[int, asyncio.TimerHandle] = {}  # bot presses
        self.paused = False  # every human away at the last change (RULES.md 4)
        self.forget: asyncio.TimerHandle | None = None  # a finished game leaves
        self.subs: list[Subscription] = []
        # player -> the gateway that serves them (from their commands and
        # syncs): their parts of a burst go in that gateway's message
        self.routes: dict[str, str] = {}
        # players this shard marked away because their gateway was gone
        # (shard/gateways.py): back at their next command or sync
        self.marked_away: set[str] = set()
        self.gone = False  # lost / handed over / dropped
        self.frozen = False  # being handed over
        self.marker: asyncio.Future[int] | None = None  # a handover marker still in flight
        self.frozen_t = 0  # game t when it was frozen for a handover (freeze)
        self.finalized = False

    @property
    def game_id(self) -> str:
        return self.hosted.game_id

    @property
    def game(self) -> str:
        return self.hosted.setup.game

    def now_t(self, mono: float) -> int:
        t = self.t_base + int((mono - self.mono_base) * 1000)
        return max(t, self.hosted.engine.now)

    # ======================================================================
    # opening and closing
    # ======================================================================
    async def subscribe(self) -> None:
        nc, subj, gid = self.shard.nc, self.shard.subj, self.game_id
        self.subs = [await nc.subscribe(subj.cmd(gid), cb=self._on_cmd_msg),
                     await nc.subscribe(subj.sync(gid), cb=self._on_sync_msg)]

    def resume(self, reason: str) -> None:
        """Start the clock and the bots of a game just hosted here."""
        if reason != "create":  # a One Card window still open: bots may press
            self.press_open_window()
        self.after_change()

    def press_open_window(self) -> None:
        window = self.hosted.engine.view(None).get("window")
        if isinstance(window, dict):
            self.schedule_presses(window)

    def charged_t(self, mono: float) -> int:
        """The game time its clocks ran to here, for a reclaim from the
        record after a drop: until now, or, when inputs never became durable
        (NATS away), until the first of them — from then on nobody could
        play, as while a game has no owner."""
        unacked = [int(a.entry.get("t", 0)) for a, _, _ in (*self.batch, *self.pending)]
        return min([self.now_t(mono), *unacked])

    def close(self) -> bool:
        """Stop serving the game here (False: it was closed already).
        Commands not yet durable (and their repeats) are answered
        ``game_unavailable``: not applied after all."""
        if self.gone:
            return False
        self.gone = True
        for h in (self.timer, self.forget, *self.windows.values()):
            if h is not None:
                h.cancel()
        for task in self.bots.values():
            task.cancel()
        for sub in self.subs:
            self.shard.spawn(sub.unsubscribe())
        for applied, msg, _ in self.pending:
            if msg is not None:
                self.out.reply(msg, refusal("game_unavailable", applied.entry.get("cmd")))
        for (_, cmd_id), dups in self.inflight.items():
            for dup in dups:
                self.out.reply(dup, refusal("game_unavailable", cmd_id))
        self.pending.clear()
        self.inflight.clear()
        self.idle.set()  # release syncs waiting for durability (they answer unavailable)
        return True

    def engine_failed(self) -> None:
        """The engine raised mid-input: its state can no longer be trusted.
        Drop it and rebuild the game from the record (which holds only
        accepted inputs)."""
        self.shard.drop(self, "engine error", reclaim=True)

    # ======================================================================
    # commands and sync
    # ======================================================================
    async def _on_cmd_msg(self, msg: Msg) -> None:
        self.on_command(msg)
        if self.out.queue:
            await self.out.send()

    async def _on_sync_msg(self, msg: Msg) -> None:
        self.on_sync(msg)
        if self.out.queue:
            await self.out.send()

    def _refuse(self, msg: Msg, t0: float, doc: JSON | bytes, result: str = "refused",
                remember: tuple[str, str] | None = None) -> None:
        """Answer a command that changes nothing; ``remember``: (player,
        cmd_id) whose repeats get the same answer."""
        m.commands.labels(self.game, result).inc()
        if remember is not None:
            doc = orjson.dumps(doc)
            self.hosted.remember(*remember, doc)
        self.out.reply(msg, doc, t0)

    def on_command(self, msg: Msg) -> None:
        t0 = time.perf_counter()
        try:
            req = orjson.loads(msg.data)
        except orjson.JSONDecodeError:
            req = None
        if not isinstance(req, dict):
            return self._refuse(msg, t0, refusal("bad_request"))
        player, cmd_id, action = req.get("player"), req.get("cmd_id"), req.get("action")
        if not isinstance(cmd_id, str) or not cmd_id or len(cmd_id) > CMD_ID_MAX:
            return self._refuse(msg, t0, refusal("bad_request", cmd_id if isinstance(
                cmd_id, str) else None))
        if not isinstance(player, str):
            return self._refuse(msg, t0, refusal("bad_request", cmd_id))
        if self.gone or self.frozen:  # lost, or being handed over: retry finds the owner
            return self._refuse(msg, t0, refusal("game_unavailable", cmd_id), "error")
        hosted = self.hosted
        seen = hosted.seen(player, cmd_id)
        if seen is not None:
            m.commands.labels(self.game, "duplicate").inc()
            waiting = self.inflight.get((player, cmd_id))
            if waiting is not None:  # first one not durable yet: answer with it
                waiting.append(msg)
                return None
            return self.out.reply(msg, seen, t0)
        seat = hosted.seat_of(player)
        if seat is None:
            return self._refuse(msg, t0, refusal("not_seated", cmd_id))
        gw = req.get("gw")
        if isinstance(gw, str) and GATEWAY_ID.fullmatch(gw) and not (
                isinstance(action, dict) and action.get("type") == "disconnect"):
            # (a goodbye may come from a connection already replaced on
            # another gateway: it never moves the route)
            if self.routes.get(player) != gw:
                self.routes[player] = gw
            if player in self.marked_away:
                self.mark_back(player, action)
        key = (player, cmd_id)
        if not recordable(hosted.engine, action):
            return self._refuse(msg, t0, refusal("bad_action", cmd_id, message_for("bad_action")),
                                remember=key)
        if "auto" in action:
            # ``auto`` marks the shard's own autopilot/bot actions (it keeps
            # autopilot on); a player can never send it for themselves.
            action = {k: v for k, v in action.items() if k != "auto"}
        if hosted.engine.presence.substituted[seat]:
            # RULES.md 4: a bot took the seat; the player may watch (sync)
            # but not retake it — no game or presence action of theirs
            return self._refuse(msg, t0, refusal("seat_is_bot", cmd_id,
                                                 message_for("seat_is_bot")), remember=key)
        try:
            out = hosted.apply(self.now_t(self.loop.time()), seat, action, player=player,
                               cmd_id=cmd_id, server_ms=wall_ms())
        except Exception:  # noqa: BLE001 - an engine bug must not take the shard down
            log.exception("engine error", extra={"game": self.game_id, "action": action})
            self._refuse(msg, t0, refusal("internal_error", cmd_id), "error")
            self.engine_failed()
            return None
        if isinstance(out, Result):
            return self._refuse(msg, t0, {"ok": False, "cmd_id": cmd_id, "code": out.code,
                                          "message": out.message}, remember=key)
        m.commands.labels(self.game, "ok").inc()
        self.inflight[key] = []
        out.via_gateway = isinstance(gw, str) and bool(gw)
        self.submit(out, msg, t0)
        return None

    def on_sync(self, msg: Msg) -> None:
        if self.gone:  # dropped (an append failed, the engine raised): its state may
            # hold inputs never written
            return self.out.reply(msg, refusal("game_unavailable"))
        try:
            req = orjson.loads(msg.data)
        except orjson.JSONDecodeError:
            req = None
        if not isinstance(req, dict):
            return self.out.reply(msg, refusal("bad_request"))
        if req.get("spectator"):
            if not self.hosted.spectators:  # the host turned 관전 off
                return self.out.reply(msg, refusal("no_spectating"))
            player = None
        else:
            player = req.get("player")
            if not isinstance(player, str) or player not in self.hosted.players:
                return self.out.reply(msg, refusal("not_seated"))
            gw = req.get("gw")
            if isinstance(gw, str) and GATEWAY_ID.fullmatch(gw):
                self.routes[player] = gw
                if player in self.marked_away:
                    self.mark_back(player)
        last, recent = req.get("last_seq", 0), req.get("recent", 0)
        if any(not isinstance(x, int) or isinstance(x, bool) for x in (last, recent)):
            return self.out.reply(msg, refusal("bad_request"))
        recent = max(0, min(recent, MAX_RECENT))
        if self.pending or self.flushing:  # answer only with durable events
            self.shard.spawn(self._sync_later(msg, player, last, recent))
            return None
        return self.out.reply(msg, self.hosted.sync(player, last, wall_ms(),
                                                    self.now_t(self.loop.time()), recent))

    # ======================================================================
    # players whose gateway is gone (shard/gateways.py)
    # ======================================================================
    def present(self, player: str) -> bool:
        """Whether ``player``'s seat counts as connected (RULES.md 4)."""
        seat = self.hosted.seat_of(player)
        presence = self.hosted.engine.presence
        return seat is not None and presence.connected[seat] and \
            presence.is_active_human(seat)

    def mark_away(self, player: str, why: str = "their gateway is gone") -> bool:
        """``player`` has no connection and nobody will say so (their
        gateway is gone without a word; a room member away at the start):
        away, as a gateway would have said (their absence and the game's
        pause count from now)."""
        if self.gone or self.frozen or self.hosted.finished or not self.present(player):
            return False
        if not self._presence(player, "disconnect", why):
            return False
        self.marked_away.add(player)
        return True

    def mark_back(self, player: str, action: object = None) -> None:
        """A command or sync of ``player`` came through a gateway after all
        (marked away while theirs lived: its NATS connection was away when
        ours asked): here, unless the command is itself the gateway's word."""
        if self.gone or self.frozen or self.hosted.finished:
            return  # (being handed over: the mark stays, should the game thaw here)
        self.marked_away.discard(player)
        if isinstance(action, dict) and action.get("type") in ("reconnect", "leave"):
            return
        self._presence(player, "reconnect", "a gateway speaks for them")

    def _presence(self, player: str, kind: str, why: str) -> bool:
        seat = self.hosted.seat_of(player)
        if seat is None:
            return False
        try:
            out = self.hosted.apply(self.now_t(self.loop.time()), seat, {"type": kind},
                                    player=player, server_ms=wall_ms(), by="shard")
        except Exception:  # noqa: BLE001 - an engine bug: rebuild the game from its record
            log.exception("engine error on a presence input", extra={"game": self.game_id})
            self.engine_failed()
            return False
        if isinstance(out, Result):  # (e.g. a bot took the seat meanwhile)
            return False
        log.info("player marked %s", "away" if kind == "disconnect" else "back",
                 extra={"game": self.game_id, "seat": seat, "why": why})
        self.submit(out, None)
        return True

    async def _sync_later(self, msg: Msg, player: str | None, last: int, recent: int) -> None:
        await self.idle.wait()
        if self.gone:  # its last events may never have been durable here
            self.out.reply(msg, refusal("game_unavailable"))
        else:
            self.out.reply(msg, self.hosted.sync(player, last, wall_ms(),
                                                 self.now_t(self.loop.time()), recent))

    # ======================================================================
    # write-ahead, then publish
    # ======================================================================
    def submit(self, applied: Applied, msg: Msg | None, t0: float = 0.0) -> None:
        self.pending.append((applied, msg, t0))
        self.idle.clear()
        if not self.flushing:
            self.append_next()
        for ev in applied.result.events:
            if ev.type == "one_card_window":
                self.schedule_presses(ev.data)
        self.after_change()

    def append_next(self) -> None:
        """Append what waits to be durable as one record message, through
        the shard's group commit (:mod:`ttanjit.shard.commit`): sent with
        the shard's next publishes, :meth:`durable` called with the ack."""
        if not self.pending or self.gone:
            self.flushing = False
            if not self.pending:
                self.idle.set()
            if self.hosted.finished and not self.finalized and not self.gone:
                self.finalized = True
                self.shard.spawn(self.finalize())
            return
        self.flushing = True
        batch, self.pending = self.pending, []
        entries = [a.entry for a, _, _ in batch]
        doc = entries[0] if len(entries) == 1 else {"inputs": entries}
        self.msg_no += 1
        self.batch = batch
        self.batch_doc = doc
        self.batch_id = f"{self.game_id}:{self.epoch}:{self.msg_no}"
        self.batch_t0 = time.perf_counter()
        try:
            data = orjson.dumps(doc)
        except (TypeError, orjson.JSONEncodeError):  # (every input is checked before:
            # should one slip through, the game is rebuilt from its record
            # rather than never write or answer again)
            log.exception("record entry cannot be written", extra={"game": self.game_id})
            self.batch = []
            self.pending[:0] = batch
            self.flushing = False
            self.engine_failed()
            return
        self.shard.committer.append(self.shard.subj.record(self.game_id), data,
                                    self.last_seq, self.batch_id, self.durable)

    def durable(self, seq: int | None) -> None:
        """The ack of the append in flight (``None``: anything but a plain
        ack; the patient path decides)."""
        batch = self.batch
        if seq is None:
            self.shard.spawn(self._append_patiently())
            return
        self.batch = []
        self.last_seq = seq
        m.record_append.observe(time.perf_counter() - self.batch_t0)
        self.publish(batch)
        self.append_next()

    async def _append_patiently(self) -> None:
        """:func:`records.append` with the same message id: retries while
        the stream has no leader, tells our own landed attempt from fencing."""
        batch = self.batch
        try:
            seq = await records.append(self.shard.js, self.shard.subj.record(self.game_id),
                                       self.batch_doc, self.last_seq, self.batch_id,
                                       keys=self.shard.record_keys, skipped=m.skipped_at_append)
        except records.Fenced:  # an ownership loss, not a failure (the alert's: operator audit)
            m.losses.inc()
            log.warning("fenced: another shard owns the game", extra={"game": self.game_id})
            self.batch = []
            self.pending[:0] = batch
            self.flushing = False
            self.shard.drop(self, "fenced", reclaim=True)  # reclaimed only if still ours
            return
        except Exception:  # noqa: BLE001 - any failure (NATS away, no stream leader, a timeout) is handled alike
            m.record_append_failures.inc()
            log.exception("record append failed", extra={"game": self.game_id})
            self.batch = []
            self.pending[:0] = batch
            self.flushing = False
            # its unacknowledged inputs are gone (their commands get
            # game_unavailable); take the game back from its record
            self.shard.drop(self, "append failed", reclaim=True)
            return
        self.durable(seq)
        if self.out.queue:
            await self.out.send()

    def publish(self, batch: list[tuple[Applied, Msg | None, float]]) -> None:
        """Queue the burst of durable inputs (one message per gateway that
        serves players of the game, one for spectators; docs/protocol.md 2)
        and the replies to their commands. A part with no events (the
        player's own move changed only their own view, e.g. 줄줄이 벌점's
        ``select``) rides on the reply to that move instead: no message of
        its own."""
        subj, put = self.shard.subj, self.out.put
        parts: list[Part] = []
        for applied, _, _ in batch:
            parts.extend(applied.parts)
        own: dict[str, bytes] = {}
        via_gw = {a.entry.get("player"): a.via_gateway for a, _, _ in batch}
        if parts:
            gid = self.game_id
            by_gw: dict[str, list[Part]] = {}
            routes = self.routes
            merged = coalesce(parts)
            alone = Counter(p.pid for p in merged)
            for part in merged:
                pid = part.pid
                if pid is None:
                    put(subj.public(gid), envelope(gid, [part]))
                elif part.first > part.last and via_gw.get(pid) and alone[pid] == 1:
                    own[pid] = part_body(gid, part)
                elif (gw := routes.get(pid)) is None:  # not known yet (e.g. after a failover)
                    put(subj.player_events(pid), envelope(gid, [part]))
                else:
                    by_gw.setdefault(gw, []).append(part)
            burst = self.shard.link.burst
            for gw, mine in by_gw.items():
                data = envelope(gid, mine)
                if not burst(gw, data):  # no link from that gateway: over NATS
                    put(subj.gateway_games(gw), data)
        for applied, msg, t0 in batch:
            reply = applied.reply
            if reply is not None:
                key = (applied.entry["player"], applied.entry["cmd"])
                dups = self.inflight.pop(key, [])
                if msg is not None:
                    body = own.pop(key[0], None) if applied.via_gateway else None
                    self.out.reply(msg, reply if body is None else reply + b"\n" + body, t0)
                for dup in dups:
                    self.out.reply(dup, reply)

    async def finalize(self) -> None:
        """A finished game: result stream, directory, owner entry released.
        Tried again (each step is idempotent: the result's ``Nats-Msg-Id``)
        until it is done or the game is no longer served here — then its
        owner entry stays, and the shard that claims it next finds it
        finished and finalizes it. A result lost to a JetStream blip (a
        leader election) left the game unrated, its players seated in it at
        the matchmaker and its directory entry live."""
        shard = self.shard
        hosted = self.hosted
        if self.timer is not None:
            self.timer.cancel()
        gid = self.game_id
        delay = FINALIZE_RETRY_S
        while True:
            try:
                await shard.js.publish(shard.subj.result(hosted.setup.game),
                                       orjson.dumps(hosted.result_doc()),
                                       headers={records.MSG_ID: f"result:{gid}"})
                await shard.directory.put(gid, orjson.dumps(hosted.directory_entry()))
                await shard.owner_entries.remove(gid)  # no owner, and no marker left for ever
                break
            except Exception as exc:  # noqa: BLE001 - logged; tried again
                if self.gone or shard.stopping.is_set():
                    log.warning("finalize failed; the game's next owner finalizes it: %r", exc,
                                extra={"game": gid})
                    return
                log.warning("finalize failed, tried again: %r", exc, extra={"game": gid})
            await asyncio.sleep(delay)
            delay = min(delay * 2, FINALIZE_RETRY_MAX_S)
        ended_by = hosted.engine.result().get("ended_by")
        if ended_by == ABANDONED:  # RULES.md 4: every human away 10 min
            m.games_abandoned.labels(hosted.setup.game).inc()
        log.info("game finished", extra={"game": gid, "inputs": hosted.inputs,
                                          "ended_by": ended_by})
        shard.gauges()

        def forget() -> None:
            if shard.rooms.get(gid) is self:
                shard.drop(self, "finished")
        self.forget = self.loop.call_later(FINISHED_KEEP_S, forget)

    # ======================================================================
    # handover (the shard drains)
    # ======================================================================
    async def freeze(self, target: str) -> bool:
        """Stop the game here and append the handover marker (with the exact t)."""
        self.frozen = True
        # game time stands still while frozen: served here again (not taken),
        # the game goes on from here, not charged the handover's wait
        self.frozen_t = self.now_t(self.loop.time())
        for sub in self.subs:
            await sub.unsubscribe()
        self.subs = []
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        for task in list(self.bots.values()):
            task.cancel()
        self.bots.clear()
        # inputs already accepted become durable first (asyncio.wait, not
        # wait_for: Python 3.11's wait_for swallows a cancellation that meets
        # an already set event, and the drain cancels this when it stops)
        idle = asyncio.ensure_future(self.idle.wait())
        try:
            done, _ = await asyncio.wait({idle}, timeout=5.0)
        finally:
            idle.cancel()
        if not done:
            self.thaw()
            return False
        if self.gone:
            return False
        t = self.frozen_t = self.now_t(self.loop.time())  # (the taker goes on from it)
        self.msg_no += 1
        marker = asyncio.ensure_future(records.append(
            self.shard.js, self.shard.subj.record(self.game_id),
            {"handover": {"from": self.shard.id, "to": target, "t": t}}, self.last_seq,
            f"{self.game_id}:{self.epoch}:{self.msg_no}", keys=self.shard.record_keys,
            skipped=m.skipped_at_append))
        try:
            self.last_seq = await asyncio.shield(marker)
        except asyncio.CancelledError:
            # the drain stopped with the marker in flight: it may still land,
            # so thaw() waits for it before the game appends again
            self.marker = marker
            raise
        except Exception:  # noqa: BLE001 - fenced or NATS trouble: keep serving it here
            log.exception("handover marker failed", extra={"game": self.game_id})
            self.thaw()
            return False
        return True

    def thaw(self) -> None:
        """Serve a game again that was not handed over after all (once a
        handover marker still in flight has landed or failed: its sequence is
        the one the game's next append must follow)."""
        marker, self.marker = self.marker, None
        if marker is not None and not marker.done():
            marker.add_done_callback(self._thaw_after)
        else:
            self._thaw_after(marker)

    def _thaw_after(self, marker: asyncio.Future[int] | None) -> None:
        if marker is not None and not marker.cancelled() and marker.exception() is None:
            self.last_seq = marker.result()
        self.frozen = False
        # the clocks go on from where the freeze stopped them: a handover
        # that nobody took (a target that never answered) charged its whole
        # wait to the players' turn timers, which then fired at once
        self.t_base, self.mono_base = self.frozen_t, self.loop.time()
        if self.gone:
            return

        async def resub() -> None:
            await self.subscribe()
            # a One Card window still open: the bots' presses due while the
            # game was frozen were not made (press)
            self.press_open_window()
            self.after_change()
        self.shard.spawn(resub())

    # ======================================================================
    # the clock: one timer at the engine's next deadline
    # ======================================================================
    def after_change(self) -> None:
        if self.gone:
            return
        paused = self.hosted.engine.presence.paused
        if self.paused and not paused:
            # a human is back: a One Card window the pause held open is
            # pressed now (the presses due meanwhile were not made: press)
            self.press_open_window()
        self.paused = paused
        self.schedule_bots()
        self.arm()

    def arm(self) -> None:
        eng = self.hosted.engine
        nd = None if eng.finished else eng.next_deadline()
        if nd is None:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            return
        if not self.hosted.has_active_humans() and not self.bots:
            # bot-only game: played out at once; nobody can act until the
            # deadline, so its clock jumps there
            now_t = self.now_t(self.loop.time())
            if nd > now_t:
                self.t_base += nd - now_t
        due = self.mono_base + (nd - self.t_base) / 1000
        if self.timer is not None:
            if abs(self.timer_due - due) < 0.0005:
                return
            self.timer.cancel()
        self.timer_due = due
        self.timer = self.loop.call_at(due, self.fire, nd)

    def fire(self, nd: int) -> None:
        self.timer = None
        if self.gone:
            return
        mono = self.loop.time()
        m.timer_lag.observe(max(0.0, mono - self.timer_due))
        t = max(self.now_t(mono), nd)
        try:
            out = self.hosted.apply(t, server_ms=wall_ms())
        except Exception:  # noqa: BLE001 - an engine bug: rebuild the game from its record
            log.exception("engine error on a clock input", extra={"game": self.game_id})
            self.engine_failed()
            return
        if isinstance(out, Result):  # cannot happen for a clock input; keep going
            log.error("clock input refused", extra={"game": self.game_id, "code": out.code})
            return
        self.submit(out, None)

    # ======================================================================
    # bot seats (RULES.md 4) and their [원카드!] presses (RULES.md 1.7)
    # ======================================================================
    def schedule_bots(self) -> None:
        hosted = self.hosted
        if hosted.finished:
            return
        for seat in hosted.driven_seats():
            if seat in self.bots or not self._has_bot_action(seat):
                continue
            self.bots[seat] = self.shard.spawn(self.bot_turn(seat))

    def _has_bot_action(self, seat: int) -> bool:
        eng = self.hosted.engine
        if eng.presence.paused:
            # every human is away (RULES.md 4): the game waits for them, its
            # bots too, in all three games (One Card's engine refuses a
            # paused game's actions; the other two would take them)
            return False
        acts = eng.legal_actions(seat)
        return any(a.get("type") not in SKIP_FOR_BOTS for a in acts)

    def _bot_must_act(self, seat: int) -> bool:
        """The shard plays ``seat`` and it has a game action to take now."""
        hosted = self.hosted
        if self.gone or self.frozen or hosted.finished or seat not in hosted.driven_seats():
            return False
        return self._has_bot_action(seat)

    async def bot_turn(self, seat: int) -> None:
        """Ask the bot pool for ``seat``'s action and apply it (same
        validation as a human's command); ask again while the seat still has
        to act and the game is still ours (worker lost, NATS away)."""
        from ttanjit.bots import timing

        hosted = self.hosted
        version = hosted.version
        try:
            level = hosted.level_of(seat)
            # the same on every ask and after a failover (docs/protocol.md 3)
            seed = hosted.bot_seed(seat)
            # (none before completing a choice already made: a bot's 줄줄이
            # 벌점 pick waited twice, for its select and for its confirm,
            # 1.2-3.6 s; solo-player audit)
            if hosted.has_active_humans() and not hosted.engine.choice_made(seat):
                # The pause counts from the game's last input: after a
                # failover (the game already stood still for seconds) the
                # bot does not make the players wait a second time.
                waited = max(0, wall_ms() - hosted.last_ms) if hosted.last_ms else 0
                pause = timing.thinking_ms(level, seed) - waited
                if pause > 0:
                    await asyncio.sleep(pause / 1000)
                if self.gone or hosted.finished:
                    return
            version = hosted.version
            auto = hosted.on_autopilot(seat)
            reply = await self._ask_bot(seat, level, version, seed)
            if reply is None or self.gone or hosted.finished:
                return
            if not self._bot_must_act(seat) or hosted.on_autopilot(seat) != auto:
                return  # the seat changed while the bot thought: the human pressed
                # [직접 하기], say (its reply was for a seat no longer the bot's)
            action = reply.get("action") if isinstance(reply, dict) else None
            if not isinstance(action, dict) or not recordable(hosted.engine, action):
                # checked as a player's command is: a reply nested past the
                # record's depth could not be written, and stopped the game
                log.warning("bot reply refused", extra={"game": self.game_id, "seat": seat})
                return
            if auto:
                action = {**action, "auto": True}
            try:
                out = hosted.apply(self.now_t(self.loop.time()), seat, action,
                                   server_ms=wall_ms(), by="bot")
            except Exception:  # noqa: BLE001 - an engine bug: rebuild the game from its record
                log.exception("engine error on a bot action", extra={"game": self.game_id})
                self.engine_failed()
                return
            if isinstance(out, Result):
                log.debug("bot action refused", extra={"game": self.game_id, "seat": seat,
                                                       "code": out.code})
                return
            if self.bots.get(seat) is asyncio.current_task():
                del self.bots[seat]
            self.submit(out, None)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - e.g. a malformed reply: logged, the turn timer acts
            log.exception("bot turn failed", extra={"game": self.game_id, "seat": seat})
        finally:
            if self.bots.get(seat) is asyncio.current_task():
                del self.bots[seat]
                if not self.gone:
                    if hosted.version != version:
                        self.after_change()
                    elif not self.bots:
                        self.arm()

    async def _ask_bot(self, seat: int, level: str, version: int, seed: int) -> JSON | None:
        """The bot pool's reply for ``seat`` (None: give up — the seat no
        longer has to act, the game left this shard, or a bot-only game has
        no worker to ask: its own timeout rule acts)."""
        shard, hosted = self.shard, self.hosted
        game = hosted.setup.game
        rng = (seed * 2654435761 + 1) & 0x7FFFFFFF  # same request every time it is asked
        pause, lost_worker = 0.1, False
        no_worker_since: float | None = None
        while True:
            if (shard.rooms.get(self.game_id) is not self or hosted.version != version
                    or not self._bot_must_act(seat)):
                return None
            if not shard.nc.is_connected:
                await shard.nats_back_wait(RETRY_MAX_S)
                continue
            eng = hosted.engine
            nd = eng.next_deadline()
            budget = shard.cfg.bot_budget_ms
            if nd is not None and hosted.has_active_humans():
                now_t = self.now_t(self.loop.time())
                budget = max(50, min(budget, nd - now_t - 100))
            req = {"game": game, "level": level, "seat": seat, "view": eng.view(seat),
                   "budget_ms": budget, "rng": rng}
            t0 = time.perf_counter()
            try:
                msg = await self._hedged_request(orjson.dumps(req),
                                                 budget / 1000 + ASK_MARGIN_S)
            except NoRespondersError:
                m.bot_timeouts.labels(game).inc()
                now = self.loop.time()
                no_worker_since = now if no_worker_since is None else no_worker_since
                if not hosted.has_active_humans():
                    # bot-only: its clock waits for us. Wait for a worker
                    # only when one was lost just now (or NATS came back).
                    recent = lost_worker or now - shard.nats_back_at < NO_WORKER_GRACE_S
                    if not recent or now - no_worker_since > NO_WORKER_GRACE_S:
                        return None
                await shard.nats_back_wait(pause)
                pause = min(pause * 2, RETRY_MAX_S)
                continue
            except (TimeoutError, NatsTimeout, ConnectionClosedError) as exc:
                # the worker died mid-decision, or NATS went away: ask again
                m.bot_timeouts.labels(game).inc()
                lost_worker = True
                log.info("bot decision lost: asking again",
                         extra={"game": self.game_id, "seat": seat, "error": repr(exc)})
                await shard.nats_back_wait(0.05)
                continue
            except Exception as exc:  # noqa: BLE001 - e.g. reconnecting: wait for NATS
                m.bot_timeouts.labels(game).inc()
                log.info("bot request failed: asking again",
                         extra={"game": self.game_id, "seat": seat, "error": repr(exc)})
                await shard.nats_back_wait(pause)
                pause = min(pause * 2, RETRY_MAX_S)
                continue
            m.bot_request.labels(game).observe(time.perf_counter() - t0)
            reply = orjson.loads(msg.data)
            return reply if isinstance(reply, dict) else None

    async def _hedged_request(self, data: bytes, timeout: float) -> Msg:
        """One bot request; when no reply came within ``HEDGE_S`` (a worker
        lost with the request, e.g. its NATS server went away) the same
        request again, the first reply winning. Decisions take 50-200 ms
        (``ttanjit.bots.worker.LEVEL_CAP_MS``), so this is rare when healthy."""
        nc, subject = self.shard.nc, self.shard.subj.bots_decide
        tasks = {asyncio.ensure_future(nc.request(subject, data, timeout=timeout))}
        try:
            done, _ = await asyncio.wait(tasks, timeout=min(HEDGE_S, timeout))
            if not done:
                tasks.add(asyncio.ensure_future(nc.request(subject, data, timeout=timeout)))
            # the first to finish decides: a reply, or an error (a timeout or
            # no responders: the caller asks again at once, a fresh pair)
            done, tasks = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.exception() is None:
                    return task.result()
            raise next(iter(done)).exception()  # type: ignore[misc]
        finally:
            for task in tasks:  # the requests live no longer than this call
                task.cancel()

    def schedule_presses(self, window: JSON) -> None:
        """RULES 1.7 / 4: bot-played seats press [원카드!] after their
        reaction delay (``ttanjit.bots.timing``), only while that window is
        still open (bots never make false calls). In bot-only games (played
        out at once, no real time) nobody presses: windows expire."""
        from ttanjit.bots import timing

        hosted = self.hosted
        if not hosted.has_active_humans():
            return
        for seat in hosted.driven_seats():
            old = self.windows.pop(seat, None)
            if old is not None:
                old.cancel()
            seed = hosted.bot_seed(seat, 1)
            delay = timing.press_delay_ms(hosted.level_of(seat), seed)
            if delay is None:
                continue
            self.windows[seat] = self.loop.call_later(delay / 1000, self.press, seat,
                                                      dict(window))

    def press(self, seat: int, window: JSON) -> None:
        self.windows.pop(seat, None)
        hosted = self.hosted
        if self.gone or self.frozen or hosted.finished:
            return
        if hosted.engine.presence.paused:
            return  # every human away: pressed when one is back (after_change)
        now = hosted.engine.view(seat).get("window")
        if not isinstance(now, dict) or now.get("holder") != window.get("holder") or now.get(
                "closes_at") != window.get("closes_at"):
            return  # closed (or another window): no false calls
        if seat not in hosted.driven_seats():
            return
        action: JSON = {"type": "one_card"}
        if hosted.on_autopilot(seat):
            action["auto"] = True
        try:
            out = hosted.apply(self.now_t(self.loop.time()), seat, action, server_ms=wall_ms(),
                               by="bot")
        except Exception:  # noqa: BLE001 - an engine bug: rebuild the game from its record
            log.exception("engine error on a press", extra={"game": self.game_id})
            self.engine_failed()
            return
        if not isinstance(out, Result):
            self.submit(out, None)
