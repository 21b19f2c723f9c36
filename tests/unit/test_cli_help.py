"""Every ``ttanjit`` subcommand explains itself: ``--help`` exits 0 with a
usage line, never a traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

import pytest

from ttanjit.cli import build_parser


def _subcommands() -> list[str]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    return []


@pytest.mark.parametrize("args", [[], *([name] for name in _subcommands())])
def test_help(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "ttanjit", *args, "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: ttanjit"), proc.stdout[:200]
    assert "Traceback" not in proc.stderr


def test_the_help_reads_as_text_and_names_every_argument() -> None:
    """Operator audit: the top description showed reStructuredText
    (``ttanjit``), and replay's FILE and --indent, record's game_id, --nats
    and --prefix, simulate's --games and --seats had no help; drain's exit
    codes were in the README only."""
    top = subprocess.run([sys.executable, "-m", "ttanjit", "--help"], capture_output=True,
                         text=True, timeout=60).stdout
    assert "``" not in top
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name in ("replay", "simulate", "record", "drain", "ladder"):
        for action in sub.choices[name]._actions:
            if not isinstance(action, argparse._HelpAction):
                assert action.help, (name, action.dest)
    assert "exit 0" in sub.choices["drain"].epilog and "3: games left" in sub.choices["drain"].epilog


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Any) -> None:
    """Operator audit: `ttanjit replay f.json | head` ended in a
    BrokenPipeError traceback."""
    record = tmp_path / "game.json"
    made = subprocess.run([sys.executable, "-m", "ttanjit", "simulate", "--game", "penalty_rows",
                           "--games", "1", "--write-record", str(record)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    proc = subprocess.run(f"{sys.executable} -m ttanjit replay --indent 2 {record} | head -1",
                          shell=True, capture_output=True, text=True, timeout=120)
    assert proc.stdout == "{\n"
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_drain_waits_as_long_as_the_shard_drains() -> None:
    """Operator audit: without --timeout `ttanjit drain` waited 70 s
    whatever the shard's budget: a 100 s drain (the production example)
    exited 1, "cannot be reached", while it went on."""
    from ttanjit.cli import UNKNOWN_BUDGET_S, drain_deadline

    assert drain_deadline(20, {"TTANJIT_DRAIN_TIMEOUT_S": "100"}) == 30
    assert drain_deadline(0, {"TTANJIT_DRAIN_TIMEOUT_S": "100"}) == 110  # on the shard's host
    assert drain_deadline(0, {}) == UNKNOWN_BUDGET_S + 10  # from elsewhere
    assert drain_deadline(0, {"TTANJIT_DRAIN_TIMEOUT_S": "soon"}) == UNKNOWN_BUDGET_S + 10
