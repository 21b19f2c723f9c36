"""A protobuf client plays 줄줄이 벌점 against a real stack (docs/websocket.md
2, 3.5, 3.6): its own selection comes back as an ``update`` with a ``patch``
(no events), the table's spectator count as ``spectators`` frames, a
spectator on the binary subprotocol gets its frames too, and the gateway
logs no error for any of them (every frame it sends fits ``ServerFrame``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from stack import Stack, stack
from wsclient import WSClient

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def st(nats_url: str) -> Iterator[Stack]:
    with stack(nats_url, shards=1, gateways=1, bot_wait_ms=300) as s:
        yield s


def _patched(f: dict[str, Any]) -> bool:
    return f.get("type") == "update" and "patch" in f


async def test_a_protobuf_client_plays_penalty_rows(st: Stack) -> None:
    http = st.http()
    me = await WSClient.signed_in(http, "바이너리", proto=True)
    assert me.ws.subprotocol == "ttanjit.v1.proto"
    await me.send({"type": "room_create", "game": "penalty_rows", "seats": 3,
                   "options": {"select_ms": 45000}})
    await me.wait_type("room")
    for _ in range(2):
        await me.send({"type": "room_add_bot", "level": "easy"})
        await me.wait_for(lambda f: f.get("type") == "room" and f.get("seq", 0) > 0)
    await me.send({"type": "room_start"})
    matched = await me.wait_type("matched", 30)
    gid = matched["game_id"]
    view = (await me.wait_for(lambda f: f.get("type") == "view" and f["game_id"] == gid))["view"]
    assert view["phase"] == "select" and view["hand"]
    # the table's spectator count, to its players (none watch yet)
    first = await me.wait_for(lambda f: f.get("type") == "spectators")
    assert (first["game_id"], first["count"]) == (gid, 0)

    # a spectator, also on protobuf: its own frames, and the players' count
    watcher = await WSClient.signed_in(http, "구경꾼", proto=True)
    await watcher.send({"type": "spectate", "game_id": gid})
    sv = await watcher.wait_type("spectate_view")
    assert sv["game_id"] == gid and sv["view"]["seat"] is None
    # (the count goes round NATS: a first frame may still say 0)
    await watcher.wait_for(lambda f: f.get("type") == "spectators" and f["count"] == 1)
    await me.wait_for(lambda f: f.get("type") == "spectators" and f["count"] == 1)

    # my selection: an update with a patch of my own fields, no events, then its result
    hand = [c["card"] for c in view["hand"]]
    res = await me.action(gid, {"type": "select", "card": hand[0], "row": 2})
    assert res["type"] == "result", res
    patch = next(f for f in me.frames if _patched(f))
    assert patch["game_id"] == gid and patch["events"] == [] and "view" not in patch
    assert patch["patch"]["seat"] == view["seat"]
    assert patch["patch"]["selection"]["card"] == hand[0], patch["patch"]  # the card I chose
    res = await me.action(gid, {"type": "select", "card": hand[1], "row": 1})
    assert res["type"] == "result", res
    assert len([f for f in me.frames if _patched(f)]) == 2
    res = await me.action(gid, {"type": "confirm"})
    assert res["type"] == "result", res
    # the bots' selections and the reveal: updates with events and whole views
    reveal = await me.wait_for(lambda f: f.get("type") == "update" and f["game_id"] == gid
                               and f.get("events") and "view" in f, 30)
    assert reveal["view"]["seat"] == view["seat"]
    await watcher.wait_for(lambda f: f.get("type") == "spectate_update" and f.get("events"), 30)
    await watcher.send({"type": "spectate_stop"})
    await watcher.wait_type("spectate_stopped")
    await me.wait_for(lambda f: f.get("type") == "spectators" and f["count"] == 0)

    errors = [f for c in (me, watcher) for f in c.frames if f.get("type") == "error"]
    assert errors == []
    await me.close()
    await watcher.close()
    log = st.gateways[0].log()
    for bad in ("ParseError", "Traceback", "Task exception was never retrieved",
                "internal_error"):
        assert bad not in log, log[-4000:]
