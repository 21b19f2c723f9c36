"""줄줄이 벌점 engine: the parts golden scenarios don't show well — the
penalty table, options, views, legal actions, events per seat, results and
the replay CLI. Rule sections are RULES.md's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ttanjit.games import engine_class
from ttanjit.games.base import SeatSpec, Setup
from ttanjit.games.penalty_rows import MESSAGES, PenaltyRows
from ttanjit.games.penalty_rows_cards import (
    PENALTY,
    TOTAL_PENALTY,
    card_penalty,
    placement,
    timeout_pick,
)

SCENARIOS = Path(__file__).parents[1] / "scenarios" / "penalty_rows"


def make(n: int = 2, seed: int = 1, decks: list[list[int]] | None = None,
         kinds: list[str] | None = None, **options: object) -> PenaltyRows:
    seats = [SeatSpec(k) for k in (kinds or ["human"] * n)]
    setup = Setup("penalty_rows", {"seats": len(seats), **options}, seats, seed,
                  [[*d] for d in decks] if decks else None)
    return PenaltyRows(setup)


def deck_1_to_104() -> list[list[int]]:
    return [list(range(1, 105))]


def test_penalty_table_totals_171() -> None:
    """RULES.md 2.2: 1 card of 7, 8 of 5, 10 of 3, 9 of 2, 76 of 1; 171 in all."""
    counts: dict[int, int] = {}
    for c in range(1, 105):
        counts[card_penalty(c)] = counts.get(card_penalty(c), 0) + 1
    assert counts == {7: 1, 5: 8, 3: 10, 2: 9, 1: 76}
    assert TOTAL_PENALTY == sum(PENALTY) == 171
    assert [card_penalty(c) for c in (55, 11, 99, 10, 100, 50, 5, 25, 95, 1, 104)] == [
        7, 5, 5, 3, 3, 3, 2, 2, 2, 1, 1]


def test_placement_and_timeout_pick_are_pure() -> None:
    """RULES.md 2.3 step 3 and 2.5 on plain lists."""
    assert placement([25, 29, 31, 34], 36).to_json() == {
        "outcome": "append", "position": 5, "cards": 0, "penalty": 0}
    assert placement([25, 29, 31, 34, 35], 36).to_json()["penalty"] == 7
    assert placement([46], 40).to_json() == {
        "outcome": "row_end_higher", "position": 1, "cards": 1, "taken": [46], "penalty": 1}
    rows = [[12], [30], [60], [90]]
    assert timeout_pick([58, 59], rows) == (58, 2)  # the gap after 30 is smallest
    assert rows == [[12], [30], [60], [90]]


@pytest.mark.parametrize("options", [
    {"select_ms": 10000}, {"select_ms": True}, {"select_ms": 20000.0}, {"end": "score_100"},
    {"rounds": 2}, {"rounds": "3"},
    {"end": "score_66", "rounds": 3}, {"turn_ms": 30000}, {"absence_ms": 5},
])
def test_bad_options_raise(options: dict[str, object]) -> None:
    """DESIGN.md 3.1: select_ms 20000|30000|45000, end rounds|score_66, rounds 1|3|5."""
    with pytest.raises(ValueError):
        make(2, **options)


def test_seat_counts_and_decks_checked() -> None:
    """RULES.md 2.1: 2-10 seats, two of them filled; decks hold distinct cards 1..104."""
    with pytest.raises(ValueError):
        make(kinds=["human"])
    with pytest.raises(ValueError):
        make(kinds=["human"] * 11)
    with pytest.raises(ValueError):
        make(kinds=["human", "empty"])
    with pytest.raises(ValueError):
        make(2, decks=[[1, 1] + list(range(3, 30))])
    with pytest.raises(ValueError):
        make(2, decks=[list(range(1, 20))])  # 24 cards needed
    e = make(2, decks=[[str(c) for c in range(1, 105)]])
    assert e.state()["rows"] == [[21], [22], [23], [24]]
    assert engine_class("penalty_rows") is PenaltyRows


def test_defaults_and_badge() -> None:
    """RULES.md 2.4/2.5 defaults: quick 3 rounds, 20 s; the end mode is a badge, in the
    room's words (room.js endBadge: the table said "빠른 3판", the room "빠른 판수 · 3판")."""
    e = make(4)
    v = e.view(0)
    assert (v["select_ms"], v["rounds"], v["badge"]) == (
        20000, 3, {"end": "rounds", "rounds": 3, "label": "빠른 판수 · 3판"})
    assert e.next_deadline() == 20000
    assert make(2, end="score_66").view(None)["badge"]["label"] == "기본 66점"


def test_view_preview_and_no_hints() -> None:
    """RULES.md 2.3 step 1 (seed): the preview tells how the own selection would
    land against the rows now, never which row is best; rows show each card's
    penalty."""
    e = make(2, decks=deck_1_to_104())  # seat 0: 1,3..19; rows 21..24
    res = e.apply(1000, 0, {"type": "select", "card": 19, "row": 2})
    assert res.ok and res.info == {"selection": {
        "card": 19, "row": 2, "confirmed": False, "label": "19 → 2번 줄 확정",
        "preview": {"outcome": "row_end_higher", "position": 1, "cards": 1, "taken": [22],
                    "penalty": 5}}}
    v = e.view(0)
    assert v["selection"] == res.info["selection"]
    assert v["rows"][1] == {"row": 2, "cards": [{"card": 22, "penalty": 5}], "count": 1,
                            "end": 22, "penalty": 5}
    assert v["hand"][0] == {"card": 1, "penalty": 1}
    assert v["remaining_ms"] == 19000 and v["deadline"] == 20000
    text = json.dumps(v)
    assert "best" not in text and "recommend" not in text
    # The other seat and spectators see nothing of it.
    assert e.view(1)["selection"] is None
    assert "hand" not in e.view(None) and "selection" not in e.view(None)
    assert e.view(None)["hand_counts"] == [10, 10]


def test_confirm_event_is_seat_filtered() -> None:
    """RULES.md 2.3 step 1: others see only that a player has confirmed."""
    e = make(3, decks=deck_1_to_104())
    e.apply(1000, 0, {"type": "select", "card": 1, "row": 1})
    res = e.apply(1100, 0, {"type": "confirm"})
    (ev,) = res.events
    assert ev.for_seat(0) == {"type": "confirmed", "seat": 0, "card": 1, "row": 1}
    assert ev.for_seat(1) == {"type": "confirmed", "seat": 0}
    assert ev.for_seat(None) == {"type": "confirmed", "seat": 0}
    assert e.view(1)["confirmed"] == [True, False, False]


def test_a_confirm_may_carry_its_pick() -> None:
    """RULES.md 2.3 step 1 (choose, change until confirmed; confirmation is
    final): a ``confirm`` with its ``card`` and ``row`` selects and confirms
    in one input — one round trip for a 확정 near the deadline (network
    audit) — checked as a select is, and refused whole when it is wrong."""
    e = make(3, decks=deck_1_to_104())
    card, other = e.hands[0][0], e.hands[0][1]
    assert e.apply(1000, 0, {"type": "select", "card": card, "row": 2}).ok
    for bad, code in (({"card": 999, "row": 1}, "bad_action"), ({"card": other, "row": 5}, "bad_row"),
                      ({"card": e.hands[1][0], "row": 1}, "card_not_in_hand")):
        r = e.apply(1050, 0, {"type": "confirm", **bad})
        assert (r.ok, r.code) == (False, code)
    assert e.selection[0] == (card, 2) and not e.confirmed[0]  # a refused one changes nothing
    res = e.apply(1100, 0, {"type": "confirm", "card": other, "row": 3})
    assert res.ok and res.info == {"confirmed": {"card": other, "row": 3}}
    (ev,) = res.events
    assert ev.for_seat(0) == {"type": "confirmed", "seat": 0, "card": other, "row": 3}
    assert ev.for_seat(1) == {"type": "confirmed", "seat": 0}
    # the same pick as selected, carried: confirmed (not already_selected)
    assert e.apply(1200, 1, {"type": "select", "card": e.hands[1][0], "row": 1}).ok
    assert e.apply(1300, 1, {"type": "confirm", "card": e.hands[1][0], "row": 1}).ok
    assert e.apply(1400, 1, {"type": "confirm", "card": e.hands[1][1], "row": 1}).code == "already_confirmed"


def test_round_start_deals_privately() -> None:
    """RULES.md 2.1: hands are private; the next round's deal too."""
    e = make(2, seed=9)
    res = e.apply(200_000 + 5_000)  # ten timed-out turns, the intermission, round 2
    (ev,) = [x for x in res.events if x.type == "round_started"]
    assert "hand" not in ev.for_seat(None)
    hands = e.state()["hands"]
    assert ev.for_seat(0)["hand"] == hands[0] and ev.for_seat(1)["hand"] == hands[1]
    st = e.state()
    everything = sorted(sum(st["hands"], []) + sum(st["rows"], []) + st["unused"])
    assert everything == list(range(1, 105)) and st["round"] == 2


def test_reshuffle_every_round() -> None:
    """RULES.md 2.1: every round reshuffles all 104 (decks given for round 1 only)."""
    e = make(2, decks=deck_1_to_104())
    e.apply(205_000)
    assert e.state()["round"] == 2
    assert e.state()["hands"][0] != list(range(1, 20, 2))


def test_legal_actions() -> None:
    """RULES.md 2.3: every (card, row) but the current selection; confirm once
    something is selected; nothing once confirmed; resume on autopilot."""
    e = make(2, decks=deck_1_to_104())
    acts = e.legal_actions(0)
    assert len(acts) == 40 and {"type": "confirm"} not in acts
    e.apply(10, 0, {"type": "select", "card": 1, "row": 1})
    acts = e.legal_actions(0)
    assert len(acts) == 40 and acts[-1] == {"type": "confirm"}
    assert {"type": "select", "card": 1, "row": 1} not in acts
    e.apply(20, 0, {"type": "confirm"})
    assert e.legal_actions(0) == [] and e.actors() == [1]
    e.apply(60_000)  # three timeouts for seat 1 (seat 0 confirmed once, then timed out twice)
    assert e.state()["autopilot"] == [False, True]
    assert e.legal_actions(1)[-1] == {"type": "resume"}
    for a in e.legal_actions(1):
        assert e.clone().apply(60_001, 1, a).ok


def test_refusal_messages_are_korean() -> None:
    """Every refusal code has a Korean message (DESIGN.md 3.1)."""
    assert PenaltyRows.MESSAGES is MESSAGES  # its own wording wins over other games'
    for code in MESSAGES:
        assert any("가" <= ch <= "힣" for ch in MESSAGES[code])
    e = make(2)
    res = e.apply(5, 0, {"type": "confirm"})
    assert (res.code, res.message) == ("nothing_selected", MESSAGES["nothing_selected"])


def test_time_goes_back_refused() -> None:
    e = make(2)
    assert e.apply(1000).ok
    res = e.apply(999, 0, {"type": "confirm"})
    assert not res.ok and res.code == "time_goes_back"


def test_result_of_a_finished_game() -> None:
    """RULES.md 2.4: lowest total wins; result carries counters for the bench."""
    e = make(3, seed=3, rounds=1)
    e.apply(1000, 2, {"type": "leave"})
    e.apply(10**7)
    r = e.result()
    assert e.finished and r["ended_by"] == "rounds"
    assert r["winners"] == [s for s in range(3) if r["penalties"][s] == min(r["penalties"])]
    assert r["substituted"] == [False, False, True]
    assert r["length_ms"] == 200_000
    assert r["counters"]["turns"] == 10 and r["counters"]["timeout_picks"] == 30
    assert e.next_deadline() is None and e.legal_actions(0) == [] and e.actors() == []


def test_replay_cli_prints_state() -> None:
    """DESIGN.md 3.1: ``ttanjit replay`` re-runs a scenario record."""
    out = subprocess.run(
        [sys.executable, "-m", "ttanjit", "replay", str(SCENARIOS / "worked_example.json")],
        capture_output=True, text=True, check=True, timeout=60)
    doc = json.loads(out.stdout)
    assert doc["state"]["penalties"] == [3, 10, 1, 3]
    assert all(r["ok"] for r in doc["results"])
    for key in ("round", "turn", "rows", "hands", "penalties", "round_penalties", "finished",
                "winners", "ended_by", "bot", "autopilot"):
        assert key in doc["state"]
