"""RULES.md 4: while every human seat is away the game is paused, and in
all three games its bots wait too. One Card's engine refused a paused
game's actions, but 줄줄이 벌점's bots picked and confirmed their cards
while the players were away, and Hakka's were asked for a move their
policy would not make (a wasted decision and a warning per bot turn).
A One Card [원카드!] window the pause held open lost its bots' presses
(refused while paused, never made again): a player whose connection
dropped just after playing down to one card came back to a window nobody
else pressed. The shard is a real process; the bot pool is this test,
which answers with the real bots' decisions and notes which seats it was
asked for."""

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
# a One Card deal whose humans, playing down greedily, hold one card after
# two or three of the bot's turns
WINDOW_SEED = 21


def human_seat(game: str, n: int, options: dict[str, Any]) -> int:
    """A seat that does not act first, so the bots have a move to make
    (줄줄이 벌점's seats all pick at once: any seat). Hakka's first dealer
    depends on which seats are human: each seat is tried as the human's."""
    for mine in range(n):
        e = engine_class(game)(Setup(game, {**options, "seats": n}, [
            SeatSpec("human") if s == mine else SeatSpec("bot", "easy") for s in range(n)], SEED))
        if mine not in ladder.actors(e):
            return mine
    return 0


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

    sub = None
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
        # a bot worker from now on: every ask it gets came while paused (one
        # there from the start was asked before the pause when a loaded
        # machine took the bots' thinking time, 900 ms, to get here)
        sub = await nc.subscribe(SUBJ.bots_decide, queue="bots", cb=worker)
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
        if sub is not None:
            await sub.unsubscribe()
        await nc.close()


def leaves_one_or_most(hand: int, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """A One Card move that leaves one card when there is one, else the
    play of the most cards that leaves two or more, else draw or take."""
    plays = [a for a in legal if a["type"] == "play" and hand - len(a["cards"]) >= 1]
    one = [a for a in plays if hand - len(a["cards"]) == 1]
    if one:
        return one[0]
    if plays:
        return max(plays, key=lambda a: len(a["cards"]))
    return next(a for a in legal if a["type"] in ("take", "draw", "pass"))


async def test_a_one_card_window_held_open_by_a_pause_is_pressed_when_a_human_is_back(
        svc: Services) -> None:
    """RULES.md 1.7 and 4: the window's 3,000 ms are game time, which the
    pause stops; the hard bot's press (250-600 ms after the window opened)
    comes once a human is back, not lost to the pause."""
    shard = svc.start("shard", name="shard-a")
    nc = await nats.connect(svc.nats_url)

    async def worker(msg: Any) -> None:
        req = orjson.loads(msg.data)
        act = bots.decide(req["game"], "easy", req["seat"], req["view"], req["rng"])
        await msg.respond(orjson.dumps({"action": act}))

    sub = await nc.subscribe(SUBJ.bots_decide, queue="bots", cb=worker)
    try:
        a, b = player_id("a"), player_id("b")
        gid = await create_game(shard.ports["grpc"], "onecard", [
            {"kind": "human", "player_id": a}, {"kind": "human", "player_id": b},
            {"kind": "bot", "level": "hard"}], {}, WINDOW_SEED)
        tail = await RecordTail(nc, gid).start()
        players = {0: a, 1: b}

        def presses() -> list[dict[str, Any]]:
            return [e for e in tail.entries if e.get("action", {}).get("type") == "one_card"]

        loop = asyncio.get_running_loop()
        end = loop.time() + 60
        while True:  # the humans play until one of them plays down to one card
            assert loop.time() < end, "no human reached one card within 60 s"
            await asyncio.sleep(0.05)
            await tail.caught_up()
            eng = tail.hosted.engine  # type: ignore[union-attr]
            assert not eng.finished, "the game ended before a human held one card"
            seat = eng.turn
            if seat not in players:
                continue
            legal = [x for x in eng.legal_actions(seat) if x["type"] not in ("one_card", "resume")]
            if not legal:
                continue
            move = leaves_one_or_most(len(eng.hands[seat]), legal)
            holder = len(eng.hands[seat]) - len(move.get("cards", [])) == 1
            other = players[1 - seat]
            if holder:  # everybody else away first: the pause starts with the holder's
                assert (await command(nc, gid, other, {"type": "disconnect"}))["ok"]
            before = len(presses())
            if not holder:
                r = await command(nc, gid, players[seat], move)
                assert r["ok"] is True, (move, r)
                continue
            # the move and the holder's goodbye go out together: the shard
            # applies them back to back, long before the hard bot's press
            # 250 ms later (sent after the move's reply, a loaded machine's
            # durable append let the press come first, and the game went
            # another way: CI)
            r, bye = await asyncio.gather(command(nc, gid, players[seat], move),
                                          command(nc, gid, players[seat], {"type": "disconnect"}))
            assert r["ok"] is True and bye["ok"] is True, (move, r, bye)
            await tail.caught_up()
            if len(presses()) > before:  # a slow machine: pressed before the pause
                assert (await command(nc, gid, other, {"type": "reconnect"}))["ok"]
                assert (await command(nc, gid, players[seat], {"type": "reconnect"}))["ok"]
                continue
            break
        await asyncio.sleep(1.0)  # the hard bot's press was due meanwhile
        await tail.caught_up()
        eng = tail.hosted.engine  # type: ignore[union-attr]
        assert eng.presence.paused and eng.window_holder == seat
        assert len(presses()) == before
        assert (await command(nc, gid, players[seat], {"type": "reconnect"}))["ok"]
        for _ in range(60):  # the press comes 250-600 ms after the pause ends
            await tail.caught_up()
            if len(presses()) > before:
                break
            await asyncio.sleep(0.05)
        pressed = presses()[before:]
        assert pressed and pressed[0].get("seat") == 2 and pressed[0].get("by") == "bot", pressed
    finally:
        await sub.unsubscribe()
        await nc.close()
