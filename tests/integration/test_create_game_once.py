"""A placement makes one game, however its tries go (docs/protocol.md 4).

A CreateGame whose answer is lost — its 5 s deadline passed while JetStream
was slow, or the connection broke — used to leave a half-made game (its
owner entry and record began, never served; a ghost for the next shard
that claims it) or a whole one nobody was told of, while the matchmaker's
next try made a second game on another shard. Now the matchmaker chooses
the game id once per placement and every try asks for it: the shard
answers the same request again with the game made (or waits for its
making, which the caller going away no longer cuts short), another shard
names the id's owner, and an id whose record an undone making began is
refused so the placement goes on under a new one.

The shards and the matchmaker run in this test's process (so a making can
be slowed at its directory write) on the test's own nats-server; their
gRPC servers, NATS and JetStream are real."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
import nats
import orjson
import pytest
import pytest_asyncio
from conftest import Services
from nats.aio.client import Client
from shardkit import SUBJ, player_id

from ttanjit.common.config import Settings
from ttanjit.common.grpcutil import OWNER_MD
from ttanjit.common.ids import new_game_id
from ttanjit.common.nats import RECORDS_STREAM, kv_keys
from ttanjit.matchmaker import service as mm_service
from ttanjit.matchmaker.rooms import Seat
from ttanjit.matchmaker.service import Matchmaker, now_ms
from ttanjit.shard import grpc_api, records
from ttanjit.shard.service import Shard
from ttanjit.v1 import shard_pb2, shard_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


class Running:
    def __init__(self, shard: Shard, server: grpc.aio.Server, port: int) -> None:
        self.shard, self.server, self.port = shard, server, port

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def heartbeat(self, games: int = 0) -> dict[str, Any]:
        return {"shard": self.shard.id, "grpc": self.addr, "games": games, "players": 0,
                "capacity": 100, "draining": False}


@pytest_asyncio.fixture
async def shards(svc: Services) -> AsyncIterator[list[Running]]:
    out: list[Running] = []
    for name in ("shard-a", "shard-b"):
        shard = Shard(Settings(nats_url=svc.nats_url, shard_id=name))
        server, _, port = await grpc_api.serve(shard, 0, "127.0.0.1", lambda: None)
        shard.grpc_addr = f"127.0.0.1:{port}"
        await shard.start()
        out.append(Running(shard, server, port))
    try:
        yield out
    finally:
        for r in out:
            await r.shard.close()
            await r.server.stop(0)


@pytest_asyncio.fixture
async def nc(svc: Services) -> AsyncIterator[Client]:
    client = await nats.connect(svc.nats_url)
    try:
        yield client
    finally:
        await client.close()


def request(gid: str, player: str, bots: int = 1) -> shard_pb2.CreateGameRequest:
    return shard_pb2.CreateGameRequest(
        game="onecard", options_json="{}", game_id=gid,
        seats=[shard_pb2.SeatSpec(kind="human", player_id=player),
               *[shard_pb2.SeatSpec(kind="bot", level="easy") for _ in range(bots)]])


async def create(r: Running, req: shard_pb2.CreateGameRequest,
                 timeout: float = 10) -> shard_pb2.CreateGameResponse:
    async with grpc.aio.insecure_channel(r.addr) as ch:
        out: shard_pb2.CreateGameResponse = await shard_pb2_grpc.ShardServiceStub(ch).CreateGame(
            req, timeout=timeout)
        return out


async def refused(r: Running, req: shard_pb2.CreateGameRequest) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(r, req)
    return err.value


async def games_of(nc: Client, player: str) -> list[str]:
    """Every game with an owner entry (made, or begun and never undone)
    whose record seats ``player`` (listed by ``common.nats.kv_keys``:
    nats-py's ``KeyValue.keys()`` could end before its keys, and a CI run
    read none)."""
    js = nc.jetstream()
    out = []
    for gid in await kv_keys(await js.key_value("ttanjit_owners")):
        if gid.startswith("shard."):  # shards' leases
            continue
        rec = await records.read(js, SUBJ.record(gid))
        if rec is not None and player in rec.header.get("players", {}):
            out.append(gid)
    return out


def hold_directory(shard: Shard, until: asyncio.Event | float) -> None:
    """The shard's makings wait at their directory write (after the owner
    entry and the record's header and claim) until the event is set, or
    for that many seconds."""
    put = shard.directory.put

    async def held_put(key: str, value: bytes) -> int:
        if isinstance(until, asyncio.Event):
            await until.wait()
        else:
            await asyncio.sleep(until)
        return await put(key, value)

    shard.directory.put = held_put  # type: ignore[method-assign]


async def owned(nc: Client, gid: str) -> str:
    """The shard the game's owner entry names, once there is one (10 s)."""
    owners = await nc.jetstream().key_value("ttanjit_owners")
    for _ in range(200):
        try:
            return str(orjson.loads((await owners.get(gid)).value)["shard"])
        except nats.js.errors.KeyNotFoundError:
            await asyncio.sleep(0.05)
    raise AssertionError(f"no owner entry for {gid}")


async def test_a_game_id_asked_again_answers_the_one_game(
        shards: list[Running], nc: Client) -> None:
    a, b = shards
    gid, p = new_game_id(), player_id("once")
    first = await create(a, request(gid, p))
    again = await create(a, request(gid, p))  # e.g. the first answer was lost
    assert (first.game_id, first.shard_id) == (again.game_id, again.shard_id) == (gid, "shard-a")

    # another shard names the owner rather than make a second game
    err = await refused(b, request(gid, p))
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err.details()
    assert dict(err.trailing_metadata() or ())[OWNER_MD] == "shard-a"
    # the same id asked for another table: taken
    err = await refused(a, request(gid, p, bots=2))
    assert err.code() == grpc.StatusCode.ALREADY_EXISTS, err.details()

    assert await games_of(nc, p) == [gid]
    assert gid in a.shard.rooms and gid not in b.shard.rooms
    rec = await records.read(nc.jetstream(), SUBJ.record(gid))
    assert rec is not None and rec.entries == []
    assert [m for _, m in rec.markers] == [{"claim": {
        "shard": "shard-a", "inc": a.shard.inc, "epoch": 1, "reason": "create",
        "origin_ms": rec.header["origin_ms"]}}]


async def test_a_making_whose_caller_went_away_is_made_and_answered_to_the_retry(
        shards: list[Running], nc: Client) -> None:
    a, b = shards
    held = asyncio.Event()
    hold_directory(a.shard, held)
    gid, p = new_game_id(), player_id("late")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await create(a, request(gid, p), timeout=2.0)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # the making goes on: another shard asked meanwhile names its owner ...
    assert await owned(nc, gid) == "shard-a"
    err2 = await refused(b, request(gid, p))
    assert err2.code() == grpc.StatusCode.FAILED_PRECONDITION, err2.details()
    assert dict(err2.trailing_metadata() or ())[OWNER_MD] == "shard-a"
    # ... and the owner, asked again, answers once the game is made
    retry = asyncio.create_task(create(a, request(gid, p)))
    await asyncio.sleep(0.2)
    assert not retry.done()  # it waits for the making
    held.set()
    rep = await retry
    assert (rep.game_id, rep.shard_id) == (gid, "shard-a")
    assert gid in a.shard.rooms and not b.shard.rooms
    assert await games_of(nc, p) == [gid]
    directory = await nc.jetstream().key_value("ttanjit_games")
    assert orjson.loads((await directory.get(gid)).value)["state"] == "live"


async def test_an_id_whose_record_an_undone_making_began_is_refused_and_left_clean(
        shards: list[Running], nc: Client) -> None:
    a, _ = shards
    gid, p = new_game_id(), player_id("undone")
    # what a making that failed after its header (and undid its owner entry)
    # leaves: a header of another deal, under the making's message id
    js = nc.jetstream()
    await js.publish(SUBJ.record(gid), orjson.dumps({
        "game": "onecard", "options": {"seats": 2}, "seats": [], "seed": 7, "game_id": gid,
        "players": {p: 0}, "origin_ms": now_ms() - 60_000}),
        headers={records.MSG_ID: f"{gid}:h"}, stream=RECORDS_STREAM)
    err = await refused(a, request(gid, p))
    assert err.code() == grpc.StatusCode.ALREADY_EXISTS, err.details()
    assert gid not in a.shard.rooms
    owners = await js.key_value("ttanjit_owners")
    with pytest.raises(nats.js.errors.KeyNotFoundError):
        await owners.get(gid)  # undone: no owner entry left for a claim to find


@pytest_asyncio.fixture
async def mm(svc: Services, nc: Client) -> Matchmaker:
    kv = await nc.jetstream().create_key_value(bucket="test_ratings")
    return Matchmaker(nc, kv, Settings(nats_url=svc.nats_url))


@contextlib.asynccontextmanager
async def beating(mm: Matchmaker, *loads: tuple[Running, int]) -> AsyncIterator[None]:
    """The shards' heartbeats reach the matchmaker (each 0.5 s, with the
    games they say they hold) while inside: a placement sees them live
    however long the machine makes it take."""
    async def beat() -> None:
        while True:
            for r, games in loads:
                mm.shards.heartbeat(r.heartbeat(games), now_ms())
            await asyncio.sleep(0.5)
    task = asyncio.create_task(beat())
    await asyncio.sleep(0)
    try:
        yield
    finally:
        task.cancel()


@pytest_asyncio.fixture
async def a_beats(shards: list[Running], mm: Matchmaker) -> AsyncIterator[None]:
    """shard-a's heartbeats reach the matchmaker through the test."""
    async with beating(mm, (shards[0], 0)):
        yield


async def test_the_matchmaker_waits_for_a_slow_making_rather_than_make_a_second_game(
        shards: list[Running], nc: Client, mm: Matchmaker,
        monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = shards
    monkeypatch.setattr(mm_service, "CREATE_TIMEOUT_S", 1.0)
    hold_directory(a.shard, 2.5)  # longer than a CreateGame call waits
    p = player_id("mm")
    gid = new_game_id()
    async with beating(mm, (a, 0), (b, 5)):  # shard-a is asked first
        got = await mm.place("onecard", {}, [Seat("human", p, "플레이어"),
                                             Seat("bot", level="easy")], gid)
    assert got == gid
    assert await games_of(nc, p) == [gid]
    assert gid in a.shard.rooms and not b.shard.rooms


async def test_the_matchmaker_asks_the_owner_and_replaces_a_taken_id(
        shards: list[Running], nc: Client, mm: Matchmaker) -> None:
    a, b = shards
    p = player_id("owner")
    gid = new_game_id()
    await create(a, request(gid, p))  # an earlier try (e.g. a former leader's) made it
    seats = [Seat("human", p, "플레이어"), Seat("bot", level="easy")]
    async with beating(mm, (a, 5), (b, 0)):  # shard-b is asked first
        assert await mm.place("onecard", {}, seats, gid) == gid
    assert await games_of(nc, p) == [gid] and not b.shard.rooms

    # an id another table took: the placement goes on under a new one
    q = player_id("taken")
    async with beating(mm, (a, 5), (b, 0)):
        other = await mm.place("onecard", {}, [Seat("human", q, "플레이어"),
                                               Seat("bot", level="hard")], gid)
    assert other != gid
    assert await games_of(nc, q) == [other]


async def test_a_drain_hands_over_the_game_being_made_when_it_began(
        shards: list[Running], nc: Client) -> None:
    """A drain (a rolling upgrade's SIGTERM) that begins while a game is
    being made waits for the making and hands the game over with the rest;
    before, it found no game, and the new game stayed on the stopping shard
    until its lease ran out."""
    a, b = shards
    held = asyncio.Event()
    hold_directory(a.shard, held)
    gid, p = new_game_id(), player_id("drain")
    making = asyncio.create_task(create(a, request(gid, p)))
    for _ in range(200):
        if gid in a.shard.creating:
            break
        await asyncio.sleep(0.02)
    assert gid in a.shard.creating
    a.shard.stop_taking()
    drain = asyncio.create_task(a.shard.drain(10))
    await asyncio.sleep(0.3)
    assert not drain.done()  # it waits for the making ...
    held.set()
    assert (await making).game_id == gid
    assert (await drain)["handed_over"] == 1  # ... and hands its game over
    assert gid in b.shard.rooms and gid not in a.shard.rooms
    assert await owned(nc, gid) == "shard-b"


async def test_a_rooms_new_id_is_kept_so_its_next_start_asks_for_the_same_game(
        shards: list[Running], nc: Client, mm: Matchmaker, a_beats: None) -> None:
    """The room's game id is taken (a making that was undone began its
    record): the start goes on under a new id, and the room keeps that one,
    so a start pressed again (the gateway's retry of a call cut at 2.5 s, or
    a new leader's) asks for the game made, not for the taken id — which
    would make one more game each time."""
    a, _ = shards
    p = player_id("room")
    room = mm.rooms.create(p, "방장", "onecard", 2, None)
    mm.rooms.add_bot(p, "easy")
    room.place_id = taken = new_game_id()
    await nc.jetstream().publish(SUBJ.record(taken), b'{"game": "hakka"}',
                                 stream=RECORDS_STREAM)
    _, gid = await mm.start_room(p)
    assert gid != taken and room.place_id == gid
    assert await games_of(nc, p) == [gid]


class FlakyLobby:
    """The lobby write (``Matchmaker.commit``) fails on the calls named, as a
    JetStream hiccup makes it (the matchmaker here keeps no store: every
    other write is done at once)."""

    def __init__(self, mm: Matchmaker, failing: set[int]) -> None:
        self.calls, self.failing, self.real = 0, failing, mm.commit
        mm.commit = self  # type: ignore[method-assign]

    async def __call__(self) -> None:
        self.calls += 1
        if self.calls in self.failing:
            raise nats.errors.TimeoutError
        await self.real()


async def matched(nc: Client, players: list[str]) -> AsyncIterator[list[dict[str, Any]]]:
    got: list[dict[str, Any]] = []

    async def on(msg: Any) -> None:
        frame = orjson.loads(msg.data)
        if frame.get("type") == "matched":
            got.append(frame)
    subs = [await nc.subscribe(mm_service.Subjects().player_lobby(p), cb=on) for p in players]
    try:
        yield got
    finally:
        for s in subs:
            await s.unsubscribe()


@pytest.mark.parametrize("failing", [{1}, {2}], ids=["taking-the-match", "seating-its-players"])
async def test_a_quick_match_stranded_by_a_failed_lobby_write_is_placed_on_a_later_tick(
        shards: list[Running], nc: Client, mm: Matchmaker, failing: set[int], a_beats: None) -> None:
    """A lobby write that fails once (a JetStream hiccup) left a quick match
    in ``placing`` with nobody placing it — its players waited for ever,
    and the next leader placed it (a second game for players who had
    queued again) — or left a game made and its players never told. The
    next tick now places it again: the same game, and ``matched``."""
    a, _ = shards
    players = [player_id("q1"), player_id("q2")]
    for p in players:
        await mm.enqueue(p, "줄선이", "onecard", 2)
    flaky = FlakyLobby(mm, failing)
    async with contextlib.asynccontextmanager(matched)(nc, players) as got:
        for _ in range(100):
            try:
                await mm.tick()
            except nats.errors.TimeoutError:
                pass
            if len(got) == 2:
                break
            await asyncio.sleep(0.1)
        assert flaky.calls > max(failing)
        assert len(got) == 2 and got[0]["game_id"] == got[1]["game_id"], got
    gid = got[0]["game_id"]
    assert await games_of(nc, players[0]) == [gid] and not mm.placing
    assert {p: mm.seated[p][0] for p in players} == {p: gid for p in players}


async def test_a_rematch_whose_seating_write_failed_starts_its_game_on_a_later_tick(
        shards: list[Running], nc: Client, mm: Matchmaker, a_beats: None) -> None:
    """A started 한 판 더 whose game was made but whose lobby write then
    failed (a JetStream hiccup; or, on a take-over, a commit cut off after
    the lobby's seat parts) is placed again at the next tick. Its players
    were already seated in that game, so they were no longer "free": every
    seat went to a bot, the offer ended `expired`, and the game made went
    on without them (found by an audit helper). Now it starts as agreed:
    the same game, and `matched`."""
    from ttanjit.matchmaker.rematch import Rematch

    players = [player_id("r1"), player_id("r2")]
    old = new_game_id()
    r = Rematch(old, "onecard", {}, [["human", ""], ["human", ""]],
                {p: i for i, p in enumerate(players)}, now_ms() + 60_000,
                {p: "다시" for p in players})
    r.started_ms, r.place_id = now_ms(), new_game_id()
    mm.rematched[old] = r
    flaky = FlakyLobby(mm, {1})  # the write after the game was made
    frames: list[dict[str, Any]] = []

    async def on(msg: Any) -> None:
        frames.append(orjson.loads(msg.data))
    subs = [await nc.subscribe(mm_service.Subjects().player_lobby(p), cb=on) for p in players]
    try:
        with pytest.raises(nats.errors.TimeoutError):
            await mm._start_rematch(r)
        assert r.new_game_id == "" and mm.seated[players[0]][0] == r.place_id
        for _ in range(100):
            await mm.tick()
            if sum(f.get("type") == "matched" for f in frames) == 2:
                break
            await asyncio.sleep(0.1)
        assert flaky.calls > 1
        states = [f["rematch"]["state"] for f in frames if f.get("type") == "rematch"]
        assert states == ["started", "started"], frames
        matches = [f for f in frames if f.get("type") == "matched"]
        assert [m["game_id"] for m in matches] == [r.place_id] * 2, frames
        assert [p["kind"] for p in matches[0]["players"]] == ["human", "human"]
        assert await games_of(nc, players[0]) == [r.place_id]
    finally:
        for sub in subs:
            await sub.unsubscribe()


async def test_a_lobby_call_retried_after_its_deadline_is_carried_out_once(
        shards: list[Running], nc: Client, mm: Matchmaker, a_beats: None) -> None:
    """The gateway tries a matchmaker call again when an attempt has no
    answer in 2.5 s (grpcutil.Retrying). A slow lobby write made the first
    attempt run out while its change was made: the retry added a second
    bot for one press of 봇 넣기 (and a start's retry answered
    room_started, its players never told). Every attempt carries the call's
    request id; the leader carries the call out once and answers each."""
    from ttanjit.common.grpcutil import Replicas, Retrying, aio_server
    from ttanjit.v1 import matchmaker_pb2, matchmaker_pb2_grpc

    a, _ = shards
    server, port = aio_server(0, "127.0.0.1")
    servicer = mm_service.Servicer(mm)
    matchmaker_pb2_grpc.add_MatchmakerServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    await server.start()
    real = mm.commit

    async def slow_write() -> None:
        await asyncio.sleep(0.6)  # longer than an attempt below waits
        await real()

    try:
        replicas = Replicas(f"127.0.0.1:{port}", matchmaker_pb2_grpc.MatchmakerStub)
        try:
            stub = Retrying(replicas, attempt_s=0.25)
            host = player_id("host")
            ref = matchmaker_pb2.PlayerRef(player=host, nickname="방장")
            rep = await stub.CreateRoom(matchmaker_pb2.CreateRoomRequest(
                player=ref, game="onecard", seats=3), timeout=5)
            assert not rep.error_code, rep
            mm.commit = slow_write  # type: ignore[method-assign]
            rep = await stub.AddBot(matchmaker_pb2.RoomRequest(player=host, level="easy"),
                                    timeout=5)
            assert not rep.error_code, rep
            room = mm.rooms.room_of(host)
            assert room is not None
            assert [s.kind for s in room.members if s is not None] == ["human", "bot"]
            rep = await stub.StartRoom(matchmaker_pb2.RoomRequest(player=host), timeout=10)
            assert not rep.error_code and rep.game_id, rep  # not room_started
            assert await games_of(nc, host) == [rep.game_id]
        finally:
            await replicas.close()
    finally:
        mm.commit = real  # type: ignore[method-assign]
        await server.stop(0)


async def test_a_player_whose_match_is_being_placed_is_neither_queued_nor_free(
        shards: list[Running], nc: Client, mm: Matchmaker, a_beats: None) -> None:
    """Matched, the game being made (a slow shard): 취소 answered
    ``not_queued`` and queueing again was taken, so the player was matched
    into a second game. Now 취소 says the game is on its way, and queueing
    again or opening a room is refused until the game is placed (found by
    an audit helper)."""
    from ttanjit.matchmaker.errors import LobbyError

    a, _ = shards
    held = asyncio.Event()
    hold_directory(a.shard, held)
    players = [player_id("m1"), player_id("m2")]
    for p in players:
        await mm.enqueue(p, "줄선이", "onecard", 2)
    async with contextlib.asynccontextmanager(matched)(nc, players) as got:
        await mm.tick()  # matched: its game is being made (held)
        assert mm.placing and not mm.queue.by_player
        with pytest.raises(LobbyError) as err:
            await mm.cancel(players[0])
        assert (err.value.code, err.value.message) == ("match_found",
                                                       "상대를 찾았어요. 곧 게임이 시작돼요.")
        with pytest.raises(LobbyError) as err:
            await mm.enqueue(players[0], "줄선이", "penalty_rows", 2)
        assert err.value.code == "already_queued"
        # its queue asked again (a re-queue after a reconnect): matched (its
        # `matched` follows; a `queued` could come after it)
        with pytest.raises(LobbyError) as err:
            await mm.enqueue(players[0], "줄선이", "onecard", 2, "hard")
        assert err.value.code == "match_found"
        with pytest.raises(LobbyError) as err:
            mm._free(players[1])  # (a room of one's own)
        assert err.value.code == "already_queued"
        held.set()
        for _ in range(100):
            if len(got) == 2:
                break
            await asyncio.sleep(0.05)
        assert len(got) == 2 and not mm.queue.by_player
    assert await games_of(nc, players[0]) == [got[0]["game_id"]]


async def test_a_room_being_started_takes_nobody_in_and_lets_nobody_out(
        shards: list[Running], nc: Client, mm: Matchmaker, a_beats: None) -> None:
    """While a room's game is being made (a slow shard: seconds), a player
    who left was seated anyway and told ``matched`` after ``room_left``, and
    one who joined was in neither the room nor the game. The room is now
    starting: joining and leaving answer ``room_started`` until its game
    is placed, or until its start fails and the room is as it was (found by
    an audit helper)."""
    from ttanjit.matchmaker.errors import LobbyError

    a, _ = shards
    held = asyncio.Event()
    hold_directory(a.shard, held)
    host, friend, late = player_id("h"), player_id("f"), player_id("l")
    room = mm.rooms.create(host, "방장", "onecard", 3, None)
    mm.rooms.join(friend, "친구", room.code)
    start = asyncio.create_task(mm.start_room(host))
    for _ in range(200):
        if a.shard.creating:
            break
        await asyncio.sleep(0.02)
    assert a.shard.creating and room.state == "starting"
    for step in (lambda: mm.rooms.join(late, "늦은이", room.code),
                 lambda: mm.rooms.leave(friend), lambda: mm.rooms.add_bot(host, "easy")):
        with pytest.raises(LobbyError) as err:
            step()
        assert err.value.code == "room_started"
    held.set()
    _, gid = await start
    assert mm.seated[friend] == (gid, 1) and late not in mm.seated
    assert mm.rooms.room_of(late) is None and mm.rooms.room_of(friend) is None

    # a start that cannot be placed leaves the room as it was
    again = mm.rooms.create(late, "늦은이", "onecard", 2, None)
    mm.rooms.add_bot(late, "easy")
    a.shard.draining = True  # (it refuses every CreateGame: UNAVAILABLE)
    with pytest.raises(LobbyError) as err:
        await mm.start_room(late)
    a.shard.draining = False
    assert err.value.code == "no_shard" and again.state == "open"
    mm.rooms.leave(late)
