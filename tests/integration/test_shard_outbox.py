"""The shard's Outbox (ttanjit.shard.room.Outbox) against a real nats-server:
what it publishes arrives in the order it was queued, also when nats-py's
``publish`` waits (its buffer over the pending limit forces a flush) and
another send starts meanwhile. Before, that second send went ahead of the
rest of the first: a game's burst or reply could pass the one before it."""

from __future__ import annotations

import asyncio
import secrets
from types import SimpleNamespace
from typing import Any

import nats

from ttanjit.common.nats import subscribed
from ttanjit.shard.room import Outbox


async def test_sends_never_overtake_each_other(nats_url: str) -> None:
    sub_nc = await nats.connect(nats_url)
    # a small pending limit: publish waits for a forced flush every 16 KB
    nc = await nats.connect(nats_url, pending_size=16 * 1024)
    got: list[int] = []
    all_in = asyncio.Event()
    n_first, n_second = 300, 50
    subject = f"t.outbox.{secrets.token_hex(4)}"  # the NATS server is shared

    async def on_msg(msg: Any) -> None:
        got.append(int(msg.data[:8]))
        if len(got) == n_first + n_second:
            all_in.set()

    tasks: set[asyncio.Task[None]] = set()
    shard = SimpleNamespace(loop=asyncio.get_running_loop(), nc=nc,
                            link=SimpleNamespace(addr=""),
                            spawn=lambda coro: tasks.add(asyncio.ensure_future(coro)))
    try:
        await sub_nc.subscribe(subject, cb=on_msg)
        await subscribed(sub_nc)
        out = Outbox(shard)  # type: ignore[arg-type]
        pad = b"x" * 1000
        for i in range(n_first):
            out.put(subject, b"%08d" % i + pad)
        first = asyncio.ensure_future(out.send())
        await asyncio.sleep(0)  # the first send runs until publish waits on a flush
        assert not first.done()
        for i in range(n_first, n_first + n_second):
            out.put(subject, b"%08d" % i + pad)
        await out.send()  # as a subscription callback does after queueing
        await first
        await asyncio.gather(*tasks)
        await nc.flush()
        try:
            await asyncio.wait_for(all_in.wait(), 10)
        except TimeoutError:
            pass  # the comparison below shows what came
        assert got == list(range(n_first + n_second)), (len(got), got[-5:])
        assert not out.queue
    finally:
        await nc.close()
        await sub_nc.close()
