"""Whole games through the gateway against a real stack (issue 6): quick
matches filled with bots for each game, a private room with options, a
client that drops mid-game and resumes on another gateway without missing an
event, and a player who does not come back replaced by a bot (RULES.md 4,
with the test-only ``absence_ms`` room option)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from stack import Stack, stack
from wsclient import WSClient, assert_gapless, flat, two_in_a_room

pytestmark = pytest.mark.integration

OVER = ("game_ended", "game_over")


@pytest.fixture(scope="module")
def st(nats_url: str) -> Iterator[Stack]:
    with stack(nats_url, shards=2, gateways=2, bot_wait_ms=300) as s:
        yield s


async def view_of(c: WSClient, gid: str, timeout: float = 15.0) -> dict[str, Any]:
    await c.send({"type": "sync", "game_id": gid})
    return (await c.wait_for(lambda f: f.get("type") == "view" and f["game_id"] == gid,
                             timeout))["view"]


def candidates(game: str, v: dict[str, Any]) -> list[dict[str, Any]]:
    """Moves worth trying for the seat of view ``v`` (the shard refuses the
    illegal ones; a refusal changes nothing)."""
    hand = v.get("hand") or []
    if game == "onecard":
        if v.get("pending"):
            return [{"type": "take"}]
        plain = [c for c in hand if c[:-1] not in ("2", "A", "7") and c not in ("BJ", "CJ")]
        return [{"type": "play", "cards": [c]} for c in plain
                if c[:-1] == v["top"][:-1] or c[-1] == v["suit"]] + [{"type": "draw"}]
    if game == "penalty_rows":
        if v.get("phase") != "select" or v["confirmed"][v["seat"]]:
            return []
        return [{"type": "select", "card": hand[0]["card"], "row": 1}, {"type": "confirm"}]
    if v.get("phase") == "calling":
        return [{"type": "pass"}]
    if v.get("best") is None:  # leading
        return [{"type": "play", "cards": [c]} for c in hand]
    return [{"type": "discard", "cards": hand[:k]} for k in range(1, 6)]  # the lead's size


def my_turn(game: str, v: dict[str, Any]) -> bool:
    if v.get("finished"):
        return False
    if game == "penalty_rows":
        return v.get("phase") == "select" and not v["confirmed"][v["seat"]]
    return v.get("turn") == v["seat"]


async def play_some(c: WSClient, game: str, gid: str, moves: int, limit_s: float = 40) -> int:
    """Make ``moves`` accepted moves of our own (waiting for our turns)."""
    made = 0
    end = asyncio.get_running_loop().time() + limit_s
    while made < moves and asyncio.get_running_loop().time() < end:
        # a game between owners (its shard gone, the next one's claim after
        # the lease runs out) answers no view for a while: asked again, up
        # to the limit (a loaded CI took over 15 s after a kill)
        try:
            v = await view_of(c, gid, min(15.0, max(1.0, end - asyncio.get_running_loop().time())))
        except TimeoutError:
            continue
        if v.get("finished"):
            break
        if not my_turn(game, v):
            await asyncio.sleep(0.3)
            continue
        for action in candidates(game, v):
            res = await c.action(gid, action)
            if res["type"] == "result" and action["type"] != "select":
                made += 1
                break
            await asyncio.sleep(0.12)  # stay under the rate limit (20 frames/s)
    return made


async def quick_game_to_the_end(st: Stack, game: str, seats: int) -> None:
    c = await WSClient.signed_in(st.http(), f"{game[:4]}꾼")
    await c.send({"type": "queue", "game": game, "seats": seats})
    await c.wait_type("queued")
    matched = await c.wait_type("matched", 20)
    gid = matched["game_id"]
    assert matched["kind"] == "quick" and len(matched["players"]) == seats
    assert [p["kind"] for p in matched["players"]].count("bot") == seats - 1
    view = await c.wait_for(lambda f: f.get("type") == "view")
    assert view["game_id"] == gid and view["view"]["seat"] == matched["seat"]
    # (bots think 1-3 s each: under load a Hakka round of four can take a while)
    made = await play_some(c, game, gid, 2, limit_s=45)
    if made == 0:  # only Hakka's dreamer never gets a turn (RULES.md 3.2)
        assert game == "hakka" and (await view_of(c, gid))["dreamer"] == matched["seat"]
    # then leave: a bot takes the seat (RULES.md 4) and, no human left, the
    # game is played out at once; we still see every event to the end.
    assert (await c.action(gid, {"type": "leave"}))["type"] == "result"
    end = await c.wait_event(lambda e: e["type"] in OVER, 60)
    seqs = assert_gapless(c.frames, gid)
    assert end["game_seq"] == seqs[-1]
    ratings = await c.wait_type("ratings", 15)
    mine = next(r for r in ratings["ratings"] if r["game"] == game)
    assert mine["games"] == 1
    await c.close()


async def test_quick_match_onecard_to_the_end(st: Stack) -> None:
    """One Card quick match, bots fill the table after the wait."""
    await quick_game_to_the_end(st, "onecard", 3)


async def test_quick_match_penalty_rows_to_the_end(st: Stack) -> None:
    await quick_game_to_the_end(st, "penalty_rows", 4)


async def test_quick_match_hakka_to_the_end(st: Stack) -> None:
    await quick_game_to_the_end(st, "hakka", 4)


async def test_private_room_options_two_players_and_a_bot(st: Stack) -> None:
    host = await WSClient.signed_in(st.http(0), "방장")
    guest = await WSClient.signed_in(st.http(1), "손님")  # another gateway
    await host.send({"type": "room_create", "game": "penalty_rows", "seats": 4,
                     "options": {"select_ms": 30000, "end": "rounds", "rounds": 1}})
    room = (await host.wait_type("room"))["room"]
    assert room["host"] == host.ident["player"] and len(room["code"]) == 6
    await host.send({"type": "room_options", "options": {"select_ms": 25000}})
    assert (await host.wait_type("error"))["code"] == "bad_option"
    await host.send({"type": "room_start"})
    assert (await host.wait_type("error"))["code"] == "need_two_players"
    await guest.send({"type": "room_join", "code": room["code"].lower()})
    joined = (await guest.wait_type("room"))["room"]
    assert [m["kind"] for m in joined["members"]] == ["human", "human", "empty", "empty"]
    # new players: the display rating they see everywhere (1,500; docs/websocket.md 3.4)
    assert [m["display"] for m in joined["members"][:2]] == [1500, 1500]
    await guest.send({"type": "room_add_bot", "level": "hard"})
    assert (await guest.wait_type("error"))["code"] == "not_host"
    await host.send({"type": "room_add_bot", "level": "easy"})
    await host.wait_for(lambda f: f.get("type") == "room"
                        and f["room"]["members"][2]["kind"] == "bot")
    await host.send({"type": "room_options", "options": {"end": "score_66"}})
    r = await guest.wait_for(lambda f: f.get("type") == "room"
                             and f["room"]["options"]["end"] == "score_66")
    assert r["room"]["options"]["select_ms"] == 30000
    # a new tab of the guest (it replaces the old one) finds the room in
    # its welcome as the `room` frames show it (the welcome once gave a
    # bot's and an empty seat's player, nickname and level as "": the
    # matchmaker's message printed whole)
    guest = WSClient(guest.http, guest.ident)
    await guest.connect()
    welcome = await guest.hello()
    assert welcome["room"] == r["room"], (welcome["room"], r["room"])
    await host.send({"type": "room_start"})
    m1 = await host.wait_type("matched", 20)
    m2 = await guest.wait_type("matched", 20)
    assert m1["game_id"] == m2["game_id"] and m1["kind"] == "room"
    assert m1["options"] == {"select_ms": 30000, "end": "score_66"}  # rounds go with "rounds"
    assert [p["kind"] for p in m1["players"]] == ["human", "human", "bot"]  # empty seat not dealt
    assert [p["display"] for p in m1["players"][:2]] == [1500, 1500]
    v = (await guest.wait_type("view"))["view"]
    assert v["select_ms"] == 30000 and v["badge"]["end"] == "score_66"
    for c in (host, guest):
        await c.action(m1["game_id"], {"type": "leave"})
        await c.close()


async def test_room_member_who_does_not_come_back_leaves_the_room(st: Stack) -> None:
    """A room seat waits for an absent member (60 s; 3 s in this stack), then
    the member leaves and the others see it; the host role passes on."""
    host = await WSClient.signed_in(st.http(), "사라진방장")
    other = await WSClient.signed_in(st.http(), "기다린이")
    await host.send({"type": "room_create", "game": "onecard", "seats": 3})
    code = (await host.wait_type("room"))["room"]["code"]
    await other.send({"type": "room_join", "code": code})
    await other.wait_type("room")
    host.ws.transport.abort()
    r = await other.wait_for(lambda f: f.get("type") == "room"
                             and f["room"]["host"] == other.ident["player"], 15)
    assert [m["kind"] for m in r["room"]["members"]] == ["empty", "human", "empty"]
    await other.send({"type": "room_leave"})
    await other.wait_type("room_left")
    await other.close()


async def test_host_role_passes_on(st: Stack) -> None:
    a = await WSClient.signed_in(st.http(), "가")
    b = await WSClient.signed_in(st.http(), "나")
    await a.send({"type": "room_create", "game": "onecard", "seats": 3,
                  "options": {"turn_ms": 45000}})
    code = (await a.wait_type("room"))["room"]["code"]
    await b.send({"type": "room_join", "code": code})
    await b.wait_type("room")
    await a.send({"type": "room_leave"})
    assert (await a.wait_type("room_left"))["code"] == code
    r = await b.wait_for(lambda f: f.get("type") == "room"
                         and f["room"]["host"] == b.ident["player"])
    assert r["room"]["options"]["turn_ms"] == 45000
    await b.send({"type": "room_leave"})
    await b.wait_type("room_left")
    for c in (a, b):
        await c.close()


async def test_other_seat_and_reserved_actions_change_nothing(st: Stack) -> None:
    # two players in a room: no bot moves between the two views (a quick
    # match's bot, first to move half the time, did on a loaded machine)
    c = await WSClient.signed_in(st.http(), "남의자리")
    other = await WSClient.signed_in(st.http(), "옆자리")
    await two_in_a_room(c, other)
    await c.send({"type": "room_start"})
    matched = await c.wait_type("matched", 20)
    await other.wait_type("matched", 20)
    gid, seat = matched["game_id"], matched["seat"]
    before = await view_of(c, gid)
    for extra, action, code in (
        ({"seat": 1 - seat}, {"type": "draw"}, "not_your_seat"),
        ({}, {"type": "disconnect"}, "reserved_action"),
        ({"game_id": "zzzzzzzzzzzz"}, {"type": "draw"}, "not_in_game"),
        ({}, {"type": "fly"}, None),
    ):
        frame = {"type": "action", "game_id": gid, "cmd_id": f"x{code}", "action": action,
                 **extra}
        await c.send(frame)
        err = await c.wait_for(lambda f, cid=frame["cmd_id"]: f.get("cmd_id") == cid)
        assert err["type"] == "error" and (code is None or err["code"] == code), err
    after = await view_of(c, gid)
    assert after["hand"] == before["hand"] and after["hand_counts"] == before["hand_counts"]
    await c.action(gid, {"type": "leave"})
    for p in (c, other):
        await p.close()


async def test_drop_and_resume_on_another_gateway_without_a_gap(st: Stack) -> None:
    """RULES.md 4: back within 60 s, the player continues; no event is lost."""
    a = await WSClient.signed_in(st.http(0), "끊김")
    await a.send({"type": "queue", "game": "penalty_rows", "seats": 3})
    gid = (await a.wait_type("matched", 20))["game_id"]
    await a.wait_type("view")
    await play_some(a, "penalty_rows", gid, 1)
    await asyncio.sleep(0.5)
    while True:  # take whatever is in flight, then drop the socket
        try:
            await a.recv(0.3)
        except TimeoutError:
            break
    # the network went away, and with it the last frames in flight: the
    # client processed everything up to just before its last event
    last_update = [f for f in a.frames if f.get("type") == "update" and f["events"]][-1]
    last_event = flat(last_update)[0]  # the first event of the lost frame
    last_seq = last_update["seq"] - 1
    a.ws.transport.abort()  # no close handshake
    await asyncio.sleep(2.5)  # the bots confirm meanwhile; "disconnected" is an event too
    b = WSClient(st.http(1), a.ident)
    await b.connect()
    welcome = await b.hello({"session": a.session, "last_seq": last_seq})
    assert welcome["resumed"] and welcome["resume_result"] == "gapless"
    assert welcome["seq"] == last_seq + 1 and welcome["game_id"] == gid
    await play_some(b, "penalty_rows", gid, 1)
    replayed = [f for f in b.events(gid) if f.get("replayed")]
    assert replayed and replayed[0]["game_seq"] == last_event["game_seq"]  # the lost one first
    assert any(f["event"]["type"] == "disconnected" for f in replayed)
    assert_gapless([f for f in a.frames if f.get("seq", 0) <= last_seq] + b.frames, gid)
    assert any(f["event"]["type"] == "reconnected" for f in b.events(gid))
    await b.action(gid, {"type": "leave"})
    await b.close()


async def test_player_who_does_not_come_back_is_replaced_by_a_bot(st: Stack) -> None:
    """RULES.md 4: not back within the absence time -> a normal bot takes
    the seat for good (absence shortened to 2 s by the test-only option)."""
    host = await WSClient.signed_in(st.http(0), "남는이")
    gone = await WSClient.signed_in(st.http(1), "떠난이")
    await host.send({"type": "room_create", "game": "onecard", "seats": 2,
                     "options": {"absence_ms": 2000}})
    code = (await host.wait_type("room"))["room"]["code"]
    await gone.send({"type": "room_join", "code": code})
    await host.wait_for(lambda f: f.get("type") == "room" and len(
        [m for m in f["room"]["members"] if m["kind"] == "human"]) == 2)
    await host.send({"type": "room_start"})
    matched = await gone.wait_type("matched", 20)
    gid, seat = matched["game_id"], matched["seat"]
    await gone.wait_type("view")
    gone.ws.transport.abort()
    ev = await host.wait_event(lambda e: e["type"] == "substituted", 20)
    assert ev["event"]["seat"] == seat
    back = WSClient(st.http(0), gone.ident)
    await back.connect()
    welcome = await back.hello({"session": gone.session, "last_seq": gone.last_seq})
    assert welcome["game_id"] == gid
    view = await view_of(back, gid)
    assert view["seats"][seat]["bot"] is True  # watching; the seat stays the bot's
    # as a spectator watches: the bot's cards stay in the shard
    assert view["seat"] is None and "hand" not in view
    res = await back.action(gid, {"type": "draw"})
    assert res["type"] == "error" and res["code"] == "seat_is_bot"
    # and the lobby's 관전 of it is let through (refused "이미 게임 중이에요.",
    # there was no way back to it from the lobby: review finding)
    await back.send({"type": "spectate", "game_id": gid})
    watched = await back.wait_for(lambda f: f.get("type") in ("spectate_view", "error"))
    assert watched["type"] == "spectate_view" and watched["view"]["seat"] is None, watched
    await back.send({"type": "spectate_stop"})
    await back.wait_type("spectate_stopped")
    await host.action(gid, {"type": "leave"})
    for c in (host, back):
        await c.close()


async def test_substituted_player_cannot_act_for_the_bot(st: Stack) -> None:
    """RULES.md 4: after a bot took the seat (here: the player left), the
    player's moves are refused even on that seat's turn (the gateway refuses
    them with ``seat_is_bot``; the shard alone accepted them, reported)."""
    host = await WSClient.signed_in(st.http(), "남는이")
    gone = await WSClient.signed_in(st.http(), "돌아온이")
    await host.send({"type": "room_create", "game": "onecard", "seats": 2})
    code = (await host.wait_type("room"))["room"]["code"]
    await gone.send({"type": "room_join", "code": code})
    await host.wait_for(lambda f: f.get("type") == "room" and len(
        [m for m in f["room"]["members"] if m["kind"] == "human"]) == 2)
    await host.send({"type": "room_start"})
    matched = await gone.wait_type("matched", 20)
    gid, seat = matched["game_id"], matched["seat"]
    await gone.action(gid, {"type": "leave"})  # a bot takes the seat; the host plays on
    tried = False
    for _ in range(300):
        v = await view_of(host, gid)
        assert not v["finished"]
        if v["turn"] == seat:
            res = await gone.action(gid, {"type": "draw"})
            if res["type"] == "error" and res["code"] == "not_your_turn":
                continue  # the bot was quicker
            tried = True
            assert res["type"] == "error" and res["code"] == "seat_is_bot", res
            break
        await host.action(gid, {"type": "draw"})  # the host's turn: keep it short
        await asyncio.sleep(0.1)
    assert tried
    await host.action(gid, {"type": "leave"})
    for c in (host, gone):
        await c.close()


async def test_a_new_tab_learns_who_sits_where(st: Stack) -> None:
    """A second tab or device of the same player says hello with no session
    to resume, here on the other gateway: its welcome names the live game
    with the `matched` fields it never saw (docs/websocket.md: who sits where,
    by name), in JSON and in protobuf."""
    a = await WSClient.signed_in(st.http(0), "새탭")
    await a.send({"type": "queue", "game": "onecard", "seats": 3})
    matched = await a.wait_type("matched", 20)
    gid = matched["game_id"]
    await a.wait_type("view")
    b = WSClient(st.http(1), a.ident)  # the other gateway: the session comes over NATS
    await b.connect()
    welcome = await b.hello()
    assert not welcome["resumed"] and welcome["game_id"] == gid
    assert welcome["seat"] == matched["seat"]
    assert welcome["players"] == matched["players"]
    assert [p.get("nickname") for p in welcome["players"] if p["kind"] == "human"] == ["새탭"]
    assert (welcome["game"], welcome["kind"], welcome["options"]) == (
        matched["game"], matched["kind"], matched["options"])
    c = WSClient(st.http(0), a.ident, proto=True)  # a third, speaking protobuf
    await c.connect()
    welcome = await c.hello()
    assert welcome["game_id"] == gid and welcome["game"] == "onecard"
    assert [(p["seat"], p["kind"], p.get("nickname", ""), p.get("level", ""))
            for p in welcome["players"]] == [
        (p["seat"], p["kind"], p.get("nickname", ""), p.get("level", ""))
        for p in matched["players"]]
    await c.action(gid, {"type": "leave"})
    for x in (a, b, c):
        await x.ws.close()


async def test_resume_after_a_gateway_crash(st: Stack) -> None:
    """A gateway killed with -9 says goodbye to nobody: the session comes
    from its last save (when its game started; a checkpoint comes at most
    30 s after a change, too late for this test); events may come twice
    (marked ``replayed``, same ``game_seq``) but never with a gap."""
    doomed = st.add_gateway()
    http = f"http://127.0.0.1:{doomed.ports['http']}"
    a = await WSClient.signed_in(http, "추락")
    await a.send({"type": "queue", "game": "penalty_rows", "seats": 3})
    gid = (await a.wait_type("matched", 20))["game_id"]
    await a.wait_type("view")
    await play_some(a, "penalty_rows", gid, 2)
    while True:
        try:
            await a.recv(0.5)
        except TimeoutError:
            break
    doomed.kill()
    seen = {f["game_seq"] for f in a.events(gid)} | {
        f["game_seq"] for f in a.frames if f.get("type") == "view"}
    b = WSClient(st.http(1), a.ident)
    await b.connect()
    welcome = await b.hello({"session": a.session, "last_seq": a.last_seq})
    assert welcome["resumed"] and welcome["game_id"] == gid
    await play_some(b, "penalty_rows", gid, 1)
    if welcome["resume_result"] == "gapless":
        got = seen | {f["game_seq"] for f in b.events(gid)}
        assert got == set(range(min(got), max(got) + 1))
    else:
        assert any(f.get("type") == "view" and f["resync"] for f in b.frames)
    await b.action(gid, {"type": "leave"})
    await b.close()


async def test_room_started_while_a_member_was_away(st: Stack) -> None:
    """The ``matched`` frame went out while the member had no connection: on
    the next hello the game is found (and its view sent) all the same, with
    who sits where by name (from the game directory)."""
    host = await WSClient.signed_in(st.http(0), "방장")
    away = await WSClient.signed_in(st.http(1), "잠깐")
    await two_in_a_room(host, away)
    away.ws.transport.abort()
    await asyncio.sleep(0.5)
    await host.send({"type": "room_start"})
    matched = await host.wait_type("matched", 20)
    gid = matched["game_id"]
    back = WSClient(st.http(0), away.ident)
    await back.connect()
    welcome = await back.hello({"session": away.session, "last_seq": away.last_seq})
    assert welcome["resumed"] and welcome["game_id"] == gid
    assert (welcome["seat"], welcome["game"]) == (1 - matched["seat"], "onecard")
    assert [(p["seat"], p["kind"], p["player"], p["nickname"]) for p in welcome["players"]] == [
        (p["seat"], p["kind"], p["player"], p["nickname"]) for p in matched["players"]]
    assert sorted(p["nickname"] for p in welcome["players"]) == ["방장", "잠깐"]
    view = await back.wait_type("view")
    assert view["game_id"] == gid and len(view["view"]["hand"]) == 7
    for c in (host, back):
        await c.action(gid, {"type": "leave"})
        await c.close()


async def test_a_game_left_by_choice_does_not_come_back_on_another_device(st: Stack) -> None:
    """나가기 (RULES.md 4: a bot takes the seat; the connection that left may
    watch on, as the quick-match tests above do): a later hello of the same
    player, on another gateway and device, names no game and brings none of
    its frames, though the game plays on and the matchmaker still has the
    player seated until it ends."""
    a = await WSClient.signed_in(st.http(0), "나간사람")
    friend = await WSClient.signed_in(st.http(1), "남은사람")
    await two_in_a_room(a, friend)
    await a.send({"type": "room_start"})
    gid = (await a.wait_type("matched", 20))["game_id"]
    await a.wait_type("view")
    assert (await a.action(gid, {"type": "leave"}))["type"] == "result"
    await asyncio.sleep(0.3)
    b = WSClient(st.http(1), a.ident)  # another device: no session to resume
    await b.connect()
    welcome = await b.hello()
    assert "game_id" not in welcome, welcome
    # the game goes on (the friend plays against the bot in the seat)
    await play_some(friend, "onecard", gid, 2)
    await asyncio.sleep(0.5)
    assert not [f for f in b.frames if f.get("game_id") == gid], b.frames
    await friend.action(gid, {"type": "leave"})
    for c in (a, b, friend):
        await c.close()


def shard_commands(st: Stack, path: str) -> float:
    """The gateway's game commands sent to shards by ``path`` (link / nats)."""
    import urllib.request
    with urllib.request.urlopen(f"{st.metrics()}/metrics", timeout=5) as r:
        text = r.read().decode()
    key = f'ttanjit_gateway_shard_commands_total{{path="{path}"}} '
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(key))


async def test_own_hidden_move_brings_a_patch_over_the_owners_link(st: Stack) -> None:
    """Issue 13 (docs/websocket.md 3.6, docs/protocol.md 1.1): a 줄줄이 벌점
    selection changes only the mover's own hidden fields: the update before
    its result carries them as a patch, with no event, and no sync is
    needed; after the first command found the owner over NATS, the game's
    commands take the owner shard's link."""
    c = await WSClient.signed_in(st.http(), "링크꾼")
    await c.send({"type": "queue", "game": "penalty_rows", "seats": 2})
    gid = (await c.wait_type("matched", 20))["game_id"]
    view = (await c.wait_for(lambda f: f.get("type") == "view"))["view"]
    link0, nats0 = shard_commands(st, "link"), shard_commands(st, "nats")
    for card in [h["card"] for h in view["hand"]][:4]:
        res = await c.action(gid, {"type": "select", "card": card, "row": 1})
        assert res["type"] == "result", res
        own = [f for f in c.frames if f.get("type") == "update" and f["seq"] < res["seq"]
               and f["game_id"] == gid and not f["events"]]
        assert own and "view" not in own[-1] and own[-1]["patch"]["selection"]["card"] == card
        await asyncio.sleep(0.12)  # the frame rate limit
    assert shard_commands(st, "link") - link0 >= 3, "commands after the first use the link"
    assert shard_commands(st, "nats") - nats0 <= 1
    await c.action(gid, {"type": "leave"})
    await c.close()
