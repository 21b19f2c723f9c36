"""One Card set-up (RULES.md 1.1, DESIGN.md 3.1): room options, the deck
from the record (or the seeded shuffle) and the deal."""

from __future__ import annotations

import random

from ttanjit.games.base import Setup
from ttanjit.games.onecard_cards import DECK, RANK, START_RANKS

HAND_SIZE = 7
TURN_MS = (30_000, 45_000)
OPTIONS = frozenset({"seats", "turn_ms", "absence_ms", "abandon_ms"})


def check_options(setup: Setup) -> int:
    """Validate the room options; returns ``turn_ms``."""
    opts = setup.options
    unknown = set(opts) - OPTIONS
    if unknown:
        raise ValueError(f"unknown One Card option(s): {', '.join(sorted(unknown))}")
    n = len(setup.seats)
    if opts.get("seats", n) != n or not 2 <= n <= 6:
        raise ValueError("One Card has 2-6 seats (options.seats = len(seats))")
    turn_ms = opts.get("turn_ms", TURN_MS[0])
    if turn_ms not in TURN_MS or isinstance(turn_ms, bool):
        raise ValueError("options.turn_ms must be 30000 or 45000")
    if sum(s.kind != "empty" for s in setup.seats) < 2:
        raise ValueError("One Card needs at least 2 seats dealt in")
    if setup.dealer is not None:
        raise ValueError("One Card has no dealer (use first_player)")
    return int(turn_ms)


def deck_for(setup: Setup, rng: random.Random) -> list[str]:
    """The record's explicit deck (checked), else one shuffled from the seed."""
    if not setup.decks:
        deck = list(DECK)
        rng.shuffle(deck)
        return deck
    if len(setup.decks) != 1:
        raise ValueError("One Card is one deal: decks must hold one card list")
    deck = setup.decks[0]
    if sorted(map(str, deck)) != sorted(DECK) or not all(isinstance(c, str) for c in deck):
        raise ValueError("decks[0] must hold each of the 54 One Card codes once")
    return list(deck)


def deal(deck: list[str], players: list[int], n: int) -> tuple[list[list[str]], list[str], str]:
    """Deal 7 cards one at a time round-robin from the lowest seat (empty
    seats are not in ``players``), then turn up the start card: cards before
    the first 4, 5, 6, 8, 9 or 10 go to the bottom of the pile in the order
    turned. Returns (hands by seat, pile with the next card last, top)."""
    hands: list[list[str]] = [[] for _ in range(n)]
    pos = 0
    for _ in range(HAND_SIZE):
        for s in players:
            hands[s].append(deck[pos])
            pos += 1
    rest = deck[pos:]
    turned = 0
    while RANK[rest[turned]] not in START_RANKS:
        turned += 1
    order = rest[turned + 1:] + rest[:turned]
    return hands, order[::-1], rest[turned]
