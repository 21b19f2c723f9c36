"""Bot-worker metrics (docs/metrics.md, "Bot worker")."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from ttanjit.bots import GAMES, LEVELS

DECISIONS = Counter(
    "ttanjit_bot_decisions_total", "Decisions answered", ["game", "level"])
DECISION_SECONDS = Histogram(
    "ttanjit_bot_decision_seconds", "Request received -> reply sent", ["game", "level"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0, 2.5))
ERRORS = Counter(
    "ttanjit_bot_errors_total", "Requests refused or failed", ["game", "level"])
ABANDONED = Counter(
    "ttanjit_bot_abandoned_total", "Decisions dropped because their budget ran out",
    ["game", "level"])
INFLIGHT = Gauge("ttanjit_bot_inflight", "Decisions accepted and not yet answered")
CAPACITY = Gauge("ttanjit_bot_capacity", "Concurrent decisions this worker takes")


# every game and level at 0 from the start (see the matchmaker's metrics)
for _g in GAMES:
    for _level in LEVELS:
        for _family in (DECISIONS, DECISION_SECONDS, ERRORS, ABANDONED):
            _family.labels(_g, _level)
ERRORS.labels("unknown", "unknown")  # a request that is not one (bad_request)
