"""An ``Away`` the gateway tells the lobby again (its first try went
unanswered: the lobby was changing leaders) carries the drop's time; the
lobby takes it unless the player was heard since — a ``hello``'s
GetPlayer or a lobby request, on any gateway (docs/protocol.md 4.1).

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
from ttanjit.common.grpcutil import aio_server
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
    must not undo what the player did since they came back."""
    mm, stub = lobby
    host, guest, queued = (f"p-{n}-{secrets.token_hex(3)}" for n in ("host", "guest", "queued"))
    code = (await stub.CreateRoom(pb.CreateRoomRequest(player=ref(host), game="onecard",
                                                       seats=3))).room.code
    assert not (await stub.JoinRoom(pb.JoinRoomRequest(player=ref(guest), code=code))).error_code

    dropped = time.monotonic()  # both drop here; their Away goes unanswered
    await asyncio.sleep(0.02)
    await stub.GetPlayer(pb.PlayerRequest(player=guest))  # back, on another gateway
    rep = await stub.Enqueue(pb.EnqueueRequest(player=ref(queued), game="onecard", seats=4))
    assert not rep.error_code  # back too: it queues
    for p in (guest, queued):  # the drop's Away, told again
        await stub.Away(pb.PlayerRequest(player=p, away_ms=age(dropped)))
    assert guest not in mm.away and mm.rooms.room_of(guest) is not None
    assert queued in mm.queue.by_player

    # a drop after the player was back is taken, from when it was
    dropped = time.monotonic()
    sub = await nc.subscribe(mm.subjects.player_lobby(queued))
    await asyncio.sleep(0.3)
    before = now_ms()
    await stub.Away(pb.PlayerRequest(player=guest, away_ms=age(dropped)))
    await stub.Away(pb.PlayerRequest(player=queued, away_ms=age(dropped)))
    since = mm.away[guest]
    assert before - 2000 < since < before - 150  # (the drop, 300 ms before)
    assert queued not in mm.queue.by_player
    # the queued player is told: had a second leader change kept their
    # back from this leader, their 빠른 대전 would wait on for nothing
    told = orjson.loads((await sub.next_msg(timeout=5)).data)
    assert told == {"type": "queue_cancelled", "game": "onecard", "reason": "away",
                    "message": "연결이 끊겨 있는 동안 빠른 대전 대기가 취소됐어요."}
    await sub.unsubscribe()
    # the room seat waits 60 s from the drop (RULES.md 4), not from the telling
    await mm.expire_away(since + 59_999)
    assert mm.rooms.room_of(guest) is not None
    await mm.expire_away(since + 60_000)
    assert mm.rooms.room_of(guest) is None and mm.rooms.room_of(host) is not None

    # the first try carries no age (the lobby's "now"): taken though the
    # player's last lobby request came just before
    assert not (await stub.Enqueue(pb.EnqueueRequest(player=ref(queued), game="onecard",
                                                     seats=4))).error_code
    await stub.Away(pb.PlayerRequest(player=queued))
    assert queued not in mm.queue.by_player


def test_the_lobby_forgets_who_was_back_long_ago() -> None:
    """:attr:`Matchmaker.back` keeps what an Away told again may need
    (``BACK_KEPT_MS``), not every player ever heard."""
    mm = Matchmaker.__new__(Matchmaker)
    mm.back = {}
    t = 1_000_000
    mm.heard("a", t)
    mm.heard("b", t + 1000)
    mm.heard("a", t + 2000)  # heard again: the newest
    mm.heard("c", t + 1000 + mm_service.BACK_KEPT_MS)
    assert list(mm.back) == ["a", "c"]
    assert mm.back_since("a", t + 1999) and not mm.back_since("a", t + 2000)
    assert not mm.back_since("b", 0)
