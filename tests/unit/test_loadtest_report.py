"""The load tester's sans-I/O parts (issue 9): percentiles, the report's
Prometheus text (parsed back with prometheus_client's own parser) pushed by
HTTP PUT to a real local HTTP server, the capture file (no tokens, bad
lines refused) and how a capture's answers are matched to its requests."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ttanjit.gateway.capture import CLIENT, SERVER, CaptureError, CaptureWriter, load
from ttanjit.loadtest.replay import expected_answers, plan
from ttanjit.loadtest.stats import Stats, percentile, prometheus_text, push, table


def test_percentile_nearest_rank() -> None:
    xs = [float(i) for i in range(1, 101)]
    assert percentile(xs, 50) == 50 and percentile(xs, 99) == 99 and percentile(xs, 100) == 100
    assert percentile([], 99) == 0.0 and percentile([7.0], 1) == 7.0


def _report() -> dict:
    s = Stats()
    for ms in (1.0, 2.0, 3.0, 40.0):
        s.sample("action", ms)
    s.sample("sync", 5.0)
    s.count.update(frames_in=10, frames_out=6, games_finished=1)
    s.errors["not_your_turn"] += 2
    s.resumes["gapless"] += 1
    return s.report(players=2, divergences=[{"copy": 0}])


def test_report_table_and_prometheus_text() -> None:
    rep = _report()
    assert rep["rtt"]["action"]["count"] == 4 and rep["rtt"]["action"]["p99_ms"] == 40.0
    text = table(rep)
    assert "action" in text and "not_your_turn 2" in text and "gapless 1" in text
    fams = {f.name: f for f in text_string_to_metric_families(prometheus_text(rep, "r1"))}
    rtt = {(s.labels["type"], s.labels["quantile"]): s.value
           for s in fams["ttanjit_loadtest_rtt_seconds"].samples}
    assert rtt[("action", "0.99")] == pytest.approx(0.040)
    errors = {s.labels["code"]: s.value for s in fams["ttanjit_loadtest_errors"].samples}
    assert errors == {"not_your_turn": 2}
    assert fams["ttanjit_loadtest_divergences"].samples[0].value == 1
    assert all(s.labels["run"] == "r1" for f in fams.values() for s in f.samples)


def test_push_puts_the_text_to_a_pushgateway_path() -> None:
    got: dict[str, object] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:  # noqa: N802
            got["path"] = self.path
            got["body"] = self.rfile.read(int(self.headers["Content-Length"])).decode()
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.handle_request, daemon=True)
    thread.start()
    try:
        code = push(f"http://127.0.0.1:{server.server_port}", _report(), job="lt")
    finally:
        thread.join(5)
        server.server_close()
    assert code == 200 and got["path"] == "/metrics/job/lt"
    assert "ttanjit_loadtest_rtt_seconds" in str(got["body"])


def test_capture_round_trip_without_tokens(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    w = CaptureWriter(path, "loadtest", game="onecard")
    w.open_conn("p0", nickname="하나")
    w.frame("p0", CLIENT, {"type": "hello", "token": "secret"})
    w.frame("p0", SERVER, {"type": "welcome", "seq": 1, "session": "s_1"})
    w.frame("p0", CLIENT, {"type": "action", "game_id": "g", "cmd_id": "c1",
                           "action": {"type": "draw"}})
    w.frame("p0", CLIENT, {"type": "ping"})
    w.frame("p0", SERVER, {"type": "error", "code": "not_your_turn", "cmd_id": "c1", "seq": 2})
    w.frame("p0", SERVER, {"type": "pong", "seq": 3})
    w.close_conn("p0", 1000, "client")
    w.close()
    assert "secret" not in path.read_text(encoding="utf-8")
    cap = load(path)
    assert cap.header["source"] == "loadtest" and list(cap.conns) == ["p0"]
    lines = cap.conns["p0"].lines
    answers = expected_answers(lines)
    assert answers[0]["type"] == "welcome"
    assert answers[2]["code"] == "not_your_turn"  # by cmd_id, though the pong came after
    assert answers[3]["type"] == "pong"
    plans, _ = plan(cap)
    assert [s.line.frame["type"] for s in plans[0].steps] == ["hello", "action", "ping"]
    assert plans[0].closes == [(lines[-1].t, 1000, "client")]


def test_capture_refuses_what_is_not_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "ttanjit.record/1"}\n', encoding="utf-8")
    with pytest.raises(CaptureError):
        load(bad)
    bad.write_text('{"format": "ttanjit.capture/1"}\n{"c": "p0"}\n', encoding="utf-8")
    with pytest.raises(CaptureError):
        load(bad)
