"""`ttanjit loadtest` says when its players could not play: a run where
players failed exits 1 and names why on stderr (a CI job or a script sees
it), instead of printing a report of zeros with exit code 0. Input it
cannot use (a missing or damaged file, options that are not JSON, a
Pushgateway that is not there) is one line on stderr and exit 2, never a
traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ttanjit.common.natsserver import free_port


def loadtest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttanjit", "loadtest", *args],
                          capture_output=True, text=True, timeout=60)


def test_a_run_whose_players_fail_exits_1_and_says_why(tmp_path: Path) -> None:
    """A saved report of a run whose players failed: the report is printed,
    the exit is 1 and stderr says why, each reason once and as a message
    (it was one ``SignInError('…')`` repr line per player)."""
    report = {"elapsed_s": 5.0, "throughput": {"frames_per_s": 1.0, "commands_per_s": 1.0},
              "rtt": {}, "counts": {"player_failures": 5}, "errors": {}, "disconnects": 0,
              "resumes": {}, "players": 5, "games_played": 0, "peak_in_game": 0,
              "failures": [f"p{i}: SignInError(\"sign-in: HTTP 404 {{'detail': 'Not Found'}}\")"
                           for i in range(4)] + ["p4: TimeoutError()"]}
    (tmp_path / "r.json").write_text(json.dumps(report))
    out = loadtest("report", str(tmp_path / "r.json"))
    assert out.returncode == 1, out
    assert out.stderr.splitlines() == [
        "5 player(s) failed:",
        "  p0, p1, p2 and 1 more: sign-in: HTTP 404 {'detail': 'Not Found'}",
        "  p4: TimeoutError"], out.stderr
    assert "player_failures 5" in out.stdout  # the report itself is still printed
    # the saved report, pushed to a Pushgateway that is not there
    gone = f"http://127.0.0.1:{free_port()}"
    pushed = loadtest("report", str(tmp_path / "r.json"), "--push", gone)
    assert pushed.returncode == 2 and "Traceback" not in pushed.stderr, pushed
    assert pushed.stderr == (f"ttanjit loadtest report: could not push the report to {gone}: "
                             "Connection refused\n"), pushed.stderr  # words, not ConnectError(…)
    assert "player_failures 5" in pushed.stdout


def test_a_url_where_no_gateway_answers_is_one_line_and_exit_2() -> None:
    """A wrong ``--url`` is input the run cannot use: one look before any
    player starts, one line, exit 2 (it was a ``SignInError(…)`` line per
    player after 5 retries each, and exit 1)."""
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    for args in (("play", "-n", "50"), ("record", "-n", "50", "-o", os.devnull)):
        out = loadtest(*args, "--url", url, "--duration", "30")
        assert out.returncode == 2, out
        assert out.stderr == (f"ttanjit loadtest {args[0]}: no gateway answers at {url}: "
                              "Connection refused (--url, or --local)\n"), out.stderr
        assert out.stdout == ""


def test_a_url_of_a_metrics_port_or_the_websocket_says_which_address_to_give() -> None:
    """Ops trial: ``--url`` at the gateway's metrics port (``make run``
    prints it too) passed the look at ``/healthz``, which that port answers
    as well; then every player failed with an HTML page dumped on the
    screen, exit 1. And ``…/ws`` said only "HTTP 404"."""
    from ttanjit.common.metrics_http import serve

    port = free_port()
    server = serve(port, host="127.0.0.1")  # the real metrics endpoint of every service
    try:
        url = f"http://127.0.0.1:{port}"
        for given, hint in ((url, "not its metrics port"), (url + "/ws", "drop /ws")):
            out = loadtest("play", "-n", "5", "--url", given, "--duration", "5")
            assert out.returncode == 2, out
            assert out.stderr.startswith(f"ttanjit loadtest play: {given} is not a ttanjit "
                                         "gateway: GET /readyz answered HTTP 404"), out.stderr
            assert hint in out.stderr and len(out.stderr.splitlines()) == 1, out.stderr
    finally:
        server.shutdown()
    # a --push address where nothing answers: said before the run (it was
    # found after the whole run), though the gateway is not there either
    gone = f"http://127.0.0.1:{free_port()}"
    out = loadtest("play", "-n", "5", "--url", url, "--push", gone, "--duration", "5")
    assert out.returncode == 2 and out.stderr == (
        f"ttanjit loadtest play: no Pushgateway answers at {gone}: Connection refused "
        "(--push)\n"), out.stderr


def test_input_it_cannot_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    (tmp_path / "cut.json").write_text('{"counts": {', encoding="utf-8")
    (tmp_path / "other.json").write_text('{"counts": {}}', encoding="utf-8")
    cases = {
        ("replay", str(tmp_path / "missing.jsonl"), "--url", url): "No such file",
        ("report", str(tmp_path / "cut.json")): "not a JSON report",
        ("report", str(tmp_path / "other.json")): "not a report of",
        ("play", "--url", url, "--options", "{turn_ms"): "--options: not JSON",
        ("record", "--url", url, "--out", str(tmp_path / "no" / "c.jsonl")):
            "cannot write the capture",
    }
    for args, says in cases.items():
        out = loadtest(*args)
        assert out.returncode == 2, (args, out)
        assert says in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)


def test_a_run_whose_connections_were_lost_for_good_exits_1(tmp_path: Path) -> None:
    """The gateway went away under a run (a replay's ``connections_lost``, a
    player's ``reconnect_failures``): the report is printed, the exit is 1."""
    report = {"elapsed_s": 5.0, "throughput": {"frames_per_s": 1.0, "commands_per_s": 1.0},
              "rtt": {}, "counts": {"reconnect_failures": 1, "connections_lost": 2},
              "connections_lost_by_code": {"4002": 1, "1006": 1},
              "errors": {}, "disconnects": 3, "resumes": {}}
    (tmp_path / "r.json").write_text(json.dumps(report))
    out = loadtest("report", str(tmp_path / "r.json"))
    assert out.returncode == 1, out
    assert "3 connection(s) lost for good" in out.stderr
    assert "connections_lost 2" in out.stdout
    # why, by close code (ops trial: nine players the gateway closed for
    # being idle were said lost "because the gateway went away")
    assert "closed with 4002 (idle_timeout: nothing sent for the gateway's idle time" \
        in out.stderr and "closed with 1006 (dropped: the gateway went away" in out.stderr
