"""관전 never shows a hidden card (issue 15 item 6): what a spectator gets —
``engine.view(None)`` (the ``spectate_view`` frame) and every event's public
form ``Event.for_seat(None)`` (the ``spectate_event`` frames, compared one
for one with the record's public projection in
tests/integration/test_identity_history.py) — never holds a card that is
hidden at that moment: a card in someone's hand, a 줄줄이 벌점 selection not
yet revealed, a Hakka face-down discard or the dreamer's card.

"Hidden" after each input is what some seat's own view shows that nobody
else's does (``hand``, ``selection``, ``my_discards``), minus what the public
view shows. Random playouts of every game and table size, several seeds.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from ttanjit.games import engine_class
from ttanjit.games.base import SeatSpec, Setup
from ttanjit.games.record import Input
from ttanjit.games.simulate import playout

PRIVATE = ("hand", "selection", "my_discards")
CARD_KEYS = {"card", "row_cards", "hand", "selection", "cards", "my_discards"}


def tokens(obj: Any, key: str = "") -> set[Any]:
    """Card-like leaves: every string (One Card and Hakka card codes), and
    integers under a card key (줄줄이 벌점 numbers; ``cards`` is a count when
    it is a plain integer, so only lists count there)."""
    out: set[Any] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            out |= tokens(v, k)
    elif isinstance(obj, list):
        for v in obj:
            out |= tokens(v, key if not isinstance(v, (dict, list)) else key)
    elif isinstance(obj, str):
        out.add(obj)
    elif isinstance(obj, int) and not isinstance(obj, bool) and key in CARD_KEYS \
            and key != "cards":
        out.add(obj)
    return out


def list_ints(obj: Any, key: str = "") -> set[int]:
    """Integers inside a ``cards`` list (row contents)."""
    out: set[int] = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            out |= list_ints(v, k)
    elif isinstance(obj, list):
        for v in obj:
            if key == "cards" and isinstance(v, int) and not isinstance(v, bool):
                out.add(v)
            else:
                out |= list_ints(v, key)
    return out


def public_tokens(obj: Any) -> set[Any]:
    return tokens(obj) | list_ints(obj)


def hidden(engine: Any) -> set[Any]:
    public = public_tokens(engine.view(None))
    out: set[Any] = set()
    for seat in range(engine.n):
        v = engine.view(seat)
        for k in PRIVATE:
            if v.get(k) is not None:
                out |= tokens(v[k], k) | list_ints({"cards": v[k]} if k == "hand" else v[k])
    return out - public


CASES = [("onecard", 2, {}), ("onecard", 5, {}), ("penalty_rows", 3, {"rounds": 1}),
         ("penalty_rows", 6, {"rounds": 1}), ("hakka", 4, {})]


@pytest.mark.parametrize("game,seats,options", CASES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_public_view_and_events_hold_no_hidden_card(game: str, seats: int,
                                                    options: dict[str, Any], seed: int) -> None:
    def setup() -> Setup:
        return Setup(game, {**options, "seats": seats}, [SeatSpec()] * seats, seed)

    inputs: list[Input] = []
    playout(engine_class(game)(setup()), random.Random(seed), record=inputs)
    engine = engine_class(game)(setup())
    checked = 0
    for inp in [None, *inputs]:
        events = [] if inp is None else engine.apply(inp.t, inp.seat, inp.action).events
        secret = hidden(engine)
        assert secret or engine.finished  # the deal is hidden from the start
        pub_view = json.loads(json.dumps(engine.view(None)))
        assert not any(pub_view.get(k) for k in PRIVATE), pub_view
        assert pub_view.get("seat") is None
        for ev in events:
            pub = json.loads(json.dumps(ev.for_seat(None)))
            assert not any(pub.get(k) for k in PRIVATE), pub
            leaked = public_tokens(pub) & secret
            assert not leaked, (ev.type, leaked, pub)
            checked += 1
    assert engine.finished and checked > 5


@pytest.mark.parametrize("game,seats", [("onecard", 3), ("penalty_rows", 3), ("hakka", 4)])
def test_the_check_sees_a_leak(game: str, seats: int) -> None:
    """The checker itself: a hand card put into a public event is caught."""
    engine = engine_class(game)(Setup(game, {"seats": seats}, [SeatSpec()] * seats, 5))
    card = engine.view(1)["hand"][0]
    assert public_tokens({"type": "drew", "card": card}) & hidden(engine)
    assert public_tokens({"type": "took", "cards": [card]}) & hidden(engine)
