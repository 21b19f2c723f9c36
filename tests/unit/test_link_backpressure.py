"""Backpressure on the shard link (ttanjit.shard.link; docs/protocol.md 1.1),
over real TCP in this process, on asyncio's loop and on uvloop (the shard
and the gateway run on uvloop): a gateway that reads nothing (frozen, cut
off) had every burst for it pile up in the shard's memory without end.
Now its link is dropped once the unsent bytes stay high for STALL_S, or
pass MAX_BACKLOG when read too slowly, and its bursts go over NATS
(``LinkServer.burst`` answers False); a gateway that reads keeps its link."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from ttanjit.shard import link as shard_link
from ttanjit.shard.link import HELLO, LinkServer, frame

BURST = b'{"g":"g1","p":[]}\n' + b"x" * 64 * 1024  # a burst message of 64 KiB


class Owner:
    """What LinkServer asks of its shard here: the event loop (commands,
    which need rooms, are not sent in these tests)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.rooms: dict[str, Any] = {}


async def a_link(gw: str, rcvbuf: int = 16 * 1024) -> tuple[LinkServer, socket.socket]:
    """A link server and a gateway's connection to it, said hello, whose
    socket this test reads from or not."""
    server = LinkServer(Owner())  # type: ignore[arg-type]
    await server.start("127.0.0.1", 0, "127.0.0.1")
    host, _, port = server.addr.rpartition(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect((host, int(port)))
    sock.sendall(frame(HELLO, gw.encode()))
    sock.setblocking(False)
    for _ in range(100):
        if gw in server.by_gw:
            break
        await asyncio.sleep(0.01)
    assert gw in server.by_gw
    return server, sock


def unsent(server: LinkServer, gw: str) -> int:
    conn = server.by_gw.get(gw)
    return conn.transport.get_write_buffer_size() if conn and conn.transport else 0


async def a_gateway_that_reads_nothing_loses_its_link() -> None:
    server, sock = await a_link("gw-frozen")
    small = BURST[:16 * 1024]
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + 10 * shard_link.STALL_S
        most = 0
        while server.burst("gw-frozen", small):  # 16 KiB every 10 ms
            most = max(most, unsent(server, "gw-frozen"))
            assert loop.time() < end, "the link was never dropped"
            await asyncio.sleep(0.01)
        # dropped STALL_S after more than WRITE_HIGH waited, before MAX_BACKLOG
        assert shard_link.WRITE_HIGH < most < shard_link.MAX_BACKLOG
        await asyncio.sleep(0.05)
        assert "gw-frozen" not in server.by_gw and not server.conns
    finally:
        sock.close()
        server.close()


async def a_gateway_that_reads_too_slowly_loses_its_link_at_the_cap() -> None:
    server, sock = await a_link("gw-slow")
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        read = 0
        while server.burst("gw-slow", BURST * 8):  # 512 KiB a turn
            try:
                read += len(sock.recv(64 * 1024))  # some of it, every turn
            except BlockingIOError:
                pass
            assert loop.time() - start < shard_link.STALL_S, "not dropped at the cap"
            await asyncio.sleep(0.001)
        assert read > 0
        await asyncio.sleep(0.05)
        assert "gw-slow" not in server.by_gw
    finally:
        sock.close()
        server.close()


async def a_gateway_that_reads_keeps_its_link() -> None:
    server, sock = await a_link("gw-ok", rcvbuf=256 * 1024)
    loop = asyncio.get_running_loop()
    got = 0

    def readable() -> None:
        nonlocal got
        try:
            while chunk := sock.recv(1024 * 1024):
                got += len(chunk)
        except BlockingIOError:
            pass

    loop.add_reader(sock.fileno(), readable)
    try:
        total = 0
        end = loop.time() + 2 * shard_link.STALL_S  # longer than a stall may last
        while loop.time() < end:
            assert server.burst("gw-ok", BURST)
            total += len(BURST)
            await asyncio.sleep(0.002)
        assert total > shard_link.MAX_BACKLOG / 4
        for _ in range(500):
            if got >= total:
                break
            await asyncio.sleep(0.01)
        assert got >= total and "gw-ok" in server.by_gw
    finally:
        loop.remove_reader(sock.fileno())
        sock.close()
        server.close()


SCENARIOS = [a_gateway_that_reads_nothing_loses_its_link,
             a_gateway_that_reads_too_slowly_loses_its_link_at_the_cap,
             a_gateway_that_reads_keeps_its_link]


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_link_backpressure(run: Callable[[Coroutine[Any, Any, None]], None],
                           scenario: Callable[[], Coroutine[Any, Any, None]],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shard_link, "STALL_S", 0.5)
    monkeypatch.setattr(shard_link, "MAX_BACKLOG", 4 * 1024 * 1024)
    run(scenario())
