"""RULES.md 4 (abandonment), in every engine: a game whose human seats have
all been disconnected for 10 minutes of real time in a row ends then, with
no winner and unrated (``ended_by: "abandoned"``); a human back within the
10 minutes resumes and the count starts again; bots' seats don't count; the
record replays to the same end."""

from __future__ import annotations

from typing import Any

import pytest

from ttanjit.games import engine_class
from ttanjit.games.base import ABANDON_MS, ABANDONED, Engine, Event, SeatSpec, Setup
from ttanjit.games.record import Input, Record, replay

GAMES = {"onecard": 3, "penalty_rows": 3, "hakka": 4}
GAME_OVER = "game_ended"  # every game's game-over event (issue 13)
H, B = SeatSpec("human"), SeatSpec("bot", "normal")


def make(game: str, seats: list[SeatSpec], **options: Any) -> tuple[Engine, Record]:
    setup = Setup(game, {"seats": len(seats), **options}, seats, 5)
    return engine_class(game)(setup), Record(setup)


def put(eng: Engine, rec: Record, t: int, seat: int | None = None,
        action: dict[str, Any] | None = None) -> list[Event]:
    """Apply an input that must be accepted, and log it as the shard would."""
    res = eng.apply(t, seat, action)
    assert res.ok, (t, seat, action, res.code)
    rec.inputs.append(Input(t, seat, action))
    return res.events


def humans_of(game: str) -> list[SeatSpec]:
    """Two humans, the rest bots."""
    return [H, H] + [B] * (GAMES[game] - 2)


def assert_abandoned(eng: Engine, events: list[Event]) -> None:
    assert eng.finished
    over = [e for e in events if e.type == GAME_OVER]
    assert len(over) == 1 and over[0].data["ended_by"] == ABANDONED
    assert over[0].data["winners"] == [] and over[0].data.get("winner") is None
    res = eng.result()
    assert res["ended_by"] == ABANDONED and res["winners"] == []
    assert eng.next_deadline() is None


@pytest.mark.parametrize("game", GAMES)
def test_all_humans_away_ten_minutes_ends_the_game(game: str) -> None:
    """RULES.md 4 (abandonment): every human seat away 600,000 ms of real
    time in a row -> ended then, ``abandoned``, no winner."""
    eng, rec = make(game, humans_of(game))
    put(eng, rec, 1000, 0, {"type": "disconnect"})
    put(eng, rec, 2000, 1, {"type": "disconnect"})  # every human away from here
    assert eng.presence.paused and ABANDON_MS == 600_000
    assert eng.next_deadline() == 2000 + ABANDON_MS  # the shard's timer wakes then
    assert not put(eng, rec, 2000 + ABANDON_MS - 1) and not eng.finished
    assert_abandoned(eng, put(eng, rec, 2000 + ABANDON_MS))


@pytest.mark.parametrize("game", GAMES)
def test_a_late_input_cannot_beat_the_abandonment(game: str) -> None:
    """RULES.md 4 (abandonment): a reconnect that arrives after the 10
    minutes (before the clock input) is refused and changes nothing; the
    clock input then ends the game at the abandonment time."""
    eng, rec = make(game, humans_of(game))
    put(eng, rec, 0, 0, {"type": "disconnect"})
    put(eng, rec, 0, 1, {"type": "disconnect"})
    late = eng.apply(ABANDON_MS + 5, 0, {"type": "reconnect"})
    assert not late.ok and late.code == "game_finished"
    assert not eng.finished and eng.presence.paused
    assert_abandoned(eng, put(eng, rec, ABANDON_MS + 5))


@pytest.mark.parametrize("game", GAMES)
def test_a_human_back_at_959_resumes_and_the_count_restarts(game: str) -> None:
    """RULES.md 4 (abandonment): "A human who returns within the 10 minutes
    resumes as above" — back at 9:59 the game goes on; the next time every
    human is away, the 10 minutes start again from zero."""
    eng, rec = make(game, humans_of(game))
    put(eng, rec, 1000, 0, {"type": "disconnect"})
    put(eng, rec, 2000, 1, {"type": "disconnect"})
    back = 2000 + 599_000  # 9:59
    put(eng, rec, back, 0, {"type": "reconnect"})
    assert not eng.finished and not eng.presence.paused
    assert eng.next_deadline() != 2000 + ABANDON_MS
    put(eng, rec, 2000 + ABANDON_MS)  # the old deadline passes: nothing ends
    assert not eng.finished
    again = 2000 + ABANDON_MS + 1000
    put(eng, rec, again, 0, {"type": "disconnect"})
    assert eng.presence.paused and eng.next_deadline() == again + ABANDON_MS
    put(eng, rec, again + ABANDON_MS - 1)
    assert not eng.finished
    assert_abandoned(eng, put(eng, rec, again + ABANDON_MS))


@pytest.mark.parametrize("game", GAMES)
def test_bots_seats_do_not_count(game: str) -> None:
    """RULES.md 4 ("Bots' seats don't count as humans"): one human with
    bots, the human away 10 min -> abandoned although the bots are there;
    a human whose seat a bot took (``leave``) does not count either."""
    eng, rec = make(game, [H] + [B] * (GAMES[game] - 1))
    put(eng, rec, 500, 0, {"type": "disconnect"})
    assert eng.presence.paused
    assert_abandoned(eng, put(eng, rec, 500 + ABANDON_MS))

    eng, rec = make(game, humans_of(game))
    put(eng, rec, 500, 0, {"type": "leave"})  # seat 0 is a bot's now
    put(eng, rec, 700, 1, {"type": "disconnect"})
    assert eng.presence.paused and eng.next_deadline() == 700 + ABANDON_MS
    assert_abandoned(eng, put(eng, rec, 700 + ABANDON_MS))


@pytest.mark.parametrize("game", GAMES)
def test_replaying_the_record_reproduces_the_abandonment(game: str) -> None:
    """RULES.md 4 (abandonment) and DESIGN.md 3.1 (a game is its record):
    the record of an abandoned game replays to the same end, state and
    result; the shortened ``abandon_ms`` option is part of the record."""
    eng, rec = make(game, humans_of(game), abandon_ms=5000)
    put(eng, rec, 100, 1, {"type": "disconnect"})
    put(eng, rec, 3000, 0, {"type": "disconnect"})
    put(eng, rec, 7000, 0, {"type": "reconnect"})  # 4 s away: resumes
    put(eng, rec, 8000, 0, {"type": "disconnect"})
    assert eng.next_deadline() == 13_000
    put(eng, rec, 13_000)
    assert eng.result()["ended_by"] == ABANDONED
    again, _, events = replay(rec)
    assert again.finished and again.state() == eng.state()
    assert again.result() == eng.result()
    over = [e for e in events if e["type"] == GAME_OVER]
    assert len(over) == 1 and over[0]["ended_by"] == ABANDONED


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("bad", [0, 999, "600000", True, 1.5])
def test_abandon_ms_option_checked(game: str, bad: object) -> None:
    """``abandon_ms`` (test deployments only) is an integer >= 1000."""
    with pytest.raises(ValueError):
        make(game, humans_of(game), abandon_ms=bad)


@pytest.mark.parametrize("game", list(GAMES))
def test_an_abandoned_games_length_is_its_game_time(game: str) -> None:
    """RULES.md 4: the pause stops the game's clocks, so the 10 minutes of
    every human away are not game time: the result's ``length_ms`` (the
    result screen's 게임 시간, 내 기록) is the time played. Hakka's said
    601,000 ms after one second of play (audit finding)."""
    eng, rec = make(game, humans_of(game))
    put(eng, rec, 1000, 0, {"type": "disconnect"})
    put(eng, rec, 1000, 1, {"type": "disconnect"})
    assert_abandoned(eng, put(eng, rec, 1000 + ABANDON_MS))
    assert eng.result()["length_ms"] == 1000
