"""Per-connection limits (docs/websocket.md 5). Sans-I/O."""

from __future__ import annotations

import os
from dataclasses import dataclass

MAX_FRAME = 16 * 1024  # bytes a client frame may have
MAX_CMD_ID = 64  # characters of an action's cmd_id
HARD_MAX_FRAME = 1024 * 1024  # above this the WebSocket layer closes (1009)
RATE = 20.0  # frames per second
BURST = 40.0
IDLE_MS = int(os.environ.get("TTANJIT_WS_IDLE_MS") or 60_000)  # shorter in tests
HELLO_MS = int(os.environ.get("TTANJIT_WS_HELLO_MS") or 10_000)
# Quick reactions (issue 14): a fixed set, no free text; 3 at once, then one
# every 2 s (``too_many_emotes`` beyond that).
EMOTES = ("thumbs", "laugh", "wow", "cry", "nice")
EMOTE_RATE = 0.5
EMOTE_BURST = 3.0


@dataclass(slots=True)
class TokenBucket:
    """``allow(now)`` spends one token; refills at ``rate`` per second."""

    rate: float = RATE
    burst: float = BURST
    tokens: float = BURST
    last: float = 0.0
    last_warned: float = -1e9

    def allow(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def should_warn(self, now: float) -> bool:
        """At most one ``rate_limited`` error a second."""
        if now - self.last_warned >= 1.0:
            self.last_warned = now
            return True
        return False


def limits_json() -> dict[str, float]:
    return {"max_frame": MAX_FRAME, "rate": RATE, "burst": BURST, "idle_ms": IDLE_MS,
            "hello_ms": HELLO_MS}
