"""``ttanjit replay`` and ``ttanjit simulate --game onecard`` as a user runs
them (DESIGN.md 3.1): a real subprocess; bad input → clear message and a
non-zero exit, never a traceback."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from typing import Any

import pytest

SCENARIOS = pathlib.Path(__file__).parents[1] / "scenarios" / "onecard"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttanjit", *args], capture_output=True,
                          text=True, timeout=60, encoding="utf-8")


def test_replay_prints_results_events_and_state() -> None:
    """A golden record replays to the documented state field names."""
    proc = run("replay", str(SCENARIOS / "chain_22.json"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"results", "events", "state"}
    assert all(r["ok"] for r in doc["results"])
    for key in ("turn", "direction", "top", "suit", "pending", "hands", "draw_pile", "eliminated",
                "winner", "finished", "ended_by", "bot", "autopilot"):
        assert key in doc["state"]
    assert doc["state"]["eliminated"] == [0]
    assert any(e["type"] == "drew" and "private" in e for e in doc["events"])


def _record(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"format": "ttanjit.record/1", "game": "onecard",
                           "options": {"seats": 2}, "seed": 3, "first_player": 0, "inputs": []}
    doc.update(over)
    return doc


BAD: list[tuple[str, Any]] = [
    ("not json", "{"),
    ("format", _record(format="ttanjit.record/9")),
    ("game", _record(game="poker")),
    ("turn_ms", _record(options={"seats": 2, "turn_ms": 40000})),
    ("seats", _record(options={"seats": 9})),
    ("deck", _record(decks=[["AS"] * 54])),
    ("first_player", _record(first_player="zero")),
    ("t back", _record(inputs=[{"t": 5}, {"t": 4}])),
    ("seat alone", _record(inputs=[{"t": 5, "seat": 0}])),
    ("t float", _record(inputs=[{"t": 1.5}])),
]


@pytest.mark.parametrize("what,doc", BAD, ids=[b[0] for b in BAD])
def test_malformed_record_is_a_clear_error(tmp_path: pathlib.Path, what: str, doc: Any) -> None:
    path = tmp_path / "bad.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    proc = run("replay", str(path))
    assert proc.returncode != 0
    assert proc.stderr.startswith("ttanjit replay: ") and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_missing_file(tmp_path: pathlib.Path) -> None:
    proc = run("replay", str(tmp_path / "nope.json"))
    assert proc.returncode != 0 and "cannot read" in proc.stderr and "Traceback" not in proc.stderr


def test_malformed_actions_are_refusals_not_crashes(tmp_path: pathlib.Path) -> None:
    """Malformed actions are refused with a code (DESIGN 3.1), the document is
    printed, and the exit status says the record is broken."""
    junk: list[Any] = [{"type": "play", "cards": "5H"}, {"type": "play", "cards": [["5H"]]},
                       {"type": "play", "cards": [None]}, {"type": "play", "cards": ["7H"], "suit": ["S"]},
                       {"type": 3}, ["draw"], "draw", {"type": "fly"}, {}]
    inputs = [{"t": 10, "seat": 0, "action": a} for a in junk]
    inputs.append({"t": 10, "seat": 9, "action": {"type": "draw"}})
    path = tmp_path / "junk.json"
    path.write_text(json.dumps(_record(inputs=inputs)), encoding="utf-8")
    proc = run("replay", str(path))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("ttanjit replay: malformed action in input(s) 0, 1, 2, 4, ")
    doc = json.loads(proc.stdout)
    codes = [r["code"] for r in doc["results"]]
    assert codes == ["bad_action"] * 3 + ["card_not_in_hand"] + ["bad_action"] * 5 + ["bad_seat"]
    assert all(r["message"] for r in doc["results"])
    assert doc["state"]["t"] == 0 and doc["state"]["hand_counts"] == [7, 7]


def test_simulate_then_replay_the_written_record(tmp_path: pathlib.Path) -> None:
    """``ttanjit simulate`` prints a summary; its record replays to the end."""
    rec = tmp_path / "last.json"
    proc = run("simulate", "--game", "onecard", "--games", "5", "--seats", "3", "--seed", "2",
               "--write-record", str(rec))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["games"] == 5 and summary["actions"] > 0 and summary["refused"] == 0
    assert sum(summary["outcomes"].values()) == 5 and "eliminations" in summary
    proc = run("replay", str(rec))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["state"]["finished"] and all(r["ok"] for r in doc["results"])


@pytest.mark.parametrize("args", [["--seats", "9"], ["--options", '{"turn_ms": 1}'], ["--options", "{"]])
def test_simulate_bad_options(args: list[str]) -> None:
    proc = run("simulate", "--game", "onecard", "--games", "1", *args)
    assert proc.returncode == 2 and proc.stderr.startswith("ttanjit simulate: ")
    assert "Traceback" not in proc.stderr
