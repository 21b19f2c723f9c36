"""Gateway metrics, names from docs/metrics.md."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

CONNECTIONS = Gauge("ttanjit_gateway_connections", "Open WebSockets")
FRAMES_IN = Counter("ttanjit_gateway_frames_in_total", "Client frames by type", ["type"])
FRAMES_OUT = Counter("ttanjit_gateway_frames_out_total", "Server frames by type", ["type"])
COMMAND_RTT = Histogram("ttanjit_gateway_command_rtt_seconds",
                        "Game command: WebSocket in to reply out",
                        buckets=(0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03,
                                 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5))
RESUMES = Counter("ttanjit_gateway_resumes_total", "Session resumes", ["result"])
# game commands by the way they reached their shard (issue 13): ``link``
# (the owner's direct link) or ``nats`` (finding the owner, or the fallback)
SHARD_PATH = Counter("ttanjit_gateway_shard_commands_total",
                     "Game commands sent to shards, by path", ["path"])
VIA_LINK = SHARD_PATH.labels("link")
VIA_NATS = SHARD_PATH.labels("nats")
REJECTIONS = Counter("ttanjit_gateway_rejections_total", "Frames refused", ["code"])

for _r in ("gapless", "resync", "failed"):
    RESUMES.labels(_r)

# Label children cached: .labels() costs more than .inc() on the hot path.
_in: dict[str, Counter] = {}
_out: dict[str, Counter] = {}
KNOWN_IN = frozenset({"hello", "ping", "queue", "cancel_queue", "room_create", "room_join",
                      "room_leave", "room_options", "room_add_bot", "room_remove_bot",
                      "room_start", "action", "sync", "ratings"})


def frame_in(kind: str) -> None:
    if kind not in KNOWN_IN:
        kind = "unknown"  # bounded label values
    c = _in.get(kind)
    if c is None:
        c = _in[kind] = FRAMES_IN.labels(kind)
    c.inc()


def frame_out(kind: str) -> None:
    c = _out.get(kind)
    if c is None:
        c = _out[kind] = FRAMES_OUT.labels(kind)
    c.inc()
