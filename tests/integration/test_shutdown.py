"""SIGTERM stops a service cleanly (exit code 0, within a few seconds) while
the rest of the stack keeps talking to it (DESIGN.md 4: rolling upgrades)."""

from __future__ import annotations

import asyncio
import time

import pytest
import websockets
from conftest import Services
from stack import stack
from test_gateway_games import play_some
from wsclient import WSClient, assert_gapless

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def _stop_timed(proc: object) -> tuple[int, float]:
    t0 = time.monotonic()
    rc = proc.terminate(timeout=15)  # type: ignore[attr-defined]
    return rc, time.monotonic() - t0


def test_matchmaker_exits_on_sigterm_while_shards_heartbeat(services: Services) -> None:
    """A shard sends heartbeats every second to the matchmaker (docs/protocol.md
    4); SIGTERM still stops the matchmaker with exit code 0 within 5 s."""
    shard = services.start("shard", name="sd-shard")
    mm = services.start("matchmaker", name="sd-mm")
    # heartbeats arrive; the ratings consumer's 1 s fetches come and go
    time.sleep(3.5)
    assert shard.alive() and mm.alive()
    rc, took = _stop_timed(mm)
    log = mm.log()
    assert rc == 0 and took < 1.5, (rc, took, log[-3000:])
    # nothing left waiting: a pull subscription's stray 408 made nc.drain()
    # hang until its timeout (and log a never-retrieved CancelledError)
    assert "never retrieved" not in log and '"level":"error"' not in log, log[-3000:]
    # and the shard (no other shard to hand over to: its leases expire)
    rc, took = _stop_timed(shard)
    assert rc == 0 and took < 5, (rc, took, shard.log()[-3000:])


async def test_gateway_sigterm_closes_with_1001_and_the_client_resumes_elsewhere(
        nats_url: str) -> None:
    """SIGTERM on a gateway (a rolling upgrade): exit code 0 within a few
    seconds; its WebSockets are closed with 1001 (going away) after their
    sessions are saved, new ones are refused, so the client resumes on
    another gateway without a gap (docs/websocket.md, docs/protocol.md 5
    ``ttanjit_sessions``)."""
    with stack(nats_url, shards=1, gateways=2, bot_wait_ms=300) as st:
        a = await WSClient.signed_in(st.http(0), "배포")
        await a.send({"type": "queue", "game": "penalty_rows", "seats": 3})
        gid = (await a.wait_type("matched", 20))["game_id"]
        await a.wait_type("view")
        await play_some(a, "penalty_rows", gid, 1)
        stopping = asyncio.ensure_future(asyncio.to_thread(_stop_timed, st.gateways[0]))
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:  # everything the gateway sends until it goes away
                await a.recv(15)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001, closed.value
        # a client told 1001 reconnects at once: the gateway on its way out
        # refuses it (it would hold that connection, and its own exit, while
        # the client waits there), so it reaches another gateway
        with pytest.raises(OSError):
            again = WSClient(st.http(0), a.ident)
            await again.connect()
        rc, took = await stopping
        assert rc == 0 and took < 5, (rc, took, st.gateways[0].log()[-3000:])
        b = WSClient(st.http(1), a.ident)
        await b.connect()
        welcome = await b.hello({"session": a.session, "last_seq": a.last_seq})
        assert welcome["resumed"] and welcome["resume_result"] == "gapless", welcome
        assert welcome["game_id"] == gid and welcome["seq"] == a.last_seq + 1
        await play_some(b, "penalty_rows", gid, 1)
        assert_gapless(a.frames + b.frames, gid)
        await b.action(gid, {"type": "leave"})
        await b.close()
