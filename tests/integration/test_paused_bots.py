"""RULES.md 4: while every human seat is away the game is paused, and in
all three games its bots wait too. One Card's engine refused a paused
game's actions, but 줄줄이 벌점's bots picked and confirmed their cards
while the players were away, and Hakka's were asked for a move their
policy would not make (a wasted decision and a warning per bot turn).
The shard is a real process; the bot pool is this test, which answers
with the real bots' decisions and notes which seats it was asked for."""

from __future__ import annotations

import asyncio
from typing import Any

import nats
import orjson
import pytest
from conftest import Services
from shardkit import SUBJ, RecordTail, command, create_game, player_id

from ttanjit import bots
from ttanjit.bots import ladder
from ttanjit.games import engine_class
from ttanjit.games.base import SeatSpec, Setup

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

GAMES = [("onecard", 3, {}), ("penalty_rows", 3, {"rounds": 1}), ("hakka", 4, {})]
SEED = 7
# the bots think 600-1,800 ms before they ask (RULES.md 4, bots.timing)
THINKING_S = 2.5


def human_seat(game: str, n: int, options: dict[str, Any]) -> int:
    """A seat that does not act first, so the bots have a move to make
    (줄줄이 벌점's seats all pick at once: any seat)."""
    e = engine_class(game)(Setup(game, {**options, "seats": n},
                                 [SeatSpec("bot", "easy")] * n, SEED))
    first = set(ladder.actors(e))
    return next((s for s in range(n) if s not in first), 0)


@pytest.mark.parametrize(("game", "n", "options"), GAMES, ids=[g for g, _, _ in GAMES])
async def test_a_paused_games_bots_wait_for_its_humans(svc: Services, game: str, n: int,
                                                      options: dict[str, Any]) -> None:
    shard = svc.start("shard", name="shard-a")
    nc = await nats.connect(svc.nats_url)
    asked: list[int] = []

    async def worker(msg: Any) -> None:
        req = orjson.loads(msg.data)
        if req.get("kind") == "one_card":  # a [원카드!] press: never here (nobody holds one)
            await msg.respond(b"{}")
            return
        asked.append(req["seat"])
        act = bots.decide(req["game"], req["level"], req["seat"], req["view"], req["rng"])
        await msg.respond(orjson.dumps({"action": act}))

    sub = await nc.subscribe(SUBJ.bots_decide, queue="bots", cb=worker)
    try:
        me = player_id("me")
        mine = human_seat(game, n, options)
        seats = [{"kind": "human", "player_id": me} if s == mine else
                 {"kind": "bot", "level": "easy"} for s in range(n)]
        gid = await create_game(shard.ports["grpc"], game, seats, options, SEED)
        tail = await RecordTail(nc, gid).start()
        # the only human goes away at once (the gateway says so when the
        # socket closes): every human seat is away, the game is paused
        r = await command(nc, gid, me, {"type": "disconnect"})
        assert r["ok"] is True, r
        await asyncio.sleep(THINKING_S)
        await tail.caught_up()
        assert tail.hosted is not None and tail.hosted.engine.presence.paused
        assert asked == [], f"bots asked while paused: seats {asked}"
        assert [e for e in tail.entries if e.get("by") == "bot"] == []
        # back: the bots play on
        r = await command(nc, gid, me, {"type": "reconnect"})
        assert r["ok"] is True, r
        for _ in range(int(THINKING_S * 20)):
            await tail.caught_up()
            if any(e.get("by") == "bot" for e in tail.entries):
                break
            await asyncio.sleep(0.05)
        assert asked and any(e.get("by") == "bot" for e in tail.entries), asked
    finally:
        await sub.unsubscribe()
        await nc.close()
