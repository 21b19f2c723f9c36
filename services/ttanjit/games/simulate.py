"""Random legal playouts: the engine benchmark's driver, the playout tests'
generator, and ``ttanjit simulate``."""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

from ttanjit.games.base import JSON, Engine, SeatSpec, Setup
from ttanjit.games.record import Input, Record


@dataclass
class Summary:
    game: str
    games: int = 0
    actions: int = 0
    refused: int = 0
    seconds: float = 0.0
    outcomes: Counter[str] = field(default_factory=Counter)
    winners_by_seat: Counter[int] = field(default_factory=Counter)
    extra: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> JSON:
        s = self.seconds or 1e-9
        return {
            "game": self.game,
            "games": self.games,
            "actions": self.actions,
            "refused": self.refused,
            "seconds": round(self.seconds, 3),
            "games_per_s": round(self.games / s, 1),
            "actions_per_s": round(self.actions / s, 1),
            "outcomes": dict(self.outcomes),
            "winners_by_seat": {str(k): v for k, v in sorted(self.winners_by_seat.items())},
            **{k: v for k, v in self.extra.items()},
        }


def actors(engine: Engine) -> list[int]:
    """Seats that have a game action now (engines may provide a faster one)."""
    fast = getattr(engine, "actors", None)
    if fast is not None:
        return list(fast())
    return [s for s in range(engine.n) if engine.legal_actions(s)]


def playout(
    engine: Engine,
    rng: random.Random,
    *,
    step_ms: tuple[int, int] = (200, 2500),
    idle_p: float = 0.02,
    max_steps: int = 200_000,
    record: list[Input] | None = None,
) -> int:
    """Play random legal actions until the game ends; returns actions applied.

    Time moves by a random step before every input; now and then the players
    idle until the next deadline, so timeouts and windows expire too."""
    t = engine.now
    applied = 0
    # Hot loop of the engine benchmark: bound methods and plain random()
    # arithmetic instead of randint/choice keep the driver's share small.
    fast = getattr(engine, "actors", None)
    who = fast if fast is not None else (lambda: actors(engine))
    legal, apply, deadline = engine.legal_actions, engine.apply, engine.next_deadline
    rand = rng.random
    lo, span = step_ms[0], step_ms[1] - step_ms[0] + 1
    for _ in range(max_steps):
        if engine.finished:
            break
        seats = who()
        nd = deadline()
        if not seats or rand() < idle_p:
            if nd is None:
                if not seats:
                    raise RuntimeError(f"{engine.GAME}: stuck — nobody can act and no deadline")
            else:
                t = max(t, nd)
                apply(t)
                if record is not None:
                    record.append(Input(t))
                continue
        t += lo + int(rand() * span)
        if nd is not None and t >= nd:
            apply(t)
            if record is not None:
                record.append(Input(t))
            continue
        seat = seats[0] if len(seats) == 1 else seats[int(rand() * len(seats))]
        acts = legal(seat)
        if not acts:
            continue
        action = acts[int(rand() * len(acts))]
        res = apply(t, seat, action)
        if not res.ok:
            raise RuntimeError(f"{engine.GAME}: legal action {action} refused: {res.code}")
        applied += 1
        if record is not None:
            record.append(Input(t, seat, action))
    else:
        raise RuntimeError(f"{engine.GAME}: no end after {max_steps} steps")
    return applied


def simulate(game: str, games: int, seats: int, seed: int = 0, options: JSON | None = None,
             keep_record: bool = False) -> tuple[Summary, Record | None]:
    from ttanjit.games import engine_class

    cls = engine_class(game)
    rng = random.Random(seed)
    summary = Summary(game)
    last: Record | None = None
    opts = dict(options or {})
    opts["seats"] = seats
    start = time.perf_counter()
    for g in range(games):
        setup = Setup(game, opts, [SeatSpec("human")] * seats, seed * 1_000_003 + g)
        engine = cls(setup)
        inputs: list[Input] | None = [] if keep_record and g == games - 1 else None
        summary.actions += playout(engine, rng, record=inputs)
        summary.games += 1
        res = engine.result()
        summary.outcomes[str(res.get("ended_by"))] += 1
        for w in res.get("winners", []):
            summary.winners_by_seat[w] += 1
        for k, v in res.get("counters", {}).items():
            summary.extra[k] += v
        if inputs is not None:
            last = Record(setup, inputs)
    summary.seconds = time.perf_counter() - start
    return summary, last
