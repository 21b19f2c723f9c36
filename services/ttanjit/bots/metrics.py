"""Bot-worker metrics (docs/metrics.md, "Bot worker")."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

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


def zero(games: tuple[str, ...], levels: tuple[str, ...]) -> None:
    """Every game and level at 0 from the start: dashboards show 0, not "No
    data", and rate()/increase() count the first error (a series born at 1
    hides it)."""
    for game in games:
        for level in levels:
            for family in (DECISIONS, DECISION_SECONDS, ERRORS, ABANDONED):
                family.labels(game, level)
    ERRORS.labels("unknown", "unknown")  # a request that is not one (bad_request)
