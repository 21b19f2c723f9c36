"""Issue 12 items 3 and 4: the shard recovers from faults around it within
seconds and moves a game once per fault (docs/protocol.md sections 3, 5).

- a NATS restart (kill -9, same store) with a bot decision in flight: the
  bot is asked again once NATS is back, not after the 30 s turn timer;
- a bot worker killed mid-decision: the shard asks again and another
  worker answers within seconds;
- a shard frozen (SIGSTOP) past its lease: the other shard takes its games
  once; after SIGCONT the thawed shard takes none of them back.

Real processes and a real nats-server each (the ``svc`` fixture); the
measured recovery times are printed (``-s`` shows them)."""

from __future__ import annotations

import asyncio
import random
import signal
import time
from pathlib import Path
from typing import Any

import grpc
import nats
import orjson
import pytest
from conftest import Services
from shardkit import RecordTail, command, create_game, play_humans, player_id

from ttanjit.common.natsserver import NatsServer
from ttanjit.v1 import shard_pb2, shard_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

TURN_MS = 30_000  # the turn timer a lost bot decision used to wait out
FREEZE_S = 10.0  # SIGSTOP of a shard (issue 12 item 4: 10 s, five leases)


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def claims(tail: RecordTail) -> list[tuple[str, str]]:
    assert tail.rec is not None
    return [(m["claim"]["shard"], m["claim"]["reason"]) for _, m in tail.rec.markers
            if "claim" in m]


async def hosted_on(port: int, gid: str) -> bool:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        try:
            await shard_pb2_grpc.ShardServiceStub(ch).GetGame(
                shard_pb2.GetGameRequest(game_id=gid), timeout=5)
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == grpc.StatusCode.NOT_FOUND, exc
            return False
        return True


# --------------------------------------------------------------------------
# item 4: a thawed shard takes no game back
# --------------------------------------------------------------------------
async def test_thawed_shard_takes_no_game_back(svc: Services) -> None:
    """SIGSTOP of shard A past its lease: B claims each of A's games once
    (fencing A); after SIGCONT A lets them go for good and claims none of
    them — nor any of B's own games — so every game changes owner at most
    once, and no accepted command is lost."""
    a = svc.start("shard", name="shard-a")
    b = svc.start("shard", name="shard-b")
    nc = await nats.connect(svc.nats_url)
    rng = random.Random(12)
    games: dict[str, str] = {}  # gid -> creating shard
    for i in range(8):
        for name, proc in (("shard-a", a), ("shard-b", b)):
            if name == "shard-b" and i >= 4:
                continue
            pids = [player_id("t"), player_id("u")]
            gid = await create_game(proc.ports["grpc"], "penalty_rows",
                                    [{"kind": "human", "player_id": p} for p in pids],
                                    {"rounds": 3}, 300 + i)
            games[gid] = name
    tails = {gid: await RecordTail(nc, gid).start() for gid in games}
    accepted: list[dict[str, Any]] = []

    async def play(moves: int) -> None:
        for tail in tails.values():
            accepted.extend(await play_humans(nc, tail, rng, max_moves=moves,
                                              until_finished=False, timeout=30))

    await play(2)
    a.proc.send_signal(signal.SIGSTOP)
    t_stop = time.monotonic()
    try:
        await play(1)  # A's games answer again once B has them
        moved = time.monotonic() - t_stop
        owners = await nc.jetstream().key_value("ttanjit_owners")
        for gid in games:
            own = orjson.loads((await owners.get(gid)).value)
            assert own["shard"] == "shard-b", (gid, own)
        await asyncio.sleep(max(0.0, FREEZE_S - (time.monotonic() - t_stop)))
    finally:
        a.proc.send_signal(signal.SIGCONT)
    t_cont = time.monotonic()
    # the thawed shard wakes up with a socket full of stale news
    await asyncio.sleep(4.0)
    await play(2)
    await asyncio.sleep(1.0)
    for gid, tail in tails.items():
        await tail.caught_up()
        got = claims(tail)
        want = [("shard-a", "create"), ("shard-b", "failover")] if games[gid] == "shard-a" \
            else [("shard-b", "create")]
        assert got == want, (gid, got)
        assert not await hosted_on(a.ports["grpc"], gid), gid
        assert await hosted_on(b.ports["grpc"], gid), gid
        own = orjson.loads((await owners.get(gid)).value)
        assert own["shard"] == "shard-b", (gid, own)
    recorded = [e["cmd"] for t in tails.values() for e in t.entries if e.get("cmd")]
    assert len(recorded) == len(set(recorded))
    assert {x["cmd"] for x in accepted} <= set(recorded)
    assert a.alive()


    print(f"\nfreeze: A's games answered on B {moved:.1f} s after SIGSTOP; "
          f"checked {time.monotonic() - t_cont:.1f} s after SIGCONT")
    for tail in tails.values():
        await tail.stop()
    await nc.close()
