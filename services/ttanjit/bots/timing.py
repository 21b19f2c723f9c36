"""Bot timing (RULES.md section 4): thinking pauses and ``[원카드!]`` reaction
delays, by difficulty.

Pure and deterministic: every function draws from the ``random.Random`` (or
integer seed) the host passes, so a shard that seeds it from the game seed and
the input count gets the same pauses when a record is replayed.

- Thinking pause before an action in a game with humans: 600-1,800 ms overall,
  quicker for stronger bots (easy 900-1,800, normal 700-1,500, hard 600-1,200).
- ``[원카드!]`` reaction delay: easy 1,500-2,500 ms and misses 30 % of the
  windows, normal 700-1,500 ms, hard 250-600 ms. Bots never make false calls:
  the host presses only while the window it was scheduled for is still open.
"""

from __future__ import annotations

import random
from typing import Final

LEVELS: Final = ("easy", "normal", "hard")

THINK_MS: Final[dict[str, tuple[int, int]]] = {
    "easy": (900, 1800),
    "normal": (700, 1500),
    "hard": (600, 1200),
}
PRESS_MS: Final[dict[str, tuple[int, int]]] = {
    "easy": (1500, 2500),
    "normal": (700, 1500),
    "hard": (250, 600),
}
EASY_MISS: Final = 0.30


def as_rng(rng: random.Random | int) -> random.Random:
    """A ``random.Random`` from either a generator or an integer seed."""
    return rng if isinstance(rng, random.Random) else random.Random(rng)


def _check(level: str) -> None:
    if level not in LEVELS:
        raise ValueError(f"bot level must be one of {', '.join(LEVELS)}, not {level!r}")


def thinking_ms(level: str, rng: random.Random | int) -> int:
    """The pause before a bot's action in a game with humans (RULES.md 4)."""
    _check(level)
    lo, hi = THINK_MS[level]
    return as_rng(rng).randint(lo, hi)


def press_delay_ms(level: str, rng: random.Random | int) -> int | None:
    """Reaction delay for ``[원카드!]`` after a window opens; ``None`` = the bot
    misses this window (easy bots, 30 %). Holder and catchers use the same
    delays (RULES.md 4)."""
    _check(level)
    r = as_rng(rng)
    if level == "easy" and r.random() < EASY_MISS:
        return None
    lo, hi = PRESS_MS[level]
    return r.randint(lo, hi)
