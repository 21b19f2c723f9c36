"""RULES.md 4 (abandonment) on a real stack (issue 12, item 2): a room game
whose humans all close their sockets for good ends ``abandoned`` when the
(shortened) abandonment time has passed although its clocks are paused; the
shard frees it (directory ``finished``, owner entry gone, not live, counted
in ``ttanjit_shard_games_abandoned_total``); the result on
``TTANJIT_RESULTS`` says ``abandoned`` with no winner and rates nobody; a
player who comes back gets the final result — from the shard while it
still answers sync, and from the game directory after the shard let the
game go (docs/websocket.md 4)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import nats
import orjson
import pytest
from conftest import Services
from shardkit import metric, metrics_text
from wsclient import WSClient, sign_in, two_in_a_room

from ttanjit.common.nats import GAMES_BUCKET, OWNERS_BUCKET, RESULTS_STREAM

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

ABANDON_MS = 2000
SECRET = "test-secret"


async def directory(js: Any, gid: str) -> dict[str, Any] | None:
    kv = await js.key_value(GAMES_BUCKET)
    try:
        entry = await kv.get(gid)
    except Exception:  # noqa: BLE001 - not there (yet)
        return None
    doc: dict[str, Any] = orjson.loads(entry.value or b"{}")
    return doc


async def test_abandoned_game_ends_is_freed_and_returning_players_see_it(
        svc: Services) -> None:
    shard = svc.start("shard", name="shard-a", env={"TTANJIT_ABANDON_MS": str(ABANDON_MS)})
    mm = svc.start("matchmaker", name="matchmaker", env={"TTANJIT_TEST_OPTIONS": "1"})
    gw = svc.start("gateway", name="gateway", env={
        "TTANJIT_MATCHMAKER_ADDR": f"127.0.0.1:{mm.ports['grpc']}",
        "TTANJIT_TOKEN_SECRET": SECRET})
    http = f"http://127.0.0.1:{gw.ports['http']}"
    nc = await nats.connect(svc.nats_url)
    js = nc.jetstream()

    host = await WSClient.signed_in(http, "방장")
    guest = await WSClient.signed_in(http, "손님")
    await two_in_a_room(host, guest)
    await host.send({"type": "room_start"})
    matched = await host.wait_type("matched", 20)
    gid = matched["game_id"]
    seats = {host.ident["player"]: matched["seat"],
             guest.ident["player"]: (await guest.wait_type("matched", 20))["seat"]}
    for c in (host, guest):
        await c.wait_type("view")
    assert (await directory(js, gid) or {}).get("state") == "live"

    # both close their sockets for good: the gateway tells the shard
    # ``disconnect``; every human is away, the clocks pause ...
    for c in (host, guest):
        await c.close()
    # ... and the abandonment time later the game ends anyway
    deadline = time.monotonic() + 30
    while (await directory(js, gid) or {}).get("state") != "finished":
        assert time.monotonic() < deadline, "the abandoned game never finished"
        await asyncio.sleep(0.2)
    entry = await directory(js, gid)
    assert entry is not None and entry["result"]["ended_by"] == "abandoned"
    assert entry["result"]["winners"] == []

    # the result for ratings: abandoned, no winner
    msg = await js.get_last_msg(RESULTS_STREAM, "ttanjit.v1.result.onecard")
    result = orjson.loads(msg.data)
    assert result["game_id"] == gid and result["ended_by"] == "abandoned"
    assert result["winners"] == [] and result["result"]["ended_by"] == "abandoned"
    # One Card's standing rides along: the ratings place losers by cards left
    assert len(result["hand_counts"]) == len(result["seats"]) and result["eliminated"] == []

    # freed: no owner, not live, counted
    owners = await js.key_value(OWNERS_BUCKET)
    with pytest.raises(Exception):  # noqa: B017 - nats' KeyNotFoundError / KeyDeletedError
        await owners.get(gid)
    text = metrics_text(shard.ports["metrics"])
    assert metric(text, 'ttanjit_shard_games_abandoned_total{game="onecard"}') == 1.0
    assert metric(text, 'ttanjit_shard_games_live{game="onecard"}') == 0.0

    # back within the shard's 30 s: the events the client missed, the last
    # one the game's end
    back = WSClient(http, host.ident)
    await back.connect()
    welcome = await back.hello({"session": host.session, "last_seq": host.last_seq})
    assert welcome["resumed"] and welcome["game_id"] == gid
    over = await back.wait_event(lambda e: e["type"] in ("game_over", "game_ended"))
    assert over["event"]["ended_by"] == "abandoned" and over["event"]["winner"] is None
    onecard = [r for r in welcome["ratings"] if r["game"] == "onecard"]
    assert all(r["games"] == 0 for r in onecard)  # unrated
    await back.close()

    # later: the shard has let the game go (here: gone altogether); the
    # game directory still tells the player how the game ended
    shard.kill()
    # what a hello takes here without a game (a loaded machine's can be seconds)
    plain = WSClient(http, sign_in(http, "보통"))
    await plain.connect()
    t0 = time.monotonic()
    await plain.hello()
    usual = time.monotonic() - t0
    await plain.close()
    late = WSClient(http, guest.ident)
    await late.connect()
    t0 = time.monotonic()
    welcome = await late.hello()
    # the directory says finished: no 4.5 s of retries for a shard to take
    # over a game that is not coming back (the new-user trial's "연결 중…")
    assert time.monotonic() - t0 < usual + 2.0, (time.monotonic() - t0, usual)
    assert "game_id" not in welcome
    final = await late.wait_type("game_result", 20)
    assert final["game_id"] == gid and final["game"] == "onecard"
    assert final["seat"] == seats[guest.ident["player"]]
    assert final["info"]["ended_by"] == "abandoned" and final["info"]["winners"] == []
    # and who sat where, by nickname, for a tab that never saw `matched`
    assert {p["seat"]: p.get("nickname") for p in final["players"]} == {
        seats[host.ident["player"]]: "방장", seats[guest.ident["player"]]: "손님"}
    await late.close()
    await nc.close()
