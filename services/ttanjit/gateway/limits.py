"""Per-connection limits (docs/websocket.md 5). Sans-I/O."""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Any

from ttanjit.gateway import metrics as m

MAX_FRAME = 16 * 1024  # bytes a client frame may have
MAX_CMD_ID = 64  # characters of an action's cmd_id
HARD_MAX_FRAME = 1024 * 1024  # above this the WebSocket layer closes (1009)
RATE = 20.0  # frames per second
BURST = 40.0
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

    def refill(self, now: float) -> float:
        """The tokens there are at ``now`` (kept)."""
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.last) * self.rate)
        self.last = now
        return self.tokens

    def allow(self, now: float) -> bool:
        if self.refill(now) >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def should_warn(self, now: float) -> bool:
        """At most one ``rate_limited`` error a second."""
        if now - self.last_warned >= 1.0:
            self.last_warned = now
            return True
        return False


def limits_json(idle_ms: int, hello_ms: int) -> dict[str, float]:
    """The welcome's ``limits`` (idle and hello: ``TTANJIT_WS_IDLE_MS`` /
    ``TTANJIT_WS_HELLO_MS``, ``Settings.ws_idle_ms`` / ``ws_hello_ms``)."""
    return {"max_frame": MAX_FRAME, "rate": RATE, "burst": BURST, "idle_ms": idle_ms,
            "hello_ms": hello_ms}


# Attempts at a 다른 기기에서 계속하기 code (``POST /api/transfer/claim``)
# per client address: 10 at once, then one every 30 s; a code that works
# gives its attempt back. A code is 8 of 32 characters (32^8 ≈ 1.1e12) and
# lives 10 minutes: without a limit, one address could try thousands a
# second against every live code.
CLAIM_RATE = 1 / 30
CLAIM_BURST = 10.0
MAX_ADDRESSES = 100_000  # addresses kept at most (the longest unused go first)

# New guests (``POST /api/guest``) per client address: by default 30 at
# once (a class behind one school's address), then one every 2 s
# (``TTANJIT_SIGNUP_BURST`` / ``TTANJIT_SIGNUP_PER_MIN``; a burst of 0: no
# limit). Each is an identity and a nickname kept 180 days in JetStream:
# one address made 1,671 in 5 s (fuzz finding). A client connected from
# the gateway's own machine is not counted (:func:`counted_address`).


def counted_address(host: str, forwarded: bool) -> bool:
    """Whether requests from ``host`` count against a per-address limit of
    new guests: not one connected from a loopback address itself — the load
    tester and a local ``make run``'s browsers. An address that came in
    ``X-Forwarded-For`` (``forwarded``) is counted whatever it says: a
    client behind a proxy that passes the header on could name itself
    127.0.0.1 (review finding)."""
    if forwarded:
        return True
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # not an address (a test client's name): counted


_UNNAMED_PROXIES: set[str] = set()  # the peers warned of (a few)


def client_address(request: Any) -> str:
    """The address a per-address limit keys on: the (Starlette) request's
    client as uvicorn made it — taken from ``X-Forwarded-For`` when the peer
    is a proxy ``TTANJIT_FORWARDED_ALLOW_IPS`` names. A request that carries
    the header but kept its peer came through a proxy nobody named: every
    client behind it shares its address (a cloud load balancer reaching
    the Pods from public addresses, an IPv6 cluster's global Pod addresses,
    beyond the chart's private ranges). Counted
    (``ttanjit_gateway_unnamed_proxy_requests_total``, alert
    TtanjitProxyNotNamed) and said once per such peer in the log, so that an
    operator names it before the shared limits bite."""
    peer = request.client.host if request.client else ""
    forwarded_for = request.headers.get("x-forwarded-for")
    if not forwarded_for:
        return address_key(peer)
    hops = [h.strip().removeprefix("[").split("]")[0] for h in forwarded_for.split(",")]
    hops += [h.rsplit(":", 1)[0] for h in hops if h.count(":") == 1]  # "a.b.c.d:port"
    if peer not in hops:
        m.UNNAMED_PROXY.inc()
        if peer not in _UNNAMED_PROXIES and len(_UNNAMED_PROXIES) < 16:
            _UNNAMED_PROXIES.add(peer)
            logging.getLogger("ttanjit.gateway").warning(
                "X-Forwarded-For from %s, a proxy TTANJIT_FORWARDED_ALLOW_IPS does not name: "
                "every client behind it shares that address for the per-address limits "
                "(name it: the chart's gateway.forwardedAllowIps)", peer,
                extra={"peer": peer})
    return address_key(peer)


def address_key(host: str) -> str:
    """What a per-address limit counts a client's address as: an IPv6
    address by its /64 — one subscriber's network, whose hosts pick any of
    its 2^64 addresses at will (40 sign-ups from 40 addresses of one /64
    all passed a limit of 30: security audit) — and any other address (IPv4,
    loopback, IPv4-mapped) as it is."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address) and not ip.is_loopback and ip.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{host}/64", strict=False))
    return host


class Attempts:
    """A :class:`TokenBucket` per key (a client's address). ``take(key, now)``
    spends one token and answers 0.0, or, with none left, spends nothing
    and answers the seconds until one is back; ``give_back`` returns one
    (the attempt worked). A token is taken *before* the attempt, so
    attempts in flight at once count too. A key whose bucket is full again
    is forgotten when the table is swept (beyond ``max_keys``); if that is
    not enough, the least recently used go, down to nine tenths of
    ``max_keys`` (so a sweep comes at most once per tenth of new keys).
    Sans-I/O."""

    def __init__(self, rate: float = CLAIM_RATE, burst: float = CLAIM_BURST,
                 max_keys: int = MAX_ADDRESSES) -> None:
        self.rate, self.burst, self.max_keys = rate, burst, max_keys
        self._buckets: dict[str, TokenBucket] = {}  # least recently used first

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, key: str, now: float) -> TokenBucket:
        b = self._buckets.pop(key, None) or TokenBucket(self.rate, self.burst, self.burst, now)
        self._buckets[key] = b  # the most recently used last
        return b

    def take(self, key: str, now: float) -> float:
        b = self._bucket(key, now)
        wait = 0.0 if b.allow(now) else (1.0 - b.tokens) / self.rate
        if len(self._buckets) > self.max_keys:
            self._sweep(now)
        return wait

    def give_back(self, key: str, now: float) -> None:
        b = self._bucket(key, now)
        b.tokens = min(self.burst, b.refill(now) + 1.0)

    def _sweep(self, now: float) -> None:
        for k in [k for k, b in self._buckets.items() if b.refill(now) >= self.burst]:
            del self._buckets[k]
        keep = self.max_keys * 9 // 10
        while len(self._buckets) > keep:
            del self._buckets[next(iter(self._buckets))]


# Wrong room codes (``room_join`` answered ``room_not_found``) per player:
# 10 at once, then one every 30 s (each gateway process on its own). A code
# is 6 of 32 characters (~1.07e9) and a room waits for its friends for
# minutes: one socket tried 19 a second without end (security audit). Not
# per client address: one player behind a school's or a carrier's shared
# address would keep everyone there from a right code (review finding).
ROOM_CODE_RATE, ROOM_CODE_BURST = 1 / 30, 10.0
