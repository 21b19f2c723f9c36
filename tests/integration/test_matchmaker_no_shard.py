"""When no shard takes a game (every shard draining, every one at
``TTANJIT_CAPACITY``, none heard from), matchmaking stops: it must show.

A real matchmaker on a nats-server of its own, fed shard heartbeats by the
test: the players stay counted in ``ttanjit_mm_tickets_waiting`` on every
scrape (their matches are put back, not lost from the gauge), the oldest
ticket's age grows (``ttanjit_mm_oldest_ticket_age_seconds``, what the wait
alert reads while nobody is placed), ``ttanjit_mm_placement_failures_total``
counts by ``reason``, and the log says it once when placement starts failing
and once when a shard takes games again — not once per tick."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
import urllib.request

import grpc
import nats
import orjson
import pytest
from conftest import Services
from prometheus_client.parser import text_string_to_metric_families

from ttanjit.common.natsserver import free_port
from ttanjit.matchmaker.placement import ShardTable
from ttanjit.v1 import matchmaker_pb2, matchmaker_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

HEARTBEAT = "ttanjit.v1.shards.heartbeat"
FAILING = "cannot place games"
RECOVERED = "games are placed again"


def samples(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def value(got: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
          **labels: str) -> float:
    return got[(name, tuple(sorted(labels.items())))]


def test_why_no_shard_takes_a_game() -> None:
    """The reasons (pure ShardTable): none heard from, all draining, the rest full."""
    table = ShardTable()
    assert not table.candidates(10_000) and table.why_none(10_000) == "no_shard"
    beat = {"shard": "a", "grpc": "h:1", "games": 0, "capacity": 10, "draining": True}
    table.heartbeat(beat, 10_000)
    assert table.why_none(10_000) == "draining"
    table.heartbeat({**beat, "shard": "b", "draining": False, "games": 10}, 10_000)
    assert not table.candidates(10_000) and table.why_none(10_000) == "capacity"
    assert table.why_none(20_000) == "no_shard"  # both silent for over 5 s


def test_placements_under_way_count_as_a_shards_games() -> None:
    """Overload audit: a tick's matches all went to the shard with room for
    a few (its heartbeat said 1,998 of 2,000), and it refused the rest
    "full" 7,120 times. A placement asked of a shard counts as one of its
    games until it is answered."""
    table = ShardTable()
    table.heartbeat({"shard": "a", "grpc": "h:1", "games": 8, "capacity": 10}, 10_000)
    table.heartbeat({"shard": "b", "grpc": "h:2", "games": 9, "capacity": 10}, 10_000)
    assert [s.shard for s in table.candidates(10_000)] == ["a", "b"]
    table.asking("a", 1)
    table.asking("a", 1)
    assert [s.shard for s in table.candidates(10_000)] == ["b"]
    table.asking("b", 1)
    assert not table.candidates(10_000) and table.why_none(10_000) == "capacity"
    # a heartbeat while they are under way keeps them counted
    table.heartbeat({"shard": "a", "grpc": "h:1", "games": 8, "capacity": 10}, 10_500)
    assert not table.candidates(10_500)
    table.asking("a", -1)  # answered (refused, or made: then placed() counts it)
    assert [s.shard for s in table.candidates(10_500)] == ["a"]


def test_the_recovery_line_says_how_long_placements_failed(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Operator audit: "games are placed again (on shard-2) after 201.6 s of
    failed placements" was 10 s of failures (50 ticks) and then 190 s with
    nobody to place, the players gone: an SRE read a 3-minute outage. The
    line says how long they failed, how many, and since when none was tried."""
    from ttanjit.common.config import Settings
    from ttanjit.matchmaker import service

    clock = [1_000_000]
    monkeypatch.setattr(service, "now_ms", lambda: clock[0])
    mm = service.Matchmaker(None, None, Settings())
    for _ in range(50):  # one each 200 ms tick, for 10 s
        mm._placement_failed("draining")
        clock[0] += 200
    clock[0] += 190_000  # nobody waits: nothing is tried
    with caplog.at_level("WARNING", logger="ttanjit.matchmaker"):
        mm._placement_ok("shard-2")
    (line,) = [r.getMessage() for r in caplog.records if RECOVERED in r.getMessage()]
    assert line == ("games are placed again (on shard-2): placements failed for 9.8 s "
                    "(50 tries), the last 190.2 s ago"), line


async def test_players_waiting_for_a_shard_show_in_metrics_and_logs(svc: Services) -> None:
    services = svc  # a nats-server of its own: no other test's shard heartbeats
    mm = services.start("matchmaker", name="mm-noshard", env={"TTANJIT_BOT_WAIT_MS": "200"})
    nc = await nats.connect(services.nats_url)
    beat = {"shard": "shard-x", "grpc": f"127.0.0.1:{free_port()}", "games": 3, "players": 6,
            "capacity": 2000, "draining": True}

    async def heartbeats() -> None:
        while True:
            await nc.publish(HEARTBEAT, orjson.dumps({**beat, "ts": int(time.time() * 1000)}))
            await asyncio.sleep(0.5)

    beating = asyncio.create_task(heartbeats())
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{mm.ports['grpc']}")
    try:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        players = ["p_" + secrets.token_hex(8) for _ in range(2)]
        # and 40 more of another table, 10 matches a tick: while no shard
        # can take one, none is formed (each was tried, failed and put back,
        # 1,860 a second with 4,300 waiting: overload audit)
        crowd = ["p_" + secrets.token_hex(8) for _ in range(40)]
        lobby = await nc.subscribe(f"ttanjit.v1.player.{players[0]}.lobby")
        for i, p in enumerate(players):
            rep = await stub.Enqueue(matchmaker_pb2.EnqueueRequest(
                player=matchmaker_pb2.PlayerRef(player=p, nickname=f"대기{i}"), game="onecard",
                seats=2))
            assert rep.ticket and not rep.error_code, rep
        for i, p in enumerate(crowd):
            rep = await stub.Enqueue(matchmaker_pb2.EnqueueRequest(
                player=matchmaker_pb2.PlayerRef(player=p, nickname=f"무리{i}"), game="penalty_rows",
                seats=4))
            assert rep.ticket and not rep.error_code, rep
        port = mm.ports["metrics"]
        # past the matchmaker's first 3 s (it waits for heartbeats then)
        deadline = time.monotonic() + 15
        while value(samples(port), "ttanjit_mm_placement_failures_total",
                    reason="draining") < 3:
            assert time.monotonic() < deadline, mm.log()[-3000:]
            await asyncio.sleep(0.2)

        # every scrape sees both players waiting, and the oldest ticket ages
        ages = []
        for _ in range(15):
            got = samples(port)
            assert value(got, "ttanjit_mm_tickets_waiting", game="onecard") == 2, got
            assert value(got, "ttanjit_mm_tickets_waiting", game="penalty_rows") == 40, got
            assert value(got, "ttanjit_mm_tickets_waiting", game="hakka") == 0
            ages.append(value(got, "ttanjit_mm_oldest_ticket_age_seconds", game="onecard"))
            await asyncio.sleep(0.13)
        assert ages == sorted(ages) and ages[0] >= 2.5 and ages[-1] > ages[0], ages
        failures = {r: value(got, "ttanjit_mm_placement_failures_total", reason=r)
                    for r in ("error", "no_shard", "draining", "capacity")}
        assert failures["draining"] >= 5 and failures["error"] == 0, failures
        assert value(got, "ttanjit_mm_match_wait_seconds_count", game="onecard") == 0
        # one failure a tick (5 a second), not one per match (11 a tick);
        # fewer when a loaded machine's matchmaker ticked late, never more
        before, t0 = failures["draining"], time.monotonic()
        await asyncio.sleep(2)
        rate = (value(samples(port), "ttanjit_mm_placement_failures_total", reason="draining")
                - before) / (time.monotonic() - t0)
        assert 0 < rate <= 8, rate

        # the shard stops draining but is full: another reason, the same episode
        beat.update(draining=False, games=2000)
        deadline = time.monotonic() + 10
        while value(samples(port), "ttanjit_mm_placement_failures_total",
                    reason="capacity") < 3:
            assert time.monotonic() < deadline, mm.log()[-3000:]
            await asyncio.sleep(0.2)
        assert mm.log().count(FAILING) == 1, mm.log()[-3000:]
        assert "every shard is draining" in mm.log()
        assert RECOVERED not in mm.log()

        # a shard that takes games: the two are matched, the log says so once
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
        services.start("shard", name="shard-noshard")
        matched = orjson.loads((await lobby.next_msg(timeout=20)).data)
        assert matched["type"] == "matched", matched
        deadline = time.monotonic() + 5
        while value(samples(port), "ttanjit_mm_tickets_waiting", game="onecard") != 0:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        got = samples(port)
        assert value(got, "ttanjit_mm_oldest_ticket_age_seconds", game="onecard") == 0
        assert value(got, "ttanjit_mm_match_wait_seconds_count", game="onecard") == 2
        log = mm.log()
        assert log.count(FAILING) == 1 and log.count(RECOVERED) == 1, log[-3000:]
        assert log.index(FAILING) < log.index(RECOVERED)
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
        await channel.close()
        await nc.close()
