"""Every ``ttanjit`` subcommand explains itself: ``--help`` exits 0 with a
usage line, never a traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys

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
