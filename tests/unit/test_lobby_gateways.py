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
