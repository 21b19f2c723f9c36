"""A move in flight when its game's owner lost the game (docs/protocol.md
1): the shard answers ``game_unavailable`` ("retry, the next owner
answers"), and the gateway now does retry, with the same ``cmd_id``,
within its 5 s; the player gets the move's true answer instead of
"게임 서버에 잠시 연결할 수 없어요". Real processes on a nats-server of the
test's own (its records stream is made to refuse appends for a moment)."""

from __future__ import annotations

import asyncio

import nats
import pytest
from conftest import Services
from shardkit import RecordTail, records_refused, until
from stack import Stack
from wsclient import WSClient, two_in_a_room

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


async def test_a_move_the_owner_lost_in_flight_is_answered_by_the_game_taken_back(
        svc: Services) -> None:
    st = Stack(svc).start(shards=1, gateways=1, bots=False)
    host = await WSClient.signed_in(st.http(), "놓친수")
    guest = await WSClient.signed_in(st.http(), "같이둠")
    await two_in_a_room(host, guest, "penalty_rows")
    await host.send({"type": "room_start"})
    gid = (await host.wait_type("matched", 20))["game_id"]
    view = (await host.wait_for(lambda f: f.get("type") == "view"
                                and f.get("game_id") == gid))["view"]
    first, second = [h["card"] for h in view["hand"]][:2]
    assert (await host.action(gid, {"type": "select", "card": first, "row": 1}))["type"] == "result"
    nc = await nats.connect(svc.nats_url)
    try:
        async with records_refused(nc):  # the shard's append fails: it drops the game
            move = asyncio.create_task(
                host.action(gid, {"type": "select", "card": second, "row": 2}))
            # until its append was refused (a fixed second let a loaded
            # machine's move reach the shard after the refusals ended)
            await until(lambda: '"why":"append failed"' in st.shards[0].log(), 15,
                        "the move's refused append")
        res = await move  # ... takes it back from its record, and answers
        assert res["type"] == "result", res
        shard = st.shards[0].log()
        assert '"why":"append failed"' in shard and "claimed game" in shard, shard[-3000:]
        # the move stands, written once: the record holds both selections
        tail = await RecordTail(nc, gid).start()
        await tail.caught_up()
        picked = [e["action"]["card"] for e in tail.entries
                  if e.get("action", {}).get("type") == "select"]
        assert picked == [first, second], tail.entries
        await tail.stop()
    finally:
        await nc.close()
        for c in (host, guest):
            await c.close()
