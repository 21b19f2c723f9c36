"""`make bench`'s runner keeps every section's figures: running one section
replaces that section's entry in bench-results.json and keeps the others
(an earlier `bench peer` is still there after a `bench engines`), with the
time each section started; a `--quick` smoke run goes to a file of its own;
a section name it does not have is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def bench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttanjit.bench", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def test_one_section_replaces_its_own_figures_only(tmp_path: Path) -> None:
    out = tmp_path / "bench-results.json"
    out.write_text(json.dumps({"peer": {"ratio": 2.0}, "engines": {"old": True},
                               "started_at": {"peer": "2026-12-01 07:02:00"}}))
    run = bench("engines", "--quick", "--out", str(out))
    assert run.returncode == 0, run.stderr
    figures = json.loads(out.read_text())
    assert figures["peer"] == {"ratio": 2.0}  # another section's run, kept
    assert "old" not in figures["engines"] and figures["engines"]  # this run's
    assert figures["started_at"]["peer"] == "2026-12-01 07:02:00"
    assert figures["started_at"]["engines"] > "2026-12-01"


def test_a_quick_run_never_replaces_a_full_runs_figures(tmp_path: Path) -> None:
    full = {"engines": {"games_per_s": 123}, "started_at": {"engines": "2026-12-01 07:02:00"}}
    (tmp_path / "bench-results.json").write_text(json.dumps(full))
    run = bench("engines", "--quick", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "bench-results.json").read_text()) == full
    quick = json.loads((tmp_path / "bench-results-quick.json").read_text())
    assert quick["engines"] and "started_at" in quick
    assert "figures written to bench-results-quick.json" in run.stdout


def test_a_section_it_does_not_have_is_refused(tmp_path: Path) -> None:
    run = bench("enigne", "--out", str(tmp_path / "b.json"))
    assert run.returncode == 2 and "no section enigne" in run.stderr
    assert not (tmp_path / "b.json").exists()
