"""A game whose record this release cannot replay (version-skew audit): a
record an older release's shard wrote with an input this engine refuses
(줄줄이 벌점's 확정 that carried a pick the older shard ignored), or a
newer release's rules after a rollback. A shard claiming it logged a
traceback every second, for good, with nothing an alert could see. Now it
says so once, ``ttanjit_shard_unreplayable_games`` counts it (alert
TtanjitGameUnreplayable), and it tries again every 30 s — the game waits
for a shard of a release that can replay it."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import nats
import pytest
from conftest import RECORD_KEY, Services
from shardkit import SUBJ, RecordTail, metric, metrics_text, play_humans
from test_shard import _games_on

from ttanjit.common.nats import RECORDS_STREAM
from ttanjit.shard import records

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

SAID = "cannot replay the game's record"


async def test_a_record_this_release_cannot_replay_is_said_once_and_counted(
        svc: Services) -> None:
    a = svc.start("shard", name="shard-old")
    nc = await nats.connect(svc.nats_url)
    try:
        [(gid, _)] = await _games_on(a.ports["grpc"], 1, "penalty_rows")
        tail = await RecordTail(nc, gid).start()
        await play_humans(nc, tail, random.Random(5), max_moves=3, until_finished=False)
        await tail.stop()
        a.kill()
        # an input the engine that wrote it took and this one refuses
        js = nc.jetstream()
        last = await js.get_last_msg(RECORDS_STREAM, SUBJ.record(gid))
        await records.append(js, SUBJ.record(gid),
                             {"t": 1, "seat": 0, "action": {"type": "select", "card": 0, "row": 1}},
                             last.seq or 0, f"{gid}:skew", keys=(RECORD_KEY.encode(),))
        b = svc.start("shard", name="shard-new")
        deadline = time.monotonic() + 30
        while SAID not in b.log():
            assert time.monotonic() < deadline, b.log()[-3000:]
            await asyncio.sleep(0.2)
        assert metric(metrics_text(b.ports["metrics"]), "ttanjit_shard_unreplayable_games") == 1.0
        await asyncio.sleep(4)  # tried again every second, with a traceback each, before
        log: Any = b.log()
        assert log.count(SAID) == 1, log[-3000:]
        assert "claim failed" not in log and "Traceback" not in log, log[-3000:]
        assert "refused on replay" in log
    finally:
        await nc.close()

