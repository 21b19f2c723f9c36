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


async def test_a_bad_subject_costs_its_own_message_only(nats_url: str) -> None:
    """A message whose subject nats-py refuses (a route named after a
    gateway id with a space: the shard now takes only ids that are one
    subject token, room.GATEWAY_ID) is not sent, and the rest of the send
    goes on: before, it stopped there and lost the other players' parts,
    replies and appends queued after it (review finding)."""
    from ttanjit.shard.room import GATEWAY_ID

    nc = await nats.connect(nats_url)
    subject = f"t.outbox.{secrets.token_hex(4)}"
    tasks: set[asyncio.Task[None]] = set()
    shard = SimpleNamespace(loop=asyncio.get_running_loop(), nc=nc,
                            link=SimpleNamespace(addr=""),
                            spawn=lambda coro: tasks.add(asyncio.ensure_future(coro)))
    try:
        sub = await nc.subscribe(subject)
        await subscribed(nc)
        out = Outbox(shard)  # type: ignore[arg-type]
        out.put(subject, b"1")
        out.put("ttanjit.v1.gw.a b.games", b"2")
        out.put(subject, b"3")
        await out.send()
        await asyncio.gather(*tasks)
        await nc.flush()
        got = [(await sub.next_msg(timeout=5)).data for _ in range(2)]
        assert got == [b"1", b"3"] and not out.queue
        assert GATEWAY_ID.fullmatch("3f9a0c1b2d4e5f60") and not GATEWAY_ID.fullmatch("a b")
    finally:
        await nc.close()
