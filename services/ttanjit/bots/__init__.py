"""Bot policies (easy / normal / hard for each game) and the bot-worker service.

A policy sees exactly what a player in its seat sees: ``engine.view(seat)``
(own hand, public table, public history). Nothing else is passed in, so a bot
cannot peek (DESIGN.md 1, RULES.md 4).

- :func:`decide` -> a legal game action for the seat, or ``None`` when the seat
  has nothing to do now;
- :func:`press_after_ms` -> One Card only: when to press ``[원카드!]`` after a
  window opened (``None`` = don't press);
- :mod:`ttanjit.bots.timing`: thinking pauses and reaction delays;
- :mod:`ttanjit.bots.worker`: the NATS queue-group service
  (``python -m ttanjit.bots``); :mod:`ttanjit.bots.ladder`: levels against
  each other through the engines.

Levels: ``easy``, ``normal``, ``hard``; ``random`` (uniform legal play) exists
for the ladder's baseline.
"""

from __future__ import annotations

import importlib
import random
import time
from collections.abc import Callable
from typing import Any, Protocol

from ttanjit.games import GAME_IDS, game
from ttanjit.games.base import JSON

LEVELS = ("easy", "normal", "hard")
ALL_LEVELS = ("random", *LEVELS)
GAMES = GAME_IDS  # the registry (ttanjit.games)

# Default search budget of a hard decision when the caller gives none (ms).
HARD_BUDGET_MS = 200


class Budget:
    """A wall-clock deadline a decision checks (``time.perf_counter`` based).

    ``samples`` (optional) caps a search's determinisations: with a cap and
    time to spare, a search is a pure function of (view, rng seed)."""

    __slots__ = ("deadline", "samples")

    def __init__(self, ms: float | None, samples: int | None = None) -> None:
        self.deadline = time.perf_counter() + (ms if ms is not None else HARD_BUDGET_MS) / 1000
        self.samples = samples

    def left_ms(self) -> float:
        return (self.deadline - time.perf_counter()) * 1000

    def expired(self) -> bool:
        return time.perf_counter() >= self.deadline


class GamePolicies(Protocol):
    def decide(self, level: str, seat: int, view: JSON, rng: random.Random,
               budget: Budget) -> JSON | None: ...

    def legal(self, seat: int, view: JSON) -> list[JSON]: ...


def monte_carlo_choice(
    cands: list[JSON], fallback: JSON, sample: Callable[[], Any],
    rollout: Callable[[Any, JSON], float], budget: Budget, *, max_samples: int,
    min_samples: int = 1, same: Callable[[JSON, JSON], bool] = lambda a, b: a == b,
) -> JSON:
    """Determinised Monte Carlo, shared by the hard bots: each sample is one
    determinised game (``sample()``), every candidate is played out from it
    (``rollout(game, action)`` -> value for the bot's seat). Sampling stops at
    the budget; an unfinished sample is dropped (it would favour the
    candidates it reached). The best total wins; ties go to the normal
    policy's choice (``fallback``: it knows what it keeps for later), then to
    the earlier candidate. No finished sample -> ``fallback``."""
    totals = [0.0] * len(cands)
    n = 0
    cap = max_samples if budget.samples is None else budget.samples
    while n < cap and (n < min_samples or not budget.expired()):
        det = sample()
        vals: list[float] = []
        for a in cands:
            vals.append(rollout(det, a))
            if n >= min_samples and budget.expired():
                break
        if len(vals) < len(cands):
            break
        for i, v in enumerate(vals):
            totals[i] += v
        n += 1
    if n == 0:
        return fallback
    fb = next((i for i, a in enumerate(cands) if same(a, fallback)), None)
    best = max(range(len(cands)), key=lambda i: (totals[i] + (1e-6 if i == fb else 0.0), -i))
    return cands[best]


def module(game_id: str) -> Any:
    return importlib.import_module(game(game_id).bots)


def _rng(rng: random.Random | int) -> random.Random:
    return rng if isinstance(rng, random.Random) else random.Random(rng)


def decide(game: str, level: str, seat: int, view: JSON, rng: random.Random | int = 0,
           budget_ms: float | None = None, samples: int | None = None) -> JSON | None:
    """A legal action for ``seat`` computed only from its ``view``."""
    if level not in ALL_LEVELS:
        raise ValueError(f"unknown level {level!r}; known: {', '.join(ALL_LEVELS)}")
    mod = module(game)
    r = _rng(rng)
    if level == "random":
        fn = getattr(mod, "random_action", None)
        if fn is not None:
            rand: JSON | None = fn(seat, view, r)
            return rand
        acts = mod.legal(seat, view)
        return r.choice(acts) if acts else None
    action: JSON | None = mod.decide(level, seat, view, r, Budget(budget_ms, samples))
    return action


def press_after_ms(game: str, level: str, seat: int, view: JSON,
                   rng: random.Random | int = 0) -> int | None:
    """One Card: ms after the window opened at which this seat presses."""
    mod = module(game)
    fn = getattr(mod, "press_after_ms", None)
    if fn is None:
        return None
    delay: int | None = fn(level, seat, view, _rng(rng))
    return delay
