"""A dropped connection's goodbye that reaches the shard after the resumed
connection's hello (RULES.md 4: a player who is here is never counted away).

The race, as seen in a browser test under load: the client drops, resumes at
once on a new connection (which sends `reconnect`), and the old connection's
`disconnect` lands after it — the game would then pause, waiting for a
player who is connected. Here the late goodbye is sent exactly as a gateway
sends it (a NATS command to the owner shard) while the player is connected;
the player's gateway sees its own seat marked away and says `reconnect`
again, so the game goes on."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator

import orjson
import pytest
from stack import Stack, stack
from wsclient import WSClient

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def st(nats_url: str) -> Iterator[Stack]:
    with stack(nats_url, shards=1, gateways=1, bot_wait_ms=300) as s:
        yield s


async def test_a_late_goodbye_does_not_leave_a_connected_player_away(st: Stack,
                                                                     nc: object) -> None:
    c = await WSClient.signed_in(st.http(), "늦은인사")
    await c.send({"type": "queue", "game": "penalty_rows", "seats": 2})
    matched = await c.wait_type("matched", 20)
    gid, seat = matched["game_id"], matched["seat"]
    await c.wait_for(lambda f: f.get("type") == "view" and f["game_id"] == gid)

    late = orjson.dumps({"player": c.ident["player"], "cmd_id": "gw-" + secrets.token_hex(6),
                         "action": {"type": "disconnect"}})
    rep = orjson.loads((await nc.request(f"ttanjit.v1.game.{gid}.cmd", late,  # type: ignore[attr-defined]
                                         timeout=5)).data)
    assert rep["ok"] is True  # the shard took the goodbye: the seat is away, the game paused

    gone = await c.wait_event(lambda e: e["type"] == "disconnected", game_id=gid)
    assert gone["event"]["seat"] == seat and gone["event"]["paused"] is True
    back = await c.wait_event(lambda e: e["type"] == "reconnected", 10, game_id=gid)
    assert back["event"]["seat"] == seat and back["event"]["paused"] is False

    # and the game plays on: the player's own move is taken
    await c.send({"type": "sync", "game_id": gid})
    view = (await c.wait_for(lambda f: f.get("type") == "view" and f["game_id"] == gid
                             and "hand" in f["view"]))["view"]
    assert view["seats"][seat]["connected"] is True and not view["paused"]
    card = view["hand"][0]["card"]  # 줄줄이 벌점's hand: {"card", "penalty"}
    reply = await c.action(gid, {"type": "select", "card": card, "row": 1})
    assert reply["type"] == "result", reply
    await asyncio.sleep(0)
    await c.close()
