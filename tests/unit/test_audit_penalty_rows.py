"""Independent rules audit of the 줄줄이 벌점 engine (RULES.md 2 and 4, seed
page seeds/002): the timeout pick against a literal oracle, placement order,
autopilot counting, the 66 boundary, the cap and presence edges.

Expectations are derived from RULES.md / the seed, not from the engine."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ttanjit.games.base import ABANDON_MS, SeatSpec, Setup
from ttanjit.games.penalty_rows import PenaltyRows
from ttanjit.games.penalty_rows_cards import timeout_pick


def make(kinds: list[str], seed: int = 1, **options: Any) -> PenaltyRows:
    seats = [SeatSpec(k) for k in kinds]
    return PenaltyRows(Setup("penalty_rows", {"seats": len(seats), **options}, seats, seed))


def ok(g: PenaltyRows, t: int, seat: int, action: dict[str, Any]) -> Any:
    res = g.apply(t, seat, action)
    assert res.ok, (seat, action, res.code)
    return res


def _value(card: int) -> int:
    """RULES 2.2, first matching line."""
    return 7 if card == 55 else 5 if card % 11 == 0 else 3 if card % 10 == 0 else (
        2 if card % 5 == 0 else 1)


def _oracle(hand: list[int], rows: list[list[int]]) -> tuple[int, int]:
    """RULES 2.5 (a)-(d), literally: over every (card, row) pair minimise the
    penalty taken now, then the gap for an append, then card, then row."""
    keys = []
    for card in hand:
        for r, row in enumerate(rows, 1):
            if row[-1] < card and len(row) < 5:
                keys.append((0, card - row[-1], card, r))
            else:  # the sixth card, or a row ending higher: the whole row
                keys.append((sum(_value(c) for c in row), 0, card, r))
    best = min(keys)
    return best[2], best[3]


def test_penalty_values_total_171() -> None:
    """RULES 2.2 and the seed: 1 + 8 + 10 + 9 + 76 cards, total 171."""
    vals = [_value(c) for c in range(1, 105)]
    assert sum(vals) == 171 and vals.count(7) == 1 and vals.count(5) == 8
    assert vals.count(3) == 10 and vals.count(2) == 9 and vals.count(1) == 76


@pytest.mark.parametrize("seed", range(40))
def test_timeout_pick_matches_the_literal_rule(seed: int) -> None:
    """RULES 2.5: the engine's pick equals the literal (a)-(d) minimum."""
    rng = random.Random(seed)
    cards = rng.sample(range(1, 105), 34)
    rows = [sorted(cards[i * 5:i * 5 + rng.randint(1, 5)]) for i in range(4)]
    hand = sorted(cards[20:20 + rng.randint(1, 10)])
    assert timeout_pick(hand, rows) == _oracle(hand, rows)


def test_placements_follow_card_order_not_seat_or_confirm_order() -> None:
    """RULES 2.3: revealed at once, placed in increasing card order against
    the rows as they are at that moment (the three placement rules)."""
    g = make(["human"] * 3)
    g.rows = [[10, 11, 12, 13, 14], [50], [70], [90]]
    g.hands = [[20, 99], [15, 98], [60, 97]]
    ok(g, 10, 2, {"type": "select", "card": 60, "row": 1})
    ok(g, 20, 2, {"type": "confirm"})
    ok(g, 30, 0, {"type": "select", "card": 20, "row": 1})
    ok(g, 40, 0, {"type": "confirm"})
    ok(g, 50, 1, {"type": "select", "card": 15, "row": 1})
    res = ok(g, 60, 1, {"type": "confirm"})
    placed = [e.data for e in res.events if e.type == "placed"]
    assert [(p["card"], p["outcome"]) for p in placed] == [
        (15, "sixth_card"), (20, "append"), (60, "append")]
    assert g.penalties == [0, 3 + 5 + 1 + 1 + 1, 0] and g.rows[0] == [15, 20, 60]


def test_sixth_card_and_lower_card_on_a_full_row() -> None:
    """RULES 2.3: a card lower than the end of a 5-card row takes the whole
    row (5 cards) and starts it; the seed: the card itself is not penalty."""
    g = make(["human", "human"])
    g.rows = [[10, 20, 30, 40, 55], [1], [2], [3]]
    g.hands = [[5, 99], [60, 98]]
    ok(g, 10, 0, {"type": "select", "card": 5, "row": 1})
    ok(g, 20, 0, {"type": "confirm"})
    ok(g, 30, 1, {"type": "select", "card": 60, "row": 1})
    ok(g, 40, 1, {"type": "confirm"})
    assert g.penalties == [3 + 3 + 3 + 3 + 7, 0] and g.rows[0] == [5, 60]


def _time_out(g: PenaltyRows, t: int) -> int:
    t += 20_000
    g.apply(t)
    return t


def test_autopilot_after_exactly_three_consecutive_timeouts() -> None:
    """RULES 2.5: a manual confirmation between timeouts resets the count;
    three in a row switch autopilot on; the bot's auto confirmations keep
    it; the player's own confirmation releases it."""
    g = make(["human", "bot"])
    t = 0
    for _ in range(2):
        ok(g, t + 10, 1, {"type": "select", "card": g.hands[1][0], "row": 1})
        ok(g, t + 20, 1, {"type": "confirm"})
        t = _time_out(g, t)
    assert g.timeouts[0] == 2 and not g.autopilot[0]
    ok(g, t + 10, 0, {"type": "select", "card": g.hands[0][0], "row": 1})
    ok(g, t + 20, 0, {"type": "confirm"})
    ok(g, t + 30, 1, {"type": "select", "card": g.hands[1][0], "row": 1})
    ok(g, t + 40, 1, {"type": "confirm"})
    assert g.timeouts[0] == 0
    t += 40
    for i in range(3):
        start = t
        t = _time_out(g, start)
        assert g.autopilot[0] is (i == 2)
        t = start + 20_000
    assert g.timeouts[1] == 0 and not g.autopilot[1]  # the bot's timeouts never count
    ok(g, t + 10, 0, {"type": "select", "card": g.hands[0][0], "row": 1})
    ok(g, t + 20, 0, {"type": "confirm", "auto": True})
    assert g.autopilot[0]
    t = _time_out(g, t)
    ok(g, t + 10, 0, {"type": "select", "card": g.hands[0][0], "row": 1})
    res = ok(g, t + 20, 0, {"type": "confirm"})
    assert not g.autopilot[0]
    assert any(e.type == "autopilot" and e.data["reason"] == "confirm" for e in res.events)


@pytest.mark.parametrize("total,ends", [(65, False), (66, True)])
def test_classic_66_boundary(total: int, ends: bool) -> None:
    """RULES 2.4: classic 66 ends after a round in which anyone's total is
    66 or more (exactly 66 included); 65 plays on."""
    g = make(["human", "human"], end="score_66")
    g.turn = 10
    g.hands = [[50], [60]]
    g.rows = [[1], [2], [3], [4]]  # both append: no penalty this turn
    g.penalties = [total, 0]
    for s in (0, 1):
        ok(g, 10 + 20 * s, s, {"type": "select", "card": g.hands[s][0], "row": 1 + s})
        ok(g, 20 + 20 * s, s, {"type": "confirm"})
    assert g.penalties == [total, 0] and g.finished is ends
    if ends:
        assert g.ended_by == "score_66" and g.winners == [1]


def test_cap_at_exactly_45_minutes_no_winner() -> None:
    """RULES 2.5: 45:00 of game time ends the game with no winner."""
    g = make(["human", "bot"], end="score_66", select_ms=45_000)
    g.deadline_gt = 10**9
    g.apply(45 * 60_000 - 1)
    assert not g.finished
    g.apply(45 * 60_000)
    assert g.finished and g.winners == [] and g.ended_by == "time_cap"


def test_pause_counts_humans_only_and_substitution_boundary() -> None:
    """RULES 4: with one human and bots, that human away pauses everything;
    two humans, one away 59,999 ms keeps the seat, 60,000 ms substitutes."""
    g = make(["human", "bot", "bot"])
    ok(g, 1000, 0, {"type": "disconnect"})
    # paused: only the abandonment is due (RULES 4), 10 minutes away
    assert g.presence.paused and g.next_deadline() == 1000 + ABANDON_MS
    g.apply(600_000)
    assert g.turn == 1 and not g.presence.substituted[0]
    ok(g, 600_000, 0, {"type": "reconnect"})
    assert g.next_deadline() == 600_000 + 19_000
    g = make(["human", "human"], select_ms=45_000)
    ok(g, 10, 0, {"type": "select", "card": g.hands[0][0], "row": 2})
    ok(g, 20, 0, {"type": "confirm"})
    ok(g, 100, 0, {"type": "disconnect"})
    g.apply(100 + 59_999)
    assert not g.presence.substituted[0]
    assert g.confirmed[0] is False and g.turn == 2  # the confirmed pick was revealed at 45 s
    g.apply(100 + 60_000)
    assert g.presence.substituted[0] and g.bot_seats()[0]


@pytest.mark.parametrize("n", [2, 5, 10])
def test_whole_rounds_match_an_independent_placement(n: int) -> None:
    """RULES 2.3: every turn of a round, random picks placed by a literal
    reading of the three rules in increasing card order give the engine's
    rows and penalties (counted the moment a row is taken)."""
    rng = random.Random(n)
    g = make(["human"] * n, seed=n, rounds=1)
    rows = [list(r) for r in g.rows]
    totals = [0] * n
    t = 0
    for _ in range(10):
        picks = []
        for s in range(n):
            card, row = rng.choice(g.hands[s]), rng.randint(1, 4)
            picks.append((card, row, s))
        for card, row, s in rng.sample(picks, n):  # any confirmation order
            t += 10
            ok(g, t, s, {"type": "select", "card": card, "row": row})
            ok(g, t + 1, s, {"type": "confirm"})
        for card, row, s in sorted(picks):
            r = rows[row - 1]
            if r[-1] < card and len(r) < 5:
                r.append(card)
            else:
                totals[s] += sum(_value(c) for c in r)
                rows[row - 1] = [card]
        if not g.finished:
            assert g.rows == rows
        assert g.penalties == totals
    assert g.finished and g.winners == [s for s in range(n) if totals[s] == min(totals)]


def test_back_within_60_s_keeps_pick_and_deadline_substituted_is_not_human() -> None:
    """RULES 4: back within 60 s: hand, confirmed pick and the remaining time
    intact; a substituted seat does not count as a human for the pause."""
    g = make(["human", "human", "human"], select_ms=45_000)
    hand = list(g.hands[0])
    ok(g, 10, 0, {"type": "select", "card": hand[0], "row": 3})
    ok(g, 20, 0, {"type": "confirm"})
    ok(g, 1000, 0, {"type": "disconnect"})
    ok(g, 40_000, 0, {"type": "reconnect"})
    assert g.confirmed[0] and g.selection[0] == (hand[0], 3) and g.hands[0] == hand
    assert g.next_deadline() == 45_000
    ok(g, 40_100, 1, {"type": "leave"})
    ok(g, 40_200, 2, {"type": "disconnect"})
    assert not g.presence.paused
    ok(g, 40_300, 0, {"type": "disconnect"})
    assert g.presence.paused and g.next_deadline() == 40_300 + ABANDON_MS  # RULES 4
