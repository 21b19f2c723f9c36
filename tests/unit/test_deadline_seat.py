"""docs/websocket.md 3: ``deadline.seat`` names the one seat whose move the
next deadline waits for, and is absent when every seat has it or none
does (``Engine.due_seat``; the timers of RULES.md 1.9, 2.5, 3.9). The docs
and client.proto said so; no frame carried it (docs audit)."""

from __future__ import annotations

from ttanjit.games.base import SeatSpec, Setup
from ttanjit.games.hakka import Hakka
from ttanjit.games.onecard import OneCard
from ttanjit.games.penalty_rows import PenaltyRows


def humans(game: str, n: int) -> Setup:
    return Setup(game, {"seats": n}, [SeatSpec("human")] * n, 5)


def test_one_card_names_the_turns_seat_not_the_windows_or_a_pause() -> None:
    g = OneCard(humans("onecard", 3))
    assert g.due_seat() == g.turn is not None
    # a 원카드! window (RULES.md 1.7) closes first: nobody's move
    g.window_holder, g.window_closes = 1, g.now + 1_000
    assert g.due_seat() is None
    g.window_holder = None
    for s in range(3):  # every human away (RULES.md 4): the clock stands still
        g.apply(g.now, None, None)
        g.presence.disconnect(g.now, s)
    assert g.presence.paused and g.due_seat() is None


def test_hakka_names_the_caller_or_player_penalty_rows_none() -> None:
    h = Hakka(humans("hakka", 4))
    assert h.phase == "calling" and h.due_seat() == h.turn is not None
    p = PenaltyRows(humans("penalty_rows", 4))
    assert p.next_deadline() is not None and p.due_seat() is None  # every seat picks
