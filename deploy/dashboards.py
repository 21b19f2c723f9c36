"""The Grafana dashboards of deploy/grafana (helm/ttanjit/files/grafana), as code.

The JSON files are what Grafana and the chart read; this module writes them.
Edit a board here and run `python deploy/dashboards.py`; the chart tests
check that the files match (`python deploy/dashboards.py --check`).
Metric names: docs/metrics.md. Every query filters on the `$namespace`
variable and uses `$__rate_interval`; the data source is the `$datasource`
variable.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "helm" / "ttanjit" / "files" / "grafana"
DS = {"type": "prometheus", "uid": "${datasource}"}
NS = 'namespace=~"$namespace"'
RI = "$__rate_interval"
ERR = 'result="error"'
REF = 'result="refused"'


def sel(metric: str, extra: str = "") -> str:
    inner = NS + ("," + extra if extra else "")
    return f"{metric}{{{inner}}}"


def q(metric: str, extra: str = "") -> str:
    return sel(metric, extra)


def rate(metric: str, extra: str = "") -> str:
    return f"rate({sel(metric, extra)}[{RI}])"


def quant(p: float, metric: str, by: str = "", extra: str = "") -> str:
    b = "le" + ("," + by if by else "")
    return f"histogram_quantile({p}, sum by ({b}) ({rate(metric + '_bucket', extra)}))"


def templating() -> dict[str, Any]:
    return {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource",
         "query": "prometheus", "current": {}, "hide": 0, "refresh": 1,
         "regex": "", "options": []},
        {"name": "namespace", "label": "Namespace", "type": "query", "datasource": DS,
         "query": {"query": "label_values(ttanjit_shard_draining, namespace)",
                   "refId": "namespace"},
         "definition": "label_values(ttanjit_shard_draining, namespace)",
         "includeAll": True, "allValue": ".*", "multi": True, "current": {},
         "hide": 0, "refresh": 2, "sort": 1, "regex": "", "options": []},
    ]}


class Board:
    """A dashboard laid out left to right, top to bottom on Grafana's 24-column grid."""

    def __init__(self, uid: str, title: str, description: str) -> None:
        self.d: dict[str, Any] = {
            "uid": uid, "title": title, "description": description,
            "tags": ["ttanjit"], "timezone": "browser", "editable": True,
            "graphTooltip": 1, "schemaVersion": 39, "version": 1,
            "refresh": "30s", "time": {"from": "now-3h", "to": "now"},
            "templating": templating(), "annotations": {"list": []},
            "links": [], "panels": []}
        self.x = 0
        self.y = 0
        self.h = 0
        self.id = 1

    def row(self, title: str) -> None:
        if self.x:
            self.y += self.h
            self.x = 0
        self.d["panels"].append({"id": self.id, "type": "row", "title": title, "collapsed": False,
                                 "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y}, "panels": []})
        self.id += 1
        self.y += 1
        self.h = 0

    def panel(self, kind: str, title: str, desc: str, targets: list[tuple[str, str]],
              unit: str = "short", w: int = 12, h: int = 8) -> None:
        if self.x + w > 24:
            self.y += self.h
            self.x = 0
            self.h = 0
        p: dict[str, Any] = {
            "id": self.id, "type": kind, "title": title, "description": desc,
            "datasource": DS, "gridPos": {"h": h, "w": w, "x": self.x, "y": self.y},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "targets": [{"refId": chr(65 + i), "datasource": DS, "expr": e, "legendFormat": leg}
                        for i, (e, leg) in enumerate(targets)]}
        if kind == "timeseries":
            p["fieldConfig"]["defaults"]["custom"] = {"drawStyle": "line", "lineWidth": 1,
                                                      "fillOpacity": 10, "showPoints": "never"}
            p["options"] = {"legend": {"displayMode": "list", "placement": "bottom",
                                       "showLegend": True},
                            "tooltip": {"mode": "multi", "sort": "desc"}}
        else:
            p["options"] = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "",
                                              "values": False},
                            "colorMode": "value", "graphMode": "area", "textMode": "auto"}
        self.d["panels"].append(p)
        self.id += 1
        self.x += w
        self.h = max(self.h, h)

    def ts(self, title: str, desc: str, targets: list[tuple[str, str]], unit: str = "short") -> None:
        self.panel("timeseries", title, desc, targets, unit)

    def stat(self, title: str, desc: str, targets: list[tuple[str, str]]) -> None:
        self.panel("stat", title, desc, targets, w=6, h=4)


def overview() -> Board:
    b = Board("ttanjit-overview", "ttanjit / Overview",
              "Players online and in queue, live games by type and by shard, match wait.")
    b.row("Now")
    b.stat("Players online", "Open WebSockets on all gateways.",
           [(f"sum({q('ttanjit_gateway_connections')})", "online")])
    b.stat("Players in queue", "Quick-match tickets waiting, all games.",
           [(f"sum({q('ttanjit_mm_tickets_waiting')})", "waiting")])
    b.stat("Games live", "Live games on all shards.",
           [(f"sum({q('ttanjit_shard_games_live')})", "games")])
    # 0 when every shard drains, not "No data" (`count` of nothing is
    # nothing: operator audit)
    b.stat("Shards serving", "Shards reporting metrics and not draining.",
           [(f"count({q('ttanjit_shard_draining')} == 0) or vector(0)", "shards")])
    b.row("Players")
    b.ts("Players online by gateway", "Open WebSockets per gateway Pod (players online).",
         [(f"sum by (pod) ({q('ttanjit_gateway_connections')})", "{{pod}}"),
          (f"sum({q('ttanjit_shard_players')})", "seated in live games (all shards)")])
    b.ts("Players in queue by game", "Quick-match tickets waiting per game.",
         [(f"sum by (game) ({q('ttanjit_mm_tickets_waiting')})", "{{game}}")])
    b.row("Games")
    b.ts("Games live by type", "Live games per game type.",
         [(f"sum by (game) ({q('ttanjit_shard_games_live')})", "{{game}}")])
    b.ts("Games live by shard", "Live games per shard Pod: the load each shard carries.",
         [(f"sum by (pod) ({q('ttanjit_shard_games_live')})", "{{pod}}")])
    b.row("Matchmaking")
    b.ts("Match wait", "Time from joining the queue to a match (p50 and p90 per game), and "
         "how long the oldest ticket still waiting has waited (it keeps rising while no "
         "game is placed, when the quantiles have nothing to measure).",
         [(quant(0.5, "ttanjit_mm_match_wait_seconds", "game"), "p50 {{game}}"),
          (quant(0.9, "ttanjit_mm_match_wait_seconds", "game"), "p90 {{game}}"),
          (f"max by (game) ({q('ttanjit_mm_oldest_ticket_age_seconds')})",
           "oldest waiting {{game}}")], unit="s")
    b.ts("Matches and bot backfills", "Matches per second by game and kind; seats backfilled by bots.",
         [(f"sum by (game, kind) ({rate('ttanjit_mm_matches_total')})", "{{game}} {{kind}}"),
          (f"sum by (game) ({rate('ttanjit_mm_bot_backfills_total')})", "bot backfill {{game}}")],
         unit="ops")
    b.ts("Rooms open and placement failures",
         "Private rooms open; placements that failed, by reason: error = a CreateGame call "
         "failed (retried on another shard); no_shard / draining / capacity = no shard to "
         "try (none heard from, all draining, the rest at TTANJIT_CAPACITY): a match that "
         "finds none is tried again each tick while its players wait.",
         [(f"sum({q('ttanjit_mm_rooms_open')})", "rooms open"),
          (f"sum by (reason) ({rate('ttanjit_mm_placement_failures_total')})",
           "placement failures/s {{reason}}")])
    b.ts("Lobby document size",
         "Bytes of the lobby's documents as the leader last wrote them: the head (the "
         "writer and its epoch, tens of bytes) and the largest part (64 per kind: seats in "
         "games, 한 판 더 offers, started rooms, open rooms, members away, tickets, matches "
         "being placed). A NATS message holds 1 MiB; past it every lobby write fails "
         "(alert TtanjitLobbyDocumentLarge at 768 KiB).",
         [(f"max by (document) ({q('ttanjit_mm_lobby_document_bytes')})", "{{document}}")],
         unit="bytes")
    b.ts("Lobby call attempts not answered",
         "Attempts of the gateways' lobby calls that a matchmaker replica did not answer in "
         "2.5 s (deadline: frozen, partitioned, slow, or waiting for a new leader) or could "
         "not be sent to (unavailable: gone, refusing connections); the call went on to the "
         "next replica, and the gateway's later calls go there. A burst in a failover is "
         "normal; a steady rate means replicas keep failing.",
         [(f"sum by (code) ({rate('ttanjit_gateway_matchmaker_attempts_failed_total')})",
           "{{code}}")],
         unit="ops")
    return b


def shards() -> Board:
    b = Board("ttanjit-shards", "ttanjit / Game shards",
              "Command latency and errors, timer lag, record appends, failovers and handovers.")
    b.row("Commands")
    b.ts("Command latency", "Shard: NATS request in → reply out. Gateway: WebSocket command in → reply out.",
         [(quant(0.5, "ttanjit_shard_command_latency_seconds"), "shard p50"),
          (quant(0.99, "ttanjit_shard_command_latency_seconds"), "shard p99"),
          (quant(0.99, "ttanjit_gateway_command_rtt_seconds"), "gateway p99")], unit="s")
    b.ts("Command error rate", "Share of game commands that fail on the server (result=error), and refused moves.",
         [(f"sum({rate('ttanjit_shard_commands_total', ERR)}) / sum({rate('ttanjit_shard_commands_total')})", "error"),
          (f"sum({rate('ttanjit_shard_commands_total', REF)}) / sum({rate('ttanjit_shard_commands_total')})", "refused")],
         unit="percentunit")
    b.ts("Commands by result", "Game commands per second by game and result.",
         [(f"sum by (game, result) ({rate('ttanjit_shard_commands_total')})", "{{game}} {{result}}")], unit="ops")
    b.ts("Gateway rejections", "Client frames the gateway rejected, by error code.",
         [(f"sum by (code) ({rate('ttanjit_gateway_rejections_total')})", "{{code}}")], unit="ops")
    b.row("Clocks and records")
    b.ts("Timer lag", "Turn timers: fired minus due (p50, p99 per shard). Target p99 ≤ 20 ms.",
         [(quant(0.5, "ttanjit_shard_timer_lag_seconds"), "p50"),
          (quant(0.99, "ttanjit_shard_timer_lag_seconds", "pod"), "p99 {{pod}}")], unit="s")
    b.ts("Record append latency", "Write-ahead appends to the JetStream record stream (p50, p99); failures per second.",
         [(quant(0.5, "ttanjit_shard_record_append_seconds"), "p50"),
          (quant(0.99, "ttanjit_shard_record_append_seconds"), "p99"),
          (f"sum by (pod) ({rate('ttanjit_shard_record_append_failures_total')})", "failures/s {{pod}}")], unit="s")
    b.row("Ownership")
    b.ts("Failovers and handovers", "Games claimed by reason (create, failover, handover) and handed over by direction.",
         [(f"sum by (reason) ({rate('ttanjit_shard_ownership_claims_total')})", "claim {{reason}}"),
          (f"sum by (direction) ({rate('ttanjit_shard_handovers_total')})", "handover {{direction}}"),
          (f"sum({rate('ttanjit_shard_ownership_losses_total')})", "leases lost")], unit="ops")
    b.ts("Shard links closed",
         "Gateways' direct links to shards, as their gateways saw them close: bye = a shard "
         "stopped (a drain) and said so, nothing lost; lost = dropped by the shard or broken "
         "(a shard killed); dropped = the gateway dropped it (the shard said nothing for 6 s: "
         "frozen or cut off). Unless bye, the gateway synced its players in that shard's games. "
         "Shard side: the links shards dropped, by why (silent gateway, stalled = it read "
         "nothing, backlog = it read too slowly).",
         [(f"sum by (how) ({rate('ttanjit_gateway_shard_links_closed_total')})", "{{how}}"),
          (f"sum by (why) ({rate('ttanjit_shard_links_dropped_total')})", "shard dropped: {{why}}")],
         unit="ops")
    b.ts("Draining shards", "1 while a shard drains (scale-down, upgrade, node drain).",
         [(f"max by (pod) ({q('ttanjit_shard_draining')})", "{{pod}}")])
    b.row("Games")
    b.ts("Games abandoned", "Games ended because every human seat was away 10 minutes in a row "
         "(RULES.md 4): finished unrated and freed from the shard. Per interval, by game.",
         [(f"sum by (game) (increase({sel('ttanjit_shard_games_abandoned_total')}[{RI}]))",
           "{{game}}")])
    b.row("Gateways")
    b.ts("Resumes", "Session resumes by result (gapless, resync, failed).",
         [(f"sum by (result) ({rate('ttanjit_gateway_resumes_total')})", "{{result}}")], unit="ops")
    b.ts("Connecting", "A WebSocket accepted to its welcome (p50, p99): what a player waits "
         "for on connecting or resuming. Seconds after another gateway's crash, while its "
         "players come back here all at once (a reconnect herd).",
         [(quant(0.5, "ttanjit_gateway_hello_seconds"), "p50"),
          (quant(0.99, "ttanjit_gateway_hello_seconds"), "p99")], unit="s")
    b.ts("Refused: full", "Hellos refused per second at a gateway's most players "
         "(gateway.maxConnections: server_full, close 1013), per gateway: players kept out, "
         "their clients trying again in 2.5–30 s. A minute of them after another gateway is "
         "lost is the cap at work; more is too few gateways (alert TtanjitGatewaysFull).",
         [(f"sum by (pod) ({rate('ttanjit_gateway_connections_refused_total')})", "{{pod}}")],
         unit="ops")
    b.ts("Event loop lag", "How late each gateway's once-a-second sweep woke (p50, p99 per "
         "gateway): every frame of every player there waits behind it. High under a "
         "reconnect herd, long GC passes or a CPU limit reached.",
         [(quant(0.5, "ttanjit_gateway_event_loop_lag_seconds"), "p50"),
          (quant(0.99, "ttanjit_gateway_event_loop_lag_seconds", "pod"), "p99 {{pod}}")],
         unit="s")
    b.ts("Gateways gone", "Gateways found gone without a word (killed, OOM-killed, their node "
         "lost), per interval: by the shards, which marked their players in games away (one "
         "gateway counts once for each shard that had its players), and by the lobby leader, "
         "which told their queued and room players away (docs/protocol.md 2.1, 4.1). Not "
         "counted for a gateway that stopped on SIGTERM.",
         [(f"sum(increase({sel('ttanjit_shard_gateways_gone_total')}[{RI}]))", "shards"),
          (f"sum(increase({sel('ttanjit_mm_gateways_gone_total')}[{RI}]))", "lobby")])
    b.ts("WebSocket frames", "Frames in and out per second by type.",
         [(f"sum by (type) ({rate('ttanjit_gateway_frames_in_total')})", "in {{type}}"),
          (f"sum by (type) ({rate('ttanjit_gateway_frames_out_total')})", "out {{type}}")], unit="ops")
    return b


def bots() -> Board:
    b = Board("ttanjit-bots", "ttanjit / Bots",
              "Bot decision latency, pool saturation (in flight / capacity), errors and timeouts.")
    b.row("Pool")
    b.ts("Pool saturation", "Decisions in flight over the pool's capacity (all workers). Alert at 90%.",
         [(f"sum({q('ttanjit_bot_inflight')}) / sum({q('ttanjit_bot_capacity')})", "in flight / capacity")],
         unit="percentunit")
    b.ts("In flight and capacity", "Concurrent decisions per worker and the pool's total capacity.",
         [(f"sum by (pod) ({q('ttanjit_bot_inflight')})", "in flight {{pod}}"),
          (f"sum({q('ttanjit_bot_capacity')})", "capacity")])
    b.row("Decisions")
    b.ts("Decision latency", "Time a worker takes for one decision (p50, p99) by game and level.",
         [(quant(0.5, "ttanjit_bot_decision_seconds", "game, level"), "p50 {{game}} {{level}}"),
          (quant(0.99, "ttanjit_bot_decision_seconds", "game, level"), "p99 {{game}} {{level}}")], unit="s")
    b.ts("Decisions and errors", "Decisions per second, errors and abandoned decisions (budget ran out, no reply) by game and level.",
         [(f"sum by (game, level) ({rate('ttanjit_bot_decisions_total')})", "{{game}} {{level}}"),
          (f"sum by (game, level) ({rate('ttanjit_bot_errors_total')})", "errors {{game}} {{level}}"),
          (f"sum by (game, level) ({rate('ttanjit_bot_abandoned_total')})", "abandoned {{game}} {{level}}")], unit="ops")
    b.ts("Shard → bot request latency", "Seen from the shards: bot request to reply (p99) by game.",
         [(quant(0.99, "ttanjit_shard_bot_request_seconds", "game"), "p99 {{game}}")], unit="s")
    b.ts("Bot request timeouts", "Bot requests the shards gave up on (the game's timeout rule acted).",
         [(f"sum by (game) ({rate('ttanjit_shard_bot_request_timeouts_total')})", "{{game}}")], unit="ops")
    return b


BOARDS = {
    "ttanjit-overview.json": overview,
    "ttanjit-shards.json": shards,
    "ttanjit-bots.json": bots,
}


def render() -> dict[str, str]:
    """File name → JSON text of every dashboard."""
    return {name: json.dumps(build().d, indent=2, ensure_ascii=False) + "\n"
            for name, build in BOARDS.items()}


def main(argv: list[str]) -> int:
    stale = [name for name, text in render().items()
             if not (OUT / name).is_file() or (OUT / name).read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for name in stale:
            print(f"{OUT / name} is not what deploy/dashboards.py writes", file=sys.stderr)
        return 1 if stale else 0
    for name, text in render().items():
        (OUT / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
