"""The gateway's end of the shard link (``ttanjit.shard.link``, issue 13;
docs/protocol.md 1.1): a game's commands go straight to its owner shard
over one TCP connection per shard, NATS being how the owner is found (the
reply to a command over NATS names its link) and the fallback whenever the
link cannot answer (not dialled yet, ``not here``, no answer in time, the
connection gone). Bursts the shard sends down the link are handled as the
ones that come over NATS (:meth:`ttanjit.gateway.app.Gateway.on_burst`).
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections import OrderedDict
from collections.abc import Callable

from ttanjit.shard.link import BURST, BYE, COMMAND, HELLO, PING, PING_FRAME, REPLY, Framed, frame

log = logging.getLogger("ttanjit.gateway")

ROUTES_MAX = 50_000  # games whose owner's link is remembered
CONNECT_S = 0.5
UNREACHABLE_S = 30.0  # a link that could not be dialled is not tried again this long
DROPPED_S = 5.0  # a link that was lost is not dialled again this long
_RID = struct.Struct("!I")


class LinkClient(Framed):
    def __init__(self, links: Links, addr: str) -> None:
        super().__init__()
        self.links = links
        self.addr = addr
        self.pending: dict[int, asyncio.Future[bytes | None]] = {}
        self.next_id = 0
        # how it ended: "lost" (broken, or dropped by the shard), "bye" (the
        # shard closed it with nothing lost), "dropped" (by this end)
        self.how = "lost"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        # a ping at once: a shard that answers it is one whose silence counts
        transport.write(frame(HELLO, self.links.gw_id.encode())  # type: ignore[attr-defined]
                        + PING_FRAME)

    def ping(self) -> None:
        if self.open:  # (not held: a ping alone is no sign of life to count as said)
            self.transport.write(PING_FRAME)  # type: ignore[union-attr]

    def dropped(self, why: str) -> None:
        self.how = "dropped"

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.links.conns.get(self.addr) is self:
            del self.links.conns[self.addr]
        pending, self.pending = self.pending, {}
        for fut in pending.values():  # asked again over NATS
            if not fut.done():
                fut.set_result(None)
        if not self.links.closing:
            self.links.lost(self.addr, self.how)

    def on_frame(self, kind: int, body: bytes) -> None:
        if kind == BURST:
            self.links.on_burst(body)
            return
        if kind == BYE:
            self.how = "bye"
            return
        if kind == PING:
            self.pinged = True
            return
        fut = self.pending.pop(_RID.unpack_from(body)[0], None)
        if fut is not None and not fut.done():
            fut.set_result(body[4:] if kind == REPLY else None)

    def request(self, game_id: str, data: bytes) -> asyncio.Future[bytes | None]:
        self.next_id = (self.next_id + 1) & 0xFFFFFFFF
        rid = self.next_id
        fut: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        self.pending[rid] = fut
        gid = game_id.encode()
        self.write(frame(COMMAND, _RID.pack(rid) + bytes((len(gid),)) + gid + data))
        return fut


class Links:
    """The links of one gateway, and which shard's link serves which game."""

    def __init__(self, gw_id: str, on_burst: Callable[[bytes], None],
                 on_lost: Callable[[str, str], None] | None = None) -> None:
        self.gw_id = gw_id
        self.on_burst = on_burst
        self.on_lost = on_lost
        self.closing = False
        self.routes: OrderedDict[str, str] = OrderedDict()  # game id -> link address
        self.conns: dict[str, LinkClient] = {}
        self.dialing: dict[str, asyncio.Task[LinkClient | None]] = {}
        self.unreachable: dict[str, float] = {}  # link address -> loop time to try again

    def _barred(self, addr: str) -> bool:
        """Not to be dialled now (it could not be, or was lost, lately)."""
        bad = self.unreachable.get(addr)
        if bad is None:
            return False
        if asyncio.get_running_loop().time() < bad:
            return True
        del self.unreachable[addr]
        return False

    def learn(self, game_id: str, addr: str) -> None:
        if self._barred(addr):
            return  # e.g. a port this gateway cannot reach: NATS it is
        if self.routes.get(game_id) != addr:
            self.routes[game_id] = addr
            if len(self.routes) > ROUTES_MAX:
                self.routes.popitem(last=False)

    def forget(self, game_id: str) -> None:
        self.routes.pop(game_id, None)

    async def command(self, game_id: str, data: bytes, timeout: float) -> bytes | None:
        """The owner's reply over its link (None: ask over NATS)."""
        addr = self.routes.get(game_id)
        if addr is None:
            return None
        client = self.conns.get(addr)
        if client is None or not client.open:
            client = await self._dial(addr)
            if client is None:
                self.forget(game_id)
                return None
        fut = client.request(game_id, data)
        try:
            out = await asyncio.wait_for(fut, timeout)
        except TimeoutError:  # a frozen or cut-off shard: NATS finds the owner
            out = None
        if out is None:
            self.forget(game_id)
        return out

    def lost(self, addr: str, how: str) -> None:
        """A link closed: the shard stopped (``bye``: nothing was lost with
        it), the shard dropped it (this gateway read too little) or the
        connection broke (``lost``), or this end dropped it (``dropped``:
        the shard said nothing for SILENT_S, or read too little). Not
        dialled again for DROPPED_S; ``on_lost`` is told (without a bye,
        bursts may have gone with it)."""
        self.unreachable[addr] = asyncio.get_running_loop().time() + DROPPED_S
        if self.on_lost is not None:
            self.on_lost(addr, how)

    async def _dial(self, addr: str) -> LinkClient | None:
        if self._barred(addr):
            return None
        task = self.dialing.get(addr)
        if task is None:
            task = asyncio.ensure_future(self._connect(addr))
            self.dialing[addr] = task
            task.add_done_callback(lambda _: self.dialing.pop(addr, None))
        return await asyncio.shield(task)

    async def _connect(self, addr: str) -> LinkClient | None:
        host, _, port = addr.rpartition(":")
        try:
            _, client = await asyncio.wait_for(asyncio.get_running_loop().create_connection(
                lambda: LinkClient(self, addr), host, int(port)), CONNECT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            log.info("link to shard %s not open: %r", addr, exc)
            self.unreachable[addr] = asyncio.get_running_loop().time() + UNREACHABLE_S
            return None
        self.conns[addr] = client
        return client

    def close(self) -> None:
        self.closing = True
        for client in list(self.conns.values()):
            if client.transport is not None:
                client.transport.close()
