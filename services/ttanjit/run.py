"""``make run``. Until the services land, this plays a short simulated One
Card game and writes a replayable record (README says so)."""

from __future__ import annotations

import json
import os

from ttanjit.games.simulate import simulate


def main() -> int:
    os.makedirs("var", exist_ok=True)
    for game, seats in (("onecard", 4), ("penalty_rows", 5), ("hakka", 4)):
        try:
            summary, record = simulate(game, 1, seats, seed=1, keep_record=True)
        except ImportError:
            print(f"{game}: engine not built yet")
            continue
        path = f"var/{game}-sample.json"
        assert record is not None
        with open(path, "w", encoding="utf-8") as f:
            json.dump(record.to_json(), f, ensure_ascii=False)
        print(json.dumps(summary.to_json(), ensure_ascii=False))
        print(f"record written: {path}  (replay it: .venv/bin/ttanjit replay {path})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
