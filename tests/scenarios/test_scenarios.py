"""Golden game records (DESIGN.md 3.1), re-run through the same code path as
``ttanjit replay``. Each file under ``tests/scenarios/<game>/`` is a record
plus:

- ``"section"``: the RULES.md section it checks (e.g. ``"1.5"``), and
  ``"title"``: what it shows — the test id cites both;
- ``"expect"``:
  - ``"results"``: a list, one per input: ``true`` (accepted), or a refusal
    code string, or ``null`` (don't care);
  - ``"state"``: a subset of the final omniscient state (dicts compared
    key by key, lists and scalars exactly);
  - ``"events"``: a list of event subsets that must appear in this order
    (other events may come between them).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest

from ttanjit.games.record import record_from_json, replay

HERE = pathlib.Path(__file__).parent
FILES = sorted(HERE.glob("*/*.json"))


def _id(path: pathlib.Path) -> str:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return f"{path.parent.name}/{path.stem} [RULES {doc.get('section', '?')}]"


def _subset(expected: Any, actual: Any, where: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for k, v in expected.items():
            assert k in actual, f"{where}.{k} missing"
            _subset(v, actual[k], f"{where}.{k}")
    else:
        assert expected == actual, f"{where}: expected {expected!r}, got {actual!r}"


def _matches(expected: dict[str, Any], event: dict[str, Any]) -> bool:
    try:
        _subset(expected, event, "event")
    except AssertionError:
        return False
    return True


@pytest.mark.parametrize("path", FILES, ids=[_id(p) for p in FILES])
def test_scenario(path: pathlib.Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc.get("section"), "every scenario cites its RULES.md section"
    engine, results, events = replay(record_from_json(doc))
    expect = doc.get("expect", {})
    assert expect, "a scenario without expectations checks nothing"
    if "results" in expect:
        assert len(expect["results"]) == len(results), "one expected result per input"
        for i, (exp, got) in enumerate(zip(expect["results"], results, strict=True)):
            if exp is None:
                continue
            if exp is True:
                assert got["ok"], f"input {i} refused: {got}"
            else:
                assert not got["ok"] and got["code"] == exp, f"input {i}: expected {exp}, got {got}"
    if "state" in expect:
        _subset(expect["state"], engine.state(), "state")
    if "events" in expect:
        it = iter(events)
        for exp in expect["events"]:
            assert any(_matches(exp, ev) for ev in it), f"event {exp} not found in order"
