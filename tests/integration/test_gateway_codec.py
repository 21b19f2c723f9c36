"""Frames both ways from one schema (docs/websocket.md 3, client.proto),
sans-I/O: JSON and protobuf carry the same messages; no input makes the
decoder fail other than with a stable ``FrameError`` code."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ttanjit.gateway import codec
from ttanjit.gateway.auth import Tokens
from ttanjit.gateway.errors import FrameError
from ttanjit.gateway.limits import TokenBucket

SERVER_FRAMES = [
    {"type": "welcome", "seq": 1, "server_ms": 1764460800123, "session": "s_1",
     "player": "p_1", "nickname": "딴짓왕", "resumed": True, "resume_result": "gapless",
     "game_id": "abcdefghijkl", "seat": 0, "limits": {"max_frame": 16384, "rate": 20},
     "ratings": [{"game": "onecard", "mu": 25.0, "sigma": 8.3, "ordinal": 0.1, "games": 2}],
     "room": {"code": "ABCDEF", "game": "onecard", "seats": 3, "options": {"turn_ms": 45000},
              "host": "p_1", "state": "open",
              "members": [{"seat": 0, "kind": "human", "player": "p_1", "nickname": "가",
                           "rating": 1.5, "display": 1560}, {"seat": 1, "kind": "bot", "level": "hard"},
                          {"seat": 2, "kind": "empty"}]}},
    {"type": "pong", "seq": 2, "server_ms": 1, "client_ms": 123.5},
    {"type": "error", "seq": 3, "server_ms": 1, "code": "not_your_turn",
     "message": "내 차례가 아니에요.", "ref": "action", "cmd_id": "c1"},
    {"type": "queued", "seq": 4, "server_ms": 1, "game": "hakka", "seats": 4, "ticket": "t_1"},
    {"type": "matched", "seq": 5, "server_ms": 1, "game_id": "abcdefghijkl", "game": "onecard",
     "seat": 1, "kind": "quick", "options": {"turn_ms": 30000},
     "players": [{"seat": 0, "kind": "bot", "level": "normal"},
                 {"seat": 1, "kind": "human", "player": "p_1", "nickname": "가", "rating": 0,
                  "display": 1500}]},
    {"type": "event", "seq": 6, "server_ms": 1, "game_id": "abcdefghijkl", "game_seq": 1,
     "t": 1200, "event": {"type": "played", "seat": 2, "cards": ["5H"], "left": 3},
     "deadline": {"seat": 3, "server_ms": 1764460830123, "remaining_ms": 30000, "t": 31200}},
    {"type": "view", "seq": 7, "server_ms": 1, "game_id": "abcdefghijkl", "game_seq": 9,
     "resync": True, "view": {"hand": [{"card": 58, "penalty": 1}], "rows": [[1, 2]],
                               "turn": None},
     "recent": [{"game_seq": 8, "t": 900, "event": {"type": "passed", "seat": 1}},
                {"game_seq": 9, "t": 1000, "event": {"type": "played", "seat": 0,
                                                      "cards": ["5H", "5S"], "left": 3}}]},
    {"type": "result", "seq": 8, "server_ms": 1, "cmd_id": "c1", "game_id": "abcdefghijkl",
     "game_seq": 10, "info": {"order": ["5H", "5S"]}},
    {"type": "room_left", "seq": 9, "server_ms": 1, "code": "ABCDEF"},
    {"type": "update", "seq": 10, "server_ms": 1, "game_id": "abcdefghijkl", "game_seq": 12,
     "events": [{"game_seq": 11, "t": 1500, "event": {"type": "drew", "seat": 0, "count": 2,
                                                       "cards": ["AS", "2H"], "turn": None}},
                {"game_seq": 12, "t": 1510.5, "event": {"type": "disconnected", "seat": 1,
                                                          "paused": False}}],
     "view": {"game": "onecard", "seat": 0, "hand": ["AS", "2H"], "hand_counts": [2, 5],
              "seats": [{"seat": 0, "kind": "human", "bot": False}], "turn": 1,
              "deadline": None, "winners": [], "pile": {"top": "7S", "n": 12}},
     "deadline": {"seat": 1, "server_ms": 1764460830123, "remaining_ms": 30000, "t": 31200}},
]


@pytest.mark.parametrize("frame", SERVER_FRAMES, ids=lambda f: f["type"])
def test_server_frames_are_the_same_in_json_and_protobuf(frame: dict) -> None:
    back = codec.decode_server_proto(codec.encode_proto(frame))
    assert back == orjson.loads(codec.encode_json(frame))


def _views() -> list[dict]:
    """Real views of the three games, every seat's and a spectator's."""
    from ttanjit.games.base import SeatSpec, Setup
    from ttanjit.games.hakka import Hakka
    from ttanjit.games.onecard import OneCard
    from ttanjit.games.penalty_rows import PenaltyRows

    out = []
    for cls, game, n in ((OneCard, "onecard", 4), (PenaltyRows, "penalty_rows", 10),
                         (Hakka, "hakka", 4)):
        e = cls(Setup(game, {"seats": n}, [SeatSpec("human")] * n, 7))
        out.extend(e.view(seat) for seat in (*range(n), None))
    return out


@pytest.mark.parametrize("frame", [*SERVER_FRAMES,
                                   *({"type": "update", "seq": 3, "game_id": "g", "game_seq": 1,
                                      "events": [{"game_seq": 1, "t": 0,
                                                  "event": {"type": "x", "v": v}}], "view": v}
                                     for v in _views())])
def test_protobuf_encoding_is_parsedicts_exactly(frame: dict) -> None:
    """The cheaper encoder (Struct fields filled by the runtime) writes the
    very bytes ``json_format.ParseDict`` does."""
    from google.protobuf import json_format

    from ttanjit.v1.client_pb2 import ServerFrame

    ref = json_format.ParseDict(frame, ServerFrame()).SerializeToString()
    assert codec.encode_proto(frame) == ref


def test_protobuf_encoding_refuses_what_parsedict_refuses() -> None:
    from google.protobuf import json_format

    for bad in ({"type": "x", "seq": -1}, {"type": "x", "nope": 1},
                {"type": "update", "events": [{"game_seq": "a", "event": {}}]},
                {"type": "update", "events": [{"bogus": 1, "event": {}}]}):
        with pytest.raises(json_format.ParseError):
            codec.encode_proto(bad)


def test_client_frames_both_ways() -> None:
    frame = {"type": "action", "game_id": "abcdefghijkl", "cmd_id": "c1", "seat": 0,
             "action": {"type": "select", "card": 58, "row": 2}}
    assert codec.decode_proto(codec.encode_client_proto(frame)) == frame
    assert codec.decode_json(orjson.dumps(frame)) == frame
    hello = {"type": "hello", "token": "x.y", "resume": {"session": "s_1", "last_seq": 57}}
    assert codec.decode_proto(codec.encode_client_proto(hello)) == hello
    assert codec.decode_json(orjson.dumps({"type": "ping", "client_ms": None})) == {"type": "ping"}


def test_an_over_long_token_is_the_token_checks_to_refuse() -> None:
    """docs/websocket.md 2: a token over 512 characters gets bad_token, not
    bad_frame (other strings keep the 512 cap)."""
    hello = {"type": "hello", "token": "a" * 600 + "." + "b" * 30}
    assert codec.decode_json(orjson.dumps(hello)) == hello
    assert codec.decode_proto(codec.encode_client_proto(hello)) == hello
    with pytest.raises(FrameError) as exc:
        Tokens("s" * 32).verify(hello["token"], 0)
    assert exc.value.code == "bad_token"
    with pytest.raises(FrameError) as exc:
        codec.decode_json(orjson.dumps({"type": "room_join", "code": "A" * 513}))
    assert exc.value.code == "bad_frame"
    with pytest.raises(ValueError):
        Tokens("")  # no built-in secret (docs/protocol.md 6)


@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_decoders_fail_only_with_frame_errors(data: bytes) -> None:
    for decode in (codec.decode_json, codec.decode_proto):
        try:
            out = decode(data)
        except FrameError as e:
            assert e.code == "bad_frame"
        else:
            assert isinstance(out["type"], str) and out["type"]


def test_token_bucket() -> None:
    b = TokenBucket(rate=20, burst=40, tokens=40, last=0.0)
    assert sum(b.allow(0.0) for _ in range(100)) == 40
    assert b.allow(0.05) and not b.allow(0.05)
    assert b.should_warn(0.05) and not b.should_warn(0.5) and b.should_warn(1.06)
