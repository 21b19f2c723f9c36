"""Hakka Cards: scoring a hand (RULES.md 3.8).

Pure functions over seats 0..3; every settlement is zero-sum."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ttanjit.games.hakka_patterns import NUMBER_OF

POINTS = {6: 1, 7: 2, 8: 4, 9: 8, 10: 16, 11: 32, 12: 128}
CLAIM_AT = 6  # tricks (+ Elders in hand) needed to win the hand
MAX_TRICKS = 12
DREAMER_BASE = 5
FIVE_TIGERS_TRICKS = 8


def points(tricks: int) -> int:
    """Points for ``tricks`` (0 below 6)."""
    return POINTS[min(tricks, MAX_TRICKS)] if tricks >= CLAIM_AT else 0


def dreamer_tricks(dreamer_card: str, winning_cards: Iterable[str]) -> int:
    """5 plus one for every winning card of the dreamer card's number
    (``wan`` counts as a 1)."""
    n = NUMBER_OF[dreamer_card]
    return DREAMER_BASE + sum(1 for c in winning_cards if NUMBER_OF[c] == n)


def settle(
    winner: int,
    winner_tricks: int,
    dreamer: int,
    dreamer_tricks_: int,
    active: Sequence[int],
    privileged: int | None,
) -> list[int]:
    """Score changes by seat: the two other active players each pay the winner
    (and the dreamer, with 6 or more) the points for their tricks; a
    privileged player who did not win pays every share alone."""
    deltas = [0, 0, 0, 0]
    payers = [s for s in active if s != winner]
    alone = privileged if privileged is not None and privileged != winner else None

    def collect(receiver: int, pts: int) -> None:
        for p in payers:
            deltas[p if alone is None else alone] -= pts
            deltas[receiver] += pts

    collect(winner, points(winner_tricks))
    if dreamer_tricks_ >= CLAIM_AT:
        collect(dreamer, points(dreamer_tricks_))
    return deltas
