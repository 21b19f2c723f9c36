"""A gateway's places (app.Gateway.admits, docs/websocket.md 5): at most
TTANJIT_MAX_CONNECTIONS players, signed in or with a hello on its way —
never more, whatever order hellos, sign-ins and take-overs come in."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

from ttanjit.common.config import Settings
from ttanjit.gateway.app import Gateway


def gateway(cap: int) -> Gateway:
    return Gateway(replace(Settings(), token_secret="s" * 32, max_connections=cap))


class Conn:
    """A connection as the gateway's bookkeeping sees it (hashable by identity)."""

    def __init__(self, player: str) -> None:
        self.session = SimpleNamespace(player=player)


def conn(player: str) -> Any:
    return Conn(player)


def test_hellos_at_once_hold_their_places() -> None:
    """Review finding: hellos at once each found the last place free."""
    gw = gateway(2)
    a, b, c = conn("a"), conn("b"), conn("c")
    assert gw.admits(a, "a") and gw.admits(b, "b")
    assert not gw.admits(c, "c")  # before either is signed in
    gw.register(a)
    gw.entered(b)  # b's hello failed: its place is free again
    assert gw.admits(c, "c") and gw.full()


def test_a_player_taking_over_their_own_socket_keeps_one_place() -> None:
    """Review finding: between the old socket's end and the new one's sign-in
    the player's place was free, and another player took it (4 of 3, and 6
    of 3 when three reloaded at once)."""
    gw = gateway(2)
    a1, b = conn("a"), conn("b")
    for c, p in ((a1, "a"), (b, "b")):
        assert gw.admits(c, p)
        gw.register(c)
    a2 = conn("a")
    assert gw.admits(a2, "a")  # a's reload: their own place
    gw.unregister(a1)  # the take-over ends the old socket first
    gw.entered(a1)
    assert not gw.admits(conn("x"), "x")  # a's place is still held by the new hello
    gw.register(a2)
    assert not gw.admits(conn("x"), "x") and len(gw.places) == 2
    a3 = conn("a")
    assert gw.admits(a3, "a")
    gw.register(a3)  # (signed in before the old one's end)
    gw.unregister(a2)  # (no longer the player's socket: counts nothing)
    assert gw.places == {"a": 1, "b": 1}
    for c in (a3, b):
        gw.unregister(c)
        gw.entered(c)
    assert gw.places == {} and not gw.entering


def test_no_cap_admits_everyone() -> None:
    gw = gateway(0)
    for i in range(50):
        assert gw.admits(conn(str(i)), str(i))
    assert not gw.full()
