"""Every lobby call of a player's connection names it (when it opened);
an ``Away`` told again after its first try went unanswered (the lobby
changing leaders) says how long ago it closed. The lobby ignores the
``Away`` of a connection when one of the player opened later called — on
any gateway (docs/protocol.md 4.1).

The matchmaker runs in this test's process on the session's nats-server,
served over a real gRPC server and called through the gateway's stub."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator

import grpc
import orjson
import pytest
import pytest_asyncio
from nats.aio.client import Client

from ttanjit.common.config import Settings
from ttanjit.common.grpcutil import aio_server, opened_md
from ttanjit.matchmaker import service as mm_service
from ttanjit.matchmaker.service import Matchmaker, now_ms
from ttanjit.v1 import matchmaker_pb2 as pb
from ttanjit.v1 import matchmaker_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


@pytest_asyncio.fixture
async def lobby(nc: Client) -> AsyncIterator[tuple[Matchmaker, matchmaker_pb2_grpc.MatchmakerStub]]:
    kv = await nc.jetstream().create_key_value(bucket="away_ratings_" + secrets.token_hex(4))
    mm = Matchmaker(nc, kv, Settings())
    server, port = aio_server(0, "127.0.0.1")
    matchmaker_pb2_grpc.add_MatchmakerServicer_to_server(  # type: ignore[no-untyped-call]
        mm_service.Servicer(mm), server)
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield mm, matchmaker_pb2_grpc.MatchmakerStub(channel)  # type: ignore[no-untyped-call]
    finally:
        await channel.close()
        await server.stop(0)


def ref(player: str) -> pb.PlayerRef:
    return pb.PlayerRef(player=player, nickname=player[:8])


def age(since: float) -> int:
    """An Away told again: ms since the drop at ``since`` (time.monotonic)."""
    return int((time.monotonic() - since) * 1000)


async def test_an_away_told_again_is_ignored_once_the_player_was_back(
        lobby: tuple[Matchmaker, matchmaker_pb2_grpc.MatchmakerStub], nc: Client) -> None:
    """Audit finding: a drop while the lobby changed leaders went unheard
    (one 2 s try): a queued ticket stayed until matched, its seat then
    played by a bot, and a room kept the seat for good. Told again, it
    must not undo the player's return on a newer connection: its hello, or
    (its hello missed too) its first lobby request."""
    mm, stub = lobby
    host, guest, queued, requeued = (f"p-{n}-{secrets.token_hex(3)}"
                                     for n in ("host", "guest", "queued", "requeued"))
    first = now_ms() - 60_000  # the connections the players came with
    code = (await stub.CreateRoom(pb.CreateRoomRequest(player=ref(host), game="onecard",
                                                       seats=3), metadata=opened_md(first))).room.code
    assert not (await stub.JoinRoom(pb.JoinRoomRequest(player=ref(guest), code=code),
                                    metadata=opened_md(first))).error_code
    for p in (queued, requeued):
        assert not (await stub.Enqueue(pb.EnqueueRequest(player=ref(p), game="onecard", seats=4),
                                       metadata=opened_md(first))).error_code

    dropped = time.monotonic()  # their connections drop: the Aways go unanswered
    for p in (guest, queued):  # back on new connections (another gateway)
        await stub.GetPlayer(pb.PlayerRequest(player=p), metadata=opened_md(now_ms()))
    # one whose hello the lobby missed too: the client queues again at once
    await stub.Away(pb.PlayerRequest(player=requeued), metadata=opened_md(first))  # (as a first try)
    assert not (await stub.Enqueue(pb.EnqueueRequest(player=ref(requeued), game="onecard",
                                                     seats=4), metadata=opened_md(now_ms()))).error_code
    for p in (guest, queued, requeued):  # the drops' Aways, told again
        await stub.Away(pb.PlayerRequest(player=p, away_ms=age(dropped)), metadata=opened_md(first))
    assert guest not in mm.away and mm.rooms.room_of(guest) is not None
    assert queued in mm.queue.by_player and requeued in mm.queue.by_player

    # the newer connections drop: taken, the seat's 60 s from the close
    sub = await nc.subscribe(mm.subjects.player_lobby(queued))
    dropped, dropped_ms = time.monotonic(), now_ms()
    await asyncio.sleep(1.0)
    t1 = now_ms()
    for p in (guest, queued):
        await stub.Away(pb.PlayerRequest(player=p, away_ms=age(dropped)),
                        metadata=opened_md(mm.back[p][0]))
    t2 = now_ms()
    # the close's time (1 s before), give or take the calls' own time: not
    # when it was told
    since = mm.away[guest]
    assert dropped_ms - 5 <= since <= dropped_ms + (t2 - t1) + 5, (since - dropped_ms, t2 - t1)
    assert since < t1, (since - dropped_ms, t2 - t1)
    assert queued not in mm.queue.by_player and queued not in mm.back
    # told late, the queued player is told (a connection of theirs the
    # lobby missed would wait for a match for good)
    told = orjson.loads((await sub.next_msg(timeout=5)).data)
    assert told == {"type": "queue_cancelled", "game": "onecard", "reason": "away",
                    "message": "연결이 끊겨 있는 동안 빠른 대전 대기가 취소됐어요."}
    # an older connection's end told later does not bring the seat's wait forward
    await stub.Away(pb.PlayerRequest(player=guest, away_ms=age(dropped) + 30_000),
                    metadata=opened_md(first))
    assert mm.away[guest] == since
    await mm.expire_away(since + 59_999)
    assert mm.rooms.room_of(guest) is not None
    await mm.expire_away(since + 60_000)
    assert mm.rooms.room_of(guest) is None and mm.rooms.room_of(host) is not None

    # a first try takes the ticket without a word (a reload's new tab,
    # queueing again, would take it for its own)
    assert not (await stub.Enqueue(pb.EnqueueRequest(player=ref(queued), game="onecard",
                                                     seats=4), metadata=opened_md(now_ms()))).error_code
    await stub.Away(pb.PlayerRequest(player=queued), metadata=opened_md(mm.back[queued][0]))
    assert queued not in mm.queue.by_player
    with pytest.raises(TimeoutError):
        await sub.next_msg(timeout=0.5)
    await sub.unsubscribe()


async def test_an_older_connections_end_leaves_a_newer_ones_player_queued(
        lobby: tuple[Matchmaker, matchmaker_pb2_grpc.MatchmakerStub]) -> None:
    """An older connection's end told after a newer one's call (a socket
    given up whose end its gateway saw late, docs/websocket.md 4) is not
    the player's going: it took them out of the queue the newer one waits
    in. The newer one's end is."""
    mm, stub = lobby
    p = f"p-tabs-{secrets.token_hex(3)}"
    older, newer = now_ms() - 5000, now_ms()
    for opened in (newer, older):  # (heard in any order)
        await stub.GetPlayer(pb.PlayerRequest(player=p), metadata=opened_md(opened))
    assert not (await stub.Enqueue(pb.EnqueueRequest(player=ref(p), game="onecard", seats=4),
                                   metadata=opened_md(newer))).error_code
    await stub.Away(pb.PlayerRequest(player=p), metadata=opened_md(older))
    assert p in mm.queue.by_player
    await stub.Away(pb.PlayerRequest(player=p), metadata=opened_md(newer))
    assert p not in mm.queue.by_player and p not in mm.back
    # an Away that names no connection (a gateway before this) is taken as ever
    assert not (await stub.Enqueue(pb.EnqueueRequest(player=ref(p), game="onecard", seats=4),
                                   metadata=opened_md(now_ms()))).error_code
    await stub.Away(pb.PlayerRequest(player=p))
    assert p not in mm.queue.by_player


def test_the_lobby_forgets_connections_heard_long_ago() -> None:
    """:attr:`Matchmaker.back` keeps what an Away told again may need
    (``BACK_KEPT_MS``), not every player ever heard; a player's latest
    connection is the latest opened, whatever order the hellos came in."""
    mm = Matchmaker.__new__(Matchmaker)
    mm.back = {}
    t = 1_000_000
    mm.heard("a", 500, t)
    mm.heard("b", 600, t + 1000)
    mm.heard("a", 400, t + 2000)  # an older connection's hello, heard late
    assert mm.back["a"] == (500, t + 2000)
    mm.heard("c", 700, t + 1000 + mm_service.BACK_KEPT_MS)
    assert list(mm.back) == ["a", "c"]
    assert mm.outlived("a", 499) and not mm.outlived("a", 500) and not mm.outlived("b", 0)
    mm.gone("a", 499)  # an older connection's end: the newer one stays
    assert "a" in mm.back
    mm.gone("a", 500)
    assert "a" not in mm.back


async def test_the_room_sees_a_member_away_and_back(
        lobby: tuple[Matchmaker, matchmaker_pb2_grpc.MatchmakerStub], nc: Client) -> None:
    """RULES.md 4: a room seat waits 60 s for a player whose connection
    went. The others saw nothing of it — a host gone for good read as one
    still there until the seat let them go (rooms audit). The room frame
    marks the member ``away`` (docs/websocket.md 2) when their connection
    goes, and not once they are back; so does the room a lobby call answers."""
    mm, stub = lobby
    host, guest = (f"p-{n}-{secrets.token_hex(3)}" for n in ("host", "guest"))
    code = (await stub.CreateRoom(pb.CreateRoomRequest(player=ref(host), game="onecard",
                                                       seats=3))).room.code
    assert not (await stub.JoinRoom(pb.JoinRoomRequest(player=ref(guest), code=code))).error_code
    sub = await nc.subscribe(mm.subjects.player_lobby(guest))

    def member(frame: dict, player: str) -> dict:
        return next(m for m in frame["room"]["members"] if m.get("player") == player)

    try:
        await stub.Away(pb.PlayerRequest(player=host))
        told = orjson.loads((await sub.next_msg(timeout=5)).data)
        assert told["type"] == "room" and member(told, host).get("away") is True
        assert "away" not in member(told, guest)
        # the room a lobby call answers marks them too (the guest's welcome)
        state = await stub.GetPlayer(pb.PlayerRequest(player=guest))
        assert [m.away for m in state.room.members if m.player == host] == [True]
        await stub.Away(pb.PlayerRequest(player=host))
        with pytest.raises(TimeoutError):  # told again: said once
            await sub.next_msg(timeout=0.5)
        mine = await nc.subscribe(mm.subjects.player_lobby(host))
        await stub.GetPlayer(pb.PlayerRequest(player=host), metadata=opened_md(now_ms()))
        told = orjson.loads((await sub.next_msg(timeout=5)).data)
        assert told["type"] == "room" and "away" not in member(told, host)
        # not to the one back: their room comes in their welcome (a frame
        # before it broke the welcome's seq: review)
        with pytest.raises(TimeoutError):
            await mine.next_msg(timeout=0.5)
        await mine.unsubscribe()
        # back by another lobby call than the hello's (an Away told late
        # outlived it): the same
        await stub.Away(pb.PlayerRequest(player=host))
        assert member(orjson.loads((await sub.next_msg(timeout=5)).data), host).get("away") is True
        await stub.AddBot(pb.RoomRequest(player=host, level="easy"), metadata=opened_md(now_ms()))
        frames = [orjson.loads((await sub.next_msg(timeout=5)).data) for _ in range(2)]
        assert "away" not in member(frames[-1], host) and host not in mm.away
    finally:
        await sub.unsubscribe()
