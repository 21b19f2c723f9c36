"""A bot's reply is checked as a player's command is (docs/protocol.md 3;
found by an audit helper): the bot pool is any client of the ``bots``
queue group, and a reply that was legal but carried a field nested past
the record's depth was applied, could not be written, and stopped the game
for good — no input was written or answered again. The shard is a real
process; the bot worker is this test, answering with such a reply."""

from __future__ import annotations

import asyncio
from typing import Any

import nats
import orjson
import pytest
from conftest import Services
from shardkit import SUBJ, RecordTail, command, create_game, player_id

from ttanjit import bots

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


async def test_a_bot_reply_nested_past_the_records_depth_is_refused_and_the_game_goes_on(
        svc: Services) -> None:
    shard = svc.start("shard", name="shard-a")
    nc = await nats.connect(svc.nats_url)
    asked: list[int] = []
    deep = b"[" * 300 + b"1" + b"]" * 300  # (orjson writes 255 levels at most)

    async def worker(msg: Any) -> None:  # a legal move, and something deep beside it
        req = orjson.loads(msg.data)
        asked.append(req["seat"])
        act = bots.decide(req["game"], req["level"], req["seat"], req["view"], req["rng"])
        await msg.respond(b'{"action":' + orjson.dumps(act)[:-1] + b',"x":' + deep + b"}}")

    sub = await nc.subscribe(SUBJ.bots_decide, queue="bots", cb=worker)
    try:
        me = player_id("me")
        gid = await create_game(shard.ports["grpc"], "penalty_rows", [
            {"kind": "human", "player_id": me}, {"kind": "bot", "level": "easy"},
            {"kind": "bot", "level": "easy"}], {"rounds": 1}, 5)
        tail = await RecordTail(nc, gid).start()
        for _ in range(100):  # the bots think (0.6-1.8 s), then ask
            if len(set(asked)) == 2:
                break
            await asyncio.sleep(0.1)
        assert set(asked) == {1, 2}
        await asyncio.sleep(0.3)  # (their replies handled)
        # the game still writes and answers: my move is taken
        move = tail.hosted.engine.legal_actions(0)[0]  # type: ignore[union-attr]
        r = await command(nc, gid, me, move, retry_s=5)
        assert r["ok"] is True, r
        await tail.caught_up()
        by_bot = [e for e in tail.rec.entries if e.get("by") == "bot"]  # type: ignore[union-attr]
        assert by_bot == [] and not any("x" in e.get("action", {}) for e in tail.rec.entries)  # type: ignore[union-attr]
    finally:
        await sub.unsubscribe()
        await nc.close()
