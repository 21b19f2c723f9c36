"""The bot-worker service over a real nats-server (issue 4; docs/protocol.md
section 3; docs/metrics.md "Bot worker"): real ``python -m ttanjit.bots``
processes answering ``ttanjit.v1.bots.decide`` in the queue group ``bots``."""

from __future__ import annotations

import asyncio
import signal
import time
import urllib.request
from pathlib import Path
from typing import Any

import nats
import orjson
import pytest
from conftest import Services
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from prometheus_client.parser import text_string_to_metric_families

from ttanjit import bots
from ttanjit.bots import ladder
from ttanjit.common.natsserver import NatsServer
from ttanjit.games import engine_class
from ttanjit.games.base import Engine, SeatSpec, Setup

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

SUBJECT = "ttanjit.v1.bots.decide"
READY = "bot worker ready"


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def value(m: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str,
          **labels: str) -> float:
    return m.get((name, tuple(sorted(labels.items()))), 0.0)


def position(game: str, seed: int = 3) -> tuple[Engine, int]:
    """A position where some seat has a decision to make."""
    e = engine_class(game)(Setup(game, {"seats": 4}, [SeatSpec("bot", "normal")] * 4, seed))
    seat = ladder.actors(e)[0]
    return e, seat


async def ask(nc: Any, body: dict[str, Any] | bytes, timeout: float = 3.0) -> dict[str, Any]:
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    msg = await nc.request(SUBJECT, data, timeout=timeout)
    out: dict[str, Any] = orjson.loads(msg.data)
    return out


async def test_worker_answers_every_game_and_level(services: Services, nc: Any) -> None:
    """docs/protocol.md 3: a legal action from the view alone, for every game and
    level; One Card press requests; metrics by game and level."""
    w = services.start("bots", ready=READY)
    for game in bots.GAMES:
        e, seat = position(game)
        for level in bots.LEVELS:
            # a roomy budget: the hard search still stops at its 200 ms cap
            req = {"game": game, "level": level, "seat": seat, "view": e.view(seat),
                   "budget_ms": 2500, "rng": 42}
            reply = await ask(nc, req)
            assert reply["action"] in e.legal_actions(seat), (game, level, reply)
            assert e.clone().apply(1000, seat, reply["action"]).ok
    # One Card: a window is open -> every level answers when it would press
    e, seat = position("onecard")
    view = e.view(seat)
    view["window"] = {"holder": (seat + 1) % 4, "closes_at": 3000}
    reply = await ask(nc, {"kind": "one_card", "game": "onecard", "level": "hard", "seat": seat,
                           "view": view, "budget_ms": 2500, "rng": 1})
    assert 250 <= reply["press_after_ms"] <= 600
    view["window"] = None
    reply = await ask(nc, {"kind": "one_card", "game": "onecard", "level": "hard", "seat": seat,
                           "view": view, "budget_ms": 2500, "rng": 1})
    assert reply == {"press_after_ms": None}
    m = scrape(w.ports["metrics"])
    for game in bots.GAMES:
        for level in bots.LEVELS:
            assert value(m, "ttanjit_bot_decisions_total", game=game, level=level) >= 1
            assert value(m, "ttanjit_bot_decision_seconds_count", game=game, level=level) >= 1
    assert value(m, "ttanjit_bot_capacity") >= 1
    assert ("ttanjit_bot_inflight", ()) in m


async def test_bad_requests_get_a_clear_error_and_change_nothing(services: Services,
                                                                 nc: Any) -> None:
    """Bad input gets a stable code and a Korean message; the worker keeps serving."""
    w = services.start("bots", ready=READY)
    e, seat = position("onecard")
    good = {"game": "onecard", "level": "normal", "seat": seat, "view": e.view(seat),
            "budget_ms": 2500}
    bad: list[dict[str, Any] | bytes] = [
        b"not json", b"[1, 2]", {**good, "game": "poker"}, {**good, "level": "godlike"},
        {**good, "seat": "two"}, {**good, "seat": 99}, {**good, "view": [1]},
        {**good, "budget_ms": -5}, {**good, "kind": "chat"}, {**good, "rng": 1.5},
    ]
    for body in bad:
        reply = await ask(nc, body)
        assert reply["ok"] is False and reply["code"] == "bad_request", body
        assert reply["message"] == "잘못된 봇 요청이에요."
    reply = await ask(nc, {**good, "game": "hakka"})  # a One Card view for Hakka
    assert reply["ok"] is False and reply["code"] == "bad_request"
    # a view the policy cannot read: it fails, the worker answers and lives on
    broken = {"game": "onecard", "turn": seat, "hand": ["AS"]}
    reply = await ask(nc, {**good, "view": broken})
    assert reply == {"ok": False, "code": "bot_error", "message": "봇이 수를 고르지 못했어요."}
    assert (await ask(nc, good))["action"] in e.legal_actions(seat)
    m = scrape(w.ports["metrics"])
    assert sum(v for (name, _), v in m.items() if name == "ttanjit_bot_errors_total") >= len(bad)
    assert w.alive()


async def test_tiny_budget_is_answered_in_time_or_abandoned(services: Services, nc: Any) -> None:
    """docs/protocol.md 3: a decision that cannot be made within its budget is
    abandoned (no reply: the game's timeout rule acts), never answered late;
    a roomy budget is answered. (Behaviour only: latency is a benchmark.)"""
    w = services.start("bots", ready=READY)
    e, seat = position("onecard", seed=5)
    base = {"game": "onecard", "level": "hard", "seat": seat, "view": e.view(seat), "rng": 3}
    answered = abandoned = 0
    for budget in (1, 1, 1, 1, 1, 2000):
        try:
            reply = await ask(nc, {**base, "budget_ms": budget}, timeout=budget / 1000 + 1.5)
            assert reply["action"] in e.legal_actions(seat)
            answered += 1
        except NatsTimeout:
            assert budget == 1, "a roomy budget must be answered"
            abandoned += 1
    m = scrape(w.ports["metrics"])
    assert value(m, "ttanjit_bot_abandoned_total", game="onecard", level="hard") == abandoned
    assert value(m, "ttanjit_bot_decisions_total", game="onecard", level="hard") == answered
    assert answered >= 1


async def test_queue_group_spreads_requests_over_workers(services: Services, nc: Any) -> None:
    """DESIGN 3.2: more workers = more capacity, nothing to configure."""
    a = services.start("bots", name="bots-a", ready=READY)
    b = services.start("bots", name="bots-b", ready=READY)
    e, seat = position("penalty_rows")
    req = {"game": "penalty_rows", "level": "normal", "seat": seat, "view": e.view(seat),
           "budget_ms": 2500}
    replies = await asyncio.gather(*(ask(nc, {**req, "rng": i}) for i in range(40)))
    assert all(r["action"] in e.legal_actions(seat) for r in replies)
    counts = [value(scrape(p.ports["metrics"]), "ttanjit_bot_decisions_total",
                    game="penalty_rows", level="normal") for p in (a, b)]
    assert sum(counts) == 40 and min(counts) > 0, counts


async def test_sigterm_finishes_in_flight_decisions(services: Services, nc: Any) -> None:
    """Graceful shutdown: requests already taken are answered, then exit 0."""
    w = services.start("bots", ready=READY, env={"TTANJIT_BOT_CAPACITY": "1"})
    e, seat = position("hakka", seed=8)
    req = {"game": "hakka", "level": "hard", "seat": seat, "view": e.view(seat),
           "budget_ms": 3000}
    pending = [asyncio.ensure_future(ask(nc, {**req, "rng": i}, timeout=5)) for i in range(3)]
    for _ in range(100):  # until all three are received: one runs, two wait for the slot
        if value(scrape(w.ports["metrics"]), "ttanjit_bot_inflight") >= 3:
            break
        await asyncio.sleep(0.02)
    w.proc.send_signal(signal.SIGTERM)
    replies = await asyncio.gather(*pending)
    assert all(r["action"] in e.legal_actions(seat) for r in replies)
    assert await asyncio.to_thread(w.proc.wait, 10) == 0
    assert "stopped" in w.log()
    with pytest.raises((NoRespondersError, NatsTimeout)):
        await ask(nc, {**req, "rng": 9}, timeout=0.5)


@pytest.fixture
def own_nats(tmp_path: Path) -> Any:
    server = NatsServer().start()
    try:
        yield server
    finally:
        server.stop()


async def test_dead_worker_leaves_the_turn_to_the_games_timeout(own_nats: NatsServer,
                                                                tmp_path: Path) -> None:
    """RULES.md 3.9 / 4: with no bot worker answering, the bot seat is not a
    hang — the game's own timeout rule acts (here Hakka's 1 s turns); once a
    worker is up, the bots play."""
    from shardkit import RecordTail, create_game, player_id

    svc = Services(own_nats.url, tmp_path)
    try:
        shard = svc.start("shard", name="shard-bt")
        # one human seat keeps the game in real time (a bot-only game is played out at once)
        seats = [{"kind": "human", "player_id": player_id("h")}]
        seats += [{"kind": "bot", "level": "normal"}] * 3
        gid = await create_game(shard.ports["grpc"], "hakka", seats, {"turn_ms": 1000}, 5)
        nc = await nats.connect(own_nats.url)
        tail = await RecordTail(nc, gid).start()
        # two 1 s turns time out with nobody answering (looked at until
        # they have: a loaded machine's shard may come to them late)
        deadline = time.monotonic() + 20
        while True:
            await tail.caught_up()
            assert tail.hosted is not None
            if tail.hosted.engine.result()["counters"]["timeouts"] >= 2:
                break
            assert time.monotonic() < deadline, "no two turns timed out in 20 s"
            await asyncio.sleep(0.1)
        assert not any(x.get("by") == "bot" for x in tail.entries)
        svc.start("bots", ready=READY)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(x.get("by") == "bot" for x in tail.entries):
            await asyncio.sleep(0.1)
        assert any(x.get("by") == "bot" for x in tail.entries)
        await tail.stop()
        await nc.close()
    finally:
        svc.stop_all()
