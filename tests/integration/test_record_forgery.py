"""A game's record holds its shards' messages only (docs/protocol.md 5,
``ttanjit.shard.records``). NATS checks what a user publishes, not where a
service or JetStream answers: a gateway taken over (its own NATS user, which
may not publish a record) can still have answers stored on a game's record
subject by naming it as a request's reply subject — a JetStream API answer,
a shard's answer to a catch-up. Before the shards signed their records each
such message fenced the owner's next append (the game dropped and claimed
again: a pause per message, as often as the gateway liked). (A push consumer's deliveries
and a direct get of a gateway's own bucket, whose headers and payload it
chooses, were tried too: JetStream does not store them.) Real nats-server
with the production users, real shard processes."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import time
from typing import Any

import nats
import orjson
import pytest
from conftest import RECORD_KEY, Services, user_url
from shardkit import (
    SUBJ,
    RecordTail,
    create_game,
    metric,
    metrics_text,
    play_humans,
    player_id,
    stored_after,
    sync,
)
from test_drain_cli import prestop_command

from ttanjit.common import natsauth
from ttanjit.common.nats import RECORDS_STREAM
from ttanjit.shard import records
from ttanjit.shard.ownership import rendezvous

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def _two_moves_in(nc: Any, shard: Any, seed: int
                        ) -> tuple[str, list[str], RecordTail, random.Random]:
    """A game of 원카드 for two players on ``shard``, two moves played:
    its id, players, record tail and the moves' random numbers."""
    pids = [player_id("f"), player_id("g")]
    gid = await create_game(shard.ports["grpc"], "onecard",
                            [{"kind": "human", "player_id": p} for p in pids], seed=seed)
    tail = await RecordTail(nc, gid).start()
    rng = random.Random(seed)
    assert len(await play_humans(nc, tail, rng, max_moves=2, until_finished=False)) == 2
    return gid, pids, tail, rng


async def test_what_a_gateway_has_stored_on_a_record_is_gone_past(svc: Services) -> None:
    a = svc.start("shard", name="forged-a")
    nc = await nats.connect(svc.nats_url)
    gw = await nats.connect(user_url(svc.nats_url, natsauth.GATEWAY))
    try:
        gid, pids, tail, rng = await _two_moves_in(nc, a, 11)
        subject = SUBJ.record(gid)
        last = tail.seq

        # as a gateway taken over may: a JetStream API answer and the
        # owner's own answer to a catch-up, both sent to the record's subject
        await gw.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        await gw.publish(SUBJ.sync(gid), orjson.dumps({"player": pids[0], "last_seq": 0}),
                         reply=subject)
        await gw.flush()
        junk = await stored_after(nc, subject, last, 2)
        assert len(junk) == 2, "the forger's messages were not stored: the test checks nothing"

        # the owner goes on after them: the players' moves are accepted, the
        # game never dropped
        played = await play_humans(nc, tail, rng, max_moves=2, until_finished=False)
        assert [m["reply"]["ok"] for m in played] == [True, True], played
        assert "fenced" not in a.log() and "game dropped" not in a.log(), a.log()[-3000:]
        assert "appending after them" in a.log()
        # counted for the SRE (alert TtanjitRecordStoredByNoShard)
        skipped = 'ttanjit_shard_record_skipped_messages_total{found_at="%s"}'
        assert metric(metrics_text(a.ports["metrics"]), skipped % "append") == 2
        # one more after the owner's last message, which no append goes past
        await tail.caught_up()
        last = tail.seq
        await gw.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        await gw.flush()
        assert len(await stored_after(nc, subject, last, 1)) == 1

        # another shard reads the record (the owner killed): the game it
        # serves is the players' moves alone
        b = svc.start("shard", name="forged-b")
        assert metric(metrics_text(b.ports["metrics"]), skipped % "claim") == 0
        a.kill()
        rec = await records.read(nc.jetstream(), subject, keys=(RECORD_KEY.encode(),))
        assert rec is not None and rec.signed and rec.skipped == 3 and rec.skipped_after == 1
        assert rec.entries == tail.entries
        h = tail.hosted
        assert h is not None
        for p, s in h.players.items():
            view = (await sync(nc, gid, p, 0))["view"]
            assert view["hand"] == h.engine.view(s)["hand"], (p, view)
        played = await play_humans(nc, tail, rng, max_moves=2, until_finished=False)
        assert [m["reply"]["ok"] for m in played] == [True, True], played
        assert "3 messages no shard wrote" in b.log()
        # each counted once: the claim counts the one its marker went past,
        # not the two the old owner's append counted
        text = metrics_text(b.ports["metrics"])
        assert (metric(text, skipped % "claim"), metric(text, skipped % "append")) == (1, 0)
        assert "Traceback" not in b.log() and "cannot replay" not in b.log(), b.log()[-3000:]
        await tail.stop()
    finally:
        await gw.close()
        await nc.close()


async def test_a_burst_and_a_trickle_of_answers_do_not_stop_a_game(svc: Services) -> None:
    """Review finding: more than a thousand answers at once made the
    owner give up (fenced, then every claim fenced again: the game
    unserved for good), and a trickle of 20 a second kept failing its
    appends (an attempt and a sleep per pass). Now an append goes after
    them at once, reading them in one go."""
    a = svc.start("shard", name="flood-a")
    nc = await nats.connect(svc.nats_url)
    gw = await nats.connect(user_url(svc.nats_url, natsauth.GATEWAY))
    stop = asyncio.Event()

    async def trickle() -> None:
        while not stop.is_set():
            await gw.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
            await gw.flush()
            await asyncio.sleep(0.05)

    try:
        gid, _, tail, rng = await _two_moves_in(nc, a, 21)
        subject = SUBJ.record(gid)
        last = tail.seq
        for _ in range(1005):
            await gw.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        await gw.flush()
        assert len(await stored_after(nc, subject, last, 1005)) == 1005
        flow = asyncio.ensure_future(trickle())
        try:
            played = await play_humans(nc, tail, rng, max_moves=6, until_finished=False)
        finally:
            stop.set()
            await flow
        assert [m["reply"]["ok"] for m in played] == [True] * 6, played
        assert "fenced" not in a.log() and "game dropped" not in a.log(), a.log()[-3000:]
        await tail.stop()
    finally:
        await gw.close()
        await nc.close()


@pytest.mark.parametrize(("key", "said"), [
    ("", "(TTANJIT_RECORD_KEY: none)"), ("o" * 32, "(TTANJIT_RECORD_KEY: another)")])
async def test_a_shard_without_the_key_does_not_serve_a_signed_record(
        svc: Services, key: str, said: str) -> None:
    """A signed record's messages from a shard without the key would be
    skipped by the others (moves lost), and one with another key finds
    none of the record's messages its own (the game was removed as having
    no record): it does not claim the game, said once, and a shard with
    the key takes it (review finding: the keyless shard claimed it and held
    it, unserved, until it stopped)."""
    a = svc.start("shard", name="keyed-a")
    nc = await nats.connect(svc.nats_url)
    try:
        gid, pids, tail, _ = await _two_moves_in(nc, a, 12)
        b = svc.start("shard", name="keyless-b", env={"TTANJIT_RECORD_KEY": key})
        a.kill()
        deadline = time.monotonic() + 30
        while said not in b.log():
            assert time.monotonic() < deadline, b.log()[-3000:]
            await asyncio.sleep(0.2)
        last = await nc.jetstream().get_last_msg(RECORDS_STREAM, SUBJ.record(gid))
        assert int(last.seq or 0) == tail.seq  # nothing written
        # a shard with the key takes it, the other one still there
        c = svc.start("shard", name="keyed-c")
        view = (await sync(nc, gid, pids[0], 0))["view"]
        assert view.get("hand") == tail.hosted.engine.view(tail.hosted.players[pids[0]])["hand"]
        assert "claimed game" in c.log()
        assert b.log().count(said) == 1 and "claimed game" not in b.log()
        await tail.stop()
    finally:
        await nc.close()


async def test_a_drain_offers_a_game_elsewhere_when_a_shard_lacks_its_key(
        svc: Services) -> None:
    """Review finding: a drain offered a signed game to a shard with
    another key again and again (a handover marker a round) until its
    budget ran out, then the game waited for its lease to expire. Now that
    shard says it lacks the key, and the next round offers the game to a
    shard that has it: every game handed over, the drain done at once."""
    a = svc.start("shard", name="drain-a", env={"TTANJIT_DRAIN_TIMEOUT_S": "20"})
    nc = await nats.connect(svc.nats_url)
    try:
        gids: list[str] = []
        while len(gids) < 4 or not any(  # (game ids are random: till one goes to b)
                rendezvous(g, ["drain-b", "drain-c"]) == "drain-b" for g in gids):
            gids.append((await _two_moves_in(nc, a, 30 + len(gids)))[0])
        b = svc.start("shard", name="drain-b", env={"TTANJIT_RECORD_KEY": "o" * 32})
        await _leased(nc, b, svc.start("shard", name="drain-c"))
        t0 = time.monotonic()
        assert await asyncio.to_thread(a.terminate, 60) == 0
        assert time.monotonic() - t0 < 10, a.log()[-3000:]  # (its budget: 20 s)
        owners = await nc.jetstream().key_value("ttanjit_owners")
        for gid in gids:
            own = orjson.loads((await owners.get(gid)).value)
            assert (own["shard"], own["reason"]) == ("drain-c", "handover"), (gid, own)
            rec = await records.read(nc.jetstream(), SUBJ.record(gid),
                                     keys=(RECORD_KEY.encode(),))
            assert rec is not None
            assert sum("handover" in m for _, m in rec.markers) <= 2, rec.markers
    finally:
        await nc.close()


async def test_a_game_no_shard_has_the_key_of_is_looked_at_slowly_and_counted(
        svc: Services) -> None:
    """Review finding: every shard asked for such a game's record five
    times a second, and no metric said anything. Now once in 30 s, and
    ``ttanjit_shard_unreplayable_games`` counts it (alert
    TtanjitGameUnreplayable)."""
    a = svc.start("shard", name="slow-a")
    nc = await nats.connect(svc.nats_url)
    try:
        gid = (await _two_moves_in(nc, a, 40))[0]
        b = svc.start("shard", name="slow-b", env={"TTANJIT_RECORD_KEY": "o" * 32})
        a.kill()
        deadline = time.monotonic() + 30
        while metric(metrics_text(b.ports["metrics"]), "ttanjit_shard_unreplayable_games") != 1:
            assert time.monotonic() < deadline, b.log()[-3000:]
            await asyncio.sleep(0.2)
        asks = await nc.subscribe(f"$JS.API.STREAM.MSG.GET.{RECORDS_STREAM}")
        await nc.flush()
        await asyncio.sleep(3)  # 15 scans of the orphans: none asks for its record again
        assert asks.pending_msgs == 0, asks.pending_msgs
        assert b.log().count("not claiming a game") == 1
        owners = await nc.jetstream().key_value("ttanjit_owners")
        assert orjson.loads((await owners.get(gid)).value)["shard"] == "slow-a"
    finally:
        await nc.close()


async def _leased(nc: Any, *shards: Any) -> None:
    """Until the owners bucket holds each shard's lease of its process (the
    draining shard learns of a taker from it, a moment later)."""
    owners = await nc.jetstream().key_value("ttanjit_owners")
    deadline = time.monotonic() + 10
    for shard in shards:
        while True:
            try:
                lease = orjson.loads((await owners.get(f"shard.{shard.name}")).value)
                if f'"inc":"{lease["inc"]}"' in shard.log().replace(" ", ""):
                    break
            except Exception:  # noqa: BLE001 - not there yet
                pass
            assert time.monotonic() < deadline, f"no lease of {shard.name}"
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)


def _drain(shard: Any) -> dict[str, Any]:
    """``ttanjit drain`` of ``shard`` (the chart's preStop command, no exit)."""
    done = subprocess.run([*prestop_command()[:-2], "--timeout", "8"], env=shard.env,
                          capture_output=True, text=True, timeout=60)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


async def test_a_drain_forgets_the_refusals_of_the_one_before(svc: Services) -> None:
    """Review finding: a shard that lacked the key when one drain offered
    it games was never offered them again by the next drain, though it
    came back with the key (the games went to a failover instead)."""
    a = svc.start("shard", name="again-a")
    nc = await nats.connect(svc.nats_url)
    try:
        gids = [(await _two_moves_in(nc, a, 60 + i))[0] for i in range(3)]
        b = svc.start("shard", name="again-b", env={"TTANJIT_RECORD_KEY": "o" * 32})
        await _leased(nc, b)
        assert (await asyncio.to_thread(_drain, a))["left"] == 3  # (a serves them again)
        assert b.terminate(30) == 0
        await _leased(nc, svc.start("shard", name="again-b"))  # the same, now with the key
        assert (await asyncio.to_thread(_drain, a))["handed_over"] == 3
        owners = await nc.jetstream().key_value("ttanjit_owners")
        assert {orjson.loads((await owners.get(g)).value)["shard"] for g in gids} == {"again-b"}
    finally:
        await nc.close()
