"""관전 of a game between shards: the gateway asks the game's public view
again while no shard answers (docs/websocket.md, ``spectate``). The shard
here is scripted — the real one, moving between owners, answers at a moment
no test can place — and answers only the fourth time it is asked."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import orjson
from nats.errors import NoRespondersError

from ttanjit.gateway import spectate


class Replies:
    def __init__(self, silent: int) -> None:
        self.silent, self.asked = silent, 0

    async def request(self, subject: str, data: bytes, timeout: float) -> Any:
        self.asked += 1
        if self.asked <= self.silent:
            raise NoRespondersError
        return SimpleNamespace(data=orjson.dumps({"seq": 3, "view": {"turn": 0}}))


def conn(replies: Replies) -> Any:
    return SimpleNamespace(gw=SimpleNamespace(replies=replies,
                                              subjects=SimpleNamespace(sync=lambda gid: f"sync.{gid}")))


async def test_a_view_is_asked_for_again_after_the_last_wait() -> None:
    """Each of the waits is followed by a try: the last one was slept and
    the spectator told there was no game."""
    replies = Replies(silent=3)
    reply = await spectate._sync(conn(replies), "g1", (0.01, 0.01, 0.01))
    assert reply == {"seq": 3, "view": {"turn": 0}} and replies.asked == 4


async def test_no_answer_after_every_wait_is_no_view() -> None:
    replies = Replies(silent=9)
    assert await spectate._sync(conn(replies), "g1", (0.01, 0.01)) is None
    assert replies.asked == 3
    once = Replies(silent=9)  # a finished game's view is asked once
    assert await spectate._sync(conn(once), "g1", ()) is None and once.asked == 1
