"""One settings object per service, read from ``TTANJIT_*`` environment
variables (docs/protocol.md section 6). Services take what they need."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field, fields


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{name} must be an integer, not {raw!r}") from None


def _env_str(name: str, default: str) -> str:
    raw = os.environ.get(name)
    return default if raw is None or raw == "" else raw


@dataclass(frozen=True)
class Settings:
    nats_url: str = "nats://127.0.0.1:4222"
    prefix: str = "ttanjit.v1"
    js_replicas: int = 1
    metrics_port: int = 0  # 0 = no /metrics server
    grpc_port: int = 7100
    grpc_host: str = "0.0.0.0"  # bind address
    advertise_host: str = ""  # what others dial (default: host name)
    shard_id: str = ""
    matchmaker_addr: str = "127.0.0.1:7200"
    token_secret: str = ""  # no built-in secret: the gateway refuses to start without one
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
    extra: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_env(cls) -> Settings:
        host = socket.gethostname()
        return cls(
            nats_url=_env_str("TTANJIT_NATS_URL", cls.nats_url),
            prefix=_env_str("TTANJIT_NATS_PREFIX", cls.prefix),
            js_replicas=_env_int("TTANJIT_JS_REPLICAS", cls.js_replicas),
            metrics_port=_env_int("TTANJIT_METRICS_PORT", cls.metrics_port),
            grpc_port=_env_int("TTANJIT_GRPC_PORT", cls.grpc_port),
            grpc_host=_env_str("TTANJIT_GRPC_HOST", cls.grpc_host),
            advertise_host=_env_str("TTANJIT_ADVERTISE_HOST", host),
            shard_id=_env_str("TTANJIT_SHARD_ID", host),
            matchmaker_addr=_env_str("TTANJIT_MATCHMAKER_ADDR", cls.matchmaker_addr),
            token_secret=_env_str("TTANJIT_TOKEN_SECRET", cls.token_secret),
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
        )

    def describe(self) -> dict[str, object]:
        """Settings for the start-up log line (the secret masked)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out["token_secret"] = "***"
        return out
