"""The one settings object of every service, read from ``TTANJIT_*``
environment variables (docs/protocol.md section 6). Each service takes the
fields it needs; ``Settings.from_env(service)`` applies the few per-service
defaults (:data:`SERVICE_DEFAULTS`: the matchmaker's gRPC port is 7200, the
others' 7100) and the gateway's required token secret."""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass, field, fields, replace
from typing import Any

SERVICES = ("gateway", "matchmaker", "shard", "bots")

# Defaults that differ by service (every other default is the field's own).
# The matchmaker's advertise host stays "" here: ``matchmaker.service.serve``
# falls back to the host name; the shard's is the host name at once.
SERVICE_DEFAULTS: dict[str, dict[str, Any]] = {
    "matchmaker": {"grpc_port": 7200, "advertise_host": ""},
}


def _env_int(name: str, default: int) -> int:
    return int(_env_number(name, default, int, "an integer"))


def _env_float(name: str, default: float) -> float:
    return float(_env_number(name, default, float, "a number"))


def _env_number(name: str, default: float, kind: type, what: str) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return kind(raw)  # type: ignore[no-any-return]
    except ValueError:
        raise ValueError(f"{name} must be {what}, not {raw!r}") from None


def _env_str(name: str, default: str) -> str:
    raw = os.environ.get(name)
    return default if raw is None or raw == "" else raw


def _env_flag(name: str) -> bool:
    return (os.environ.get(name) or "") in ("1", "true", "yes")


@dataclass(frozen=True)
class Settings:
    nats_url: str = "nats://127.0.0.1:4222"
    prefix: str = "ttanjit.v1"
    js_replicas: int = 1
    metrics_port: int = 0  # 0 = no /metrics server
    metrics_host: str = "0.0.0.0"  # its bind address (a Pod's: every interface)
    grpc_port: int = 7100
    grpc_host: str = "0.0.0.0"  # bind address
    advertise_host: str = ""  # what others dial (default: host name)
    shard_id: str = ""
    matchmaker_addr: str = "127.0.0.1:7200"
    token_secret: str = ""  # no built-in secret: the gateway refuses to start without one
    # the shards' key for their records' messages (shard/records.py; the
    # gateways must not have it): "" = records unsigned, as before
    record_key: str = ""
    http_port: int = 8080
    log_level: str = "INFO"
    log_format: str = "json"  # json | text
    bot_wait_ms: int = 15_000  # matchmaker: quick-match wait before bots fill the table
    bot_budget_ms: int = 2000  # shard: most a bot decision may take (docs/protocol.md 3)
    absence_ms: int = 0  # 0 = the rules' 60 s (test-only shortening)
    abandon_ms: int = 0  # 0 = the rules' 10 min abandonment (test-only shortening)
    # Game shard: ownership leases and capacity (docs/protocol.md section 5).
    lease_ms: int = 2000  # a shard's lease lives this long after its last renewal
    renew_ms: int = 500  # renewal interval
    capacity: int = 2000  # games a shard advertises it takes
    backlog: int = 256  # events kept per (game, player) for resume
    drain_timeout_s: int = 25
    link_port: int = 0  # shard: gateways' direct link (0: any free port; -1: none)
    # Gateway.
    http_host: str = "0.0.0.0"
    ws_impl: str = "websockets-sansio"  # uvicorn's WebSocket implementation
    ws_idle_ms: int = 60_000  # a socket silent this long is closed (shorter in tests)
    ws_hello_ms: int = 10_000  # a socket without hello this long is closed
    # players (sockets that said hello) a gateway holds at most; one more
    # hello is refused (``server_full``, close 1013; docs/capacity.md: ~43 KiB
    # per player in a game, the chart's 1Gi); 0 = no cap
    max_connections: int = 12_000
    # A sample of sessions recorded to capture files (docs/capacity.md):
    # 0 = none, 1 = every session.
    record_sample: float = 0.0
    record_dir: str = "captures"
    record_max_mb: float = 32.0  # a gateway's capture file stops growing here
    # Proxies whose X-Forwarded-For names the client (uvicorn's
    # forwarded_allow_ips: addresses, CIDRs, or "*"); the client's address
    # keys per-address limits (docs/websocket.md 1.1).
    forwarded_allow_ips: str = "127.0.0.1"
    # New guests per client address (docs/websocket.md 1): this many at
    # once, then ``signup_per_min`` a minute; 0 = no limit (a load test
    # from one machine against a deployment)
    signup_burst: int = 30
    signup_per_min: int = 30
    dev: bool = False  # TTANJIT_DEV=1: a local run (a random token secret if none is set)
    ephemeral_secret: bool = False  # the token secret is this process's own (dev only)
    # Matchmaker (its gRPC port and advertise host: SERVICE_DEFAULTS).
    test_options: bool = False  # room options for test deployments
    tick_ms: int = 200
    room_away_ms: int = 60_000  # RULES.md 4's 60 s, for room seats
    lobby: str = "main"  # the lobby's name in ttanjit_lobby (one per deployment)
    replica: str = ""  # this replica's id (default: host name + random)
    rematch_ms: int = 20_000  # 한 판 더: matchmaker.rematch.WINDOW_MS
    # Bot worker.
    bot_capacity: int = 2  # concurrent decisions (at least 1)
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def defaults(cls, service: str = "") -> Settings:
        """The defaults of ``service`` (no environment read)."""
        return replace(cls(), **SERVICE_DEFAULTS.get(service, {}))

    @classmethod
    def from_env(cls, service: str = "") -> Settings:
        """Every setting from the environment, with ``service``'s defaults
        (one of :data:`SERVICES`; ``""`` = the common ones, as the shard
        and the bot worker have). For the gateway, a missing
        ``TTANJIT_TOKEN_SECRET`` is :class:`ValueError` unless
        ``TTANJIT_DEV=1`` (then a random secret for this process only: its
        tokens work nowhere else and not after a restart)."""
        if service and service not in SERVICES:
            raise ValueError(f"unknown service {service!r}")
        host = socket.gethostname()
        d = cls.defaults(service)
        dev = _env_flag("TTANJIT_DEV")
        secret = _env_str("TTANJIT_TOKEN_SECRET", d.token_secret)
        ephemeral = False
        if service == "gateway" and not secret:
            if not dev:
                raise ValueError("TTANJIT_TOKEN_SECRET is not set: set it to a long random "
                                 "string shared by every gateway (or TTANJIT_DEV=1 for a "
                                 "local run)")
            secret, ephemeral = secrets.token_hex(32), True
        return cls(
            nats_url=_env_str("TTANJIT_NATS_URL", cls.nats_url),
            prefix=_env_str("TTANJIT_NATS_PREFIX", cls.prefix),
            js_replicas=_env_int("TTANJIT_JS_REPLICAS", cls.js_replicas),
            metrics_port=_env_int("TTANJIT_METRICS_PORT", cls.metrics_port),
            metrics_host=_env_str("TTANJIT_METRICS_HOST", cls.metrics_host),
            grpc_port=_env_int("TTANJIT_GRPC_PORT", d.grpc_port),
            grpc_host=_env_str("TTANJIT_GRPC_HOST", cls.grpc_host),
            advertise_host=_env_str("TTANJIT_ADVERTISE_HOST",
                                    host if service != "matchmaker" else d.advertise_host),
            shard_id=_env_str("TTANJIT_SHARD_ID", host),
            matchmaker_addr=_env_str("TTANJIT_MATCHMAKER_ADDR", cls.matchmaker_addr),
            token_secret=secret,
            record_key=record_key_from_env(),
            http_port=_env_int("TTANJIT_HTTP_PORT", cls.http_port),
            log_level=_env_str("TTANJIT_LOG_LEVEL", cls.log_level).upper(),
            log_format=_env_str("TTANJIT_LOG_FORMAT", cls.log_format),
            bot_wait_ms=_env_int("TTANJIT_BOT_WAIT_MS", cls.bot_wait_ms),
            bot_budget_ms=_env_int("TTANJIT_BOT_BUDGET_MS", cls.bot_budget_ms),
            absence_ms=_env_int("TTANJIT_ABSENCE_MS", cls.absence_ms),
            abandon_ms=_env_int("TTANJIT_ABANDON_MS", cls.abandon_ms),
            lease_ms=_env_int("TTANJIT_LEASE_MS", cls.lease_ms),
            renew_ms=_env_int("TTANJIT_RENEW_MS", cls.renew_ms),
            capacity=_env_int("TTANJIT_CAPACITY", cls.capacity),
            backlog=_env_int("TTANJIT_BACKLOG", cls.backlog),
            drain_timeout_s=_env_int("TTANJIT_DRAIN_TIMEOUT_S", cls.drain_timeout_s),
            link_port=_env_int("TTANJIT_LINK_PORT", cls.link_port),
            http_host=_env_str("TTANJIT_HTTP_HOST", cls.http_host),
            ws_impl=_env_str("TTANJIT_WS_IMPL", cls.ws_impl),
            ws_idle_ms=_env_int("TTANJIT_WS_IDLE_MS", cls.ws_idle_ms),
            ws_hello_ms=_env_int("TTANJIT_WS_HELLO_MS", cls.ws_hello_ms),
            max_connections=max(0, _env_int("TTANJIT_MAX_CONNECTIONS", cls.max_connections)),
            record_sample=_env_float("TTANJIT_RECORD_SAMPLE", cls.record_sample),
            record_dir=_env_str("TTANJIT_RECORD_DIR", cls.record_dir),
            record_max_mb=_env_float("TTANJIT_RECORD_MAX_MB", cls.record_max_mb),
            forwarded_allow_ips=_env_str("TTANJIT_FORWARDED_ALLOW_IPS",
                                         cls.forwarded_allow_ips),
            signup_burst=max(0, _env_int("TTANJIT_SIGNUP_BURST", cls.signup_burst)),
            signup_per_min=max(1, _env_int("TTANJIT_SIGNUP_PER_MIN", cls.signup_per_min)),
            dev=dev,
            ephemeral_secret=ephemeral,
            test_options=_env_flag("TTANJIT_TEST_OPTIONS"),
            room_away_ms=_env_int("TTANJIT_ROOM_AWAY_MS", cls.room_away_ms),
            lobby=_env_str("TTANJIT_LOBBY", cls.lobby),
            replica=_env_str("TTANJIT_REPLICA_ID", cls.replica),
            rematch_ms=_env_int("TTANJIT_REMATCH_MS", cls.rematch_ms),
            bot_capacity=max(1, _env_int("TTANJIT_BOT_CAPACITY", cls.bot_capacity)),
        )

    @classmethod
    def for_service(cls, service: str) -> Settings:
        """:meth:`from_env` for a service's ``__main__``: a setting it cannot
        use stops the process with one line naming it (exit 1), not a
        traceback."""
        try:
            return cls.from_env(service)
        except ValueError as e:
            raise SystemExit(f"{service}: {e}") from None

    def describe(self) -> dict[str, object]:
        """Settings for the start-up log line (the secret masked, and a
        user's password or token in the NATS address: security audit)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out["token_secret"] = "***"
        out["record_key"] = "***" if self.record_key else ""
        out["nats_url"] = masked_urls(self.nats_url)
        return out


def record_key_from_env() -> str:
    """``TTANJIT_RECORD_KEY`` (``""``: none): one key, or several
    comma-separated (the first signs); a short one is ValueError."""
    text = os.environ.get("TTANJIT_RECORD_KEY", "").strip()
    if any(len(k.strip()) < 16 for k in text.split(",") if text):
        raise ValueError("TTANJIT_RECORD_KEY: a key is too short: at least 16 characters "
                         "each (long random strings, comma-separated)")
    return text


def masked_urls(urls: str) -> str:
    """Server addresses (one or several, comma-separated) with what comes
    before the host's ``@`` — ``user:password`` or a token, an ``@`` or a
    ``/`` in it too — as ``***``, whatever the scheme's case (review
    finding)."""
    out = []
    for u in urls.split(","):
        scheme, sep, rest = u.strip().partition("://")
        if not sep:
            scheme, rest = "", scheme
        if "@" in rest:  # (up to the last: a password may hold a "/" or an "@")
            rest = "***@" + rest.rsplit("@", 1)[1]
        out.append(f"{scheme}{sep}{rest}")
    return ",".join(out)
