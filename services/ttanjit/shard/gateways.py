"""Players whose gateway is gone (docs/protocol.md 2.1).

A gateway says a player left (``disconnect``) when the player's socket
closes. A gateway killed outright (kill -9, an OOM kill, a lost node) says
nothing, and its players' seats stayed "connected" for good: a player who
never came back was played by timeouts and autopilot instead of a bot after
60 s, and a game all of whose players vanished with it never paused and was
never abandoned (RULES.md 4) but played out.

So each shard watches the gateways its present players are routed through
(``Room.routes``): one with a shard link open to us is there; every other
is asked (:class:`ttanjit.common.gateways.GatewayCheck`) every few seconds,
and at once when a link is lost. The players of one found gone are marked
away as their gateway would have (a ``disconnect`` recorded ``"by":
"shard"``). Should a player be marked away whose gateway lives after all
(its NATS connection was away while ours asked), the player's next command
or sync through a gateway takes the mark back (``Room.mark_back``), the
gateway catches its players up when its NATS connection is back, and it
says ``reconnect`` itself when it sees its player's seat marked away (the
``disconnected`` event's flag)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from ttanjit.common.gateways import CHECK_S, SETTLE_S, GatewayCheck
from ttanjit.shard import metrics as m

if TYPE_CHECKING:
    from ttanjit.shard.room import Room
    from ttanjit.shard.service import Shard

log = logging.getLogger("ttanjit.shard.gateways")

LOST_LINK_S = 1.0  # a lost link's gateway is asked this soon (its NATS connection ends too)


class GatewayWatch:
    def __init__(self, shard: Shard) -> None:
        self.shard = shard
        self.check = GatewayCheck(shard.subj)
        self.soon = asyncio.Event()  # a link was lost: a round now

    def link_lost(self, gw: str) -> None:
        if gw:
            self.soon.set()

    async def run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self.soon.wait(), CHECK_S)
                await asyncio.sleep(LOST_LINK_S)
            except TimeoutError:
                pass
            self.soon.clear()
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a bug here must not stop the watch
                log.exception("gateway watch round failed")

    def settled(self) -> bool:
        shard = self.shard
        return shard.nc.is_connected and shard.loop.time() - shard.nats_back_at >= SETTLE_S

    def seated(self, linked: set[str] | frozenset[str] = frozenset()
               ) -> dict[str, list[tuple[Room, str]]]:
        """Every gateway but ``linked`` (there: a link of theirs is open)
        some present player of a live game here is routed through, with
        those (room, player). (2,000 games of 10 players: ~1.4 ms with every
        gateway linked, ~16 ms with none, measured.)"""
        by_gw: dict[str, list[tuple[Room, str]]] = {}
        for room in self.shard.rooms.values():
            if room.gone or room.frozen or room.hosted.finished or not room.routes:
                continue
            for player, gw in room.routes.items():
                if gw not in linked and room.present(player):
                    by_gw.setdefault(gw, []).append((room, player))
        return by_gw

    async def round(self) -> None:
        if not self.settled():
            self.check.reset()
            return
        linked = {gw for gw, conn in self.shard.link.by_gw.items() if conn.open}
        gone, _ = await self.check.round(self.shard.nc, self.seated(linked))
        if not self.settled():  # our own connection went away meanwhile: no verdict
            self.check.reset()
            return
        for gw, _ in gone:
            # its players as they are now (the asks took time)
            marked = sum(room.mark_away(player) for room, player in self.seated().get(gw, []))
            log.warning("gateway gone: its players marked away",
                        extra={"gateway": gw, "players": marked})
            m.gateways_gone.inc()
            m.players_marked_away.inc(marked)
