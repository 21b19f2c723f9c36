"""The 관전 list's progress of a One Card game (GET /api/live, docs/websocket.md
1.2: ``cards``): the seats dealt in, one out of the game ``null``. Its 0
cards read as a winner's ("남은 카드 0·4·7") and an empty seat's 0 as a
player's (replay audit)."""

from __future__ import annotations

from ttanjit.games import engine_class
from ttanjit.games.base import SeatSpec, Setup
from ttanjit.gateway.account import _progress


def test_a_seat_out_of_the_game_is_null_and_an_empty_seat_is_not_listed() -> None:
    seats = [SeatSpec(), SeatSpec("bot", "hard"), SeatSpec("empty"), SeatSpec("bot", "easy")]
    e = engine_class("onecard")(Setup("onecard", {"seats": 4}, seats, 5))
    view = dict(e.view(None))
    assert view["dealt"] == [True, True, False, True]
    assert _progress(view)["cards"] == [7, 7, 7]
    view["eliminated"], view["hand_counts"] = [1], [9, 0, 0, 3]
    assert _progress(view)["cards"] == [9, None, 3]
    assert _progress({**view, "dealt": None})["cards"] == [9, None, 0, 3]  # (no dealt: every seat)
