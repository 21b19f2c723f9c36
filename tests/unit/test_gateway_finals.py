"""RULES.md 4 (abandonment: "a player who comes back later sees the final
result") at the gateway: a finished game's directory entry becomes the
``game_result`` frame (docs/websocket.md 3, 4), in both encodings."""

from __future__ import annotations

from ttanjit.gateway import codec
from ttanjit.gateway.finals import frame_of

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


def test_the_frame_fits_the_schema() -> None:
    frame = {**(frame_of("g1", "p_a", ENTRY) or {}), "seq": 7, "server_ms": 1}
    assert codec.decode_server_proto(codec.encode_proto(frame)) == frame
