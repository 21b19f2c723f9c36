"""Hakka Cards bots (RULES.md 3 and 4), from the seat's view only.

Legal actions come from the engine's own generator
(:func:`ttanjit.games.hakka_patterns.play_actions`) on the view's hand, the
public Elder list and the table.

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

from ttanjit.bots import Budget
from ttanjit.bots.hakka_policy import (  # noqa: F401 (the level module's names)
    CLAIM_AT,
    _elders_in,
    best_discard,
    call_choice,
    easy_play,
    elder_set,
    legal,
    my_turn,
    normal_play,
    pattern_cards,
    strength,
    table_best,
)
from ttanjit.bots.hakka_search import search
from ttanjit.games.base import JSON


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
    return search(seat, view, acts, rng, budget)

