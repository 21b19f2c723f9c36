"""Placement (docs/protocol.md 4): the least-loaded non-draining shard seen
in the last 5 s of heartbeats; a shard whose CreateGame failed is skipped
for a while so the retry goes elsewhere. Sans-I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FRESH_MS = 5_000
PENALTY_MS = 10_000
GONE_MS = 600_000  # a shard unheard of this long is forgotten (a pod replaced: a new address)


@dataclass(slots=True)
class ShardInfo:
    shard: str
    grpc: str
    games: int
    players: int
    capacity: int
    draining: bool
    seen_ms: int
    failed_until_ms: int = 0
    # placements asked of it and not answered yet: counted as its games, so
    # a tick's many matches do not all go to a shard with room for a few (a
    # full lobby's ~400 matches a tick met the shard's own "full" 7,120
    # times: overload audit)
    asked: int = 0

    @property
    def load(self) -> float:
        return (self.games + self.asked) / max(1, self.capacity)

    @property
    def full(self) -> bool:
        return self.games + self.asked >= self.capacity


class ShardTable:
    def __init__(self) -> None:
        self.shards: dict[str, ShardInfo] = {}
        self.moved: set[str] = set()  # addresses a shard left for a new one

    def heartbeat(self, hb: dict[str, Any], now_ms: int) -> None:
        sid = str(hb.get("shard") or "")
        addr = str(hb.get("grpc") or "")
        if not sid or not addr:
            return
        old = self.shards.get(sid)
        if old is not None and old.grpc != addr:  # restarted under a new address
            self.moved.add(old.grpc)
        self.shards[sid] = ShardInfo(
            sid, addr, int(hb.get("games") or 0), int(hb.get("players") or 0),
            int(hb.get("capacity") or 1), bool(hb.get("draining")), now_ms,
            old.failed_until_ms if old else 0, old.asked if old else 0)

    def live(self, now_ms: int) -> list[ShardInfo]:
        """The shards heard from in the last :data:`FRESH_MS`."""
        return [s for s in self.shards.values() if now_ms - s.seen_ms <= FRESH_MS]

    def candidates(self, now_ms: int) -> list[ShardInfo]:
        """Live, not draining, not recently failed: least loaded first."""
        live = [s for s in self.live(now_ms) if not s.draining and not s.full]
        ok = [s for s in live if s.failed_until_ms <= now_ms]
        return sorted(ok or live, key=lambda s: (s.load, s.players, s.shard))

    def has_room(self, now_ms: int) -> bool:
        """A live shard that does not drain has fewer games than its
        capacity, placements under way aside (readiness: a leader with
        placements in flight on an almost full shard is still placing)."""
        return any(not s.draining and s.games < s.capacity for s in self.live(now_ms))

    def why_none(self, now_ms: int) -> str:
        """Why :meth:`candidates` is empty (a ``reason`` of
        ``ttanjit_mm_placement_failures_total``): ``no_shard`` (no heartbeat
        in the last 5 s), ``draining`` (every live shard drains) or
        ``capacity`` (every live shard that does not drain has
        ``TTANJIT_CAPACITY`` games)."""
        live = self.live(now_ms)
        if not live:
            return "no_shard"
        if all(s.draining for s in live):
            return "draining"
        return "capacity"

    def describe(self, now_ms: int) -> list[dict[str, Any]]:
        """The live shards as a log line shows them."""
        return [{"shard": s.shard, "games": s.games, "capacity": s.capacity,
                 "draining": s.draining}
                for s in sorted(self.live(now_ms), key=lambda s: s.shard)]

    def failed(self, shard: str, now_ms: int) -> None:
        if shard in self.shards:
            self.shards[shard].failed_until_ms = now_ms + PENALTY_MS

    def forget_gone(self, now_ms: int) -> list[str]:
        """Forget the shards unheard of for :data:`GONE_MS` (every pod
        restart adds one under a new address); the gRPC addresses no shard
        has any more (theirs, and those a shard left for a new one)."""
        gone = [s for s in self.shards.values() if now_ms - s.seen_ms > GONE_MS]
        for s in gone:
            del self.shards[s.shard]
        kept = {s.grpc for s in self.shards.values()}
        out = sorted(({s.grpc for s in gone} | self.moved) - kept)
        self.moved.clear()
        return out

    def asking(self, shard: str, delta: int) -> None:
        """A placement asked of ``shard`` (+1) or answered (-1)."""
        if shard in self.shards:
            self.shards[shard].asked = max(0, self.shards[shard].asked + delta)

    def placed(self, shard: str) -> None:
        """Count the new game at once so a burst spreads before the next heartbeat."""
        if shard in self.shards:
            self.shards[shard].games += 1
