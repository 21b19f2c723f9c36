"""One shape of view for all three games (issue 13, ``ttanjit.games.base``):
in random play of One Card, 줄줄이 벌점 and Hakka, at every step

- ``view(seat) == {**public_view(), **private_view(seat)}`` and
  ``view(None) == {**public_view(), "seat": None}`` (the shard pushes views
  built that way: the public part once per burst, each seat's part added);
- the private part never shares a key with the public part, and the public
  part has no ``seat``;
- every view has the common fields with the same types and meanings
  (``seats`` agrees with the omniscient state's ``bot``/``autopilot`` and
  the presence), ``hand`` only in a seat's view;

and every game ends with the one game-over event, ``game_ended`` {ended_by,
winners}, matching the final view.

The playouts are the games' own random-play helpers
(``test_*_playouts.py``)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from test_hakka_playouts import new_game as new_hakka
from test_hakka_playouts import step_game as step_hakka
from test_onecard_playouts import drive as drive_onecard
from test_onecard_playouts import new_game as new_onecard
from test_penalty_rows_playouts import check_invariants as penalty_invariants
from test_penalty_rows_playouts import play as play_penalty_rows

from ttanjit.games.base import VIEW_FIELDS, Engine, SeatSpec, Setup
from ttanjit.games.penalty_rows import PenaltyRows
from ttanjit.games.record import Input, Record, replay

SEAT_KEYS = {"seat", "kind", "bot", "substituted", "autopilot", "connected"}


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_common(e: Engine, view: dict[str, Any], seat: int | None) -> None:
    """The common fields of ``view`` (``seat``'s, None: a spectator's)."""
    assert set(VIEW_FIELDS) <= set(view), set(VIEW_FIELDS) - set(view)
    assert view["game"] == e.GAME and view["seat"] == seat
    n = view["n"]
    assert _int(n) and n == e.n
    st, p = e.state(), e.presence
    seats = view["seats"]
    assert isinstance(seats, list) and len(seats) == n
    for s, x in enumerate(seats):
        # ("kept": true only on a seat taken once out of the game: rules 3)
        assert isinstance(x, dict) and set(x) - {"kept"} == SEAT_KEYS, x
        assert x.get("kept", False) is p.kept[s] and x.get("kept") in (None, True), x
        assert x["seat"] == s and x["kind"] == e.setup.seats[s].kind
        assert x["kind"] in ("human", "bot", "empty")
        for k in ("bot", "substituted", "autopilot", "connected"):
            assert isinstance(x[k], bool), (k, x)
        # the same meaning in every game
        assert x["bot"] == st["bot"][s] and x["autopilot"] == st["autopilot"][s]
        assert x["substituted"] == p.substituted[s]
        assert x["connected"] == (p.connected[s] or not p.is_active_human(s))
        assert x["bot"] == (x["kind"] == "bot" or x["substituted"])
    counts = view["hand_counts"]
    assert isinstance(counts, list) and len(counts) == n and all(_int(c) and c >= 0 for c in counts)
    turn = view["turn"]  # a seat, in every game (None: nobody's, or everyone's at once)
    assert turn is None or (_int(turn) and 0 <= turn < n)
    assert view["deadline"] is None or _int(view["deadline"])
    # the turn or phase now: its deadline in game time (a move may carry it)
    assert view["turn_key"] == e.deadline_gt and (view["turn_key"] is None or _int(view["turn_key"]))
    assert isinstance(view["paused"], bool) and view["paused"] == p.paused
    assert isinstance(view["finished"], bool) and view["finished"] == e.finished
    winners = view["winners"]
    assert isinstance(winners, list) and all(_int(w) and 0 <= w < n for w in winners)
    assert winners == e.result()["winners"] if e.finished else winners == []
    assert (view["ended_by"] is None) == (not e.finished)
    assert view["ended_by"] is None or isinstance(view["ended_by"], str)
    if seat is None:
        assert "hand" not in view
    else:
        assert isinstance(view["hand"], list)
        dreamer = view.get("dreamer") if e.GAME == "hakka" else None
        if seat != dreamer:  # Hakka's dreamer holds one card face down, unseen even by them
            assert len(view["hand"]) == counts[seat]


def check_views(e: Engine) -> None:
    public = e.public_view()
    assert "seat" not in public
    spectator = e.view(None)
    assert spectator == {**public, "seat": None}
    check_common(e, spectator, None)
    for seat in range(e.n):
        private = e.private_view(seat)
        assert private["seat"] == seat and "hand" in private
        assert not set(private) & set(public), set(private) & set(public)
        view = e.view(seat)
        assert view == {**public, **private}
        check_common(e, view, seat)


def check_game_ended(e: Engine, inputs: list[Input]) -> None:
    """The record replays to one ``game_ended`` event, the game's last, whose
    winners and ended_by are the final view's."""
    again, results, events = replay(Record(e.setup, inputs))
    assert all(r["ok"] for r in results)
    over = [ev for ev in events if ev["type"] in ("game_ended", "game_over")]
    assert [ev["type"] for ev in over] == ["game_ended"]
    view = again.view(None)
    assert over[0]["winners"] == view["winners"] and over[0]["ended_by"] == view["ended_by"]
    check_views(again)


@pytest.mark.parametrize(("seats", "kinds", "seed"), [
    (2, None, 1), (3, ["human", "bot", "human"], 2), (4, ["human", "empty", "bot", "human"], 3),
    (6, None, 4)])
def test_onecard_views(seats: int, kinds: list[str] | None, seed: int) -> None:
    g = new_onecard(seed, seats, kinds)
    check_views(g)
    inputs = drive_onecard(g, random.Random(seed), lambda g, _inp, _all: check_views(g),
                           presence=0.05)
    check_views(g)
    check_game_ended(g, inputs)


@pytest.mark.parametrize(("kinds", "options", "seed"), [
    (["human", "human"], {"rounds": 1}, 1),
    (["human", "bot", "human", "empty", "human"], {"rounds": 1}, 2),
    (["human", "human", "bot"], {"end": "score_66"}, 4)])
def test_penalty_rows_views(kinds: list[str], options: dict[str, Any], seed: int) -> None:
    setup = Setup("penalty_rows", {"seats": len(kinds), **options},
                  [SeatSpec(k) for k in kinds], seed)
    e = PenaltyRows(setup)
    inputs: list[Input] = []

    def check(e: PenaltyRows) -> None:
        penalty_invariants(e)
        check_views(e)

    play_penalty_rows(e, random.Random(seed), inputs, check)
    check_views(e)
    check_game_ended(e, inputs)


@pytest.mark.parametrize("seed", [1, 6, 9])  # 9: abandoned
def test_hakka_views(seed: int) -> None:
    g = new_hakka(seed)
    rng = random.Random(seed)
    inputs: list[Input] = []
    t = 0
    for _step in range(3000):
        check_views(g)
        if g.finished:
            break
        t = step_hakka(g, rng, inputs, t)
    assert g.finished
    check_game_ended(g, inputs)
