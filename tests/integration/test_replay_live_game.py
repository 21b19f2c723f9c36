"""``GET /api/replay/{game_id}`` on my own game while it is still in play
(docs/websocket.md 1.2), with real processes: the steps so far from my
seat, ``finished: false`` and no result (it answered 500 ``internal_error``:
One Card's engine has no result before the end); another seat's view is
409 ``game_not_finished`` and a stranger 403 ``not_your_game`` until the
end; then the bots play it out and the whole replay answers as before."""

from __future__ import annotations

import json
from typing import Any

import nats
import orjson
import pytest
from stack import Stack
from test_identity_history import call, solo_started, st  # noqa: F401 - st: a fixture
from wsclient import sign_in

from ttanjit.common.nats import Subjects
from ttanjit.games.base import RULES_REVISION
from ttanjit.games.record import record_from_json
from ttanjit.games.replay_views import seat_steps
from ttanjit.shard.export import fetch


def plain(doc: Any) -> Any:
    return json.loads(json.dumps(doc))


@pytest.mark.parametrize("game,seats", [("onecard", 3), ("penalty_rows", 2), ("hakka", 4)])
async def test_my_live_game_replays_so_far(st: Stack, nats_url: str, game: str,  # noqa: F811
                                           seats: int) -> None:
    c, gid = await solo_started(st, "아직하는중", game, seats)
    code, doc = call(st.http(1), f"/api/replay/{gid}", token=c.ident["token"])
    assert code == 200, doc  # was 500 internal_error (One Card)
    assert doc["game"] == game and doc["game_id"] == gid
    assert doc["finished"] is False and doc["result"] is None
    me = doc["my_seat"]
    assert doc["seat"] == me and doc["nicknames"][str(me)] == "아직하는중"
    assert doc["steps"][0]["i"] == -1 and doc["marks"][0] == 0
    # my seat's view only, as my table showed it: the record re-run up to
    # then (the game may have gone on since: the record only grows)
    rec = await fetch(nats_url, gid)
    assert rec is not None
    again = plain(seat_steps(record_from_json(rec), me))
    assert doc["steps"] == again["steps"][:len(doc["steps"])]
    for step in doc["steps"]:
        assert step["view"]["seat"] == me and not step["view"]["finished"]
        assert "hands" not in step["view"]
    # another seat's view, before the end: no; nor any seat for a stranger
    other = (me + 1) % seats
    code, err = call(st.http(0), f"/api/replay/{gid}?seat={other}", token=c.ident["token"])
    assert code == 409 and err["code"] == "game_not_finished", err  # (it said not_your_game)
    stranger = sign_in(st.http(0), "남의판")
    code, err = call(st.http(0), f"/api/replay/{gid}", token=stranger["token"])
    assert code == 403 and err["code"] == "not_your_game"
    # the bots play it out: then the result, and any seat
    await c.action(gid, {"type": "leave"})
    await c.wait_event(lambda e: e["type"] in ("game_over", "game_ended"), 120)
    code, done = call(st.http(0), f"/api/replay/{gid}", token=c.ident["token"])
    assert code == 200 and done["finished"] is True and done["result"] is not None
    assert done["steps"][:len(doc["steps"])] == doc["steps"]
    code, theirs = call(st.http(0), f"/api/replay/{gid}?seat={other}", token=c.ident["token"])
    assert code == 200 and theirs["steps"][0]["view"]["seat"] == other
    # a seat the game does not have is the request's fault (it said
    # no_record, 404: fuzz finding)
    code, err = call(st.http(0), f"/api/replay/{gid}?seat={seats}", token=c.ident["token"])
    assert (code, err["code"], err.get("field")) == (422, "bad_field", "seat"), err
    await c.close()


async def test_a_record_of_a_newer_release_is_no_record(st: Stack, nats_url: str) -> None:  # noqa: F811
    """A record this gateway cannot read — a newer rules revision, during a
    rolling upgrade — answers 404 no_record (it was a 500: review)."""
    me = sign_in(st.http(0), "새판기록")
    gid = "newer" + me["player"][-6:]
    header = {"format": "ttanjit.record/1", "game": "onecard", "options": {"seats": 2},
              "seats": [{"kind": "human"}, {"kind": "bot", "level": "normal"}], "seed": 1,
              "rules": RULES_REVISION + 1, "game_id": gid, "players": {me["player"]: 0}}
    nc = await nats.connect(nats_url)
    try:
        await nc.jetstream().publish(Subjects().record(gid), orjson.dumps(header))
    finally:
        await nc.close()
    code, err = call(st.http(0), f"/api/replay/{gid}", token=me["token"])
    assert (code, err["code"]) == (404, "no_record"), err


async def test_a_record_whose_header_aged_out_is_no_record(st: Stack, nats_url: str) -> None:  # noqa: F811
    """The records stream keeps each message 30 days (docs/protocol.md 5):
    a game's header goes before its last moves. What is left answers 404
    no_record, as a record gone whole does (it read a move as the header,
    found no players in it and said 403 not_your_game)."""
    me = sign_in(st.http(0), "지난판")
    gid = "aged" + me["player"][-6:]
    moves = [{"t": 100, "seat": 0, "action": {"type": "draw"}, "player": me["player"], "ms": 1},
             {"t": 900, "seat": 1, "action": {"type": "draw"}, "by": "bot", "ms": 2}]
    nc = await nats.connect(nats_url)
    try:
        for move in moves:
            await nc.jetstream().publish(Subjects().record(gid), orjson.dumps(move))
    finally:
        await nc.close()
    code, err = call(st.http(0), f"/api/replay/{gid}", token=me["token"])
    assert (code, err["code"]) == (404, "no_record"), err
