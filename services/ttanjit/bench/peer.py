"""ttanjit beside a peer: the Colyseus yardstick (``../shared/anchors/colyseus``,
see its README.md) and ttanjit's own command bench (:mod:`ttanjit.bench.gateway`)
run the same table workload (1,000 players in 100 tables of 줄줄이 벌점,
``select`` commands paced at 500/s, 20 s timed after 2 s warm-up), ALTERNATELY,
two pairs (Colyseus, ttanjit, Colyseus, ttanjit), each alone on the machine.

Colyseus's figure is its one server process's CPU over the timed window per
command (measured by its load client). ttanjit's is the CPU (utime + stime from
``/proc/<pid>/stat``) of every process over exactly the timed window: the
gateway, each shard, the bot worker, the matchmaker and nats-server, split per
command into gateway, shards, gateway + shards, nats-server, matchmaker + bots
and total. The 1-minute load average at the start and end of every run tells
whether the machine was really quiet.

Targets (on the means of each system): ttanjit gateway + shards CPU <= 1.0 x
Colyseus; ttanjit incl. nats-server (gateway + shards + nats-server) <= 1.5 x;
ttanjit p99 <= 2.0 x Colyseus p99. ``--quick``: one pair, 200 players, 5 s.
The shared folder is ``<repo>/../shared``, or ``TTANJIT_SHARED_DIR``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ttanjit.bench import gateway

RATE = gateway.RATE
PAUSE_S = 5.0  # between runs: the previous run's processes are gone
# (name, label, target): the ratios of the means, ttanjit / Colyseus
TARGETS = [("cpu_gateway_shards", "ttanjit gateway+shards CPU / Colyseus CPU", 1.0),
           ("cpu_incl_nats", "ttanjit incl. nats-server CPU / Colyseus CPU", 1.5),
           ("p99", "ttanjit p99 / Colyseus p99", 2.0)]
PARTS = ["gateway", "shards", "gateway_shards", "nats_server", "matchmaker_bots", "total"]


def repo_root() -> Path:
    here = Path(__file__).resolve()
    for d in here.parents:
        if (d / "pyproject.toml").exists() and (d / "services").is_dir():
            return d
    return here.parents[3]  # services/ttanjit/bench/peer.py


def shared_dir() -> Path:
    env = os.environ.get("TTANJIT_SHARED_DIR")
    return Path(env) if env else repo_root().parent / "shared"


def anchor_script() -> Path:
    """The anchor's run.sh, or a clear error when it or npm/node is missing."""
    script = shared_dir() / "anchors" / "colyseus" / "run.sh"
    if not script.is_file():
        raise RuntimeError(f"Colyseus anchor not found: {script} does not exist "
                           "(set TTANJIT_SHARED_DIR to the shared folder)")
    for tool in ("npm", "node", "bash"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"the Colyseus anchor needs {tool}, not found on PATH")
    return script


def process_cpu(pids: dict[str, int]) -> dict[str, float]:
    """User + system CPU seconds of each process now (from /proc/<pid>/stat)."""
    return {name: gateway.cpu_seconds(pid) for name, pid in pids.items()}


def group(name: str) -> str:
    """The part a ttanjit process's CPU counts to."""
    if name == "gateway" or name.startswith("gateway-"):
        return "gateway"
    if name.startswith("shard"):
        return "shards"
    if name == "nats-server" or name.startswith("nats-"):
        return "nats_server"
    if name in ("bots", "matchmaker") or name.startswith(("bots-", "matchmaker-")):
        return "matchmaker_bots"
    raise ValueError(f"process {name!r} belongs to no part")


def split_cpu(cpu_s: dict[str, float], commands: int) -> dict[str, float]:
    """CPU seconds per process over the window -> µs per command per part."""
    if commands <= 0:
        raise ValueError("no commands answered in the timed window")
    parts = dict.fromkeys(("gateway", "shards", "nats_server", "matchmaker_bots"), 0.0)
    for name, s in cpu_s.items():
        parts[group(name)] += s
    if "gateway" not in cpu_s or not any(n.startswith("shard") for n in cpu_s) \
            or "nats-server" not in cpu_s:
        raise ValueError(f"gateway, shards and nats-server all needed, got {sorted(cpu_s)}")
    us = {k: v / commands * 1e6 for k, v in parts.items()}
    us["gateway_shards"] = us["gateway"] + us["shards"]
    us["total"] = sum(cpu_s.values()) / commands * 1e6
    return {k: round(us[k], 1) for k in PARTS}


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_colyseus(players: int, seconds: float) -> dict[str, Any]:
    script = anchor_script()
    la0 = load_avg()
    with tempfile.TemporaryDirectory(prefix="ttanjit-bench-peer-") as tmp:
        out = Path(tmp) / "colyseus.json"
        p = subprocess.run(["bash", str(script), str(out), str(players), str(int(seconds)),
                            str(RATE)], capture_output=True, text=True,
                           timeout=300 + seconds)
        for line in p.stdout.splitlines()[:-1]:  # the last line is the JSON
            print(f"  colyseus:{line}", flush=True)
        text = out.read_text().strip() if out.exists() else ""
        log = (Path(f"{out}.server.log").read_text() if Path(f"{out}.server.log").exists()
               else "")
        try:
            res = json.loads(text.splitlines()[-1])
        except (IndexError, ValueError):
            res = None
        if p.returncode != 0 or not res:
            raise RuntimeError(f"Colyseus anchor failed (exit {p.returncode}): "
                               f"{(p.stdout + p.stderr)[-800:]} server log: {log[-400:]}")
    la1 = load_avg()
    cpu = float(res["server_cpu_us_per_command"])
    return {"system": "colyseus", "load_avg_start": la0, "load_avg_end": la1,
            "cpu_us": {"total": cpu, "gateway_shards": cpu},  # one process does it all
            "p50_ms": res["loaded"]["p50_ms"], "p99_ms": res["loaded"]["p99_ms"],
            "n": res["loaded"]["n"], "players": res["players"],
            "reply_codes": res.get("reply_codes"), "rss_mib": res.get(
                "server_rss_mib_1000_connected"), "anchor_result": res}


def run_ttanjit(quick: bool) -> dict[str, Any]:
    la0 = load_avg()
    res = gateway.run(SimpleNamespace(quick=quick))
    la1 = load_avg()
    n = res["loaded"]["n"]
    return {"system": "ttanjit", "load_avg_start": la0, "load_avg_end": la1,
            "cpu_us": split_cpu(res["process_cpu_s"], n),
            "p50_ms": res["loaded"]["p50_ms"], "p99_ms": res["loaded"]["p99_ms"],
            "n": n, "players": res["players"], "window_s": res["window_s"],
            "process_cpu_s": res["process_cpu_s"],
            "cpu_share": round(sum(res["process_cpu_s"].values()) / res["window_s"], 3)}


def means(runs: list[dict[str, Any]], system: str) -> dict[str, Any]:
    mine = [r for r in runs if r["system"] == system]
    if not mine:
        return {}
    keys = sorted(set.intersection(*(set(r["cpu_us"]) for r in mine)))
    return {"runs": len(mine),
            "cpu_us": {k: round(statistics.fmean(r["cpu_us"][k] for r in mine), 1)
                       for k in keys},
            "p50_ms": round(statistics.fmean(r["p50_ms"] for r in mine), 3),
            "p99_ms": round(statistics.fmean(r["p99_ms"] for r in mine), 3)}


def verdict(ratio: float, target: float) -> str:
    return "met" if math.isfinite(ratio) and ratio <= target else "not met"


def compare(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Means of each system and the ttanjit / Colyseus ratios with verdicts."""
    col, tt = means(runs, "colyseus"), means(runs, "ttanjit")
    if not col or not tt:
        raise ValueError("need at least one run of each system")
    c_cpu = col["cpu_us"]["total"]
    got = {"cpu_gateway_shards": tt["cpu_us"]["gateway_shards"],
           "cpu_incl_nats": tt["cpu_us"]["gateway_shards"] + tt["cpu_us"]["nats_server"],
           "p99": tt["p99_ms"]}
    base = {"cpu_gateway_shards": c_cpu, "cpu_incl_nats": c_cpu, "p99": col["p99_ms"]}
    ratios: dict[str, Any] = {}
    for key, label, target in TARGETS:
        r = got[key] / base[key] if base[key] > 0 else float("inf")
        ratios[key] = {"label": label, "ratio": round(r, 2), "target": target,
                       "verdict": verdict(r, target)}
    info = {"cpu_total": round(tt["cpu_us"]["total"] / c_cpu, 2) if c_cpu > 0 else None,
            "p50": round(tt["p50_ms"] / col["p50_ms"], 2) if col["p50_ms"] > 0 else None}
    return {"means": {"colyseus": col, "ttanjit": tt}, "ratios": ratios,
            "ratios_no_target": info}


def _f(x: Any, nd: int = 0) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def table(runs: list[dict[str, Any]], cmp: dict[str, Any]) -> str:
    head = ("| run | system | load 1m start→end | gateway | shards | gw+shards | nats-server "
            "| mm+bots | total | p50 ms | p99 ms |")
    lines = ["CPU µs per command (server side; Colyseus: its one process)", head,
             "|" + "---|" * 11]

    def row(name: str, system: str, load: str, cpu: dict[str, float], p50: float,
            p99: float) -> str:
        cells = [_f(cpu.get(k), 0) for k in PARTS]
        return f"| {name} | {system} | {load} | " + " | ".join(cells) + \
            f" | {p50:.2f} | {p99:.2f} |"

    for i, r in enumerate(runs, 1):
        load = f"{r['load_avg_start'][0]:.2f}→{r['load_avg_end'][0]:.2f}"
        lines.append(row(str(i), r["system"], load, r["cpu_us"], r["p50_ms"], r["p99_ms"]))
    for system, m in cmp["means"].items():
        lines.append(row("mean", f"{system} ({m['runs']})", "", m["cpu_us"], m["p50_ms"],
                         m["p99_ms"]))
    lines.append("")
    for r in cmp["ratios"].values():
        lines.append(f"{r['label']}: {r['ratio']:.2f} (target <= {r['target']}) "
                     f"{r['verdict']}")
    info = cmp["ratios_no_target"]
    lines.append(f"(no target) ttanjit total CPU incl. matchmaker+bots / Colyseus: "
                 f"{_f(info['cpu_total'], 2)}; p50 / Colyseus p50: {_f(info['p50'], 2)}")
    return "\n".join(lines)


def run(args: Any) -> dict[str, Any]:
    quick = bool(getattr(args, "quick", False))
    players = 200 if quick else gateway.PLAYERS
    seconds = 5 if quick else 20
    pairs = 1 if quick else 2
    anchor_script()  # fail before anything runs when the anchor cannot
    runs: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for pair in range(pairs):
        for system in ("colyseus", "ttanjit"):
            if pair or system != "colyseus":
                time.sleep(PAUSE_S)
            print(f"  -- pair {pair + 1}/{pairs}: {system}, {players} players, {RATE}/s, "
                  f"{seconds} s, load avg {load_avg()}", flush=True)
            try:
                r = (run_colyseus(players, seconds) if system == "colyseus"
                     else run_ttanjit(quick))
                if r["players"] != players:
                    raise RuntimeError(f"{system} ran {r['players']} players, not {players}")
            except Exception as exc:  # noqa: BLE001 - one failed run; the others still run
                traceback.print_exc()
                failed.append({"pair": pair + 1, "system": system, "error": repr(exc)})
                print(f"  -- {system} run FAILED: {exc!r}", flush=True)
                continue
            runs.append(r)
    out: dict[str, Any] = {"players": players, "seconds": seconds, "rate_per_s": RATE,
                           "shared_dir": str(shared_dir()), "runs": runs}
    if failed:
        out["failed_runs"] = failed
    try:
        cmp = compare(runs)
    except ValueError as exc:
        raise RuntimeError(f"no comparison: {exc}; failed runs: {failed}") from exc
    print(table(runs, cmp), flush=True)
    if failed:  # the table above is of the runs that finished; the section fails
        verdicts = {k: (v["ratio"], v["verdict"]) for k, v in cmp["ratios"].items()}
        raise RuntimeError(f"{len(failed)} run(s) failed: {failed}; the others' ratios: "
                           f"{verdicts}")
    return {**out, **cmp}
