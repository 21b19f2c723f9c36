"""`ttanjit` subcommands on input they cannot use (a new-user trial): one
line on stderr and a non-zero exit, never a traceback, and before any work
is done (``simulate --write-record`` to a folder that is not there ran its
games first); ``--help`` names every subcommand; ``ladder`` says how far it
is while it runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ttanjit.common.natsserver import free_port

NO_DIR = "/nonexistent-ttanjit-dir"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttanjit", *args], capture_output=True,
                          text=True, timeout=60, encoding="utf-8")


def one_line(proc: subprocess.CompletedProcess[str], rc: int, starts: str) -> None:
    assert proc.returncode == rc, proc
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(starts), proc.stderr


def test_record_to_a_folder_that_is_not_there() -> None:
    """Found out before NATS is asked (nothing listens at --nats here: the
    answer is about the file, not the server)."""
    proc = run("record", "g1", "-o", f"{NO_DIR}/g.json", "--nats",
               f"nats://127.0.0.1:{free_port()}")
    one_line(proc, 2, f"ttanjit record: cannot write {NO_DIR}/g.json: No such file")
    assert proc.stdout == ""


def test_simulate_checks_its_record_file_before_the_games(tmp_path: Path) -> None:
    proc = run("simulate", "--game", "onecard", "--games", "1", "--write-record",
               f"{NO_DIR}/x.json")
    one_line(proc, 2, f"ttanjit simulate: cannot write {NO_DIR}/x.json: No such file")
    assert proc.stdout == ""  # no summary: the games did not run
    # a file that is there is written as before; a check leaves no file behind on a refusal
    rec = tmp_path / "last.json"
    assert run("simulate", "--game", "onecard", "--games", "1", "--write-record",
               str(rec)).returncode == 0 and json.loads(rec.read_text())["inputs"]
    gone = tmp_path / "gone.json"
    proc = run("simulate", "--game", "onecard", "--games", "1", "--seats", "9",
               "--write-record", str(gone))
    assert proc.returncode == 2 and not gone.exists()


@pytest.mark.parametrize("cmd", ["simulate", "ladder"])
@pytest.mark.parametrize("options", ["[1]", "7", '"x"', "null"])
def test_options_must_be_a_json_object(cmd: str, options: str) -> None:
    proc = run(cmd, "--game", "onecard", "--games", "1", "--options", options)
    one_line(proc, 2, f"ttanjit {cmd}: --options must be a JSON object")


def test_replay_of_a_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00binary")
    proc = run("replay", str(path))
    one_line(proc, 2, f"ttanjit replay: {path} is not a record: not UTF-8 text")


@pytest.mark.parametrize("args,says", [
    (["simulate", "--game", "onecard", "--games", "0"], "argument --games: must be at least 1"),
    (["ladder", "--game", "onecard", "--games", "-3"], "argument --games: must be at least 1"),
    (["ladder", "--game", "onecard", "--budget-ms", "0"], "argument --budget-ms: must be"),
    (["drain", "--timeout", "-1"], "argument --timeout: must be at least 0"),
    (["simulate", "--game", "poker"], "argument --game: invalid choice: 'poker'"),
])
def test_bad_arguments_are_one_line_without_the_usage_block(args: list[str], says: str) -> None:
    one_line(run(*args), 2, f"ttanjit {args[0]}: {says}")


def test_help_names_every_subcommand() -> None:
    """The description said "(more subcommands join as the services land:
    ladder, loadtest)" long after they had."""
    proc = run("--help")
    assert proc.returncode == 0
    about = " ".join(proc.stdout.split("positional arguments")[0].split("\n")[2:])
    assert "replay, simulate, ladder, record, drain and loadtest" in " ".join(about.split())
    assert "more subcommands join" not in proc.stdout


def test_ladder_says_how_far_it_is() -> None:
    proc = run("ladder", "--game", "onecard", "--games", "40", "--no-mixed",
               "--pairs", "easy:random,random:easy", "--progress-s", "0.01", "--json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines and all(ln.startswith("ttanjit ladder: ") and "/80 games (" in ln
                         for ln in lines), lines
    assert lines[-1].startswith("ttanjit ladder: 80/80 games")
    assert len(json.loads(proc.stdout)) == 2  # the tables, one per pair
