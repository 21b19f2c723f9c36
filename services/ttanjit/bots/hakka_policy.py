"""The Hakka bots' reading of a view and their normal/easy
policies (:mod:`ttanjit.bots.hakka` picks a level; the hard search,
:mod:`ttanjit.bots.hakka_search`, plays on with these)."""

from __future__ import annotations

import random
from typing import Any

from ttanjit.games.base import JSON
from ttanjit.games.hakka_patterns import (
    NUMBER_OF,
    classify,
    low_key,
    play_actions,
    runs,
    sets,
)

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
    tb = table_best(view)
    best, led = tb if tb is not None else (None, False)
    lead_size = len(view["table"][0]["cards"]) if view["table"] else 0  # the lead is face up
    return play_actions(view["hand"], elder_set(view), seat == view["privileged"],
                        best, led, lead_size)


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
