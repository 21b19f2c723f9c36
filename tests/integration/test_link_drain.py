"""The shard link's end (docs/protocol.md 1.1) against a real stack: a
shard that drains closes its gateways' links with a bye, after everything
it held, so the gateway syncs no one (it would sync every player of the
shard's games); a shard frozen (SIGSTOP: its kernel still takes the bytes)
is found by its silence and its link dropped, a shard killed (no bye)
loses its link: both make the gateway sync its players there, and the game
goes on for them on the shard that claims it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import urllib.request
from collections.abc import Iterator

import nats
import orjson
import pytest
from stack import Stack, stack
from test_drain_cli import prestop_command
from test_gateway_games import play_some, view_of
from wsclient import WSClient

pytestmark = pytest.mark.integration


@pytest.fixture
def st(nats_url: str) -> Iterator[Stack]:
    with stack(nats_url, shards=3, gateways=1, bot_wait_ms=300) as s:
        yield s


def links_closed(st: Stack) -> dict[str, float]:
    with urllib.request.urlopen(f"{st.metrics()}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("ttanjit_gateway_shard_links_closed_total{"):
            out[line.split('how="')[1].split('"')[0]] = float(line.rsplit(" ", 1)[1])
    return out


async def owner_of(st: Stack, gid: str) -> str:
    nc = await nats.connect(st.services.nats_url)
    try:
        owners = await nc.jetstream().key_value("ttanjit_owners")
        return str(orjson.loads((await owners.get(gid)).value)["shard"])
    finally:
        await nc.close()


async def test_a_drain_says_bye_a_freeze_or_a_kill_makes_the_gateway_sync(st: Stack) -> None:
    c = await WSClient.signed_in(st.http(), "링크끝")
    # 줄줄이 벌점: a round is 10 turns (RULES.md 2.3), so the game outlasts the
    # test's 7 moves (a One Card game against a bot could end after 3: CI)
    await c.send({"type": "queue", "game": "penalty_rows", "seats": 3})
    gid = (await c.wait_type("matched", 20))["game_id"]
    # the first command finds the owner over NATS, the next go down its link
    assert await play_some(c, "penalty_rows", gid, 2) == 2
    owner = await owner_of(st, gid)
    first = next(p for p in st.shards if p.name == owner)
    before = links_closed(st)
    done = await asyncio.to_thread(subprocess.run, prestop_command(), env={**first.env},
                                   capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    await asyncio.to_thread(first.terminate, 20)
    for _ in range(50):
        if links_closed(st)["bye"] > before["bye"]:
            break
        await asyncio.sleep(0.1)
    after = links_closed(st)
    assert (after["bye"], after["lost"]) == (before["bye"] + 1, before["lost"])
    # the game goes on, on the shard it was handed to, over that one's link
    assert await play_some(c, "penalty_rows", gid, 2) == 2
    owner = await owner_of(st, gid)
    second = next(p for p in st.shards if p.name == owner)
    assert second is not first
    third = next(p for p in st.shards if p is not first and p is not second)
    # frozen: its kernel still takes the link's bytes, so only its silence
    # tells; the gateway drops the link (and syncs its players there)
    os.kill(second.proc.pid, signal.SIGSTOP)
    try:
        for _ in range(200):
            if links_closed(st)["dropped"] > after["dropped"]:
                break
            await asyncio.sleep(0.1)
        frozen = links_closed(st)
        assert frozen["dropped"] == after["dropped"] + 1, frozen
        assert (frozen["lost"], frozen["bye"]) == (after["lost"], after["bye"])
        # the third shard claims the game (the frozen one's lease ran out);
        # the first move finds it over NATS, the next goes down its link
        assert await play_some(c, "penalty_rows", gid, 2, limit_s=60) == 2
        assert await owner_of(st, gid) == third.name
    finally:
        os.kill(second.proc.pid, signal.SIGCONT)
    third.kill()  # no bye: the link is lost with whatever it held
    for _ in range(50):
        if links_closed(st)["lost"] > frozen["lost"]:
            break
        await asyncio.sleep(0.1)
    assert links_closed(st)["lost"] == frozen["lost"] + 1
    # the thawed shard claims the game (the third's lease ran out) and it goes on
    assert await play_some(c, "penalty_rows", gid, 1, limit_s=60) == 1
    assert await owner_of(st, gid) == second.name
    assert (await view_of(c, gid)).get("seat") is not None
    await c.close()


async def test_a_live_game_no_shard_serves_is_unavailable_to_a_spectator(nats_url: str) -> None:
    """docs/websocket.md 3.5: 관전 of a live game whose shard is gone (killed,
    nobody has claimed it yet) is ``game_unavailable`` — try again later —
    not ``unknown_game``, which says the game is not live (docs audit)."""
    with stack(nats_url, shards=1, gateways=1, bot_wait_ms=300) as one:
        c = await WSClient.signed_in(one.http(), "관전당함")
        await c.send({"type": "queue", "game": "penalty_rows", "seats": 3})
        gid = (await c.wait_type("matched", 20))["game_id"]
        fan = await WSClient.signed_in(one.http(), "관전자")
        await fan.send({"type": "spectate", "game_id": gid})
        assert (await fan.wait_for(lambda f: f.get("type") in ("spectate_view", "error")))["type"] \
            == "spectate_view"
        await fan.send({"type": "spectate_stop"})
        await fan.wait_type("spectate_stopped")
        one.shards[0].kill()
        await fan.send({"type": "spectate", "game_id": gid})
        got = await fan.wait_for(lambda f: f.get("type") in ("spectate_view", "error"), 20)
        assert (got["type"], got.get("code")) == ("error", "game_unavailable"), got
        await fan.send({"type": "spectate", "game_id": "g" + "0" * 25})
        got = await fan.wait_for(lambda f: f.get("type") == "error", 20)
        assert got["code"] == "unknown_game", got  # one the directory has not
        for x in (c, fan):
            await x.close()
