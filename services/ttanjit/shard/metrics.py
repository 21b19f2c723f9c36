"""The shard's Prometheus metrics (names fixed by docs/metrics.md)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from ttanjit.games import GAMES

_FAST = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1.0,
         2.5)

games_live = Gauge("ttanjit_shard_games_live", "Live games hosted here", ["game"])
players = Gauge("ttanjit_shard_players", "Human players seated in live games")
commands = Counter("ttanjit_shard_commands_total", "Game commands by result",
                   ["game", "result"])
command_latency = Histogram("ttanjit_shard_command_latency_seconds",
                            "NATS command request in -> reply out", buckets=_FAST)
timer_lag = Histogram("ttanjit_shard_timer_lag_seconds", "Timer fired minus due",
                      buckets=(0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02,
                               0.03, 0.05, 0.1, 0.25, 0.5, 1.0))
record_append = Histogram("ttanjit_shard_record_append_seconds",
                          "Write-ahead append to the record stream (publish -> ack)",
                          buckets=_FAST)
record_append_failures = Counter("ttanjit_shard_record_append_failures_total",
                                 "Record appends that failed (NATS away, no stream leader, a "
                                 "timeout); a fenced one is an ownership loss")
claims = Counter("ttanjit_shard_ownership_claims_total", "Games claimed", ["reason"])
losses = Counter("ttanjit_shard_ownership_losses_total", "Games lost to another owner")
handovers = Counter("ttanjit_shard_handovers_total", "Games handed over", ["direction"])
bot_request = Histogram("ttanjit_shard_bot_request_seconds", "Bot decision round trip",
                        ["game"], buckets=_FAST)
bot_timeouts = Counter("ttanjit_shard_bot_request_timeouts_total",
                       "Bot requests without a timely answer", ["game"])
draining = Gauge("ttanjit_shard_draining", "1 while draining")
links_dropped = Counter("ttanjit_shard_links_dropped_total",
                        "Gateway links this shard dropped (shard/link.py)", ["why"])
gateways_gone = Counter("ttanjit_shard_gateways_gone_total",
                        "Gateways found gone without a word (killed): their players here "
                        "marked away (shard/gateways.py)")
players_marked_away = Counter("ttanjit_shard_players_marked_away_total",
                              "Players marked away because their gateway was gone")
unreplayable = Gauge("ttanjit_shard_unreplayable_games",
                     "Games this shard owns whose record it cannot replay (a newer release's, "
                     "an input its engine refuses, another record key's messages), and games "
                     "it would take over whose record's key it lacks: they wait, their "
                     "players held")
record_skipped = Counter(
    "ttanjit_shard_record_skipped_messages_total",
    "Messages on games' records that no shard wrote, skipped (answers some NATS user had "
    "stored there by naming the record as a request's reply subject: a gateway's password "
    "misused?), each once, by where they were found: an append's look after a refusal, or "
    "a claim's read (those after the record's last shard message, once its marker went "
    "after them)",
    ["found_at"])


def skipped_at_append(n: int) -> None:
    """Messages no shard wrote that an append went past
    (``records.append``'s ``skipped``)."""
    record_skipped.labels("append").inc(n)


games_abandoned = Counter("ttanjit_shard_games_abandoned_total",
                          "Games ended as abandoned: every human away 10 min (RULES.md 4)",
                          ["game"])

for _why in ("stalled", "backlog", "silent"):
    links_dropped.labels(_why)
for _reason in ("create", "failover", "handover"):
    claims.labels(_reason)
for _d in ("out", "in"):
    handovers.labels(_d)
for _at in ("append", "claim"):
    record_skipped.labels(_at)
for _g in GAMES:  # at 0 from the start (see the matchmaker's metrics)
    games_live.labels(_g)
    games_abandoned.labels(_g)
    bot_request.labels(_g)
    bot_timeouts.labels(_g)
    for _r in ("ok", "refused", "duplicate", "error"):
        commands.labels(_g, _r)
