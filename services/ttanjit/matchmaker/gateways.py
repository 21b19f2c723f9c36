"""Lobby players whose gateway is gone (docs/protocol.md 4.1).

A gateway tells the lobby ``Away`` when a player's last socket closes: they
leave the quick-match queue, and a room seat waits 60 s for them (RULES.md
4). A gateway killed outright tells nothing: its queued players were
matched into games they never came to (played by timeouts), and its room
members sat on for good — a host gone for good held the room's guests
waiting on a 시작 nobody would press.

So the leader remembers which gateway each player's connection calls
through (the calls' ``ttanjit-gateway`` metadata, :attr:`Matchmaker.via`),
asks the gateways of the players queued or in open rooms whether they are
there (:class:`ttanjit.common.gateways.GatewayCheck`), and tells itself
``Away`` for those of one found gone, dated from when it was first missed —
unless a connection of theirs opened later was heard (it is their going
only if nothing outlives it, as for a gateway's own ``Away``). The memory
is the leader's: after a leader change a player is watched again from
their next call."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ttanjit.common.gateways import CHECK_S, SETTLE_S, GatewayCheck
from ttanjit.common.nats import Subjects
from ttanjit.matchmaker import metrics as m

if TYPE_CHECKING:
    from ttanjit.matchmaker.service import Matchmaker

log = logging.getLogger("ttanjit.matchmaker.gateways")


class LobbyGatewayWatch:
    def __init__(self, mm: Matchmaker, away: Callable[[str, int], Awaitable[object]]) -> None:
        self.mm = mm
        self.away = away  # (player, away_ms): the lobby's own Away
        self.check = GatewayCheck(Subjects(mm.s.prefix))
        self.reconnects = -1
        self.back_at = 0.0  # monotonic time NATS last came back (or we started)

    def watched(self) -> dict[str, list[str]]:
        """Gateway -> its players waiting in the queue or an open room
        (not already away)."""
        mm = self.mm
        players = set(mm.queue.by_player)
        for room in mm.rooms.by_code.values():
            if room.state == "open":
                players.update(s.player for s in room.humans())
        by_gw: dict[str, list[str]] = {}
        via = mm.via
        for p in players:
            seen = via.get(p)
            if seen is not None and p not in mm.away:
                by_gw.setdefault(seen[1], []).append(p)
        for p in [p for p in via if p not in players]:  # not waiting: nothing to watch
            del via[p]
        return by_gw

    def settled(self) -> bool:
        nc = self.mm.nc
        now = time.monotonic()
        reconnects = nc.stats.get("reconnects", 0)
        if reconnects != self.reconnects:
            self.reconnects, self.back_at = reconnects, now
        return nc.is_connected and now - self.back_at >= SETTLE_S

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), CHECK_S)
                return
            except TimeoutError:
                pass
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a bug here must not stop the watch
                log.exception("lobby gateway watch round failed")

    async def round(self) -> None:
        mm = self.mm
        if not mm.leading or not self.settled():
            self.check.reset()
            return
        gone = await self.check.round(mm.nc, self.watched())
        if not mm.leading or not self.settled():  # no verdict
            self.check.reset()
            return
        for gw, first in gone:
            told = 0
            for player in self.watched().get(gw, []):  # as they are now
                opened = mm.via[player][0]
                if mm.outlived(player, opened):
                    continue  # a later connection of theirs called: not their going
                mm.gone(player, opened)
                await self.away(player, max(0, int((time.time() - first) * 1000)))
                told += 1
            log.warning("gateway gone: its lobby players away",
                        extra={"gateway": gw, "players": told})
            m.GATEWAYS_GONE.inc()
