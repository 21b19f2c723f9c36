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


def test_the_clients_hakka_pattern_preview_is_the_engines() -> None:
    """RULES.md 3.5: a single card, a run (3+ of one suit in sequence) or a
    set (3+ of one number, 완 among the 1s). The table's preview names the
    pick's pattern ("패턴이 아니에요" otherwise: hakka.js ``classify``, written
    apart from the engine's): every triple of the 37 cards and a sample of
    larger picks, the same kind as ``hakka_patterns.classify`` says."""
    import itertools
    import random

    from ttanjit.games.hakka_patterns import CARDS, classify

    node = shutil.which("node")
    assert node
    rng = random.Random(5)
    picks = [[c] for c in CARDS] + [list(t) for t in itertools.combinations(CARDS, 3)]
    runs = [list(CARDS[i:i + k]) for k in (4, 5, 6) for i in range(len(CARDS) - k)]
    picks += runs + [rng.sample(CARDS, rng.randint(4, 6)) for _ in range(3000)]
    script = """import("./test/standin.mjs").then(() => import("../static/js/hakka.js")).then((m) => {
      let s = ""; process.stdin.on("data", (d) => { s += d; }).on("end", () =>
        console.log(JSON.stringify(JSON.parse(s).map((p) => m.classify(p))))); })"""
    run = subprocess.run([node, "--input-type=module", "-e", script], cwd=WEB, input=json.dumps(picks),
                         capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    client = json.loads(run.stdout)
    engine = [(classify(p).kind if classify(p) else None) for p in picks]  # type: ignore[union-attr]
    differ = [(p, c, e) for p, c, e in zip(picks, client, engine, strict=True) if c != e]
    assert not differ, differ[:10]
    assert {"single", "run", "set", None} <= set(engine)
