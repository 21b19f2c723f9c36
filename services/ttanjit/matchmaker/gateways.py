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
there (:class:`ttanjit.common.gateways.GatewayCheck`: missed for 10 s),
and tells itself ``Away`` for those of one found gone, dated from when it
was first missed — unless a connection of theirs opened later was heard
(it is their going only if nothing outlives it, as for a gateway's own
``Away``). A gateway found gone that answers again within 2 minutes (cut
off from NATS, not killed) has its players back. The memory is the
leader's term's: a replica forgets it when it leads or steps down, and a
player is watched again from their next call."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ttanjit.common.gateways import CHECK_S, SETTLE_S, GatewayCheck
from ttanjit.common.nats import Subjects
from ttanjit.matchmaker import metrics as m
from ttanjit.matchmaker.store import Fenced

if TYPE_CHECKING:
    from ttanjit.matchmaker.service import Matchmaker

log = logging.getLogger("ttanjit.matchmaker.gateways")


# A gateway is taken for gone only after this long missed: a lobby Away
# costs a queued player their ticket (it cannot be given back), and a
# gateway cut off from NATS alone for a few seconds lives on
LOBBY_GONE_S = 10.0
# a gateway found gone is asked on for this long: should it answer after
# all, the players told away through it are back
REVIVE_S = 120.0


class LobbyGatewayWatch:
    def __init__(self, mm: Matchmaker, away: Callable[[str, int], Awaitable[object]],
                 back: Callable[[str], Awaitable[object]]) -> None:
        self.mm = mm
        self.away = away  # (player, away_ms): the lobby's own Away
        self.back = back  # (player): a connected player's call would say so
        self.check = GatewayCheck(Subjects(mm.s.prefix), LOBBY_GONE_S)
        self.reconnects = -1
        self.back_at = 0.0  # monotonic time NATS last came back (or we started)
        # gateway found gone -> (when first, {player told away: (the game
        # of the quick-match ticket that took, or ""; their room's code, or "")})
        self.told: dict[str, tuple[float, dict[str, tuple[str, str]]]] = {}

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
            except Fenced:  # another replica leads now (an Away's lobby write said so)
                self.mm.step_down()
            except Exception:  # noqa: BLE001 - a bug here must not stop the watch
                log.exception("lobby gateway watch round failed")

    async def round(self) -> None:
        mm = self.mm
        if not mm.leading or not self.settled():
            self.check.reset()
            self.told.clear()  # (a new leader's lobby, or one we cannot judge)
            return
        now = time.monotonic()
        for gw in [gw for gw, (at, _) in self.told.items() if now - at > REVIVE_S]:
            del self.told[gw]
        watched = self.watched()
        gone, there = await self.check.round(mm.nc, [*watched, *self.told])
        if not mm.leading or not self.settled():  # no verdict
            self.check.reset()
            return
        for gw in there & self.told.keys():
            await self.revive(gw, self.told.pop(gw)[1])
        if gone:
            watched = self.watched()  # as they are now (the asks took time)
        for gw, first in gone:
            again = gw in self.told  # (asked on since: found gone again)
            told = self.told[gw][1] if again else {}
            for player in watched.get(gw, []):
                seen = mm.via.get(player)
                if not mm.leading or seen is None:
                    return  # stepped down meanwhile (its memory went with it)
                if mm.outlived(player, seen[0]):
                    continue  # a later connection of theirs called: not their going
                ticket = mm.queue.by_player.get(player)
                room = mm.rooms.room_of(player)
                mm.gone(player, seen[0])
                await self.away(player, max(0, int((time.time() - first) * 1000)))
                told[player] = (ticket.game if ticket is not None else "",
                                room.code if room is not None else "")
            if again:
                continue  # said and counted once
            self.told[gw] = (time.monotonic(), told)
            log.warning("gateway gone: its lobby players away",
                        extra={"gateway": gw, "players": len(told)})
            m.GATEWAYS_GONE.inc()

    def heard_from(self, gw: str) -> None:
        """A lobby call came through ``gw``: it is there (its NATS
        connection may be away, not its players), whatever the asks say."""
        self.check.missing.pop(gw, None)

    async def revive(self, gw: str, told: dict[str, tuple[str, str]]) -> None:
        """``gw`` answers after all (it was cut off from NATS, not gone):
        its players told away are back, as a call of theirs would have
        said, and what they were told meanwhile — went to a gateway NATS
        could not reach — is told again: a ticket that went, a room seat
        whose wait ran out."""
        from ttanjit.matchmaker.service import AWAY_LEFT_MESSAGE, AWAY_UNQUEUED

        log.warning("gateway found gone answers again: its lobby players back",
                    extra={"gateway": gw, "players": len(told)})
        m.GATEWAYS_REVIVED.inc()
        mm = self.mm
        for player, (game, code) in told.items():
            seen = mm.via.get(player)
            if seen is not None and seen[1] != gw:
                continue  # heard from elsewhere since: that connection speaks for them
            await self.back(player)
            if game:
                await mm.notify(player, {"type": "queue_cancelled", "game": game,
                                         "reason": "away", "message": AWAY_UNQUEUED})
            if code and mm.rooms.room_of(player) is None:
                await mm.notify(player, {"type": "room_left", "code": code, "reason": "away",
                                         "message": AWAY_LEFT_MESSAGE})
