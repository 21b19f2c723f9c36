"""줄줄이 벌점 cards, placement and the timeout pick — pure functions on plain
lists (RULES.md 2.2, 2.3 and 2.5). The engine (``penalty_rows.py``) holds the
state and the clock; everything here is a value in, a value out.

Cards are the integers 1..104. Rows are four lists of cards (row 1 is
``rows[0]``); a row never has more than :data:`ROW_MAX` cards.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CARDS = range(1, 105)
ROWS = 4
ROW_MAX = 5
HAND = 10

# Outcomes of placing a card (RULES.md 2.3 step 3).
APPEND = "append"  # row end < card, row has < 5 cards
SIXTH_CARD = "sixth_card"  # row end < card, row has 5 cards: take those 5
ROW_END_HIGHER = "row_end_higher"  # row end > card: take the whole row


def card_penalty(card: int) -> int:
    """RULES.md 2.2: the first matching line of the table."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


PENALTY: tuple[int, ...] = (0, *(card_penalty(c) for c in CARDS))  # PENALTY[card]
TOTAL_PENALTY = sum(PENALTY)  # 171


def is_card(obj: Any) -> bool:
    return isinstance(obj, int) and not isinstance(obj, bool) and 1 <= obj <= 104


def row_penalty(row: list[int]) -> int:
    return sum(PENALTY[c] for c in row)


@dataclass(frozen=True, slots=True)
class Placement:
    """How ``card`` lands on a row: ``outcome``, the cards taken (empty for an
    append) and their penalty; ``position`` is the card's 1-based place in
    the row afterwards."""

    outcome: str
    taken: tuple[int, ...]
    penalty: int
    position: int

    def to_json(self) -> dict[str, Any]:
        if self.outcome == APPEND:
            return {"outcome": APPEND, "position": self.position, "cards": 0, "penalty": 0}
        return {
            "outcome": self.outcome,
            "position": 1,
            "cards": len(self.taken),
            "taken": list(self.taken),
            "penalty": self.penalty,
        }


def placement(row: list[int], card: int) -> Placement:
    """RULES.md 2.3 step 3, against the row as it is now (no mutation)."""
    if row[-1] > card:
        return Placement(ROW_END_HIGHER, tuple(row), row_penalty(row), 1)
    if len(row) >= ROW_MAX:
        return Placement(SIXTH_CARD, tuple(row), row_penalty(row), 1)
    return Placement(APPEND, (), 0, len(row) + 1)


def place(rows: list[list[int]], card: int, row: int) -> Placement:
    """Place ``card`` on row number ``row`` (1-based), mutating ``rows``."""
    target = rows[row - 1]
    how = placement(target, card)
    if how.outcome == APPEND:
        target.append(card)
    else:
        rows[row - 1] = [card]
    return how


def timeout_pick(hand: list[int], rows: list[list[int]]) -> tuple[int, int]:
    """RULES.md 2.5: the game's pick for an unconfirmed player, as
    ``(card, row)``. Over every (card in hand, row) pair minimise, in order,
    (a) the penalty taken against the rows as they are now, (b) for an
    append, the gap ``card - row end``, (c) the card, (d) the row.

    A pick with penalty 0 is always an append and a take always costs at
    least 1, so (b) only ever compares appends with appends."""
    best: tuple[int, int, int, int] | None = None
    for r, row in enumerate(rows):
        end = row[-1]
        take = row_penalty(row)
        open_end = len(row) < ROW_MAX
        for card in hand:
            if open_end and end < card:
                key = (0, card - end, card, r + 1)
            else:
                key = (take, 0, card, r + 1)
            if best is None or key < best:
                best = key
    if best is None:
        raise ValueError("timeout_pick needs a card in hand")
    return best[2], best[3]


def parse_deck(raw: list[Any]) -> list[int]:
    """A record's deck (DESIGN.md 3.1): distinct cards 1..104 as ints or
    strings, first element dealt first. Raises ValueError."""
    deck: list[int] = []
    for c in raw:
        if isinstance(c, str) and c.isdigit():
            c = int(c)
        if not is_card(c):
            raise ValueError(f"penalty_rows deck: {c!r} is not a card 1..104")
        deck.append(c)
    if len(set(deck)) != len(deck):
        raise ValueError("penalty_rows deck: a card appears twice")
    return deck
