"""Hakka Cards: cards, patterns, Elders, scoring, options, views (RULES.md 3, 4)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ttanjit.games.base import ABANDON_MS, COMMON_MESSAGES, SeatSpec, Setup
from ttanjit.games.hakka import MESSAGES, Hakka
from ttanjit.games.hakka_patterns import (
    CARDS,
    RUN,
    SET,
    SINGLE,
    classify,
    discard_options,
    elders,
    lead_singles,
    lowest,
    refusal_to_beat,
    runs,
    sets,
)
from ttanjit.games.hakka_scoring import dreamer_tricks, points, settle


def pat(cards: str):  # type: ignore[no-untyped-def]
    p = classify(cards.split())
    assert p is not None, cards
    return p


def setup(**kw):  # type: ignore[no-untyped-def]
    base = {"game": "hakka", "options": {"seats": 4}, "seats": [SeatSpec()] * 4, "seed": 5}
    base.update(kw)
    return Setup(**base)


def test_cards() -> None:
    """RULES.md 3.1: 37 cards — four suits of 1–9 and wan."""
    assert len(CARDS) == len(set(CARDS)) == 37
    assert CARDS[:2] == ("sup9", "sup8") and CARDS[-1] == "wan"


def test_classify() -> None:
    """RULES.md 3.5: singles, runs of 3–9 of one suit, sets of ≥3 of one number (wan = 1)."""
    assert pat("wan").kind == SINGLE
    assert pat("gon3 gon5 gon4").kind == RUN
    assert pat("sin1 sin2 sin3 sin4 sin5 sin6 sin7 sin8 sin9").kind == RUN
    assert pat("sup1 gon1 zok1 sin1 wan").kind == SET  # five 1s
    assert pat("sup7 zok7 sin7").kind == SET
    for bad in ("gon3 gon4", "gon3 gon4 gon6", "gon3 gon4 zok5", "sup1 sup2 wan",
                "sup1 gon1 sup2", "sup9 sup1 sup8"):
        assert classify(bad.split()) is None, bad


def test_set_order_and_sizes() -> None:
    """RULES.md 3.5: sets compare 2 < 3 < … < 8 < 1 < 9, same size only."""
    order = [2, 3, 4, 5, 6, 7, 8, 1, 9]
    for lo, hi in itertools.combinations(order, 2):
        a = pat(f"sup{lo} gon{lo} zok{lo}")
        b = pat(f"sup{hi} gon{hi} zok{hi}")
        assert refusal_to_beat(b, a, True) is None
        assert refusal_to_beat(a, b, True) == "cannot_beat"
    ones4 = pat("sup1 gon1 zok1 wan")
    assert refusal_to_beat(pat("sup9 gon9 zok9 sin9"), ones4, True) is None
    assert refusal_to_beat(pat("sup8 gon8 zok8 sin8"), ones4, True) == "cannot_beat"
    assert refusal_to_beat(pat("sup9 gon9 zok9"), ones4, True) == "wrong_size"
    assert refusal_to_beat(pat("sup2 sup3 sup4 sup5"), ones4, True) == "wrong_kind"


def test_run_comparison() -> None:
    """RULES.md 3.5: runs of the same length only; suit first, then the highest card."""
    zok = pat("zok5 zok6 zok7")
    assert refusal_to_beat(pat("gon1 gon2 gon3"), zok, True) is None
    assert refusal_to_beat(pat("sin7 sin8 sin9"), zok, True) == "cannot_beat"
    assert refusal_to_beat(pat("zok6 zok7 zok8"), zok, True) is None
    assert refusal_to_beat(pat("zok2 zok3 zok4"), zok, True) == "cannot_beat"
    assert refusal_to_beat(pat("sup1 sup2 sup3 sup4"), zok, True) == "wrong_size"


def test_single_comparison_and_elder_ones() -> None:
    """RULES.md 3.4, 3.5: a single is beaten only by a higher card of its suit;
    sup1, sin1 and wan never beat a single and, led, cannot be beaten."""
    assert refusal_to_beat(pat("gon5"), pat("gon4"), True) is None
    assert refusal_to_beat(pat("gon3"), pat("gon4"), True) == "cannot_beat"
    assert refusal_to_beat(pat("sup9"), pat("gon4"), True) == "other_suit"
    assert refusal_to_beat(pat("wan"), pat("gon4"), True) == "elder_one_single"
    # a starred 섭 1 on 섭 8: refused as the Elder one it is, not as too low
    # (the star read as strength: trial finding)
    assert refusal_to_beat(pat("sup1"), pat("sup8"), False) == "elder_one_single"
    assert refusal_to_beat(pat("sup9"), pat("sin1"), True) == "led_elder_one"
    for led in ("sup1", "sin1", "wan"):
        for c in CARDS:
            if c != led:
                assert refusal_to_beat(pat(c), pat(led), True) is not None
    # gon1 is not among them: gon2 beats a led gon1
    assert refusal_to_beat(pat("gon2"), pat("gon1"), True) is None


def test_elders() -> None:
    """RULES.md 3.4: 9s, sup1, sin1, wan at the start; a card becomes an Elder
    when every higher card of its suit was played face up."""
    assert elders(set()) == {"sup9", "gon9", "zok9", "sin9", "sup1", "sin1", "wan"}
    assert "sup8" in elders({"sup9"}) and "sup9" not in elders({"sup9"})
    assert "sup8" not in elders({"sup7"})
    assert "gon1" in elders({f"gon{n}" for n in range(2, 10)})
    assert "sup1" in elders(set()) and "sup2" not in elders({f"sup{n}" for n in range(4, 10)})


def test_lead_singles() -> None:
    """RULES.md 3.6: a non-Elder of the highest suit among the non-Elders; any
    Elder without non-Elders; the privileged player may add any Elder."""
    el = elders(set())
    hand = ["sup9", "sup3", "gon8", "wan"]
    assert lead_singles(hand, el, False) == ["sup3"]
    assert lead_singles(hand, el, True) == ["sup9", "sup3", "wan"]
    assert lead_singles(["sup9", "wan", "sin1"], el, False) == ["sup9", "sin1", "wan"]
    assert lead_singles(["gon2", "zok8", "sin9"], el, False) == ["gon2"]


def test_lowest() -> None:
    """RULES.md 3.9 (module docstring): lowest = non-Elders first, then number, then suit."""
    el = elders(set())
    assert lowest(CARDS, el, 4) == ["zok1", "gon1", "sin2", "zok2"]
    assert lowest(["sup9", "wan", "sup8"], el, 3) == ["sup8", "wan", "sup9"]
    opts = discard_options(["sup9", "zok1", "gon3", "sin2"], 2, el)
    assert opts == [["zok1", "sin2"], ["gon3", "zok1"], ["sup9", "zok1"]]


def test_enumeration() -> None:
    """RULES.md 3.5: every run and set in a hand."""
    hand = "sup1 sup2 sup3 sup4 gon4 zok4 sin4 wan gon1".split()
    rs = {p.cards for p in runs(hand)}
    assert rs == {("sup3", "sup2", "sup1"), ("sup4", "sup3", "sup2"), ("sup4", "sup3", "sup2", "sup1")}
    ss = [p.cards for p in sets(hand)]
    assert [s for s in ss if "wan" in s] == [("sup1", "gon1", "wan")]
    assert [s for s in ss if len(s) == 4] == [("sup4", "gon4", "zok4", "sin4")]
    assert len(ss) == 1 + 4 + 1  # the three 1s; four 3-sets and one 4-set of 4s


def test_points_and_dreamer() -> None:
    """RULES.md 3.8: the points table; the dreamer's 5 + cards of the same number."""
    assert [points(t) for t in range(5, 13)] == [0, 1, 2, 4, 8, 16, 32, 128]
    assert dreamer_tricks("gon7", ["sup7", "zok7", "sin7", "sup9"]) == 8
    assert dreamer_tricks("sin1", ["sup1", "wan", "gon2"]) == 7


def test_settle_examples_and_zero_sum() -> None:
    """RULES.md 3.8: seed examples; every settlement is zero-sum."""
    # dreamer example: winner 0 (6), dreamer 2 (8), active 0, 3, 1
    assert settle(0, 6, 2, 8, [0, 3, 1], None) == [2, -5, 8, -5]
    # privileged example: winner with 6, privileged 3 pays 2, seat 1 pays 0
    assert settle(0, 6, 2, 5, [0, 3, 1], 3) == [2, 0, 0, -2]
    # the privileged winner is paid as usual
    assert settle(3, 7, 2, 5, [0, 3, 1], 3) == [-2, -2, 0, 4]
    for w, wt, dt, priv in itertools.product([0, 1, 3], range(6, 13), range(5, 10), [None, 0, 1, 3]):
        assert sum(settle(w, wt, 2, dt, [0, 3, 1], priv)) == 0


def test_options_and_seats() -> None:
    """RULES.md 3.1 / DESIGN.md 3.1: exactly 4 seats; turn_ms; decks; dealer."""
    for n in (3, 5):
        with pytest.raises(ValueError):
            Hakka(setup(seats=[SeatSpec()] * n, options={}))
    with pytest.raises(ValueError):
        Hakka(setup(options={"turn_ms": "fast"}))
    with pytest.raises(ValueError):
        Hakka(setup(decks=[list(CARDS[:-1])]))
    with pytest.raises(ValueError):
        Hakka(setup(decks=[list(CARDS[:-1]) + ["sup9"]]))
    with pytest.raises(ValueError):
        Hakka(setup(dealer=4))
    g = Hakka(setup(options={"turn_ms": 45000}, dealer=3))
    assert g.dealer == 3 and g.dreamer == 1 and g.next_deadline() == 45000
    st = g.state()
    for key in ("phase", "dealer", "dreamer", "hands", "tricks", "scores", "round", "finished",
                "bot", "autopilot", "privileged", "trick", "elders", "ended_by", "winners"):
        assert key in st
    assert sorted(c for h in st["hands"] for c in h) == sorted(CARDS)
    assert [len(h) for h in st["hands"]] == [12, 1, 12, 12]


def test_seeded_dealer_and_deal_are_reproducible() -> None:
    """RULES.md conventions: the random dealer and the shuffle come from the seed."""
    a, b = Hakka(setup(seed=42)), Hakka(setup(seed=42))
    assert a.state() == b.state()
    dealers = {Hakka(setup(seed=s)).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}


def test_views_hide_the_dreamer_card_and_discards() -> None:
    """RULES.md 3.2, 3.6: the dreamer's card and face-down discards are hidden
    from every view and event until the scoring reveal."""
    g = Hakka(setup(decks=[list(CARDS)], dealer=1))  # dreamer 3 holds sup7
    for s in range(4):
        v = g.view(s)
        assert v["hand"] == ([] if s == 3 else g.hands[s])
        assert v["hand_counts"] == [12, 12, 12, 1]
    assert "hand" not in g.view(None)
    assert g.apply(1000, 1, {"type": "call"}).ok
    assert g.apply(2000, 1, {"type": "play", "cards": ["sup2"]}).ok
    res = g.apply(3000, 0, {"type": "discard", "cards": ["gon4"]})
    assert res.ok
    (ev,) = [e for e in res.events if e.type == "discarded"]
    assert ev.for_seat(0)["cards"] == ["gon4"]
    for s in (None, 1, 2, 3):
        assert "cards" not in ev.for_seat(s)
        v = g.view(s)
        assert v["table"][1] == {"seat": 0, "kind": "discard", "count": 1}
        assert v.get("my_discards", []) == []
    assert g.view(0)["my_discards"] == ["gon4"]
    # the reveal: a clock run to the end of the hand shows the dreamer's card
    g.apply(10_000_000)
    shown = [g.view(s)["last_hand"] for s in (None, 0, 1, 2, 3)]
    assert all(h is not None and h["dreamer_card"] == "sup7" for h in shown)


def test_refusals_have_korean_messages() -> None:
    """DESIGN.md 3.1: every refusal code has a Korean message."""
    assert Hakka.MESSAGES is MESSAGES  # the engine's own wording wins over other games'
    for code in MESSAGES:
        assert any("\uac00" <= ch <= "\ud7a3" for ch in MESSAGES[code])
    g = Hakka(setup(dealer=0))
    res = g.apply(100, 1, {"type": "call"})
    assert not res.ok and res.code == "not_your_turn"
    assert res.message == COMMON_MESSAGES["not_your_turn"]
    for bad in ({"type": "play"}, {"type": "play", "cards": "sup9"}, {"type": "play", "cards": [1]},
                {"type": "call", "auto": "yes"}):
        assert g.apply(100, 0, bad).code == "bad_action"
    assert g.apply(100, 0, {"type": "fold"}).code == "unknown_action"
    assert g.apply(100, 0, {"type": "call"}).ok
    assert g.apply(200, 0, {"type": "play", "cards": ["sup10"]}).code == "bad_action"  # unknown card: malformed (games.base)
    assert g.apply(200, 0, {"type": "play", "cards": ["wan", "wan"]}).code == "duplicate_cards"


def test_result_fields() -> None:
    """DESIGN.md 3.1 / RULES.md 3.9: result() of a capped game."""
    g = Hakka(setup(dealer=0))
    g.apply(45 * 60_000)
    r = g.result()
    assert r["ended_by"] == "time_cap" and r["winners"] == []
    assert set(r) == {"winners", "ended_by", "scores", "substituted", "length_ms", "counters"}
    assert r["length_ms"] == 45 * 60_000 and r["counters"]["void_deals"] == 29


def test_claim_order_and_twelve_cap() -> None:
    """RULES.md 3.7: the claim is checked in turn order from the trick's
    winner, the first who qualifies wins; the count is at most 12."""
    g = Hakka(setup(decks=[list(CARDS)], dealer=1))  # active 1, 0, 2; dreamer 3
    g.tricks = [6, 0, 6, 0]
    events: list = []  # type: ignore[type-arg]
    assert g._claim(0, 2, events)
    assert g.last_hand is not None and g.last_hand["winner"] == 2
    g = Hakka(setup(decks=[list(CARDS)], dealer=1))
    g.tricks = [6, 0, 6, 0]
    assert g._claim(0, 1, [])  # 1 does not qualify; next counter-clockwise is 0
    assert g.last_hand is not None and g.last_hand["winner"] == 0
    g = Hakka(setup(decks=[list(CARDS)], dealer=1))
    g.tricks = [0, 0, 11, 0]  # seat 2 holds gon9 zok9 sin9 wan: 15 -> 12
    assert g._claim(0, 2, [])
    assert g.last_hand is not None and g.last_hand["tricks"] == 12
    assert g.last_hand["deltas"] == [-128, -128, 256, 0]


def test_pause_stops_the_clocks_and_the_cap() -> None:
    """RULES.md 4 and 3.9: while every human is away nothing fires, the
    45-minute cap included (game time stands still); only the abandonment
    is due, 10 minutes on; it resumes when a human returns."""
    seats = [SeatSpec(), SeatSpec("bot", "normal"), SeatSpec("bot", "easy"), SeatSpec("bot", "hard")]
    g = Hakka(setup(seats=seats, dealer=0))
    assert g.apply(1000, 0, {"type": "disconnect"}).ok
    assert g.next_deadline() == 1000 + ABANDON_MS
    assert g.apply(600_000).ok and not g.finished
    assert g.state()["calls"] == [] and g.state()["game_time"] == 1000
    assert g.apply(600_001, 0, {"type": "reconnect"}).ok
    assert g.next_deadline() == 600_001 + 29_000
    g.apply(10 * 3_600_000 + 45 * 60_000)
    assert g.finished and g.ended_by == "time_cap"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6)
    | st.sampled_from(list(CARDS)),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_actions = st.fixed_dictionaries(
    {"type": st.sampled_from(["call", "pass", "play", "discard", "resume", "leave", "x"])},
    optional={"cards": st.lists(st.sampled_from(list(CARDS)), max_size=5) | _json, "auto": _json},
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 5), _actions | _json), max_size=12),
       st.integers(0, 3))
def test_no_input_crashes_or_changes_state_when_refused(inputs: list, dealer: int) -> None:  # type: ignore[type-arg]
    """DESIGN.md 4: any input either is accepted or refused with a code and changes nothing."""
    g = Hakka(setup(dealer=dealer))
    g.apply(1000, dealer, {"type": "call"})
    t = 1000
    for seat, action in inputs:
        t += 700
        before = g.state()
        res = g.apply(t, seat, action)  # type: ignore[arg-type]
        if not res.ok:
            assert res.code and res.message
            assert g.state() == before
        assert sum(g.scores) == 0


def test_a_capped_games_length_leaves_out_its_pauses() -> None:
    """RULES.md 3.9 and 4: the 45-minute cap is game time, which a pause
    (every human away) stops; so is the result's ``length_ms``: a game
    paused 5 minutes is capped 50 minutes after its start, 45 minutes long
    (it said 50 minutes: audit finding)."""
    g = Hakka(Setup("hakka", {"seats": 4}, [SeatSpec("human")] + [SeatSpec("bot", "normal")] * 3, 5))
    assert g.apply(1000, 0, {"type": "disconnect"}).ok
    assert g.apply(1000 + 300_000, 0, {"type": "reconnect"}).ok
    g.apply(45 * 60_000 + 299_999)
    assert not g.finished
    g.apply(45 * 60_000 + 300_000)
    r = g.result()
    assert r["ended_by"] == "time_cap" and r["length_ms"] == 45 * 60_000


def test_a_hands_result_names_its_elders() -> None:
    """RULES.md 3.4, 3.7: the winning cards of a claim end with the Elders
    held, counted as tricks; with 섭 1, 신 1 and 완신 (Elders always) they
    are named (``last_hand.elders``) for the result to star them as the
    hand does (it showed 섭 1 with no ★: trial finding)."""
    import random

    seen = 0
    for seed in range(40):
        g = Hakka(setup(seed=seed))
        rnd, t = random.Random(seed), 0
        while not g.finished and t < 2_000_000:
            seat = g.view(0).get("turn")
            t += 100
            if seat is None:
                g.apply(t)
                continue
            res = g.apply(t, seat, rnd.choice(g.legal_actions(seat)))
            assert res.ok
            for ev in res.events:
                if ev.type == "hand_won" and ev.data.get("how") == "claim":
                    lh = g.last_hand
                    assert lh is not None
                    shown = ev.data["shown"]
                    assert lh["winning_cards"][len(lh["winning_cards"]) - len(shown):] == shown
                    assert set(shown) <= set(lh["elders"]) <= set(lh["winning_cards"])
                    always = {"sup1", "sin1", "wan"} & set(lh["winning_cards"])
                    assert always <= set(lh["elders"])
                    seen += bool(shown)
        if seen >= 5:
            break
    assert seen >= 5
