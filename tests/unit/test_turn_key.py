"""A move carries the turn it was chosen on (``turn_key``, every view's;
``ttanjit.games.base``, docs/websocket.md 3).

RULES.md 4: "A disconnected player's clock keeps running (timeouts act as
in each game)" — so a move pressed while the connection was down, kept by
the client and sent once it is back, may arrive after its turn timed out
(RULES.md 1.9, 2.5, 3.9) and the player's turn came round again. With its
``turn_key`` it is refused ``turn_passed`` and changes nothing, though the
same move is legal on the new turn; with the new turn's key it is played.
The key is a turn's, not the clock's: it stays the same across a pause
(every human away, RULES.md 4) and while others act in the same turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_hakka_playouts import new_game as new_hakka
from test_onecard_playouts import new_game as new_onecard

from ttanjit.games.base import Engine, SeatSpec, Setup
from ttanjit.games.penalty_rows import PenaltyRows

NOT_TIED = ("one_card", "resume")  # not tied to a turn: the web client sends them without a key


def onecard() -> Engine:
    return new_onecard(3, 2)  # two humans


def penalty_rows() -> Engine:
    return PenaltyRows(Setup("penalty_rows", {"seats": 2, "rounds": 1},
                             [SeatSpec("human"), SeatSpec("human")], 3))


def hakka() -> Engine:
    return new_hakka(3)  # four humans


GAMES: dict[str, Callable[[], Engine]] = {
    "onecard": onecard, "penalty_rows": penalty_rows, "hakka": hakka}


def seat_to_move(e: Engine) -> int:
    turn = e.view(None)["turn"]
    return 0 if turn is None else turn  # 줄줄이 벌점: every seat chooses at once


def a_move(e: Engine, seat: int) -> dict[str, Any]:
    moves = [a for a in e.legal_actions(seat) if a["type"] not in NOT_TIED]
    assert moves, (e.GAME, e.state())
    return moves[0]


def time_out_until_seat_moves_again(e: Engine, seat: int, key: int) -> None:
    """Nobody acts: every turn times out (the clock input a shard sends at
    each deadline) until ``seat`` has a move on a new turn."""
    for _ in range(40):
        nd = e.next_deadline()
        assert nd is not None
        assert e.apply(nd).ok
        v = e.view(seat)
        if v["turn_key"] != key and seat_to_move(e) == seat and [
                a for a in e.legal_actions(seat) if a["type"] not in NOT_TIED]:
            return
    raise AssertionError(f"{e.GAME}: seat {seat} never had a turn again")


@pytest.mark.parametrize("game", GAMES)
def test_a_move_kept_past_its_turn_is_refused_on_the_next(game: str) -> None:
    e = GAMES[game]()
    seat = seat_to_move(e)
    old = e.view(seat)["turn_key"]
    assert isinstance(old, int)
    time_out_until_seat_moves_again(e, seat, old)
    new = e.view(seat)["turn_key"]
    assert isinstance(new, int) and new != old
    move = a_move(e, seat)  # legal on the new turn
    before, now = e.state(), e.now
    r = e.apply(now + 100, seat, {**move, "turn_key": old})
    assert not r.ok and r.code == "turn_passed", (r.code, move)
    assert r.message == "그 수를 고른 차례가 이미 끝나서 내지 않았어요."
    assert e.state() == before and e.now == now  # nothing changed, not even the clock
    r = e.apply(now + 100, seat, {**move, "turn_key": new})
    assert r.ok, (r.code, move)


@pytest.mark.parametrize("game", GAMES)
def test_a_turns_key_holds_across_a_pause_and_others_moves(game: str) -> None:
    e = GAMES[game]()
    seat = seat_to_move(e)
    key = e.view(seat)["turn_key"]
    humans = [s for s in range(e.n) if e.setup.seats[s].kind == "human"]
    t = 1000
    for s in humans:  # everyone away: the clocks stand still (RULES.md 4)
        assert e.apply(t, s, {"type": "disconnect"}).ok
    assert e.view(seat)["paused"]
    t += 5 * 60_000
    for s in humans:
        assert e.apply(t, s, {"type": "reconnect"}).ok
    assert e.view(seat)["turn_key"] == key  # the same turn, though its deadline is later
    if game == "penalty_rows":  # another seat chooses in the same turn
        other = 1 - seat
        assert e.apply(t + 10, other, {**a_move(e, other), "turn_key": key}).ok
        assert e.view(seat)["turn_key"] == key
    assert e.apply(t + 20, seat, {**a_move(e, seat), "turn_key": key}).ok


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("key", ["12", 1.5, True, None, [1]])
def test_a_turn_key_that_is_not_an_integer_is_bad_action(game: str, key: Any) -> None:
    e = GAMES[game]()
    seat = seat_to_move(e)
    before = e.state()
    r = e.apply(100, seat, {**a_move(e, seat), "turn_key": key})
    assert not r.ok and r.code == "bad_action" and e.state() == before

