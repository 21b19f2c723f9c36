"""`ttanjit loadtest` says when its players could not play: a run where
players failed exits 1 and names why on stderr (a CI job or a script sees
it), instead of printing a report of zeros with exit code 0."""

from __future__ import annotations

import subprocess
import sys

from ttanjit.common.natsserver import free_port


def test_a_run_whose_players_fail_exits_1_and_says_why() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    out = subprocess.run([sys.executable, "-m", "ttanjit", "loadtest", "play", "--url", url,
                          "-n", "2", "--duration", "1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out
    assert "2 player(s) failed:" in out.stderr and "sign-in failed" in out.stderr
    assert "player_failures 2" in out.stdout  # the report itself is still printed
