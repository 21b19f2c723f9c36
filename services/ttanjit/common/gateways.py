"""Whether gateways are still there (docs/protocol.md 2.1, 4.1).

A gateway tells the shards and the lobby when a player's socket closes. One
killed outright (kill -9, an OOM kill, a lost node) tells nothing, so the
shards and the lobby leader ask the gateways their players are on: a NATS
request to the gateway's games subject, which a gateway answers at once. An
answer, a timeout (a busy gateway, or one of an earlier release, which
reads the ask as an empty burst) or any other error means it is there;
NATS's own "no responders" (nobody subscribes there: the gateway's
connection is gone from the server) in every round for a while (3 s for
the shards, 10 s for the lobby) means it is gone. The caller judges nothing while its own NATS connection
is away or just back (its view of the servers' subscriptions may lag)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from nats.aio.client import Client
from nats.errors import NoRespondersError

from ttanjit.common.nats import Subjects

CHECK_S = 3.0  # between two rounds of asks
ASK_TIMEOUT_S = 2.0  # an ask unanswered this long: there (busy, or an older gateway)
SETTLE_S = 5.0  # after the asker's own NATS reconnect, no judging for this long
# the ask: a burst with no parts (an older gateway reads it as one)
PROBE = b'{"g":"","p":[]}'


class GatewayCheck:
    """Rounds of asks, remembering since when each gateway has been missed
    in every round: gone once that lasted ``gone_after_s`` (at least two
    rounds: a round called early, a lost link's, does not shorten it)."""

    def __init__(self, subjects: Subjects, gone_after_s: float = CHECK_S) -> None:
        self.subjects = subjects
        self.gone_after_s = gone_after_s
        self.missing: dict[str, float] = {}  # gw -> first missed (wall s), missed every round since

    def reset(self) -> None:
        self.missing.clear()

    async def round(self, nc: Client, gws: Iterable[str]
                    ) -> tuple[list[tuple[str, float]], set[str]]:
        """Ask every gateway of ``gws`` once: the ones found gone now, each
        with when it was first missed (``time.time()``), and the ones that
        are there. Gateways not asked this round start over."""
        asks = list(dict.fromkeys(gws))
        for gw in list(self.missing):
            if gw not in asks:
                del self.missing[gw]
        if not asks:
            return [], set()
        answers = await asyncio.gather(*(self.no_one(nc, gw) for gw in asks))
        now = time.time()
        gone: list[tuple[str, float]] = []
        there: set[str] = set()
        for gw, no_one in zip(asks, answers, strict=True):
            if not no_one:
                self.missing.pop(gw, None)
                there.add(gw)
                continue
            first = self.missing.setdefault(gw, now)
            if now - first >= self.gone_after_s:
                del self.missing[gw]
                gone.append((gw, first))
        return gone, there

    async def no_one(self, nc: Client, gw: str) -> bool:
        """Whether NATS says nobody subscribes to ``gw``'s games subject."""
        try:
            await nc.request(self.subjects.gateway_games(gw), PROBE, timeout=ASK_TIMEOUT_S)
        except NoRespondersError:
            return True
        except Exception:  # noqa: BLE001 - a timeout (busy, older) or NATS trouble: there
            return False
        return False
