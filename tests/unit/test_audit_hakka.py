"""Independent rules audit of the Hakka Cards engine (RULES.md 3 and 4, seed
page seeds/004): every dealer, calling order, Elder chains, wan in sets,
claims, settlements and zero-sum over whole games.

Expectations are derived from RULES.md / the seed, not from the engine."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ttanjit.games.base import ABANDON_MS, SeatSpec, Setup
from ttanjit.games.hakka import Hakka
from ttanjit.games.hakka_patterns import CARDS, classify, elders, refusal_to_beat
from ttanjit.games.hakka_scoring import settle


def make(dealer: int, decks: list[list[str]] | None = None,
         kinds: list[str] | None = None, seed: int = 5) -> Hakka:
    seats = [SeatSpec(k) for k in (kinds or ["human"] * 4)]
    return Hakka(Setup("hakka", {"seats": 4}, seats, seed, decks or [list(CARDS)] * 8,
                       dealer=dealer))


def ok(g: Hakka, t: int, seat: int, action: dict[str, Any]) -> Any:
    res = g.apply(t, seat, action)
    assert res.ok, (seat, action, res.code)
    return res


@pytest.mark.parametrize("dealer", range(4))
def test_deal_counter_clockwise_from_every_dealer(dealer: int) -> None:
    """RULES 3.2: one card each from the dealer counter-clockwise (decreasing
    seat number), then the three active seats in that order to 12 each; the
    seat opposite the dealer is the dreamer with one card."""
    g = make(dealer)
    ccw = [(dealer - i) % 4 for i in range(4)]
    dreamer = (dealer + 2) % 4
    assert g.dreamer == dreamer == ccw[2]
    expect: dict[int, list[str]] = {s: [] for s in range(4)}
    for i in range(4):
        expect[ccw[i]].append(CARDS[i])
    active = [s for s in ccw if s != dreamer]
    for i, c in enumerate(CARDS[4:]):
        expect[active[i % 3]].append(c)
    for s in range(4):
        assert sorted(g.hands[s]) == sorted(expect[s]), s
    assert len(g.hands[dreamer]) == 1 and all(len(g.hands[s]) == 12 for s in active)


@pytest.mark.parametrize("dealer", range(4))
def test_calling_order_void_deal_and_next_dealer(dealer: int) -> None:
    """RULES 3.3: dealer, then counter-clockwise skipping the dreamer, at most
    once round; all pass -> void deal, not counted, the next seat
    counter-clockwise deals (Decision); the dreamer may not speak."""
    g = make(dealer)
    order = [s for s in ((dealer - i) % 4 for i in range(4)) if s != (dealer + 2) % 4]
    assert g.apply(10, (dealer + 2) % 4, {"type": "pass"}).code == "dreamer_sits_out"
    t = 100
    for s in order:
        assert g.turn == s
        wrong = next(x for x in order if x != s)
        assert g.apply(t, wrong, {"type": "call"}).code == "not_your_turn"
        t += 100
        ok(g, t, s, {"type": "pass"})
    assert g.round == 1 and g.dealer == (dealer - 1) % 4 and g.phase == "calling"
    assert g.dreamer == (dealer + 1) % 4 and g.counters["void_deals"] == 1


def test_next_dealer_after_a_non_dealer_call_and_a_dealer_call() -> None:
    """Seed/RULES 3.3: a dealer who calls deals again; when the dealer passed,
    the next seat counter-clockwise deals next (even if a later seat called)."""
    g = make(2)  # active 2, 1, 3; dreamer 0
    ok(g, 10, 2, {"type": "pass"})
    ok(g, 20, 1, {"type": "pass"})
    ok(g, 30, 3, {"type": "call"})
    assert g.privileged == 3 and g.next_dealer == 1
    g = make(2)
    ok(g, 10, 2, {"type": "call"})
    assert g.privileged is None and g.next_dealer == 2


def test_elder_chains_are_public_only() -> None:
    """RULES 3.4: played face up sup9, sup8 -> sup7 is an Elder; gon1 becomes
    one only when gon9..gon2 were all played face up; sup1, sin1, wan always."""
    assert "sup7" in elders({"sup9", "sup8"}) and "sup8" not in elders({"sup9", "sup8"})
    assert "sup7" not in elders({"sup9"})
    assert elders(set()) == {"sup9", "gon9", "zok9", "sin9", "sup1", "sin1", "wan"}
    gon = {f"gon{n}" for n in range(9, 1, -1)}
    assert "gon1" in elders(gon) and "gon1" not in elders(gon - {"gon5"})
    assert "zok1" not in elders(set())


def test_wan_in_sets_and_singles() -> None:
    """RULES 3.5: wan counts as a 1 in sets (a set of 1s may have 5 cards) but
    has no suit: never in a run; never beats and is never beaten as a single."""
    s = classify(["wan", "gon1", "zok1"])
    assert s is not None and s.kind == "set"
    eights = classify(["sup8", "gon8", "zok8"])
    nines = classify(["sup9", "gon9", "zok9"])
    assert eights is not None and nines is not None
    assert refusal_to_beat(s, eights, True) is None
    assert refusal_to_beat(nines, s, True) is None and refusal_to_beat(eights, s, True)
    five = classify(["wan", "sup1", "gon1", "zok1", "sin1"])
    assert five is not None and five.kind == "set" and five.size == 5
    assert classify(["wan", "sup2", "sup3"]) is None
    wan, sup2, gon9 = (classify([c]) for c in ("wan", "sup2", "gon9"))
    assert wan is not None and sup2 is not None and gon9 is not None
    assert refusal_to_beat(wan, sup2, True) == "elder_one_single"
    assert refusal_to_beat(gon9, wan, True) == "led_elder_one"
    sup1 = classify(["sup1"])
    assert sup1 is not None and refusal_to_beat(sup1, sup2, True) == "elder_one_single"


def test_beating_only_same_kind_and_size_over_the_best_so_far() -> None:
    """RULES 3.6: a follower beats the best pattern so far (not the lead)."""
    g = make(0)
    ok(g, 10, 0, {"type": "call"})
    g.hands[0] = ["gon5", "zok2", "zok3"]
    g.hands[3] = ["gon7", "zok4", "sup4"]
    g.hands[1] = ["gon6", "gon8", "zok5"]
    ok(g, 20, 0, {"type": "play", "cards": ["gon5"]})
    ok(g, 30, 3, {"type": "play", "cards": ["gon7"]})
    assert g.apply(40, 1, {"type": "play", "cards": ["gon6"]}).code == "cannot_beat"
    assert g.apply(40, 1, {"type": "discard", "cards": ["gon6", "zok5"]}).code == "wrong_size"
    ok(g, 50, 1, {"type": "play", "cards": ["gon8"]})
    assert g.tricks[1] == 1 and g.leader == 1 and g.turn == 1


def test_claim_before_the_first_lead_in_turn_order_from_the_dealer() -> None:
    """RULES 3.7: before the first lead the claim is checked from the dealer
    in turn order; a non-dealer holding 6 Elders wins at once."""
    deck = list(CARDS)
    g = make(0, decks=[deck])
    g.hands[3] = ["sup9", "gon9", "zok9", "sin9", "sup1", "sin1", "gon2", "gon3", "gon4",
                  "zok2", "zok3", "zok4"]
    ok(g, 10, 0, {"type": "call"})
    assert g.last_hand is not None and g.last_hand["winner"] == 3
    assert g.last_hand["tricks"] == 6 and g.last_hand["how"] == "claim"


def test_privileged_pays_alone_for_winner_and_dreamer() -> None:
    """RULES 3.8: the privileged non-winner pays every share the other
    non-winner would have paid, the dreamer's included; always zero-sum."""
    # active 0, 3, 1; dreamer 2; privileged 3; winner 0 with 8, dreamer 7.
    deltas = settle(0, 8, 2, 7, [0, 3, 1], 3)
    assert deltas == [8, 0, 4, -12] and sum(deltas) == 0
    deltas = settle(3, 7, 2, 6, [0, 3, 1], 3)  # the privileged player wins
    assert deltas == [-3, -3, 2, 4] and sum(deltas) == 0
    deltas = settle(0, 6, 2, 5, [0, 3, 1], None)
    assert deltas == [2, -1, 0, -1]


def _random_game(seed: int) -> Hakka:
    rng = random.Random(seed)
    g = Hakka(Setup("hakka", {"seats": 4}, [SeatSpec("bot", "normal")] * 4, seed))
    t = 0
    before = list(g.scores)
    while not g.finished:
        t += 500
        actors = g.actors()
        if not actors:
            g.apply(t)
            continue
        s = actors[0]
        acts = [a for a in g.legal_actions(s) if a["type"] != "resume"]
        res = g.apply(t, s, rng.choice(acts))
        assert res.ok
        for ev in res.events:
            if ev.type == "hand_scored":
                d = ev.data["deltas"]
                assert sum(d) == 0 and d[ev.data["dreamer"]] >= 0
                assert [a + b for a, b in zip(before, d, strict=True)] == ev.data["scores"]
                before = list(ev.data["scores"])
                assert ev.data["tricks"] <= 12
        # conservation: 37 cards between hands, played, discards, table
        held = sum(len(h) for h in g.hands) + len(g.played) + sum(len(x) for x in g.discards)
        assert held == 37 or g.phase != "playing"
    return g


@pytest.mark.parametrize("seed", range(12))
def test_whole_games_are_zero_sum_and_conserve_cards(seed: int) -> None:
    """RULES 3.8: scores are zero-sum running totals; a game is 4 counted
    hands; the highest total wins (ties all win)."""
    g = _random_game(seed)
    assert sum(g.scores) == 0 and g.counters["hands"] == 4
    top = max(g.scores)
    assert g.winners == [s for s in range(4) if g.scores[s] == top]


def test_pause_counts_humans_only_and_substitution_at_exactly_60_s() -> None:
    """RULES 4: the dreamer's human seat counts as a human; bot seats do not;
    back at 59,999 ms keeps the seat, at 60,000 ms a bot has it."""
    g = make(0, kinds=["human", "bot", "human", "bot"])  # dreamer: seat 2 (human)
    ok(g, 100, 0, {"type": "disconnect"})
    assert not g.presence.paused  # seat 2 (the dreamer) is still there
    ok(g, 200, 2, {"type": "disconnect"})
    assert g.presence.paused and g.next_deadline() == 200 + ABANDON_MS  # RULES 4 (abandonment)
    ok(g, 500_000, 2, {"type": "reconnect"})  # 100 ms of absence for seat 0 so far
    assert not g.presence.paused
    g.apply(500_000 + 59_899)
    assert not g.presence.substituted[0]
    g.apply(500_000 + 59_900)
    assert g.presence.substituted[0] and g.bot_seats()[0]
    assert g.apply(500_000 + 60_000, 0, {"type": "reconnect"}).code == "seat_is_bot"


_SUIT_RANK = {"sup": 4, "gon": 3, "zok": 2, "sin": 1}
_SET_RANK = [2, 3, 4, 5, 6, 7, 8, 1, 9]


def _num(c: str) -> int:
    return 1 if c == "wan" else int(c[3:])


def _kind(cards: list[str]) -> str | None:
    """RULES 3.5, literally."""
    if len(cards) == 1:
        return "single"
    if len(cards) < 3:
        return None
    if len({_num(c) for c in cards}) == 1:
        return "set"
    suits = {c[:3] for c in cards}
    nums = sorted(_num(c) for c in cards)
    if "wan" not in cards and len(suits) == 1 and nums == list(range(nums[0], nums[0] + len(nums))):
        return "run"
    return None


def _beats(p: list[str], best: list[str], led: bool) -> bool:
    kp, kb = _kind(p), _kind(best)
    if kp != kb or len(p) != len(best):
        return False
    if kp == "single":
        a, b = p[0], best[0]
        if led and b in ("sup1", "sin1", "wan"):
            return False
        if "wan" in (a, b) or a in ("sup1", "sin1"):
            return False
        return a[:3] == b[:3] and _num(a) > _num(b)
    if kp == "run":
        return (_SUIT_RANK[p[0][:3]], max(map(_num, p))) > (
            _SUIT_RANK[best[0][:3]], max(map(_num, best)))
    return _SET_RANK.index(_num(p[0])) > _SET_RANK.index(_num(best[0]))


@pytest.mark.parametrize("seed", range(4))
def test_patterns_and_beating_match_an_independent_oracle(seed: int) -> None:
    """RULES 3.5: classification and "beats" for random card groups (runs and
    sets drawn on purpose) agree with a literal reading of the rules."""
    rng = random.Random(seed)

    def group() -> list[str]:
        k = rng.choice([1, 1, 3, 3, 4, 5])
        how = rng.random()
        if how < 0.35:
            suit, top = rng.choice(["sup", "gon", "zok", "sin"]), rng.randint(k, 9)
            return [f"{suit}{n}" for n in range(top - k + 1, top + 1)]
        if how < 0.7:
            n = rng.randint(1, 9)
            same = [c for c in CARDS if _num(c) == n]
            return rng.sample(same, min(k, len(same)))
        return rng.sample(list(CARDS), k)

    for _ in range(3000):
        a, b = group(), group()
        if set(a) & set(b):
            continue
        pa, pb = classify(a), classify(b)
        assert (pa.kind if pa else None) == _kind(a), a
        if pa is None or pb is None:
            continue
        for led in (True, False):
            assert (refusal_to_beat(pa, pb, led) is None) == _beats(a, b, led), (a, b, led)


def _my_elders(face_up: set[str]) -> set[str]:
    """RULES 3.4: sup1, sin1, wan; any other card once every higher card of
    its suit was played face up."""
    out = {"sup1", "sin1", "wan"}
    for suit in ("sup", "gon", "zok", "sin"):
        for n in range(9, 0, -1):
            if all(f"{suit}{m}" in face_up for m in range(n + 1, 10)):
                out.add(f"{suit}{n}")
    return out - face_up


@pytest.mark.parametrize("seed", range(20, 30))
def test_claims_happen_exactly_when_someone_reaches_6(seed: int) -> None:
    """RULES 3.7: after every trick (and before the first lead) the first
    active seat in turn order from the trick's winner (the dealer) with
    tricks + Elders in hand >= 6 wins, at most 12; nobody else earlier."""
    rng = random.Random(seed)
    g = Hakka(Setup("hakka", {"seats": 4}, [SeatSpec("bot", "normal")] * 4, seed))
    t = 0
    while not g.finished:
        t += 500
        actors = g.actors()
        if not actors:
            g.apply(t)
            continue
        s = actors[0]
        pre = g.clone()
        assert isinstance(pre, Hakka)
        res = g.apply(t, s, rng.choice([a for a in g.legal_actions(s) if a["type"] != "resume"]))
        types = [e.type for e in res.events]
        if "trick_won" not in types and "calling_ended" not in types:
            continue
        won = next((e for e in res.events if e.type == "hand_won"), None)
        if won is not None and won.data["how"] == "five_tigers":
            continue
        face_up = set(g.played) if won is None and "dealt" not in types else None
        if face_up is None:  # the hand ended: rebuild from the trick's plays
            face_up = set(pre.played) | {
                c for e in res.events if e.type == "played" for c in e.data["cards"]}
        hands = [list(h) for h in pre.hands]
        tricks = list(pre.tricks)
        for e in res.events:
            if e.type in ("played", "discarded"):
                for c in e.data.get("cards", []) or e.private[e.data["seat"]]["cards"]:
                    hands[e.data["seat"]].remove(c)
            if e.type == "trick_won":
                tricks[e.data["seat"]] = e.data["total"]
        el = _my_elders(face_up)
        first = next((e.data["seat"] for e in res.events if e.type == "trick_won"), pre.dealer)
        order = [first]
        while len(order) < 3:
            nxt = (order[-1] - 1) % 4
            order.append((nxt - 1) % 4 if nxt == pre.dreamer else nxt)
        counts = {s2: tricks[s2] + sum(c in el for c in hands[s2]) for s2 in order}
        qualified = [s2 for s2 in order if counts[s2] >= 6]
        if won is None:
            assert not qualified, (counts, order)
        else:
            assert won.data["seat"] == qualified[0]
            assert won.data["tricks"] == min(12, counts[qualified[0]])
