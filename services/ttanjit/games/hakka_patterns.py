"""Hakka Cards: the cards, Elder cards and patterns (RULES.md 3.1, 3.4, 3.5).

Cards are strings: ``sup9`` … ``sin1`` (suit then number) and ``wan``.
Suits rank 섭 ``sup`` > 곤 ``gon`` > 족 ``zok`` > 신 ``sin``; ``wan`` (완신)
counts as a 1 and has no suit.

**Lowest** (used by the timeouts of RULES.md 3.9 and by the representative
discards of :func:`discard_options`): cards are ordered by the key
``(is Elder, number, suit)`` with suits ``sin`` < ``zok`` < ``gon`` < ``sup``
< ``wan`` — every non-Elder card is lower than every Elder; among them the
smaller number is lower, then the lower suit. E.g. with nothing played,
``zok1`` < ``gon1`` < ``sin2`` < ``zok2`` < ``gon2`` < ``sup2`` < ``sin3`` < …
< ``sup8`` < ``sin1`` < ``sup1`` < ``wan`` < ``sin9`` < … < ``sup9``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Any

SUITS = ("sup", "gon", "zok", "sin")  # highest first
SUIT_RANK = {"sup": 3, "gon": 2, "zok": 1, "sin": 0}
WAN = "wan"
CARDS: tuple[str, ...] = tuple(f"{s}{n}" for s in SUITS for n in range(9, 0, -1)) + (WAN,)
CARD_SET = frozenset(CARDS)
ORDER = {c: i for i, c in enumerate(CARDS)}  # display order: sup9 … sin1, wan
SUIT_OF: dict[str, str | None] = {c: (None if c == WAN else c[:3]) for c in CARDS}
NUMBER_OF: dict[str, int] = {c: (1 if c == WAN else int(c[3:])) for c in CARDS}
ALWAYS_ELDER = frozenset({"sup1", "sin1", WAN})
FIVE_TIGERS = frozenset({"sup1", "gon1", "zok1", "sin1", WAN})
_LOW_SUIT = {"sin": 0, "zok": 1, "gon": 2, "sup": 3, None: 4}

# Sets compare 2 < 3 < … < 8 < 1 < 9 (RULES.md 3.5 Decision).
SET_ORDER = {2: 0, 3: 1, 4: 2, 5: 3, 6: 4, 7: 5, 8: 6, 1: 7, 9: 8}

SINGLE, RUN, SET = "single", "run", "set"


def is_card(obj: object) -> bool:
    return isinstance(obj, str) and obj in CARD_SET


def sort_cards(cards: Iterable[str]) -> list[str]:
    return sorted(cards, key=ORDER.__getitem__)


# -- Elder cards (RULES.md 3.4) ------------------------------------------------
def elders(played_up: frozenset[str] | set[str]) -> frozenset[str]:
    """Every card not yet played face up that is an Elder now.

    In each suit only the highest card not yet played face up qualifies (all
    higher ones were played face up), plus ``sup1``, ``sin1`` and ``wan``.
    Public information only: face-down discards and the dreamer's card do not
    count as played."""
    out = set(ALWAYS_ELDER)
    for s in SUITS:
        for n in range(9, 0, -1):
            c = f"{s}{n}"
            if c not in played_up:
                out.add(c)
                break
    return frozenset(out - played_up)


def low_key(card: str, elder_set: frozenset[str]) -> tuple[int, int, int]:
    """Sort key for "lowest" (module docstring)."""
    return (card in elder_set, NUMBER_OF[card], _LOW_SUIT[SUIT_OF[card]])


def lowest(cards: Iterable[str], elder_set: frozenset[str], n: int) -> list[str]:
    return sorted(cards, key=lambda c: low_key(c, elder_set))[:n]


# -- patterns (RULES.md 3.5) ---------------------------------------------------
@dataclass(frozen=True, slots=True)
class Pattern:
    kind: str  # single | run | set
    cards: tuple[str, ...]  # display order
    strength: tuple[int, int]  # compared only between the same kind and size

    @property
    def size(self) -> int:
        return len(self.cards)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "cards": list(self.cards)}


def _single(card: str) -> Pattern:
    suit = SUIT_OF[card]
    return Pattern(SINGLE, (card,), (-1 if suit is None else SUIT_RANK[suit], NUMBER_OF[card]))


def classify(cards: Iterable[str]) -> Pattern | None:
    """The pattern these distinct cards make, or None."""
    cs = tuple(sort_cards(cards))
    if len(cs) == 1:
        return _single(cs[0])
    if len(cs) < 3:
        return None
    numbers = [NUMBER_OF[c] for c in cs]
    if len(set(numbers)) == 1:
        return Pattern(SET, cs, (SET_ORDER[numbers[0]], 0))
    suits = {SUIT_OF[c] for c in cs}
    if len(suits) != 1 or None in suits:
        return None
    # display order is descending number within a suit
    if all(numbers[i] - 1 == numbers[i + 1] for i in range(len(numbers) - 1)):
        suit = SUIT_OF[cs[0]]
        assert suit is not None
        return Pattern(RUN, cs, (SUIT_RANK[suit], numbers[0]))
    return None


def refusal_to_beat(p: Pattern, best: Pattern, best_led: bool) -> str | None:
    """Why ``p`` does not beat ``best`` (a refusal code), or None if it does.

    ``best_led``: ``best`` is the trick's lead (a led ``sup1``/``sin1``/``wan``
    cannot be beaten)."""
    if p.kind != best.kind:
        return "wrong_kind"
    if p.size != best.size:
        return "wrong_size"
    if p.kind == SINGLE:
        # each said as itself: a starred 섭 1 on 섭 8 was refused "not higher
        # than the table's best", the star read as strength (trial finding)
        if best_led and best.cards[0] in ALWAYS_ELDER:
            return "led_elder_one"
        if p.cards[0] in ALWAYS_ELDER:
            return "elder_one_single"  # never beat another single (they are 1s anyway)
        if SUIT_OF[p.cards[0]] is None or SUIT_OF[p.cards[0]] != SUIT_OF[best.cards[0]]:
            return "other_suit"
    if p.strength <= best.strength:
        return "cannot_beat"
    return None


# -- enumeration (legal actions) ----------------------------------------------
def _by_suit(hand: Iterable[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {s: [] for s in SUITS}
    for c in hand:
        s = SUIT_OF[c]
        if s is not None:
            out[s].append(NUMBER_OF[c])
    for nums in out.values():
        nums.sort(reverse=True)
    return out


def runs(hand: Iterable[str], length: int | None = None) -> Iterator[Pattern]:
    """Every run in the hand (of ``length`` only, if given)."""
    for s, nums in _by_suit(hand).items():
        held = set(nums)
        for top in nums:
            n = 1
            while top - n >= 1 and top - n in held:
                n += 1
                if n >= 3 and (length is None or n == length):
                    cs = tuple(f"{s}{top - k}" for k in range(n))
                    yield Pattern(RUN, cs, (SUIT_RANK[s], top))
                if length is not None and n >= length:
                    break


def sets(hand: Iterable[str], size: int | None = None) -> Iterator[Pattern]:
    """Every set in the hand (of ``size`` only, if given)."""
    groups: dict[int, list[str]] = {}
    for c in sort_cards(hand):
        groups.setdefault(NUMBER_OF[c], []).append(c)
    for number in sorted(groups, key=SET_ORDER.__getitem__):
        g = groups[number]
        sizes = range(3, len(g) + 1) if size is None else (size,)
        for k in sizes:
            if k <= len(g):
                for combo in combinations(g, k):
                    yield Pattern(SET, combo, (SET_ORDER[number], 0))


def lead_singles(hand: Iterable[str], elder_set: frozenset[str], privileged: bool) -> list[str]:
    """Singles the leader may lead (RULES.md 3.6 Decision): a non-Elder of the
    highest suit among the leader's non-Elder cards; any Elder when holding no
    non-Elder; the privileged player may also lead any Elder."""
    hand = list(hand)
    plain = [c for c in hand if c not in elder_set]
    if not plain:
        return sort_cards(hand)
    top = max(SUIT_RANK[SUIT_OF[c] or "sin"] for c in plain)
    out = [c for c in plain if SUIT_RANK[SUIT_OF[c] or "sin"] == top]
    if privileged:
        out += [c for c in hand if c in elder_set]
    return sort_cards(out)


def beating(hand: Iterable[str], best: Pattern, best_led: bool) -> Iterator[Pattern]:
    """Every pattern in the hand that beats ``best``."""
    hand = list(hand)
    if best.kind == SINGLE:
        cands: Iterable[Pattern] = (_single(c) for c in hand)
    elif best.kind == RUN:
        cands = runs(hand, best.size)
    else:
        cands = sets(hand, best.size)
    for p in cands:
        if refusal_to_beat(p, best, best_led) is None:
            yield p


def discard_options(hand: list[str], n: int, elder_set: frozenset[str]) -> list[list[str]]:
    """The representative discards offered in ``legal_actions``: the lowest
    ``n - 1`` cards plus any one other card (so the lowest ``n`` cards first;
    for ``n == 1`` every single card). Any ``n`` cards are accepted."""
    ordered = sorted(hand, key=lambda c: low_key(c, elder_set))
    base = ordered[: n - 1]
    return [sort_cards([*base, c]) for c in ordered[n - 1:]]


def play_actions(hand: list[str], el: frozenset[str], privileged: bool,
                 best: Pattern | None, best_led: bool, lead_size: int) -> list[dict[str, Any]]:
    """The playing seat's legal actions (the engine's and the bots' one
    generator): leading (``best`` None), every allowed single (3.6), run and
    set in hand; following, every pattern that beats ``best`` (``best_led``:
    it is the lead) and the representative discards of ``lead_size`` cards."""
    if best is None:
        out: list[dict[str, Any]] = [{"type": "play", "cards": [c]}
                                     for c in lead_singles(hand, el, privileged)]
        out += [{"type": "play", "cards": list(p.cards)} for p in runs(hand)]
        out += [{"type": "play", "cards": list(p.cards)} for p in sets(hand)]
        return out
    out = [{"type": "play", "cards": list(p.cards)} for p in beating(hand, best, best_led)]
    out += [{"type": "discard", "cards": cs} for cs in discard_options(hand, lead_size, el)]
    return out
