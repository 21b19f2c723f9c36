"""Fencing on a signed record (``ttanjit.shard.records.append``,
docs/protocol.md 5): an append refused for a wrong last sequence goes on
after messages no shard wrote, finds its own earlier attempt, and is fenced
by another shard's message — a signed one, and (review finding: taken for
junk, two owners appended on) an unsigned claim of a shard of an older
release or a message signed with another key, which a claim's read counts
apart. Real nats-server, the services' user."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import nats
import orjson
import pytest
from conftest import Services
from shardkit import stored_after

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


@contextlib.asynccontextmanager
async def _signed_game(svc: Services, gid: str) -> AsyncIterator[tuple[Any, Any, str, int]]:
    """A connection as the services' user, its JetStream, a signed record
    begun (:func:`_game`): its subject and last sequence."""
    svc.make_jetstream()
    nc = await nats.connect(svc.nats_url)
    try:
        js = nc.jetstream()
        yield nc, js, SUBJ.record(gid), await _game(js, gid)
    finally:
        await nc.close()


async def test_an_append_goes_on_after_junk_and_finds_its_own(svc: Services) -> None:
    async with _signed_game(svc, "fence1") as (nc, js, subject, head):
        for _ in range(3):  # answers stored on the subject
            await nc.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        assert len(await stored_after(nc, subject, head, 3)) == 3
        seq = await records.append(js, subject, {"t": 1}, head, "fence1:m1", keys=KEYS)
        assert seq == head + 4
        # an attempt that landed (its ack lost), answers after it: the retry
        # with the same id is that message, not a second one
        payload = orjson.dumps({"t": 2})
        landed = await js.publish(subject, payload, headers={
            records.MSG_ID: "fence1:m2", records.EXPECTED_LAST_SUBJECT_SEQ: str(seq),
            records.SIG: records.sign(KEYS[0], subject, seq, payload)})
        await nc.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        assert len(await stored_after(nc, subject, int(landed.seq), 1)) == 1
        assert await records.append(js, subject, {"t": 2}, seq, "fence1:m2", keys=KEYS) \
            == landed.seq
        rec = await records.read(js, subject, keys=KEYS)
        assert rec is not None and [e["t"] for e in rec.entries] == [1, 2]
        assert rec.skipped == 4 and rec.last_seq == landed.seq


@pytest.mark.parametrize("other", [None, (b"o" * 32,), KEYS],
                         ids=["older-release", "another-key", "same-key"])
async def test_another_shards_claim_fences(svc: Services, other: records.Keys | None) -> None:
    gid = f"fence-{'x' if other is None else other[0][:1].decode()}"
    async with _signed_game(svc, gid) as (nc, js, subject, head):
        await nc.publish(f"$JS.API.STREAM.INFO.{RECORDS_STREAM}", b"", reply=subject)
        assert len(await stored_after(nc, subject, head, 1)) == 1
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


async def test_a_record_whose_header_aged_out_is_no_record(svc: Services) -> None:
    """Its header gone (the stream keeps a message 30 days), what is left
    of a signed record is no record to a claim, whatever its keys (review
    finding: ``holds`` took the first message left for another key's, and
    the game's owner entry was never removed)."""
    async with _signed_game(svc, "aged1") as (_, js, subject, head):
        await records.append(js, subject, {"t": 1}, head, "aged1:m1", keys=KEYS)
        first = await js.get_msg(RECORDS_STREAM, seq=1, subject=subject, next=True)
        await js.delete_msg(RECORDS_STREAM, int(first.seq or 0))
        for keys in (KEYS, (b"o" * 32,), None):
            assert await records.holds(js, subject, keys)
            assert await records.read(js, subject, keys=keys) is None
