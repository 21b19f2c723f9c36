"""Fencing on a signed record (``ttanjit.shard.records.append``,
docs/protocol.md 5): an append refused for a wrong last sequence goes on
after messages no shard wrote, finds its own earlier attempt, and is fenced
by another shard's message — a signed one, and (review finding: taken for
junk, two owners appended on) an unsigned claim of a shard of an older
release or a message signed with another key, which a claim's read counts
apart. Real nats-server, the services' user."""

from __future__ import annotations

import asyncio
from typing import Any

import nats
import orjson
import pytest
from conftest import Services

from ttanjit.common.nats import RECORDS_STREAM, Subjects
from ttanjit.shard import records

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

KEYS = (b"k" * 32,)
SUBJ = Subjects()


async def _game(js: object, gid: str) -> int:
    """A record's header and first claim, signed; the last's sequence."""
    subject = SUBJ.record(gid)
    seq = await records.append(js, subject, {"players": {"p": 0}}, 0, f"{gid}:h", keys=KEYS)
    return await records.append(js, subject, {"claim": {"shard": "a", "epoch": 1}}, seq,
                                f"{gid}:c1", keys=KEYS)


async def _stored_up_to(js: Any, subject: str, seq: int) -> None:
    """Until the subject's last message is ``seq`` (an answer is stored a
    moment after its request)."""
    for _ in range(200):
        if (await js.get_last_msg(RECORDS_STREAM, subject)).seq == seq:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{subject}: not stored up to {seq}")


async def test_an_append_goes_on_after_junk_and_finds_its_own(svc: Services) -> None:
    svc.make_jetstream()
    nc = await nats.connect(svc.nats_url)
    try:
        js = nc.jetstream()
        subject = SUBJ.record("fence1")
        head = await _game(js, "fence1")
        for _ in range(3):  # answers stored on the subject
            await nc.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        await _stored_up_to(js, subject, head + 3)
        seq = await records.append(js, subject, {"t": 1}, head, "fence1:m1", keys=KEYS)
        assert seq == head + 4
        # an attempt that landed (its ack lost), answers after it: the retry
        # with the same id is that message, not a second one
        payload = orjson.dumps({"t": 2})
        landed = await js.publish(subject, payload, headers={
            records.MSG_ID: "fence1:m2", records.EXPECTED_LAST_SUBJECT_SEQ: str(seq),
            records.SIG: records.sign(KEYS[0], subject, seq, payload)})
        await nc.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        await _stored_up_to(js, subject, int(landed.seq) + 1)
        assert await records.append(js, subject, {"t": 2}, seq, "fence1:m2", keys=KEYS) \
            == landed.seq
        rec = await records.read(js, subject, keys=KEYS)
        assert rec is not None and [e["t"] for e in rec.entries] == [1, 2]
        assert rec.skipped == 4 and rec.last_seq == landed.seq
    finally:
        await nc.close()


@pytest.mark.parametrize("other", [None, (b"o" * 32,), KEYS],
                         ids=["older-release", "another-key", "same-key"])
async def test_another_shards_claim_fences(svc: Services, other: records.Keys | None) -> None:
    svc.make_jetstream()
    nc = await nats.connect(svc.nats_url)
    gid = f"fence-{'x' if other is None else other[0][:1].decode()}"
    try:
        js = nc.jetstream()
        subject = SUBJ.record(gid)
        head = await _game(js, gid)
        await nc.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        await _stored_up_to(js, subject, head + 1)
        # shard b took the game over: read it and claimed it after the answer
        # (an older release's after the last message it read, the answer)
        last = int((await js.get_last_msg(RECORDS_STREAM, subject)).seq or 0)
        await records.append(js, subject, {"claim": {"shard": "b", "epoch": 2}},
                             last if other is None else head, f"{gid}:c2", keys=other,
                             stream_last=last)
        with pytest.raises(records.Fenced):
            await records.append(js, subject, {"t": 1}, head, f"{gid}:m1", keys=KEYS)
        # a claim reading it finds the other shard's part (it does not serve
        # the game without it: review finding, the game went back)
        rec = await records.read(js, subject, keys=KEYS)
        assert rec is not None and rec.foreign == (0 if other == KEYS else 1)
    finally:
        await nc.close()


async def test_a_record_whose_header_aged_out_is_no_record(svc: Services) -> None:
    """Its header gone (the stream keeps a message 30 days), what is left
    of a signed record is no record to a claim, whatever its keys (review
    finding: ``holds`` took the first message left for another key's, and
    the game's owner entry was never removed)."""
    svc.make_jetstream()
    nc = await nats.connect(svc.nats_url)
    try:
        js = nc.jetstream()
        subject = SUBJ.record("aged1")
        head = await _game(js, "aged1")
        await records.append(js, subject, {"t": 1}, head, "aged1:m1", keys=KEYS)
        first = await js.get_msg(RECORDS_STREAM, seq=1, subject=subject, next=True)
        await js.delete_msg(RECORDS_STREAM, int(first.seq or 0))
        for keys in (KEYS, (b"o" * 32,), None):
            assert await records.holds(js, subject, keys)
            assert await records.read(js, subject, keys=keys) is None
    finally:
        await nc.close()
