"""DESIGN.md 3.1's action JSON: each action type has its own fields
(``Engine.ACTIONS``), and the shard refuses a player's action with any
other (``bad_action``, docs/websocket.md 3) so a record holds only those —
a client could store up to 16 fields of its own in a game's record (hostile
client audit). Every action an engine offers (what bots and the tests
send) stays within them."""

from __future__ import annotations

import random

import pytest

from ttanjit.games.base import Engine, SeatSpec, Setup
from ttanjit.games.hakka import Hakka
from ttanjit.games.onecard import OneCard
from ttanjit.games.penalty_rows import PenaltyRows

GAMES: list[tuple[type[Engine], int]] = [(OneCard, 4), (PenaltyRows, 5), (Hakka, 4)]


@pytest.mark.parametrize("cls,n", GAMES, ids=lambda x: getattr(x, "GAME", str(x)))
def test_every_offered_action_has_only_its_types_fields(cls: type[Engine], n: int) -> None:
    g = cls(Setup(cls.GAME, {"seats": n}, [SeatSpec("human")] * n, 3))
    rng, seen = random.Random(3), set[str]()
    for _ in range(400):
        if g.finished:
            break
        acts = [(s, a) for s in range(n) for a in g.legal_actions(s)]
        if not acts:
            g.apply(g.next_deadline() or g.now, None, None)
            continue
        seat, act = rng.choice(acts)
        for _s, a in acts:
            assert g.foreign_fields(a) == [], a
            assert g.foreign_fields({**a, "turn_key": 1}) == []
            seen.add(a["type"])
        assert g.apply(g.now, seat, act).ok
    assert seen and seen <= set(cls.ACTIONS)


def test_a_field_the_type_does_not_have_is_named() -> None:
    assert OneCard.foreign_fields({"type": "draw", "x": 1}) == ["x"]
    assert OneCard.foreign_fields({"type": "play", "cards": ["5H"], "suit": "H", "seat": 1}) == ["seat"]
    assert PenaltyRows.foreign_fields({"type": "confirm", "card": 5, "seat": 1}) == ["seat"]
    assert PenaltyRows.foreign_fields({"type": "select", "card": 5, "row": 1, "auto": True}) == []
    assert Hakka.foreign_fields({"type": "call", "cards": []}) == ["cards"]
    assert Hakka.foreign_fields({"type": "leave", "why": "bye"}) == ["why"]  # presence: type only
    # a type the game does not have is its own refusal (unknown_action / bad_action)
    assert Hakka.foreign_fields({"type": "select", "card": 5}) == []
    assert Hakka.foreign_fields({"type": ["play"], "x": 1}) == []  # no type: bad_action
