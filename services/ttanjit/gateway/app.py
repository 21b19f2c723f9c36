"""The gateway process: FastAPI for the HTTP routes (sign-in, health, the
web client, OpenAPI; every response with the security headers of
``headers.py``) and a plain ASGI handler for ``/ws`` (no Starlette
WebSocket wrapper on the per-message path), both on one port under uvicorn.
``/metrics`` is not on that port: ``__main__`` serves it on
``TTANJIT_METRICS_PORT``.

:class:`Gateway` holds what connections share: the NATS connection, the
sessions bucket, the matchmaker stub, the tokens, and the local connections
by player. Several gateways run side by side: nothing here is needed by
another gateway except through NATS and JetStream KV.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import secrets
import struct
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import orjson
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from google.protobuf import json_format
from nats.aio.client import Client
from nats.errors import Error as NatsError
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from nats.js.kv import KV_DEL, KV_OP, KV_PURGE, KeyValue
from pydantic import BaseModel
from websockets.protocol import State

from ttanjit.common.config import Settings
from ttanjit.common.grpcutil import Replicas, Retrying, opened_md
from ttanjit.common.nats import (
    GAMES_BUCKET,
    IDENTITY_BUCKET,
    OWNERS_BUCKET,
    SESSIONS_BUCKET,
    Subjects,
    connect,
    find_jetstream,
    passing,
    relayed,
    subscribed,
    unless_disconnected,
)
from ttanjit.gateway import codec
from ttanjit.gateway import metrics as m
from ttanjit.gateway.account import install as install_account
from ttanjit.gateway.account import store_unavailable
from ttanjit.gateway.auth import Identity, Tokens, clean_nickname, new_player_id
from ttanjit.gateway.capture import GatewayRecorder
from ttanjit.gateway.conn import (
    HANDLERS,
    LOBBY_TIMEOUT_S,
    OWN_PART,
    Connection,
    Superseded,
    burst_parts,
    now_ms,
)
from ttanjit.gateway.errors import MESSAGES, FrameError
from ttanjit.gateway.finals import (
    UNREADABLE,
    directory_entry,
    final_frame,
    read_entry,
    seated_match,
)
from ttanjit.gateway.headers import with_security_headers
from ttanjit.gateway.httperrors import install as install_http_errors
from ttanjit.gateway.httperrors import refusal, with_body_limit
from ttanjit.gateway.identity import Identities
from ttanjit.gateway.limits import (
    ROOM_CODE_BURST,
    ROOM_CODE_RATE,
    Attempts,
    client_address,
    counted_address,
    limits_json,
)
from ttanjit.gateway.link import Links
from ttanjit.gateway.replies import Replies
from ttanjit.gateway.session import Session, due_checkpoints
from ttanjit.v1 import matchmaker_pb2, matchmaker_pb2_grpc

_OPEN = State.OPEN
_H16 = struct.Struct("!BBH").pack
_H64 = struct.Struct("!BBQ").pack

# one NATS request to a game's owner shard before asking again (failover)
ATTEMPT_S = 0.5
# how long a closed socket's lobby requests may hold its end (one room's start)
SETTLE_S = LOBBY_TIMEOUT_S + 11
# a whole view asks for the seat's last events too, as many as a One Card log
# shows (docs/protocol.md 2 `recent`)
RECENT_EVENTS = 30

log = logging.getLogger("ttanjit.gateway")
NICKNAME_S = 1.0  # a hello waits this long at most for the nickname as last set
# a hello's refresh family JetStream did not answer for is asked again
# after this long; checks of many families run this many at once
FAMILY_AGAIN_S = 5.0
FAMILY_CHECKS = 16

STATIC = Path(__file__).parent / "static"
PLACEHOLDER = """<!doctype html>
<html lang="ko"><head><meta charset="utf-8"><title>딴짓</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>딴짓</h1><p>웹 클라이언트를 준비하고 있어요. 곧 여기서 원카드, 줄줄이 벌점,
하카 카드를 할 수 있어요.</p><p>지금은 <code>/ws</code> WebSocket과
<a href="/openapi.json">HTTP API</a>를 쓸 수 있어요.</p></body></html>
"""


# a hello's saved session, read again after these pauses while NATS does
# not answer (each read waits at most 1 s): at most ~5 s, then a new session
SESSION_READ_RETRY_S = (0.2, 0.5, 0)


class ClientFiles(StaticFiles):
    """The web client's files. An address with a ``..`` segment is
    ``not_found`` (``/api/replay/..%2F..`` came to the files as the root
    folder, answered with a bodyless 307 to ``/api/replay/../../``; the
    project's error shape everywhere else: identity audit)."""

    def get_path(self, scope: Any) -> str:
        if ".." in str(scope.get("path", "")).split("/"):
            raise HTTPException(status_code=404)
        return super().get_path(scope)

    def file_response(self, full_path: Any, stat_result: Any, scope: Any,
                      status_code: int = 200) -> Any:
        """Asked again each time (``no-cache``: a 304 while unchanged), but
        the fonts (a week): a browser kept modules of the release before an
        upgrade by its own guess (no Cache-Control, a Last-Modified days old)
        and ran them with the new ones' — a page that did not start
        (version-skew audit)."""
        response = super().file_response(full_path, stat_result, scope, status_code)
        fonts = self.get_path(scope).startswith("fonts/")
        response.headers["cache-control"] = "public, max-age=604800" if fonts else "no-cache"
        return response


class Gateway:
    def __init__(self, settings: Settings) -> None:
        if settings.ephemeral_secret:
            log.warning("TTANJIT_DEV=1 and no TTANJIT_TOKEN_SECRET: a random token secret "
                        "for this process only")
        self.s = settings
        self.prefix = settings.prefix
        self.subjects = Subjects(settings.prefix)
        # this process's name in the shards' routes: its players' parts of
        # every game burst come in one message on its own subject (issue 13)
        self.id = secrets.token_hex(8)
        self._games_subject = self.subjects.gateway_games(self.id)
        # direct links to owner shards
        self.links = Links(self.id, self.on_burst, self.on_link_lost)
        self.tokens = Tokens(settings.token_secret)
        self.limits = limits_json(settings.ws_idle_ms, settings.ws_hello_ms)  # the welcome's
        # wrong room codes, per player (docs/websocket.md 5)
        self.room_codes = Attempts(ROOM_CODE_RATE, ROOM_CODE_BURST)
        # TTANJIT_RECORD_SAMPLE / TTANJIT_RECORD_DIR: a sample of sessions to a capture file
        self.recorder = GatewayRecorder.from_settings(settings)
        self.nc: Client = None  # type: ignore[assignment]
        self.replies: Replies = None  # type: ignore[assignment]
        self.kv: KeyValue = None  # type: ignore[assignment]
        self.ids: Identities = None  # type: ignore[assignment]  # nicknames as last set
        self.games: KeyValue = None  # type: ignore[assignment]  # the game directory
        self.mm: matchmaker_pb2_grpc.MatchmakerStub = None  # type: ignore[assignment]
        self.replicas: Replicas | None = None  # the matchmaker's
        self.by_player: dict[str, Connection] = {}
        # the places of players (admits): one per player signed in here and
        # one per hello of theirs let in and not yet signed in (entering)
        self.places: dict[str, int] = {}
        self.entering: dict[Connection, str] = {}
        self.conns: set[Connection] = set()
        self.ready = False
        self._sweeper: asyncio.Task[None] | None = None
        self._checkpoints: set[asyncio.Task[None]] = set()
        self._background: set[asyncio.Future[None]] = set()  # (_later)
        self._games_sub: Any = None
        self.buckets: dict[str, KeyValue] = {}  # JetStream's (connect)

    async def connect(self, stop: asyncio.Event | None = None) -> None:
        """NATS, and JetStream's streams and buckets, which the shards and
        matchmakers make (``common.natsauth``: a gateway's user may not);
        ``Stopped`` when ``stop`` is set first (a SIGTERM while NATS, or
        JetStream's streams, are not there yet)."""
        if self.nc is None:
            self.nc = await connect(self.s.nats_url, "gateway", reconnected_cb=self.on_nats_back,
                                    stop=stop)
        if not self.buckets:
            self.buckets = await find_jetstream(self.nc.jetstream(), self.subjects, stop)

    async def start(self) -> None:
        await self.connect()  # (__main__ has connected it, minding SIGTERM)
        self.replies = Replies(self.nc)
        await self.replies.start()
        # one subscription (one task) for the game traffic of every local player
        self._games_sub = await self.nc.subscribe(self._games_subject,
                                                  cb=self.on_games,
                                                  pending_msgs_limit=65536,
                                                  pending_bytes_limit=64 * 1024 * 1024)
        # a refresh family removed (로그아웃, a stolen copy of it used,
        # expired): the sockets it signed in are closed — its refresh would
        # fail, and a token left from it played on for up to an hour as
        # the player, whose 로그아웃 said nothing to it (security audit)
        self._families_sub = await self.nc.subscribe(f"$KV.{IDENTITY_BUCKET}.r.*",
                                                     cb=self.on_family)
        await subscribed(self.nc)  # before ready: a shard's first burst for us is routed
        buckets = self.buckets
        self.kv = buckets[SESSIONS_BUCKET]
        self.ids = Identities(buckets[IDENTITY_BUCKET], self.nc.jetstream())
        self.games = buckets[GAMES_BUCKET]
        self.owners = buckets[OWNERS_BUCKET]  # the live games (the 관전 list)
        # every replica
        self.replicas = Replicas(self.s.matchmaker_addr, matchmaker_pb2_grpc.MatchmakerStub)
        self.mm = Retrying(self.replicas,  # type: ignore[assignment]
                           on_failed=m.matchmaker_attempt_failed)
        self._sweeper = asyncio.create_task(self.sweep())
        m.zero(HANDLERS, MESSAGES)  # every frame type registered by now (관전's too)
        self.ready = True
        gc.collect()
        gc.freeze()  # start-up objects never need collecting again (PERFORMANCE.md)
        gc.set_threshold(20_000, 20, 20)  # fewer passes over 1,000s of sockets

    async def on_family(self, msg: Any) -> None:
        """A refresh family's entry changed: if removed, its sockets are
        closed with 4004 (the client signs in again; docs/websocket.md 4)."""
        if (msg.headers or {}).get(KV_OP) not in (KV_DEL, KV_PURGE):
            return  # (a rotation)
        family = msg.subject.rsplit(".", 1)[-1]
        await asyncio.gather(*(self.signed_out(c) for c in list(self.conns) if c.family == family))

    @staticmethod
    async def signed_out(conn: Connection) -> None:
        """Close ``conn``, its sign-in's refresh family removed (4004)."""
        m.SIGNED_OUT.inc()
        await conn.close(4004, "signed_out")

    async def family_stands(self, ident: Identity) -> bool | None:
        """Whether a hello's token still signs its player in: its refresh
        family stands (not signed out of, revoked or expired). A token of an
        older release (no family) does, as on its routes (account.standing);
        None when JetStream cannot answer for it within a second (a hello
        is not held up by it: :meth:`recheck_later`)."""
        if not ident.family:
            return True
        try:
            return await asyncio.wait_for(
                self.ids.stands(ident.family, ident.player, now_ms()), NICKNAME_S)
        except Exception as exc:  # noqa: BLE001 - JetStream away or slow
            log.warning("a hello's refresh family not checked: %r", exc)
            return None

    def recheck_later(self, conn: Connection) -> None:
        """Ask again in a while whether ``conn``'s refresh family stands (a
        hello let in unchecked: a stolen token's hello in a slow moment was
        let in for good: second review); closed with 4004 if not, as when
        its removal comes (:meth:`on_family`)."""
        self._later(self.recheck_families([conn], FAMILY_AGAIN_S))

    def full(self) -> bool:
        """Holding the most players it takes (TTANJIT_MAX_CONNECTIONS; 0: no
        most): players signed in or with a hello let in. A socket that has
        not said hello is not counted: silent ones, closed after the
        hello's 10 s, filled the cap and kept every player out (review
        finding)."""
        cap = self.s.max_connections
        return cap > 0 and len(self.places) >= cap

    def admits(self, conn: Connection, player: str) -> bool:
        """Let ``conn``'s hello of ``player`` in: the player has a place here
        already (signed in, or another hello of theirs on its way: a tab
        taking over their own), or the gateway is not full. The hello holds
        the player's place until it is signed in (:meth:`register`) or
        gone (:meth:`entered`) — hellos at once each found the last place
        free before any was signed in, and a player's place was free
        between their old socket's end and their new one's sign-in (review
        findings)."""
        if player not in self.places and self.full():
            return False
        if conn not in self.entering:
            self.entering[conn] = player
            self._hold(player, 1)
        return True

    def entered(self, conn: Connection) -> None:
        """``conn``'s hello is over (signed in, refused or gone): it holds
        no place any more."""
        player = self.entering.pop(conn, None)
        if player is not None:
            self._hold(player, -1)

    def _hold(self, player: str, n: int) -> None:
        left = self.places.get(player, 0) + n
        if left > 0:
            self.places[player] = left
        else:
            self.places.pop(player, None)

    async def going_away(self) -> None:
        """Shutdown, first step (before the HTTP server lets go of its
        sockets): every WebSocket closed with 1001 and its session saved, so
        its client resumes on another gateway. Idempotent."""
        self.ready = False
        conns = list(self.conns)
        await asyncio.gather(*(c.close(1001, "going_away") for c in conns))
        # sessions saved for resume elsewhere; bounded, NATS may be gone
        finishing = [asyncio.ensure_future(c.finish()) for c in conns]
        if finishing:
            done, late = await asyncio.wait(finishing, timeout=3.0)
            for t in done:
                if not t.cancelled() and t.exception() is not None:
                    log.warning("shutdown: a session's end failed: %r", t.exception())
            for t in late:
                t.cancel()
            await asyncio.gather(*late, return_exceptions=True)
            if late:  # (it said every connection's count: 6,020 of 6,020 read as none
                # saved, overload audit; the checkpoints have the rest)
                log.warning("shutdown: %d of %d sessions not saved in time", len(late),
                            len(finishing))

    async def stop(self) -> None:
        self.ready = False
        if self._sweeper:
            self._sweeper.cancel()
        for task in list(self._checkpoints):  # going_away saves every session
            task.cancel()
        for bg in list(self._background):  # (family rechecks: the sockets are closing)
            bg.cancel()
        await self.going_away()
        self.links.close()
        if self.replicas:
            await self.replicas.close()
        if self.nc:
            try:
                if self.nc.is_connected:
                    await asyncio.wait_for(self.nc.drain(), 2.0)
            except Exception:  # NATS went away meanwhile
                pass
            try:  # (bounded: a frozen server takes nothing it is sent)
                await asyncio.wait_for(self.nc.close(), 2.0)
            except Exception as exc:  # noqa: BLE001 - torn down already, or a frozen server
                log.warning("nats close at shutdown: %r", exc)

    # -- connections ---------------------------------------------------------------
    def register(self, conn: Connection) -> None:
        assert conn.session is not None
        player = conn.session.player
        if player not in self.by_player:
            self._hold(player, 1)  # (before its hello's hold goes: the place is kept)
        self.entered(conn)
        self.by_player[player] = conn

    def unregister(self, conn: Connection) -> None:
        if conn.session and self.by_player.get(conn.session.player) is conn:
            del self.by_player[conn.session.player]
            self._hold(conn.session.player, -1)

    async def take_over(self, player: str, new: Connection) -> Session | None:
        """Close the player's older connection (on any gateway) and get its
        session; else the saved session (KV)."""
        try:
            msg = await self.nc.request(self.subjects.player_kick(player), orjson.dumps(
                {"conn": new.id, "opened": list(new.opened_at)}), timeout=2.0)
            got = orjson.loads(msg.data)
            if "stay" in got:  # that one was opened after ours (Connection.on_kick)
                raise Superseded
            return Session.from_json(got)
        except (NoRespondersError, NatsTimeout):
            pass
        for delay in SESSION_READ_RETRY_S:
            try:
                ptr = await asyncio.wait_for(self.kv.get(f"player.{player}"), 1.0)
                sid = orjson.loads(ptr.value or b"{}").get("session")
                entry = await asyncio.wait_for(self.kv.get(sid), 1.0)
                return Session.from_json(orjson.loads(entry.value or b"{}"))
            except Exception as exc:  # noqa: BLE001 - no saved session: a new one
                if not passing(exc):
                    return None
                # JetStream not answering for a moment: a new session now
                # would forget a game the player left by choice (they would
                # be seated back in it), so look again first
                log.warning("saved session unreadable: %r", exc)
                await asyncio.sleep(delay)
        return None

    async def announce_live(self, player: str, data: bytes) -> None:
        """Tell the player's other connections (any gateway) that this one
        listens now (``Connection.on_kick``)."""
        await self.nc.publish(self.subjects.player_kick(player), data)

    async def save(self, s: Session, pointer: bool = True) -> None:
        async def put() -> None:
            await self.kv.put(s.id, orjson.dumps(s.to_json()))
            if pointer:  # player -> session changes only with a new session
                await self.kv.put(f"player.{s.player}", orjson.dumps({"session": s.id}))
        # given up at once without NATS (a shutdown must not wait out its timeouts)
        why = await unless_disconnected(self.nc, put(), 12.0)
        if why is None:
            s.saved_seq = s.seq
        else:
            log.warning("session save failed: %s", why)

    async def sweep(self) -> None:
        """Each second: idle and hello timeouts, and the session checkpoints
        (for a resume after this gateway crashed) that fall on this second.
        Sessions are saved when they start and when their game changes; a
        checkpoint only bounds how far back such a resume replays (events
        the client has are skipped), so it can be rare."""
        tick = 0
        while True:
            asleep = time.monotonic()
            await asyncio.sleep(1.0)
            tick += 1
            now = time.monotonic()
            m.LOOP_LAG.observe(max(0.0, now - asleep - 1.0))
            for c in list(self.conns):
                if c.closed:
                    continue
                if c.session is None and now - c.opened > self.s.ws_hello_ms / 1000:
                    asyncio.create_task(c.close(4003, "hello_timeout"))
                elif now - c.last_rx > self.s.ws_idle_ms / 1000:
                    asyncio.create_task(c.close(4002, "idle_timeout"))
            due = due_checkpoints((c.session for c in self.conns
                                   if c.session is not None and not c.closed), tick)
            if due:  # in a task of their own: the timeouts never wait for NATS
                task = asyncio.create_task(self._checkpoint(due))
                self._checkpoints.add(task)
                task.add_done_callback(self._checkpoints.discard)

    async def _checkpoint(self, sessions: list[Session]) -> None:
        await asyncio.gather(*(self.save(s, pointer=False) for s in sessions))

    async def on_games(self, msg: Any) -> None:
        if relayed(msg, self._games_subject):  # (not a shard's: common.nats.relayed)
            log.warning("a burst relayed by JetStream, dropped")
            return
        if msg.reply:  # a shard asking whether we are still here (docs/protocol.md 2.1)
            await msg.respond(b"")
            return
        self.on_burst(msg.data)

    def on_burst(self, data: bytes) -> None:
        """A game burst for some of this gateway's players (docs/protocol.md
        2; over NATS or a shard link): each part goes to its player's
        connection, unparsed."""
        try:
            by_player = self.by_player
            for pid, part in burst_parts(data):
                conn = by_player.get(pid) if pid is not None else None
                if conn is not None:
                    conn.on_part(*part)
        except Exception:  # noqa: BLE001 - a malformed message costs that message only
            log.exception("bad game burst")

    def on_link_lost(self, addr: str, how: str) -> None:
        """A shard link closed (``how``: see :meth:`Links.lost`). Without a
        bye, bursts sent down it may be lost with it (docs/protocol.md 1.1):
        every player here in a live game that may be that shard's (its route
        is that link, or not known: bursts come down a gateway's link for
        all its players' games there) catches up."""
        m.LINKS_CLOSED.labels(how).inc()
        if how == "bye":
            return
        self.catch_up_unlinked(addr)

    async def on_nats_back(self) -> None:
        """NATS reconnected: the bursts sent to us there meanwhile are lost
        (core NATS keeps nothing for an absent subscriber), and a game that
        had nothing more to say would never show the gap (its end, or a
        pause: a shard that found us gone meanwhile marked our players away,
        docs/protocol.md 2.1). Every player here whose game's bursts do not
        come down an open link catches up (a sync, which also tells that
        shard they are here)."""
        log.warning("nats reconnected: catching up players not on a shard link")
        self.catch_up_unlinked()
        # a refresh family removed meanwhile was not heard (on_family): its
        # sockets played on as the player signed out (second review)
        self._later(self.recheck_families(list(self.conns), FAMILY_AGAIN_S))

    def _later(self, coro: Any) -> None:
        """Run ``coro`` beside the caller, kept until done."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def recheck_families(self, conns: list[Connection], wait_s: float = 0.0) -> None:
        """Close with 4004 (as :meth:`on_family`) those of ``conns`` whose
        refresh family no longer stands — removed while this gateway could
        not hear it (its NATS away: nothing is kept for an absent
        subscriber), or let in by a hello that JetStream did not answer
        for. A check JetStream cannot answer now is left for the next."""
        if wait_s:
            await asyncio.sleep(wait_s)
        sem = asyncio.Semaphore(FAMILY_CHECKS)

        async def one(c: Connection) -> None:
            s = c.session
            if not c.family or s is None or c.closed:
                return
            async with sem:
                try:
                    stands = await self.ids.stands(c.family, s.player, now_ms())
                except Exception:  # noqa: BLE001 - still away: asked again at the next
                    return
            if not stands and not c.closed:
                await self.signed_out(c)
        await asyncio.gather(*(one(c) for c in conns))

    def catch_up_unlinked(self, lost: str | None = None) -> None:
        """Every player here in a live game whose bursts may have been lost:
        its route is the link ``lost``, a link not open, or none known."""
        routes, open_links = self.links.routes, self.links.conns
        for conn in list(self.conns):
            s = conn.session
            if s is None or not s.game_id or conn.finished_game:
                continue
            # a route to a link not open is as good as none: the game may
            # have moved since (a handover), and a sync tells its new owner
            # to send this gateway's bursts down its own link
            route = routes.get(s.game_id)
            if route is None or route == lost or route not in open_links:
                conn.catch_up(s.game_id)

    # -- shard and matchmaker calls ------------------------------------------------
    async def command(self, game_id: str, player: str, cmd_id: str, action: dict[str, Any],
                      total_s: float = 5.0) -> dict[str, Any]:
        """NATS request to the owner shard; retried with backoff while the
        game is between owners, and while the owner lost the game with the
        command in flight (``game_unavailable``: the next owner answers the
        same ``cmd_id`` as it was recorded, or applies it; docs/protocol.md 1)."""
        data = orjson.dumps({"player": player, "cmd_id": cmd_id, "action": action,
                             "gw": self.id})
        deadline = time.monotonic() + total_s
        if game_id in self.links.routes:  # the owner's link (docs/protocol.md 1.1)
            raw = await self.links.command(game_id, data, ATTEMPT_S)
            if raw is not None:
                m.VIA_LINK.inc()
                reply = _reply(raw)
                if reply.get("code") != "game_unavailable":
                    return reply
        m.VIA_NATS.inc()
        delay = 0.05
        while True:
            timed_out = False
            try:
                # a frozen or cut-off owner keeps its subscription but never
                # answers: ask again soon (the same cmd_id is answered once,
                # docs/protocol.md 1), so a failover costs the player ~0.5 s more
                # at most, not a whole request timeout
                msg = await self.replies.request(self.subjects.cmd(game_id), data,
                                                 ATTEMPT_S)
                reply = _reply(msg.data)
                link = reply.pop("link", None)
                if isinstance(link, str) and link:  # next time, straight to the owner
                    self.links.learn(game_id, link)
                if reply.get("code") != "game_unavailable":
                    return reply
                # else the owner dropped the game with this command unwritten
                # (its append failed; it may yet land): as between owners
            except NoRespondersError:  # nobody subscribed (between owners): back off
                reply = {"ok": False, "code": "game_unavailable",
                         "message": MESSAGES["game_unavailable"]}
            except NatsTimeout:
                # the attempt already waited ATTEMPT_S (a frozen owner still
                # subscribed): ask again at once, so the shard that takes the
                # game over is asked at most ATTEMPT_S after it subscribed (a
                # backoff sleep on top made it up to ~1 s)
                reply, timed_out = {"ok": False, "code": "game_unavailable",
                                    "message": MESSAGES["game_unavailable"]}, True
            if time.monotonic() + (ATTEMPT_S if timed_out else delay) > deadline:
                return reply
            if not timed_out:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.5)

    async def sync(self, s: Session, last_seq: int | None) -> dict[str, Any] | None:
        """The shard's sync for the session's game: events after
        ``last_seq`` or a resync view (``None`` = ask for a view)."""
        data = orjson.dumps({"player": s.player, "gw": self.id,
                             "last_seq": -1 if last_seq is None else last_seq,
                             "recent": RECENT_EVENTS})
        for i, delay in enumerate((0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0)):  # rides out a failover
            try:
                msg = await self.replies.request(self.subjects.sync(s.game_id), data,
                                                 ATTEMPT_S)
                reply: dict[str, Any] = orjson.loads(msg.data)
                if reply.get("ok") is False:
                    return None
                return reply
            except (NoRespondersError, NatsTimeout):
                if i == 0:  # nobody answers: a game that ended is not coming back (waited 4.5 s)
                    entry = await directory_entry(self.games, s.game_id)
                    if entry is not None and entry.get("state") == "finished":
                        return None
                await asyncio.sleep(delay)
        return None

    async def final_frame(self, game_id: str, player: str) -> dict[str, Any] | None:
        return await final_frame(self.games, game_id, player, self.nickname)

    async def game_lives(self, game_id: str) -> bool:
        """Whether the game may still be played: its directory entry says
        live, or JetStream cannot say now (kept rather than dropped)."""
        doc = await read_entry(self.games, game_id)
        return doc is UNREADABLE or (doc is not None and doc.get("state") == "live")

    async def seated_match(self, game_id: str) -> dict[str, Any] | None:
        """Who sits where in a live game, from its directory entry and the
        players' nicknames (a player seated while away never got ``matched``)."""
        return await seated_match(self.games, game_id, self.nickname)

    async def nickname(self, player: str) -> str | None:
        """The player's nickname as last set (``ttanjit_identity``, any
        device); None when there is none or JetStream cannot say within a
        second (a hello does not wait longer for it)."""
        try:
            return await asyncio.wait_for(self.ids.nickname(player), NICKNAME_S)
        except Exception as exc:  # noqa: BLE001 - the token's nickname stands in
            log.warning("nickname unreadable: %r", exc)
            return None

    async def subscribe_player(self, player: str,
                               cb: Callable[[Any], Awaitable[None]]) -> Any:
        """The player's subject (events, lobby, kick). A client that stops
        reading holds its messages here; past the limit NATS drops them, and
        the next event's gap triggers a sync instead."""
        return await self.nc.subscribe(self.subjects.player_all(player), cb=cb,
                                       pending_msgs_limit=4096,
                                       pending_bytes_limit=8 * 1024 * 1024)

    async def table_players(self, game_id: str) -> list[str]:
        """The players of a game, from the game directory (emotes)."""
        entry = orjson.loads((await self.games.get(game_id)).value or b"{}")
        return [str(p) for p in (entry.get("players") or {})]

    async def publish_lobby(self, player: str, data: bytes) -> None:
        await self.nc.publish(self.subjects.player_lobby(player), data)

    async def publish_emote(self, game_id: str, data: bytes) -> None:
        """A player's reaction for the game's spectators (spectate.py forwards it)."""
        await self.nc.publish(self.subjects.emotes(game_id), data)

    async def player_state(self, player: str, opened_ms: int = 0) -> dict[str, Any] | None:
        try:
            rep = await self.mm.GetPlayer(
                matchmaker_pb2.PlayerRequest(player=player), timeout=3,
                metadata=opened_md(opened_ms, self.id) if opened_ms else ())
        except grpc.aio.AioRpcError:
            return None
        out = json_format.MessageToDict(rep, preserving_proto_field_name=True,
                                        always_print_fields_with_no_presence=True)
        out.setdefault("ratings", [])
        return out


def _reply(raw: bytes) -> dict[str, Any]:
    """A shard's command reply; a second line is the player's own
    view-only part riding on it (docs/protocol.md 1)."""
    nl = raw.find(b"\n")
    if nl < 0:
        reply: dict[str, Any] = orjson.loads(raw)
        return reply
    reply = orjson.loads(raw[:nl])
    reply[OWN_PART] = raw[nl + 1:]
    return reply


class AsgiTransport:
    """:class:`ttanjit.gateway.conn.Transport` over an ASGI WebSocket.

    :meth:`write_now` is the fast path of server frames (issue 13): under
    uvicorn's ``websockets-sansio`` protocol a frame goes straight to the
    socket (one unmasked WebSocket frame header and the payload), with no
    ASGI message, no await and no task switch; the frames of one turn of the
    event loop leave in one write (a ``result`` and its ``update`` are one
    system call, the dearest part of a frame here). It says False (the
    caller takes the ASGI path) whenever that would not be exactly what the
    ASGI send does: another server, the capture wrapper, a closing or paused
    socket. Frames held for the write always leave before an ASGI send."""

    __slots__ = ("_send", "_proto", "_held")

    def __init__(self, send: Any) -> None:
        self._send = send
        proto = getattr(send, "__self__", None)
        self._proto = proto if type(proto).__name__ == "WebSocketsSansIOProtocol" and all(
            hasattr(proto, a) for a in ("conn", "transport", "writable", "close_sent",
                                        "disconnected", "loop")) else None
        self._held: list[bytes] | None = None

    def write_now(self, data: bytes, binary: bool) -> bool:
        p = self._proto
        if p is None or p.close_sent or p.disconnected or not p.writable.is_set() \
                or p.conn.state is not _OPEN or p.transport.is_closing():
            return False
        n = len(data)
        op = 0x82 if binary else 0x81
        if n < 126:
            head = bytes((op, n))
        elif n < 65536:
            head = _H16(op, 126, n)
        else:
            head = _H64(op, 127, n)
        if self._held is None:
            self._held = [head, data]
            p.loop.call_soon(self._write_held)
        else:
            self._held += (head, data)
        return True

    def _write_held(self) -> None:
        held, self._held = self._held, None
        p = self._proto
        if held and p is not None and not p.transport.is_closing():
            p.transport.write(b"".join(held))

    async def send_text(self, data: str) -> None:
        self._write_held()
        await self._send({"type": "websocket.send", "text": data})

    async def send_bytes(self, data: bytes) -> None:
        self._write_held()
        await self._send({"type": "websocket.send", "bytes": data})

    async def close(self, code: int, reason: str) -> None:
        self._write_held()
        await self._send({"type": "websocket.close", "code": code, "reason": reason})

    def abort(self) -> None:
        """Drop the socket at once, unsent bytes and all (a client that does
        not read: Connection.close)."""
        if self._proto is not None:  # a graceful close would wait for the buffer
            self._proto.transport.abort()


async def websocket(gw: Gateway, scope: dict[str, Any], receive: Any, send: Any) -> None:
    if gw.recorder is not None:
        receive, send = gw.recorder.wrap(receive, send)
    first = await receive()
    if first["type"] != "websocket.connect":
        return
    opened = now_ms()  # the order sockets came in (Connection.opened_at)
    # the first of ours the client offers, in its order of preference (the
    # protobuf one was taken whenever offered: fuzz finding)
    offered = scope.get("subprotocols") or []
    chosen = next((p for p in offered if p in (codec.PROTO_SUBPROTOCOL, codec.JSON_SUBPROTOCOL)),
                  None)
    proto = chosen == codec.PROTO_SUBPROTOCOL
    await send({"type": "websocket.accept", "subprotocol": chosen})
    # (no token from the address: a secret in a URL is logged by proxies;
    # the hello frame carries it, docs/websocket.md 1.1)
    conn = Connection(gw, AsgiTransport(send), proto, opened)
    gw.conns.add(conn)
    m.CONNECTIONS.inc()
    try:
        while True:
            msg = await receive()
            if msg["type"] == "websocket.receive":
                data = msg.get("text")
                await conn.on_frame(data if data is not None else msg.get("bytes") or b"")
            elif msg["type"] == "websocket.disconnect":
                conn.gone = True  # (its frames still waiting are handled: settle)
                break
    finally:
        try:
            # its lobby requests first (an Away after the queue sent before
            # it), bounded; meanwhile still one of gw.conns, for a shutdown's
            # going_away to finish it (review finding)
            await asyncio.wait_for(conn.settle(), SETTLE_S)
        except TimeoutError:
            log.warning("lobby requests still unanswered at a socket's end")
        finally:  # cancelled too (a shutdown): the session saved, the game and lobby told
            m.CONNECTIONS.dec()
            gw.conns.discard(conn)
            await conn.finish()


class GuestIn(BaseModel):
    nickname: str


class GuestOut(BaseModel):
    player: str
    nickname: str
    token: str
    expires_ms: int
    refresh: str  # the lasting credential for local storage (docs/websocket.md 1.1)


def create_app(settings: Settings | None = None) -> Any:
    gw = Gateway(settings or Settings.from_env("gateway"))

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await gw.start()  # "gateway ready" is logged once the port listens (__main__)
        try:
            yield
        finally:
            await gw.stop()

    # the API's pages only in a local run (TTANJIT_DEV=1): they run a CDN's
    # script, unpinned, on the origin that keeps the players' lasting
    # credentials (security audit); /openapi.json describes the API anywhere
    pages = gw.s.dev
    api = FastAPI(title="ttanjit gateway", version="1",
                  description="Guest sign-in and health. The game protocol is the "
                              "WebSocket at /ws (docs/websocket.md).", lifespan=lifespan,
                  docs_url="/docs" if pages else None, redoc_url="/redoc" if pages else None,
                  # an address with a slash too many is not_found like any
                  # other, not a bodyless 307 to it without (identity audit)
                  redirect_slashes=False)
    install_http_errors(api)  # {code, message} for every HTTP error, never {"detail"}

    cfg = gw.s
    signups = Attempts(cfg.signup_per_min / 60, cfg.signup_burst) \
        if cfg.signup_burst > 0 else None  # per client address (docs/websocket.md 1)

    @api.post("/api/guest", response_model=GuestOut,
              responses={400: {"description": "bad_nickname"},
                         429: {"description": "too_many_signups"},
                         503: {"description": "store_unavailable (JetStream away)"}})
    async def guest(body: GuestIn, request: Request) -> Any:
        """Guest sign-in: a new player id and a signed token for the WebSocket;
        by default 30 at once per client address, then one every 2 s (429
        ``too_many_signups`` with ``Retry-After``; ``TTANJIT_SIGNUP_*``)."""
        try:
            nick = clean_nickname(body.nickname)
        except FrameError as e:
            return refusal(e.code, 400)
        address = client_address(request)
        limit = signups if counted_address(address, "x-forwarded-for" in request.headers) else None
        if limit is not None:
            wait = limit.take(address, time.monotonic())
            if wait:
                return refusal("too_many_signups", 429, headers={"Retry-After": str(math.ceil(wait))})
        player = new_player_id()
        try:  # the lasting identity (issue 15): a refresh family and the nickname
            await account.ready()
            assert account.ids is not None
            await account.ids.set_nickname(player, nick, now_ms())
            refresh = await account.ids.create(player, now_ms())
        except (NatsError, TimeoutError) as exc:
            # JetStream away: no sign-in rather than a guest who is forgotten
            # when the 1-hour token expires (no game can start meanwhile)
            log.warning("no lasting identity for a new guest: %r", exc)
            if limit is not None:  # nobody was made: the try is not counted (review finding)
                limit.give_back(address, time.monotonic())
            return store_unavailable()
        token, ident = gw.tokens.issue(player, nick, now_ms(), refresh.split(".")[0])
        return GuestOut(player=ident.player, nickname=nick, token=token,
                        expires_ms=ident.expires_ms, refresh=refresh)

    @api.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process serves HTTP."""
        return {"status": "ok"}

    @api.get("/readyz")
    async def readyz() -> Response:
        """Readiness: connected to NATS and started. (Not whether it is full:
        a gateway out of its Service serves no sign-in or page either, and
        every gateway full would leave the Service none — the ingress's 503
        instead of the refusal the client waits out: review finding.)"""
        ok = gw.ready and gw.nc is not None and gw.nc.is_connected
        return JSONResponse({"status": "ready" if ok else "not_ready",
                             "connections": len(gw.conns), "players": len(gw.places),
                             "full": gw.full()}, status_code=200 if ok else 503)

    account = install_account(api, gw)  # issue 15's routes, before the client's mount

    if (STATIC / "index.html").exists():
        api.mount("/", ClientFiles(directory=STATIC, html=True), name="client")
    else:
        @api.get("/", response_class=HTMLResponse)
        async def index() -> HTMLResponse:
            """The web client (a placeholder until it is built)."""
            return HTMLResponse(PLACEHOLDER, media_type="text/html; charset=utf-8")

    # CSP and nosniff (gateway/headers.py); no body over 16 KiB (httperrors.py)
    http = with_security_headers(with_body_limit(api))

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and scope.get("path") == "/ws":
            await websocket(gw, scope, receive, send)
        else:
            await http(scope, receive, send)

    app.gateway = gw  # type: ignore[attr-defined]
    return app
