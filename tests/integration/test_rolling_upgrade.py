"""`helm upgrade` as the shard StatefulSet performs it (README "Upgrade
without losing games"): one shard at a time, highest ordinal first, runs the
chart's preStop drain, gets SIGTERM, and comes back as a new process with the
same shard id (TTANJIT_SHARD_ID is the Pod name). Games keep being played
throughout; at the end every accepted move is in its game's record.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import uuid
from typing import Any

import nats
import orjson
import pytest
from conftest import Services
from shardkit import RecordTail, create_game, play_humans, player_id
from test_drain_cli import prestop_command

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]

SHARDS = 3
GAMES_PER_SHARD = 2


async def test_rolling_restart_of_every_shard_loses_no_move(services: Services) -> None:
    tag = uuid.uuid4().hex[:6]
    names = [f"roll-{tag}-{i}" for i in range(SHARDS)]
    shards = {name: services.start("shard", name=name) for name in names}
    nc = await nats.connect(services.nats_url)
    rng = random.Random(8)
    tails: list[RecordTail] = []
    accepted: list[dict[str, Any]] = []
    try:
        for i, name in enumerate(names):
            for j in range(GAMES_PER_SHARD):
                pids = [player_id("r"), player_id("s")]
                seats = [{"kind": "human", "player_id": p} for p in pids]
                gid = await create_game(shards[name].ports["grpc"], "onecard", seats,
                                        seed=50 + 10 * i + j)
                tails.append(await RecordTail(nc, gid).start())

        async def play_everywhere() -> None:
            for tail in tails:
                accepted.extend(await play_humans(nc, tail, rng, max_moves=2,
                                                  until_finished=False))

        await play_everywhere()
        for name in reversed(names):  # the StatefulSet's rolling update order
            old = shards[name]
            hook = await asyncio.to_thread(subprocess.run, prestop_command(), env=old.env,
                                           capture_output=True, text=True, timeout=60)
            assert hook.returncode == 0, hook.stderr
            assert await asyncio.to_thread(old.terminate, 30) == 0
            old.logfile.rename(old.logfile.with_suffix(".old.log"))
            shards[name] = services.start("shard", name=name)  # same id, new Pod
            await play_everywhere()
        assert len(accepted) >= len(tails) * (SHARDS + 1)

        for tail in tails:
            await tail.caught_up()
        recorded = {e["cmd"] for t in tails for e in t.entries if e.get("cmd")}
        assert {a["cmd"] for a in accepted} <= recorded
        owners = await nc.jetstream().key_value("ttanjit_owners")
        for tail in tails:
            if tail.hosted is not None and not tail.hosted.finished:
                owner = orjson.loads((await owners.get(tail.gid)).value)["shard"]
                assert owner in names
    finally:
        for tail in tails:
            await tail.stop()
        await nc.close()
