"""Gateway metrics, names from docs/metrics.md."""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from prometheus_client import Counter, Gauge, Histogram

CONNECTIONS = Gauge("ttanjit_gateway_connections", "Open WebSockets")
# hellos refused at the gateway's most players (TTANJIT_MAX_CONNECTIONS):
# players kept out, their clients trying again a few seconds later
REFUSED_FULL = Counter("ttanjit_gateway_connections_refused_total",
                       "Hellos refused: the gateway held its most players (close 1013)")
# connections closed for sending no whole request (headers and body) within
# the hello timeout (__main__.request_within): idle or slowloris sockets
NO_REQUEST = Counter("ttanjit_gateway_connections_without_request_total",
                     "Connections closed: no whole request within the hello timeout")
# sockets closed because the refresh family that signed them in was
# removed (로그아웃, a stolen copy used, expired): close 4004
SIGNED_OUT = Counter("ttanjit_gateway_signed_out_total",
                     "WebSockets closed: their sign-in's refresh family was removed")
FRAMES_IN = Counter("ttanjit_gateway_frames_in_total", "Client frames by type", ["type"])
FRAMES_OUT = Counter("ttanjit_gateway_frames_out_total", "Server frames by type", ["type"])
COMMAND_RTT = Histogram("ttanjit_gateway_command_rtt_seconds",
                        "Game command: WebSocket in to reply out",
                        buckets=(0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03,
                                 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5))
RESUMES = Counter("ttanjit_gateway_resumes_total", "Session resumes", ["result"])
# a socket accepted to its ``welcome`` written: what a player waits for on
# (re)connecting — seconds under a reconnect herd (overload audit: 6,000
# players resuming at once waited 13 s at the median, which nothing showed)
HELLO = Histogram("ttanjit_gateway_hello_seconds", "WebSocket accepted to welcome sent",
                  buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30))
# how late the gateway's once-a-second sweep woke: the event loop's lag
# (every frame of every player waits behind it; a reconnect herd, a long GC
# pass, a CPU limit reached)
LOOP_LAG = Histogram("ttanjit_gateway_event_loop_lag_seconds",
                     "How late a 1 s sleep of the gateway's event loop woke",
                     buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
# game commands by the way they reached their shard (issue 13): ``link``
# (the owner's direct link) or ``nats`` (finding the owner, or the fallback)
SHARD_PATH = Counter("ttanjit_gateway_shard_commands_total",
                     "Game commands sent to shards, by path", ["path"])
VIA_LINK = SHARD_PATH.labels("link")
VIA_NATS = SHARD_PATH.labels("nats")
# a lobby call's attempt that a matchmaker replica did not answer in 2.5 s
# (``deadline``: frozen, partitioned, slow, or waiting for a new leader in a
# failover) or could not be sent to (``unavailable``: the replica is gone or
# refuses connections); the call went on to the next replica, if it had time
# left (grpcutil.Retrying)
MM_FAILED = Counter("ttanjit_gateway_matchmaker_attempts_failed_total",
                    "Matchmaker call attempts a replica did not answer", ["code"])
_MM_CODES = {grpc.StatusCode.DEADLINE_EXCEEDED: MM_FAILED.labels("deadline"),
             grpc.StatusCode.UNAVAILABLE: MM_FAILED.labels("unavailable")}
# shard links closed (docs/protocol.md 1.1; gateway.link.Links.lost): ``bye``
# (the shard stopped, nothing lost), ``lost`` (dropped by the shard, or
# broken) or ``dropped`` (by the gateway: the shard went silent); but for a
# bye the players in that shard's games are synced
LINKS_CLOSED = Counter("ttanjit_gateway_shard_links_closed_total",
                       "Shard links closed, by how", ["how"])
REJECTIONS = Counter("ttanjit_gateway_rejections_total", "Frames refused", ["code"])
UNNAMED_PROXY = Counter("ttanjit_gateway_unnamed_proxy_requests_total",
                        "HTTP requests with X-Forwarded-For from a peer "
                        "TTANJIT_FORWARDED_ALLOW_IPS does not name")

for _r in ("gapless", "resync", "failed"):
    RESUMES.labels(_r)
for _how in ("bye", "lost", "dropped"):
    LINKS_CLOSED.labels(_how)

# Label children cached: .labels() costs more than .inc() on the hot path.
_in: dict[str, Counter] = {}
_out: dict[str, Counter] = {}
# frames counted before (or instead of) their own type: bounded label values
REFUSED_IN = ("too_large", "rate_limited", "bad", "unknown")


def frame_in(kind: str) -> None:
    """Count a client frame: its type (one the gateway handles) or one of
    ``REFUSED_IN``."""
    c = _in.get(kind)
    if c is None:
        c = _in[kind] = FRAMES_IN.labels(kind)
    c.inc()


def zero(frame_types: Iterable[str], codes: Iterable[str]) -> None:
    """Every known client frame type and refusal code at 0 from the start: a
    dashboard shows 0 rather than "No data", and ``rate``/``increase`` see
    the first one (a series born at 1 hides it)."""
    for kind in (*frame_types, *REFUSED_IN):
        _in.setdefault(kind, FRAMES_IN.labels(kind))
    for code in codes:
        REJECTIONS.labels(code)


def matchmaker_attempt_failed(code: grpc.StatusCode) -> None:
    _MM_CODES[code].inc()


def frame_out(kind: str) -> None:
    c = _out.get(kind)
    if c is None:
        c = _out[kind] = FRAMES_OUT.labels(kind)
    c.inc()
