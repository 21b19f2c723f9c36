"""A drain and a game handed over in the same moment (issue 5 item 5).

Ctrl-C of ``make run`` (or two pods deleted together) stops both shards at
once: one shard's handover can reach the other just before that one's own
drain begins. The taker then drained without the game it was claiming,
closed its NATS connection under the claim and logged "claim failed" with a
traceback. Now a shard stops taking games the moment its stop signal
arrives, and a drain waits for the claims already under way and counts
their games with the rest.

Shard-b runs in this test's process (on the test's own nats-server) so the
claim can be held at its record read while the drain begins; every other
part is real: shard-a and shard-c are processes, the handover is the real
adopt request."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import nats
import orjson
import pytest
from conftest import RECORD_KEY, Services
from shardkit import SUBJ, RecordTail
from test_shard import AVAILABLE, _every_accepted_move_recorded, _games_on, _play_each

from ttanjit.common.config import Settings
from ttanjit.shard import records
from ttanjit.shard.service import Shard

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


async def test_a_drain_waits_for_the_claim_under_way_and_counts_its_game(
        svc: Services, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    game = "penalty_rows" if "penalty_rows" in AVAILABLE else AVAILABLE[0]
    # shard-a's lease outlives the test: shard-b must take the game by the
    # handover below, not by a failover claim of its own once the lease of
    # a killed shard ran out (a busy machine can take that long to get there)
    a = svc.start("shard", name="shard-a", env={"TTANJIT_LEASE_MS": "60000"})
    nc = await nats.connect(svc.nats_url)
    games = await _games_on(a.ports["grpc"], 1, game)
    tails = [await RecordTail(nc, gid).start() for gid, _ in games]
    accepted = await _play_each(nc, tails, 21, 3)
    a.proc.kill()  # shard-a is gone; its handover offer below is what it would have sent
    a.proc.wait(10)

    b = Shard(Settings(nats_url=svc.nats_url, shard_id="shard-b", drain_timeout_s=10,
                       record_key=RECORD_KEY))  # (shard-a signs its records)
    await b.start()
    held = asyncio.Event()
    read = records.read

    async def held_read(js: Any, subject: str, **kw: Any) -> Any:
        await held.wait()
        return await read(js, subject, **kw)

    monkeypatch.setattr(records, "read", held_read)
    gid = games[0][0]
    owners = await nc.jetstream().key_value("ttanjit_owners")
    own = await owners.get(gid)
    offer = {"from": "shard-a", "games": [{"game_id": gid, "rev": own.revision,
                                           "epoch": orjson.loads(own.value)["epoch"]}]}
    adopt = asyncio.create_task(nc.request(SUBJ.adopt("shard-b"), orjson.dumps(offer),
                                           timeout=15))
    for _ in range(200):
        if gid in b.claiming:
            break
        await asyncio.sleep(0.01)
    assert gid in b.claiming  # the claim is under way, held at its record read

    caplog.set_level(logging.INFO, logger="ttanjit.shard")
    b.stop_taking()  # as the stop signal does
    drain = asyncio.create_task(b.drain())
    await asyncio.sleep(0.5)
    assert not drain.done(), drain.result()  # it waits for the claim ...
    held.set()
    assert orjson.loads((await adopt).data)["taken"] == [gid]
    # ... and counts its game: no shard is left to take it, so it stays for the next
    assert await asyncio.wait_for(drain, 10) == {"handed_over": 0, "finished": 0, "left": 1}
    await b.close()
    # shard-b's own lines (its NATS client logs through ttanjit.nats): a test
    # client another test left behind may log its reconnects here too
    bad = [r for r in caplog.records if r.levelno >= logging.WARNING
           and r.name.startswith("ttanjit")
           and not r.getMessage().startswith("no other shard to hand games to")]
    assert not bad, [r.getMessage() for r in bad]

    # the next shard claims the game from its record when shard-b's lease
    # expires, with every move accepted before
    svc.start("shard", name="shard-c")
    tails = [await RecordTail(nc, gid).start()]
    accepted += await _play_each(nc, tails, 22, 2)
    await _every_accepted_move_recorded(tails, accepted)
    claims = [m["claim"]["shard"] for _, m in tails[0].rec.markers  # type: ignore[union-attr]
              if "claim" in m]
    assert claims == ["shard-a", "shard-b", "shard-c"], claims
    await nc.close()
