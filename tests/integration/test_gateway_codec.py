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


# -- every frame kind the gateway sends, from the code that builds it ------------

NOW = 1_764_460_800_123


class _Wire:
    """A transport that keeps the JSON frames a :class:`Connection` writes."""

    def __init__(self) -> None:
        self.sent: list[dict] = []

    async def send_text(self, data: str) -> None:
        self.sent.append(orjson.loads(data))

    async def send_bytes(self, data: bytes) -> None:
        raise AssertionError("a JSON connection")

    async def close(self, code: int, reason: str) -> None:
        pass


class _Shard:
    """The only gateway call delivering parts makes: a ``reconnect`` when
    the seat was marked away (conn.Connection._noticed)."""

    async def command(self, *args: object, **kw: object) -> dict:
        return {"ok": True}


async def _delivered(gid: str, pid: str, seat: int | None, parts: list[tuple],
                     replies: list[bytes]) -> list[dict]:
    """What a real (JSON) :class:`Connection` sends for shard sync answers
    (``deliver_catch_up``: ``view``/``update`` replayed) and burst parts
    (``deliver_part``: ``update`` with ``view`` or ``patch``)."""
    from ttanjit.gateway.conn import Connection
    from ttanjit.gateway.session import Session

    out: list[dict] = []
    for raw in [None, *replies]:  # the parts on one connection, each answer on one of its own
        wire = _Wire()
        c = Connection(_Shard(), wire, False)  # type: ignore[arg-type]
        c.session = Session("s_1", pid, "가")
        c.session.new_game(gid, seat)
        if raw is None:
            for part in parts:
                await c.deliver_part(*part)
        else:
            await c.deliver_catch_up(orjson.loads(raw))
        out.extend(wire.sent)
    return out


def _played(game: str, n: int, seed: int) -> tuple[object, list[object]]:
    """A hosted game (the shard's core) played to its end by random legal
    moves and the clock; every :class:`Applied`."""
    import random

    from ttanjit.games.base import SeatSpec, Setup
    from ttanjit.shard.game import Applied, HostedGame

    players = {f"p_{i}": i for i in range(n)}
    h = HostedGame("g" * 12, Setup(game, {"seats": n}, [SeatSpec("human")] * n, seed),
                   players, origin_ms=NOW, backlog=64)
    rng = random.Random(seed)
    applied: list[object] = []
    t = 0
    for k in range(5000):
        if h.finished:
            break
        t += rng.randint(100, 3000)
        nd = h.engine.next_deadline()
        if nd is not None and nd <= t:
            out = h.apply(nd, server_ms=NOW + nd)
            t = nd
        elif k == 3:  # a player drops and comes back: presence events
            out = h.apply(t, 1, {"type": "disconnect"}, player="p_1", cmd_id="gw-1",
                          server_ms=NOW + t)
            assert isinstance(out, Applied)
            applied.append(out)
            out = h.apply(t, 1, {"type": "reconnect"}, player="p_1", cmd_id="gw-2",
                          server_ms=NOW + t)
        else:
            choices = [(p, s, a) for p, s in players.items() for a in h.engine.legal_actions(s)]
            if not choices:
                continue
            p, s, a = rng.choice(choices)
            out = h.apply(t, s, a, player=p, cmd_id=f"c{k}", server_ms=NOW + t)
        assert isinstance(out, Applied), out
        applied.append(out)
    assert h.finished
    return h, applied


def _game_frames(game: str, n: int, seed: int) -> list[dict]:
    """Every game frame kind of one whole game, as the gateway builds them
    from the shard's real output: ``update`` (events and ``view``, or a
    ``patch``), ``view`` (resync, with ``recent``), ``update`` replayed,
    ``result``, ``spectate_view``, ``spectate_update``, ``game_result``,
    ``rematch``."""
    import asyncio

    from ttanjit.gateway import finals
    from ttanjit.gateway.conn import _deadline
    from ttanjit.matchmaker.rematch import Rematch
    from ttanjit.shard.game import part_body

    h, applied = _played(game, n, seed)
    gid = h.game_id  # type: ignore[attr-defined]
    frames: list[dict] = []
    parts: dict[str, list[tuple]] = {}
    for i, out in enumerate(applied):
        for p in out.parts:  # type: ignore[attr-defined]
            body = part_body(gid, p)
            if p.pid is None:  # the spectators' part: spectate.h_spectate's on_msg
                part = orjson.loads(b"{" + body + b"}")
                part["type"] = "spectate_update"
                if part.get("deadline"):
                    part["deadline"] = _deadline(part["deadline"])
                frames.append({**part, "seq": i + 1, "server_ms": NOW + i})
            else:
                parts.setdefault(p.pid, []).append((gid, p.first, p.last, p.flags, body))
        reply = out.reply  # type: ignore[attr-defined]
        if reply is not None:  # conn.h_action's result frame
            rep = orjson.loads(reply)
            frame = {"type": "result", "cmd_id": rep["cmd_id"], "game_id": gid,
                     "game_seq": rep["seq"], "seq": i + 1, "server_ms": NOW + i}
            if rep.get("info"):
                frame["info"] = rep["info"]
            frames.append(frame)
    for pid, seat in h.players.items():  # type: ignore[attr-defined]
        last = h.backlogs[pid].seq  # type: ignore[attr-defined]
        syncs = [h.sync(pid, max(0, last - 5), NOW), h.sync(pid, -1, NOW, recent=30),  # type: ignore[attr-defined]
                 h.sync(pid, last, NOW)]  # type: ignore[attr-defined]
        frames.extend(asyncio.run(_delivered(gid, pid, seat, parts.get(pid, []), syncs)))
    spectator = orjson.loads(h.sync(None, -1, NOW))  # type: ignore[attr-defined]
    entry = orjson.loads(orjson.dumps(h.directory_entry()))  # type: ignore[attr-defined]
    nicknames = {pid: f"닉{seat}" for pid, seat in h.players.items()}  # type: ignore[attr-defined]
    players = [{k: v for k, v in p.items() if k != "player"}
               for p in finals.seat_players(entry, nicknames)]
    frames.append({"type": "spectate_view", "seq": 1, "server_ms": NOW, "game_id": gid,
                   "game_seq": spectator["seq"], "view": spectator["view"],
                   "players": players})
    final = finals.frame_of(gid, "p_0", entry, nicknames)
    assert final is not None
    frames.append({**final, "seq": 1, "server_ms": NOW})
    offer = Rematch.from_game(gid, h.header(), entry, NOW)  # type: ignore[attr-defined]
    offer.answer("p_0", "닉0", True)
    offer.answer("p_1", "닉1", False)
    frames.append({**offer.frame(), "seq": 2, "server_ms": NOW})
    offer.new_game_id = "h" * 12
    frames.append({**offer.frame("started"), "seq": 3, "server_ms": NOW})
    return frames


def _lobby_frames() -> list[dict]:
    """The other frames, from the code that builds them: welcome (a room as
    the matchmaker's ``GetPlayer`` answer carries it, ratings, a queue),
    pong, error, queued, queue_cancelled, room, room_left, matched, ratings
    with a change, emote, spectators, spectate_stopped."""
    from google.protobuf import json_format

    from ttanjit.gateway.limits import limits_json
    from ttanjit.matchmaker import standings
    from ttanjit.matchmaker.rooms import Room, Seat
    from ttanjit.matchmaker.service import _pb_room

    room = Room("ABCDEF", "penalty_rows", 5, {"select_ms": 20000, "end": "rounds", "rounds": 3},
                "p_1", [Seat("human", "p_1", "가"), Seat("bot", level="hard"), None,
                        Seat("human", "p_2", "나"), None], ratings={"p_1": 1.5})
    state = json_format.MessageToDict(  # app.Gateway.player_state
        _pb_room(room), preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True)
    ratings = [standings.decorate({"game": g, "mu": 25.0, "sigma": 8.333, "ordinal": 0.001 * i,
                                   "games": i}) for i, g in enumerate(
                                       ("onecard", "penalty_rows", "hakka"))]
    players = [{"seat": 0, "kind": "human", "player": "p_1", "nickname": "가", "rating": 0.0,
                "display": standings.display(0.0)}, {"seat": 1, "kind": "bot", "level": "easy"}]
    base = {"seq": 1, "server_ms": NOW}
    return [
        {**base, "type": "welcome", "session": "s_1", "player": "p_1", "nickname": "가",
         "resumed": False, "limits": limits_json(60_000, 10_000), "ratings": ratings, "game_id": "g" * 12,
         "seat": 0, "finished": True, "game": "penalty_rows", "kind": "room",
         "players": players, "options": room.options,
         "room": codec.whole_numbers(state), "queued": {"game": "onecard", "seats": 4}},
        {**base, "type": "welcome", "session": "s_1", "player": "p_1", "nickname": "가",
         "resumed": True, "resume_result": "gapless", "limits": limits_json(60_000, 10_000), "ratings": []},
        {**base, "type": "pong", "client_ms": 12.5},
        {"seq": 0, "server_ms": NOW, "type": "error", "code": "unauthenticated",
         "message": "로그인 정보가 없어요. 먼저 시작해 주세요.", "ref": "ping"},
        {**base, "type": "error", "code": "not_your_turn", "message": "x", "ref": "action",
         "cmd_id": "c1"},
        {**base, "type": "queued", "game": "hakka", "seats": 4, "ticket": "t_1"},
        {**base, "type": "queue_cancelled", "game": "hakka"},
        {**base, "type": "room", "room": room.to_json()},
        {**base, "type": "room_left", "code": "ABCDEF"},
        {**base, "type": "matched", "game_id": "g" * 12, "game": "onecard", "seat": 0,
         "kind": "quick", "players": players, "options": {"turn_ms": 30000}},
        {**base, "type": "ratings", "ratings": ratings},
        {**base, "type": "ratings", "ratings": ratings, "change": standings.change(
            "g" * 12, "penalty_rows", "win", 0.0, 3.1, 1)},
        {**base, "type": "emote", "game_id": "g" * 12, "seat": 0, "emote": "thumbs"},
        {**base, "type": "spectators", "game_id": "g" * 12, "count": 0},
        {**base, "type": "spectators", "game_id": "g" * 12, "count": 3},
        {**base, "type": "spectate_stopped"},
    ]


ALL_GAMES = (("onecard", 4, 11), ("penalty_rows", 5, 12), ("hakka", 4, 13))


@pytest.fixture(scope="module")
def every_frame() -> list[dict]:
    out = _lobby_frames()
    for game, n, seed in ALL_GAMES:
        out.extend({**f, "_game": game} for f in _game_frames(game, n, seed))
    return out


def test_every_frame_kind_the_gateway_sends_is_covered(every_frame: list[dict]) -> None:
    kinds = {f["type"] for f in every_frame}
    assert kinds == {"welcome", "pong", "error", "queued", "queue_cancelled", "room",
                     "room_left", "matched", "ratings", "emote", "spectators",
                     "spectate_stopped", "update", "view", "result", "spectate_view",
                     "spectate_update", "game_result", "rematch"}
    for game, _, _ in ALL_GAMES:
        mine = [f for f in every_frame if f.get("_game") == game]
        assert {f["type"] for f in mine} >= {"update", "view", "result", "spectate_view",
                                             "spectate_update", "game_result", "rematch"}
        assert any(f["type"] == "view" and f.get("recent") for f in mine), game
        assert any(f["type"] == "update" and f.get("replayed") for f in mine), game
    assert any(f["type"] == "update" and "patch" in f for f in every_frame
               if f.get("_game") == "penalty_rows")  # a 줄줄이 벌점 selection


def test_every_frame_the_gateway_sends_is_the_same_in_protobuf(every_frame: list[dict]) -> None:
    """Each frame (real views, patches, events, lobby frames of all three
    games) through ``encode_proto`` and back is the JSON frame, and its bytes
    are ``ParseDict``'s; no ``ParseError`` (an unknown field) anywhere."""
    from google.protobuf import json_format

    from ttanjit.v1.client_pb2 import ServerFrame

    for f in every_frame:
        frame = {k: v for k, v in f.items() if k != "_game"}
        data = codec.encode_proto(frame)
        want = orjson.loads(codec.encode_json(frame))
        assert codec.decode_server_proto(data) == want, frame
        assert data == json_format.ParseDict(frame, ServerFrame()).SerializeToString()
