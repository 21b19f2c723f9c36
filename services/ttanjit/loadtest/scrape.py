"""Reading the services during a load test: Prometheus histograms from
``/metrics`` (quantiles of the difference between two scrapes) and CPU time
of local processes from ``/proc``."""

from __future__ import annotations

import os
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

Buckets = dict[float, float]  # upper bound -> cumulative count


def scrape(url: str, name: str) -> Buckets:
    """The cumulative buckets of histogram ``name`` (all label sets summed)."""
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    out: Buckets = {}
    for fam in text_string_to_metric_families(text):
        if fam.name != name:
            continue
        for s in fam.samples:
            if s.name == name + "_bucket":
                le = float(s.labels["le"])
                out[le] = out.get(le, 0.0) + s.value
    return out


def quantile(before: Buckets, after: Buckets, q: float) -> float | None:
    """The q-quantile (seconds) of the observations between two scrapes,
    interpolated linearly inside its bucket; None without observations."""
    bounds = sorted(after)
    cum = [after[b] - before.get(b, 0.0) for b in bounds]
    if not cum or cum[-1] <= 0:
        return None
    rank = q * cum[-1]
    lower, below = 0.0, 0.0
    for b, c in zip(bounds, cum, strict=True):
        if c >= rank:
            if b == float("inf"):
                return lower
            inside = c - below
            return lower + (b - lower) * ((rank - below) / inside if inside else 1.0)
        lower, below = b, c
    return bounds[-1]


def count(before: Buckets, after: Buckets) -> float:
    inf = float("inf")
    return after.get(inf, 0.0) - before.get(inf, 0.0)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0
