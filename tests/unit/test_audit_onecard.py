"""Independent rules audit of the One Card engine (RULES.md 1 and 4, seed
page seeds/000): boundaries and combinations the authors' tests do not pin.

Positions are rigged by setting engine attributes directly (as the bots'
search does); every expectation is derived from RULES.md / the seed, not from
the engine."""

from __future__ import annotations

from typing import Any

import pytest

from ttanjit.games.base import ABANDON_MS, SeatSpec, Setup
from ttanjit.games.onecard import OneCard
from ttanjit.games.onecard_cards import DECK, RANK, STRENGTH, SUIT, SUITS, refusal

ATTACK = [c for c in DECK if STRENGTH[c]]


def game(kinds: list[str] | None = None, first: int = 0, **options: Any) -> OneCard:
    kinds = kinds or ["human", "human", "human"]
    setup = Setup("onecard", {"seats": len(kinds), **options},
                  [SeatSpec(k) for k in kinds], 3, first_player=first)
    return OneCard(setup)


def rig(g: OneCard, hands: dict[int, list[str]], top: str, suit: str | None = None,
        pending: int = 0, twos_only: bool = False, pile: list[str] | None = None) -> OneCard:
    """``g``'s table (seats, options, turn, rng) with the given hands; every
    other card goes to the pile (or the discards under ``top`` when ``pile``
    is given). Built with the public constructor :meth:`OneCard.from_view`."""
    used = {c for h in hands.values() for c in h} | {top} | set(pile or [])
    rest = [c for c in DECK if c not in used]
    view = g.view(None)
    view["discard"] = [top] if pile is None else [*rest, top]
    view["suit"] = suit or SUIT[top]
    view["pending"], view["twos_only"] = pending, twos_only
    return OneCard.from_view(view, [list(hands.get(s, [])) for s in range(g.n)],
                             rest if pile is None else list(pile), seed=g.rng,
                             seats=g.setup.seats, options=g.setup.options)


def ok(g: OneCard, t: int, seat: int, action: dict[str, Any]) -> Any:
    res = g.apply(t, seat, action)
    assert res.ok, (action, res.code)
    return res


def names(res: Any) -> list[str]:
    return [e.type for e in res.events]


# -- 1.5: the transfer table, row by row, for every current suit ---------------

def _table(top: str, card: str, suit: str) -> bool:
    """RULES.md 1.5's table, written out row by row (not the formula)."""
    r = RANK[card]
    if top == "CJ":
        return False
    if top == "BJ":
        return card == "CJ" or (card == "AS" and suit == "S")
    if top == "AS":
        return card in ("BJ", "CJ")
    if RANK[top] == "A":
        return r == "A" or card in ("BJ", "CJ")
    assert RANK[top] == "2"
    if r == "2" or card in ("BJ", "CJ"):
        return True
    return r == "A" and SUIT[card] == suit  # AS included: only when the suit is ♠


@pytest.mark.parametrize("top", ATTACK)
def test_transfer_table_every_top_card_and_suit(top: str) -> None:
    """RULES 1.5: every (top attack card, attack card, current suit)."""
    suits = SUITS if RANK[top] == "X" else (SUIT[top], *[s for s in SUITS if s != SUIT[top]])
    for suit in suits:
        for card in ATTACK:
            if card == top:
                continue
            legal = refusal(card, top, suit, STRENGTH[top], RANK[top] == "2") is None
            assert legal == _table(top, card, suit), (top, card, suit)


def test_as_on_bj_with_named_spade_in_the_engine() -> None:
    """RULES 1.5 table row BJ: AS transfers when the joker named ♠ (pending
    5 + 5 = 10), refused with ♥ named; the seed example sums to 22."""
    g = game()
    g = rig(g, {0: ["2H", "9C", "9D"], 1: ["AH", "9S", "9H"], 2: ["AS", "BJ", "CJ", "8C"]}, "5H")
    ok(g, 10, 0, {"type": "play", "cards": ["2H"]})
    ok(g, 20, 1, {"type": "play", "cards": ["AH"]})
    ok(g, 30, 2, {"type": "play", "cards": ["AS"]})
    g.turn = 0
    g.hands[0].append("BJ")
    g.hands[2].remove("BJ")
    ok(g, 40, 0, {"type": "play", "cards": ["BJ"], "suit": "H"})
    g.hands[1].append("AD")
    assert g.apply(50, 1, {"type": "play", "cards": ["AD"]}).code == "weaker_attack"
    assert g.pending == 15
    g.suit = "S"  # as if the joker had named ♠
    g.hands[1].append("CJ")
    g.hands[2].remove("CJ")
    res = ok(g, 60, 1, {"type": "play", "cards": ["CJ"], "suit": "S"})
    assert g.pending == 22 and res.events[0].data["pending"] == 22


def test_as_on_bj_named_spade_then_weaker() -> None:
    """RULES 1.5: on BJ with ♠ named AS is legal (5 >= 5) and the pending
    total grows by 5; on BJ with ♥ named AS is refused, and the state is kept."""
    for named, expect in (("S", True), ("H", False)):
        g = game()
        g = rig(g, {0: ["BJ", "9C", "9D"], 1: ["AS", "9S", "9H"], 2: ["8C", "8D"]}, "5H")
        ok(g, 10, 0, {"type": "play", "cards": ["BJ"], "suit": named})
        res = g.apply(20, 1, {"type": "play", "cards": ["AS"]})
        assert res.ok is expect and g.pending == (10 if expect else 5)
        if not expect:
            # (on a joker only the suit it named matches: said so)
            assert res.code == "joker_named_suit" and g.hands[1] == ["AS", "9S", "9H"]


# -- 1.5 defence: 3s only against 2-only chains --------------------------------

def test_three_defends_only_pure_two_chains() -> None:
    """RULES 1.5: ♥2 → ♣2 → ♣3 blocks 4; a 3 of another suit is refused; a
    chain ♥2 → ♥A cannot be blocked."""
    g = game()
    g = rig(g, {0: ["2H", "9C", "9D"], 1: ["2C", "3D", "9H"], 2: ["3C", "3S", "8D"]}, "5H")
    ok(g, 10, 0, {"type": "play", "cards": ["2H"]})
    ok(g, 20, 1, {"type": "play", "cards": ["2C"]})
    assert g.apply(30, 2, {"type": "play", "cards": ["3S"]}).code == "does_not_match"
    res = ok(g, 40, 2, {"type": "play", "cards": ["3S", "3C"]})  # reordered: ♣3 first
    assert res.info == {"order": ["3C", "3S"], "reordered": True}
    assert g.pending == 0 and g.suit == "S" and g.turn == 0
    g = game()
    g = rig(g, {0: ["2H", "9C", "9D"], 1: ["AH", "3D", "9H"], 2: ["3H", "8D"]}, "5H")
    ok(g, 10, 0, {"type": "play", "cards": ["2H"]})
    ok(g, 20, 1, {"type": "play", "cards": ["AH"]})
    assert g.apply(30, 2, {"type": "play", "cards": ["3H"]}).code == "cannot_defend"
    ok(g, 40, 2, {"type": "take"})  # 5 cards; the attack ends
    assert g.pending == 0 and len(g.hands[2]) == 7 and g.turn == 0


# -- 1.6 the last card in multi plays -----------------------------------------

@pytest.mark.parametrize("hand,cards,code", [
    (["2H", "2C"], ["2H", "2C"], "last_card_forbidden"),
    (["AH", "AC"], ["AC", "AH"], "last_card_forbidden"),
    (["BJ", "CJ"], ["BJ", "CJ"], "last_card_forbidden"),
    (["7H", "7C"], ["7C", "7H"], None),
    (["KH", "KC"], ["KH", "KC"], None),
    (["JH", "JS"], ["JH", "JS"], None),
])
def test_last_card_rule_in_multi_plays(hand: list[str], cards: list[str], code: str | None) -> None:
    """RULES 1.6: 2, A, jokers may not empty the hand, even together; any
    other legal play may, and wins at once (no suit named, no effect)."""
    g = game()
    g = rig(g, {0: hand, 1: ["9S", "9D"], 2: ["8S", "8D"]}, "5H")
    res = g.apply(10, 0, {"type": "play", "cards": cards})
    if code:
        assert res.code == code and g.hands[0] == hand
    else:
        assert res.ok and g.finished and g.winner == 0 and "one_card_window" not in names(res)


def test_a_last_card_refused_under_attack_says_to_take_it() -> None:
    """RULES 1.6 ("or, under attack, take"): a lone last 2 on an attack was
    refused with "1장 뽑아요", and a draw was then refused under_attack
    (원카드 audit). The refusal says both ways; the seat's view flags the
    card before it is sent (``cannot``), as the engine refuses it first."""
    g = game()
    g = rig(g, {0: ["2H", "9C"], 1: ["2S"], 2: ["8S", "8D"]}, "5H")
    ok(g, 10, 0, {"type": "play", "cards": ["2H"]})  # an attack of 2 on seat 1's lone 2
    assert g.view(1)["cannot"] == {"2S": "last_card_forbidden"}
    res = g.apply(20, 1, {"type": "play", "cards": ["2S"]})
    assert res.code == "last_card_forbidden" and "공격받는 중이면 쌓인 카드를 받아요" in res.message
    assert g.apply(30, 1, {"type": "draw"}).code == "under_attack"
    ok(g, 40, 1, {"type": "take"})
    assert len(g.hands[1]) == 3


def test_multi_play_leaving_one_card_opens_the_window() -> None:
    """RULES 1.4/1.7: several cards leaving one card open a window."""
    g = game()
    g = rig(g, {0: ["9H", "9C", "9D", "4S"], 1: ["8S", "8D"], 2: ["8H", "6D"]}, "5H")
    res = ok(g, 10, 0, {"type": "play", "cards": ["9C", "9H", "9D"]})
    assert res.info["order"] == ["9H", "9C", "9D"]
    assert g.window_holder == 0 and g.suit == "D"


# -- 1.3 J / Q / K ---------------------------------------------------------------

def test_j_q_k_after_an_elimination() -> None:
    """RULES 1.3: next = 1 + skips steps among seats still in the game: with
    seats 0 and 2 left, J gives 0 another turn, Q passes to 2; K again."""
    g = game()
    g = rig(g, {0: ["JH", "QH", "KH", "4S", "4C"], 1: [], 2: ["8S", "8D"]}, "5H")
    g.alive[1] = False
    ok(g, 10, 0, {"type": "play", "cards": ["JH"]})
    assert g.turn == 0
    ok(g, 20, 0, {"type": "play", "cards": ["QH"]})
    assert g.turn == 2 and g.direction == -1
    g.turn = 0
    ok(g, 30, 0, {"type": "play", "cards": ["KH"]})
    assert g.turn == 0


def test_k_extra_turn_draw_fresh_timer_and_second_false_call() -> None:
    """RULES 1.3/1.9/1.7: the K turn has a fresh timer, may draw, and is a new
    turn for the once-per-turn false call."""
    g = game()
    g = rig(g, {0: ["KH", "4S", "4C"], 1: ["8S", "8D"], 2: ["8H", "6D"]}, "5H")
    ok(g, 1000, 1, {"type": "one_card"})  # false call in turn 0's first turn
    assert ok(g, 1100, 1, {"type": "one_card"}).info == {"ignored": "false_call_limit"}
    ok(g, 5000, 0, {"type": "play", "cards": ["KH"]})
    assert g.turn == 0 and g.next_deadline() == 35_000
    ok(g, 6000, 1, {"type": "one_card"})  # the K turn is a new turn
    assert len(g.hands[1]) == 4
    ok(g, 7000, 0, {"type": "draw"})
    assert g.turn == 1


# -- 1.7 window timing boundaries ----------------------------------------------

def _window(t0: int) -> OneCard:
    g = game()
    g = rig(g, {0: ["9H", "4S"], 1: ["8S", "8D", "6C"], 2: ["8H", "6D", "6S"]}, "5H")
    ok(g, t0, 0, {"type": "play", "cards": ["9H"]})
    assert g.window_holder == 0
    return g


def test_window_open_until_just_before_3000_ms() -> None:
    """RULES 1.7: a press 2,999 ms after the play is in the window."""
    g = _window(1000)
    res = ok(g, 3999, 2, {"type": "one_card"})
    assert res.events[0].data == {"seat": 2, "holder": 0, "penalty": 2} and len(g.hands[0]) == 3


def test_window_closed_at_exactly_3000_ms_and_grace_1000() -> None:
    """RULES 1.7: at 3,000 ms the window has closed (expiry, no penalty); a
    press up to 999 ms later is ignored; at 1,000 ms it is a false call."""
    g = _window(1000)
    res = ok(g, 4000, 2, {"type": "one_card"})
    assert "one_card_window_closed" in names(res) and res.info == {"ignored": "late_press"}
    assert ok(g, 4999, 1, {"type": "one_card"}).info == {"ignored": "late_press"}
    res = ok(g, 5000, 1, {"type": "one_card"})
    assert "false_call" in names(res) and len(g.hands[1]) == 4 and len(g.hands[0]) == 1


def test_grace_after_a_press_closes_the_window() -> None:
    """RULES 1.7: the window closes at the first press; later presses within
    1,000 ms are late (no penalty either way), then false calls."""
    g = _window(1000)
    ok(g, 1500, 0, {"type": "one_card"})
    assert ok(g, 2499, 2, {"type": "one_card"}).info == {"ignored": "late_press"}
    res = ok(g, 2500, 2, {"type": "one_card"})
    assert "false_call" in names(res) and len(g.hands[0]) == 1


def test_penalty_draws_do_not_move_the_turn() -> None:
    """RULES 1.7: penalties never change whose turn it is; pressing off-turn is allowed."""
    g = _window(1000)
    assert g.turn == 1
    ok(g, 1200, 2, {"type": "one_card"})
    assert g.turn == 1 and g.next_deadline() == 31_000


# -- 1.8 elimination at exactly 20 -----------------------------------------------

def test_false_call_at_19_eliminates() -> None:
    """RULES 1.8: a penalty draw reaching exactly 20 eliminates at once; the
    cards go face down into the pile."""
    hand1 = [c for c in DECK if SUIT[c] == "C"][:13] + ["2D", "3D", "4D", "6D", "7D", "8D"]
    g = game()
    g = rig(g, {0: ["9H", "4S"], 1: hand1, 2: ["8H", "6S"]}, "5H")
    pile_before = len(g.pile)
    res = ok(g, 10, 1, {"type": "one_card"})
    assert "eliminated" in names(res) and not g.alive[1] and g.hands[1] == []
    assert len(g.pile) == pile_before - 1 + 20 and g.turn == 0
    ok(g, 20, 0, {"type": "play", "cards": ["9H"]})
    assert g.turn == 2  # seat 1 is skipped


def test_one_card_penalty_reaching_20_eliminates_the_holder() -> None:
    """RULES 1.8: the holder's 2-card penalty counts too (18 + 2 is not
    possible for a holder, so rig a holder of 1 after a big take: 18 + 2)."""
    g = _window(1000)
    g.hands[0] = [c for c in DECK if SUIT[c] == "C"][:13] + ["2D", "3D", "4D", "6D", "7D"]
    g.pile = [c for c in g.pile if c not in g.hands[0]]
    res = ok(g, 1200, 1, {"type": "one_card"})
    assert "eliminated" in names(res) and not g.alive[0] and g.turn == 1


def test_take_reaching_exactly_20_eliminates_and_19_does_not() -> None:
    """RULES 1.8: after a take, 20 eliminates (the turn passes on), 19 does not."""
    for size, out in ((18, True), (17, False)):
        g = game()
        hand = [c for c in DECK if SUIT[c] in "CD" and RANK[c] not in ("A", "2", "X")][:size]
        g = rig(g, {0: ["2H", "9S"], 1: hand, 2: ["8H", "6S"]}, "5H")
        ok(g, 10, 0, {"type": "play", "cards": ["2H"]})
        res = ok(g, 20, 1, {"type": "take"})
        assert ("eliminated" in names(res)) is out
        assert g.turn == 2 and g.pending == 0


# -- 1.9 timeouts and autopilot ----------------------------------------------------

def test_autopilot_after_exactly_three_consecutive_timeouts() -> None:
    """RULES 1.9: two timeouts, a manual action, two more: no autopilot; the
    third consecutive one switches it on."""
    g = game(["human", "bot"])
    g = rig(g, {0: ["4S", "4C", "9S"], 1: ["8S", "8D", "8C"]}, "5H")
    t = 0
    for _ in range(2):
        t += 30_000
        g.apply(t)
        assert g.turn == 1
        g.turn = 0
        g.deadline_gt = t + 30_000
    assert g.timeouts[0] == 2 and not g.autopilot[0]
    ok(g, t + 100, 0, {"type": "draw"})
    assert g.timeouts[0] == 0
    g.turn = 0
    g.deadline_gt = t + 100 + 30_000
    t += 100
    for i in range(3):
        t += 30_000
        res = g.apply(t)
        assert ("autopilot" in names(res)) is (i == 2), i
        g.turn = 0
        g.deadline_gt = t + 30_000
    assert g.autopilot[0]


def test_bot_timeouts_never_count() -> None:
    """RULES 1.9: autopilot is for a player's seat; a bot seat never gets it."""
    g = game(["human", "bot"], first=1)
    t = 0
    for _ in range(4):
        t += 30_000
        g.apply(t)
        g.turn = 1
        g.deadline_gt = t + 30_000
    assert not g.autopilot[1]


# -- 1.8 cap and 4 presence boundaries -------------------------------------------

def test_cap_at_exactly_30_minutes_of_game_time() -> None:
    """RULES 1.8: 30:00 of game time ends with no winner; paused time does
    not count (a 10 s pause moves the end 10 s later)."""
    g = game(["human", "bot", "bot"])
    g.turn_ms = 10**9
    g.deadline_gt = 10**9
    ok(g, 100_000, 0, {"type": "disconnect"})
    ok(g, 110_000, 0, {"type": "reconnect"})
    g.apply(30 * 60_000 + 9_999)
    assert not g.finished
    res = g.apply(30 * 60_000 + 10_000)
    assert g.finished and g.winner is None and g.ended_by == "time_cap"
    assert "game_ended" in names(res)


@pytest.mark.parametrize("back,substituted", [(59_999, False), (60_000, True)])
def test_back_within_60_s_boundary(back: int, substituted: bool) -> None:
    """RULES 4: back within 60,000 ms keeps the seat; at 60,000 a normal bot
    has taken it and the player cannot retake it."""
    g = game(["human", "human", "bot"], first=2)
    g.turn_ms = 10**9
    g.deadline_gt = 10**9
    ok(g, 1000, 1, {"type": "disconnect"})
    res = g.apply(1000 + back, 1, {"type": "reconnect"})
    assert res.ok is not substituted
    if substituted:  # refused: nothing changed, the clock included; a bare advance fires it
        assert res.code == "seat_is_bot" and not g.presence.substituted[1]
        assert "substituted" in names(g.apply(1000 + back))
    assert g.presence.substituted[1] is substituted and g.bot[1] is substituted


def test_pause_only_when_every_human_is_away() -> None:
    """RULES 4: bots and substituted seats are not humans: when the last
    remaining human disconnects the clocks stop; the absence counter of a
    human who left earlier keeps its elapsed time through the pause."""
    g = game(["human", "human", "bot"], first=2)
    ok(g, 1000, 0, {"type": "leave"})  # seat 0 substituted
    assert not g.presence.paused
    ok(g, 2000, 1, {"type": "disconnect"})
    # paused: only the abandonment is due, 10 minutes on (RULES 4)
    assert g.presence.paused and g.next_deadline() == 2000 + ABANDON_MS
    assert g.apply(2000 + 599_999).ok and not g.finished and g.turn == 2
    ok(g, 2000 + 599_999, 1, {"type": "reconnect"})
    assert not g.presence.paused and g.next_deadline() == 599_999 + 30_000


def test_first_legal_permutation_of_the_selection_as_given() -> None:
    """RULES 1.4: on ♥2 (pending) the selection [AS, AD, AH] is tried in
    itertools.permutations order: AS/AD cannot go first (suit ♥), (AH, AS,
    AD) drops in strength, so (AH, AD, AS) is used: pending 2 + 11."""
    g = game()
    g = rig(g, {0: ["2H", "9C", "9D"], 1: ["AS", "AD", "AH", "9H"], 2: ["8S", "8D"]}, "5H")
    ok(g, 10, 0, {"type": "play", "cards": ["2H"]})
    res = ok(g, 20, 1, {"type": "play", "cards": ["AS", "AD", "AH"]})
    assert res.info == {"order": ["AH", "AD", "AS"], "reordered": True}
    assert g.pending == 13 and g.suit == "S" and not g.twos_only and g.turn == 2


def test_j_skips_count_only_seats_still_in_the_game() -> None:
    """RULES 1.3: 1 + skips steps among seats still in the game: with seat 1
    eliminated of 4, seat 0's two Js skip 2 and 3 and give 0 the turn."""
    g = game(["human"] * 4)
    g = rig(g, {0: ["JH", "JC", "4S"], 1: [], 2: ["8S", "8D"], 3: ["8H", "6D"]}, "5H")
    g.alive[1] = False
    ok(g, 10, 0, {"type": "play", "cards": ["JH", "JC"]})
    assert g.turn == 0
    g.hands[0] += ["QC", "4C"]
    ok(g, 20, 0, {"type": "play", "cards": ["QC"]})  # reversed: 0 -> 3
    assert g.turn == 3 and g.direction == -1


# -- 1.2/1.4/1.5/1.6: the engine against an independent oracle -----------------

def _first_ok(card: str, top: str, suit: str, pending: int, twos_only: bool) -> bool:
    if pending:
        if STRENGTH[card]:
            return _table(top, card, suit)
        return RANK[card] == "3" and twos_only and SUIT[card] == suit
    if RANK[card] == "X":
        return True
    return SUIT[card] == suit or (RANK[top] != "X" and RANK[card] == RANK[top])


def _next_ok(prev: str, card: str) -> bool:
    """A following card of the same rank on the one before it: attack cards
    as a transfer on ``prev`` (its own suit current), others always."""
    return _table(prev, card, SUIT[prev] or "S") if STRENGTH[card] else True


def _oracle(hand: list[str], sel: list[str], top: str, suit: str, pending: int,
            twos_only: bool) -> tuple[str, ...] | None:
    from itertools import permutations
    if len(sel) > 4 or len({RANK[c] for c in sel}) != 1:
        return None
    if len(sel) == len(hand) and RANK[sel[0]] in ("2", "A", "X"):
        return None
    for order in permutations(sel):
        if _first_ok(order[0], top, suit, pending, twos_only) and all(
                _next_ok(a, b) for a, b in zip(order, order[1:])):  # noqa: B905
            return order
    return None


@pytest.mark.parametrize("seed", range(6))
def test_plays_match_an_independent_oracle(seed: int) -> None:
    """RULES 1.2-1.6: for random positions (attack or not, any top and current
    suit) and random same-rank selections, the engine accepts exactly what the
    rules allow, in the first legal permutation order, and refuses the rest
    without changing anything."""
    import random
    rng = random.Random(seed)
    for _ in range(400):
        g = game()
        cards = list(DECK)
        rng.shuffle(cards)
        top = cards.pop()
        pending = rng.choice([0, 0, STRENGTH[top]]) if STRENGTH[top] else 0
        twos_only = pending > 0 and RANK[top] == "2" and rng.random() < 0.7
        suit = rng.choice(SUITS) if RANK[top] in ("7", "X") else SUIT[top]
        rank = rng.choice(["2", "A", "X", "3", "7", "9", "K", RANK[top]])
        same = [c for c in cards if RANK[c] == rank]
        sel = rng.sample(same, rng.randint(1, len(same)))
        extra = [c for c in cards if c not in sel][: rng.choice([0, 0, 1, 3])]
        hand = sel + extra
        rng.shuffle(hand)
        g = rig(g, {0: hand, 1: ["8S", "8D"] if "8S" not in hand + [top] else ["QD", "QS"]},
            top, suit, pending, twos_only)
        if g.hands[1] == [] or set(g.hands[1]) & set(hand + [top]):
            continue
        expect = _oracle(hand, sel, top, suit, pending, twos_only)
        action: dict[str, Any] = {"type": "play", "cards": sel}
        if RANK[sel[0]] in ("7", "X"):
            action["suit"] = "C"
        before = g.state()
        res = g.apply(10, 0, action)
        assert res.ok is (expect is not None), (hand, sel, top, suit, pending, twos_only, res.code)
        if expect is None:
            assert g.state() == before
        else:
            assert tuple(res.info["order"]) == expect


def test_a_game_is_not_paused_for_an_eliminated_player_alone() -> None:
    """RULES 1.8 and 4: an eliminated player may watch; while they do, the
    game is not paused. Once every human is away and none is still in the
    game, there is nobody to wait for: the game plays on to its end (it was
    paused and, 10 minutes later, abandoned and unrated: a player who closed
    the tab once eliminated made their loss vanish; audit finding). A
    player still in the game who is away pauses it as before."""
    nineteen = [c for c in DECK if SUIT[c] == "C"][:13] + ["2D", "3D", "4D", "6D", "7D", "8D"]
    for kinds, paused in ((["human", "bot", "bot"], False), (["human", "human", "bot"], True)):
        g = game(kinds, first=1)
        g = rig(g, {0: nineteen, 1: ["9H", "4S"], 2: ["8H", "6S"]}, "5H")
        assert "eliminated" in names(ok(g, 10, 0, {"type": "one_card"}))  # a false call: 20 cards
        if kinds[1] == "human":
            ok(g, 20, 1, {"type": "disconnect"})
            assert not g.presence.paused  # the eliminated player watches
        res = ok(g, 30, 0, {"type": "disconnect"})
        assert res.events[0].data["paused"] is paused and g.presence.paused is paused, kinds
        if not paused:  # seat 1's turn timer runs; no abandonment
            assert g.next_deadline() == 30_000 and g.presence.abandon_at() is None
