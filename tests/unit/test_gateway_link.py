"""The gateway's end of the shard link (ttanjit.gateway.link; docs/protocol.md
1.1) against a real TCP server in this process: replies by request id,
bursts handed on, not here / a dead or unreachable link -> None (the gateway
asks over NATS) and the route forgotten."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest

from ttanjit.gateway.link import Links
from ttanjit.shard.link import BURST, BYE, COMMAND, HELLO, NOT_HERE, PING, REPLY, frame


async def fake_shard(answer: str) -> tuple[asyncio.Server, str, list[bytes]]:
    """A link server answering every command with ``answer`` (reply, not_here,
    silent), after sending one burst."""
    seen: list[bytes] = []

    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await r.readexactly(5)
            except asyncio.IncompleteReadError:
                return
            n, kind = struct.unpack("!I", head[:4])[0], head[4]
            body = await r.readexactly(n - 1)
            seen.append(bytes((kind,)) + body)
            if kind != COMMAND:
                continue
            rid = body[:4]
            w.write(frame(BURST, b'{"g":"g1","p":[]}'))
            if answer == "reply":
                w.write(frame(REPLY, rid + b'{"ok":true,"cmd_id":"c1","seq":3}'))
            elif answer == "not_here":
                w.write(frame(NOT_HERE, rid))
            await w.drain()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"127.0.0.1:{port}", seen


async def test_a_reply_comes_back_by_its_id_and_bursts_are_handed_on() -> None:
    server, addr, seen = await fake_shard("reply")
    bursts: list[bytes] = []
    links = Links("gw1", bursts.append)
    assert await links.command("g1", b"{}", 0.5) is None  # no route yet: NATS
    links.learn("g1", addr)
    out = await links.command("g1", b'{"cmd_id":"c1"}', 1.0)
    assert out == b'{"ok":true,"cmd_id":"c1","seq":3}'
    assert bursts == [b'{"g":"g1","p":[]}']
    assert seen[:2] == [bytes((HELLO,)) + b"gw1", bytes((PING,))]  # hello, and a ping at once
    assert seen[2][0] == COMMAND and seen[2].endswith(b"\x02g1" + b'{"cmd_id":"c1"}')
    links.close()
    server.close()


@pytest.mark.parametrize("answer", ["not_here", "silent"])
async def test_not_here_or_no_answer_forgets_the_route(answer: str) -> None:
    server, addr, _ = await fake_shard(answer)
    links = Links("gw1", lambda b: None)
    links.learn("g1", addr)
    assert await links.command("g1", b"{}", 0.3) is None
    assert "g1" not in links.routes  # the next command asks NATS
    links.close()
    server.close()


async def test_an_unreachable_link_is_not_tried_again_for_a_while() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    addr = f"127.0.0.1:{s.getsockname()[1]}"
    s.close()  # nothing listens there
    links = Links("gw1", lambda b: None)
    links.learn("g1", addr)
    assert await links.command("g1", b"{}", 0.3) is None
    links.learn("g1", addr)  # NATS names it again: not taken up
    assert "g1" not in links.routes


async def test_a_link_the_shard_closes_is_told_and_not_dialled_again_at_once() -> None:
    """The shard drops the link (this gateway read too little, or it
    stopped): the gateway is told (bursts may have gone with it: its
    players catch up) and asks over NATS for a while rather than dial
    again at once, into the same trouble (audit). Its own close tells
    nothing."""
    server, addr, seen = await fake_shard("reply")
    lost: list[tuple[str, str]] = []
    links = Links("gw1", lambda b: None, lambda a, how: lost.append((a, how)))
    links.learn("g1", addr)
    assert await links.command("g1", b'{"cmd_id":"c1"}', 1.0) is not None
    client = links.conns[addr]
    assert client.transport is not None
    server.close()
    client.transport.abort()  # the connection gone under it (as a reset from the shard)
    for _ in range(100):
        if lost:
            break
        await asyncio.sleep(0.01)
    assert lost == [(addr, "lost")] and addr not in links.conns
    dials = sum(1 for s in seen if s[0] == HELLO)
    links.learn("g2", addr)  # a route named again meanwhile: not taken up
    assert "g2" not in links.routes
    assert await links.command("g1", b'{"cmd_id":"c2"}', 0.3) is None  # NATS
    assert sum(1 for s in seen if s[0] == HELLO) == dials  # not dialled
    server2, addr2, _ = await fake_shard("reply")
    links.learn("g3", addr2)
    assert await links.command("g3", b'{"cmd_id":"c3"}', 1.0) is not None
    links.close()
    await asyncio.sleep(0.05)
    assert lost == [(addr, "lost")]  # its own close: not told
    server2.close()


async def test_a_link_the_shard_closes_with_a_bye_lost_nothing() -> None:
    """A shard that stops closes its links after a bye (everything before
    it sent): the gateway is told it closed with a bye, so its players are
    not synced for nothing at every shard drain."""
    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        await r.readexactly(5 + len("gw1") + 5)  # the hello and a ping
        w.write(frame(BYE, b""))
        await w.drain()
        w.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    addr = f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    lost: list[tuple[str, str]] = []
    links = Links("gw1", lambda b: None, lambda a, how: lost.append((a, how)))
    links.learn("g1", addr)
    assert await links.command("g1", b'{"cmd_id":"c1"}', 0.5) is None  # (closed: NATS)
    for _ in range(50):
        if addr not in links.conns:
            break
        await asyncio.sleep(0.01)
    assert addr not in links.conns and lost == [(addr, "bye")]
    links.close()
    server.close()
