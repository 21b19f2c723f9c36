"""Engine benchmark: random-playout games/s and actions/s for every engine
(``ttanjit.games.simulate`` is the driver, including its ``legal_actions``
call per action), and RLCard's UNO with random agents in the same run as the
yardstick (issue 2 target: One Card actions/s >= 3x UNO steps/s)."""

from __future__ import annotations

import argparse
import gc
import time
from typing import Any

SEATS = {"onecard": 4, "penalty_rows": 5, "hakka": 4}
ROUNDS = 10  # One Card and UNO alternate in rounds, so load changes hit both


class _Engine:
    """Random playouts of one engine through ``simulate`` (the CLI's driver)."""

    def __init__(self, game: str) -> None:
        from ttanjit.games import engine_class

        engine_class(game)  # ImportError when the engine has not landed
        self.game, self.seats = game, SEATS.get(game, 4)
        self.games = self.actions = self.round = 0
        self.seconds = self.cpu = 0.0

    def play(self, games: int) -> None:
        from ttanjit.games.simulate import simulate

        self.round += 1
        cpu = time.process_time()
        summary, _ = simulate(self.game, games, self.seats, seed=self.round)
        self.cpu += time.process_time() - cpu
        self.games += summary.games
        self.actions += summary.actions
        self.seconds += summary.seconds

    def figures(self) -> dict[str, Any]:
        s, c = self.seconds or 1e-9, self.cpu or 1e-9
        return {"seats": self.seats, "games": self.games, "actions": self.actions,
                "seconds": round(s, 3), "games_per_s": round(self.games / s, 1),
                "actions_per_s": round(self.actions / s, 1),
                "actions_per_cpu_s": round(self.actions / c, 1)}


class _Uno:
    """RLCard's UNO, two random agents, ``env.run`` (PERFORMANCE.md's figure)."""

    def __init__(self) -> None:
        import numpy as np
        import rlcard
        from rlcard.agents import RandomAgent

        np.random.seed(1)
        self.env = rlcard.make("uno", config={"seed": 1})
        self.env.set_agents([RandomAgent(num_actions=self.env.num_actions)] * self.env.num_players)
        self.games = self.steps = 0
        self.seconds = self.cpu = 0.0

    def play(self, games: int) -> None:
        run, steps = self.env.run, 0
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(games):
            trajectories, _ = run(is_training=False)
            # each trajectory is state, action, state, ..., state
            steps += sum((len(tr) - 1) // 2 for tr in trajectories)
        self.seconds += time.perf_counter() - start
        self.cpu += time.process_time() - cpu
        self.games += games
        self.steps += steps

    def figures(self) -> dict[str, Any]:
        s, c = self.seconds or 1e-9, self.cpu or 1e-9
        return {"games": self.games, "steps": self.steps, "seconds": round(s, 3),
                "games_per_s": round(self.games / s, 1), "steps_per_s": round(self.steps / s, 1),
                "steps_per_cpu_s": round(self.steps / c, 1)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from ttanjit.games import GAMES

    quick = bool(getattr(args, "quick", False))
    n = 200 if quick else 2000
    out: dict[str, Any] = {}
    engines: dict[str, _Engine] = {}
    for game in GAMES:
        try:
            engines[game] = _Engine(game)
        except ImportError as exc:
            out[game] = {"skipped": f"engine not importable: {exc}"}
    try:
        uno: _Uno | None = _Uno()
    except ImportError as exc:
        uno = None
        out["rlcard_uno"] = {"skipped": f"rlcard not installed ({exc}); pip install -e '.[bench]'"}
    for e in engines.values():  # warm-up
        e.play(5)
        e.games = e.actions = 0
        e.seconds = 0.0
    if uno is not None:
        uno.play(20)
        uno.games = uno.steps = 0
        uno.seconds = 0.0
    gc.collect()
    for _ in range(ROUNDS):
        for game, e in engines.items():
            e.play(n // ROUNDS if game == "onecard" else n // 4 // ROUNDS)
        if uno is not None:
            uno.play(n // ROUNDS)
    for game, e in engines.items():
        out[game] = e.figures()
        print(f"{game:>13}: {out[game]}", flush=True)
    if uno is not None:
        out["rlcard_uno"] = uno.figures()
        print(f"{'rlcard uno':>13}: {out['rlcard_uno']}", flush=True)
    one, uno_f = out.get("onecard", {}), out.get("rlcard_uno", {})
    if "actions_per_s" in one and "steps_per_s" in uno_f:
        ratio = one["actions_per_s"] / uno_f["steps_per_s"]
        cpu_ratio = one["actions_per_cpu_s"] / uno_f["steps_per_cpu_s"]
        out["onecard_vs_uno"] = round(ratio, 2)
        out["onecard_vs_uno_cpu"] = round(cpu_ratio, 2)
        print(f"One Card actions/s ÷ UNO steps/s = {ratio:.2f} wall, {cpu_ratio:.2f} CPU "
              "(target ≥ 3)", flush=True)
    return out
