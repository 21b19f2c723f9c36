"""The replay of a game still in play (docs/websocket.md 1.2): ``GET
/api/replay/{game_id}`` on my own live game re-runs its record so far with
``ttanjit.games.replay_views.seat_steps``. It answers the steps up to now,
``finished: false`` and no ``result`` (an engine's ``result()`` is the
finished game's outcome: One Card's refuses a live game, which made the
route answer 500), and shows only the asking seat's view, as it saw it live.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ttanjit.games.base import JSON
from ttanjit.games.record import Record
from ttanjit.games.replay_views import seat_steps
from ttanjit.games.simulate import simulate

GAMES = [("onecard", 3), ("penalty_rows", 3), ("hakka", 4)]
# the omniscient state's (``engine.state()``) hidden cards: no seat's view has them
OMNISCIENT = ("hands", "selections", "discards", "won_cards", "unused", "pile")


def full_record(game: str, seats: int) -> Record:
    """A whole random legal game of ``game``, every seat a person."""
    _, record = simulate(game, 1, seats, seed=11, keep_record=True)
    assert record is not None and len(record.inputs) >= 8
    return record


def cuts(record: Record) -> list[int]:
    """Where to cut the record: the deal only, a few inputs in, half way,
    one input before the end (the last input is what ends the game)."""
    n = len(record.inputs)
    return [0, 1, n // 3, n // 2, n - 1]


def live(record: Record, cut: int) -> Record:
    """The record of the same game while it was still in play."""
    return Record(record.setup, record.inputs[:cut])


def rerun_view(record: Record, seat: int) -> JSON:
    """``seat``'s view after the record's inputs (the live table's)."""
    engine = record.engine()
    for inp in record.inputs:
        engine.apply(inp.t, inp.seat, inp.action)
    assert not engine.finished
    return engine.view(seat)


def plain(doc: Any) -> Any:
    return json.loads(json.dumps(doc))


@pytest.mark.parametrize("game,seats", GAMES)
def test_a_live_game_replays_its_steps_so_far(game: str, seats: int) -> None:
    record = full_record(game, seats)
    for seat in range(seats):
        done = seat_steps(record, seat)
        assert done["finished"] is True and done["result"] is not None
        for cut in cuts(record):
            rec = live(record, cut)
            doc = seat_steps(rec, seat)  # One Card: ValueError before the fix
            assert doc["finished"] is False, (cut, seat)
            assert doc["result"] is None, (cut, seat)  # no outcome before the end
            assert doc["game"] == game and doc["seat"] == seat
            assert doc["seats"] == done["seats"]
            # the steps so far are the finished game's replay up to the cut
            n = len(doc["steps"])
            assert doc["steps"] == done["steps"][:n]
            assert all(s["i"] < cut for s in doc["steps"])
            assert n == len(done["steps"]) or done["steps"][n]["i"] >= cut
            assert doc["marks"] == [m for m in done["marks"] if m < n]
            assert not any(s["view"]["finished"] for s in doc["steps"])
            # plain JSON, as the route sends it (orjson round trip)
            assert plain(doc) == doc


@pytest.mark.parametrize("game,seats", GAMES)
def test_a_live_replay_shows_only_the_seats_own_view(game: str, seats: int) -> None:
    record = full_record(game, seats)
    rec = live(record, len(record.inputs) // 2)
    for seat in range(seats):
        doc = seat_steps(rec, seat)
        last = doc["steps"][-1]["view"]
        # what the seat's table showed after the last input that changed
        # something, nothing more
        assert last == rerun_view(live(rec, doc["steps"][-1]["i"] + 1), seat)
        for step in doc["steps"]:
            view = step["view"]
            assert view["seat"] == seat
            assert not any(k in view for k in OMNISCIENT)
            assert not isinstance(view.get("draw_pile"), list)  # One Card: a count
        others = [seat_steps(rec, s)["steps"][-1]["view"] for s in range(seats) if s != seat]
        if "hand" in last:  # each seat gets its own hand, never another's
            assert all(o["hand"] != last["hand"] for o in others if o["hand"])


@pytest.mark.parametrize("game,seats", GAMES)
def test_the_deal_alone_is_a_live_replay(game: str, seats: int) -> None:
    """A game no one has moved in yet: one step, the deal."""
    record = full_record(game, seats)
    doc = seat_steps(live(record, 0), 0)
    assert doc["finished"] is False and doc["result"] is None
    assert [s["i"] for s in doc["steps"]] == [-1] and doc["marks"] == [0]
    assert doc["steps"][0]["view"] == record.engine().view(0)


@pytest.mark.parametrize("game,seats", GAMES)
def test_a_finished_game_still_has_its_result(game: str, seats: int) -> None:
    record = full_record(game, seats)
    engine = record.engine()
    for inp in record.inputs:
        engine.apply(inp.t, inp.seat, inp.action)
    assert engine.finished
    doc = seat_steps(record, 1)
    assert doc["finished"] is True and doc["result"] == engine.result()
    assert doc["steps"][-1]["view"] == engine.view(1)


@pytest.mark.parametrize("game,seats", GAMES)
def test_a_live_replay_stops_where_a_bot_took_the_seat(game: str, seats: int) -> None:
    """RULES.md 4: a player who left may watch, not play; live, the shard
    sends them the spectator's share from then on, so the replay of the
    game still in play stops where the bot took the seat (it showed the
    bot's hand and draws: review finding). Once over, every step is there."""
    from ttanjit.games.record import Input

    record = full_record(game, seats)
    k = len(record.inputs) // 3
    probe = record.engine()  # seat 1 still in play then (an eliminated One Card seat is not taken over)
    for i, inp in enumerate(record.inputs[:k]):
        probe.apply(inp.t, inp.seat, inp.action)
        if not getattr(probe, "alive", [True] * seats)[1]:
            k = i
            break
    gone = Input(record.inputs[k - 1].t, 1, {"type": "leave"})
    # (the bot's seat is never on autopilot: seat 1's [직접 하기] go)
    later = [x for x in record.inputs[k:] if not (x.seat == 1 and x.action["type"] == "resume")]
    inputs = [*record.inputs[:k], gone, *later]
    engine = Record(record.setup, inputs).engine()
    for inp in inputs:  # the bot plays seat 1 on: the same moves are legal
        assert engine.apply(inp.t, inp.seat, inp.action).ok, inp
    rec = Record(record.setup, inputs[: len(inputs) - 2])
    doc = seat_steps(rec, 1)
    assert doc["finished"] is False
    assert doc["steps"][-1]["i"] == k and "substituted" in doc["steps"][-1]["kinds"]
    assert doc["marks"] == [m for m in doc["marks"] if m < len(doc["steps"])]
    other = seat_steps(rec, 0)  # the others' replays go on
    assert other["steps"][-1]["i"] > k
    done = seat_steps(Record(record.setup, inputs), 1)
    assert done["finished"] is True and done["steps"][-1]["i"] > k
