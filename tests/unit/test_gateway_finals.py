"""RULES.md 4 at the gateway. Abandonment, "a player who comes back later
sees the final result": a finished game's directory entry becomes the
``game_result`` frame (docs/websocket.md 3, 4), in both encodings. A game
every player left waits, and the 관전 list says so."""

from __future__ import annotations

from ttanjit.gateway import codec
from ttanjit.gateway.account import _progress
from ttanjit.gateway.finals import frame_of, match_of_entry

ENTRY = {"game": "hakka", "players": {"p_a": 0, "p_b": 2}, "state": "finished",
         "result": {"ended_by": "abandoned", "winners": [], "scores": [0, 0, 0, 0],
                    "substituted": [False, False, False, False], "length_ms": 61000}}


def test_a_finished_entry_is_the_players_final_frame() -> None:
    frame = frame_of("g1", "p_b", ENTRY)
    assert frame == {"type": "game_result", "game_id": "g1", "game": "hakka", "seat": 2,
                     "info": ENTRY["result"]}
    assert "seat" not in (frame_of("g1", "p_x", ENTRY) or {})  # not seated: no seat


def test_nothing_for_a_live_or_unknown_game() -> None:
    assert frame_of("g1", "p_a", {**ENTRY, "state": "live"}) is None
    assert frame_of("g1", "p_a", None) is None
    old = {k: v for k, v in ENTRY.items() if k != "result"}  # finished before results were kept
    assert frame_of("g1", "p_a", old) == {"type": "game_result", "game_id": "g1",
                                          "game": "hakka", "seat": 0}


def test_the_frame_names_who_sat_where() -> None:
    """A tab that never saw ``matched`` (a new tab, another device) names
    the seats of the result: each human by nickname, a bot by its level —
    it said "우승: 3번" and showed no scores."""
    seats = [{"kind": "human"}, {"kind": "bot", "level": "easy"}, {"kind": "human"},
             {"kind": "bot", "level": "hard"}]
    frame = frame_of("g1", "p_b", {**ENTRY, "seats": seats}, {"p_a": "가나", "p_b": "다라"}) or {}
    assert frame["players"] == [
        {"seat": 0, "kind": "human", "player": "p_a", "nickname": "가나"},
        {"seat": 1, "kind": "bot", "level": "easy"},
        {"seat": 2, "kind": "human", "player": "p_b", "nickname": "다라"},
        {"seat": 3, "kind": "bot", "level": "hard"}]
    assert frame["seat"] == 2 and frame["info"] == ENTRY["result"]
    full = {**frame, "seq": 7, "server_ms": 1}
    assert codec.decode_server_proto(codec.encode_proto(full)) == full


def test_the_frame_fits_the_schema() -> None:
    frame = {**(frame_of("g1", "p_a", ENTRY) or {}), "seq": 7, "server_ms": 1}
    assert codec.decode_server_proto(codec.encode_proto(frame)) == frame


LIVE = {"game": "onecard", "players": {"p_host": 0, "p_away": 2}, "state": "live",
        "seats": [{"kind": "human"}, {"kind": "bot", "level": "hard"}, {"kind": "human"}]}


def test_a_live_entry_names_who_sits_where() -> None:
    """A player seated while away (a room its host started) never got
    ``matched``: the directory entry gives the same fields (docs/websocket.md
    welcome), each human by nickname, a bot by its level."""
    match = match_of_entry(LIVE, {"p_host": "방장", "p_away": "잠깐"})
    assert match == {"game": "onecard",
                     "players": [{"seat": 0, "kind": "human", "player": "p_host",
                                  "nickname": "방장"},
                                 {"seat": 1, "kind": "bot", "level": "hard"},
                                 {"seat": 2, "kind": "human", "player": "p_away",
                                  "nickname": "잠깐"}]}
    # a nickname that could not be read: the client names that seat by number
    assert "nickname" not in (match_of_entry(LIVE, {}) or {"players": [{}]})["players"][0]


def test_no_names_from_a_finished_or_older_entry() -> None:
    assert match_of_entry({**LIVE, "state": "finished"}, {}) is None
    older = {k: v for k, v in LIVE.items() if k != "seats"}
    assert match_of_entry(older, {}) is None
    assert match_of_entry(None, {}) is None


def test_the_welcome_with_those_fields_fits_the_schema() -> None:
    match = match_of_entry(LIVE, {"p_host": "방장", "p_away": "잠깐"}) or {}
    frame = {"type": "welcome", "seq": 1, "server_ms": 1, "session": "s1", "player": "p_away",
             "nickname": "잠깐", "resumed": True, "game_id": "g1", "seat": 2, **match}
    back = codec.decode_server_proto(codec.encode_proto(frame))
    assert [(p["seat"], p["kind"], p.get("nickname", ""), p.get("level", ""))
            for p in back["players"]] == [(0, "human", "방장", ""), (1, "bot", "", "hard"),
                                          (2, "human", "잠깐", "")]


def test_the_live_list_says_a_game_waits_for_its_players() -> None:
    """RULES.md 4: a game every player left is paused until one comes back
    (or it is abandoned); ``GET /api/live`` says so beside its progress
    (it listed as if it were going on: trial finding)."""
    view = {"game": "onecard", "hand_counts": [7, 6, 6], "paused": True}
    assert _progress(view) == {"cards": [7, 6, 6], "paused": True}
    assert _progress({**view, "paused": False}) == {"cards": [7, 6, 6]}
    assert _progress({"game": "penalty_rows", "round": 2, "rounds": 3}) == {"round": 2, "rounds": 3}
