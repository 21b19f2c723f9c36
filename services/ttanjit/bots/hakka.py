"""Hakka Cards bots (RULES.md 3 and 4), from the seat's view only.

Legal actions are rebuilt from the view with the engine's own pattern
functions (:mod:`ttanjit.games.hakka_patterns`): ``lead_singles``, ``runs``,
``sets``, ``beating`` and ``discard_options`` on the hand, the public Elder
list and the table.

- normal: calls when the hand is strong (Elders and patterns count; a
  non-dealer, who would pay alone as the privileged player, needs more);
  leads its biggest pattern, else its highest allowed single; follows by
  beating when that wins or claims the hand (cheapest sure win when last to
  act), keeps Elders unless they win the hand, otherwise discards the lowest
  cards that belong to no pattern.
- easy: calls on a hunch, and half of its plays are any legal play.
- hard: determinised Monte Carlo (:mod:`ttanjit.bots.hakka_search`): the unseen
  cards are dealt into the other hands and face-down discards by their public
  counts, each candidate is played out to the end of the hand in a real engine
  with normal-policy rollouts, and the mean score change decides.
"""

from __future__ import annotations

import random
from typing import Any

from ttanjit.bots import Budget
from ttanjit.games.hakka_patterns import (
    NUMBER_OF,
    beating,
    classify,
    discard_options,
    lead_singles,
    low_key,
    runs,
    sets,
)

JSON = dict[str, Any]
CLAIM_AT = 6


# -- reading the view -------------------------------------------------------------
def my_turn(seat: int, view: JSON) -> bool:
    return (not view.get("finished") and view.get("turn") == seat and not view.get("paused")
            and view.get("phase") in ("calling", "playing") and seat != view.get("dreamer"))


def elder_set(view: JSON) -> frozenset[str]:
    return frozenset(view["elders"])


def table_best(view: JSON) -> tuple[Any, bool] | None:
    """(best pattern on the table, was it the lead) or None when leading."""
    table = view["table"]
    if not table:
        return None
    best = 0
    for i, x in enumerate(table):
        if x["kind"] != "discard" and x["seat"] == view["best"]:
            best = i
    p = classify(table[best]["cards"])
    return p, best == 0


def legal(seat: int, view: JSON) -> list[JSON]:
    """The seat's legal game actions from its view (the engine's set)."""
    if not my_turn(seat, view):
        return []
    if view["phase"] == "calling":
        return [{"type": "call"}, {"type": "pass"}]
    hand = view["hand"]
    el = elder_set(view)
    tb = table_best(view)
    if tb is None:
        out: list[JSON] = [{"type": "play", "cards": [c]}
                           for c in lead_singles(hand, el, seat == view["privileged"])]
        out += [{"type": "play", "cards": list(p.cards)} for p in runs(hand)]
        out += [{"type": "play", "cards": list(p.cards)} for p in sets(hand)]
        return out
    best, led = tb
    out = [{"type": "play", "cards": list(p.cards)} for p in beating(hand, best, led)]
    n = len(view["table"][0]["cards"])  # the lead is always face up
    out += [{"type": "discard", "cards": cs} for cs in discard_options(hand, n, el)]
    return out


# -- the normal heuristic -------------------------------------------------------------
def pattern_cards(hand: list[str]) -> set[str]:
    """Cards of the hand that are part of some run or set."""
    out: set[str] = set()
    for p in runs(hand):
        out.update(p.cards)
    for p in sets(hand):
        out.update(p.cards)
    return out


def strength(hand: list[str], el: frozenset[str]) -> float:
    """Rough tricks this hand may make: Elders, the biggest patterns, high cards."""
    s = float(sum(1 for c in hand if c in el))
    best_multi = max((len(p.cards) for p in [*runs(hand), *sets(hand)]), default=0)
    s += 0.8 * best_multi
    s += 0.25 * sum(1 for c in hand if c not in el and NUMBER_OF[c] >= 7)
    return s


def call_choice(seat: int, view: JSON, threshold_shift: float = 0.0) -> JSON:
    hand = view["hand"]
    s = strength(hand, elder_set(view))
    need = (3.0 if seat == view["dealer"] else 4.5) + threshold_shift
    return {"type": "call"} if s >= need else {"type": "pass"}


def _elders_in(cards: list[str], el: frozenset[str]) -> int:
    return sum(1 for c in cards if c in el)


def normal_play(seat: int, view: JSON, acts: list[JSON]) -> JSON:
    hand = view["hand"]
    el = elder_set(view)
    tricks: int = view["tricks"][seat]
    held = _elders_in(hand, el)
    plays = [a for a in acts if a["type"] == "play"]
    discards = [a for a in acts if a["type"] == "discard"]

    def claims(cards: list[str]) -> bool:
        return tricks + len(cards) + held - _elders_in(cards, el) >= CLAIM_AT

    table = view["table"]
    if not table:  # leading
        multi = [a for a in plays if len(a["cards"]) >= 3]
        if multi:
            return max(multi, key=lambda a: (len(a["cards"]) - 1.2 * _elders_in(a["cards"], el),
                                             classify(a["cards"]).strength))  # type: ignore[union-attr]
        return max(plays, key=lambda a: (a["cards"][0] not in el, NUMBER_OF[a["cards"][0]]))
    last = len(table) == 2
    winning = [a for a in plays if claims(a["cards"])]
    if winning:
        return winning[0]
    plain = [a for a in plays if _elders_in(a["cards"], el) == 0]
    if plain:
        if last:  # any beat wins: the cheapest
            return min(plain, key=lambda a: classify(a["cards"]).strength)  # type: ignore[union-attr]
        strongest = max(plain, key=lambda a: classify(a["cards"]).strength)  # type: ignore[union-attr]
        if len(strongest["cards"]) >= 3 or NUMBER_OF[strongest["cards"][0]] >= 6:
            return strongest
    return best_discard(hand, discards, el)


def best_discard(hand: list[str], discards: list[JSON], el: frozenset[str]) -> JSON:
    keep = pattern_cards(hand)

    def cost(a: JSON) -> tuple[float, ...]:
        cs = a["cards"]
        return (sum(1 for c in cs if c in el), sum(1 for c in cs if c in keep),
                sum(low_key(c, el)[1] for c in cs))

    return min(discards, key=cost)


def easy_play(seat: int, view: JSON, acts: list[JSON], rng: random.Random) -> JSON:
    if rng.random() < 0.5:
        return rng.choice(acts)
    return normal_play(seat, view, acts)


def decide(level: str, seat: int, view: JSON, rng: random.Random, budget: Budget) -> JSON | None:
    acts = legal(seat, view)
    if not acts:
        return None
    if view["phase"] == "calling":
        if level == "easy":
            return call_choice(seat, view, rng.uniform(-2.0, 2.0))
        if level == "normal":
            return call_choice(seat, view)
    elif len(acts) == 1:
        return acts[0]
    elif level == "easy":
        return easy_play(seat, view, acts, rng)
    elif level == "normal":
        return normal_play(seat, view, acts)
    from ttanjit.bots.hakka_search import search

    return search(seat, view, acts, rng, budget)

