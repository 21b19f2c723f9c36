"""Ratings from the results stream when JetStream falters (docs/protocol.md
4, ``ttanjit_ratings``), with a real nats-server and the matchmaker's own
results loop in this process: a rating that cannot be read is never taken
for a new player's (which would overwrite the stored one), the result is
rated once NATS answers again, and a result delivered again after it was
half applied changes nobody twice."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import nats
import orjson
import pytest
from nats.errors import TimeoutError as NatsTimeout
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

from ttanjit.common.config import Settings
from ttanjit.common.nats import (
    HISTORY_BUCKET,
    RATINGS_BUCKET,
    Subjects,
    ensure_jetstream,
)
from ttanjit.common.natsserver import NatsServer
from ttanjit.matchmaker import standings
from ttanjit.matchmaker.ratings import Rating
from ttanjit.matchmaker.service import Matchmaker, run_results


class Faltering:
    """The real ratings bucket; its reads fail while ``failing`` (JetStream
    not answering), and ``fail_puts_after`` puts go through before the
    next ones fail."""

    def __init__(self, kv: Any) -> None:
        self.kv = kv
        self.failing = False
        self.fail_puts_after: int | None = None
        self.puts = 0

    async def get(self, key: str) -> Any:
        if self.failing:
            raise NatsTimeout
        return await self.kv.get(key)

    def _write(self) -> None:
        if self.fail_puts_after is not None and self.puts >= self.fail_puts_after:
            raise NatsTimeout
        self.puts += 1

    async def update(self, key: str, value: bytes, last: int) -> int:
        self._write()
        return int(await self.kv.update(key, value, last=last))

    async def create(self, key: str, value: bytes) -> int:
        self._write()
        return int(await self.kv.create(key, value))


def result(gid: str, a: str, b: str) -> dict[str, Any]:
    return {"game_id": gid, "game": "penalty_rows", "players": {a: 0, b: 1},
            "seats": [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "level": "easy"}],
            "winners": [0], "scores": [3, 20, 9], "substituted": [False, False, False],
            "length_ms": 1000, "ended_by": "rounds"}


async def stored(kv: Any, player: str) -> Rating:
    return Rating.from_json(orjson.loads((await kv.get(f"penalty_rows.{player}")).value))


async def rated(kv: Any, player: str, timeout: float = 10.0) -> Rating:
    """The player's stored rating once there is one."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await stored(kv, player)
        except KeyNotFoundError:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)


@pytest.fixture
async def js_env() -> Any:
    with NatsServer() as server:
        nc = await nats.connect(server.url)
        try:
            buckets = await ensure_jetstream(nc.jetstream(), Subjects())
            yield nc, buckets[RATINGS_BUCKET], buckets[HISTORY_BUCKET]
        finally:
            await nc.close()


async def test_a_rating_that_cannot_be_read_is_not_overwritten(js_env: Any) -> None:
    """The winner has 20 games; while the ratings cannot be read a result of
    theirs arrives: it waits (no new player's rating written over theirs),
    and is rated from their 20 games once the bucket answers."""
    nc, kv, history = js_env
    a, b = f"p_{uuid.uuid4().hex[:8]}", f"p_{uuid.uuid4().hex[:8]}"
    await kv.put(f"penalty_rows.{a}", orjson.dumps(Rating(30.0, 2.0, 20).to_json()))
    bucket = Faltering(kv)
    mm = Matchmaker(nc, bucket, Settings())  # type: ignore[arg-type]
    bucket.failing = True
    stop = asyncio.Event()
    loop = asyncio.create_task(run_results(mm, nc.jetstream(), stop))
    try:
        await nc.jetstream().publish("ttanjit.v1.result.penalty_rows",
                                     orjson.dumps(result("gameaaaaaaaa", a, b)))
        await asyncio.sleep(2.5)  # tried, and tried again
        assert (await stored(kv, a)).games == 20  # untouched
        with pytest.raises(Exception):  # noqa: B017 - not written at all
            await kv.get(f"penalty_rows.{b}")
        bucket.failing = False
        for _ in range(150):  # rated (both players, their entries) once it can read
            if await standings.read_history(history, "penalty_rows", b):
                break
            await asyncio.sleep(0.1)
        r = await stored(kv, a)
        assert r.games == 21 and r.mu > 30.0 and r.last == "gameaaaaaaaa"
        assert (await stored(kv, b)).games == 1
        games = await standings.read_history(history, "penalty_rows", a)
        assert [g["game_id"] for g in games] == ["gameaaaaaaaa"]
        assert games[0]["after"] > games[0]["before"]  # from 20 games of standing, not 0
    finally:
        stop.set()
        await loop


async def test_a_result_applied_half_way_is_not_applied_twice(js_env: Any) -> None:
    """The first player's new rating is written, the second's write fails:
    the result comes again; the first player is not rated a second time
    (one game, the same change in their history), the second is."""
    nc, kv, history = js_env
    a, b = f"p_{uuid.uuid4().hex[:8]}", f"p_{uuid.uuid4().hex[:8]}"
    bucket = Faltering(kv)
    bucket.fail_puts_after = 1
    mm = Matchmaker(nc, bucket, Settings())  # type: ignore[arg-type]
    doc = result("gamebbbbbbbb", a, b)
    with pytest.raises(NatsTimeout):
        await mm.on_result(doc)
    first = await stored(kv, a)
    assert first.games == 1 and first.last == "gamebbbbbbbb"
    bucket.fail_puts_after = None
    mm.ratings.clear()  # as a new leader would: from the bucket
    await mm.on_result(doc)
    assert await stored(kv, a) == first  # not again
    assert (await stored(kv, b)).games == 1
    for p in (a, b):
        games = await standings.read_history(history, "penalty_rows", p)
        assert [g["game_id"] for g in games] == ["gamebbbbbbbb"]
    mine = (await standings.read_history(history, "penalty_rows", a))[0]
    assert mine["delta"] == first.change["delta"]  # type: ignore[index]


async def test_a_rating_that_moved_since_it_was_read_is_not_written_over(js_env: Any) -> None:
    """The leader has a player's rating in memory (a new player's); the
    stored one moves meanwhile: a write of the leader's that a frozen NATS
    server held and applied late (the leader had moved to another server
    and gone on), or a replica that led before. A result is rated from
    what is stored, on its revision: it was written over, and the late
    write could take a rating back."""
    nc, kv, history = js_env
    a, b = f"p_{uuid.uuid4().hex[:8]}", f"p_{uuid.uuid4().hex[:8]}"
    mm = Matchmaker(nc, kv, Settings())
    assert (await mm.rating("penalty_rows", a)).games == 0  # kept in memory
    await kv.put(f"penalty_rows.{a}", orjson.dumps(Rating(30.0, 2.0, 20).to_json()))
    await mm.on_result(result("gamecccccccc", a, b))
    r = await stored(kv, a)
    assert r.games == 21 and r.mu > 30.0 and r.last == "gamecccccccc"
    # the next write goes on the revision this one made
    assert (await mm.rating("penalty_rows", a)).rev == (await kv.get(f"penalty_rows.{a}")).revision


class Moving:
    """The real ratings bucket, whose writes are refused on a moved
    revision while ``moving`` (another writer keeps getting in first)."""

    def __init__(self, kv: Any) -> None:
        self.kv, self.moving, self.refused = kv, True, 0

    async def get(self, key: str) -> Any:
        return await self.kv.get(key)

    async def update(self, key: str, value: bytes, last: int) -> int:
        return await self._write(self.kv.update(key, value, last=last))

    async def create(self, key: str, value: bytes) -> int:
        return await self._write(self.kv.create(key, value))

    async def _write(self, aw: Any) -> int:
        if self.moving:
            aw.close()
            self.refused += 1
            raise KeyWrongLastSequenceError
        return int(await aw)


async def test_a_result_whose_ratings_keep_moving_comes_again_later(js_env: Any) -> None:
    """Rated again at once, then again later from the results stream: never
    acknowledged with nobody rated (audit: it was taken for a bad message)."""
    nc, kv, history = js_env
    a, b = f"p_{uuid.uuid4().hex[:8]}", f"p_{uuid.uuid4().hex[:8]}"
    bucket = Moving(kv)
    mm = Matchmaker(nc, bucket, Settings())  # type: ignore[arg-type]
    stop = asyncio.Event()
    loop = asyncio.create_task(run_results(mm, nc.jetstream(), stop))
    try:
        await nc.jetstream().publish("ttanjit.v1.result.penalty_rows",
                                     orjson.dumps(result("gamedddddddd", a, b)))
        for _ in range(100):
            if bucket.refused > 3:  # the attempts at once, and the result again
                break
            await asyncio.sleep(0.1)
        assert bucket.refused > 3
        bucket.moving = False
        assert (await rated(kv, a)).games == 1 and (await rated(kv, b)).games == 1
    finally:
        stop.set()
        await loop


class HistoryAway:
    """The real history bucket, not answering while ``away``."""

    def __init__(self, kv: Any) -> None:
        self.kv, self.away = kv, True

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.kv, name)

        async def call(*args: Any, **kw: Any) -> Any:
            if self.away:
                raise NatsTimeout
            return await real(*args, **kw)
        return call


async def test_a_history_that_cannot_be_written_comes_again(js_env: Any) -> None:
    """The ratings are written, the 내 기록 entries are not (JetStream stops
    answering): the result comes again, the entries are written with the
    rating change, and nobody is rated twice (the entries were lost)."""
    nc, kv, history = js_env
    a, b = f"p_{uuid.uuid4().hex[:8]}", f"p_{uuid.uuid4().hex[:8]}"
    mm = Matchmaker(nc, kv, Settings())
    away = HistoryAway(history)
    mm._kv_history = away  # type: ignore[assignment]
    doc = result("gamecccccccc", a, b)
    with pytest.raises(NatsTimeout):
        await mm.on_result(doc)
    rated = await stored(kv, a)
    assert rated.games == 1 and await standings.read_history(history, "penalty_rows", a) == []
    away.away = False
    await mm.on_result(doc)  # delivered again
    assert await stored(kv, a) == rated
    games = await standings.read_history(history, "penalty_rows", a)
    assert [g["game_id"] for g in games] == ["gamecccccccc"]
    assert games[0]["delta"] == rated.change["delta"]  # type: ignore[index]


async def test_a_result_no_retry_can_rate_blocks_nothing(
        js_env: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A result the bucket refuses for what it is (a player id that is no
    key) is logged and left at once, not tried again for ever; the result
    after it is rated. (Only NATS being away keeps a result for later.)"""
    nc, kv, _ = js_env
    good, other = f"p_{uuid.uuid4().hex[:8]}", f"p_{uuid.uuid4().hex[:8]}"
    mm = Matchmaker(nc, kv, Settings())
    stop = asyncio.Event()
    loop = asyncio.create_task(run_results(mm, nc.jetstream(), stop))
    try:
        js = nc.jetstream()
        await js.publish("ttanjit.v1.result.penalty_rows",
                         orjson.dumps(result("gamedddddddd", "no key", other)))
        await js.publish("ttanjit.v1.result.penalty_rows",
                         orjson.dumps(result("gameeeeeeeee", good, other)))
        assert (await rated(kv, good)).last == "gameeeeeeeee"
        assert sum(r.getMessage() == "bad result message" for r in caplog.records) == 1
        assert not any("tried again" in r.getMessage() for r in caplog.records)
    finally:
        stop.set()
        await loop


async def test_a_leader_fenced_mid_result_leaves_it_to_the_next(js_env: Any) -> None:
    """Another replica took the lobby while this one rated a result (its
    commit is fenced): the result is not acknowledged — the next leader
    rates it — and this replica stops taking results."""
    from ttanjit.matchmaker.store import Fenced

    nc, kv, _ = js_env
    a, b = f"p_{uuid.uuid4().hex[:8]}", f"p_{uuid.uuid4().hex[:8]}"
    old = Matchmaker(nc, kv, Settings())

    async def fenced() -> None:
        raise Fenced

    old.seated[a] = ("gameffffffff", 0)  # freeing the seat commits the lobby
    old.commit = fenced  # type: ignore[method-assign]
    stop = asyncio.Event()
    js = nc.jetstream()
    await js.publish("ttanjit.v1.result.penalty_rows",
                     orjson.dumps(result("gameffffffff", a, b)))
    await asyncio.wait_for(run_results(old, js, stop), 10)  # returns: left to the next
    new = Matchmaker(nc, kv, Settings())
    loop = asyncio.create_task(run_results(new, js, stop))
    try:
        assert (await rated(kv, a)).last == "gameffffffff"
    finally:
        stop.set()
        await loop
