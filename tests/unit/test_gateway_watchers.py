"""The gateway's spectator counts (gateway/watchers.py, issue 15): a
connection hears the count of its table or the game it watches through one
NATS subscription per game on its gateway, dropped with the game's last
such connection."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from ttanjit.gateway.watchers import Watchers


class Sub:
    def __init__(self) -> None:
        self.gone = False

    async def unsubscribe(self) -> None:
        self.gone = True


class NC:
    """A NATS client whose subscribe waits for ``opened``."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.subs: list[Sub] = []

    async def subscribe(self, subject: str, cb: Any) -> Sub:
        await self.opened.wait()
        self.subs.append(Sub())
        return self.subs[-1]

    def jetstream(self) -> Any:
        raise RuntimeError("no JetStream here: the count starts at 0")


class Conn:
    def __init__(self, cid: str) -> None:
        self.id, self.closed = cid, False
        self.sent: list[dict[str, Any]] = []

    async def send(self, frame: dict[str, Any]) -> None:
        self.sent.append(frame)


def conn(cid: str) -> Conn:
    return Conn(cid)


async def test_a_connection_gone_while_its_game_is_followed_leaves_no_subscription() -> None:
    """Soak audit: a socket that closed while its table's count was being
    subscribed to (a drop right after ``matched``) left the subscription
    and the game for good: its unfollow found the game not ready and let
    it be, and the follow, once ready, saw the connection closed and went."""
    nc = NC()
    w = Watchers(SimpleNamespace(nc=nc, prefix="ttanjit.v1"))
    c = conn("c1")
    following = asyncio.create_task(w.follow(c, "g1", "own"))
    await asyncio.sleep(0)
    c.closed = True
    await w.unfollow(c)  # the connection's finish, the subscription under way
    nc.opened.set()
    await following
    assert w.games == {} and w.roles == {}
    assert [s.gone for s in nc.subs] == [True]
    assert c.sent == []


async def test_a_table_mate_waiting_for_the_subscription_keeps_it() -> None:
    """Review finding: the fix above dropped the game as soon as it was
    ready — while another connection of the same table, waiting for that
    subscription, was not yet among its connections: it never heard the
    count, its role lost (four players matched at once, one drops)."""
    nc = NC()
    w = Watchers(SimpleNamespace(nc=nc, prefix="ttanjit.v1"))
    a, b = conn("a"), conn("b")
    first = asyncio.create_task(w.follow(a, "g1", "own"))
    await asyncio.sleep(0)
    second = asyncio.create_task(w.follow(b, "g1", "own"))
    await asyncio.sleep(0)
    a.closed = True
    await w.unfollow(a)
    nc.opened.set()
    await asyncio.gather(first, second)
    assert list(w.games) == ["g1"] and w.roles == {"b": {"own": "g1"}}
    assert [s.gone for s in nc.subs] == [False]
    assert b.sent == [{"type": "spectators", "game_id": "g1", "count": 0}]
    await w.unfollow(b)
    assert w.games == {} and nc.subs[0].gone


async def test_a_role_moved_on_while_its_first_game_was_followed_drops_that_game() -> None:
    nc = NC()
    w = Watchers(SimpleNamespace(nc=nc, prefix="ttanjit.v1"))
    c = conn("c1")
    first = asyncio.create_task(w.follow(c, "g1", "watch"))
    await asyncio.sleep(0)
    second = asyncio.create_task(w.follow(c, "g2", "watch"))  # watches another game at once
    await asyncio.sleep(0)
    nc.opened.set()
    await asyncio.gather(first, second)
    assert list(w.games) == ["g2"] and w.roles == {"c1": {"watch": "g2"}}
    assert sorted(s.gone for s in nc.subs) == [False, True]
    assert c.sent == [{"type": "spectators", "game_id": "g2", "count": 0}]


async def test_a_game_followed_stays_until_its_last_connection_goes() -> None:
    nc = NC()
    nc.opened.set()
    w = Watchers(SimpleNamespace(nc=nc, prefix="ttanjit.v1"))
    a, b = conn("a"), conn("b")
    await w.follow(a, "g1", "own")
    await w.follow(b, "g1", "watch")
    assert len(nc.subs) == 1
    await w.unfollow(a)
    assert "g1" in w.games and not nc.subs[0].gone
    await w.unfollow(b)
    assert w.games == {} and nc.subs[0].gone
