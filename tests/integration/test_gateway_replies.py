"""The gateway's request/reply path (ttanjit.gateway.replies) against a real
nats-server: replies reach the right caller under concurrency, a missing
responder and a silent one raise nats-py's own errors, nothing is left
pending, and the connection drains cleanly."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import nats
import pytest
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from ttanjit.common.nats import subscribed
from ttanjit.common.natsserver import NatsServer
from ttanjit.gateway.replies import Replies


@pytest.fixture(scope="module")
def server() -> Iterator[NatsServer]:
    with NatsServer() as s:
        yield s


async def test_replies_match_requests_and_errors(server: NatsServer) -> None:
    responder = await nats.connect(server.url)
    nc = await nats.connect(server.url)
    try:
        async def echo(msg: nats.aio.msg.Msg) -> None:
            await asyncio.sleep(0.001 * (int(msg.data) % 5))  # out of order on purpose
            await msg.respond(b"re:" + msg.data)

        async def silent(msg: nats.aio.msg.Msg) -> None:
            return None

        await responder.subscribe("t.echo", cb=echo)
        await responder.subscribe("t.silent", cb=silent)
        await subscribed(responder)
        r = Replies(nc)
        await r.start()

        got = await asyncio.gather(*(r.request("t.echo", str(i).encode(), 2.0)
                                     for i in range(200)))
        assert [m.data for m in got] == [b"re:%d" % i for i in range(200)]

        with pytest.raises(NoRespondersError):
            await r.request("t.nobody", b"x", 2.0)
        with pytest.raises(NatsTimeout):
            await r.request("t.silent", b"x", 0.2)
        assert r.pending == {}

        # a caller cancelled mid-request leaves nothing behind
        task = asyncio.create_task(r.request("t.silent", b"x", 5.0))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert r.pending == {}
        assert (await r.request("t.echo", b"7", 2.0)).data == b"re:7"
        await asyncio.wait_for(nc.drain(), 5.0)
    finally:
        await nc.close()
        await responder.close()


async def test_a_silent_owner_is_asked_again_at_once(server: NatsServer) -> None:
    """A frozen owner keeps its subscription but never answers; the shard
    that takes the game over subscribes later. The gateway asks again right
    after each 0.5 s attempt (no backoff sleep on top of a timeout), so the
    new owner is asked within 0.5 s of subscribing (docs/protocol.md 1;
    with backoff sleeps on top of the timeouts, up to ~1 s)."""
    import dataclasses

    from ttanjit.common.config import Settings
    from ttanjit.gateway.app import ATTEMPT_S, Gateway

    frozen = await nats.connect(server.url)
    new = await nats.connect(server.url)
    nc = await nats.connect(server.url)
    loop = asyncio.get_running_loop()
    try:
        gw = Gateway(dataclasses.replace(Settings(), token_secret="x" * 32))
        gw.nc, gw.replies = nc, Replies(nc)
        await gw.replies.start()
        subject = gw.subjects.cmd("g1")
        asked: list[float] = []

        async def silent(msg: nats.aio.msg.Msg) -> None:
            asked.append(loop.time())

        async def owner(msg: nats.aio.msg.Msg) -> None:
            await msg.respond(b'{"ok": true, "cmd_id": "c1"}')

        await frozen.subscribe(subject, cb=silent)
        await subscribed(frozen)

        async def take_over() -> float:
            await asyncio.sleep(2.2)
            await new.subscribe(subject, cb=owner)
            await subscribed(new)
            return loop.time()

        task = asyncio.create_task(take_over())
        reply = await gw.command("g1", "p1", "c1", {"type": "select"})
        answered = loop.time()
        taken_over = await task
        assert reply["ok"] is True and reply["cmd_id"] == "c1"
        assert answered - taken_over < ATTEMPT_S + 0.15
        gaps = [b - a for a, b in zip(asked, asked[1:], strict=False)]
        assert len(gaps) >= 3 and max(gaps) < ATTEMPT_S + 0.15, gaps
    finally:
        for c in (frozen, new, nc):
            await c.close()
