"""NATS request/reply for the gateway's per-command path, cheaper than
``Client.request``.

``Client.request`` (nats-py 2.x) sends each reply through its reply
subscription's queue and task, then through ``asyncio.wait_for``: two extra
task wake-ups and a timeout wrapper per command. Here one wildcard reply
subscription per gateway process (``_INBOX.gw<random>.*``) has a queue
whose ``put_nowait`` resolves the request's future right in nats-py's read
loop, and the timeout is a ``loop.call_later`` handle. Same errors as
``Client.request``: ``nats.errors.TimeoutError`` and ``NoRespondersError``.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

NO_RESPONDERS = "503"


class _Resolver(asyncio.Queue):  # type: ignore[type-arg]
    """Stands in for the reply subscription's pending queue: a reply
    resolves its future at once and is never queued (``join`` and
    ``empty`` see an empty queue, so drain and unsubscribe work as usual)."""

    def __init__(self, replies: Replies) -> None:
        super().__init__()
        self._replies = replies

    def put_nowait(self, item: Msg) -> None:
        r = self._replies
        if r.sub is not None:
            r.sub._pending_size = 0  # nothing is ever pending here
        fut = r.pending.pop(item.subject[len(r.prefix):], None)
        if fut is not None and not fut.done():
            fut.set_result(item)


def _expire(fut: asyncio.Future[Msg]) -> None:
    if not fut.done():
        fut.set_exception(NatsTimeout())


class Replies:
    def __init__(self, nc: Client) -> None:
        self.nc = nc
        self.prefix = f"_INBOX.gw{secrets.token_hex(8)}."
        self.pending: dict[str, asyncio.Future[Msg]] = {}
        self.sub: Any = None
        self._n = 0

    async def start(self) -> None:
        # No callback: nats-py starts no task for it; messages go to the queue.
        self.sub = await self.nc.subscribe(self.prefix + "*", pending_bytes_limit=0)
        self.sub._pending_queue = _Resolver(self)

    async def request(self, subject: str, data: bytes, timeout: float) -> Msg:
        if self.sub is None:
            return await self.nc.request(subject, data, timeout=timeout)
        self._n += 1
        token = str(self._n)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Msg] = loop.create_future()
        self.pending[token] = fut
        timer = loop.call_later(timeout, _expire, fut)
        try:
            await self.nc.publish(subject, data, reply=self.prefix + token)
            msg = await fut
        finally:
            timer.cancel()
            self.pending.pop(token, None)
        if msg.headers and msg.headers.get("Status") == NO_RESPONDERS:
            raise NoRespondersError
        return msg
