"""The pure parts of ``python -m ttanjit.bench peer`` (the anchor itself is
never run here): /proc CPU of a known busy child, the split per command, the
ratios and verdicts from given figures, and the missing-anchor error."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ttanjit.bench import peer

# The child waits for a line, then burns exactly BURN s of its own CPU
# (time.process_time), says so, and sleeps: /proc must see that much, no more.
BURN = 0.4
CHILD = (
    "import sys, time\n"
    "print('ready', flush=True)\n"
    "sys.stdin.readline()\n"
    "t0 = time.process_time()\n"
    f"while time.process_time() - t0 < {BURN}:\n"
    "    pass\n"
    "print('done', flush=True)\n"
    "sys.stdin.readline()\n"
)


def test_proc_cpu_of_a_busy_child_and_an_idle_one() -> None:
    busy = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    idle = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"],
                            stdin=subprocess.PIPE, text=True)
    try:
        assert busy.stdout is not None and busy.stdin is not None
        assert busy.stdout.readline().strip() == "ready"
        time.sleep(0.2)  # the idle child's interpreter start-up is behind us
        pids = {"busy": busy.pid, "idle": idle.pid}
        before = peer.process_cpu(pids)
        busy.stdin.write("go\n")
        busy.stdin.flush()
        assert busy.stdout.readline().strip() == "done"
        after = peer.process_cpu(pids)
        used = {k: after[k] - before[k] for k in pids}
        assert BURN - 0.02 <= used["busy"] <= BURN + 0.1, used
        assert used["idle"] <= 0.02, used
    finally:
        for p in (busy, idle):
            p.kill()
            p.wait()


def test_split_per_command_counts_every_process_once() -> None:
    cpu_s = {"gateway": 1.0, "shard-0": 0.5, "shard-1": 0.25, "bots": 0.05,
             "matchmaker": 0.15, "nats-server": 0.3}
    us = peer.split_cpu(cpu_s, 1000)
    assert us == {"gateway": 1000.0, "shards": 750.0, "gateway_shards": 1750.0,
                  "nats_server": 300.0, "matchmaker_bots": 200.0, "total": 2250.0}
    assert us["total"] == pytest.approx(
        us["gateway_shards"] + us["nats_server"] + us["matchmaker_bots"])
    with pytest.raises(ValueError, match="no part"):
        peer.split_cpu({**cpu_s, "loadgen": 9.0}, 1000)  # never dropped silently
    with pytest.raises(ValueError, match="nats-server"):
        peer.split_cpu({"gateway": 1.0, "shard-0": 1.0}, 1000)
    with pytest.raises(ValueError):
        peer.split_cpu(cpu_s, 0)


def _tt(gw: float, sh: float, nats: float, p99: float) -> dict[str, object]:
    cpu = {"gateway": gw, "shards": sh, "gateway_shards": gw + sh, "nats_server": nats,
           "matchmaker_bots": 10.0, "total": gw + sh + nats + 10.0}
    return {"system": "ttanjit", "cpu_us": cpu, "p50_ms": 1.0, "p99_ms": p99,
            "load_avg_start": [0.5, 0, 0], "load_avg_end": [1.5, 0, 0]}


def _col(cpu: float, p99: float) -> dict[str, object]:
    return {"system": "colyseus", "cpu_us": {"total": cpu, "gateway_shards": cpu},
            "p50_ms": 0.1, "p99_ms": p99, "load_avg_start": [0.2, 0, 0],
            "load_avg_end": [0.9, 0, 0]}


def test_ratios_and_verdicts_from_given_figures() -> None:
    # Colyseus means: CPU 250, p99 4; ttanjit means: gw+shards 250 (1.0 exactly:
    # met), +nats 150 -> 400 (1.6: not met), p99 8 (2.0 exactly: met)
    runs = [_col(200, 3), _tt(100, 100, 100, 6), _col(300, 5), _tt(150, 150, 200, 10)]
    cmp = peer.compare(runs)
    assert cmp["means"]["colyseus"]["cpu_us"]["total"] == 250
    assert cmp["means"]["ttanjit"]["cpu_us"]["gateway_shards"] == 250
    r = cmp["ratios"]
    assert (r["cpu_gateway_shards"]["ratio"], r["cpu_gateway_shards"]["verdict"]) == (1.0, "met")
    assert (r["cpu_incl_nats"]["ratio"], r["cpu_incl_nats"]["verdict"]) == (1.6, "not met")
    assert (r["p99"]["ratio"], r["p99"]["verdict"]) == (2.0, "met")
    assert cmp["ratios_no_target"]["cpu_total"] == round(410 / 250, 2)
    # just over a target is not met, even where rounding would show the target
    assert peer.verdict(1.004, 1.0) == "not met"
    assert peer.verdict(float("nan"), 1.0) == "not met"
    text = peer.table(runs, cmp)
    assert "not met" in text and "0.50→1.50" in text
    with pytest.raises(ValueError):
        peer.compare([_col(200, 3)])


def test_missing_anchor_fails_clearly(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TTANJIT_SHARED_DIR", str(tmp_path))
    assert peer.shared_dir() == tmp_path
    with pytest.raises(RuntimeError, match="Colyseus anchor not found"):
        peer.anchor_script()
    monkeypatch.delenv("TTANJIT_SHARED_DIR")
    assert peer.shared_dir() == peer.repo_root().parent / "shared"
    assert (peer.repo_root() / "pyproject.toml").exists()
