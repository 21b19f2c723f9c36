"""RULES.md 4 when a gateway dies without a word (docs/protocol.md 2.1): a
gateway killed outright never says ``disconnect`` for its players, and
their seats stayed connected for good — no bot after 60 s, no pause, no
abandonment. The shard asks the gateways its players are routed through
whether they are still there, and marks away the players of one that NATS
says nobody listens for; a gateway that answers, or that does not answer
(busy, an older release), is left alone, and a player marked away whose
command or sync comes through a gateway after all is back.

Here the gateways are the test's own NATS subscriptions (or none), as the
shard sees a gateway: a route from a command's or sync's ``gw``."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any

import nats
import orjson
import pytest
import websockets
from conftest import Proc, Services, freeze
from shardkit import RecordTail, create_game, metric, metrics_text, player_id, raw_request, until
from wsclient import WSClient, sign_in, sign_out, two_in_a_room

from ttanjit.common.nats import GAMES_BUCKET
from ttanjit.common.natsserver import free_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PREFIX = "ttanjit.v1"
SECRET = "test-secret"


def lobby(svc: Services, gateways: int, env: dict[str, str],
          nats_urls: dict[int, str] | None = None) -> tuple[Proc, list[Proc], list[str]]:
    """A matchmaker (with ``env``) and ``gateways`` gateways (gateway i on
    ``nats_urls[i]`` if given): them and the gateways' HTTP addresses."""
    mm = svc.start("matchmaker", name="matchmaker", env={"TTANJIT_TEST_OPTIONS": "1", **env})
    gws = [svc.start("gateway", name=f"gateway-{i}", env={
        "TTANJIT_MATCHMAKER_ADDR": f"127.0.0.1:{mm.ports['grpc']}",
        "TTANJIT_TOKEN_SECRET": SECRET,
        **({"TTANJIT_NATS_URL": (nats_urls or {})[i]} if i in (nats_urls or {}) else {})})
        for i in range(gateways)]
    return mm, gws, [f"http://127.0.0.1:{g.ports['http']}" for g in gws]


async def room_and_queue(host_at: str, guest_at: str, waiting_at: str
                         ) -> tuple[WSClient, WSClient, WSClient]:
    """방장 and 손님 in a room, 대기 waiting in the quick-match queue (of
    4, no bots for 10 minutes), each on the gateway at the address given."""
    host = await WSClient.signed_in(host_at, "방장")
    guest = await WSClient.signed_in(guest_at, "손님")
    waiting = await WSClient.signed_in(waiting_at, "대기")
    await two_in_a_room(host, guest)
    await waiting.send({"type": "queue", "game": "penalty_rows", "seats": 4})
    await waiting.wait_type("queued")
    return host, guest, waiting


class Cuttable:
    """A TCP proxy to NATS that can be cut (every connection closed, none
    taken) and mended: a gateway cut off from NATS alone, alive. It runs
    on an event loop of its own, in a thread (the test's loop waits in
    blocking calls while services start)."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self.server: asyncio.Server | None = None
        self.open: set[asyncio.StreamWriter] = set()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def _run(self, coro: Any) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    def mend(self) -> None:
        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                w.close()

        async def serve(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
            sr, sw = await asyncio.open_connection("127.0.0.1", self.target_port)
            self.open.update((cw, sw))
            await asyncio.gather(pipe(cr, sw), pipe(sr, cw))

        async def start() -> None:
            self.server = await asyncio.start_server(serve, "127.0.0.1", self.port)
        self._run(start())

    def cut(self) -> None:
        async def stop() -> None:
            assert self.server is not None
            self.server.close()
            for w in self.open:
                w.close()
            self.open.clear()
        self._run(stop())

    def close(self) -> None:
        """Stop it, its thread gone before the test goes on (CPython 3.11's
        compiler, for pytest's assertion rewriting, is not safe beside a
        thread still running: a SystemError at exit)."""
        self.cut()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def presence_inputs(tail: RecordTail) -> list[tuple[int, str, str | None]]:
    return [(e["seat"], e["action"]["type"], e.get("by")) for e in tail.entries
            if e.get("action", {}).get("type") in ("disconnect", "reconnect")]


async def test_players_of_a_gateway_gone_are_marked_away_and_come_back(
        svc: Services) -> None:
    shard = svc.start("shard", name="shard-a")
    nc = await nats.connect(svc.nats_url)
    pids = [player_id(str(i)) for i in range(5)]
    gid = await create_game(shard.ports["grpc"], "penalty_rows",
                            [{"kind": "human", "player_id": p} for p in pids], {"rounds": 1}, 5)
    tail = await RecordTail(nc, gid).start()

    # the live gateway answers every ask; the older one hears them and never
    # answers (both get their players' bursts there too: no reply subject)
    asked = {"live": 0, "old": 0}

    async def live(msg: Any) -> None:
        if msg.reply:
            asked["live"] += 1
            await msg.respond(b"")

    async def old(msg: Any) -> None:
        if msg.reply:
            asked["old"] += 1
    await nc.subscribe(f"{PREFIX}.gw.gwlive.games", cb=live)
    await nc.subscribe(f"{PREFIX}.gw.gwold.games", cb=old)
    await nc.flush()

    # routes, as a gateway's syncs set them: seats 0 and 4 through gateways
    # nobody listens for (killed), 1 the live one, 3 the older one, 2 none
    for seat, gw in ((0, "gwdead0"), (1, "gwlive"), (3, "gwold"), (4, "gwdead4")):
        got = await raw_request(nc, f"{PREFIX}.game.{gid}.sync", orjson.dumps(
            {"player": pids[seat], "last_seq": 0, "gw": gw}))
        assert got.get("view"), got
    await raw_request(nc, f"{PREFIX}.game.{gid}.sync",
                      orjson.dumps({"player": pids[2], "last_seq": 0}))

    # the gone gateways' players are marked away, as their gateway would
    # have: recorded, "by" the shard
    async def marked() -> bool:
        await tail.caught_up()
        return {(0, "disconnect", "shard"), (4, "disconnect", "shard")} <= set(
            presence_inputs(tail))
    deadline = time.monotonic() + 30
    while not await marked():
        assert time.monotonic() < deadline, presence_inputs(tail)
        await asyncio.sleep(0.1)
    # and nobody else: the live and the older gateway were asked (more
    # rounds than it takes to find one gone) and kept their players
    await until(lambda: asked["live"] >= 3 and asked["old"] >= 3, 30, "more rounds of asks")
    await tail.caught_up()
    assert sorted(presence_inputs(tail)) == [(0, "disconnect", "shard"),
                                             (4, "disconnect", "shard")]
    eng = tail.hosted.engine  # type: ignore[union-attr]
    assert eng.presence.connected == [False, True, True, True, False]
    assert not eng.presence.paused  # others are here: nothing waits
    port = shard.ports["metrics"]
    assert metric(metrics_text(port), "ttanjit_shard_gateways_gone_total") == 2.0
    assert metric(metrics_text(port), "ttanjit_shard_players_marked_away_total") == 2.0

    # seat 0 was on a gateway after all (a sync through one): back
    got = await raw_request(nc, f"{PREFIX}.game.{gid}.sync", orjson.dumps(
        {"player": pids[0], "last_seq": 0, "gw": "gwlive"}))
    assert got.get("view"), got
    # seat 4's next move comes through one: back first, then the move taken
    await tail.caught_up()
    select = next(a for a in eng.legal_actions(4) if a["type"] == "select")
    msg = await nc.request(f"{PREFIX}.game.{gid}.cmd", orjson.dumps(
        {"player": pids[4], "cmd_id": "c-back", "action": select, "gw": "gwlive"}), timeout=5)
    reply = orjson.loads(msg.data.split(b"\n")[0])  # (the mover's own part follows it)
    assert reply["ok"] is True, reply
    await tail.caught_up()
    assert presence_inputs(tail)[2:] == [(0, "reconnect", "shard"), (4, "reconnect", "shard")]
    assert tail.entries[-1]["action"] == select and tail.entries[-1]["cmd"] == "c-back"
    assert eng.presence.connected == [True] * 5
    await nc.close()


async def test_a_killed_gateways_players_get_a_bot_and_a_game_left_by_all_is_abandoned(
        svc: Services) -> None:
    """The whole way, real gateways killed with kill -9 (RULES.md 4): the
    host's gateway dies mid-game — the guest, on another gateway, sees the
    host's seat away and, the (shortened) absence later, a bot take it; then
    the guest's gateway dies too — every human away, the game pauses and,
    the (shortened) abandonment time later, ends ``abandoned``. Before, both
    seats stayed connected: no bot, no pause, a game played out by timeouts."""
    svc.start("shard", name="shard-a", env={"TTANJIT_ABSENCE_MS": "3000",
                                            "TTANJIT_ABANDON_MS": "3000"})
    svc.start("bots", ready="ready")
    mm, gws, http = lobby(svc, 3, {})
    host = await WSClient.signed_in(http[0], "방장")
    guest = await WSClient.signed_in(http[1], "손님")
    await two_in_a_room(host, guest)
    await host.send({"type": "room_start"})
    gid = (await host.wait_type("matched", 20))["game_id"]
    host_seat = 1 - (await guest.wait_type("matched", 20))["seat"]
    for c in (host, guest):
        await c.wait_for(lambda f: f.get("type") == "view" and f["game_id"] == gid)
    # both have played through their gateways (routes known, links open)
    await guest.send({"type": "sync", "game_id": gid})
    await guest.wait_for(lambda f: f.get("type") == "view" and f["game_id"] == gid)

    gws[0].kill()  # the host's gateway: no goodbye for the host
    gone = await guest.wait_event(lambda e: e["type"] == "disconnected", 20, game_id=gid)
    assert gone["event"] == {"type": "disconnected", "seat": host_seat, "paused": False}
    taken = await guest.wait_event(lambda e: e["type"] == "substituted", 20, game_id=gid)
    assert taken["event"]["seat"] == host_seat and taken["event"]["reason"] == "absent"

    gws[1].kill()  # and now the guest's
    nc = await nats.connect(svc.nats_url)
    kv = await nc.jetstream().key_value(GAMES_BUCKET)
    deadline = time.monotonic() + 40
    while True:
        doc = orjson.loads((await kv.get(gid)).value or b"{}")
        if doc.get("state") == "finished":
            break
        assert time.monotonic() < deadline, doc
        await asyncio.sleep(0.2)
    assert doc["result"]["ended_by"] == "abandoned", doc

    # the guest, back on the gateway left, sees how it ended
    back = WSClient(http[2], guest.ident)
    await back.connect()
    await back.hello({"session": guest.session, "last_seq": guest.last_seq})
    over = await back.wait_event(lambda e: e["type"] in ("game_over", "game_ended"), 20,
                                 game_id=gid)
    assert over["event"]["ended_by"] == "abandoned"
    await back.close()
    await nc.close()


async def test_a_killed_gateways_lobby_players_leave_the_queue_and_their_rooms(
        svc: Services) -> None:
    """The lobby's side (docs/protocol.md 4.1): a host in an open room and a
    player waiting in the quick-match queue, both on a gateway killed with
    kill -9. The guest, on another gateway, sees the host's seat away and,
    the (shortened) 60 s later, the host gone from the room; the queued
    player's ticket is gone (back elsewhere, they are not queued). Before,
    both stayed for good: the guest waited on a host who would never press
    시작, and the ticket would have been matched into a game nobody came to."""
    svc.start("shard", name="shard-a")
    mm, gws, http = lobby(svc, 2, {"TTANJIT_ROOM_AWAY_MS": "3000",
                                   "TTANJIT_BOT_WAIT_MS": "600000"})
    host, guest, waiting = await room_and_queue(http[0], http[1], http[0])
    hp = host.ident["player"]

    def host_member(frame: dict[str, Any]) -> dict[str, Any] | None:
        return next((m for m in frame["room"]["members"] if m.get("player") == hp), None)

    gws[0].kill()
    await guest.wait_for(lambda f: f.get("type") == "room"
                         and (host_member(f) or {}).get("away") is True, 25)
    await guest.wait_for(lambda f: f.get("type") == "room" and host_member(f) is None, 20)

    back = WSClient(http[1], waiting.ident)
    await back.connect()
    welcome = await back.hello()
    assert "queued" not in welcome, welcome
    await back.close()
    assert metric(metrics_text(mm.ports["metrics"]), "ttanjit_mm_gateways_gone_total") == 1.0
    await guest.close()


async def test_a_room_member_away_at_the_start_is_away_in_the_game(svc: Services) -> None:
    """RULES.md 4 from a game's first moment: a room member whose connection
    closed (the room shows them away, their seat waiting its 60 s) when the
    host presses 시작 sits in the game away — no gateway would say so, it
    told the lobby — so the (shortened) absence later a bot takes the seat.
    Before, the seat counted as connected: its turns ran out one by one, no
    bot came, and a game left by the rest never paused nor was abandoned."""
    svc.start("shard", name="shard-a", env={"TTANJIT_ABSENCE_MS": "3000"})
    svc.start("bots", ready="ready")
    _, _, http = lobby(svc, 1, {})
    host = await WSClient.signed_in(http[0], "방장")
    guest = await WSClient.signed_in(http[0], "손님")
    await two_in_a_room(host, guest, "penalty_rows", 4)
    gp = guest.ident["player"]
    await guest.close()
    await host.wait_for(lambda f: f.get("type") == "room" and any(
        m.get("player") == gp and m.get("away") for m in f["room"]["members"]), 15)
    await host.send({"type": "room_start"})
    matched = await host.wait_type("matched", 20)
    gid = matched["game_id"]
    guest_seat = next(p["seat"] for p in matched["players"] if p.get("nickname") == "손님")
    # (marked before the host's first view: it shows the seat away)
    view = (await host.wait_for(lambda f: f.get("type") == "view" and f["game_id"] == gid))
    seats = view["view"]["seats"]
    assert seats[guest_seat]["connected"] is False and seats[matched["seat"]]["connected"]
    taken = await host.wait_event(lambda e: e["type"] == "substituted", 20, game_id=gid)
    assert taken["event"]["seat"] == guest_seat and taken["event"]["reason"] == "absent"
    await host.close()


async def test_a_gateway_cut_off_from_nats_alone_has_its_lobby_players_back(
        svc: Services) -> None:
    """A live gateway whose NATS connection is cut for longer than the
    lobby's 10 s (its WebSockets and lobby calls fine) is taken for gone:
    its room guest is marked away and its queued player's ticket goes. When
    it answers again, its players are back — the guest's room seat waits no
    more — and the queued player, whose first word went to a gateway NATS
    could not reach, is told the ticket went (adversarial review: before,
    the guest was let go from the room 60 s later though connected, and the
    queue banner spun on for a ticket that was gone)."""
    svc.start("shard", name="shard-a")
    assert svc.nats is not None
    proxy = Cuttable(svc.nats.port)
    proxy.mend()
    try:
        await cut_off_and_back(svc, proxy)
    finally:
        proxy.close()


async def cut_off_and_back(svc: Services, proxy: Cuttable) -> None:
    mm, _, http = lobby(svc, 2, {"TTANJIT_BOT_WAIT_MS": "600000"},
                        {1: svc.url_at(proxy.port)})
    host, guest, waiting = await room_and_queue(http[0], http[1], http[1])
    gp = guest.ident["player"]

    def guest_away(frame: dict[str, Any]) -> bool | None:
        if frame.get("type") != "room":
            return None
        m = next((m for m in frame["room"]["members"] if m.get("player") == gp), None)
        return m is not None and bool(m.get("away"))

    proxy.cut()
    await host.wait_for(lambda f: guest_away(f) is True, 30)
    proxy.mend()
    await host.wait_for(lambda f: guest_away(f) is False, 30)  # back, still in the room
    said = await waiting.wait_type("queue_cancelled", 30)
    assert said["game"] == "penalty_rows" and said["reason"] == "away"
    assert metric(metrics_text(mm.ports["metrics"]), "ttanjit_mm_gateways_revived_total") == 1.0
    # and the room goes on with both (nobody let go at the 60 s)
    await host.send({"type": "room_start"})
    assert (await guest.wait_type("matched", 20))["game_id"]
    for c in (host, guest, waiting):
        await c.close()


async def test_a_sign_out_unheard_while_cut_off_closes_the_socket_once_back(
        svc: Services) -> None:
    """docs/websocket.md 4, 4004: a gateway cut off from NATS when the
    player signed out on another gateway never heard the family's removal
    (nothing is kept for an absent subscriber), and its socket played on as
    the player signed out (second review). Back on NATS, it asks for its
    sockets' families and closes those that fell."""
    assert svc.nats is not None
    proxy = Cuttable(svc.nats.port)
    proxy.mend()
    try:
        _, gws, http = lobby(svc, 2, {}, {1: svc.url_at(proxy.port)})
        player = await WSClient.signed_in(http[1], "끊긴곳")
        proxy.cut()
        assert sign_out(http[0], player.ident["refresh"]) == {"revoked": True}
        await asyncio.sleep(2)
        await player.send({"type": "ping", "client_ms": 1})
        await player.wait_type("pong")  # (cut off: not heard yet)
        proxy.mend()
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await player.wait_type("never", timeout=30)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004
        assert metric(metrics_text(gws[1].ports["metrics"]), "ttanjit_gateway_signed_out_total") == 1
    finally:
        proxy.close()


async def test_a_hello_let_in_unchecked_is_checked_again(svc: Services) -> None:
    """A hello whose refresh family JetStream does not answer for within a
    second is let in (a slow moment holds no one up), and asked for again a
    few seconds later: a token left after 로그아웃, trying in such a moment,
    was let in for good (second review). Closed with 4004."""
    assert svc.nats is not None and svc.nats.proc is not None
    _, gws, http = lobby(svc, 1, {})
    ident = sign_in(http[0], "느린순간")
    assert sign_out(http[0], ident["refresh"]) == {"revoked": True}
    left = WSClient(http[0], ident)
    await left.connect()
    freeze(svc.nats.proc)  # JetStream slow: no answer
    try:
        await left.send({"type": "hello", "token": ident["token"]})
        # until the gateway gave up asking (a fixed 2.5 s was not always
        # enough on a busy machine: the hello was read after NATS came back)
        deadline = time.monotonic() + 20
        while "a hello's refresh family not checked" not in gws[0].log():
            assert time.monotonic() < deadline, gws[0].log()
            await asyncio.sleep(0.1)
    finally:
        svc.nats.proc.send_signal(signal.SIGCONT)
    got = await left.recv(20)
    assert got["type"] == "welcome", got  # let in, unchecked
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await left.wait_type("never", timeout=30)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004
