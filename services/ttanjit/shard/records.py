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

With a record key (``TTANJIT_RECORD_KEY``, the shards' alone; several,
comma-separated, while it is changed: the first signs, any holds) every
message a shard writes also carries ``Ttanjit-Sig: <prev>.<mac>``: the stream
sequence of the record's message before it (0 for the header) and an
HMAC-SHA256 of the subject, that sequence and the payload. A record whose
first message is signed is read as its shards' messages only: one whose
``prev`` is the last one taken and whose MAC holds (a reader without the key
checks ``prev`` only). Anything else on the subject (NATS checks who
publishes, not where a service or JetStream sends an answer: a gateway taken
over can have answers stored there by naming the subject as its request's
reply) is skipped, and an append that finds only such messages after its own
goes on after them instead of taking itself for fenced. What a shard with
other keys wrote (an ownership marker unsigned, a message signed with another
key) is not taken for such: it fences an append, and a claim does not serve
the game without it. A record whose first message is not signed (an older
release's, or a shard's without a key) is read whole, as before.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from nats.errors import NoRespondersError
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy, RawStreamMsg
from nats.js.errors import APIError, NoStreamResponseError, NotFoundError

from ttanjit.common.config import record_key_from_env
from ttanjit.common.nats import RECORDS_STREAM

JSON = dict[str, Any]
log = logging.getLogger(__name__)

EXPECTED_LAST_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"
MSG_ID = "Nats-Msg-Id"
SIG = "Ttanjit-Sig"
WRONG_LAST_SEQUENCE = 10071
# How many times an append goes after messages no shard wrote, more coming
# meanwhile, before it fails (the game dropped and claimed again)
MAX_PASSES = 20
# How long an append keeps trying while the stream cannot answer (no leader:
# a cluster node restarting hands its leaderships over within ~1-2 s); past
# it the shard drops the game and re-claims it from its record.
APPEND_PATIENCE_S = 5.0


class Fenced(Exception):
    """Our append was rejected: another shard owns the game now."""


class NotOurKey(Exception):
    """A signed record none of whose messages holds with the reader's key
    (another key: a shard given the wrong one, or the key changed)."""


# The shards' record keys: the first signs, any of them holds (a key
# changed in steps, README "Install" step 2)
Keys = tuple[bytes, ...]


def keys_of(text: str) -> Keys | None:
    """``TTANJIT_RECORD_KEY``'s keys (comma-separated), or None."""
    return tuple(k.strip().encode() for k in text.split(",") if k.strip()) or None


def env_keys() -> Keys | None:
    """``TTANJIT_RECORD_KEY`` (the CLIs' and the chaos audit's: who runs
    them with the services' NATS user may have it), or None."""
    return keys_of(record_key_from_env())


def sign(key: bytes, subject: str, prev: int, payload: bytes) -> str:
    """The ``Ttanjit-Sig`` of a record message written after ``prev``."""
    mac = hmac.digest(key, b"%s\n%d\n%s" % (subject.encode(), prev, payload), "sha256")
    return f"{prev}.{base64.urlsafe_b64encode(mac[:18]).decode()}"


class Chain:
    """Which messages of one game's record its shards wrote, taken in
    stream order (:func:`read`, :func:`append`): the first message says
    whether the record is signed; in a signed one a message counts if its
    ``prev`` is the last one counted and (with ``keys``) its MAC holds
    with one of them."""

    __slots__ = ("subject", "keys", "signed", "head", "skipped", "forged", "after_head")

    def __init__(self, subject: str, keys: Keys | None, head: int = 0,
                 signed: bool | None = None) -> None:
        self.subject = subject
        self.keys = keys
        self.signed = signed  # None: no message seen yet
        self.head = head  # stream sequence of the last message counted
        self.skipped = 0
        self.forged = 0  # of them, in the record's order but their MAC wrong
        # of them, those after the last message counted (no shard's append
        # has gone past them yet)
        self.after_head = 0

    def take(self, seq: int, headers: dict[str, str] | None, data: bytes) -> bool:
        sig = headers.get(SIG) if headers else None
        if self.signed is None:
            self.signed = sig is not None
        if not self.signed:
            self.head = seq
            return True
        if sig is None or sig.partition(".")[0] != str(self.head):
            self.skipped += 1
            self.after_head += 1
            return False
        if self.keys is not None and not any(
                hmac.compare_digest(sig, sign(k, self.subject, self.head, data))
                for k in self.keys):
            self.skipped += 1
            self.after_head += 1
            self.forged += 1
            return False
        self.head = seq
        self.after_head = 0
        return True


@dataclass(slots=True)
class StoredRecord:
    header: JSON
    entries: list[JSON] = field(default_factory=list)  # inputs, in order
    markers: list[tuple[int, JSON]] = field(default_factory=list)  # (index in entries, marker)
    last_seq: int = 0  # the last message its shards wrote (an append is signed after it)
    stream_last: int = 0  # the subject's last message (an append is expected after it)
    signed: bool = False
    skipped: int = 0  # messages on its subject no shard wrote
    # of them, those after its shards' last message: the others an
    # append went past (counted then: ``append``'s ``skipped``)
    skipped_after: int = 0
    # of them, what a shard without these keys wrote (an ownership marker
    # unsigned, a message signed with another key): the game went on there
    foreign: int = 0


def split(doc: JSON, rec: StoredRecord) -> None:
    if "inputs" in doc and "t" not in doc:
        rec.entries.extend(doc["inputs"])
    elif "t" in doc:
        rec.entries.append(doc)
    else:
        rec.markers.append((len(rec.entries), doc))


async def _first_msg(js: JetStreamContext, subject: str) -> RawStreamMsg | None:
    """The subject's first message still kept (None: none)."""
    try:
        return await js.get_msg(RECORDS_STREAM, seq=1, subject=subject, next=True)
    except NotFoundError:
        return None


async def first(js: JetStreamContext, subject: str) -> JSON | None:
    """The game's first message, its header (None: no record, or its header
    aged out): one request, for who may read the rest."""
    msg = await _first_msg(js, subject)
    if msg is None:
        return None
    doc = orjson.loads(msg.data or b"{}")
    return doc if isinstance(doc, dict) and "players" in doc else None


async def _each(js: JetStreamContext, subject: str, start: int = 1, timeout: float = 5.0
                ) -> AsyncIterator[tuple[int, dict[str, str] | None, bytes]]:
    """The subject's messages from stream sequence ``start`` to its last
    (as it was when asked), in order: ``(seq, headers, payload)``. One
    ordered consumer, so many come in one go."""
    try:
        last = await js.get_last_msg(RECORDS_STREAM, subject)
    except NotFoundError:
        return
    last_seq = int(last.seq or 0)
    if last_seq < start:
        return
    if start > 1:
        sub = await js.subscribe(subject, ordered_consumer=True, stream=RECORDS_STREAM,
                                 deliver_policy=DeliverPolicy.BY_START_SEQUENCE,
                                 config=ConsumerConfig(opt_start_seq=start))
    else:
        sub = await js.subscribe(subject, ordered_consumer=True, stream=RECORDS_STREAM,
                                 deliver_policy=DeliverPolicy.ALL)
    try:
        while True:
            msg = await sub.next_msg(timeout=timeout)
            seq = msg.metadata.sequence.stream
            yield seq, msg.headers, msg.data
            if seq >= last_seq:
                break
    finally:
        await sub.unsubscribe()


def _unsigned_claim(headers: dict[str, str] | None, data: bytes) -> bool:
    """An ownership marker with no signature: a shard without the key (of
    a release before signing, during a one-step upgrade) took the game."""
    if (headers and SIG in headers) or (b'"claim"' not in data and b'"handover"' not in data):
        return False
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return isinstance(doc, dict) and ("claim" in doc or "handover" in doc)


async def read(js: JetStreamContext, subject: str, timeout: float = 5.0,
               keys: Keys | None = None) -> StoredRecord | None:
    """Every message its shards wrote on the game's subject (None: no
    record, or none whole). :class:`NotOurKey`: a signed record none of
    whose messages holds with ``keys``."""
    rec: StoredRecord | None = None
    chain = Chain(subject, keys)
    last = 0
    unsigned_claims = 0
    async with contextlib.aclosing(_each(js, subject, 1, timeout)) as messages:
        async for seq, headers, data in messages:
            last = seq
            if not chain.take(seq, headers, data):
                unsigned_claims += _unsigned_claim(headers, data)
                continue
            doc = orjson.loads(data)
            if rec is None:
                if "players" not in doc:
                    # its header aged out (the stream keeps each message 30
                    # days: docs/protocol.md 5) and its last moves not yet:
                    # what is left is no record (a replay said not_your_game)
                    return None
                rec = StoredRecord(header=doc)
            else:
                split(doc, rec)
    if rec is None:
        if chain.forged:
            raise NotOurKey(f"{subject}: none of its {chain.skipped} messages holds with this key")
        return None  # nothing its shards wrote
    rec.foreign = unsigned_claims + chain.forged
    rec.last_seq = chain.head
    rec.stream_last = last
    rec.signed = bool(chain.signed)
    rec.skipped = chain.skipped
    rec.skipped_after = chain.after_head
    return rec


async def holds(js: JetStreamContext, subject: str, keys: Keys | None) -> bool:
    """Whether a shard with ``keys`` may serve the game: its record's first
    message is unsigned (an older release's record, or no key's), or signed
    with one of ``keys`` (no record, or its header aged out: yes, the
    claim's read finds that out)."""
    first = await _first_msg(js, subject)
    if first is None:
        return True
    sig = first.headers.get(SIG) if first.headers else None
    if sig is None or not sig.startswith("0."):
        return True
    return keys is not None and Chain(subject, keys).take(
        int(first.seq or 0), first.headers, first.data or b"")


async def _last_if_ours(js: JetStreamContext, subject: str, msg_id: str) -> int:
    try:
        last = await js.get_last_msg(RECORDS_STREAM, subject)
    except NotFoundError:
        return 0
    if last.headers and last.headers.get(MSG_ID) == msg_id:
        return int(last.seq or 0)
    return 0


async def _after(js: JetStreamContext, subject: str, head: int, known: int, msg_id: str,
                 keys: Keys) -> tuple[int, bool, int]:
    """After an append (signed after ``head``, expected after ``known``)
    was refused for a wrong last sequence: our own earlier attempt's
    sequence if it landed (``(seq, True, skipped)``); :class:`Fenced` if
    another shard wrote after ``head``; else (only messages no shard wrote
    after ``known``) the last message's sequence, for the append to go on
    after it (``(seq, False, skipped)``); ``skipped``: how many messages no
    shard wrote it went past."""
    first = await _first_msg(js, subject)
    if first is None:
        raise Fenced("the record is gone")
    if not (first.headers and SIG in first.headers):
        # an unsigned record: every message on it is a shard's
        landed = await _last_if_ours(js, subject, msg_id)
        if landed:
            return landed, True, 0
        raise Fenced("another shard appended")
    chain = Chain(subject, keys, head=head, signed=True)
    last = known
    async with contextlib.aclosing(_each(js, subject, known + 1)) as messages:
        async for seq, headers, data in messages:
            last = seq
            if chain.take(seq, headers, data):
                if headers and headers.get(MSG_ID) == msg_id:
                    return seq, True, chain.skipped  # ours
                raise Fenced("another shard appended")
            if chain.forged or _unsigned_claim(headers, data):
                # (not skipped: two owners would append on)
                raise Fenced("a shard without this key appended (another key, or an older "
                             "release's)")
    if last == known:
        raise Fenced("nothing after our last message, yet the append was refused")
    return last, False, chain.skipped


async def append(js: JetStreamContext, subject: str, doc: JSON, expected_last: int,
                 msg_id: str, retries: int = 3, patience_s: float = APPEND_PATIENCE_S,
                 keys: Keys | None = None, stream_last: int = 0,
                 skipped: Callable[[int], None] | None = None) -> int:
    """Append one message after ``expected_last`` (the record's last message
    its shards wrote); returns its sequence. Raises :class:`Fenced` when
    another shard appended in between. A stream without a leader (503, no
    responders) is asked again for ``patience_s`` (the same ``Nats-Msg-Id``,
    so an attempt that landed is stored once). With ``keys`` the message is
    signed (with the first), and messages no shard wrote after
    ``expected_last`` are gone past (module docstring): ``stream_last``, the
    subject's last message when the caller read it, those up to it known to
    be such; ``skipped`` is told how many it went past, each time."""
    payload = orjson.dumps(doc)
    known = max(expected_last, stream_last if keys is not None else 0)
    headers = {EXPECTED_LAST_SUBJECT_SEQ: str(known), MSG_ID: msg_id}
    if keys is not None:
        headers[SIG] = sign(keys[0], subject, expected_last, payload)
    loop = asyncio.get_running_loop()
    give_up = loop.time() + patience_s
    waits = 0
    attempt = 0
    passes = 0  # times past messages no shard wrote
    while attempt < retries:
        try:
            ack = await js.publish(subject, payload, headers=dict(headers), timeout=2.0)
            return int(ack.seq)
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                # Our own earlier attempt may have landed (its ack lost, e.g.
                # across a server restart): then this is success, not fencing.
                if keys is None:
                    landed = await _last_if_ours(js, subject, msg_id)
                    if landed:
                        return landed
                    raise Fenced(str(exc.description)) from None
                seq, landed, junk = await _after(js, subject, expected_last, known, msg_id,
                                                 keys)
                if junk and skipped is not None:
                    skipped(junk)
                if landed:
                    return seq
                # only messages no shard wrote: after them, at once (not
                # an attempt: more may come meanwhile)
                log.warning("record has messages no shard wrote after %d (the last at %d): "
                            "appending after them", expected_last, seq,
                            extra={"game": subject.rpartition(".")[2]})
                known = seq
                headers[EXPECTED_LAST_SUBJECT_SEQ] = str(seq)
                passes += 1
                if passes <= MAX_PASSES:
                    continue
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
