"""The lobby's parts (docs/protocol.md 4.1): what grows with the players in
games — each one's seat, the 한 판 더 offers, the codes of started rooms — is
spread over part documents, so a lobby holds more players in games than one
NATS message (1 MB) could, a change writes only its part, and the fencing of
a previous leader still holds. Real nats-server with JetStream, matchmakers
in the test's process.

Before, the whole lobby was one document: 25,000 players seated in games
filled it (40 bytes each), and from then on every lobby write failed."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import pytest_asyncio
from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from ttanjit.common.config import Settings
from ttanjit.common.ids import new_game_id
from ttanjit.common.nats import GAMES_BUCKET, RECORDS_STREAM, Subjects, ensure_jetstream
from ttanjit.matchmaker import store
from ttanjit.matchmaker.queue import QuickMatch, Ticket
from ttanjit.matchmaker.rematch import Rematch
from ttanjit.matchmaker.rooms import Room, Seat
from ttanjit.matchmaker.service import Matchmaker, lead_loop, now_ms
from ttanjit.matchmaker.store import PARTS, Fenced, LeaderLease, part_of

pytestmark = pytest.mark.integration

NATS_MAX_PAYLOAD = 1024 * 1024


@pytest_asyncio.fixture
async def kvs(nc: Client) -> AsyncIterator[tuple[KeyValue, KeyValue]]:
    js = nc.jetstream()
    buckets = await ensure_jetstream(js, Subjects())
    yield buckets["ttanjit_ratings"], buckets["ttanjit_lobby"]


@pytest.fixture
def lobby() -> str:
    return "parts-" + secrets.token_hex(4)


def replica(nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> Matchmaker:
    ratings, kv_lobby = kvs
    return Matchmaker(nc, ratings, Settings(lobby=lobby, rematch_ms=60_000), kv_lobby)


def humans(*players: str) -> list[Seat]:
    return [Seat("human", p, "닉") for p in players]


def offer(gid: str, humans: int = 3) -> Rematch:
    return Rematch(gid, "penalty_rows", {"rounds": 1}, [["human", ""]] * humans,
                   {f"{gid}-p{i}": i for i in range(humans)}, now_ms() + 60_000)


async def written_and_taken_over(a: Matchmaker, nc: Client, kvs: tuple[KeyValue, KeyValue],
                                 lobby: str) -> Matchmaker:
    """``a``'s lobby written — the head small, every part well under
    NATS's 1 MB — and a second replica leading it."""
    await a.commit()
    assert a.store is not None
    head, largest = a.store.largest()
    assert 0 < head < 1_000 and 0 < largest < NATS_MAX_PAYLOAD / 4, (head, largest)
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    return b


async def test_more_players_in_games_than_one_message_holds_are_written_and_taken_over(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """60,000 players seated in games of 4 (2.4 MB as one document),
    1,000 started offers and 3,000 started rooms' codes: written, every
    document under NATS's 1 MB, and all of it found by the next leader,
    which fences the first."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    for g in range(15_000):
        a._seat(f"game-{g:06d}", humans(*(f"player-{g * 4 + s:06d}" for s in range(4))))
    for i in range(1_000):
        r = offer(f"old-{i:05d}")
        r.started_ms, r.place_id, r.new_game_id = now_ms(), f"pl-{i}", f"new-{i}"
        a.rematched[r.game_id] = r
    for i in range(3_000):
        a.rooms.started_codes[f"C{i:05d}"] = (now_ms(), [f"player-{i:06d}", f"x-{i}"], f"g-{i}")
    b = await written_and_taken_over(a, nc, kvs, lobby)
    assert len(b.seated) == 60_000 and b.seated == a.seated
    assert b.seated_games == a.seated_games
    assert {g: r.to_json() for g, r in b.rematched.items()} == \
        {g: r.to_json() for g, r in a.rematched.items()}
    assert b.rooms.started_codes == a.rooms.started_codes
    a._seat("game-elsewhere", humans("player-000000"))
    with pytest.raises(Fenced):
        await a.commit()


async def test_a_change_writes_its_part_and_the_head_only(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A game placed, or over, writes the one part its id hashes to, then
    the head; not the seats of everyone else."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    for g in range(1_000):
        a._seat(f"g{g}", humans(*(f"p{g}-{s}" for s in range(4))))
    await a.commit()
    assert a.store is not None
    before = a.store.writes
    a._seat("new", humans("x", "y", "z", "w"))  # placed: its part, then the head
    await a.commit()
    assert a.store.writes - before == 2
    before = a.store.writes
    assert a.unseat("g2", ["p2-0"])  # over (its result)
    a._seat("g2b", humans("p2-0"))
    await a.commit()
    assert a.store.writes - before == 1 + len({part_of("g2"), part_of("g2b")})
    before = a.store.writes
    await a.commit()  # nothing in games changed (a ticket, a room): the head alone
    assert a.store.writes - before == 1


async def test_a_part_a_previous_leader_wrote_after_the_take_over_is_overwritten(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A leader frozen while another took over writes its seats' part when
    it thaws (its last commit); its head write then fails and it steps
    down. That part is the new leader's to overwrite: its next write there
    is not refused as if a newer leader had written it, and what the old
    one wrote (never acknowledged) is gone."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    a._seat("g1", humans("first"))
    await a.commit()
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    zombie = "never-told"
    same_part = next(g for g in (f"later-{i}" for i in range(10_000))
                     if part_of(g) == part_of(zombie))
    a._seat(zombie, humans("zombie"))
    with pytest.raises(Fenced):
        await a.commit()
    b._seat(same_part, humans("second"))
    await b.commit()  # not Fenced
    assert b.leading
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    assert c.seated == {"first": ("g1", 0), "second": (same_part, 0)}


async def test_a_take_over_reads_again_what_the_previous_leader_wrote_meanwhile(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """The previous leader's last commit lands between the new leader's
    read of the lobby and its write of the head: that commit may have been
    answered, so the new leader reads the lobby again rather than write
    the older one over it (or give up the lead)."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    a._seat("g1", humans("early"))
    await a.commit()
    b = replica(nc, kvs, lobby)
    assert b.store is not None
    write_parts = b.store._write_parts
    raced = []

    async def previous_leader_commits_first() -> None:
        if not raced:
            raced.append(1)
            a._seat("g2", humans("late"))
            await a.commit()  # a still leads: this lands, and may be answered
        await write_parts()
    b.store._write_parts = previous_leader_commits_first  # type: ignore[method-assign]
    await b.lead("mm-b", 2)
    assert raced and b.leading
    assert b.seated == {"early": ("g1", 0), "late": ("g2", 0)}
    a._seat("g3", humans("later"))
    with pytest.raises(Fenced):
        await a.commit()


async def test_a_lobby_written_as_one_document_is_moved_into_the_parts(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A rolling upgrade: the lobby a replica of an earlier version wrote
    (everything in one document, tickets and rooms as lists, the tickets of
    a match being placed in that match only) is read, and the new leader
    moves it into the parts."""
    _, kv_lobby = kvs
    open_offer, started = offer("g-open"), offer("g-started")
    started.started_ms, started.place_id, started.new_game_id = now_ms(), "pl", "g-new"
    waiting = Ticket("w1", "대기", "onecard", 2, 0.0, now_ms())
    match = QuickMatch("onecard", 2, [Ticket("m1", "하나", "onecard", 2, 0.0, now_ms()),
                                      Ticket("m2", "둘", "onecard", 2, 0.0, now_ms())], [])
    room = Room("QWERTY", "hakka", 4, {"rounds": 1}, "p9",
                [Seat("human", "p9", "방장"), None, Seat("bot", level="easy"), None])
    old = {"leader": "mm-old", "epoch": 4, "written_ms": now_ms(),
           "tickets": [waiting.to_json()], "placing": [match.to_json()],
           "rooms": [room.to_store()], "away": {"p9": 5},
           "seated": {"p1": ["g-new", 0], "p2": ["g-x", 3]},
           "rematches": [open_offer.to_json()], "rematched": [started.to_json()],
           "started_rooms": {"ABCDE": [now_ms(), ["p2"]]}}
    await kv_lobby.put(f"state.{lobby}", orjson.dumps(old))
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 5)
    head = orjson.loads((await kv_lobby.get(f"state.{lobby}")).value)
    assert head["parts"] == PARTS and not set(store.GROUP_OF) & set(head)
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 6)
    assert c.seated == {"p1": ("g-new", 0), "p2": ("g-x", 3)}
    assert c.rematches["g-open"].to_json() == open_offer.to_json()
    assert c.rematched["g-started"].to_json() == started.to_json()
    assert c.rooms.started_codes["ABCDE"][1] == ["p2"]
    assert c.away == {"p9": 5}
    assert c.rooms.by_code["QWERTY"].to_store() == room.to_store()
    assert c.rooms.room_of("p9") is c.rooms.by_code["QWERTY"]
    assert [t.to_json() for t in c.queue.by_player.values()] == [waiting.to_json()]
    assert {p: t.to_json() for p, t in c.queue.held.items()} == \
        {t.player: t.to_json() for t in [waiting, *match.tickets]}
    assert list(c.placing) == [match.id] and c._matching("m1")


class _Failing:
    """A lobby bucket whose writes of some documents time out (the
    leader dies, or NATS goes away, in the middle of a commit)."""

    def __init__(self, kv: KeyValue, failing: str) -> None:
        self.kv, self.failing = kv, failing

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kv, name)

    async def create(self, key: str, value: bytes) -> int:
        if self.failing in key:
            raise TimeoutError()
        return await self.kv.create(key, value)

    async def update(self, key: str, value: bytes, last: int | None = None) -> int:
        if self.failing in key:
            raise TimeoutError()
        return await self.kv.update(key, value, last=last)


async def started_parts(kv_lobby: KeyValue, lobby: str) -> dict[str, Any]:
    """Every started room's code as the lobby's parts hold it."""
    out: dict[str, Any] = {}
    for i in range(PARTS):
        try:
            part = orjson.loads((await kv_lobby.get(f"state.{lobby}.started.{i}")).value)
        except KeyNotFoundError:
            continue
        out.update(part.get("started_rooms") or {})
    return out


async def test_a_room_start_cut_off_between_the_parts_and_the_head_starts_again(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """The leader died after writing a started room's seats and code (the
    parts `seated` and `started`) and before the room itself (the part
    `rooms`, then the head). Nobody was told. The
    next leader has the room `open`, its code not `started` (the host's
    시작 is not refused with room_started) and its players not seated in
    the game (a member who leaves is not sent into it); the host's 시작
    asks for the same game."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    room = a.rooms.create("host", "방장", "onecard", 3, None)
    a.rooms.join("guest", "손님", room.code)
    a.rooms.join("third", "셋째", room.code)
    await a.commit()
    room_, seats = a.rooms.start_seats("host")  # as start_room does:
    room_.place_id = gid = new_game_id()  # `starting`, its game id written
    await a.commit()
    a.rooms.started(room_, gid, now_ms())  # placed; then the commit, cut off
    a._seat(gid, seats)  # where the rooms' parts are written
    assert a.store is not None
    a.store.kv = _Failing(a.store.kv, ".rooms.")  # type: ignore[assignment]
    with pytest.raises(TimeoutError):
        await a.commit()
    assert room.code in await started_parts(kvs[1], lobby)
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    assert not b.seated
    assert room.code not in b.rooms.started_codes
    b.rooms.leave("guest")
    await b.commit()  # the code and the seats dropped in the parts too
    assert room.code not in await started_parts(kvs[1], lobby)
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    assert not c.seated and gid not in c.seated_games
    again, _ = c.rooms.start_seats("host")
    assert again.code == room.code and again.place_id == gid


async def finished_game(nc: Client, players: list[str]) -> str:
    """A finished game as its shard leaves it: its record header and its
    directory entry (what a 한 판 더 offer is made from)."""
    gid = new_game_id()
    js = nc.jetstream()
    header = {"type": "header", "game": "penalty_rows", "game_id": gid,
              "seats": [{"kind": "human"} for _ in players],
              "players": {p: i for i, p in enumerate(players)}, "options": {"rounds": 1}}
    await js.publish(Subjects().record(gid), orjson.dumps(header), stream=RECORDS_STREAM)
    games = await js.key_value(GAMES_BUCKET)
    await games.put(gid, orjson.dumps({"state": "finished", "game": "penalty_rows",
                                       "result": {"game_id": gid}}))
    return gid


async def test_answers_to_an_open_offer_survive_a_take_over(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """Each 한 판 더 answer changes the offer in place; every one of them is
    written (not only the one that opened it), so the next leader counts
    them all."""
    players = [f"rm-{secrets.token_hex(3)}-{i}" for i in range(3)]
    gid = await finished_game(nc, players)
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    await a.rematch(players[0], "하나", gid, True)  # opens the offer
    await a.rematch(players[1], "둘", gid, False)  # the third still to answer
    await a.rematch(players[0], "하나", gid, True)
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    got: Any = b.rematches[gid]
    assert got.agreed == {players[0]: "하나"}
    assert got.declined == [players[1]]


async def test_a_version_with_another_count_of_parts_reads_and_rewrites_them(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The head says how many parts it was written with: a version that
    counts them otherwise reads them all and writes every part of its own
    count anew, so a part of the earlier count never brings back a player
    whose game ended since."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    for i in range(40):
        a._seat(f"g{i}", humans(f"p{i}"))
    await a.commit()
    monkeypatch.setattr(store, "PARTS", 8)
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    assert len(b.seated) == 40
    for i in range(39):  # their games ended
        b.unseat(f"g{i}")
    await b.commit()
    monkeypatch.setattr(store, "PARTS", PARTS)
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    d = replica(nc, kvs, lobby)
    await d.lead("mm-d", 4)
    assert set(d.seated) == {"p39"}


@pytest.mark.parametrize("first_over", ["first", "second"])
async def test_a_player_placed_again_before_their_game_ended_is_in_the_later_one(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str, first_over: str) -> None:
    """A player who left a game (a bot took the seat) and was placed in
    another before the first one ended is in the later one only, whichever
    ends first and whoever leads then: after the later one ends, a new
    leader does not send them back to the first (nor count them busy there
    when their 한 판 더 starts)."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    a._seat("first", humans("other", "mover"))
    await a.commit()
    a._seat("second", humans("x", "y", "mover"))
    await a.commit()
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    assert b.seated["mover"] == ("second", 2) and b.seated["other"] == ("first", 0)
    ended = {"first": ["other", "mover"], "second": ["x", "y", "mover"]}
    assert b.unseat(first_over, ended[first_over])
    await b.commit()
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    assert c.seated == b.seated
    assert ("mover" in c.seated) == (first_over == "first")


async def test_seats_kept_by_player_in_the_parts_are_read_and_kept_by_game(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """Parts whose `seated` is by player (`{player: [game_id, seat]}`, as
    a build of main between two commits wrote them) do not stop a take-over:
    read, and written again by game."""
    _, kv_lobby = kvs
    await kv_lobby.put(f"state.{lobby}", orjson.dumps(
        {"leader": "mm-old", "epoch": 1, "parts": PARTS, "tickets": []}))
    await kv_lobby.put(f"state.{lobby}.seated.{part_of('p1')}", orjson.dumps(
        {"leader": "mm-old", "epoch": 1, "seated": {"p1": ["g1", 0]}}))
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    assert b.seated == {"p1": ("g1", 0)}
    await b.commit()
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    assert c.seated == {"p1": ("g1", 0)} and c.seated_games["g1"]["seats"] == {"p1": 0}


async def test_more_players_waiting_than_one_message_holds_are_written_and_taken_over(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """20,000 quick-match tickets, 3,000 open rooms and 1,000 members away
    (4.5 MB as one head): written, every document under NATS's 1 MB, and
    all of it found by the next leader. Before, the tickets and the rooms
    were the head, and ~6,000 tickets filled it: every lobby write failed.
    A ticket queued writes its part and the head; a room joined, its."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    for i in range(20_000):
        a.queue.add(Ticket(f"player-{i:06d}", f"닉네임{i}", "penalty_rows", 4,
                           float(i % 50), now_ms() - i, bot_level="hard"))
    for i in range(3_000):
        room = a.rooms.create(f"host-{i:05d}", "방장님", "penalty_rows", 5, {"rounds": 3})
        a.rooms.join(f"guest-{i:05d}", "손님", room.code)
        a.rooms.add_bot(f"host-{i:05d}", "normal")
        if i % 3 == 0:
            a.away[f"guest-{i:05d}"] = now_ms()
    b = await written_and_taken_over(a, nc, kvs, lobby)
    assert {p: t.to_json() for p, t in b.queue.by_player.items()} == \
        {p: t.to_json() for p, t in a.queue.by_player.items()}
    assert len(b.queue.by_player) == 20_000
    assert {c: r.to_store() for c, r in b.rooms.by_code.items()} == \
        {c: r.to_store() for c, r in a.rooms.by_code.items()}
    assert b.rooms.by_player == a.rooms.by_player and len(b.rooms.by_player) == 6_000
    assert b.away == a.away and len(b.away) == 1_000

    assert b.store is not None
    before = b.store.writes
    await b.enqueue("newcomer", "새손님", "onecard", 2)
    assert b.store.writes - before == 2  # its tickets part, the head
    before = b.store.writes
    b.rooms.join("joiner", "참가", next(iter(b.rooms.by_code)))
    await b.commit()
    assert b.store.writes - before == 2  # its room's part, the head
    a.queue.add(Ticket("late", "늦음", "onecard", 2, 0.0, now_ms()))
    with pytest.raises(Fenced):
        await a.commit()


async def test_a_match_formed_keeps_its_tickets_in_the_parts_until_its_game_is_placed(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A match formed writes its `placing` part alone: its tickets stay in
    their parts, so no commit cut off half way loses them. A new leader
    takes the players of a match being placed for matched, not queued.
    The game placed drops the tickets after its seats and before the
    match, so a commit cut off between them places it again."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    await a.enqueue("p1", "하나", "onecard", 2)
    await a.enqueue("p2", "둘", "onecard", 2)
    assert a.store is not None
    (match,) = a.queue.take_matches(now_ms() + 60_000)
    a.placing[match.id] = match  # as tick does
    before = a.store.writes
    await a.commit()
    assert a.store.writes - before == 2  # its part, the head
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    assert not b.queue.by_player and list(b.placing) == [match.id]
    assert b._matching("p1") and b._matching("p2")
    assert set(b.queue.held) == {"p1", "p2"}
    with pytest.raises(Exception, match="match_found"):
        await b.cancel("p1")

    # b places it; its commit is cut off where the tickets are written
    placed = b.placing[match.id]
    del b.placing[placed.id]
    b._seat(placed.game_id, humans("p1", "p2"))
    b.queue.placed(placed)
    assert b.store is not None
    b.store.kv = _Failing(b.store.kv, ".tickets.")  # type: ignore[assignment]
    with pytest.raises(TimeoutError):
        await b.commit()
    d = replica(nc, kvs, lobby)
    await d.lead("mm-d", 4)
    assert list(d.placing) == [match.id] and d.placing[match.id].game_id == placed.game_id
    assert not d.queue.by_player and set(d.queue.held) == {"p1", "p2"}
    assert d.seated == {"p1": (placed.game_id, 0), "p2": (placed.game_id, 1)}

    # it cannot be placed after all: both wait again, which a take-over keeps
    del d.placing[match.id]
    d.queue.put_back(match)
    await d.commit()
    e = replica(nc, kvs, lobby)
    await e.lead("mm-e", 5)
    assert set(e.queue.by_player) == {"p1", "p2"} and not e.placing
    # placed at last: the tickets are gone for good
    (again,) = e.queue.take_matches(now_ms() + 60_000)
    e._seat(again.game_id, humans("p1", "p2"))
    e.queue.placed(again)
    await e.commit()
    f = replica(nc, kvs, lobby)
    await f.lead("mm-f", 6)
    assert not f.queue.held and not f.queue.by_player


async def test_every_change_of_an_open_room_is_written_with_it(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A room is changed in place (joined, left, options, bots, a start
    that failed, the game id chosen for it, a member away): each change is
    in the next leader's copy of it."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    generation = 1

    async def same_after_take_over() -> Matchmaker:
        nonlocal generation
        await a.commit()
        generation += 1
        b = replica(nc, kvs, lobby)
        await b.lead(f"mm-{generation}", generation)
        assert {c: r.to_store() for c, r in b.rooms.by_code.items()} == \
            {c: {**r.to_store(), "state": "open"}  # (a start cut off: open again)
             for c, r in a.rooms.by_code.items()}
        assert b.away == a.away
        assert a.store is not None and b.store is not None
        a.store.owner = b.store.owner  # a writes on as that epoch (no fencing here)
        a.store.head.rev = b.store.head.rev
        return b

    room = a.rooms.create("host", "방장", "penalty_rows", 3, None)
    await same_after_take_over()
    a.rooms.join("guest", "손님", room.code)
    await same_after_take_over()
    a.rooms.set_options("host", 4, {"rounds": 5})
    await same_after_take_over()
    a.rooms.add_bot("host", "hard")
    await same_after_take_over()
    a.rooms.remove_bot("host", 2)
    await same_after_take_over()
    a.rooms.join("third", "셋째", room.code)
    a.rooms.leave("guest")
    await same_after_take_over()
    _, _ = a.rooms.start_seats("host")
    await same_after_take_over()
    await a._keeper(room, "place_id")("g-chosen")  # (the id placement settled on)
    b = await same_after_take_over()
    assert b.rooms.by_code[room.code].place_id == "g-chosen"
    a.rooms.unstart(room)
    a.away["third"] = 1234
    await same_after_take_over()
    a.rooms.leave("third")
    a.rooms.leave("host")  # the last one: closed
    del a.away["third"]
    b = await same_after_take_over()
    assert not b.rooms.by_code


async def test_a_fenced_leaders_part_writes_never_land(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A leader frozen while another took the lobby thaws and commits: a
    match it formed, a room it made, a ticket. Its head write fails
    (fenced) — and none of its part writes lands either, so the leader
    after the next does not place that match a second time for players
    already in a game, nor keep a room nobody was told about. (Before, a
    take-over wrote the head alone, and such a part stayed until its part
    happened to be written again.)"""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    await a.enqueue("p1", "하나", "onecard", 2)
    await a.enqueue("p2", "둘", "onecard", 2)
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)  # a is frozen meanwhile

    (stray,) = a.queue.take_matches(now_ms())  # a thaws in the middle of its tick
    a.placing[stray.id] = stray
    room = a.rooms.create("host", "방장", "onecard", 2, None)
    a.queue.add(Ticket("p3", "셋", "hakka", 4, 0.0, now_ms()))
    with pytest.raises(Fenced):
        await a.commit()

    (match,) = b.queue.take_matches(now_ms())  # b places p1 and p2 in their game
    b.placing[match.id] = match
    await b.commit()
    del b.placing[match.id]
    b._seat(match.game_id, humans("p1", "p2"))
    b.queue.placed(match)
    await b.commit()

    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    assert not c.placing and not c.queue.held and not c.queue.by_player
    assert not c.rooms.by_code and c.rooms.room_of("host") is None
    assert c.seated == {"p1": (match.game_id, 0), "p2": (match.game_id, 1)}
    _, kv_lobby = kvs
    stamps = set()
    for group in store.GROUPS:
        for i in range(PARTS):
            part = orjson.loads((await kv_lobby.get(f"state.{lobby}.{group}.{i}")).value)
            stamps.add((part["leader"], part["epoch"]))
            assert room.code not in (part.get("rooms") or {})
            assert stray.id not in (part.get("placing") or {})
    assert ("mm-a", 1) not in stamps  # every part rewritten by a later leader


async def test_a_damaged_item_is_left_out_and_one_under_another_key_is_dropped_where_it_is(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A part holding items that cannot be read (a ticket without its
    player's game, a room that is not one, a member away since "soon", a
    seat "x", an offer's humans as a list) does not stop a take-over: they
    are left out, the rest is read. A match being placed stored under a key
    its own id does not say is taken under the key it is stored by, so
    placing it drops it from its part (before, it stayed there and every
    later leader placed it again)."""
    _, kv_lobby = kvs
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    await a.enqueue("fine", "멀쩡", "onecard", 2)
    match = QuickMatch("onecard", 2, [Ticket("m1", "하나", "onecard", 2, 0.0, now_ms()),
                                      Ticket("m2", "둘", "onecard", 2, 0.0, now_ms())], [])
    stored = {**match.to_json(), "id": "m_other"}
    for group, name, key, item in [("placing", "placing", "m_x", stored),
                                   ("tickets", "tickets", "broken", {"nickname": "x"}),
                                   ("rooms", "rooms", "ZZZZZZ", ["not", "a", "room"]),
                                   ("away", "away", "gone", "soon"),
                                   ("seated", "seated", "g-bad", {"ms": 1, "seats": {"q": "x"}}),
                                   ("offers", "rematches", "g-old",
                                    {**offer("g-old").to_json(), "humans": ["a", "b"]})]:
        doc = {"leader": "mm-a", "epoch": 1, name: {key: item}}
        await kv_lobby.put(f"state.{lobby}.{group}.{part_of(key)}", orjson.dumps(doc))
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 2)
    assert set(b.queue.by_player) == {"fine"} and not b.rooms.by_code
    assert not b.away and not b.seated and not b.rematches
    assert list(b.placing) == ["m_x"] and b.placing["m_x"].id == "m_x"
    placed = b.placing.pop("m_x")  # placed
    b._seat(placed.game_id, humans("m1", "m2"))
    b.queue.placed(placed)
    await b.commit()
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    assert not c.placing and set(c.queue.held) == {"fine"}


async def test_a_head_an_earlier_version_wrote_after_this_one_is_what_counts(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A rolling upgrade that went back and forth: this version led (its
    tickets and rooms in parts), then a replica of the version before (its
    tickets, rooms and matches being placed in the head: the player's
    ticket cancelled, the room closed), then this version again. The head
    says how things are: the older parts of those collections bring back
    neither the ticket nor the room."""
    _, kv_lobby = kvs
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    await a.enqueue("cancelled", "취소", "onecard", 2)
    a.rooms.create("host", "방장", "onecard", 2, None)
    a._seat("g-on", humans("seated"))
    await a.commit()
    waiting = Ticket("still", "대기", "onecard", 3, 0.0, now_ms())
    head = orjson.loads((await kv_lobby.get(f"state.{lobby}")).value)
    head.update(leader="mm-old", epoch=2, tickets=[waiting.to_json()], placing=[], rooms=[],
                away={})  # the version before writes these in the head
    await kv_lobby.put(f"state.{lobby}", orjson.dumps(head))
    b = replica(nc, kvs, lobby)
    await b.lead("mm-b", 3)
    assert set(b.queue.by_player) == {"still"} and set(b.queue.held) == {"still"}
    assert not b.rooms.by_code and b.rooms.room_of("host") is None
    assert b.seated == {"seated": ("g-on", 0)}  # (parts in both versions)
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 4)
    assert set(c.queue.by_player) == {"still"} and not c.rooms.by_code


async def test_a_take_over_read_while_the_old_leader_commits_sees_a_prefix_of_its_commit(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """The old leader writes a placed match (its seats, then its tickets
    dropped, then the match) while the new one reads the lobby, and is
    fenced at its head write. The new leader reads the parts group by
    group, the last written first, so it sees a commit cut off half way —
    the match still being placed, or placed — never the tickets and the
    match dropped without the seats (both players lost)."""
    a = replica(nc, kvs, lobby)
    await a.lead("mm-a", 1)
    await a.enqueue("p1", "하나", "onecard", 2)
    await a.enqueue("p2", "둘", "onecard", 2)
    (match,) = a.queue.take_matches(now_ms())
    a.placing[match.id] = match
    await a.commit()
    del a.placing[match.id]  # placed, as _place_quick does; its commit begins
    a._seat(match.game_id, humans("p1", "p2"))
    a.queue.placed(match)
    assert a.store is not None
    a.store._take_changes()

    b = replica(nc, kvs, lobby)
    assert b.store is not None
    read = b.store._get
    first: list[str] = []  # the group b reads first
    reads = 0
    written = asyncio.Event()

    async def get(d: Any) -> Any:
        """The old leader's parts land once b has read one group's parts
        and before it reads any other's."""
        nonlocal reads
        if d is b.store.head:  # type: ignore[union-attr]
            return await read(d)
        group = d.key.rsplit(".", 2)[1]
        first[:] = first or [group]
        if group != first[0]:
            await written.wait()
            return await read(d)
        got = await read(d)
        reads += 1
        if reads == PARTS:
            await a.store._write_parts()  # type: ignore[union-attr]
            written.set()
        return got

    b.store._get = get  # type: ignore[method-assign]
    await b.lead("mm-b", 2)
    b.store._get = read  # type: ignore[method-assign]
    with pytest.raises(Fenced):
        await a.commit()  # its head write
    c = replica(nc, kvs, lobby)
    await c.lead("mm-c", 3)
    for mm in (b, c):
        for p in ("p1", "p2"):
            assert mm.seated.get(p, ("",))[0] == match.game_id or mm._matching(p), (p, mm.seated)


async def test_a_take_over_longer_than_the_lease_keeps_it(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """Two replicas seek the lease (1 s, renewed every 250 ms); taking the
    lobby takes 1.5 s (a large lobby: 4.5 s at 250,000 players against the
    default 2 s). The replica that won keeps renewing while it takes the
    lobby, and leads. Before, its lease ran out mid-way, the other took it
    and fenced it, then lost its own the same way: nobody led."""
    ratings, kv_lobby = kvs
    stop = asyncio.Event()
    replicas = []
    for name in ("r1", "r2"):
        mm = Matchmaker(nc, ratings, Settings(lobby=lobby, lease_ms=1000, renew_ms=250),
                        kv_lobby)
        assert mm.store is not None
        claim = mm.store.claim

        async def slow_claim(replica_: str, epoch: int, claim: Any = claim) -> Any:
            await asyncio.sleep(1.5)
            return await claim(replica_, epoch)

        mm.store.claim = slow_claim  # type: ignore[method-assign]
        lease = LeaderLease(kv_lobby, lobby, name, name, 1000, 250)
        replicas.append((mm, lease, asyncio.create_task(
            lead_loop(mm, lease, nc.jetstream(), stop))))
    try:
        led: list[str] = []
        for _ in range(32):  # 8 s
            await asyncio.sleep(0.25)
            led.append("".join(str(i) for i, (mm, _, _) in enumerate(replicas) if mm.leading))
        assert led[-12:] in (["0"] * 12, ["1"] * 12), led  # one leader, the last 3 s
        assert max(lease.epoch for _, lease, _ in replicas) <= 2
    finally:
        stop.set()
        await asyncio.gather(*(t for _, _, t in replicas), return_exceptions=True)


async def test_a_leader_that_cannot_renew_stops_leading_when_its_lease_runs_out(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """The leader's renewals fail (NATS away from it, or its writes time
    out) while the other replica still sees the bucket: the lease there
    runs out and the other takes it. The leader must stop leading by then.
    Before, each failed renewal had moved its own expiry on before the
    write was sent, so it led on for as long as its renewals kept
    failing: two leaders."""
    _, kv_lobby = kvs
    a = LeaderLease(kv_lobby, lobby, "a", "a", 1000, 100)
    b = LeaderLease(kv_lobby, lobby, "b", "b", 1000, 100)
    assert await a.step() and a.leading
    a.kv = _Failing(kv_lobby, "leader.")  # type: ignore[assignment]
    held = orjson.loads((await kv_lobby.get(f"leader.{lobby}")).value)["expires_ms"]
    took_at = 0
    for _ in range(30):  # 3 s
        await asyncio.sleep(0.1)
        await a.step()
        if not took_at and await b.step():
            took_at = now_ms()
        if took_at:
            break
        assert a.leading or now_ms() >= held
    assert took_at >= held and b.leading and b.epoch == 2
    # it led no longer than its own expiry, which came before b took over
    # (its last step may have come just before that expiry, b's just after:
    # not what it knew at that step, but the expiry it kept is the check)
    assert a.expires_ms <= took_at
    await a.step()
    assert not a.leading


class _Unanswered:
    """A lobby bucket whose next lease update is written but its answer
    lost (a timeout after the write), or that hangs unwritten."""

    def __init__(self, kv: KeyValue, mode: str) -> None:
        self.kv, self.mode = kv, mode

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kv, name)

    async def update(self, key: str, value: bytes, last: int | None = None) -> int:
        if self.mode == "hangs":
            await asyncio.sleep(30)
        rev = await self.kv.update(key, value, last=last)
        if self.mode == "lost":
            self.mode = ""
            raise TimeoutError()
        return rev


async def test_a_renewal_written_but_unanswered_keeps_the_lease(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A renewal was written, but its answer was lost: the next renewal is
    refused on the revision. The lease is still this replica's (its id and
    epoch): it keeps leading (before, it let the lobby go for nothing, and
    nobody led until the lease ran out; audit)."""
    _, kv_lobby = kvs
    a = LeaderLease(kv_lobby, lobby, "a", "a", 2000, 100)
    assert await a.step()
    a.kv = _Unanswered(kv_lobby, "lost")  # type: ignore[assignment]
    await a.step()  # written; its answer lost
    assert a.leading
    await a.step()  # refused on the revision: still ours
    assert a.leading and a.epoch == 1
    await a.step()
    stored = orjson.loads((await kv_lobby.get(f"leader.{lobby}")).value)
    assert a.leading and stored["id"] == "a" and stored["expires_ms"] == a.expires_ms
    b = LeaderLease(kv_lobby, lobby, "b", "b", 2000, 100)
    assert not await b.step()


async def test_a_renewal_that_hangs_ends_the_leading_at_the_leases_expiry(
        nc: Client, kvs: tuple[KeyValue, KeyValue], lobby: str) -> None:
    """A leader's renewal hangs (NATS unreachable): its round ends at the
    expiry the bucket holds, and it stops leading then (before, the round
    waited a whole lease from when it began, ~2 s past that expiry with
    the defaults, while another replica could lead; audit)."""
    from ttanjit.matchmaker.service import _step

    _, kv_lobby = kvs
    a = LeaderLease(kv_lobby, lobby, "a", "a", 3000, 500)
    assert await a.step()
    await asyncio.sleep(2.0)  # ~1 s of the lease left
    a.kv = _Unanswered(kv_lobby, "hangs")  # type: ignore[assignment]
    loop = asyncio.get_running_loop()
    start = loop.time()
    await _step(a, 3.0)  # (lead_loop's timeout: the lease)
    assert not a.leading
    assert loop.time() - start < 2.0
    assert now_ms() >= a.expires_ms
