"""RULES.md 4 at the shard: once a bot took a seat (after ``leave`` or after
the absence timer), the player may watch but not retake it. Commands sent
straight to the shard's NATS subject (no gateway in between) for that seat
are refused with ``seat_is_bot`` and change nothing, while the bot keeps
playing the seat; sync (watching) keeps working (docs/protocol.md 1, 2)."""

from __future__ import annotations

from typing import Any

import nats
import pytest
from conftest import Services
from shardkit import EventLog, RecordTail, command, create_game, player_id, sync, until

from ttanjit.games.base import COMMON_MESSAGES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def _refused_seat_is_bot(reply: dict[str, Any], what: Any) -> None:
    assert reply["ok"] is False and reply["code"] == "seat_is_bot", (what, reply)
    assert reply["message"] == COMMON_MESSAGES["seat_is_bot"], reply


async def test_substituted_player_cannot_retake_the_seat(svc: Services) -> None:
    """RULES.md 4 ("The player may watch but not retake the seat"): a player
    who left (seat 0) and one the 60 s rule replaced (seat 1; 1.5 s here)
    get ``seat_is_bot`` for every game action — including ones the engine
    would accept for the seat right now — and for ``leave``, ``reconnect``
    and ``disconnect``; nothing of theirs is recorded afterwards; the bot
    plays both seats; both can still watch (a spectator's view)."""
    shard = svc.start("shard", name="shard-a", env={"TTANJIT_ABSENCE_MS": "1500"})
    nc = await nats.connect(svc.nats_url)
    pids = [player_id(str(i)) for i in range(3)]
    gid = await create_game(shard.ports["grpc"], "penalty_rows",
                            [{"kind": "human", "player_id": p} for p in pids], {"rounds": 1}, 11)
    tail = await RecordTail(nc, gid).start()
    watch = await EventLog().subscribe(nc, f"ttanjit.v1.player.{pids[2]}.events")

    async def try_seat(seat: int) -> int:
        # no bot worker yet, so the bot that took the seat cannot pick: the
        # engine would accept these for the seat now (a worker from the
        # start picked and confirmed first when a loaded machine took its
        # thinking time, >= 600 ms, to get here)
        await tail.caught_up()
        eng = tail.hosted.engine  # type: ignore[union-attr]
        assert eng.presence.substituted[seat]
        acts = eng.legal_actions(seat)
        assert acts, "the seat has a game action"
        mark = len(tail.entries)
        for action in [*acts[:3], {"type": "confirm"}, {"type": "resume"},
                       {"type": "leave"}, {"type": "reconnect"}, {"type": "disconnect"}]:
            _refused_seat_is_bot(await command(nc, gid, pids[seat], action), action)
        return mark

    assert (await command(nc, gid, pids[0], {"type": "leave"}))["ok"]
    marks = [await try_seat(0)]
    assert (await command(nc, gid, pids[1], {"type": "disconnect"}))["ok"]
    await until(lambda: any(f["event"]["type"] == "substituted" and f["event"]["seat"] == 1
                            for f in watch.frames), 10, "seat 1 substituted by the timer")
    marks.append(await try_seat(1))
    svc.start("bots", ready="ready")  # now the bot may play the seats

    # watching works, as a spectator watches: the bot's cards stay in the
    # shard (the seat's own view showed them, the bot's draws too: trial)
    for seat in (0, 1):
        got = await sync(nc, gid, pids[seat], 0)
        assert got["view"]["seat"] is None and "hand" not in got["view"], got
        assert "selection" not in got["view"]

    # the bot plays the seats; the player's commands never reach the record
    def bot_played() -> bool:
        return {0, 1} <= {e.get("seat") for e in tail.entries[marks[0]:] if e.get("by") == "bot"}
    await until(bot_played, 20, "the bot playing both substituted seats")
    await tail.caught_up()
    for seat in (0, 1):
        assert not [e for e in tail.entries[marks[seat]:] if e.get("player") == pids[seat]]
    await nc.close()


async def test_players_cannot_mark_their_actions_auto(svc: Services) -> None:
    """RULES.md 2.5 / 3.9: ``"auto": true`` marks the shard's own autopilot
    actions (a bot's confirm keeps autopilot on). A player who sends it gets
    the action applied as their own manual action: the shard strips the flag
    before the engine and the record see it."""
    shard = svc.start("shard", name="shard-a")
    nc = await nats.connect(svc.nats_url)
    pids = [player_id(str(i)) for i in range(2)]
    gid = await create_game(shard.ports["grpc"], "penalty_rows",
                            [{"kind": "human", "player_id": p} for p in pids], {"rounds": 1}, 5)
    tail = await RecordTail(nc, gid).start()
    await tail.caught_up()
    eng = tail.hosted.engine  # type: ignore[union-attr]
    card = eng.state()["hands"][0][0]
    reply = await command(nc, gid, pids[0], {"type": "select", "card": card, "row": 1,
                                              "auto": True})
    assert reply["ok"], reply
    await tail.caught_up()
    actions = [e["action"] for e in tail.entries if e.get("seat") == 0 and "action" in e]
    assert actions and actions[-1] == {"type": "select", "card": card, "row": 1}
    await tail.stop()
    await nc.close()
