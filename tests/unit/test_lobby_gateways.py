"""The lobby leader's memory of which gateway each waiting player is on
(docs/protocol.md 4.1, ``Matchmaker.via``) is one term's: a replica that
leads again must not take the gateways of its earlier term for its
players' now (adversarial review: a host who had moved to another gateway
was let go from the room when the gateway they had left was killed)."""

from __future__ import annotations

from typing import Any

from ttanjit.common.config import Settings
from ttanjit.matchmaker.service import Matchmaker


class Store:
    """The lobby store as ``lead``/``step_down`` use it: an empty lobby."""

    async def claim(self, replica: str, epoch: int) -> dict[str, Any]:
        return {}

    def cancel(self) -> None:
        pass


async def test_a_replica_forgets_the_gateways_of_its_earlier_term() -> None:
    mm = Matchmaker(None, None, Settings())  # type: ignore[arg-type]
    mm.store = Store()  # type: ignore[assignment]
    await mm.lead("a", 1)
    mm.called_via("p_host", 100, "gw-old")
    mm.called_via("p_host", 50, "gw-older")  # an older connection's call: not the one kept
    assert mm.via == {"p_host": (100, "gw-old")}
    mm.step_down()  # another replica leads: the host moves to gw-new meanwhile
    assert mm.via == {}
    mm.via["p_host"] = (100, "gw-old")  # whatever it holds when it leads again goes too
    await mm.lead("a", 3)  # leading again
    assert mm.via == {}
    for task in list(mm._tasks):
        task.cancel()


class Conn:
    """The lobby's NATS connection as the watch looks at it: connected, no
    reconnect."""

    is_connected = True
    stats = {"reconnects": 0}


async def test_a_gateway_found_gone_twice_then_there_has_all_its_players_back(
        monkeypatch: Any) -> None:
    """Adversarial review: a gateway cut off from NATS for longer than a
    second verdict (asked on, it is found gone again) lost the list of
    players it had been told away for — when it answered, nobody came back,
    and each verdict said and counted it gone again."""
    from ttanjit.matchmaker import gateways
    from ttanjit.matchmaker import metrics as m
    from ttanjit.matchmaker.queue import Ticket

    mm = Matchmaker(Conn(), None, Settings())  # type: ignore[arg-type]  # leads alone
    room = mm.rooms.create("p_host", "방장", "onecard", 2, None)
    mm.rooms.join("p_guest", "손님", room.code)
    mm.queue.add(Ticket("p_queued", "대기", "penalty_rows", 4, 0.0, 0))
    for player, gw in (("p_host", "gw-live"), ("p_guest", "gw-cut"), ("p_queued", "gw-cut")):
        mm.called_via(player, 1, gw)
    said: list[tuple[str, dict[str, Any]]] = []

    async def notify(player: str, frame: dict[str, Any]) -> None:
        said.append((player, frame))
    monkeypatch.setattr(mm, "notify", notify)
    calls: list[tuple[str, str]] = []

    async def away(player: str, away_ms: int) -> None:  # what the lobby's Away does
        calls.append(("away", player))
        mm.queue.drop(player)
        if mm.rooms.room_of(player) is not None:
            mm.away[player] = 0

    async def back(player: str) -> None:
        calls.append(("back", player))
        mm.away.pop(player, None)
    watch = gateways.LobbyGatewayWatch(mm, away, back)
    watch.reconnects, watch.back_at = 0, -1e9  # settled
    answers = iter([([("gw-cut", 1.0)], {"gw-live"}),
                    ([("gw-cut", 1.0)], {"gw-live"}),  # asked on: gone again
                    ([], {"gw-live", "gw-cut"})])  # and there after all

    async def round_(nc: Any, gws: Any) -> Any:
        return next(answers)
    monkeypatch.setattr(watch.check, "round", round_)
    before = m.GATEWAYS_GONE._value.get()

    await watch.round()
    assert sorted(calls) == [("away", "p_guest"), ("away", "p_queued")]
    mm.rooms.leave("p_guest")  # the room seat's wait ran out meanwhile
    await watch.round()
    assert len(calls) == 2 and m.GATEWAYS_GONE._value.get() == before + 1  # said once
    await watch.round()
    assert sorted(calls[2:]) == [("back", "p_guest"), ("back", "p_queued")]
    # what they were told went to a gateway NATS could not reach: again
    assert sorted((p, f["type"]) for p, f in said) == [("p_guest", "room_left"),
                                                        ("p_queued", "queue_cancelled")]
    assert not watch.told


async def test_a_lobby_call_through_a_gateway_says_it_is_there() -> None:
    """A gateway cut off from NATS alone still calls the lobby (gRPC) for
    its players: such a call starts its count of misses over."""
    from ttanjit.matchmaker import gateways

    mm = Matchmaker(Conn(), None, Settings())  # type: ignore[arg-type]

    async def nothing(*_: Any) -> None:
        pass
    watch = gateways.LobbyGatewayWatch(mm, nothing, nothing)
    mm.on_gateway_call = watch.heard_from
    watch.check.missing.update({"gw-cut": 1.0, "gw-dead": 1.0})
    mm.called_via("p_a", 1, "gw-cut")
    assert watch.check.missing == {"gw-dead": 1.0}
