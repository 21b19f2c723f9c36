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
        self.lost: list[str] = []  # the gateways whose link closed (shard/gateways.py asks)
        self.gateways = self

    def link_lost(self, gw: str) -> None:
        self.lost.append(gw)


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


def small_send_buffer(server: LinkServer, gw: str) -> None:
    """The shard's socket buffers little (the kernel's would take MiBs
    before the link holds any unsent bytes, more on some hosts)."""
    conn = server.by_gw[gw]
    assert conn.transport is not None
    conn.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                                                       16 * 1024)


async def a_gateway_that_reads_nothing_loses_its_link() -> None:
    shard_link.MAX_BACKLOG = 1 << 40  # (dropped by the stall alone)
    server, sock = await a_link("gw-frozen")
    small_send_buffer(server, "gw-frozen")
    small = BURST[:16 * 1024]
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + 60
        most = 0
        while server.burst("gw-frozen", small):  # 16 KiB every 10 ms
            most = max(most, unsent(server, "gw-frozen"))
            assert loop.time() < end, "the link was never dropped"
            await asyncio.sleep(0.01)
        # dropped STALL_S after more than WRITE_HIGH waited
        assert most > shard_link.WRITE_HIGH
        await asyncio.sleep(0.05)
        assert "gw-frozen" not in server.by_gw and not server.conns
    finally:
        sock.close()
        server.close()


async def a_gateway_that_reads_too_slowly_loses_its_link_at_the_cap() -> None:
    shard_link.STALL_S = 3600.0  # (dropped by the cap alone)
    server, sock = await a_link("gw-slow")
    loop = asyncio.get_running_loop()
    end = loop.time() + 60
    try:
        read = most = 0
        while server.burst("gw-slow", BURST * 8):  # 512 KiB a turn
            most = max(most, unsent(server, "gw-slow"))
            try:
                read += len(sock.recv(64 * 1024))  # some of it, every turn
            except BlockingIOError:
                pass
            assert loop.time() < end, "not dropped at the cap"
            await asyncio.sleep(0.001)
        assert read > 0 and most <= shard_link.MAX_BACKLOG
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


async def a_busy_gateway_that_reads_in_spells_keeps_its_link() -> None:
    """It stops reading for 0.2 s at a time (a busy event loop) while bursts
    keep coming: the link holds more than WRITE_HIGH, asks to pause, and
    resumes when the gateway reads it down; never dropped."""
    shard_link.STALL_S = 2.0
    server, sock = await a_link("gw-busy")
    small_send_buffer(server, "gw-busy")
    conn = server.by_gw["gw-busy"]
    loop = asyncio.get_running_loop()
    got = total = 0
    try:
        for _ in range(4):
            while conn._stall is None:  # not reading: until the link asks to pause
                assert server.burst("gw-busy", BURST)
                total += len(BURST)
                await asyncio.sleep(0.005)
            spell = loop.time() + 0.2
            while loop.time() < spell:  # and a while longer
                assert server.burst("gw-busy", BURST)
                total += len(BURST)
                await asyncio.sleep(0.01)
            while got < total:  # then reading it all
                try:
                    got += len(sock.recv(1024 * 1024))
                except BlockingIOError:
                    await asyncio.sleep(0.001)
            assert conn._stall is None  # resumed
        await asyncio.sleep(shard_link.STALL_S + 0.5)  # no stall left to fire
        assert "gw-busy" in server.by_gw and conn.open
    finally:
        sock.close()
        server.close()


async def a_link_closed_while_its_peer_reads_nothing_is_dropped_all_the_same() -> None:
    """A link closed (the shard stops) waits for its unsent bytes; a peer
    that reads nothing never takes them, so the stall drops it."""
    shard_link.MAX_BACKLOG = 1 << 40
    server, sock = await a_link("gw-gone")
    small_send_buffer(server, "gw-gone")
    conn = server.by_gw["gw-gone"]
    loop = asyncio.get_running_loop()
    try:
        while conn._stall is None:
            assert server.burst("gw-gone", BURST)
            await asyncio.sleep(0.005)
        server.close()
        end = loop.time() + 60
        while conn.transport is not None:
            assert loop.time() < end, "the closed link never let go"
            await asyncio.sleep(0.05)
        # and the shard asks whether that gateway is still there (shard/gateways.py)
        assert server.shard.lost == ["gw-gone"]  # type: ignore[attr-defined]
    finally:
        sock.close()


async def a_link_closed_by_its_shard_ends_with_a_bye_after_everything() -> None:
    """A shard that stops closes each link after what it holds (a burst
    queued in this very turn too) and a bye: the gateway knows no burst
    was lost with it."""
    server, sock = await a_link("gw-bye")
    sock.setblocking(True)
    sock.settimeout(5)
    assert server.burst("gw-bye", b'{"g":"g1","p":[]}')  # held to the end of the turn
    server.close()
    data = b""
    loop = asyncio.get_running_loop()
    while chunk := await loop.run_in_executor(None, sock.recv, 65536):
        data += chunk
    sock.close()
    kinds = []
    while data:
        n = int.from_bytes(data[:4], "big")
        kinds.append(data[4])
        data = data[4 + n:]
    assert kinds == [shard_link.BURST, shard_link.BYE]


SCENARIOS = [a_gateway_that_reads_nothing_loses_its_link,
             a_gateway_that_reads_too_slowly_loses_its_link_at_the_cap,
             a_gateway_that_reads_keeps_its_link,
             a_busy_gateway_that_reads_in_spells_keeps_its_link,
             a_link_closed_while_its_peer_reads_nothing_is_dropped_all_the_same,
             a_link_closed_by_its_shard_ends_with_a_bye_after_everything]


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_link_backpressure(run: Callable[[Coroutine[Any, Any, None]], None],
                           scenario: Callable[[], Coroutine[Any, Any, None]],
                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shard_link, "STALL_S", 0.5)
    monkeypatch.setattr(shard_link, "MAX_BACKLOG", 4 * 1024 * 1024)  # (scenarios change them)
    run(scenario())
