"""A replicated matchmaker (issue 12, docs/protocol.md 4.1) through real
gateways, real matchmaker processes and a real nats-server: kill -9 of the
leader with players queued and a room open loses no ticket and no room;
a frozen leader (SIGSTOP) is fenced and never takes the lobby back; a
follower's calls reach the leader."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from conftest import Proc
from stack import Stack, stack
from wsclient import WSClient

pytestmark = pytest.mark.integration


BOT_WAIT_MS = 12_000


@pytest.fixture
def st(nats_url: str, request: pytest.FixtureRequest) -> Iterator[Stack]:
    # bot backfill after 12 s: the queued players are still queued when the
    # leader dies, and are matched by the replica that takes over; the
    # queue, the kill, a take-over (~2–5 s loaded) and a cancel fit in it
    with stack(nats_url, shards=1, gateways=1, bot_wait_ms=BOT_WAIT_MS, matchmakers=2) as s:
        yield s
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            for p in s.services.procs:
                if p.svc in ("matchmaker", "gateway"):
                    print(f"\n===== {p.name} log =====\n{p.log()[-5000:]}")


def took_over_at(p: Proc) -> str:
    """The time stamp of the replica's last lobby take-over ("" if none)."""
    lines = [ln for ln in p.log().splitlines() if '"msg":"lobby taken over"' in ln]
    return orjson.loads(lines[-1])["ts"] if lines else ""


def leader(st: Stack, timeout: float = 10.0) -> Proc:
    """The live replica that took the lobby last."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        live = [(took_over_at(p), p) for p in st.matchmakers if p.alive()]
        live = [x for x in live if x[0]]
        if live:
            return max(live, key=lambda x: x[0])[1]
        time.sleep(0.1)
    raise AssertionError("no matchmaker leads")


async def test_kill_leader_keeps_tickets_and_rooms(st: Stack) -> None:
    http = st.http()
    a, b, c = [await WSClient.signed_in(http, n) for n in ("큐일", "큐이", "큐삼")]
    host, guest = [await WSClient.signed_in(http, n) for n in ("방장", "손님")]
    for q in (a, b, c):
        await q.send({"type": "queue", "game": "onecard", "seats": 4})
        await q.wait_type("queued")
    await host.send({"type": "room_create", "game": "penalty_rows", "seats": 4})
    code = (await host.wait_type("room"))["room"]["code"]
    await guest.send({"type": "room_join", "code": code})
    await guest.wait_type("room")
    await host.wait_type("room")  # the join, as the host sees it

    old = leader(st)
    old.kill()  # kill -9 with 3 tickets waiting and a room open
    t0 = time.monotonic()

    # a queued player may still leave the queue: the ticket is there
    await c.send({"type": "cancel_queue"})
    assert (await c.wait_type("queue_cancelled", 20))["game"] == "onecard"
    # the room kept its members, host and options: the host changes it
    await host.send({"type": "room_add_bot", "level": "easy"})
    room = (await host.wait_type("room", 20))["room"]
    took = time.monotonic() - t0
    assert room["code"] == code and room["host"] == host.ident["player"]
    kinds = [m["kind"] for m in room["members"]]
    assert kinds.count("human") == 2 and kinds.count("bot") == 1
    assert (await guest.wait_type("room"))["room"]["members"] == room["members"]
    assert took < 10, f"lobby calls waited {took:.1f} s for a new leader"

    # the passive queued players are matched by the new leader (bots fill in)
    ma = await a.wait_type("matched", 30)
    mb = await b.wait_type("matched", 30)
    assert ma["game_id"] == mb["game_id"]
    assert sorted(p["kind"] for p in ma["players"]) == ["bot", "bot", "human", "human"]
    assert not any(f.get("type") == "matched" for f in c.frames)

    # the room starts on the new leader; both members are seated
    await host.send({"type": "room_start"})
    m1 = await host.wait_type("matched", 20)
    m2 = await guest.wait_type("matched", 20)
    assert m1["game_id"] == m2["game_id"] and m1["kind"] == "room"

    # the killed replica comes back as a follower; the lobby stays with the leader
    st.matchmakers.append(st.services.start("matchmaker", name="matchmaker-back", env={
        "TTANJIT_BOT_WAIT_MS": str(BOT_WAIT_MS), "TTANJIT_TEST_OPTIONS": "1"}))
    await asyncio.sleep(1.5)
    assert '"msg":"lobby taken over"' not in st.matchmakers[-1].log()
    for cl in (a, b, c, host, guest):
        await cl.close()


async def test_frozen_leader_is_fenced_and_steps_down(st: Stack) -> None:
    http = st.http()
    host, guest = [await WSClient.signed_in(http, n) for n in ("얼음방장", "얼음손님")]
    await host.send({"type": "room_create", "game": "onecard", "seats": 3})
    code = (await host.wait_type("room"))["room"]["code"]

    old = leader(st)
    os.kill(old.pid, signal.SIGSTOP)  # frozen past its lease: the follower takes over
    try:
        await guest.send({"type": "room_join", "code": code})
        try:
            joined = (await guest.wait_type("room", 20))["room"]
        except TimeoutError:
            raise AssertionError(f"no room frame: {guest.frames}") from None
        assert [m["kind"] for m in joined["members"]].count("human") == 2
        new = leader(st)
        assert new is not old
    finally:
        os.kill(old.pid, signal.SIGCONT)
    # the thawed replica finds it was fenced and lets the lobby be
    end = time.monotonic() + 10
    while time.monotonic() < end and not ("leader lease lost" in old.log()
                                          or "no longer the lobby's leader" in old.log()):
        await asyncio.sleep(0.1)
    assert "no longer the lobby's leader" in old.log() or "leader lease lost" in old.log()
    await asyncio.sleep(1.0)
    assert leader(st) is new and '"msg":"lobby taken over"' not in \
        old.log().split("no longer the lobby's leader")[-1]
    # and the lobby is whole on the new leader
    await host.send({"type": "room_add_bot", "level": "normal"})
    room = (await host.wait_for(lambda f: f.get("type") == "room" and any(
        m["kind"] == "bot" for m in f["room"]["members"]), 20))["room"]
    assert [m["kind"] for m in room["members"]] == ["human", "human", "bot"]
    await host.send({"type": "room_start"})
    assert (await host.wait_type("matched", 20))["game_id"] == \
        (await guest.wait_type("matched", 20))["game_id"]
    for cl in (host, guest):
        await cl.close()


def metric_sum(metrics: str, prefix: str) -> float:
    """The sum of a gateway's series starting with ``prefix`` (its metrics URL)."""
    with urllib.request.urlopen(metrics + "/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(ln.split()[-1]) for ln in text.splitlines() if ln.startswith(prefix))


def retries(st: Stack) -> float:
    """The gateway's lobby-call attempts that went on to another replica."""
    return metric_sum(st.metrics(), "ttanjit_gateway_matchmaker_attempts_failed_total{")


async def test_a_frozen_follower_costs_the_gateway_one_attempt_not_one_a_call(st: Stack) -> None:
    """A follower frozen (SIGSTOP: it answers nothing, its connections stay
    up). The gateway sent the first attempt of every lobby call to it in
    turn (round robin), each waiting 2.5 s: two players met 8.4 s after
    빠른 대전 in a trial. Now at most one of eight calls in a row goes to it
    first; the others go to the replica that answered."""
    host = await WSClient.signed_in(st.http(), "얼음손님")
    follower = next(p for p in st.matchmakers if p is not leader(st))
    before = retries(st)
    os.kill(follower.pid, signal.SIGSTOP)
    try:
        for _ in range(4):
            await host.send({"type": "room_create", "game": "onecard", "seats": 2})
            code = (await host.wait_type("room", 15))["room"]["code"]
            await host.send({"type": "room_leave"})
            assert (await host.wait_type("room_left", 15))["code"] == code
        assert retries(st) - before <= 1
    finally:
        os.kill(follower.pid, signal.SIGCONT)
    await host.close()


AWAY_S = 8.0  # a room seat's wait (RULES.md 4's 60 s) on the st_away stack


@pytest.fixture(scope="module")
def st_away(nats_url: str) -> Iterator[Stack]:
    """One stack for both tests below (the second freezes whichever replica
    follows then: the first leaves the thawed old leader following)."""
    with stack(nats_url, shards=1, gateways=1, bot_wait_ms=60_000, matchmakers=2,
               room_away_ms=int(AWAY_S * 1000)) as s:
        yield s


def humans(f: dict[str, Any]) -> list[str]:
    return [m.get("player", "") for m in f["room"]["members"] if m["kind"] == "human"]


async def a_room_with_a_guest_gone(st: Stack, names: tuple[str, str]
                                   ) -> tuple[WSClient, dict[str, Any], str]:
    """A host and a guest in a 3-seat room, the guest's connection closed
    (the lobby marks them away); the host, the guest's identity, the code."""
    host, guest = [await WSClient.signed_in(st.http(), n) for n in names]
    await host.send({"type": "room_create", "game": "onecard", "seats": 3})
    code = (await host.wait_type("room"))["room"]["code"]
    await guest.send({"type": "room_join", "code": code})
    await host.wait_for(lambda f: f.get("type") == "room" and len(humans(f)) == 2)
    await guest.close()
    await asyncio.sleep(1.0)  # its gateway has told the lobby (the away mark is set)
    return host, guest.ident, code


async def test_a_hello_the_lobby_missed_is_asked_again(st_away: Stack) -> None:
    """Audit finding: a player back in their room's seat while the lobby
    changed leaders: ``hello``'s GetPlayer failed, so the away mark (their
    drop) stayed, and the new leader let them go when the seat's wait ran
    out, connected, without a word. The gateway asks again until the lobby
    answers (the player's "back"), and says the room then (``lobby``)."""
    st = st_away
    l1 = leader(st)
    pinned = st.add_gateway(TTANJIT_MATCHMAKER_ADDR=f"ipv4:127.0.0.1:{l1.ports['grpc']}")
    pinned.wait_log('"msg":"gateway ready"')
    host, ident, code = await a_room_with_a_guest_gone(st, ("돌아온방장", "돌아온손님"))
    gone_at, seen = time.monotonic(), len(host.frames)
    os.kill(l1.pid, signal.SIGSTOP)  # hello's GetPlayer goes unanswered; the follower takes over
    try:
        back = WSClient(f"http://127.0.0.1:{pinned.ports['http']}", ident)
        await back.connect()
        welcome = await back.hello()
    finally:
        os.kill(l1.pid, signal.SIGCONT)
    assert "lobby_known" not in welcome and "room" not in welcome
    lobby = await back.wait_type("lobby", 15)
    assert lobby["room"]["code"] == code and ident["player"] in humans(lobby)
    await asyncio.sleep(max(0.0, gone_at + AWAY_S + 2 - time.monotonic()))
    assert not [f for f in host.frames[seen:]
                if f["type"] == "room" and ident["player"] not in humans(f)]
    await back.send({"type": "room_leave"})  # still in it
    assert (await back.wait_for(lambda f: f["type"] in ("room_left", "error")))["type"] == "room_left"
    for cl in (host, back):
        await cl.close()


async def test_a_player_let_go_while_back_unnoticed_is_told(st_away: Stack) -> None:
    """When the lobby cannot hear the player is back (every replica their
    gateway reaches is frozen), the seat's wait runs out as if they were
    away; they were let go without a word (their room screen stayed: 시작
    "이미 시작한 방이에요."). Now they are told (``room_left`` ``away``)."""
    st = st_away
    follower = next(p for p in st.matchmakers if p is not leader(st))
    pinned = st.add_gateway(TTANJIT_MATCHMAKER_ADDR=f"ipv4:127.0.0.1:{follower.ports['grpc']}")
    pinned.wait_log('"msg":"gateway ready"')
    host, ident, code = await a_room_with_a_guest_gone(st, ("기다린방장", "모르는손님"))
    os.kill(follower.pid, signal.SIGSTOP)
    try:
        back = WSClient(f"http://127.0.0.1:{pinned.ports['http']}", ident)
        await back.connect()
        welcome = await back.hello()
        assert "lobby_known" not in welcome
        left = await back.wait_type("room_left", AWAY_S + 10)
    finally:
        os.kill(follower.pid, signal.SIGCONT)
    assert (left["code"], left["reason"], left["message"]) == (
        code, "away", "연결이 끊겨 있는 동안 방에서 나왔어요.")
    assert ident["player"] not in humans(await host.wait_for(
        lambda f: f["type"] == "room" and ident["player"] not in humans(f)))
    for cl in (host, back):
        await cl.close()


def open_sockets(gw: Proc) -> float:
    return metric_sum(f"http://127.0.0.1:{gw.ports['metrics']}", "ttanjit_gateway_connections ")


async def test_a_drop_the_lobby_missed_is_told_again(st_away: Stack) -> None:
    """Audit finding (left alone before): a connection that closed while
    the lobby changed leaders — its gateway's Away had one 2 s try — left
    the player in their room for good (and a queued ticket until matched).
    The gateway tells it again until the lobby answers; a player back
    meanwhile on another gateway stays (the late Away is older than their
    "back")."""
    st = st_away
    l1 = leader(st)
    pinned = st.add_gateway(TTANJIT_MATCHMAKER_ADDR=f"ipv4:127.0.0.1:{l1.ports['grpc']}")
    pinned.wait_log('"msg":"gateway ready"')
    at_pinned = f"http://127.0.0.1:{pinned.ports['http']}"
    host = await WSClient.signed_in(st.http(), "다시방장")
    gone, back = [await WSClient.signed_in(at_pinned, n) for n in ("떠난손님", "온손님")]
    await host.send({"type": "room_create", "game": "onecard", "seats": 3})
    code = (await host.wait_type("room"))["room"]["code"]
    for g in (gone, back):
        await g.send({"type": "room_join", "code": code})
        # its answer come, known by the lobby call behind it (a loaded
        # machine's stop could fall between the lobby's word to the room and
        # its answer to the pinned gateway: the join then held that socket's
        # end for its 10 s, CI)
        await g.send({"type": "ratings"})
        await g.wait_type("ratings")
    await host.wait_for(lambda f: f.get("type") == "room" and len(humans(f)) == 3)
    seen = len(host.frames)
    os.kill(l1.pid, signal.SIGSTOP)  # the pinned gateway's Aways go unanswered
    frozen = time.monotonic()
    try:
        for g in (gone, back):
            await g.close()
        # their ends under way there (the sockets gone, the Aways being
        # tried): a hello now no longer closes one as replaced, untold
        end = time.monotonic() + 10
        while open_sockets(pinned) and time.monotonic() < end:
            await asyncio.sleep(0.05)
        assert not open_sockets(pinned)
        again = WSClient(st.http(), back.ident)  # back at once, on the other gateway
        await again.connect()
        if "lobby_known" not in await again.hello():
            await again.wait_type("lobby", 15)  # the new leader heard them back
        await asyncio.sleep(max(0.0, 2.5 - (time.monotonic() - frozen)))  # (first tries over)
    finally:
        os.kill(l1.pid, signal.SIGCONT)  # fenced: it passes calls on to the new leader
        thawed = time.monotonic()
    # the drops' Aways, told again, reach the new leader only now (through
    # the thawed replica): one seat is let go when its wait (from the drop)
    # runs out; the player heard back since keeps theirs
    left = await host.wait_for(lambda f: f["type"] == "room" and gone.ident["player"]
                               not in humans(f), AWAY_S + 15)
    assert back.ident["player"] in humans(left)
    # the other Away came by thaw + about 4 s (its waits): had it been
    # taken, its seat's wait would have run out by now
    await asyncio.sleep(max(0.0, thawed + 4 + AWAY_S + 1 - time.monotonic()))
    assert not [f for f in host.frames[seen:]
                if f["type"] == "room" and back.ident["player"] not in humans(f)]
    await again.send({"type": "room_leave"})  # still in it, never let go
    left = await again.wait_for(lambda f: f["type"] in ("room_left", "error"))
    assert left["type"] == "room_left" and "reason" not in left, left
    for cl in (host, again):
        await cl.close()
