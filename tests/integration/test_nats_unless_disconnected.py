"""``ttanjit.common.nats.unless_disconnected``: a NATS step that a shutdown
awaits is given up at once when the connection loses its server, instead
of waiting out its own timeout (``make run``'s Ctrl-C stops nats-server
beside the services). Against a real nats-server of its own."""

from __future__ import annotations

import asyncio
import time

import pytest

from ttanjit.common.nats import connect, unless_disconnected
from ttanjit.common.natsserver import NatsServer

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def test_completes_times_out_and_gives_up_when_the_server_goes() -> None:
    server = NatsServer().start()
    try:
        nc = await connect(server.url, "unless-disconnected-test")
        js = nc.jetstream(timeout=8.0)
        kv = await js.create_key_value(bucket="unless_test")

        # done: None
        assert await unless_disconnected(nc, kv.put("k", b"v"), 5.0) is None
        assert (await kv.get("k")).value == b"v"

        # its own error: the error
        async def fails() -> None:
            raise ValueError("bad")
        assert await unless_disconnected(nc, fails(), 5.0) == "ValueError('bad')"

        # slower than the bound: "timeout", and the step is cancelled
        slow = asyncio.Event()

        async def waits() -> None:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                slow.set()
                raise
        t0 = time.monotonic()
        assert await unless_disconnected(nc, waits(), 0.2) == "timeout"
        assert slow.is_set() and time.monotonic() - t0 < 2

        # the server goes while a request waits for its answer (8 s timeout)
        sub = await nc.subscribe("nobody.answers")  # a responder that never replies
        pending = asyncio.ensure_future(unless_disconnected(
            nc, nc.request("nobody.answers", b"?", timeout=8.0), 20.0))
        await asyncio.sleep(0.3)
        assert not pending.done()
        server.stop()
        t0 = time.monotonic()  # the server gone (its stop waited for its exit)
        assert await pending == "nats connection lost"
        assert time.monotonic() - t0 < 5  # not the request's 8 s

        # and while it is away, a new step is not even started
        t0 = time.monotonic()
        assert await unless_disconnected(nc, kv.put("k", b"w"), 20.0) == "nats connection lost"
        assert time.monotonic() - t0 < 1.5  # not the 20 s, nor a put's own timeout
        await sub.unsubscribe()
        await nc.close()
    finally:
        server.stop()
