"""Matchmaker metrics, names from docs/metrics.md."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from ttanjit.games import GAMES

TICKETS_WAITING = Gauge("ttanjit_mm_tickets_waiting",
                        "Quick-match tickets waiting for a game (queued or being placed)",
                        ["game"])
OLDEST_TICKET = Gauge("ttanjit_mm_oldest_ticket_age_seconds",
                      "How long the longest-waiting quick-match ticket has waited (0: none)",
                      ["game"])
MATCH_WAIT = Histogram("ttanjit_mm_match_wait_seconds", "Time from ticket to match", ["game"],
                       buckets=(0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120))
MATCHES = Counter("ttanjit_mm_matches_total", "Games made", ["game", "kind"])
BOT_BACKFILLS = Counter("ttanjit_mm_bot_backfills_total", "Quick matches filled with bots",
                        ["game"])
ROOMS_OPEN = Gauge("ttanjit_mm_rooms_open", "Private rooms open")
PLACEMENT_FAILURES = Counter(
    "ttanjit_mm_placement_failures_total",
    "Game placements that failed, by reason: error (a CreateGame call failed; retried "
    "elsewhere), no_shard / draining / capacity (no shard to try: none heard from, every "
    "one draining, every other one at capacity)", ["reason"])
GATEWAYS_GONE = Counter(
    "ttanjit_mm_gateways_gone_total",
    "Gateways the lobby leader found gone without a word (killed): their players waiting "
    "in the queue or a room were told away (matchmaker/gateways.py)")
GATEWAYS_REVIVED = Counter(
    "ttanjit_mm_gateways_revived_total",
    "Gateways found gone that answered again within 2 minutes (cut off from NATS, not "
    "killed): the players told away through them are back")
LEADER = Gauge("ttanjit_mm_leader", "1 on the matchmaker replica that leads the lobby")
LOBBY_BYTES = Gauge(
    "ttanjit_mm_lobby_document_bytes",
    "Bytes of the lobby's documents as last written by the leader: head (the writer and "
    "its epoch) and largest_part (the largest of the parts that hold the lobby); a NATS "
    "message holds 1 MiB", ["document"])
FORWARDED = Counter("ttanjit_mm_forwarded_total",
                    "gRPC calls a follower replica passed on to the leader")

KINDS = ("quick", "room", "rematch")  # how a game was made (service._announce)
# why a placement failed (service.place; placement.ShardTable.why_none)
REASONS = ("error", "no_shard", "draining", "capacity")

# every known label set at 0 from the start: dashboards show 0, not "No
# data", and rate()/increase() count the first event (a series born at 1 hides it)
for _g in GAMES:
    TICKETS_WAITING.labels(_g).set(0)
    OLDEST_TICKET.labels(_g).set(0)
    MATCH_WAIT.labels(_g)
    BOT_BACKFILLS.labels(_g)
    for _k in KINDS:
        MATCHES.labels(_g, _k)
for _d in ("head", "largest_part"):
    LOBBY_BYTES.labels(_d).set(0)
for _r in REASONS:
    PLACEMENT_FAILURES.labels(_r)
