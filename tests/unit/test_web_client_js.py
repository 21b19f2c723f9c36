"""The web client's unit tests (its pure modules, ``static/js``) with Node's
own test runner: ``node --test services/ttanjit/gateway/web/test``. Run here
so that ``make test`` (and CI) fails when one of them fails."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "services" / "ttanjit" / "gateway" / "web"


def test_node_unit_tests_pass() -> None:
    node = shutil.which("node")
    assert node, "node is needed for the web client's tests (make web installs its packages)"
    run = subprocess.run([node, "--test", "test/"], cwd=WEB, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout and "# pass 0" not in run.stdout


def test_the_clients_game_facts_are_the_services() -> None:
    """The client knows each game's table sizes and how it places seats
    before it asks the server anything (state.js ``GAMES``, ``PLACED``);
    the matchmaker knows them too (options.SEATS, ratings.SCORED and
    LOW_WINS). Written twice, they must say the same (RULES.md 1.9, 2.4,
    2.7, 3.1)."""
    from ttanjit.games import GAMES as ENGINES
    from ttanjit.matchmaker.options import SEATS
    from ttanjit.matchmaker.ratings import LOW_WINS, SCORED

    node = shutil.which("node")
    assert node
    script = """import("../static/js/state.js").then((m) => console.log(JSON.stringify(
      Object.fromEntries(Object.entries(m.GAMES).map(([g, x]) => [g,
        { seats: x.seats, def: x.defaultSeats, scored: m.placedByScore(g), low: m.fewestWin(g) }])))))"""
    run = subprocess.run([node, "--input-type=module", "-e", script], cwd=WEB,
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    client = json.loads(run.stdout)
    assert set(client) == set(SEATS) == set(ENGINES)
    for game, (lo, hi, default) in SEATS.items():
        assert client[game] == {"seats": list(range(lo, hi + 1)), "def": default,
                                "scored": game in SCORED, "low": game in LOW_WINS}, game
