"""One player's WebSocket connection: frames in, frames out, the player's
NATS subscription (game events, lobby notifications, take-over requests).

The transport is anything with the small :class:`Transport` protocol (the
ASGI WebSocket in ``app``); what the connection needs from its gateway is
the :class:`GatewayLink` protocol (``app.Gateway`` in the process, a fake in
tests/unit/test_gateway_connection.py). Frames are handled one at a time in
arrival order; server frames are numbered and sent under one lock, so
``seq`` on the wire is always increasing.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import grpc
import orjson

from ttanjit.common.grpcutil import opened_md
from ttanjit.games.base import flat_object
from ttanjit.gateway import codec
from ttanjit.gateway import metrics as m
from ttanjit.gateway.auth import Identity, Tokens
from ttanjit.gateway.errors import FrameError
from ttanjit.gateway.limits import (
    EMOTE_BURST,
    EMOTE_RATE,
    EMOTES,
    MAX_FRAME,
    Attempts,
    TokenBucket,
)
from ttanjit.gateway.session import RESUME_AHEAD, Session, match_of, new_session_id
from ttanjit.matchmaker.options import check_seats
from ttanjit.v1 import matchmaker_pb2, matchmaker_pb2_grpc

# a lobby call rides out a matchmaker failover (a new leader in ~2.5 s)
LOBBY_TIMEOUT_S = 10
# a close waits this long for a frame being written (Connection.close)
CLOSE_WAIT_S = 2.0

log = logging.getLogger("ttanjit.gateway")

PRESENCE = ("disconnect", "reconnect")
# flags of a burst part (ttanjit.shard.game): what the gateway acts on
# without reading the part
F_GAME_OVER, F_SEAT_AWAY, F_SEAT_BOT = 1, 2, 4
# a game burst part: (game id, first game_seq, last game_seq, flags, body)
PartT = tuple[str, int, int, int, bytes]
OWN_PART = "_part"  # a command reply's key for the player's own view-only part
# an inbox entry's ``first`` (no part has one below 1): ask the shard for what
# the player lacks, in turn with the parts (Connection.catch_up)
CATCH_UP = -1


def burst_parts(data: bytes) -> list[tuple[str | None, PartT]]:
    """A shard's burst message (docs/protocol.md 2) as ``(player, part)``
    pairs (player None: the spectators'); the part bodies stay unparsed."""
    lines = data.split(b"\n")
    meta = orjson.loads(lines[0])
    gid = str(meta["g"])
    return [(pid, (gid, first, last, flags, lines[i]))
            for i, (pid, first, last, flags) in enumerate(meta["p"], 1)]


def now_ms() -> int:
    return int(time.time() * 1000)


class _Named:
    """A stub whose calls all carry ``md`` (Connection.mm)."""

    def __init__(self, stub: Any, md: tuple[tuple[str, str], ...]) -> None:
        self._stub, self._md = stub, md

    def __getattr__(self, name: str) -> Any:
        call = getattr(self._stub, name)

        def named(request: Any, **kw: Any) -> Any:
            return call(request, metadata=(*kw.pop("metadata", ()), *self._md), **kw)
        return named


# ``hello`` found the matchmaker unanswered: asked again after these waits
# (about a minute in all: a room seat waits 60 s, RULES.md 4)
LOBBY_LATER_S = (0.5, 1.0, 2.0) + (3.0,) * 19
# an ``Away`` the matchmaker did not answer: told again after these waits
AWAY_LATER_S = LOBBY_LATER_S
# a game the lobby says the player sits in: its ``matched`` may be on its way
MATCHED_WAIT_S = 2.0
# the player's own lobby requests (Connection.lobby_changes)
LOBBY_REQUESTS = frozenset({"queue", "cancel_queue", "room_create", "room_join", "room_leave",
                            "room_options", "room_add_bot", "room_remove_bot", "room_start"})
# frames a handler answers by asking the matchmaker: in turn among themselves,
# beside the connection's other frames (Connection.on_frame). Its calls wait
# up to 10 s on a leader change (a room's start 20 s), and the web client
# takes 5 s without a word for a lost connection: they held its pongs (and
# moves) behind them, and a re-queue then dropped the tab every few seconds.
# A game frame is handled in place (no task per move): a command gives up
# within 5.5 s (Gateway.command), the client's ping after it then answered
MATCHMAKER_CALLS = LOBBY_REQUESTS | {"rematch", "rematch_decline", "rematch_state", "ratings"}
# matchmaker calls waiting their turn at most (a flood meanwhile: rate_limited)
LANE_MAX = 8
# what an error's `ref` may echo of the frame's `type` (docs/websocket.md 1)
_REF = re.compile(r"[a-z][a-z0-9_]{0,31}")
Handler = Callable[["Connection", dict[str, Any]], Awaitable[None]]


def lobby_part(state: dict[str, Any]) -> dict[str, Any]:
    """``room?`` and ``queued?`` of a matchmaker ``GetPlayer`` answer
    (``welcome``, ``lobby``)."""
    out: dict[str, Any] = {}
    if state.get("room"):
        out["room"] = codec.whole_numbers(state["room"])
    if state.get("queued_game"):  # e.g. queued in the tab this one replaced
        out["queued"] = {"game": state["queued_game"], "seats": int(state.get("queued_seats") or 0)}
    return out


class Transport(Protocol):
    """``write_now`` (optional): write one frame at once, without awaiting;
    False when it cannot (then ``send_text``/``send_bytes``)."""

    async def send_text(self, data: str) -> None: ...
    async def send_bytes(self, data: bytes) -> None: ...
    async def close(self, code: int, reason: str) -> None: ...
    # optional: ``abort()`` drops the socket at once (a client that does not read)


class GatewayLink(Protocol):
    """What a :class:`Connection` needs from its gateway (``app.Gateway``):
    tokens, the matchmaker, the shard calls, sessions, and the player's
    NATS subjects. Nothing else of the gateway is reached from here."""

    id: str  # this gateway's id: the shards' route, named on lobby calls
    tokens: Tokens  # sign-in tokens (hello)
    mm: matchmaker_pb2_grpc.MatchmakerStub  # lobby calls
    limits: dict[str, float]  # the welcome's (limits.limits_json)
    room_codes: Attempts  # wrong room codes still to try, per player (limits.ROOM_CODE_*)

    def register(self, conn: Connection) -> None: ...
    def unregister(self, conn: Connection) -> None: ...
    async def take_over(self, player: str, new: Connection) -> Session | None: ...
    async def announce_live(self, player: str, data: bytes) -> None: ...
    async def save(self, s: Session, pointer: bool = True) -> None: ...
    async def command(self, game_id: str, player: str, cmd_id: str, action: dict[str, Any],
                      total_s: float = 5.0) -> dict[str, Any]: ...
    async def sync(self, s: Session, last_seq: int | None) -> dict[str, Any] | None: ...
    async def player_state(self, player: str, opened_ms: int = 0) -> dict[str, Any] | None: ...
    async def final_frame(self, game_id: str, player: str) -> dict[str, Any] | None: ...
    async def game_lives(self, game_id: str) -> bool: ...
    async def seated_match(self, game_id: str) -> dict[str, Any] | None: ...
    async def nickname(self, player: str) -> str | None: ...
    async def family_stands(self, ident: Identity) -> bool | None: ...
    def recheck_later(self, conn: Connection) -> None: ...
    def admits(self, conn: Connection, player: str) -> bool: ...
    def entered(self, conn: Connection) -> None: ...
    async def subscribe_player(self, player: str,
                               cb: Callable[[Any], Awaitable[None]]) -> Any: ...
    async def table_players(self, game_id: str) -> list[str]: ...
    async def publish_lobby(self, player: str, data: bytes) -> None: ...
    async def publish_emote(self, game_id: str, data: bytes) -> None: ...


# Called by Connection.finish before the session is saved (spectate.stop joins here).
ON_FINISH: list[Callable[[Connection], Awaitable[None]]] = []
# Called once a connection has its game's view (matched, hello): spectate.follow_own.
ON_GAME: list[Callable[[Connection, str], Awaitable[None]]] = []


class Superseded(Exception):
    """The player's connection that answered our hello's kick was opened
    after ours: it stays, ours goes (``Connection.on_kick``)."""


class Connection:
    def __init__(self, gw: GatewayLink, transport: Transport, proto: bool,
                 opened_ms: int | None = None) -> None:
        self.gw = gw
        self.t = transport
        self.proto = proto
        self.id = secrets.token_hex(8)
        self.session: Session | None = None
        self.finished_game = False
        now = time.monotonic()
        self.bucket = TokenBucket(last=now)
        self.answers = TokenBucket(last=now)  # answers to dropped actions
        # lobby requests made and lobby frames heard: a late ``lobby`` (lobby_later)
        # from an answer older than one of them is not sent
        self.lobby_changes = 0
        self.emotes = TokenBucket(EMOTE_RATE, EMOTE_BURST, EMOTE_BURST, now)
        self._table: tuple[str, list[str]] = ("", [])  # (game id, its players) for emotes
        self.opened = now
        # (wall ms, id): of two connections of one player, the one opened
        # later stays (on_kick) — a tab's newest socket, whatever order the
        # hellos of its older ones are handled in. ``opened_ms``: when the
        # socket's upgrade request came (before the accept was sent)
        self.opened_at: tuple[int, str] = (opened_ms or now_ms(), self.id)
        self.family = ""  # the refresh family its hello's token came from (app.on_family)
        self.gone = False  # its client closed the socket (app.websocket)
        self.superseded = False  # closed for a later-opened one: saves nothing
        self.last_rx = now
        self.lock = asyncio.Lock()
        self.closed = False
        self.replaced = False
        self.buffer: list[PartT] | None = None  # burst parts held during a catch-up
        self.inbox: deque[PartT] = deque()  # parts waiting for the slow path, in order
        self._pump: asyncio.Task[None] | None = None
        self._write_now: Callable[[bytes, bool], bool] | None = getattr(
            transport, "write_now", None)
        self.sub: Any = None
        self._finishing: asyncio.Future[None] | None = None
        self.lane: deque[dict[str, Any]] = deque()  # matchmaker calls waiting their turn
        self._lane_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- sending ---------------------------------------------------------------
    def _emit_now(self, frame: dict[str, Any], game_seq: int | None, view: bool) -> bool:
        """Number and write a frame at once (no await: nothing can come
        between numbering and writing); False when it must wait for the lock
        or the socket."""
        if self.lock.locked() or self._write_now is None or self.closed:
            return False
        s = self.session
        seq = s.seq + 1 if s is not None else 0
        frame["seq"] = seq
        frame["server_ms"] = now_ms()
        data = codec.encode_proto(frame) if self.proto else orjson.dumps(frame)
        if not self._write_now(data, self.proto):
            return False
        if s is not None:
            s.seq = seq
            if game_seq is not None:
                (s.view_sent if view else s.event_sent)(seq, game_seq)
        m.frame_out(frame["type"])
        return True

    async def send(self, frame: dict[str, Any], game_seq: int | None = None,
                   view: bool = False) -> None:
        if self._emit_now(frame, game_seq, view):
            return
        async with self.lock:
            if self.closed:
                return
            s = self.session
            seq = s.next_seq() if s is not None else 0
            frame["seq"] = seq
            frame["server_ms"] = now_ms()
            if s is not None and game_seq is not None:
                (s.view_sent if view else s.event_sent)(seq, game_seq)
            try:
                if self.proto:
                    await self.t.send_bytes(codec.encode_proto(frame))
                else:
                    await self.t.send_text(codec.encode_json(frame))
            except Exception:  # the socket went away under us
                self.closed = True
                return
        m.frame_out(frame["type"])

    async def refuse_full(self) -> None:
        """The gateway holds its most players (TTANJIT_MAX_CONNECTIONS): said
        (``server_full``) and closed with 1013, try again later
        (docs/websocket.md 5)."""
        m.REFUSED_FULL.inc()
        await self.reject("server_full", "hello")
        await self.close(1013, "server_full")

    async def reject(self, code: str, ref: str | None = None, cmd_id: Any = None,
                     message: str | None = None, game_id: str | None = None) -> None:
        m.REJECTIONS.labels(code).inc()
        frame: dict[str, Any] = {"type": "error", "code": code,
                                 "message": message or FrameError(code).message}
        # the type of the frame answered — a name, not whatever a client
        # put there (an unknown type's control characters and 200 bytes
        # came back: fuzz finding)
        if ref and _REF.fullmatch(ref):
            frame["ref"] = ref
        if isinstance(cmd_id, str) and cmd_id:
            frame["cmd_id"] = cmd_id
        if game_id:
            frame["game_id"] = game_id
        await self.send(frame)

    # -- receiving -------------------------------------------------------------
    async def on_frame(self, data: str | bytes) -> None:
        now = time.monotonic()
        self.last_rx = now
        size = len(data)
        if size > MAX_FRAME // 4 and isinstance(data, str):
            size = len(data.encode())
        if size > MAX_FRAME:
            m.frame_in("too_large")
            await self.reject("frame_too_large")
            return
        if not self.bucket.allow(now):
            m.frame_in("rate_limited")
            # a dropped action is answered (its sender waits for it), up to
            # the rate of frames itself: a flood that never reads must not
            # make the gateway write (and hold) an answer per frame
            cmd_id = codec.dropped_action(data, self.proto) \
                if self.session is not None and self.answers.allow(now) else None
            if cmd_id is not None:
                await self.reject("rate_limited", "action", cmd_id)
            elif self.bucket.should_warn(now):
                await self.reject("rate_limited")
            else:
                m.REJECTIONS.labels("rate_limited").inc()
            return
        try:
            if self.proto:
                if isinstance(data, str):
                    raise FrameError("bad_frame")
                frame = codec.decode_proto(data)
            else:
                frame = codec.decode_json(data)
        except FrameError as e:
            m.frame_in("bad")
            await self.reject(e.code, e.ref, e.cmd_id)
            return
        kind = frame["type"]
        handler = HANDLERS.get(kind)
        m.frame_in(kind if handler is not None else "unknown")
        if kind in MATCHMAKER_CALLS and self.session is not None:
            if len(self.lane) >= LANE_MAX:
                await self.reject("rate_limited", kind)
                return
            if kind in LOBBY_REQUESTS:
                self.lobby_changes += 1
            self.lane.append(frame)
            if self._lane_task is None:
                self._lane_task = asyncio.create_task(self._run_lane())
            return
        await self._handle(kind, handler, frame)

    async def _run_lane(self) -> None:
        """The matchmaker calls, one after another in the order they came;
        those of a connection another one took over are dropped (its tab is
        no longer the player's: an old tab's 취소 after the new one's queue,
        or a 로비로 saving the session it handed over: review finding)."""
        try:
            while self.lane:
                frame = self.lane.popleft()
                if self.replaced or self.superseded:
                    self.lane.clear()
                    break
                await self._handle(frame["type"], HANDLERS[frame["type"]], frame)
        finally:
            self._lane_task = None

    async def settle(self) -> None:
        """Every frame the socket brought handled (its matchmaker calls
        too), before the connection's end is told: an ``Away`` after the
        ``queue`` sent before it, as when frames were handled one by one."""
        while self._lane_task is not None:
            await asyncio.shield(self._lane_task)

    async def _handle(self, kind: str, handler: Handler | None, frame: dict[str, Any]) -> None:
        """One frame's handler; whatever it raises costs that frame only."""
        try:
            if handler is None:
                raise FrameError("unknown_type")
            if self.session is None and kind != "hello":
                raise FrameError("unauthenticated")
            await handler(self, frame)
        except FrameError as e:
            # a sync's refusal names the game it asked for (a client holding
            # another game by then must not take it for that one's: review)
            gid = frame.get("game_id") if kind == "sync" else e.game_id
            await self.reject(e.code, kind, frame.get("cmd_id"),
                              game_id=gid if codec.is_game_id(gid) else None)
        except grpc.aio.AioRpcError:
            await self.reject("matchmaker_unavailable", kind)
        except Exception:  # a bug must cost one frame, never the connection
            log.exception("frame %s failed", kind)
            await self.reject("internal_error", kind, frame.get("cmd_id"))

    # -- hello / resume --------------------------------------------------------
    async def h_hello(self, f: dict[str, Any]) -> None:
        if self.session is not None:
            raise FrameError("already_hello")
        ident = self.gw.tokens.verify(f.get("token"), now_ms())
        stands = await self.gw.family_stands(ident)
        if stands is False:  # signed out of (or revoked) since
            raise FrameError("bad_token")
        if stands is None:  # JetStream did not answer: let in, and asked again
            self.gw.recheck_later(self)
        if not self.gw.admits(self, ident.player):
            # at its most players (a reconnect herd, too few gateways): said
            # and closed with "try again later" before the hello's work —
            # the client comes back in a few seconds, to this gateway or
            # another (a browser cannot read a refused upgrade's status, so
            # the socket is accepted to say it)
            await self.refuse_full()
            return
        self.family = ident.family
        # the nickname as last set on any device (a token keeps the one it
        # was issued with, for up to an hour)
        nickname = await self.gw.nickname(ident.player) or ident.nickname
        if self.closed or self.gone:
            # the socket went while the hello waited (its client gave up, or
            # its family was removed: 4004): no taking the player over from
            # their other device for a socket nobody reads (second review)
            return
        try:
            prior = await self.gw.take_over(ident.player, self)
        except Superseded:  # a later-opened connection of the player is live
            self.superseded = self.replaced = True
            await self.close(4001, "replaced")
            return
        resume = f.get("resume") or {}
        last_seq = int(resume.get("last_seq") or 0)
        # a client may be ahead of the session as last saved (its gateway
        # crashed: the checkpoint is up to 30 s old), not arbitrarily far (a
        # last_seq of 2^32-1 numbered every later frame past what protobuf
        # holds and dropped the socket)
        resumed = bool(resume) and prior is not None and prior.id == resume.get("session") \
            and prior.player == ident.player and prior.resumable(now_ms()) \
            and 0 <= last_seq <= prior.seq + RESUME_AHEAD
        if resumed:
            assert prior is not None
            sess = prior
            sess.nickname = nickname
            from_game_seq = sess.game_seq_at(last_seq)
            sess.rewind(last_seq, from_game_seq)
            sess.closed_ms = None
        else:
            if resume:
                m.RESUMES.labels("failed").inc()
            sess = Session(new_session_id(), ident.player, nickname)
            if prior is not None:
                sess.left = prior.left
            if prior is not None and prior.game_id and prior.game_id != prior.left:
                sess.new_game(prior.game_id, prior.seat, prior.match)
            from_game_seq = None
        self.session = sess
        self.gw.register(self)
        self.buffer = []
        await self.subscribe()
        # a hello of the player on another socket at the same moment found
        # no connection to kick (neither listened yet): say we listen now;
        # of the two, the one opened later stays (on_kick)
        await self.gw.announce_live(ident.player, self._opened_json())
        state = await self.gw.player_state(ident.player, self.opened_at[0])
        if state and state.get("game_id") and state["game_id"] not in (sess.game_id, sess.left):
            # seated while away (e.g. the room started): take up that game,
            # with who sits where from the game directory
            sess.new_game(state["game_id"], state.get("seat"),
                          await self.gw.seated_match(state["game_id"]))
            from_game_seq = None
        catch_up = await self.gw.sync(sess, from_game_seq) if sess.game_id else None
        final = None
        if catch_up is None and sess.game_id:
            # the game is gone from its shard (finished over 30 s ago): how it
            # ended comes from the game directory (RULES.md 4, abandonment too).
            # A game its directory still says is live (or JetStream cannot
            # say) is kept: its shard is failing over, or JetStream electing a
            # leader — its bursts come when it is served again, and a sync or
            # a move finds it then (it was dropped, and the player sent to the
            # lobby from a live game, its seat left to a bot after 60 s)
            final = await self.gw.final_frame(sess.game_id, sess.player)
            if final is not None or not await self.gw.game_lives(sess.game_id):
                sess.left_game()
        result = ""
        if resumed:
            result = "resync" if catch_up is not None and "events" not in catch_up else "gapless"
            m.RESUMES.labels(result).inc()
        welcome: dict[str, Any] = {
            "type": "welcome", "session": sess.id, "player": ident.player,
            "nickname": nickname, "resumed": resumed, "limits": dict(self.gw.limits),
            "ratings": list(state["ratings"]) if state else [],
        }
        if result:
            welcome["resume_result"] = result
        if sess.game_id:
            welcome["game_id"] = sess.game_id
            if sess.seat is not None:
                welcome["seat"] = sess.seat
            if ((catch_up or {}).get("view") or {}).get("finished"):
                welcome["finished"] = True  # over: its end follows; no screen is taken for it
            if sess.match:  # who sits where, for a tab or device that never saw `matched`
                welcome.update(sess.match)
        if state is not None:  # room? and queued? are the matchmaker's word
            welcome["lobby_known"] = True
            welcome.update(lobby_part(state))
        await self.send(welcome)
        m.HELLO.observe(time.monotonic() - self.opened)
        if catch_up is not None:
            await self.deliver_catch_up(catch_up)
        elif final is not None:
            await self.send(final)
        await self.flush_buffer()
        if sess.game_id:
            self._on_game(sess.game_id)
        if self.superseded:  # a later-opened connection took over meanwhile: its session counts
            return
        if sess.game_id and not self.finished_game:
            await self.gw.command(sess.game_id, sess.player, "gw-" + secrets.token_hex(6),
                                  {"type": "reconnect"})
        await self.gw.save(sess)
        if state is None:
            self._spawn(self.lobby_later(ident.player))

    async def lobby_later(self, player: str, waits: tuple[float, ...] = LOBBY_LATER_S) -> None:
        """The matchmaker did not answer ``hello`` (a leader change, up to
        a few seconds): ask again until it does. Its answer is the player's
        "back" (it ends the away mark that would let them go from their room
        60 s after they dropped, connected, without a word: audit finding),
        and the client gets its room and queue as they are now (``lobby``).
        Seated in a game meanwhile (a room started while away), the
        connection is closed for the client to resume: its ``hello`` takes
        the game up."""
        for wait in waits:
            await asyncio.sleep(wait * random.uniform(0.8, 1.2))  # not all sockets at once
            s = self.session
            if self.closed or self.superseded or s is None:
                return
            changes = self.lobby_changes
            state = await self.gw.player_state(player, self.opened_at[0])
            if self.closed:
                if not (self.replaced or self.superseded):
                    # this connection's end came while the lobby was asked
                    # (answered or not: it may have been carried out, taking
                    # the away mark that end set): its Away again, after it
                    await self.away(player)
                return
            if self.superseded:
                return
            if state is None:
                continue
            gid = state.get("game_id")
            if gid and gid not in (s.game_id, s.left):
                # seated in a game: its `matched` may be on its way (the
                # lobby seats before it tells); if not, resume to find it
                await asyncio.sleep(MATCHED_WAIT_S)
                if not self.closed and gid not in (s.game_id, s.left):
                    await self.close(1012, "seated in a game")
                return
            if changes == self.lobby_changes:  # else newer lobby frames said it
                await self.send({"type": "lobby", **lobby_part(state)})
            return
        log.warning("matchmaker unanswered since hello: %s", player)

    async def deliver_catch_up(self, reply: dict[str, Any], resync: bool = True) -> None:
        """A shard's sync answer: the events the client lacks with the
        seat's view now (one ``update`` frame, ``replayed``), or, when they
        are no longer all kept, the whole view (``view`` frame)."""
        s = self.session
        assert s is not None
        gid = reply.get("game") or s.game_id
        gs = int(reply.get("seq", 0))
        if gid == s.game_id and gs < s.game_seq:
            return  # older than what was sent (an owner that thawed): nothing new
        view = reply.get("view") or {}
        if isinstance(view.get("seat"), int):
            s.seat = view["seat"]
        if _substituted_in(view, s.seat):
            s.substituted = True
        if view.get("finished"):
            self.finished_game = True
        if "events" in reply:
            events = [e for e in reply["events"] if int(e.get("game_seq", 0)) > s.game_seq]
            frame: dict[str, Any] = {"type": "update", "game_id": gid, "game_seq": gs,
                                     "events": events, "view": view, "replayed": True}
        else:
            frame = {"type": "view", "game_id": gid, "game_seq": gs, "view": view,
                     "resync": resync}
            if reply.get("recent"):  # the seat's last events, for a log (not to apply)
                frame["recent"] = reply["recent"]
        if reply.get("deadline"):
            frame["deadline"] = _deadline(reply["deadline"])
        await self.send(frame, game_seq=gs, view=frame["type"] == "view")

    async def flush_buffer(self) -> None:
        while self.buffer:
            pending, self.buffer = self.buffer, []
            for part in pending:
                await self.deliver_part(*part)
        self.buffer = None

    # -- NATS --------------------------------------------------------------------
    async def subscribe(self) -> None:
        s = self.session
        assert s is not None
        self.sub = await self.gw.subscribe_player(s.player, self.on_msg)

    async def on_msg(self, msg: Any) -> None:
        kind = msg.subject.rsplit(".", 1)[-1]
        try:
            if kind == "events":  # a burst part sent to the player's own subject
                for _, part in burst_parts(msg.data):
                    self.on_part(*part)
            elif kind == "lobby":
                await self.on_lobby(orjson.loads(msg.data))
            elif kind == "kick":
                self._spawn(self.on_kick(msg))
        except Exception:
            log.exception("bad message on %s", msg.subject)

    @property
    def mm(self) -> Any:
        """The lobby's stub, every call naming this connection (opened_md)."""
        return _Named(self.gw.mm, opened_md(self.opened_at[0], self.gw.id))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- game bursts (issue 13) ----------------------------------------------------
    def on_part(self, gid: str, first: int, last: int, flags: int, body: bytes) -> None:
        """The player's part of a game burst: its events and the seat's view
        after them. The common case (the next events of the game we are in,
        nothing queued, the socket ready) is written at once, the part
        wrapped as it came; anything else waits its turn in :attr:`inbox`."""
        s = self.session
        if s is None or self.closed:
            return
        if first > last and gid == s.game_id and last < s.game_seq:
            return  # a view-only part overtaken by newer events (and their view)
        if self.buffer is not None:  # a catch-up is being answered: after it
            self.buffer.append((gid, first, last, flags, body))
            return
        # the next events, or a patch of exactly the view the player holds
        # (one made after events not here yet waits for them: slow path)
        if self._pump is None and gid == s.game_id and (
                first == s.game_seq + 1 if first <= last else last == s.game_seq) \
                and self._write_part(gid, first, last, flags, body):
            return
        self.inbox.append((gid, first, last, flags, body))
        if self._pump is None:
            self._pump = asyncio.create_task(self._drain_inbox())

    async def _drain_inbox(self) -> None:
        try:
            while self.inbox:
                await self.deliver_part(*self.inbox.popleft())
        except Exception:  # a bug costs the parts, never the connection (a gap syncs)
            log.exception("burst delivery failed")
            self.inbox.clear()
        finally:
            self._pump = None

    def _write_part(self, gid: str, first: int, last: int, flags: int, body: bytes) -> bool:
        """Write one part as an ``update`` frame now (False: not now)."""
        s = self.session
        if s is None or self.lock.locked() or self._write_now is None or self.closed:
            return False
        if self.proto:  # no splicing into protobuf: the frame as a dict
            if not self._emit_now(_update(body), max(last, s.game_seq), False):
                return False
        else:
            seq = s.seq + 1
            data = b'{"type":"update","seq":%d,"server_ms":%d,' % (seq, now_ms()) + body + b"}"
            if not self._write_now(data, False):
                return False
            s.seq = seq
            s.event_sent(seq, max(last, s.game_seq))
            m.frame_out("update")
        if flags:
            self._noticed(gid, flags)
        return True

    def _noticed(self, gid: str, flags: int) -> None:
        s = self.session
        assert s is not None
        if flags & F_GAME_OVER:
            self.finished_game = True
        if flags & F_SEAT_BOT:
            s.substituted = True
        if flags & F_SEAT_AWAY and not self.closed and not flags & F_GAME_OVER:
            # Our own seat marked away while this connection is open: an
            # older connection's goodbye (a drop, then a quick resume) reached
            # the shard after this one's `reconnect`. Say it again, or the
            # game would wait for a player who is here (RULES.md 4 pause).
            self._spawn(self.gw.command(gid, s.player, "gw-" + secrets.token_hex(6),
                                        {"type": "reconnect"}))

    def catch_up(self, gid: str) -> None:
        """Parts of the game may have been lost on the way (the shard link
        they took closed, docs/protocol.md 1.1), and the game may have no
        part coming that would show the gap (its end was the last): ask its
        shard for what the player lacks, in turn with the parts."""
        self.on_part(gid, CATCH_UP, CATCH_UP, 0, b"")

    async def deliver_part(self, gid: str, first: int, last: int, flags: int,
                           body: bytes) -> None:
        """The slow path of :meth:`on_part`: a game we have not heard of yet
        (its ``matched`` is late), a part already delivered, or a gap (a
        part lost on the way: a sync fills it)."""
        s = self.session
        if s is None or self.closed:
            return
        if first == CATCH_UP:
            if gid == s.game_id:
                reply = await self.gw.sync(s, s.game_seq)
                if s is not self.session or gid != s.game_id:
                    return
                if reply is not None:
                    await self.deliver_catch_up(reply)
                elif not self.finished_game:  # no shard serves it: over (as a player's sync)
                    await self._ended(gid)
            return
        if gid == s.left and gid != s.game_id:
            return  # left by choice (나가기) in another tab: not taken up here
        if gid != s.game_id:  # a game we have not heard of (its matched is late)
            s.new_game(gid, None)
            self.finished_game = False
            if first > 1 or first > last:  # came in late: start from a whole view
                reply = await self.gw.sync(s, None)
                if reply is not None:
                    await self.deliver_catch_up(reply, resync=False)
                    if last <= s.game_seq:
                        return
        elif last < s.game_seq or (first <= last and last == s.game_seq):
            return  # already delivered (or a view-only part overtaken by newer events)
        elif first > s.game_seq + 1 if first <= last else last > s.game_seq:
            # A live event went missing, or a patch (the reply to one's own
            # move) came before the events it follows (they took another
            # way, e.g. NATS while the reply took the link): the events
            # after what was sent and the view now, then the patch only if
            # still newer (it is not: the view has it).
            reply = await self.gw.sync(s, s.game_seq)
            if reply is not None:
                await self.deliver_catch_up(reply)
                if last <= s.game_seq:
                    return
        if s is not self.session:
            return
        await self.send(_update(body), game_seq=max(last, s.game_seq))
        if flags:
            self._noticed(gid, flags)

    async def on_lobby(self, frame: dict[str, Any]) -> None:
        s = self.session
        if s is None:
            return
        self.lobby_changes += 1
        if frame.get("type") != "matched":
            await self.send(frame)
            return
        # A new game: the matched frame, then the seat's whole view, then its
        # events (this subscription's messages are handled one at a time, so
        # none can pass the view).
        s.new_game(frame["game_id"], frame.get("seat"), match_of(frame))
        self.finished_game = False
        await self.send(frame)
        await self._caught_up(None, resync=False)
        self._spawn(self.gw.save(s))
        self._on_game(s.game_id)

    def _on_game(self, gid: str) -> None:
        for hook in ON_GAME:
            self._spawn(hook(self, gid))

    async def _caught_up(self, last_seq: int | None, resync: bool = True) -> bool:
        """Ask the shard for the game's view (``last_seq`` None) or the
        events after ``last_seq`` and send them; burst parts that come
        meanwhile wait, then follow. False: the shard did not answer."""
        s = self.session
        assert s is not None
        nested = self.buffer is not None
        if not nested:
            self.buffer = []
        try:
            reply = await self.gw.sync(s, last_seq)
            if reply is not None:
                await self.deliver_catch_up(reply, resync=resync)
        finally:
            if not nested:
                await self.flush_buffer()
        return reply is not None

    async def on_kick(self, msg: Any) -> None:
        """Another connection of the player: a newer one's hello asks this
        one to close and hand its session over (a request), or one that
        began to listen says so (``announce_live``, no reply: two hellos at
        the same moment found nothing to kick). Whichever was opened later
        stays; the other is closed with 4001. A kick without ``opened`` (a
        gateway of an older version) is obeyed."""
        try:
            req = orjson.loads(msg.data)
        except orjson.JSONDecodeError:
            return
        if not isinstance(req, dict) or req.get("conn") == self.id or self.session is None:
            return
        theirs = _opened_key(req.get("opened"))
        if not msg.reply and (theirs is None or self.closed):
            return  # an announcement we cannot order, or heard on the way out
        if theirs is not None and theirs < self.opened_at and not self.closed:
            # theirs is the older socket (e.g. one its tab had already given
            # up, whose hello came late): this one stays
            if msg.reply:
                await msg.respond(orjson.dumps({"stay": list(self.opened_at)}))
            else:  # it closes when it hears of us
                self.gw.register(self)
                await self.gw.announce_live(self.session.player, self._opened_json())
            return
        self.replaced = True
        self.superseded = not msg.reply  # the announcer has a session of its own
        await self.close(4001, "replaced")
        await self.finish()
        if msg.reply:
            await msg.respond(orjson.dumps(self.session.to_json()))

    def _opened_json(self) -> bytes:
        return orjson.dumps({"conn": self.id, "opened": list(self.opened_at)})

    # -- closing -------------------------------------------------------------------
    async def close(self, code: int, reason: str) -> None:
        """Send the close frame after any frame being written; a client that
        does not read (its socket full, a write waiting under the lock) is
        dropped after :data:`CLOSE_WAIT_S` instead: its idle or hello
        timeout never finished, and held its unsent frames for good."""
        if self.closed:
            return
        self.closed = True  # no frame after this one

        async def in_turn() -> None:
            async with self.lock:
                await self.t.close(code, reason)

        try:
            await asyncio.wait_for(in_turn(), CLOSE_WAIT_S)
        except TimeoutError:
            abort = getattr(self.t, "abort", None)
            if abort is not None:
                abort()
        except Exception:
            pass

    async def finish(self) -> None:
        """The connection is over: tell the game (unless replaced), save the
        session for resume, let go of the subscription. Idempotent."""
        if self._finishing is not None:
            await asyncio.shield(self._finishing)
            return
        self._finishing = asyncio.get_running_loop().create_future()
        try:
            self.closed = True
            self.gw.entered(self)  # (a hello let in that never signed in)
            s = self.session
            if s is None:
                return
            if self.sub is not None:
                try:
                    await self.sub.unsubscribe()
                except Exception:
                    pass
            for hook in ON_FINISH:  # 관전 (spectate.stop)
                await hook(self)
            self.gw.unregister(self)
            if not self.replaced:
                s.closed_ms, closed = now_ms(), time.monotonic()
                # the game first: a quick resume's `reconnect` must come after
                if s.game_id and not self.finished_game:
                    await self.gw.command(s.game_id, s.player, "gw-" + secrets.token_hex(6),
                                          {"type": "disconnect"}, total_s=1.0)
                await self.away(s.player, closed)
            if not self.superseded:
                await self.gw.save(s)
        finally:
            self._finishing.set_result(None)

    # -- lobby -----------------------------------------------------------------------
    async def away(self, player: str, since: float | None = None) -> None:
        """Tell the lobby this connection of the player is gone (since
        ``since``, a ``time.monotonic()``; None: now): unless a connection
        of theirs opened later is there, they leave the quick-match queue
        and a room seat waits 60 s (RULES.md 4). Unanswered (the lobby
        changing leaders), it is told again (:meth:`away_later`)."""
        since = time.monotonic() if since is None else since
        try:
            await self.mm.Away(matchmaker_pb2.PlayerRequest(player=player), timeout=2)
        except grpc.aio.AioRpcError:
            self._spawn(self.away_later(player, since))

    async def away_later(self, player: str, since: float) -> None:
        """An ``Away`` the lobby did not answer, again until it does (about
        a minute; audit finding: lost, a queued ticket stayed until matched,
        its seat then played by a bot, and a room kept the seat for good).
        Each try says how long ago the connection closed (``away_ms``: the
        seat's 60 s count from then); the lobby ignores it if a connection of
        the player opened later called it (``hello``, a lobby request: back
        meanwhile, on this gateway or another)."""
        for wait in AWAY_LATER_S:
            await asyncio.sleep(wait * random.uniform(0.8, 1.2))
            age = max(1, int((time.monotonic() - since) * 1000))
            try:
                await self.mm.Away(matchmaker_pb2.PlayerRequest(
                    player=player, away_ms=age), timeout=2)
                return
            except grpc.aio.AioRpcError:
                continue
        log.warning("matchmaker unanswered since a drop: %s", player)

    def _player_ref(self) -> matchmaker_pb2.PlayerRef:
        s = self.session
        assert s is not None
        return matchmaker_pb2.PlayerRef(player=s.player, nickname=s.nickname)

    def _not_in_game(self) -> None:
        s = self.session
        # a game the player left (나가기) goes on with a bot: the player is free
        if s is not None and s.game_id and not self.finished_game and s.game_id != s.left:
            raise FrameError("in_game")

    async def h_ping(self, f: dict[str, Any]) -> None:
        frame: dict[str, Any] = {"type": "pong"}
        if "client_ms" in f:
            frame["client_ms"] = f["client_ms"]
        await self.send(frame)

    async def h_queue(self, f: dict[str, Any]) -> None:
        if not f.get("game"):
            raise FrameError("missing_field")
        self._not_in_game()
        rep = await self.mm.Enqueue(matchmaker_pb2.EnqueueRequest(
            player=self._player_ref(), game=f["game"], seats=f.get("seats") or 0,
            bot_level=f.get("level") or ""), timeout=LOBBY_TIMEOUT_S)
        _check(rep)
        await self.send({"type": "queued", "game": f["game"],
                         "seats": check_seats(f["game"], f.get("seats")), "ticket": rep.ticket})

    async def h_cancel_queue(self, f: dict[str, Any]) -> None:
        rep = await self.mm.Cancel(matchmaker_pb2.CancelRequest(
            player=self._player_ref().player), timeout=LOBBY_TIMEOUT_S)
        _check(rep)
        await self.send({"type": "queue_cancelled", "game": rep.game})

    async def h_room_create(self, f: dict[str, Any]) -> None:
        if not f.get("game"):
            raise FrameError("missing_field")
        self._flat_options(f)
        self._not_in_game()
        rep = await self.mm.CreateRoom(matchmaker_pb2.CreateRoomRequest(
            player=self._player_ref(), game=f["game"], seats=f.get("seats") or 0,
            options_json=orjson.dumps(f["options"]).decode() if "options" in f else ""),
            timeout=LOBBY_TIMEOUT_S)
        _check(rep)

    async def h_room_join(self, f: dict[str, Any]) -> None:
        if not f.get("code"):
            raise FrameError("missing_field")
        self._not_in_game()
        player = self._player_ref().player
        if self.gw.room_codes.take(player, time.monotonic()):
            raise FrameError("too_many_attempts")  # (wrong codes: limits.ROOM_CODE_*)
        wrong = False
        try:
            rep = await self.mm.JoinRoom(matchmaker_pb2.JoinRoomRequest(
                player=self._player_ref(), code=f["code"]), timeout=LOBBY_TIMEOUT_S)
            wrong = rep.error_code == "room_not_found"
        finally:
            if not wrong:
                self.gw.room_codes.give_back(player, time.monotonic())
        if rep.error_code == "room_started" and codec.is_game_id(rep.game_id):
            raise FrameError("room_started", game_id=rep.game_id)  # late: 관전 is offered
        _check(rep)

    async def h_room_leave(self, f: dict[str, Any]) -> None:
        rep = await self.mm.LeaveRoom(self._room_req(), timeout=LOBBY_TIMEOUT_S)
        _check(rep)
        await self.send({"type": "room_left", "code": rep.room.code})

    @staticmethod
    def _flat_options(f: dict[str, Any]) -> None:
        """A room's options are a flat object (games/base.py ``flat_object``):
        anything else is ``bad_option`` before it is encoded."""
        if "options" in f and not flat_object(f["options"]):
            raise FrameError("bad_option")

    def _room_req(self, **kw: Any) -> matchmaker_pb2.RoomRequest:
        return matchmaker_pb2.RoomRequest(player=self._player_ref().player, **kw)

    async def h_room_options(self, f: dict[str, Any]) -> None:
        if "options" not in f and "seats" not in f:
            raise FrameError("missing_field")
        self._flat_options(f)
        rep = await self.mm.SetRoomOptions(self._room_req(
            seats=f.get("seats") or 0,
            options_json=orjson.dumps(f["options"]).decode() if "options" in f else ""),
            timeout=LOBBY_TIMEOUT_S)
        _check(rep)

    async def h_room_add_bot(self, f: dict[str, Any]) -> None:
        rep = await self.mm.AddBot(self._room_req(level=f.get("level") or "normal"),
                                   timeout=LOBBY_TIMEOUT_S)
        _check(rep)

    async def h_room_remove_bot(self, f: dict[str, Any]) -> None:
        if "seat" not in f:
            raise FrameError("missing_field")
        rep = await self.mm.RemoveBot(self._room_req(seat=f["seat"]), timeout=LOBBY_TIMEOUT_S)
        _check(rep)

    async def h_room_start(self, f: dict[str, Any]) -> None:
        rep = await self.mm.StartRoom(self._room_req(), timeout=LOBBY_TIMEOUT_S + 10)
        _check(rep)

    async def _rematch(self, f: dict[str, Any], accept: bool, peek: bool = False) -> None:
        """``rematch`` / ``rematch_decline``, or (``peek``) ``rematch_state``."""
        gid = f.get("game_id")
        if not gid:
            raise FrameError("missing_field")
        if not codec.is_game_id(gid):  # no such game, so no such offer
            raise FrameError("no_rematch")
        s = self.session
        if not accept and not peek and s is not None and gid == s.game_id and self.finished_game:
            # 로비로 from the results: done with that table (offer or not); a
            # later hello on another tab or device does not bring it back
            s.walked_out()
            self._spawn(self.gw.save(s))
        req = matchmaker_pb2.RematchRequest(player=self._player_ref(), game_id=gid, accept=accept)
        rep = await (self.mm.RematchState if peek else self.mm.Rematch)(req, timeout=LOBBY_TIMEOUT_S)
        _check(rep)  # the offer's state comes as a ``rematch`` lobby frame

    async def h_rematch(self, f: dict[str, Any]) -> None:
        await self._rematch(f, True)

    async def h_rematch_decline(self, f: dict[str, Any]) -> None:
        await self._rematch(f, False)

    async def h_rematch_state(self, f: dict[str, Any]) -> None:
        """The table's 한 판 더 offer as it is (a ``rematch`` frame; none when
        there is none), answering nothing (docs/websocket.md 3.1)."""
        await self._rematch(f, False, peek=True)

    async def h_emote(self, f: dict[str, Any]) -> None:
        """A quick reaction (issue 14): one of a fixed set, to everyone at
        the player's table, shown at the sender's seat; no free text."""
        s = self.session
        assert s is not None
        # the frame first, then the player's state (docs/websocket.md 6)
        if f.get("emote") is None:
            raise FrameError("missing_field")
        if f["emote"] not in EMOTES:
            raise FrameError("bad_emote")
        gid = f.get("game_id") or s.game_id
        if not gid or gid != s.game_id or s.seat is None:
            raise FrameError("not_in_game")
        # a seat the player left (or was away from for 60 s) is the bot's:
        # a reaction there was shown as the bot's (fuzz finding); one who
        # went 로비로 from the results is no longer at the table
        if s.substituted or s.left == gid:
            raise FrameError("not_in_game" if self.finished_game and not s.substituted else "seat_is_bot")
        if not self.emotes.allow(time.monotonic()):
            raise FrameError("too_many_emotes")
        if self._table[0] != gid:
            try:
                self._table = (gid, await self.gw.table_players(gid))
            except Exception:  # noqa: BLE001 - the directory is away: nobody else hears it
                self._table = ("", [s.player])
        frame = orjson.dumps({"type": "emote", "game_id": gid, "seat": s.seat,
                              "emote": f["emote"]})
        for pid in self._table[1] or [s.player]:
            await self.gw.publish_lobby(pid, frame)
        await self.gw.publish_emote(gid, frame)  # its spectators

    async def h_ratings(self, f: dict[str, Any]) -> None:
        state = await self.gw.player_state(self._player_ref().player, self.opened_at[0])
        if state is None:  # not "no ratings": the client keeps the ones it shows
            raise FrameError("matchmaker_unavailable")
        await self.send({"type": "ratings", "ratings": state["ratings"]})

    # -- game ------------------------------------------------------------------------
    async def h_action(self, f: dict[str, Any]) -> None:
        s = self.session
        assert s is not None
        # the frame first, then the player's state (docs/websocket.md 6): a
        # malformed action is named as such wherever the player is
        cmd_id = f.get("cmd_id")
        action = f.get("action")
        if cmd_id is None or action is None:
            raise FrameError("missing_field")
        if not codec.is_cmd_id(cmd_id):
            raise FrameError("bad_cmd_id")
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            raise FrameError("missing_field")
        if not flat_object(action):  # nothing nested, no long text (games/base.py)
            raise FrameError("bad_action")
        if action["type"] in PRESENCE:
            raise FrameError("reserved_action")
        gid = f.get("game_id") or s.game_id
        if not gid or gid != s.game_id:
            raise FrameError("not_in_game")
        if "seat" in f and f["seat"] != s.seat:
            raise FrameError("not_your_seat")
        if self.finished_game:  # as its shard says (it no longer serves the game: 5 s
            # of retries for no responder, then "try again later"); over
            # whoever held the seat at the end (fuzz: "seat_is_bot")
            raise FrameError("game_finished")
        if s.substituted:  # RULES.md 4: the player may watch, not retake the seat
            raise FrameError("seat_is_bot")
        t0 = time.perf_counter()
        reply = await self.gw.command(gid, s.player, cmd_id, action)
        part = reply.pop(OWN_PART, None)
        if part is not None and isinstance(reply.get("seq"), int):
            self.on_part(gid, reply["seq"] + 1, reply["seq"], 0, part)
        if reply.get("ok"):
            if action["type"] == "leave":
                s.walked_out()
                self._spawn(self.gw.save(s))
            frame: dict[str, Any] = {"type": "result", "cmd_id": cmd_id, "game_id": gid}
            if isinstance(reply.get("seq"), int):
                frame["game_seq"] = reply["seq"]
            if reply.get("info"):  # the engine's note on the move (docs/websocket.md 3)
                frame["info"] = reply["info"]
            await self.send(frame)
        else:
            code = str(reply.get("code") or "bad_frame")
            await self.reject(code, "action", cmd_id, message=reply.get("message"))
        m.COMMAND_RTT.observe(time.perf_counter() - t0)

    async def h_sync(self, f: dict[str, Any]) -> None:
        s = self.session
        assert s is not None
        gid = f.get("game_id") or s.game_id
        if gid and gid != s.game_id:
            if not codec.is_game_id(gid):
                raise FrameError("not_in_game")
            # an older game of the player's (a bookmarked or reopened
            # address): how it ended, if it has; else not this player's now
            final = await self.gw.final_frame(str(gid), s.player)
            if final is None or "seat" not in final:
                raise FrameError("not_in_game")
            await self.send(final)
            return
        if not gid:
            raise FrameError("not_in_game")
        if await self._caught_up(None):
            return
        if not await self._ended(gid):
            raise FrameError("game_unavailable")

    async def _ended(self, gid: str) -> bool:
        """The game is gone from its shard: how it ended (the directory's
        final frame) sent, and it counts as finished. False: none to send."""
        s = self.session
        assert s is not None
        final = await self.gw.final_frame(gid, s.player)
        if final is None or s is not self.session or gid != s.game_id:
            return False
        self.finished_game = True
        await self.send(final)
        return True


def _update(body: bytes) -> dict[str, Any]:
    """A burst part as an ``update`` frame dict (the paths that cannot
    splice the bytes: protobuf, waiting for the lock or the socket)."""
    frame: dict[str, Any] = orjson.loads(b"{" + body + b"}")
    frame["type"] = "update"
    return frame


def _substituted_in(view: dict[str, Any], seat: int | None) -> bool:
    """Whether a seat's view says a bot took the seat for good
    (``seats[seat].substituted``, the same in every game)."""
    seats = view.get("seats")
    if seat is None or not isinstance(seats, list) or not 0 <= seat < len(seats):
        return False
    return isinstance(seats[seat], dict) and bool(seats[seat].get("substituted"))


def _deadline(d: dict[str, Any]) -> dict[str, Any]:
    """The fields of ``Deadline`` (client.proto) only."""
    return {k: d[k] for k in ("seat", "server_ms", "remaining_ms", "t") if d.get(k) is not None}


def _check(rep: Any) -> None:
    if rep.error_code:
        raise FrameError(rep.error_code)


HANDLERS: dict[str, Handler] = {
    "hello": Connection.h_hello,
    "ping": Connection.h_ping,
    "queue": Connection.h_queue,
    "cancel_queue": Connection.h_cancel_queue,
    "room_create": Connection.h_room_create,
    "room_join": Connection.h_room_join,
    "room_leave": Connection.h_room_leave,
    "room_options": Connection.h_room_options,
    "room_add_bot": Connection.h_room_add_bot,
    "room_remove_bot": Connection.h_room_remove_bot,
    "room_start": Connection.h_room_start,
    "ratings": Connection.h_ratings,
    "rematch": Connection.h_rematch,
    "rematch_decline": Connection.h_rematch_decline,
    "rematch_state": Connection.h_rematch_state,
    "emote": Connection.h_emote,
    "action": Connection.h_action,
    "sync": Connection.h_sync,
}


def _opened_key(v: Any) -> tuple[int, str] | None:
    """``Connection.opened_at`` as another connection sent it, or None."""
    if (isinstance(v, list) and len(v) == 2 and isinstance(v[0], int)
            and not isinstance(v[0], bool) and isinstance(v[1], str)):
        return (v[0], v[1])
    return None
