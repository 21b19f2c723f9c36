"""The write-ahead game record in JetStream (docs/protocol.md section 5).

One subject per game, ``<prefix>.record.<game_id>``. Messages, in order:

- the header: ``Record.header_json()`` + ``game_id``, ``players``,
  ``origin_ms`` (wall ms of t = 0 on the creating shard);
- inputs: ``{"t", "seat", "action", "player", "cmd", "by", "ms"}`` (clock-only
  inputs are ``{"t", "ms"}``), or several in order as ``{"inputs": [...]}``;
- ownership markers (not inputs; replay skips them):
  ``{"claim": {"shard", "inc", "epoch", "reason", "origin_ms"}}`` written by
  each new owner before it acts (this fences the previous owner), and
  ``{"handover": {"from", "to", "t"}}`` written by a draining owner.

Every append carries ``Nats-Expected-Last-Subject-Sequence``: an owner that
was replaced has a stale sequence and its append is rejected (fencing), and
``Nats-Msg-Id`` so a retried append is stored once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson
from nats.errors import NoRespondersError
from nats.js import JetStreamContext
from nats.js.api import DeliverPolicy
from nats.js.errors import APIError, NoStreamResponseError, NotFoundError

from ttanjit.common.nats import RECORDS_STREAM

JSON = dict[str, Any]

EXPECTED_LAST_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"
MSG_ID = "Nats-Msg-Id"
WRONG_LAST_SEQUENCE = 10071
# How long an append keeps trying while the stream cannot answer (no leader:
# a cluster node restarting hands its leaderships over within ~1-2 s); past
# it the shard drops the game and re-claims it from its record.
APPEND_PATIENCE_S = 5.0


class Fenced(Exception):
    """Our append was rejected: another shard owns the game now."""


@dataclass(slots=True)
class StoredRecord:
    header: JSON
    entries: list[JSON] = field(default_factory=list)  # inputs, in order
    markers: list[tuple[int, JSON]] = field(default_factory=list)  # (index in entries, marker)
    last_seq: int = 0


def split(doc: JSON, rec: StoredRecord) -> None:
    if "inputs" in doc and "t" not in doc:
        rec.entries.extend(doc["inputs"])
    elif "t" in doc:
        rec.entries.append(doc)
    else:
        rec.markers.append((len(rec.entries), doc))


async def first(js: JetStreamContext, subject: str) -> JSON | None:
    """The game's first message, its header (None: no record, or its header
    aged out): one request, for who may read the rest."""
    try:
        msg = await js.get_msg(RECORDS_STREAM, seq=1, subject=subject, next=True)
    except NotFoundError:
        return None
    doc = orjson.loads(msg.data or b"{}")
    return doc if isinstance(doc, dict) and "players" in doc else None


async def read(js: JetStreamContext, subject: str, timeout: float = 5.0) -> StoredRecord | None:
    """Every message on the game's subject (None: no record, or none whole)."""
    try:
        last = await js.get_last_msg(RECORDS_STREAM, subject)
    except NotFoundError:
        return None
    last_seq = int(last.seq or 0)
    sub = await js.subscribe(subject, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL,
                             stream=RECORDS_STREAM)
    rec: StoredRecord | None = None
    try:
        while True:
            msg = await sub.next_msg(timeout=timeout)
            doc = orjson.loads(msg.data)
            if rec is None:
                if "players" not in doc:
                    # its header aged out (the stream keeps each message 30
                    # days: docs/protocol.md 5) and its last moves not yet:
                    # what is left is no record (a replay said not_your_game)
                    return None
                rec = StoredRecord(header=doc)
            else:
                split(doc, rec)
            if msg.metadata.sequence.stream >= last_seq:
                break
    finally:
        await sub.unsubscribe()
    assert rec is not None
    rec.last_seq = last_seq
    return rec


async def _last_if_ours(js: JetStreamContext, subject: str, msg_id: str) -> int:
    try:
        last = await js.get_last_msg(RECORDS_STREAM, subject)
    except NotFoundError:
        return 0
    if last.headers and last.headers.get(MSG_ID) == msg_id:
        return int(last.seq or 0)
    return 0


async def append(js: JetStreamContext, subject: str, doc: JSON, expected_last: int,
                 msg_id: str, retries: int = 3, patience_s: float = APPEND_PATIENCE_S) -> int:
    """Append one message after ``expected_last``; returns its sequence.
    Raises :class:`Fenced` when someone else appended in between. A stream
    without a leader (503, no responders) is asked again for ``patience_s``
    (the same ``Nats-Msg-Id``, so an attempt that landed is stored once)."""
    payload = orjson.dumps(doc)
    headers = {EXPECTED_LAST_SUBJECT_SEQ: str(expected_last), MSG_ID: msg_id}
    loop = asyncio.get_running_loop()
    give_up = loop.time() + patience_s
    waits = 0
    attempt = 0
    while attempt < retries:
        try:
            ack = await js.publish(subject, payload, headers=dict(headers), timeout=2.0)
            return int(ack.seq)
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                # Our own earlier attempt may have landed (its ack lost, e.g.
                # across a server restart): then this is success, not fencing.
                landed = await _last_if_ours(js, subject, msg_id)
                if landed:
                    return landed
                raise Fenced(str(exc.description)) from None
            if attempt == retries - 1:
                raise
        except (NoStreamResponseError, NoRespondersError):
            if loop.time() >= give_up:
                raise
            waits += 1
            await asyncio.sleep(min(0.05 * waits, 0.25))
            continue  # not counted: nothing was stored
        except TimeoutError:
            if attempt == retries - 1:
                raise
        attempt += 1
        await asyncio.sleep(0.05 * attempt)
    raise RuntimeError("unreachable")
