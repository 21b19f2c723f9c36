"""The shard link: game commands and bursts between a gateway and the shard
that owns the game, over one direct TCP connection per (gateway, shard)
instead of through NATS (issue 13; docs/protocol.md 1.1).

NATS stays the way to find a game's owner and the fallback for everything:
the reply to a command that came over NATS names the owner's link
(``"link": "host:port"``), the gateway dials it and sends that game's next
commands there. The shard answers a command over the link exactly as over
NATS (:meth:`ttanjit.shard.room.Room.on_command`: the same checks, dedup,
write-ahead before the reply), or ``not here`` when it does not serve the
game now (not hosted, being handed over, lost): the gateway then asks over
NATS, which finds the owner. Bursts for a gateway that has a link open here
go down the link (:meth:`LinkServer.burst`), others over NATS.

Frames, both ways: a 4-byte big-endian length of the rest, a kind byte, the
body. Gateway → shard: ``H`` hello (body: the gateway id, as in the ``gw``
of its commands), ``C`` command (4-byte request id, 1-byte game id length,
game id, the command request JSON of docs/protocol.md 1). Shard → gateway:
``R`` reply (request id, the reply bytes of docs/protocol.md 1), ``N`` not
here (request id), ``B`` burst (the message of docs/protocol.md 2), ``Z``
bye (empty: the shard closes the link, everything before it sent). Both
ways: ``P`` ping (empty; the gateway's end sends one at once and every
PING_S in which it heard or wrote nothing, the shard's answers each). The
frames of one turn of the event loop leave in one write.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ttanjit.shard.service import Shard

log = logging.getLogger("ttanjit.shard")

MAX_FRAME = 4 * 1024 * 1024
# Backpressure: the other end that reads nothing (frozen, cut off, its event
# loop stuck) would have every frame for it pile up here without end. A link
# whose unsent bytes stay above WRITE_LOW for STALL_S, or pass MAX_BACKLOG
# (read, but slower than written), is dropped: its gateway goes back to
# NATS for commands (it dials again when a reply names the link), its
# bursts go over NATS, and a burst lost with the link is a gap the gateway
# fills from the shard (docs/protocol.md 1.1, 2).
WRITE_HIGH = 1024 * 1024  # the transport asks to pause above this ...
WRITE_LOW = 256 * 1024  # ... and to resume below this
STALL_S = 10.0
MAX_BACKLOG = 32 * 1024 * 1024
# Liveness: a peer whose host vanished or whose network was cut sends no FIN,
# and one that is frozen (SIGSTOP, a VM pause) still has its kernel take the
# bytes: TCP alone notices neither for many minutes, or ever on a quiet link.
# The gateway's end pings every PING_S in which it heard nothing or wrote
# nothing, the shard's answers each ping, and an end that has heard a ping
# (the other end is new enough to send them) drops the link after SILENT_S
# with nothing heard.
# A shard's lease is 2 s: a shard this silent has lost its games anyway.
PING_S = 2.0
SILENT_S = 6.0
HELLO, COMMAND, REPLY, NOT_HERE, BURST, BYE, PING = (b"H"[0], b"C"[0], b"R"[0], b"N"[0],
                                                    b"B"[0], b"Z"[0], b"P"[0])
_LEN = struct.Struct("!I")
# why a link end dropped its link, for the logs
DROPPED = {"stalled": "reads nothing", "backlog": "reads slower than it is written to",
           "silent": "said nothing"}


def frame(kind: int, body: bytes) -> bytes:
    return _LEN.pack(len(body) + 1) + bytes((kind,)) + body


PING_FRAME = frame(PING, b"")


class LinkMsg:
    """A command that came over the link, shaped like the NATS message
    :meth:`Room.on_command` takes (``data``, a true ``reply``); the
    shard's :class:`~ttanjit.shard.room.Outbox` answers it down the link."""

    __slots__ = ("link", "rid", "data", "reply", "subject")

    def __init__(self, link: LinkConn, rid: bytes, data: bytes) -> None:
        self.link, self.rid, self.data = link, rid, data
        self.reply = "link"
        self.subject = "link"


class Framed(asyncio.Protocol):
    """Frames over a TCP connection, both ends of the link: incoming frames
    to :meth:`on_frame`, outgoing ones held until the end of the event
    loop's turn and written together (:meth:`write`). Every PING_S it looks
    at what came and went since (:meth:`_tick`)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None
        self.held: list[bytes] | None = None
        self._stall: asyncio.TimerHandle | None = None
        self._ticker: asyncio.TimerHandle | None = None
        self.heard = False  # something came since the last tick
        self.said = False  # something was written since the last tick
        self.pinged = False  # the other end pings: its silence means it is gone
        self.quiet = 0.0  # how long nothing came (s, in whole ticks)
        self.dropping = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is no subclass
        self.transport.set_write_buffer_limits(WRITE_HIGH, WRITE_LOW)
        self._ticker = asyncio.get_running_loop().call_later(PING_S, self._tick)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self._stop_timers()

    def _stop_timers(self) -> None:
        for timer in (self._stall, self._ticker):
            if timer is not None:
                timer.cancel()
        self._stall = self._ticker = None

    def _tick(self) -> None:
        self._ticker = None
        if self.transport is None:
            return
        heard, said = self.heard, self.said
        self.heard = self.said = False
        self.quiet = 0.0 if heard else self.quiet + PING_S
        if self.pinged and self.quiet >= SILENT_S:
            self._drop("silent")
            return
        if not (heard and said):
            self.ping()
        self._ticker = asyncio.get_running_loop().call_later(PING_S, self._tick)

    def ping(self) -> None:
        """Nothing came, or nothing was written, for PING_S (the gateway's
        end pings: a busy gateway hears nothing while its commands wait on
        their writes, and a shard hears nothing from an idle one)."""

    def dropped(self, why: str) -> None:
        """This end drops the link (a key of DROPPED)."""

    def pause_writing(self) -> None:
        """More than WRITE_HIGH unsent: the other end has STALL_S to read
        it down to WRITE_LOW."""
        if self._stall is None:
            self._stall = asyncio.get_running_loop().call_later(STALL_S, self._drop,
                                                                "stalled")

    def resume_writing(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _drop(self, why: str) -> None:
        self._stop_timers()
        if self.transport is not None and not self.dropping:  # (closing too: a close waits
            self.dropping = True  # for the unsent; and once: both timers may be due at once)
            log.warning("link: the other end (%s) %s (%d bytes unsent); dropping the link",
                        self.transport.get_extra_info("peername"), DROPPED[why],
                        self.transport.get_write_buffer_size())
            self.dropped(why)
            self.transport.abort()

    @property
    def open(self) -> bool:
        return self.transport is not None and not self.transport.is_closing()

    def on_frame(self, kind: int, body: bytes) -> None:
        raise NotImplementedError

    def data_received(self, data: bytes) -> None:
        self.heard = True
        buf = self.buf
        buf += data
        while len(buf) >= 5:
            n = _LEN.unpack_from(buf)[0]
            if n > MAX_FRAME or n < 1:
                log.warning("link: a bad frame; closing the connection")
                if self.transport is not None:
                    self.transport.close()
                buf.clear()
                return
            if len(buf) < 4 + n:
                return
            kind = buf[4]
            body = bytes(buf[5:4 + n])
            del buf[:4 + n]
            try:
                self.on_frame(kind, body)
            except Exception:  # noqa: BLE001 - one bad frame costs that frame, never the link
                log.exception("link: frame failed")

    def write(self, data: bytes) -> None:
        if not self.open:
            return
        if self.held is None:
            self.held = [data]
            asyncio.get_running_loop().call_soon(self._write_held)
        else:
            self.held.append(data)

    def _write_held(self) -> None:
        held, self.held = self.held, None
        if held and self.transport is not None and not self.transport.is_closing():
            self.transport.write(b"".join(held))
            self.said = True
            if self.transport.get_write_buffer_size() > MAX_BACKLOG:
                self._drop("backlog")

    def close_after(self, last: bytes) -> None:
        """Close after what is held and ``last`` are sent (the stall drops
        a peer that reads none of it)."""
        if self.transport is not None and not self.transport.is_closing():
            self._write_held()
            self.transport.write(last)
            self.transport.close()


class LinkConn(Framed):
    """One gateway's connection."""

    def __init__(self, server: LinkServer) -> None:
        super().__init__()
        self.server = server
        self.gw = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self.server.conns.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.conns.discard(self)
        if self.gw and self.server.by_gw.get(self.gw) is self:
            del self.server.by_gw[self.gw]
            self.server.shard.gateways.link_lost(self.gw)  # is that gateway still there?
        super().connection_lost(exc)

    def on_frame(self, kind: int, body: bytes) -> None:
        self.server.on_frame(self, kind, body)

    def dropped(self, why: str) -> None:
        from ttanjit.shard import metrics  # (here: the gateway imports this module too)

        metrics.links_dropped.labels(why).inc()

    def answer(self, rid: bytes, data: bytes) -> None:
        self.write(frame(REPLY, rid + data))


class LinkServer:
    def __init__(self, shard: Shard) -> None:
        self.shard = shard
        self.conns: set[LinkConn] = set()
        self.by_gw: dict[str, LinkConn] = {}
        self.server: asyncio.Server | None = None
        self.addr = ""  # host:port the gateways dial ("" = no link)

    async def start(self, host: str, port: int, advertise: str) -> None:
        self.server = await self.shard.loop.create_server(lambda: LinkConn(self), host, port)
        bound = self.server.sockets[0].getsockname()[1]
        self.addr = f"{advertise}:{bound}"

    def close(self) -> None:
        """Stop taking links and close the open ones (their gateways go back
        to NATS at once), each after what it holds and a bye: its gateway
        knows no burst was lost with it (a link lost without one costs a
        sync of every player of that gateway's in this shard's games)."""
        if self.server is not None:
            self.server.close()
        for conn in list(self.conns):
            conn.close_after(frame(BYE, b""))
        self.addr = ""

    def on_frame(self, conn: LinkConn, kind: int, body: bytes) -> None:
        if kind == COMMAND:
            rid, glen = body[:4], body[4]
            gid = body[5:5 + glen].decode("ascii", "replace")
            room = self.shard.rooms.get(gid)
            if room is None or room.gone or room.frozen:
                conn.write(frame(NOT_HERE, rid))
                return
            room.on_command(LinkMsg(conn, rid, body[5 + glen:]))  # type: ignore[arg-type]
        elif kind == PING:
            conn.pinged = True
            conn.write(PING_FRAME)
        elif kind == HELLO:
            conn.gw = body.decode("ascii", "replace")
            self.by_gw[conn.gw] = conn

    def burst(self, gw: str, data: bytes) -> bool:
        """Send a burst message down ``gw``'s link (False: none open)."""
        conn = self.by_gw.get(gw)
        if conn is None or not conn.open:
            return False
        conn.write(frame(BURST, data))
        return True


def is_link(msg: Any) -> bool:
    return type(msg) is LinkMsg
