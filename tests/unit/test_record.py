"""The game record ``ttanjit.record/1`` (DESIGN.md 3.1): parsing, round trip,
errors, and replay of a One Card record."""

from __future__ import annotations

from typing import Any

import pytest

from ttanjit.games.base import RULES_REVISION, SeatSpec, Setup
from ttanjit.games.record import (
    FORMAT,
    Input,
    Record,
    RecordError,
    input_from_json,
    record_from_json,
    replay,
)
from ttanjit.games.simulate import simulate


def doc(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"format": FORMAT, "game": "onecard", "options": {"seats": 3},
                         "seats": [{"kind": "human"}, {"kind": "bot", "level": "hard"}, {"kind": "human"}],
                         "seed": 12345, "first_player": 2,
                         "inputs": [{"t": 1200, "seat": 2, "action": {"type": "draw"}}, {"t": 31200},
                                    {"t": 32000, "seat": 0, "action": {"type": "one_card"}}]}
    d.update(over)
    return d


def test_round_trip() -> None:
    rec = record_from_json(doc())
    assert rec.to_json() == doc()
    assert rec.header_json()["first_player"] == 2 and "inputs" not in rec.header_json()
    assert rec.inputs[1] == Input(31200)
    assert rec.setup.seats[1].level == "hard"


def test_a_record_keeps_the_rules_revision_it_was_played_under() -> None:
    """A game live across an upgrade that changed a rule replays under the
    rules it was played by: a new game's record says ``rules`` (the
    current revision); a record without it is revision 1; a newer
    release's revision is refused (tests/scenarios/onecard/rules1_*)."""
    new = record_from_json(doc())
    assert new.setup.rules == 1 and "rules" not in new.to_json()
    now = Record(Setup("onecard", {"seats": 2}, [SeatSpec("human")] * 2, 5))
    assert now.setup.rules == RULES_REVISION == 3
    assert now.to_json()["rules"] == 3 and now.header_json()["rules"] == 3
    assert record_from_json(now.to_json()).setup.rules == 3
    assert record_from_json(doc(rules=2)).setup.rules == 2  # an older revision's record still replays
    with pytest.raises(RecordError, match="newer release"):
        record_from_json(doc(rules=RULES_REVISION + 1))


def test_seats_default_from_options() -> None:
    rec = record_from_json({"game": "onecard", "options": {"seats": 2}})
    assert [s.kind for s in rec.setup.seats] == ["human", "human"] and rec.inputs == []


@pytest.mark.parametrize("over", [
    {"format": "x"}, {"game": None}, {"options": []}, {"seats": {}}, {"seats": [{"kind": "alien"}] * 3},
    {"seats": [{"kind": "bot", "level": "god"}] * 3}, {"options": {"seats": 4}}, {"seed": "1"},
    {"decks": "AS"}, {"decks": [[1.5]]}, {"first_player": True}, {"inputs": {}},
    {"inputs": [{"t": 5}, {"t": 1}]}, {"inputs": [{"t": 5, "action": {"type": "draw"}}]}, {"inputs": [3]},
    {"rules": 0}, {"rules": "2"}, {"rules": RULES_REVISION + 1},
])
def test_invalid_records(over: dict[str, Any]) -> None:
    with pytest.raises(RecordError):
        record_from_json(doc(**over))


def test_input_errors_name_the_input() -> None:
    with pytest.raises(RecordError, match=r"inputs\[4\]\.t"):
        input_from_json({"t": "now"}, 4)


def test_engine_errors_become_record_errors() -> None:
    """A record the engine rejects (bad options or deck) is a RecordError."""
    for over in ({"options": {"seats": 3, "turn_ms": 1}}, {"decks": [["AS"]]}, {"first_player": 7}):
        with pytest.raises(RecordError):
            replay(record_from_json(doc(**over)))


def test_replay_refusals_and_results() -> None:
    rec = record_from_json(doc(inputs=[{"t": 10, "seat": 0, "action": {"type": "draw"}},
                                       {"t": 20, "seat": 2, "action": {"type": "draw"}},
                                       {"t": 20, "seat": 2, "action": {"type": "draw"}}]))
    engine, results, events = replay(rec)
    assert results[0] == {"ok": False, "code": "not_your_turn", "message": "내 차례가 아니에요."}
    assert results[1] == {"ok": True}
    assert results[2]["code"] == "not_your_turn"
    assert [e["type"] for e in events] == ["drew"] and "private" in events[0]
    assert engine.state()["turn"] == 0


def test_simulated_record_replays_exactly() -> None:
    """A simulated game's record replays to the same final state."""
    summary, rec = simulate("onecard", 3, 4, seed=5, keep_record=True)
    assert rec is not None and summary.games == 3
    again = record_from_json(rec.to_json())
    engine, results, _ = replay(again)
    assert all(r["ok"] for r in results) and engine.finished
    engine2, _, _ = replay(record_from_json(rec.to_json()))
    assert engine2.state() == engine.state()
