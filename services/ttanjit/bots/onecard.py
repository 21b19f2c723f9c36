"""One Card bots (RULES.md 1 and 4), from the seat's view only.

Legal plays come from :func:`ttanjit.games.onecard_cards.legal_plays` on the
view's ``hand``/``top``/``suit``/``pending``/``twos_only`` — the same function
the engine uses, so a bot never proposes what the engine refuses.

- normal (also autopilot and substitute): transfer or block an attack rather
  than take it (with the cheapest card that works); otherwise shed as many
  cards as possible, keep attack cards and jokers for defence unless the next
  player is close to winning, use J/Q/K tempo, name the suit it holds most,
  never strand itself with only 2s/As/jokers; draws only with nothing to play.
- easy: a random legal play (drawing now and then anyway), attacks passed on
  at random, suits named at random half the time.
- hard: determinised Monte Carlo (:mod:`ttanjit.bots.onecard_search`): the
  unseen cards (not in hand, not in the discard pile) are dealt into the other
  hands by their public counts and the rest into the draw pile; every
  candidate is applied in a real engine built from that sample and played on
  by normal-policy rollouts; expected outcome decides.

``[원카드!]``: :func:`press_after_ms` — when a window is open every bot presses
(the holder for itself, the others to catch), after its level's reaction
delay (:mod:`ttanjit.bots.timing`); easy bots miss 30 %.
"""

from __future__ import annotations

import random

from ttanjit.bots import Budget, timing
from ttanjit.bots.onecard_policy import (  # noqa: F401 (the level module's names)
    GAME_ACTIONS,
    best_suit,
    easy_choice,
    legal,
    my_turn,
    next_seat,
    normal_choice,
    score,
    window_key,
)
from ttanjit.bots.onecard_search import search
from ttanjit.games.base import JSON


def decide(level: str, seat: int, view: JSON, rng: random.Random, budget: Budget) -> JSON | None:
    acts = legal(seat, view)
    if not acts:
        return None
    if len(acts) == 1:
        return acts[0]
    if level == "easy":
        return easy_choice(view, acts, rng)
    if level == "normal":
        return normal_choice(seat, view, acts)
    return search(seat, view, acts, rng, budget)


def press_after_ms(level: str, seat: int, view: JSON, rng: random.Random) -> int | None:
    """When to press ``[원카드!]`` after the open window appeared (None: don't).

    Every bot presses when a window is open — the holder to protect itself,
    the others to catch the holder — after its reaction delay."""
    w = view.get("window")
    if w is None or view.get("finished"):
        return None
    if not view["dealt"][seat] or seat in view["eliminated"]:
        return None
    return timing.press_delay_ms(level, rng)
