"""When a gateway counts as gone (ttanjit.common.gateways, docs/protocol.md
2.1): NATS's "no responders" in every round for the whole time asked for,
however often rounds come. Each round's answers are scripted here (the
ask itself, a NATS request, is exercised by
tests/integration/test_gateway_gone.py)."""

from __future__ import annotations

from typing import Any

import pytest

from ttanjit.common import gateways
from ttanjit.common.gateways import GatewayCheck
from ttanjit.common.nats import Subjects


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def check(monkeypatch: pytest.MonkeyPatch) -> tuple[GatewayCheck, Clock, set[str]]:
    clock, missing = Clock(), set()  # the gateways nobody subscribes for now
    monkeypatch.setattr(gateways, "time", clock)
    c = GatewayCheck(Subjects(), gone_after_s=3.0)

    async def no_one(nc: Any, gw: str) -> bool:
        return gw in missing
    monkeypatch.setattr(c, "no_one", no_one)
    return c, clock, missing


async def test_gone_only_once_missed_for_the_whole_time(check: Any) -> None:
    c, clock, missing = check
    missing.add("dead")
    assert await c.round(None, ["dead", "live"]) == ([], {"live"})
    # rounds called early (a lost link's) do not make it gone sooner
    for _ in range(4):
        clock.now += 0.7
        gone, there = await c.round(None, ["dead", "live"])
        assert gone == [] and there == {"live"}
    clock.now += 0.3  # 3 s since the first miss
    assert await c.round(None, ["dead", "live"]) == ([("dead", 1000.0)], {"live"})
    # found gone, it starts over
    clock.now += 1
    assert await c.round(None, ["dead"]) == ([], set())


async def test_an_answer_or_a_round_without_it_starts_the_count_over(check: Any) -> None:
    c, clock, missing = check
    missing.add("flaky")
    await c.round(None, ["flaky"])
    clock.now += 2
    missing.clear()  # it answers once (its NATS connection back)
    assert await c.round(None, ["flaky"]) == ([], {"flaky"})
    missing.add("flaky")
    clock.now += 2
    await c.round(None, ["flaky"])
    clock.now += 2  # 4 s since the first miss, 2 s since the answer
    assert await c.round(None, ["flaky"]) == ([], set())
    await c.round(None, [])  # not asked (no player on it any more): forgotten
    clock.now += 5
    assert await c.round(None, ["flaky"]) == ([], set())
    c.reset()  # (the asker's own NATS connection away)
    clock.now += 5
    assert await c.round(None, ["flaky"]) == ([], set())
