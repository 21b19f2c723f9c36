"""Judging a fault run from the games' write-ahead records (docs/protocol.md 5).

- *lost*: a command the player was told was accepted (``ok`` / a ``result``
  frame) whose ``(player, cmd)`` is not among its game's recorded inputs.
- *stalled*: a game that should progress (bots think 0.6-1.8 s, the scripted
  players less) with no recorded input for more than ``STALL_S`` within the
  watched window; for a game still live at the end, the time since its last
  input counts too. The gap across the fault counts from the fault: until
  then the game went at its own pace (a bot thinking, a player choosing),
  which is no stall of the fault's making (with a 2 s shard lease and bots
  that think up to 1.8 s, a SIGSTOP's raw gap went over 3 s whenever the
  freeze fell late in a bot's thinking, though the game moved again ~1.9 s
  after the freeze). ``longest_gap_s`` stays the raw gap between inputs.
  Inputs carry the shard's wall clock (``ms``).

:func:`judge` is pure; :func:`fetch` reads the records from JetStream.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from nats.aio.client import Client

from ttanjit.common.nats import Subjects
from ttanjit.shard import records
from ttanjit.shard.records import StoredRecord

STALL_S = 3.0


@dataclass
class Verdict:
    lost: list[tuple[str, str, str]] = field(default_factory=list)  # (game, player, cmd)
    stalls: dict[str, float] = field(default_factory=dict)  # game -> longest gap (s) over STALL_S
    longest_gap_s: float = 0.0  # over every watched game
    recovery_s: float = 0.0  # fault -> the last game's first input after it
    accepted: int = 0
    games: int = 0

    @property
    def ok(self) -> bool:
        return not self.lost and not self.stalls


def recorded_cmds(rec: StoredRecord | None) -> set[tuple[str, str]]:
    if rec is None:
        return set()
    return {(str(e.get("player")), str(e["cmd"])) for e in rec.entries if e.get("cmd")}


def input_times_ms(rec: StoredRecord | None) -> list[int]:
    if rec is None:
        return []
    return sorted(int(e["ms"]) for e in rec.entries if isinstance(e.get("ms"), int | float))


def judge(recs: dict[str, StoredRecord | None], accepted: list[tuple[str, str, str]],
          *, since_ms: int, until_ms: int, finished: set[str] | frozenset[str] = frozenset(),
          fault_ms: int | None = None, stall_s: float = STALL_S) -> Verdict:
    """``accepted``: (game, player, cmd) triples. Gaps are watched between
    ``since_ms`` and ``until_ms`` (wall ms); ``finished`` games are not
    expected to progress after their last input."""
    v = Verdict(accepted=len(accepted), games=len(recs))
    by_game: dict[str, set[tuple[str, str]]] = {g: recorded_cmds(r) for g, r in recs.items()}
    for gid, player, cmd in accepted:
        if (player, cmd) not in by_game.get(gid, set()):
            v.lost.append((gid, player, cmd))
    fault = since_ms if fault_ms is None else fault_ms
    for gid, rec in recs.items():
        times = input_times_ms(rec)
        if not times or times[-1] < since_ms:
            continue  # not live in the window
        marks = [t for t in times if since_ms <= t <= until_ms]
        before = [t for t in times if t < since_ms]
        points = ([before[-1]] if before else []) + marks
        if gid not in finished and times[-1] <= until_ms:
            points.append(until_ms)
        pairs = list(zip(points, points[1:], strict=False))
        v.longest_gap_s = max([v.longest_gap_s] + [(b - a) / 1000 for a, b in pairs])
        worst = max(((b - (fault_ms if fault_ms is not None and a < fault_ms <= b else a))
                     / 1000 for a, b in pairs), default=0.0)
        if worst > stall_s:
            v.stalls[gid] = round(worst, 2)
        after = [t for t in times if t >= fault]
        if any(t < fault for t in times):  # live when the fault hit
            if after:
                v.recovery_s = max(v.recovery_s, (after[0] - fault) / 1000)
            elif gid not in finished:
                v.recovery_s = max(v.recovery_s, (until_ms - fault) / 1000)
    return v


async def fetch(nc: Client, game_ids: list[str], prefix: str = "ttanjit.v1",
                attempts: int = 20, keys: records.Keys | None = None
                ) -> dict[str, StoredRecord | None]:
    """Every game's record (retried while JetStream settles after a fault),
    as the shards read it with ``keys`` (default ``TTANJIT_RECORD_KEY``)."""
    keys = keys or records.env_keys()
    js = nc.jetstream()
    subj = Subjects(prefix)
    out: dict[str, StoredRecord | None] = {}
    for gid in game_ids:
        for attempt in range(attempts):
            try:
                out[gid] = await records.read(js, subj.record(gid), keys=keys)
                break
            except Exception:  # noqa: BLE001 - a leader election: try again
                if attempt == attempts - 1:
                    raise
                await asyncio.sleep(0.5)
    return out


def summary(v: Verdict) -> dict[str, Any]:
    return {"games": v.games, "accepted": v.accepted, "lost": len(v.lost),
            "stalled": len(v.stalls), "longest_gap_s": round(v.longest_gap_s, 2),
            "recovery_s": round(v.recovery_s, 2)}
