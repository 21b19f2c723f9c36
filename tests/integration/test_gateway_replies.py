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
        await responder.flush()
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
