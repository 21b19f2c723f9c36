"""The load tester's sans-I/O parts (issue 9): percentiles, the report's
Prometheus text (parsed back with prometheus_client's own parser) pushed by
HTTP PUT to a real local HTTP server, the capture file (no tokens, bad
lines refused) and how a capture's answers are matched to its requests;
issue 13: how a simulated player takes ``update`` frames (as the web
client: no ``sync`` after events, only on a resume or a gap) and how a
replay orders game frames by them."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ttanjit.gateway.capture import CLIENT, SERVER, CaptureError, CaptureWriter, load
from ttanjit.loadtest import player as player_mod
from ttanjit.loadtest.player import read_update, seat_flag
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
    s.lost[4002] += 1
    return s.report(players=2, divergences=[{"copy": 0}])


def test_the_table_says_what_was_measured() -> None:
    """Load tester audit: neither the table nor the JSON said the address,
    the game, the pace, nor that the latencies are round trips."""
    s = Stats()
    play_rep = s.report(run={"url": "http://gw:8080", "game": "onecard", "seats": 4, "mode": "quick",
                             "think_ms": [1000, 3000], "ramp_s": 5.0, "duration_s": 60.0}, players=2)
    lines = table(play_rep).splitlines()
    assert lines[0] == ("run: quick onecard with 4 seats against http://gw:8080: think 1000–3000 ms, "
                        "ramp 5 s, 60 s"), lines[0]
    assert "round trips, from a frame sent to its answer:" in lines
    replay_rep = s.report(run={"url": "http://gw:8080", "capture": "c.jsonl", "speed": 10.0,
                               "fanout": 100}, players=200)
    assert table(replay_rep).splitlines()[0] == \
        "run: replay of c.jsonl against http://gw:8080: speed 10x, 100 copies"
    assert "run" not in prometheus_text(play_rep)  # (a label of its own: --run-label)


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
    # lost connections by close code, on their own (review: as counts they
    # counted each loss twice in a sum of ttanjit_loadtest_count)
    assert [(s.labels["code"], s.value) for s in
            fams["ttanjit_loadtest_connections_lost"].samples] == [("4002", 1)]
    assert not [s for s in fams["ttanjit_loadtest_count"].samples
                if s.labels["what"].startswith("connections_lost_")]
    assert all(s.labels["run"] == "r1" for f in fams.values() for s in f.samples)


def test_a_clean_runs_counts_are_pushed_as_zero() -> None:
    """A run in which nothing failed pushes its failure counts and resumes
    as 0 (they were absent: a dashboard or alert on them read "No data";
    load tester audit)."""
    fams = {f.name: f for f in text_string_to_metric_families(prometheus_text(Stats().report()))}
    counts = {s.labels["what"]: s.value for s in fams["ttanjit_loadtest_count"].samples}
    assert {k: counts[k] for k in ("games_finished", "player_failures", "client_errors",
                                   "seq_gaps", "reconnect_failures")} == dict.fromkeys(
        ("games_finished", "player_failures", "client_errors", "seq_gaps", "reconnect_failures"), 0)
    assert {s.labels["result"]: s.value for s in fams["ttanjit_loadtest_resumes"].samples} == {
        "gapless": 0, "resync": 0, "failed": 0}


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
    bad.write_bytes(b"\xc7\xff binary\n")
    with pytest.raises(CaptureError, match="not a ttanjit.capture/1 file$"):
        load(bad)
    # a load-test report given instead (ops trial: "its last line is cut
    # short; replaying the lines before it", then "line 1 is not JSON")
    bad.write_text(json.dumps({"counts": {}, "rtt": {}}, indent=2), encoding="utf-8")
    with pytest.raises(CaptureError, match="not a ttanjit.capture/1 file .a load-test report"):
        load(bad)
    bad.write_bytes(b"")
    with pytest.raises(CaptureError, match="empty"):
        load(bad)
    with pytest.raises(CaptureError, match="No such file"):
        load(tmp_path / "missing.jsonl")


def test_a_capture_cut_short_mid_line_loads_without_that_line(tmp_path: Path) -> None:
    """A gateway killed while writing leaves half a line with no newline:
    the lines before it replay; the same damage in the middle is refused."""
    head = '{"format": "ttanjit.capture/1"}\n{"c": "p0", "t": 0.0, "open": {}}\n'
    line = '{"c": "p0", "t": 0.5, "d": ">", "f": {"type": "ping"}}\n'
    cut = tmp_path / "cut.jsonl"
    cut.write_text(head + line + line[:20], encoding="utf-8")
    cap = load(cut)
    assert [ln.frame for ln in cap.conns["p0"].lines] == [{"type": "ping"}]
    cut.write_text(head + line[:20] + "\n" + line, encoding="utf-8")
    with pytest.raises(CaptureError, match=":3: not a capture line"):
        load(cut)


# -- issue 13: update frames (events + the seat's view), no sync after events ------
def _upd(last: int, *seqs: int, view: dict | None = None, ev: str = "played") -> dict:
    return {"type": "update", "game_id": "g", "game_seq": last,
            "events": [{"game_seq": s, "t": 0, "event": {"type": ev}} for s in seqs],
            "view": view if view is not None else {"seat": 0, "turn": 1}}


def test_read_update_as_the_web_client_takes_it() -> None:
    """The same cases as static/js/updates.js ``planUpdate``."""
    u = read_update(_upd(6, 5, 6), held=4, have_view=True)
    assert [e["game_seq"] for e in u.events] == [5, 6] and u.take_view and not u.gap
    u = read_update(_upd(7, 5, 6, 7), held=5, have_view=True)  # a replay overlapping
    assert [e["game_seq"] for e in u.events] == [6, 7] and u.take_view and not u.gap
    assert not read_update(_upd(5, 5), held=5, have_view=True).take_view  # taken already
    assert not read_update(_upd(4, 4), held=6, have_view=True).take_view  # older
    u = read_update(_upd(6), held=6, have_view=True)  # only the seat's own view changed
    assert u.events == [] and u.take_view and not u.gap
    u = read_update(_upd(9, 8, 9), held=6, have_view=True)  # 7 went missing
    assert u.gap and u.take_view and len(u.events) == 2
    assert not read_update(_upd(9, 8, 9), held=0, have_view=False).gap  # no view yet
    assert read_update(_upd(7, 7, ev="game_ended"), held=6, have_view=True).game_over
    assert read_update(_upd(7, 7, ev="game_over"), held=6, have_view=True).game_over  # old name
    assert read_update(_upd(7, 7, view={"finished": True}), held=6, have_view=True).game_over
    # the seat's own hidden fields only, as a patch of the view held (no view)
    own = {"type": "update", "game_id": "g", "game_seq": 6, "events": [],
           "patch": {"seat": 0, "selected": 3}}
    u = read_update(own, held=6, have_view=True)
    assert u.patch == {"seat": 0, "selected": 3} and not u.take_view and not u.gap
    assert read_update(own | {"game_seq": 5}, held=6, have_view=True).patch is None  # stale


def test_seat_flag_reads_the_common_seats_list_or_a_games_own_list() -> None:
    v = {"n": 2, "seats": [{"seat": 0, "kind": "human", "autopilot": True},
                           {"seat": 1, "kind": "bot", "autopilot": False}],
         "resume_pending": [False, True]}
    assert seat_flag(v, 0, "autopilot") and not seat_flag(v, 1, "autopilot")
    assert seat_flag(v, 1, "resume_pending") and not seat_flag(v, 0, "resume_pending")
    old = {"seats": 2, "autopilot": [False, True]}  # One Card before issue 13
    assert seat_flag(old, 1, "autopilot") and not seat_flag(old, 0, "autopilot")
    assert not seat_flag(v, 5, "autopilot")


class _Conn:
    """Records what a player sends; answers an action with ``result``."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.closed = asyncio.Event()
        self.result_seq = 0

    async def send(self, frame: dict) -> asyncio.Future:
        self.sent.append(frame)
        fut = asyncio.get_running_loop().create_future()
        fut.set_result({"type": "result", "cmd_id": frame.get("cmd_id"),
                        "game_seq": self.result_seq} if frame["type"] == "action" else {})
        return fut

    def kinds(self) -> list[str]:
        return [f["type"] for f in self.sent]


class _Bots:
    """A policy stub: draws when it is the seat's turn."""

    @staticmethod
    def decide(game: str, level: str, seat: int, v: dict, rng: object, ms: int) -> dict | None:
        return {"type": "draw"} if v.get("turn") == seat and not v.get("finished") else None

    @staticmethod
    def module(game: str) -> object:
        class M:
            @staticmethod
            def window_key(v: dict) -> None:
                return None
        return M


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_player_plays_from_updates_and_syncs_only_on_resume_or_gap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(player_mod, "bots", _Bots)
    stats = Stats()
    p = player_mod.Player(0, "http://x", player_mod.PlayConfig(think_ms=(0, 0)), stats,
                          None)  # type: ignore[arg-type]
    conn = _Conn()
    p.conn = conn  # type: ignore[assignment]
    p.matched = asyncio.get_running_loop().create_future()
    p.on_frame({"type": "matched", "game_id": "g", "seat": 0})
    p.on_frame({"type": "view", "game_id": "g", "game_seq": 2, "view": {"seat": 0, "turn": 1}})
    p.on_frame(_upd(4, 3, 4, view={"seat": 0, "turn": 0}))  # our turn: a move
    conn.result_seq = 5
    await _settle()
    assert conn.kinds() == ["action"] and p.min_seq == 5
    p.on_frame(_upd(6, 5, 6, view={"seat": 0, "turn": 1}))  # our move's burst
    await _settle()
    assert conn.kinds() == ["action"]  # no sync after events or after our own action
    p.on_frame(_upd(6, view={"seat": 0, "turn": 1, "selected": 1}))  # own view only
    assert p.view is not None and p.view.get("selected") == 1
    p.on_frame({"type": "update", "game_id": "g", "game_seq": 6, "events": [],
                "patch": {"seat": 0, "selected": 2}})  # own hidden fields as a patch
    assert p.view == {"seat": 0, "turn": 1, "selected": 2} and p.view_seq == 6
    p.on_frame(_upd(9, 8, 9, view={"seat": 0, "turn": 1}))  # 7 lost: a gap
    await _settle()
    assert conn.kinds() == ["action", "sync"] and stats.count["game_seq_gaps"] == 1
    p.reconnects = 1
    # resumed, the welcome naming the game: the gateway follows it with what
    # was missed, nothing to ask for (as the web client: load tester audit)
    p.on_frame({"type": "welcome", "session": "s", "game_id": "g", "seat": 0})
    await _settle()
    assert conn.kinds() == ["action", "sync"]
    p.on_frame({"type": "welcome", "session": "s2"})  # one that does not name it: asked
    await _settle()
    assert conn.kinds() == ["action", "sync", "sync"]
    assert stats.count["syncs_gap"] == 1 and stats.count["syncs_resume"] == 1
    p.on_frame(_upd(10, 10, view={"seat": 0, "turn": None, "finished": True}, ev="game_ended"))
    await _settle()
    assert p.game_done.is_set() and stats.count["games_finished"] == 1
    assert conn.kinds() == ["action", "sync", "sync"]  # no sync after the game either
    assert stats.count["updates"] == 6 and stats.count["update_events"] == 7
    assert stats.count["update_patches"] == 1


def test_replay_plan_orders_game_frames_by_update_game_seq(tmp_path: Path) -> None:
    path = tmp_path / "u.jsonl"
    w = CaptureWriter(path, "loadtest", game="onecard")
    w.open_conn("p0", nickname="하나")
    w.frame("p0", CLIENT, {"type": "hello", "token": "t"})
    w.frame("p0", SERVER, {"type": "welcome", "seq": 1, "session": "s_1"})
    w.frame("p0", SERVER, {"type": "matched", "seq": 2, "game_id": "g1", "seat": 0})
    w.frame("p0", SERVER, {"type": "view", "seq": 3, "game_id": "g1", "game_seq": 2,
                           "view": {}})
    w.frame("p0", SERVER, _upd(5, 3, 4, 5) | {"game_id": "g1", "seq": 4})
    w.frame("p0", CLIENT, {"type": "action", "game_id": "g1", "cmd_id": "c1",
                           "action": {"type": "draw"}})
    w.frame("p0", SERVER, {"type": "spectate_update", "seq": 5, "game_id": "g9",
                           "game_seq": 40, "events": [], "view": {}})
    w.frame("p0", SERVER, {"type": "result", "seq": 6, "game_id": "g1", "cmd_id": "c1",
                           "game_seq": 6})
    w.close_conn("p0", 1000, "client")
    w.close()
    plans, _ = plan(load(path))
    act = plans[0].steps[1]
    assert act.line.frame["type"] == "action" and act.need_seq == 5 and act.game_no == 0
    assert act.answer is not None and act.answer["type"] == "result"


async def test_a_captured_action_the_rate_limit_dropped_is_not_replayed(tmp_path: Path) -> None:
    """Review finding: a capture's action the gateway dropped unread (now
    answered ``rate_limited``) was sent again by the paced replay, done,
    and counted a divergence that made its game stop following the
    capture. It is left out, and the turn passes to the next command."""
    from ttanjit.loadtest.replay import Copy, Divergences, ReplayPlayer

    path = tmp_path / "r.jsonl"
    w = CaptureWriter(path, "loadtest", game="onecard")
    w.open_conn("p0", nickname="하나")
    w.frame("p0", CLIENT, {"type": "action", "game_id": "g1", "cmd_id": "c1",
                           "action": {"type": "draw"}})
    w.frame("p0", SERVER, {"type": "error", "seq": 1, "code": "rate_limited", "ref": "action",
                           "cmd_id": "c1", "message": "너무 빨리 보내고 있어요."})
    w.close_conn("p0", 1000, "client")
    w.close()
    plans, t_first = plan(load(path))
    step = plans[0].steps[0]
    assert step.answer is not None and step.answer["code"] == "rate_limited"

    class Unsendable:
        async def send(self, frame: object) -> None:
            raise AssertionError(f"sent: {frame}")

    copy, div = Copy(0, 0, set()), Divergences()
    rp = ReplayPlayer(plans[0], copy, "http://x", Stats(), div, None,  # type: ignore[arg-type]
                      0.0, t_first, 1.0, 1.0, False)
    rp.conn = Unsendable()  # type: ignore[assignment]
    await rp.step(step, {"token": "t"}, None)
    assert div.checked == 0 and div.items == []
    assert step.act is not None and copy.act_done(step.act).is_set()
