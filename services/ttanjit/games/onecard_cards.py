"""One Card's cards and matching rules (RULES.md 1.1–1.6), as pure functions.

Cards are their interned code strings (``"AS"``, ``"10H"``, ``"BJ"``); every
property is a precomputed table lookup. The functions here know nothing of
seats or time, so a bot can compute its legal plays from a seat's view:
``legal_plays(view["hand"], view["top"], view["suit"], view["pending"],
view["twos_only"])``.
"""

from __future__ import annotations

from itertools import combinations, permutations
from typing import Any

SUITS = "SHDC"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JOKERS = ("BJ", "CJ")
JOKER = "X"  # the rank both jokers share in these tables
DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS) + JOKERS

RANK: dict[str, str] = {c: c[:-1] for c in DECK[:52]} | {j: JOKER for j in JOKERS}
SUIT: dict[str, str] = {c: c[-1] for c in DECK[:52]} | {j: "" for j in JOKERS}
# RULES 1.5: attack values (0 = not an attack card).
STRENGTH: dict[str, int] = {c: 0 for c in DECK}
STRENGTH.update({"2" + s: 2 for s in SUITS})
STRENGTH.update({"A" + s: 3 for s in SUITS})
STRENGTH.update({"AS": 5, "BJ": 5, "CJ": 7})

START_RANKS = frozenset({"4", "5", "6", "8", "9", "10"})  # RULES 1.1 start card
SUIT_NAMING = frozenset({"7", JOKER})  # RULES 1.3: the player names the next suit
NOT_LAST = frozenset({"2", "A", JOKER})  # RULES 1.6: may never empty a hand
MAX_CARDS = 4  # RULES 1.4


# Not under attack (1.2): the cards that may go first on a top of rank
# ``top_rank`` with current suit ``suit``: that suit, that rank, or a joker.
FITS: dict[str, dict[str, frozenset[str]]] = {
    s: {tr: frozenset(c for c in DECK if SUIT[c] == s or RANK[c] == tr or RANK[c] == JOKER)
        for tr in (*RANKS, JOKER)}
    for s in SUITS
}
# The other cards of each card's rank (the other joker for a joker).
MATES: dict[str, frozenset[str]] = {
    c: frozenset(x for x in DECK if RANK[x] == RANK[c] and x != c) for c in DECK
}


def is_joker(card: str) -> bool:
    """``BJ`` or ``CJ``."""
    return RANK[card] == JOKER


def is_attack(card: str) -> bool:
    """A 2, an A or a joker (RULES 1.5)."""
    return STRENGTH[card] > 0


def refusal(card: str, top: str, suit: str, pending: int, twos_only: bool) -> str | None:
    """Why ``card`` may not be played first on ``top`` (None: it may).

    Not under attack (1.2): a joker goes on anything; on a joker only the
    current suit matches; otherwise the current suit or the top's rank.
    Under attack (1.5): attack cards at least as strong as the top that are a
    joker, of the current suit or of the top's rank; or a 3 of the current
    suit when the chain is made of 2s only."""
    rank = RANK[card]
    if pending:
        strength = STRENGTH[card]
        if strength == 0:
            if rank != "3":
                return "under_attack"
            if not twos_only:
                return "cannot_defend"
            return None if SUIT[card] == suit else mismatch(top, suit)
        if strength < STRENGTH[top]:
            return "weaker_attack"
        if rank == JOKER or SUIT[card] == suit or rank == RANK[top]:
            return None
        return mismatch(top, suit)
    if rank == JOKER:
        return None
    if SUIT[card] == suit or rank == RANK[top]:  # a joker top has no rank to match
        return None
    return mismatch(top, suit)


def mismatch(top: str, suit: str) -> str:
    """The refusal of a card of neither the current suit nor the top's rank:
    ``does_not_match``, or, when a 7 or a joker named the suit (1.2), that
    one (the top's own suit, plain on screen, said it did not match: trial
    finding)."""
    if is_joker(top):
        return "joker_named_suit"
    return "named_suit" if SUIT[top] != suit else "does_not_match"


def _fits(card: str, top: str, suit: str, pending: int, twos_only: bool) -> bool:
    return refusal(card, top, suit, pending, twos_only) is None


def _rising(order: tuple[str, ...]) -> bool:
    """Each following card is legal on the one before (1.4). All cards share a
    rank (or are the two jokers), so only the attack strength can fail."""
    for a, b in zip(order, order[1:]):  # noqa: B905 - deliberately one shorter
        if STRENGTH[b] < STRENGTH[a]:
            return False
    return True


def find_order(
    cards: tuple[str, ...], top: str, suit: str, pending: int, twos_only: bool
) -> tuple[str, ...] | str:
    """The first legal order of ``cards`` in ``itertools.permutations`` order
    over the selection as given (RULES 1.4), or the refusal code of the order
    as given when no order is legal."""
    if len(cards) == 1:
        why = refusal(cards[0], top, suit, pending, twos_only)
        return cards if why is None else why
    for order in permutations(cards):
        if _fits(order[0], top, suit, pending, twos_only) and _rising(order):
            return order
    why = refusal(cards[0], top, suit, pending, twos_only)
    return why or "weaker_attack"


def check_group(cards: tuple[str, ...]) -> str | None:
    """Shape of a multi-card play (1.4): refusal code or None."""
    if len(cards) > MAX_CARDS:
        return "too_many_cards"
    rank = RANK[cards[0]]
    for c in cards:
        if RANK[c] != rank:
            return "mixed_ranks"
    return None


def play_action(order: tuple[str, ...], emptying: bool) -> list[dict[str, Any]]:
    """The action(s) for one legal card order: one per named suit for 7s and
    jokers (none needed when the play empties the hand, 1.6)."""
    cards = list(order)
    if RANK[order[0]] in SUIT_NAMING and not emptying:
        return [{"type": "play", "cards": cards, "suit": s} for s in SUITS]
    return [{"type": "play", "cards": cards}]


# Precomputed actions (the hot path builds no dicts): one card not emptying
# the hand, and one card that does (nothing for 2, A, joker: 1.6).
_SINGLE = {c: play_action((c,), False) for c in DECK}
_LAST = {c: [] if RANK[c] in NOT_LAST else play_action((c,), True) for c in DECK}
# Plays of a same-rank group, by (group in hand order, which of its cards may
# go first, hand size when the group could empty it): at most 60 orderings x
# 16 fit patterns x 2 per rank, and cleared past a bound all the same.
_GROUPS: dict[tuple[tuple[str, ...], tuple[bool, ...], int], list[dict[str, Any]]] = {}
_GROUPS_MAX = 20_000


def _group_plays(group: tuple[str, ...], fit: tuple[bool, ...], size: int) -> list[dict[str, Any]]:
    """Every legal subset of a same-rank group (RULES 1.4), given which cards
    may go first (``fit``): a subset's first legal order is the first
    permutation whose first card fits and whose attack strengths never drop
    (the permutations of ``find_order``, with the fit test precomputed)."""
    rank = RANK[group[0]]
    out: list[dict[str, Any]] = []
    for k in range(1, len(group) + 1):
        if k == size and rank in NOT_LAST:
            continue
        for idx in combinations(range(len(group)), k):
            for perm in permutations(idx):
                if fit[perm[0]] and _rising(tuple(group[i] for i in perm)):
                    out.extend(play_action(tuple(group[i] for i in perm), k == size))
                    break
    return out


def legal_plays(
    hand: list[str], top: str, suit: str, pending: int, twos_only: bool
) -> list[dict[str, Any]]:
    """Every distinct legal play from ``hand`` (each legal card set once, in
    its first legal order; 7s and jokers once per suit).

    Hot path of every random playout and bot search: only ranks with a card
    that fits the top are looked at, and the action dicts are precomputed,
    shared objects — treat them as read-only (copy before changing one)."""
    size = len(hand)
    out: list[dict[str, Any]] = []
    if pending:
        fitting = [c for c in hand if refusal(c, top, suit, pending, twos_only) is None]
    else:
        fitting = list(filter(FITS[suit][RANK[top]].__contains__, hand))
    seen: set[str] = set()
    for c in fitting:
        if MATES[c].isdisjoint(hand):  # the only card of its rank
            out.extend(_SINGLE[c] if size > 1 else _LAST[c])
            continue
        r = RANK[c]
        if r in seen:
            continue
        seen.add(r)
        group = tuple([x for x in hand if RANK[x] == r])
        key = (group, tuple([x in fitting for x in group]), size if size <= len(group) else 0)
        plays = _GROUPS.get(key)
        if plays is None:
            if len(_GROUPS) >= _GROUPS_MAX:
                _GROUPS.clear()
            plays = _GROUPS[key] = _group_plays(*key)
        out.extend(plays)
    return out
