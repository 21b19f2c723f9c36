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


def _engine(game: str, games: int) -> dict[str, Any]:
    from ttanjit.games import engine_class
    from ttanjit.games.simulate import simulate

    try:
        engine_class(game)
    except ImportError as exc:
        return {"skipped": f"engine not importable: {exc}"}
    seats = SEATS.get(game, 4)
    simulate(game, max(1, games // 20), seats, seed=99)  # warm-up
    gc.collect()
    summary, _ = simulate(game, games, seats, seed=1)
    out = summary.to_json()
    return {"seats": seats, "games": out["games"], "actions": out["actions"],
            "seconds": out["seconds"], "games_per_s": out["games_per_s"],
            "actions_per_s": out["actions_per_s"]}


def _uno(games: int) -> dict[str, Any]:
    try:
        import numpy as np
        import rlcard
        from rlcard.agents import RandomAgent
    except ImportError as exc:
        return {"skipped": f"rlcard not installed ({exc}); pip install -e '.[bench]'"}
    env = rlcard.make("uno", config={"seed": 1})
    np.random.seed(1)
    env.set_agents([RandomAgent(num_actions=env.num_actions)] * env.num_players)
    for _ in range(max(1, games // 20)):  # warm-up
        env.run(is_training=False)
    gc.collect()
    steps = 0
    start = time.perf_counter()
    for _ in range(games):
        trajectories, _ = env.run(is_training=False)
        # each trajectory is state, action, state, ..., state
        steps += sum((len(tr) - 1) // 2 for tr in trajectories)
    seconds = time.perf_counter() - start
    return {"games": games, "steps": steps, "seconds": round(seconds, 3),
            "games_per_s": round(games / seconds, 1), "steps_per_s": round(steps / seconds, 1)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from ttanjit.games import GAMES

    quick = bool(getattr(args, "quick", False))
    n = 200 if quick else 2000
    out: dict[str, Any] = {}
    for game in GAMES:
        out[game] = _engine(game, n if game == "onecard" else n // 4)
        print(f"{game:>13}: {out[game]}", flush=True)
    out["rlcard_uno"] = _uno(n)
    print(f"{'rlcard uno':>13}: {out['rlcard_uno']}", flush=True)
    one, uno = out["onecard"], out["rlcard_uno"]
    if "actions_per_s" in one and "steps_per_s" in uno:
        ratio = one["actions_per_s"] / uno["steps_per_s"]
        out["onecard_vs_uno"] = round(ratio, 2)
        print(f"One Card actions/s ÷ UNO steps/s = {ratio:.2f} (target ≥ 3)", flush=True)
    return out
