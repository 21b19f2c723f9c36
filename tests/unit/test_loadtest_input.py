"""`ttanjit loadtest` on input it cannot use and on runs in which nothing
worked (a new-user trial): every numeric option is range-checked (one line,
exit 2; ``replay --speed 0`` divided by zero once per player), quick match
refuses the room options it would have ignored, a run in which no player
got into a game or the server answered ``internal_error`` fails, the
progress line and the table name the rate alike, and a replay of a seeded
capture against a server without test options stops at the first refusal
with the hint ``play`` gives (it stalled every player for ``--timeout``)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from ttanjit.cli import main
from ttanjit.common.natsserver import free_port
from ttanjit.gateway.capture import CLIENT, SERVER, CaptureWriter
from ttanjit.loadtest import replay as replay_mod
from ttanjit.loadtest.cli import _finish
from ttanjit.loadtest.report import collapse, plain
from ttanjit.loadtest.stats import Stats, table

NOWHERE = f"http://127.0.0.1:{free_port()}"

BAD = [
    (["play", "-n", "0"], "argument -n/--players: must be at least 1, not 0"),
    (["play", "-n", "-5"], "argument -n/--players: must be at least 1, not -5"),
    (["play", "--duration", "-1"], "argument --duration: must be above 0, not -1"),
    (["play", "--duration", "0"], "argument --duration: must be above 0"),
    (["play", "--ramp", "-2"], "argument --ramp: must be 0 or more seconds"),
    (["play", "--think", "500-100"], "argument --think: not MS-MS from low to high"),
    (["play", "--think", "fast"], "argument --think: not MS or MS-MS"),
    (["play", "--resume-rate", "2"], "argument --resume-rate: must be a chance from 0 to 1"),
    (["play", "--mistakes", "-1"], "argument --mistakes: must be a chance from 0 to 1"),
    (["play", "--games", "-1"], "argument --games: must be at least 0"),
    (["play", "--seats", "-3"], "argument --seats: must be at least 0"),
    (["play", "--url", "127.0.0.1:8080"], "argument --url: not an http:// or https:// URL"),
    (["record", "-o", "c.jsonl", "--record", "abc"],
     "argument --record: not all, none or player numbers like 0,2-3: 'abc'"),
    (["record", "-o", "c.jsonl", "--mistakes", "1.5"], "argument --mistakes: must be a chance"),
    (["replay", "c.jsonl", "--speed", "0"], "argument --speed: must be above 0, not 0"),
    (["replay", "c.jsonl", "--speed", "-1"], "argument --speed: must be above 0, not -1"),
    (["replay", "c.jsonl", "--speed", "inf"], "argument --speed: not a finite number"),
    (["replay", "c.jsonl", "--fanout", "0"], "argument --fanout: must be at least 1, not 0"),
    (["replay", "c.jsonl", "--ramp", "-1"], "argument --ramp: must be 0 or more seconds"),
    (["replay", "c.jsonl", "--timeout", "0"], "argument --timeout: must be above 0"),
]


@pytest.mark.parametrize("args,says", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_an_option_out_of_range_is_one_line_and_exit_2(
        args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["loadtest", *args, "--url", NOWHERE] if "--url" not in args
             else ["loadtest", *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ttanjit loadtest {args[0]}: {says}"), err
    assert err.count("\n") == 1 and err.endswith("(--help for usage)\n"), err


@pytest.mark.parametrize("args,says", [
    (["--seed", "7"], "--seed: only for private rooms (--mode room)"),
    (["--options", '{"rounds": 1}'], "--options: only for private rooms (--mode room)"),
    (["--seed", "7", "--options", '{"rounds": 1}'], "--seed and --options: only for private"),
    (["--mode", "room", "--seats", "1"], "--mode room needs --seats of at least 2, not 1"),
])
def test_options_a_quick_match_would_ignore_are_refused(
        args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Before any player starts (nothing listens at the URL: the refusal
    comes first)."""
    assert main(["loadtest", "play", "--url", NOWHERE, "--duration", "30", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ttanjit loadtest play: {says}") and err.count("\n") == 1, err


def _report(**over: Any) -> dict[str, Any]:
    rep: dict[str, Any] = {
        "elapsed_s": 12.5, "throughput": {"frames_per_s": 3.0, "commands_per_s": 1.0},
        "rtt": {"action": {"count": 9, "p50_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0,
                           "max_ms": 3.0}},
        "counts": {"games_finished": 1}, "errors": {"not_your_turn": 3}, "disconnects": 0,
        "resumes": {}, "players": 2, "games_played": 2, "peak_in_game": 2, "failures": []}
    rep.update(over)
    return rep


def _exit(rep: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
          ) -> tuple[int, str]:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rep), encoding="utf-8")
    rc = main(["loadtest", "report", str(path)])
    return rc, capsys.readouterr().err


def test_a_run_in_which_nothing_worked_fails(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    # refusals a real player gets too (a double tap's copy, a race with the timer): a pass
    assert _exit(_report(), tmp_path, capsys) == (0, "")
    # nobody ever sat in a game: nothing was measured
    rc, err = _exit(_report(rtt={}, games_played=0, peak_in_game=0, counts={}, errors={}),
                    tmp_path, capsys)
    assert rc == 1 and err == "no player got into a game in the run's 12.5 s: it measured " \
                              "no play\n", err
    # a player seen in a game that had not ended when the run did: it played
    assert _exit(_report(rtt={}, games_played=0, counts={}), tmp_path, capsys)[0] == 0
    # a server bug
    rc, err = _exit(_report(errors={"not_your_turn": 3, "internal_error": 2}), tmp_path, capsys)
    assert rc == 1 and err.startswith("2 frame(s) answered with internal_error: a server bug")
    # a replay's report (no games_played): judged by its failures and divergences only
    replayed = _report(rtt={}, counts={}, errors={})
    del replayed["games_played"], replayed["peak_in_game"]
    assert _exit(replayed, tmp_path, capsys) == (0, "")


def test_an_interrupted_run_still_exits_130(capsys: pytest.CaptureFixture[str]) -> None:
    rep = _report(rtt={}, games_played=0, peak_in_game=0, counts={"interrupted": 1},
                  errors={"internal_error": 1})
    args = type("A", (), {"json": None, "push": None})()
    assert _finish(args, rep) == 130  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert "internal_error" in err and "no player got into a game" not in err


def test_the_progress_line_and_the_table_name_the_rate_alike() -> None:
    stats = Stats()
    stats.count.update(frames_in=10, frames_out=5)
    line = stats.progress_line()
    text = table(stats.report())
    assert " frames/s " in line and "msgs/s" not in line, line
    assert "frames/s" in text.splitlines()[0] and "msgs/s" not in text


def test_failure_lines_are_messages_each_once() -> None:
    assert plain("p3: Refused('queue refused: bad_seats (인원 수가 올바르지 않아요.)')") == \
        "p3: queue refused: bad_seats (인원 수가 올바르지 않아요.)"
    assert plain("p1#2: TimeoutError()") == "p1#2: TimeoutError"
    assert plain("p1: sign-in failed") == "p1: sign-in failed"
    assert plain("p1: Odd('a' + 'b')") == "p1: Odd('a' + 'b')"  # not a repr of one string
    lines = [f"p{i}: Refused('room_create refused: bad_option')" for i in range(20)]
    assert collapse(lines, total=500) == [
        "p0, p1, p2 and 17 more: room_create refused: bad_option",
        "(the first 20 of 500 listed)"]


# -- replay of a seeded capture against a server without test options ----------
class _RefusingConn:
    """A gateway without TTANJIT_TEST_OPTIONS=1: a seeded room_create is
    refused with bad_option (docs/websocket.md 7); what follows it too."""

    def __init__(self, base: str, stats: Any, on_frame: Any, proto: bool = False) -> None:
        self.closed = asyncio.Event()
        self.closing = False
        self.session = ""
        self.last_seq = 0

    async def connect(self) -> None:
        pass

    async def send(self, frame: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        kind = frame["type"]
        answer: dict[str, Any] = {"type": "error", "code": "not_in_game", "ref": kind}
        if kind == "hello":
            answer = {"type": "welcome", "session": "s1", "limits": {}}
        elif kind == "room_create" and "seed" in (frame.get("options") or {}):
            answer = {"type": "error", "code": "bad_option", "ref": kind,
                      "message": "방 설정 값이 올바르지 않아요."}
        elif kind == "room_join":
            answer = {"type": "error", "code": "room_not_found", "ref": kind}
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(answer)
        return fut

    async def close(self, code: int = 1000) -> None:
        self.closing = True
        self.closed.set()

    def drop(self) -> None:
        self.closed.set()


def _seeded_capture(path: Path, seed: int | None = 7) -> None:
    """Two players in a room created with the test option ``seed``, one
    move each."""
    w = CaptureWriter(path, "loadtest", game="onecard")
    opts = {"seed": seed} if seed is not None else {"rounds": 1}
    for n, first in (("p0", True), ("p1", False)):
        w.open_conn(n, nickname=n)
        w.frame(n, CLIENT, {"type": "hello", "token": "t"})
        w.frame(n, SERVER, {"type": "welcome", "seq": 1, "session": f"s_{n}"})
        if first:
            w.frame(n, CLIENT, {"type": "room_create", "game": "onecard", "seats": 2,
                                "options": opts})
            w.frame(n, SERVER, {"type": "room", "seq": 2, "room": {"code": "ABCD"}})
        else:
            w.frame(n, CLIENT, {"type": "room_join", "code": "ABCD"})
            w.frame(n, SERVER, {"type": "room", "seq": 2, "room": {"code": "ABCD"}})
    w.frame("p0", CLIENT, {"type": "room_start"})
    for n in ("p0", "p1"):
        w.frame(n, SERVER, {"type": "matched", "seq": 3, "game_id": "g1", "seat": 0})
        w.frame(n, SERVER, {"type": "view", "seq": 4, "game_id": "g1", "game_seq": 1,
                            "view": {}})
        w.frame(n, CLIENT, {"type": "action", "game_id": "g1", "cmd_id": "c1",
                            "action": {"type": "draw"}})
        w.frame(n, SERVER, {"type": "result", "seq": 5, "game_id": "g1", "cmd_id": "c1",
                            "game_seq": 2})
        w.close_conn(n, 1000, "client")
    w.close()


async def _sign_in(http: Any, base: str, nickname: str) -> dict[str, Any]:
    return {"player": nickname, "nickname": nickname, "token": "t"}


async def test_a_seeded_capture_stops_at_the_first_bad_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(replay_mod, "Conn", _RefusingConn)
    monkeypatch.setattr(replay_mod, "sign_in", _sign_in)
    path = tmp_path / "seeded.capture.jsonl"
    _seeded_capture(path)
    t0 = time.monotonic()
    report = await replay_mod.replay("http://gateway", str(path), speed=100, fanout=3,
                                     progress=0, timeout_s=20)
    assert time.monotonic() - t0 < 5  # not --timeout per player
    assert report["counts"]["player_failures"] == 1 and len(report["failures"]) == 1
    why = report["failures"][0]
    assert why.startswith("p0#") and "room_create refused: bad_option (방 설정" in why, why
    assert "--seed needs a server started with TTANJIT_TEST_OPTIONS=1" in why
    assert "interrupted" not in report["counts"]
    args = type("A", (), {"json": None, "push": None})()
    assert _finish(args, report) == 1  # type: ignore[arg-type]
    assert "TTANJIT_TEST_OPTIONS=1" in capsys.readouterr().err


async def test_an_unseeded_room_refused_is_a_divergence_not_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Only the seed's refusal ends a replay: another refused room is one
    more divergence, as before (the player waiting for its game waits out
    the 1 s timeout: its progress lines name the rate as the table does)."""
    monkeypatch.setattr(replay_mod, "Conn", _RefusingConn)
    monkeypatch.setattr(replay_mod, "sign_in", _sign_in)
    path = tmp_path / "plain.capture.jsonl"
    _seeded_capture(path, seed=None)
    report = await replay_mod.replay("http://gateway", str(path), speed=100, progress=0.2,
                                     timeout_s=1)
    assert report["failures"] == [] and report["divergences"]
    err = capsys.readouterr().err
    assert " frames/s " in err and "msgs/s" not in err, err


class _TokenRefusingConn(_RefusingConn):
    """A gateway that does not take the sign-in's token (another
    TTANJIT_TOKEN_SECRET behind the same address): every hello refused."""

    async def send(self, frame: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        if frame["type"] != "hello":
            return await super().send(frame)
        fut = asyncio.get_running_loop().create_future()
        fut.set_result({"type": "error", "code": "bad_token", "ref": "hello",
                        "message": "로그인 정보가 올바르지 않아요. 다시 시작해 주세요.",
                        "server_ms": time.time() * 1000})
        return fut


async def test_a_replay_whose_hellos_are_refused_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Load tester audit: behind a gateway that refused every hello, replay
    sent every captured frame unauthenticated, timed the refusals as round
    trips and exited 0. Each player fails at its hello, once per reason
    with the likely cause, and the run exits 1."""
    monkeypatch.setattr(replay_mod, "Conn", _TokenRefusingConn)
    monkeypatch.setattr(replay_mod, "sign_in", _sign_in)
    path = tmp_path / "plain.capture.jsonl"
    _seeded_capture(path, seed=None)
    report = await replay_mod.replay("http://gateway", str(path), speed=100, fanout=3,
                                     progress=0, timeout_s=2)
    assert report["counts"]["player_failures"] == 6
    assert "action" not in report["rtt"]
    args = type("A", (), {"json": None, "push": None})()
    assert _finish(args, report) == 1  # type: ignore[arg-type]
    assert re.fullmatch(r"p\d#\d, p\d#\d, p\d#\d and 3 more: hello refused: bad_token \(.+\); .+",
                        report["failures"][0]), report["failures"]
    assert "share TTANJIT_TOKEN_SECRET" in report["failures"][0] and len(report["failures"]) == 1
    assert "server_ms" not in capsys.readouterr().err


def test_what_a_run_would_write_or_replay_is_checked_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Load tester audit, each one line and exit 2 before any player starts:
    --json to a folder that is not there (a traceback after the whole run);
    --record of no player among -n (it recorded nobody, and the capture
    "replayed" with exit 0, --strict too); a capture with no player; a
    --ramp longer than the run (players still to start were reported);
    --local with a --url it did not use."""
    def says(*args: str) -> str:
        assert main(["loadtest", *args]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        return err
    assert "cannot write the report /nowhere/r.json: No such file or directory" in says(
        "play", "--url", NOWHERE, "--duration", "30", "--json", "/nowhere/r.json")
    assert "--record 5: no such player among -n 2 (0–1)" in says(
        "record", "--url", NOWHERE, "-n", "2", "--record", "5", "-o", str(tmp_path / "c.jsonl"))
    empty = tmp_path / "empty.jsonl"
    CaptureWriter(empty, "loadtest", game="onecard").close()
    assert f"{empty} holds no player's frames: nothing to replay" in says(
        "replay", str(empty), "--url", NOWHERE, "--strict")
    assert "--ramp 60 s is longer than --duration 12 s" in says(
        "play", "--url", NOWHERE, "-n", "40", "--ramp", "60", "--duration", "12")
    # --local with --url played against the local stack, the URL unused
    assert "give --url or --local, not both" in says("play", "--local", "--url", NOWHERE)
