"""Group commit of the write-ahead appends (issue 13; docs/protocol.md 5).

Every room appends its accepted inputs to its record before it answers or
publishes anything (one append in flight per game; inputs that come
meanwhile go together in the next). The shard's appends all go through one
:class:`Committer`: each is a plain publish to the record subject with the
JetStream headers (expected last subject sequence, message id) and a reply
subject of the committer's own inbox, queued with everything else the shard
sends in the same turn of the event loop (:class:`ttanjit.shard.room.Outbox`,
so the appends of many games leave in one write and their acks come back in
one read: one JetStream round trip per tick), and the ack calls the room
back. No task, no future and no stdlib JSON per append, unlike
``JetStreamContext.publish``.

Anything but a plain ack (a timeout, no stream leader, a wrong last
sequence, another API error) hands the append to the patient path,
:func:`ttanjit.shard.records.append`, with the same message id: an attempt
that landed is stored once, a fenced one is told apart from our own ack
lost on the way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
from nats.aio.msg import Msg

from ttanjit.shard.records import EXPECTED_LAST_SUBJECT_SEQ, MSG_ID, SIG, sign

if TYPE_CHECKING:
    from ttanjit.shard.service import Shard

ACK_TIMEOUT_S = 2.0  # no ack this long: the patient path takes over

# called with the stored sequence (int), or None: take the patient path
Done = Callable[[int | None], None]


class Committer:
    def __init__(self, shard: Shard) -> None:
        self.shard = shard
        self.prefix = ""
        self.n = 0
        self.waiting: dict[str, tuple[Done, asyncio.TimerHandle]] = {}
        self.sub: Any = None

    async def start(self) -> None:
        nc = self.shard.nc
        self.prefix = nc.new_inbox()
        self.sub = await nc.subscribe(self.prefix + ".*", cb=self._on_ack,
                                      pending_msgs_limit=65536)

    def append(self, subject: str, payload: bytes, expected_last: int, msg_id: str,
               done: Done) -> None:
        """Queue one append (sent with the shard's next publishes); ``done``
        is called once with its stream sequence or ``None``."""
        self.n += 1
        token = str(self.n)
        timer = self.shard.loop.call_later(ACK_TIMEOUT_S, self._expire, token)
        self.waiting[token] = (done, timer)
        headers = {EXPECTED_LAST_SUBJECT_SEQ: str(expected_last), MSG_ID: msg_id}
        keys = self.shard.record_keys
        if keys is not None:
            headers[SIG] = sign(keys[0], subject, expected_last, payload)
        self.shard.out.put(subject, payload, f"{self.prefix}.{token}", headers)

    def _expire(self, token: str) -> None:
        entry = self.waiting.pop(token, None)
        if entry is not None:
            entry[0](None)

    async def _on_ack(self, msg: Msg) -> None:
        entry = self.waiting.pop(msg.subject.rsplit(".", 1)[-1], None)
        if entry is None:
            return  # expired already: the patient path answers it
        done, timer = entry
        timer.cancel()
        seq = None
        if msg.data:  # an empty message is a status (503: no stream leader)
            try:
                ack = orjson.loads(msg.data)
                if "error" not in ack:
                    seq = int(ack["seq"])
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                seq = None
        done(seq)
        if self.shard.out.queue:
            await self.shard.out.send()
