"""Players whose gateway is gone (docs/protocol.md 2.1).

A gateway says a player left (``disconnect``) when the player's socket
closes. A gateway killed outright (kill -9, an OOM kill, a lost node) says
nothing, and its players' seats stayed "connected" for good: a player who
never came back was played by timeouts and autopilot instead of a bot after
60 s, and a game all of whose players vanished with it never paused and was
never abandoned (RULES.md 4) but played out.

So each shard watches the gateways its players are routed through
(``Room.routes``): one with a shard link open to us is alive; any other is
asked, every :data:`CHECK_S`, with a NATS request to its games subject — a
gateway answers it at once (an older one never answers: alive too). When
NATS itself says nobody subscribes there (no responders: the gateway's
connection is gone from the server) on :data:`GONE_AFTER` asks in a row,
the shard marks that gateway's players away, as their gateway would have
(a ``disconnect`` recorded ``"by": "shard"``). A lost link asks at once.

A live gateway is never taken for a gone one for long: an answer, a timeout
or any error is "alive", and nothing is judged while this shard's own NATS
connection is away or just back (its subscriptions may not have reached
every server). Should a player be marked away whose gateway lives after all
(its NATS connection was away while ours asked), the player's next command
or sync through a gateway takes the mark back (``Room.mark_back``), and the
gateway itself says ``reconnect`` when it sees its player's seat marked
away (the ``disconnected`` event's flag)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from nats.errors import NoRespondersError

from ttanjit.shard import metrics as m

if TYPE_CHECKING:
    from ttanjit.shard.room import Room
    from ttanjit.shard.service import Shard

log = logging.getLogger("ttanjit.shard.gateways")

CHECK_S = 3.0  # between two rounds of asks
ASK_TIMEOUT_S = 2.0  # an ask unanswered this long: alive (busy, or an older gateway)
GONE_AFTER = 2  # "no responders" this many rounds in a row: gone
SETTLE_S = 5.0  # after our own NATS reconnect, no judging for this long
LOST_LINK_S = 1.0  # a lost link's gateway is asked this soon
# the ask: a burst with no parts, so a gateway that does not answer asks
# (an older release) reads it as an empty burst
PROBE = b'{"g":"","p":[]}'


class GatewayWatch:
    def __init__(self, shard: Shard) -> None:
        self.shard = shard
        self.missing: dict[str, int] = {}  # gateway -> rounds in a row with no responders
        self.soon = asyncio.Event()  # a link was lost: a round now

    def link_lost(self, gw: str) -> None:
        if gw:
            self.soon.set()

    async def run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self.soon.wait(), CHECK_S)
                await asyncio.sleep(LOST_LINK_S)  # (its NATS connection ends about now too)
            except TimeoutError:
                pass
            self.soon.clear()
            try:
                await self.round()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a bug here must not stop the watch
                log.exception("gateway watch round failed")

    def seated(self) -> dict[str, list[tuple[Room, str]]]:
        """Every gateway some present player of a live game here is routed
        through, with those (room, player)."""
        by_gw: dict[str, list[tuple[Room, str]]] = {}
        for room in self.shard.rooms.values():
            if room.gone or room.frozen or room.hosted.finished or not room.routes:
                continue
            for player, gw in room.routes.items():
                if room.present(player):
                    by_gw.setdefault(gw, []).append((room, player))
        return by_gw

    async def round(self) -> None:
        shard = self.shard
        nc = shard.nc
        if not nc.is_connected or shard.loop.time() - shard.nats_back_at < SETTLE_S:
            self.missing.clear()
            return
        by_gw = self.seated()
        links = shard.link.by_gw
        asks = [gw for gw in by_gw if not (gw in links and links[gw].open)]
        for gw in list(self.missing):
            if gw not in asks:
                del self.missing[gw]
        if not asks:
            return
        gone = await asyncio.gather(*(self.gone(gw) for gw in asks))
        if not nc.is_connected or shard.loop.time() - shard.nats_back_at < SETTLE_S:
            self.missing.clear()  # our own connection went away meanwhile: no verdict
            return
        for gw, no_one in zip(asks, gone, strict=True):
            if not no_one:
                self.missing.pop(gw, None)
                continue
            self.missing[gw] = self.missing.get(gw, 0) + 1
            if self.missing[gw] < GONE_AFTER:
                continue
            del self.missing[gw]
            # its players as they are now (the asks took time)
            marked = sum(room.mark_away(player) for room, player in self.seated().get(gw, []))
            log.warning("gateway gone: its players marked away",
                        extra={"gateway": gw, "players": marked})
            m.gateways_gone.inc()
            m.players_marked_away.inc(marked)

    async def gone(self, gw: str) -> bool:
        """Whether NATS says nobody subscribes to ``gw``'s games subject."""
        try:
            await self.shard.nc.request(self.shard.subj.gateway_games(gw), PROBE,
                                        timeout=ASK_TIMEOUT_S)
        except NoRespondersError:
            return True
        except Exception:  # noqa: BLE001 - a timeout (busy, older) or NATS trouble: alive
            return False
        return False
