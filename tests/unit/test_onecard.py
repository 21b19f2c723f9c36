"""One Card engine: options, legal actions (complete and exact), views,
events, results (RULES.md 1, 4; DESIGN.md 3.1)."""

from __future__ import annotations

import random
from itertools import combinations
from typing import Any

import pytest

from ttanjit.games.base import ABANDON_MS, SeatSpec, Setup, message_for
from ttanjit.games.onecard import MESSAGES, OneCard
from ttanjit.games.onecard_cards import (
    DECK,
    RANK,
    STRENGTH,
    SUITS,
    check_group,
    find_order,
    legal_plays,
)


def game(seats: int = 4, seed: int = 1, kinds: list[str] | None = None, **kw: Any) -> OneCard:
    specs = [SeatSpec(k) for k in (kinds or ["human"] * seats)]
    options = {"seats": seats, **kw.pop("options", {})}
    return OneCard(Setup("onecard", options, specs, seed, **kw))


@pytest.mark.parametrize("bad", [
    {"options": {"turn_ms": 40000}},
    {"options": {"turn_ms": True}},
    {"options": {"speed": 2}},
    {"options": {"seats": 5}},
    {"decks": [list(DECK[:53])]},
    {"decks": [list(DECK[:53]) + ["AS"]]},
    {"decks": [list(DECK), list(DECK)]},
    {"decks": [list(range(54))]},
    {"first_player": 4},
    {"dealer": 0},
])
def test_bad_setup_raises_value_error(bad: dict[str, Any]) -> None:
    """DESIGN.md 3.1 options: seats 2-6, turn_ms 30000 | 45000; decks exact."""
    with pytest.raises(ValueError):
        game(4, **bad)


def test_seat_limits() -> None:
    """RULES 1.1: 2-6 seats, at least two dealt in."""
    for n in (1, 7):
        with pytest.raises(ValueError):
            game(n)
    with pytest.raises(ValueError):
        game(3, kinds=["human", "empty", "empty"])
    with pytest.raises(ValueError):
        game(3, first_player=1, kinds=["human", "empty", "bot"])
    g = game(3, kinds=["human", "empty", "bot"])
    assert g.turn in (0, 2) and g.state()["bot"] == [False, False, True]


def test_random_deal_is_seeded() -> None:
    """RULES conventions: everything random comes from the seed."""
    assert game(seed=5).state() == game(seed=5).state()
    assert game(seed=5).state()["hands"] != game(seed=6).state()["hands"]


def test_codes_have_korean_messages() -> None:
    """DESIGN 3.1: every refusal code has a Korean message."""
    for code, msg in MESSAGES.items():
        assert code.isidentifier() and code == code.lower()
        assert any("\uac00" <= ch <= "\ud7a3" for ch in msg)
    g = game(2, first_player=0)
    res = g.apply(10, 0, {"type": "play", "cards": [g.pile[0]]})
    assert res.code == "card_not_in_hand" and res.message == MESSAGES["card_not_in_hand"]
    res = g.apply(10, 1, {"type": "draw"})
    assert res.code == "not_your_turn" and res.message == message_for("not_your_turn")


def _key(a: dict[str, Any]) -> tuple[Any, ...]:
    return (a["type"], frozenset(a.get("cards", ())), a.get("suit"))


def _all_plays(hand: list[str]) -> list[dict[str, Any]]:
    """Every play a player could mean: each same-rank subset in the hand's
    order, with and without each suit; and mixed pairs."""
    out: list[dict[str, Any]] = []
    for k in (1, 2, 3, 4):
        for sub in combinations(hand, k):
            if len({RANK[c] for c in sub}) > 1:
                if k == 2:
                    out.append({"type": "play", "cards": list(sub)})
                continue
            for suit in (None, *SUITS):
                a: dict[str, Any] = {"type": "play", "cards": list(sub)}
                if suit:
                    a["suit"] = suit
                out.append(a)
    return out


def test_legal_actions_are_exactly_the_accepted_ones() -> None:
    """RULES 1.2-1.7: legal_actions lists every accepted play once (7s and
    jokers once per suit) and nothing that is refused."""
    rng = random.Random(11)
    checked = 0
    for n in range(30):
        g = game(2 + n % 4, seed=n)
        t = 0
        while not g.finished and checked < 1200:
            seat = g.turn
            assert seat is not None
            t += 500
            legal = g.legal_actions(seat)
            keys = [_key(a) for a in legal]
            assert len(keys) == len(set(keys)), "each legal play once"
            accepted = set()
            saved = g.clone()
            assert isinstance(saved, OneCard)
            for a in _all_plays(g.hands[seat]) + [{"type": x} for x in ("draw", "take", "pass")]:
                if not g.apply(t, seat, a).ok:
                    continue
                k = _key(a)
                if a["type"] == "play" and RANK[a["cards"][0]] in ("7", "X") \
                        and len(a["cards"]) < len(saved.hands[seat]):
                    assert "suit" in a
                elif "suit" in a:
                    k = _key({**a, "suit": None})
                accepted.add(k)
                g = saved.clone()  # type: ignore[assignment]
            assert accepted == set(keys) - {("one_card", frozenset(), None)}
            checked += 1
            g.apply(t, seat, rng.choice(legal))


def test_legal_plays_from_the_view_match_the_engine() -> None:
    """Bots see only a view; the pure ``legal_plays`` on view fields gives
    the engine's legal plays."""
    rng = random.Random(2)
    g = game(4, seed=9)
    t = 0
    while not g.finished:
        seat = g.turn
        assert seat is not None
        v = g.view(seat)
        plays = legal_plays(v["hand"], v["top"], v["suit"], v["pending"], v["twos_only"])
        engine = [a for a in g.legal_actions(seat) if a["type"] == "play"]
        assert plays == engine
        t += 300
        g.apply(t, seat, rng.choice(g.legal_actions(seat)))


def test_views_and_events_hide_cards() -> None:
    """DESIGN 1: own hand only; a drawn card's face only to the drawer."""
    g = game(3, seed=4, first_player=0)
    v0, v1, pub = g.view(0), g.view(1), g.view(None)
    assert v0["hand"] == g.hands[0] and v1["hand"] == g.hands[1] and "hand" not in pub
    assert v0["hand_counts"] == [7, 7, 7] and v0["top"] == g.discard[-1]
    for other in g.hands[1] + g.hands[2] + g.pile:
        assert other not in str(v0)
    res = g.apply(1000, 0, {"type": "draw"})
    drew = [e for e in res.events if e.type == "drew"][0]
    card = g.hands[0][-1]
    assert drew.for_seat(0)["cards"] == [card]
    assert "cards" not in drew.for_seat(1) and "cards" not in drew.for_seat(None)
    assert g.view(1)["hand_counts"][0] == 8


def test_play_reply_reports_order() -> None:
    """RULES 1.4: the reply tells the order used."""
    top = "9S"
    hands = {0: ["5H", "5S", "KD", "KC", "QD", "QC", "JD"]}
    pool = [c for c in DECK if c not in hands[0] and c != top]
    deck = []
    others = [pool[i * 7:(i + 1) * 7] for i in range(1)]
    for i in range(7):
        deck += [hands[0][i], others[0][i]]
    rest = [c for c in pool if c not in others[0]]
    deck += [top] + rest
    g = game(2, decks=[deck], first_player=0)
    assert g.discard == [top]
    res = g.apply(100, 0, {"type": "play", "cards": ["5H", "5S"]})
    assert res.ok and res.to_json() == {"ok": True, "order": ["5S", "5H"], "reordered": True}


def test_result_counters_and_substitution() -> None:
    """Result of a finished game (feeds ``ttanjit simulate``)."""
    g = game(2, seed=3, first_player=0)
    with pytest.raises(ValueError):
        g.result()
    assert g.apply(1000, 1, {"type": "leave"}).ok
    t = 1000
    rng = random.Random(1)
    while not g.finished:
        t += 1000
        seat = g.turn
        assert seat is not None
        g.apply(t, seat, rng.choice(g.legal_actions(seat)))
    r = g.result()
    assert r["substituted"] == [1] and r["length_ms"] == g.end_gt
    assert set(r["counters"]) == {"eliminations", "one_card_penalties", "false_calls"}
    assert r["winners"] == ([] if g.winner is None else [g.winner])


def test_paused_game_has_no_deadline_and_clone_is_independent() -> None:
    """RULES 4: every human away → no game deadline until one returns
    (only the abandonment, 10 minutes on)."""
    g = game(2, seed=3)
    c = g.clone()
    g.apply(10, 0, {"type": "disconnect"})
    assert g.next_deadline() == 30000
    g.apply(20, 1, {"type": "disconnect"})
    assert g.next_deadline() == 20 + ABANDON_MS and g.view(None)["paused"]
    assert g.view(None)["deadline"] is None
    assert c.next_deadline() == 30000 and c.state() != g.state()
    g.apply(5020, 1, {"type": "reconnect"})
    assert g.next_deadline() == 35000


def _reference_plays(hand: list[str], top: str, suit: str, pending: int,
                     twos_only: bool) -> set[tuple[Any, ...]]:
    """RULES 1.4 literally: every same-rank subset, first legal permutation."""
    out: set[tuple[Any, ...]] = set()
    for k in (1, 2, 3, 4):
        for sub in combinations(hand, k):
            if check_group(sub) or (k == len(hand) and RANK[sub[0]] in ("2", "A", "X")):
                continue
            order = find_order(sub, top, suit, pending, twos_only)
            if isinstance(order, tuple):
                named = RANK[sub[0]] in ("7", "X") and k < len(hand)
                for s in (SUITS if named else (None,)):
                    out.add((order, s))
    return out


def test_fast_legal_plays_match_the_literal_rule() -> None:
    """The fast ``legal_plays`` equals the literal permutation rule (1.4, 1.5)."""
    rng = random.Random(5)
    for _ in range(3000):
        hand = rng.sample(DECK, rng.choice([1, 2, 3, 5, 8, 12, 16]))
        rest = [c for c in DECK if c not in hand]
        top = rng.choice(rest)
        pending = rng.choice([0, 0, 2, 5]) if STRENGTH[top] else 0
        suit = rng.choice(SUITS) if RANK[top] in ("7", "X") else top[-1]
        twos = pending > 0 and RANK[top] == "2" and rng.random() < 0.7
        got = legal_plays(hand, top, suit, pending, twos)
        keys = [(tuple(a["cards"]), a.get("suit")) for a in got]
        assert len(keys) == len(set(keys))
        assert set(keys) == _reference_plays(hand, top, suit, pending, twos), (hand, top, suit)


JUNK: list[Any] = [None, True, 1.5, -3, 10**30, "", "5H", "AS", "BJ", [], ["5H"], [["5H"]], {}, {"a": 1},
                   "S", ["S"], float("nan")]


def test_no_input_crashes_the_engine() -> None:
    """DESIGN 4: bad input gets a clear refusal and changes nothing; no input
    raises out of ``apply``."""
    rng = random.Random(13)
    for n in range(30):
        g = game(2 + n % 5, seed=n)
        t = 0
        for _ in range(300):
            if g.finished:
                break
            t += rng.randint(0, 3000)
            seat: Any = rng.choice([*range(g.n), *JUNK]) if rng.random() < 0.2 else rng.randrange(g.n)
            action: Any = {"type": rng.choice(["play", "draw", "take", "pass", "one_card", "resume",
                                               "disconnect", "reconnect", "leave", *JUNK[:8]])}
            if rng.random() < 0.6:
                action["cards"] = rng.choice([rng.sample(DECK, rng.randint(1, 5)), *JUNK])
            if rng.random() < 0.3:
                action["suit"] = rng.choice([*SUITS, *JUNK])
            if rng.random() < 0.05:
                action = rng.choice(JUNK)
            when: Any = rng.choice([t, t, t, -1, 1.5, None, "1"]) if rng.random() < 0.1 else t
            before = g.state()
            res = g.apply(when, seat, action)
            if res.ok:
                t = max(t, g.now)
            else:
                assert res.code and res.message and g.state() == before
            for s in range(g.n):
                g.legal_actions(s)
                g.view(s)
        assert g.legal_actions(99) == [] and "hand" not in g.view(99)


# seat 0 (a human) makes false calls until it holds 20 cards (RULES 1.7,
# 1.8), the others drawing meanwhile: eliminated at t=190 (the inputs of
# tests/scenarios/onecard/rules1_eliminated_away_pauses.json)
_TO_ELIMINATION = [(10, 0, "one_card"), (20, 2, "draw"), (30, 0, "one_card"), (40, 0, "draw"),
                   (50, 0, "one_card"), (60, 1, "draw"), (70, 0, "one_card"), (80, 2, "draw"),
                   (90, 0, "one_card"), (100, 0, "draw"), (110, 0, "one_card"), (120, 1, "draw"),
                   (130, 0, "one_card"), (140, 2, "draw"), (150, 0, "one_card"), (160, 0, "draw"),
                   (170, 0, "one_card"), (180, 1, "draw"), (190, 0, "one_card"), (200, 2, "draw")]


def _eliminated_seat_0(**kw: Any) -> OneCard:
    g = game(3, seed=11, kinds=["human", "human", "bot"], **kw)
    for t, seat, kind in _TO_ELIMINATION:
        assert g.apply(t, seat, {"type": kind}).ok, (t, seat, kind)
    assert g.eliminated == [0] and not g.finished
    return g


def test_an_eliminated_player_who_goes_keeps_their_place() -> None:
    """RULES 1.8 (an eliminated player "may watch": their cards went into
    the pile, nothing is left to play) and 4: going — ``leave``, or away
    60 s — brings the bot as for anyone, and the seat keeps the place it
    was eliminated at (``kept``; counted as having left, the rating put
    them last, below the player still at the table: trial finding, an
    eliminated player watched a bots' game for 10 minutes or lost more by
    going). A seat taken over while still in the game is not kept."""
    g = _eliminated_seat_0()
    r = g.apply(300, 0, {"type": "leave"})
    assert r.ok and [e.type for e in r.events] == ["substituted"]
    assert g.presence.kept == [True, False, False]
    # the views say so: the tables show 탈락, not 봇이 대신함 (trial finding)
    assert g.view(1)["seats"][0]["kept"] is True and "kept" not in g.view(1)["seats"][1]
    assert g.apply(400, 1, {"type": "leave"}).ok  # seat 1 still plays: it left a game in play
    assert g.presence.kept == [True, False, False] and g.presence.substituted == [True, True, False]
    # away for good, the same (the 60 s of RULES 4)
    g = _eliminated_seat_0()
    assert g.apply(300, 0, {"type": "disconnect"}).ok
    rng, t, taken = random.Random(3), 300, []
    while not g.finished and t < 200_000:
        t += 1_000
        seat = g.turn
        r = g.apply(t, seat, rng.choice(g.legal_actions(seat))) if seat in (1, 2) else g.apply(t)
        assert r.ok
        taken += [e.data["seat"] for e in r.events if e.type == "substituted"]
    assert taken == [0] and g.presence.kept[0] is True


def test_an_eliminated_player_of_an_older_revision_left_a_game_in_play() -> None:
    """Rules revision 2 (a game live across the upgrade replays as it was
    played): the eliminated seat taken over is not kept."""
    g = _eliminated_seat_0(rules=2)
    assert g.apply(300, 0, {"type": "leave"}).ok
    assert g.presence.substituted[0] is True and g.presence.kept[0] is False
