"""Liveness on the shard link (ttanjit.shard.link, ttanjit.gateway.link;
docs/protocol.md 1.1), over real TCP in this process, on asyncio's loop and
on uvloop. A peer whose host vanished or whose network was cut sends no FIN,
and a frozen one (SIGSTOP, a VM pause) still has its kernel take the bytes:
before, neither end noticed for many minutes (only when TCP gave up on
unacknowledged bytes, never on a quiet link), so a gateway never caught its
players up from a shard that had gone silent. Now the gateway's end pings
when it wrote nothing for PING_S, the shard's answers, and an end that heard
a ping drops the link after SILENT_S of silence; an end that never heard one
(the other end runs an older release) keeps the old behaviour."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from ttanjit.gateway.link import Links
from ttanjit.shard import link as shard_link
from ttanjit.shard import metrics as shard_metrics
from ttanjit.shard.link import HELLO, PING, LinkServer, frame


class SlowRoom:
    """A game whose commands are answered after ``delay_s`` (the shard
    answers only once the move is durably written: seconds, in a JetStream
    leader election)."""

    gone = frozen = False

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def on_command(self, msg: shard_link.LinkMsg) -> None:
        asyncio.get_running_loop().call_later(self.delay_s, msg.link.answer, msg.rid,
                                              b'{"ok":true}')


class Owner:
    """What LinkServer asks of its shard here: the event loop and its
    rooms (none: a command is answered ``not here``)."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.rooms: dict[str, Any] = {}


async def a_shard() -> tuple[LinkServer, str]:
    server = LinkServer(Owner())  # type: ignore[arg-type]
    await server.start("127.0.0.1", 0, "127.0.0.1")
    return server, server.addr


async def raw_shard(answers: str) -> tuple[asyncio.Server, str, list[int]]:
    """A shard that reads everything and answers pings: ``all``; ``first``
    (then says nothing: frozen after that, or cut off, as far as the
    gateway can tell); ``none`` (a release before pings)."""
    kinds: list[int] = []

    async def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        answered = False
        while True:
            try:
                head = await r.readexactly(5)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            await r.readexactly(struct.unpack("!I", head[:4])[0] - 1)
            kinds.append(head[4])
            if head[4] == PING and (answers == "all" or answers == "first" and not answered):
                answered = True
                w.write(frame(PING, b""))

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"127.0.0.1:{server.sockets[0].getsockname()[1]}", kinds


async def dial(links: Links, addr: str) -> None:
    """Open the gateway's link to ``addr`` (a command its shard answers
    ``not here``, or none at all)."""
    links.learn("g1", addr)
    await links.command("g1", b'{"cmd_id":"c1"}', 0.2)
    assert addr in links.conns


async def until(check: Callable[[], bool], within: float, what: str) -> float:
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not check():
        assert loop.time() - start < within, what
        await asyncio.sleep(0.01)
    return loop.time() - start


async def an_idle_link_between_two_live_ends_stays_up() -> None:
    """Nothing to say for many SILENT_S: the pings keep it, at both ends."""
    server, addr = await a_shard()
    lost: list[tuple[str, str]] = []
    links = Links("gw-idle", lambda b: None, lambda a, how: lost.append((a, how)))
    try:
        await dial(links, addr)
        client = links.conns[addr]
        await asyncio.sleep(4 * shard_link.SILENT_S)
        conn = server.by_gw["gw-idle"]
        assert client.open and conn.open and not lost
        assert client.pinged and conn.pinged  # (so their silence would count)
    finally:
        links.close()
        server.close()


async def an_idle_gateway_pings_every_tick() -> None:
    """Its own ping is no sign of life to the shard's answer: an idle
    gateway pings every PING_S (it pinged every other tick, halving the
    margin before SILENT_S: audit)."""
    server, addr, kinds = await raw_shard(answers="all")
    lost: list[tuple[str, str]] = []
    links = Links("gw1", lambda b: None, lambda a, how: lost.append((a, how)))
    try:
        await dial(links, addr)
        before = kinds.count(PING)
        await asyncio.sleep(10 * shard_link.PING_S)
        assert kinds.count(PING) - before >= 8 and not lost
    finally:
        links.close()
        server.close()


async def a_busy_gateway_whose_commands_wait_keeps_its_link() -> None:
    """A gateway writing commands every tick whose answers wait longer than
    SILENT_S (the shard's durable write is slow) still hears the shard: it
    pings when it heard nothing, and the shard answers at once (it took
    the shard for silent, and synced every player there: audit)."""
    server, addr = await a_shard()
    server.shard.rooms["g1"] = SlowRoom(10 * shard_link.SILENT_S)
    lost: list[tuple[str, str]] = []
    links = Links("gw-busy", lambda b: None, lambda a, how: lost.append((a, how)))
    try:
        await dial(links, addr)
        client = links.conns[addr]
        answers = []
        loop = asyncio.get_running_loop()
        end = loop.time() + 4 * shard_link.SILENT_S
        while loop.time() < end:
            answers.append(client.request("g1", b'{"cmd_id":"c2"}'))
            await asyncio.sleep(shard_link.PING_S / 4)
        assert client.open and server.by_gw["gw-busy"].open and not lost
        assert not any(a.done() for a in answers)  # (none answered yet)
    finally:
        links.close()
        server.close()


async def a_silent_shard_loses_its_link_and_the_gateway_is_told() -> None:
    """The shard answered the first ping, then said nothing (frozen, cut
    off): the gateway drops the link (its players catch up) and does not
    dial it again at once."""
    server, addr, kinds = await raw_shard(answers="first")
    lost: list[tuple[str, str]] = []
    links = Links("gw1", lambda b: None, lambda a, how: lost.append((a, how)))
    loop = asyncio.get_running_loop()
    try:
        start = loop.time()  # (the shard's answer to the first ping: about now)
        await dial(links, addr)
        await until(lambda: bool(lost), 10 * shard_link.SILENT_S,
                    "the gateway never dropped the silent shard's link")
        assert lost == [(addr, "dropped")] and addr not in links.conns
        assert loop.time() - start >= shard_link.SILENT_S
        assert kinds[:2] == [HELLO, PING] and kinds.count(PING) >= 2  # pinged, unanswered
        links.learn("g2", addr)
        assert "g2" not in links.routes  # not dialled again at once
    finally:
        links.close()
        server.close()


async def a_shard_of_an_older_release_keeps_its_link() -> None:
    """A shard that never answers a ping (it predates them) is not taken
    for a silent one."""
    server, addr, kinds = await raw_shard(answers="none")
    lost: list[tuple[str, str]] = []
    links = Links("gw1", lambda b: None, lambda a, how: lost.append((a, how)))
    try:
        await dial(links, addr)
        await asyncio.sleep(4 * shard_link.SILENT_S)
        assert not lost and links.conns[addr].open
        assert kinds.count(PING) >= 3  # it was asked, all along
    finally:
        links.close()
        server.close()


async def raw_gateway(addr: str, gw: str, ping: bool) -> socket.socket:
    """A gateway that says hello (and pings, when it is a release that
    does), then nothing: gone without a FIN, or frozen."""
    host, _, port = addr.rpartition(":")
    sock = socket.create_connection((host, int(port)))
    sock.sendall(frame(HELLO, gw.encode()) + (frame(PING, b"") if ping else b""))
    sock.setblocking(False)
    return sock


async def a_silent_gateway_loses_its_link_and_its_bursts_go_over_nats() -> None:
    server, addr = await a_shard()
    silent = shard_metrics.links_dropped.labels("silent")
    before = silent._value.get()
    sock = await raw_gateway(addr, "gw-gone", ping=True)
    try:
        await until(lambda: "gw-gone" in server.by_gw, 2, "no hello")
        took = await until(lambda: not server.burst("gw-gone", b'{"g":"g1","p":[]}'),
                           10 * shard_link.SILENT_S, "the shard never dropped the silent link")
        assert took >= shard_link.SILENT_S - 0.05  # (from when its ping was heard)
        await until(lambda: not server.conns, 2, "the dropped link was kept")
        assert silent._value.get() == before + 1
    finally:
        sock.close()
        server.close()


async def a_gateway_of_an_older_release_keeps_its_link_and_gets_no_ping() -> None:
    """A gateway that never pings is not dropped for its silence, and is
    sent no ping frame (a release before them takes any frame it does not
    know for a reply)."""
    server, addr = await a_shard()
    sock = await raw_gateway(addr, "gw-old", ping=False)
    try:
        await until(lambda: "gw-old" in server.by_gw, 2, "no hello")
        await asyncio.sleep(4 * shard_link.SILENT_S)
        assert server.by_gw["gw-old"].open
        with pytest.raises(BlockingIOError):
            sock.recv(1024)  # nothing was sent to it
    finally:
        sock.close()
        server.close()


SCENARIOS = [an_idle_link_between_two_live_ends_stays_up,
             an_idle_gateway_pings_every_tick,
             a_busy_gateway_whose_commands_wait_keeps_its_link,
             a_silent_shard_loses_its_link_and_the_gateway_is_told,
             a_shard_of_an_older_release_keeps_its_link,
             a_silent_gateway_loses_its_link_and_its_bursts_go_over_nats,
             a_gateway_of_an_older_release_keeps_its_link_and_gets_no_ping]


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_link_liveness(run: Callable[[Coroutine[Any, Any, None]], None],
                       scenario: Callable[[], Coroutine[Any, Any, None]],
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shard_link, "PING_S", 0.1)
    monkeypatch.setattr(shard_link, "SILENT_S", 0.3)
    run(scenario())
