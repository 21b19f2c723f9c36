"""``Engine.clone()`` is safe by construction (games.base ``copy_state``): after
random play a clone shares no mutable object with its original, for every
engine, and the two then play on independently."""

from __future__ import annotations

import random
from typing import Any

import pytest

from ttanjit.games import GAMES, engine_class
from ttanjit.games.base import Engine, SeatSpec, Setup

# Types whose instances are values (never changed in place): sharing is fine.
_VALUES = (int, float, str, bytes, bool, type(None), tuple, frozenset)


def _mutables(root: Any) -> dict[int, Any]:
    """Every mutable object reachable from an engine's fields (the read-only
    ``setup`` excepted), by id."""
    seen: dict[int, Any] = {}
    stack = [v for k, v in vars(root).items() if k != "setup"]
    visited: set[int] = set()
    while stack:
        v = stack.pop()
        if id(v) in visited or isinstance(v, type):
            continue
        visited.add(id(v))
        if not isinstance(v, _VALUES) or (isinstance(v, tuple) and type(v) is not tuple):
            if not (hasattr(v, "__dataclass_params__") and v.__dataclass_params__.frozen):
                seen[id(v)] = v
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            stack.extend(v)
        elif hasattr(v, "__dict__"):
            stack.extend(vars(v).values())
        elif hasattr(v, "__slots__"):
            stack.extend(getattr(v, name) for name in v.__slots__ if hasattr(v, name))
    return seen


def _play(game: str, seed: int, steps: int) -> Engine:
    cls = engine_class(game)
    n = 4 if game != "penalty_rows" else 5
    kinds = ["human", "bot"] + ["bot"] * (n - 2)
    e = cls(Setup(game, {}, [SeatSpec(k) for k in kinds], seed))
    rng = random.Random(seed)
    t = 0
    for _ in range(steps):
        if e.finished:
            break
        t += rng.choice((1, 500, 5_000))
        actors = [s for s in range(e.n) if e.legal_actions(s)]
        if not actors or rng.random() < 0.05:
            e.apply(t)
            continue
        seat = rng.choice(actors)
        e.apply(t, seat, rng.choice(e.legal_actions(seat)))
    return e


@pytest.mark.parametrize("game", list(GAMES))
@pytest.mark.parametrize("seed", range(4))
def test_a_clone_shares_no_mutable_object(game: str, seed: int) -> None:
    for steps in (0, 7, 40, 400):
        e = _play(game, seed, steps)
        c = e.clone()
        assert type(c) is type(e) and c.setup is e.setup
        shared = set(_mutables(e)) & set(_mutables(c))
        assert not shared, [type(_mutables(e)[i]).__name__ for i in shared]
        assert c.state() == e.state()


@pytest.mark.parametrize("game", list(GAMES))
def test_a_clone_plays_on_alone(game: str) -> None:
    e = _play(game, 9, 30)
    before = e.state()
    c = e.clone()
    rng = random.Random(1)
    t = c.now
    for _ in range(200):
        if c.finished:
            break
        t += 3_000
        actors = [s for s in range(c.n) if c.legal_actions(s)]
        if actors:
            seat = rng.choice(actors)
            c.apply(t, seat, rng.choice(c.legal_actions(seat)))
        else:
            c.apply(t)
    assert c.state() != before
    assert e.state() == before
