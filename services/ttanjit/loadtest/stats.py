"""What a load-test run measured, sans-I/O: counters, round-trip samples per
message type, and the report built from them (a dict, a terminal table, and
Prometheus text exposition for a Pushgateway)."""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict
from typing import Any

# A request frame type -> the server frame types that answer it.
ANSWERS: dict[str, tuple[str, ...]] = {
    "hello": ("welcome",),
    "ping": ("pong",),
    "queue": ("queued",),
    "cancel_queue": ("queue_cancelled",),
    "room_create": ("room",),
    "room_join": ("room",),
    "room_leave": ("room_left",),
    "room_options": ("room",),
    "room_add_bot": ("room",),
    "room_remove_bot": ("room",),
    "room_start": ("matched",),
    "sync": ("view", "game_result"),  # game_result: the game is over and gone
    "ratings": ("ratings",),
    "action": ("result", "error"),
}


def percentile(sorted_ms: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (0.0 when empty)."""
    if not sorted_ms:
        return 0.0
    k = max(0, min(len(sorted_ms) - 1, math.ceil(q / 100 * len(sorted_ms)) - 1))
    return sorted_ms[k]


def summary(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"count": len(s), "p50_ms": round(percentile(s, 50), 2),
            "p95_ms": round(percentile(s, 95), 2), "p99_ms": round(percentile(s, 99), 2),
            "max_ms": round(s[-1], 2) if s else 0.0}


# counts a run reports (and pushes) as 0 when nothing happened: a dashboard
# or an alert on them read "No data" for a clean run (load tester audit)
ZERO_COUNTS = ("games_finished", "player_failures", "client_errors", "drops", "seq_gaps",
               "game_seq_gaps", "reconnect_failures", "connections_lost", "refused_full",
               "not_admitted")
ZERO_RESUMES = ("gapless", "resync", "failed")


class Stats:
    """Shared by every simulated connection of one load-generator process."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.rtt: dict[str, list[float]] = defaultdict(list)
        self.count: Counter[str] = Counter()  # frames_in, frames_out, games_finished, …
        self.errors: Counter[str] = Counter()  # error frames by code
        self.resumes: Counter[str] = Counter()  # by resume_result (and "failed")
        self.lost: Counter[int] = Counter()  # connections lost for good, by close code
        self.connected = 0  # players with an open, welcomed connection
        self.in_game = 0  # players seated in a live game
        self._window: list[float] = []  # command round trips since the last tick
        self._tick_at = self.started
        self._tick_frames = 0

    def sample(self, kind: str, ms: float) -> None:
        self.rtt[kind].append(ms)
        if kind == "action":
            self._window.append(ms)

    def tick(self) -> dict[str, float]:
        """Figures since the previous tick (for the live progress line)."""
        now = time.monotonic()
        frames = self.count["frames_in"] + self.count["frames_out"]
        dt = max(1e-6, now - self._tick_at)
        rate = (frames - self._tick_frames) / dt
        window, self._window = sorted(self._window), []
        self._tick_at, self._tick_frames = now, frames
        return {"msgs_per_s": rate, "p99_ms": percentile(window, 99),
                "commands": float(len(window))}

    def progress_line(self) -> str:
        t = self.tick()
        return (f"[{time.monotonic() - self.started:6.1f}s] connected {self.connected:5d}  "
                f"in game {self.in_game:5d}  games finished {self.count['games_finished']:5d}  "
                f"{t['msgs_per_s']:7.0f} frames/s  command p99 {t['p99_ms']:6.1f} ms  "
                f"errors {sum(self.errors.values()):4d}")

    def report(self, **extra: Any) -> dict[str, Any]:
        elapsed = time.monotonic() - self.started
        frames = self.count["frames_in"] + self.count["frames_out"]
        out: dict[str, Any] = {
            "elapsed_s": round(elapsed, 2),
            "counts": dict(sorted(({k: 0 for k in ZERO_COUNTS} | dict(self.count)).items())),
            "throughput": {"frames_per_s": round(frames / max(elapsed, 1e-6), 1),
                           "commands_per_s": round(len(self.rtt.get("action", [])) /
                                                   max(elapsed, 1e-6), 1)},
            "rtt": {k: summary(v) for k, v in sorted(self.rtt.items())},
            "errors": dict(sorted(self.errors.items())),
            "disconnects": self.count["disconnects"],
            "resumes": dict(sorted(({k: 0 for k in ZERO_RESUMES} | dict(self.resumes)).items())),
        }
        if self.lost:
            out["connections_lost_by_code"] = {str(k): v for k, v in sorted(self.lost.items())}
        out.update(extra)
        return out


def measured(run: dict[str, Any]) -> str:
    """What a run was, in one line (neither the table nor the JSON said the
    address, the game, the pace: load tester audit)."""
    if "capture" in run:
        return (f"replay of {run['capture']} against {run['url']}: speed {run['speed']:g}x, "
                f"{run['fanout']} copies")
    think = run.get("think_ms") or [0, 0]
    return (f"{run.get('mode', 'quick')} {run.get('game')} with {run.get('seats')} seats against "
            f"{run['url']}: think {think[0]}–{think[1]} ms, ramp {run.get('ramp_s', 0):g} s, "
            f"{run.get('duration_s', 0):g} s")


def table(report: dict[str, Any]) -> str:
    """The report as a terminal table."""
    lines = [f"run: {measured(report['run'])}"] if report.get("run") else []
    lines.append(f"elapsed {report['elapsed_s']} s   frames/s {report['throughput']['frames_per_s']}"
                 f"   commands/s {report['throughput']['commands_per_s']}")
    for key in ("players", "games_finished"):
        if key in report:
            lines.append(f"{key}: {report[key]}")
    if "divergences" in report:  # with what they are of (ops trial)
        items = report["divergences"]
        unsent = sum(1 for d in items if d.get("expected") == "sent")
        checked = report.get("checked")
        lines.append(f"divergences: {len(items)}"
                     + (f" (answers compared {checked}: the same {report.get('same', 0)}, "
                        f"differing {len(items) - unsent}; steps not sent {unsent})"
                        if checked is not None else ""))
    lines.append("")
    lines.append("round trips, from a frame sent to its answer:")
    lines.append(f"{'message':<16}{'count':>8}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}"
                 f"{'max ms':>10}")
    for kind, s in report["rtt"].items():
        lines.append(f"{kind:<16}{s['count']:>8}{s['p50_ms']:>10.1f}{s['p95_ms']:>10.1f}"
                     f"{s['p99_ms']:>10.1f}{s['max_ms']:>10.1f}")
    lines.append("")
    counts = ", ".join(f"{k} {v}" for k, v in report["counts"].items())
    lines.append(f"counts: {counts or '-'}")
    # the players' side: what the gateway counts as frames_in, they send (ops trial)
    lines.append("  (frames_out: sent by the simulated players, frames_in: received by them)")
    errors = ", ".join(f"{k} {v}" for k, v in report["errors"].items())
    lines.append(f"errors: {errors or '-'}")
    lines.append(f"disconnects: {report['disconnects']}   resumes: "
                 + (", ".join(f"{k} {v}" for k, v in report["resumes"].items()) or "-"))
    return "\n".join(lines)


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prometheus_text(report: dict[str, Any], run: str = "") -> str:
    """The report in the Prometheus text exposition format (a Pushgateway
    groups it under ``job``; ``run`` is a label on every sample)."""
    lab = f'run="{_esc(run)}"' if run else ""

    def labels(**kw: str) -> str:
        parts = [lab] if lab else []
        parts += [f'{k}="{_esc(v)}"' for k, v in kw.items()]
        return "{" + ",".join(parts) + "}" if parts else ""

    out = ["# TYPE ttanjit_loadtest_rtt_seconds gauge"]
    for kind, s in report["rtt"].items():
        for q, quantile in (("50", "0.5"), ("95", "0.95"), ("99", "0.99")):
            out.append(f"ttanjit_loadtest_rtt_seconds{labels(type=kind, quantile=quantile)} "
                       f"{s['p' + q + '_ms'] / 1000:.6f}")
    out.append("# TYPE ttanjit_loadtest_messages gauge")
    for kind, s in report["rtt"].items():
        out.append(f"ttanjit_loadtest_messages{labels(type=kind)} {s['count']}")
    out.append("# TYPE ttanjit_loadtest_count gauge")
    for key, v in report["counts"].items():
        out.append(f"ttanjit_loadtest_count{labels(what=key)} {v}")
    out.append("# TYPE ttanjit_loadtest_errors gauge")
    for code, v in report["errors"].items():
        out.append(f"ttanjit_loadtest_errors{labels(code=code)} {v}")
    out.append("# TYPE ttanjit_loadtest_resumes gauge")
    for result, v in report["resumes"].items():
        out.append(f"ttanjit_loadtest_resumes{labels(result=result)} {v}")
    if report.get("connections_lost_by_code"):
        out.append("# TYPE ttanjit_loadtest_connections_lost gauge")
        for code, v in report["connections_lost_by_code"].items():
            out.append(f"ttanjit_loadtest_connections_lost{labels(code=code)} {v}")
    out.append("# TYPE ttanjit_loadtest_frames_per_second gauge")
    out.append(f"ttanjit_loadtest_frames_per_second{labels()} "
               f"{report['throughput']['frames_per_s']}")
    if "divergences" in report:
        out.append("# TYPE ttanjit_loadtest_divergences gauge")
        out.append(f"ttanjit_loadtest_divergences{labels()} {len(report['divergences'])}")
    return "\n".join(out) + "\n"


def push(url: str, report: dict[str, Any], job: str = "ttanjit_loadtest", run: str = "") -> int:
    """PUT the report to a Prometheus Pushgateway (``url`` = its base URL);
    the HTTP status code. The group is the job and, when given, the run: a
    run's push replaces that run's figures only (a PUT replaces its whole
    group, so runs pushed under the job alone replaced each other)."""
    import base64

    import httpx

    target = f"{url.rstrip('/')}/metrics/job/{job}"
    if run:  # any characters, '/' too: the Pushgateway's base64 form of a label value
        target += "/run@base64/" + base64.urlsafe_b64encode(run.encode()).decode()
    r = httpx.put(target, content=prometheus_text(report, run).encode(),
                  headers={"Content-Type": "text/plain; version=0.0.4"}, timeout=10)
    return r.status_code

