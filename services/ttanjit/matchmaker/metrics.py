"""Matchmaker metrics, names from docs/metrics.md."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from ttanjit.games import GAMES

TICKETS_WAITING = Gauge("ttanjit_mm_tickets_waiting", "Quick-match tickets waiting", ["game"])
MATCH_WAIT = Histogram("ttanjit_mm_match_wait_seconds", "Time from ticket to match", ["game"],
                       buckets=(0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120))
MATCHES = Counter("ttanjit_mm_matches_total", "Games made", ["game", "kind"])
BOT_BACKFILLS = Counter("ttanjit_mm_bot_backfills_total", "Quick matches filled with bots",
                        ["game"])
ROOMS_OPEN = Gauge("ttanjit_mm_rooms_open", "Private rooms open")
PLACEMENT_FAILURES = Counter("ttanjit_mm_placement_failures_total",
                             "CreateGame calls that failed (each is retried elsewhere)")
LEADER = Gauge("ttanjit_mm_leader", "1 on the matchmaker replica that leads the lobby")
FORWARDED = Counter("ttanjit_mm_forwarded_total",
                    "gRPC calls a follower replica passed on to the leader")

KINDS = ("quick", "room", "rematch")  # how a game was made (service._announce)

# every known label set at 0 from the start: dashboards show 0, not "No
# data", and rate()/increase() count the first event (a series born at 1 hides it)
for _g in GAMES:
    TICKETS_WAITING.labels(_g).set(0)
    MATCH_WAIT.labels(_g)
    BOT_BACKFILLS.labels(_g)
    for _k in KINDS:
        MATCHES.labels(_g, _k)
