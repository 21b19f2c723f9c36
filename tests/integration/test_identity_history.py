"""Issue 15 with real processes (nats-server, a shard, bots, the matchmaker,
two gateways): the lasting identity (refresh rotation, revocation, nickname,
moving to another device), rating display math, history and leaderboards
from JetStream after the shard restarted, and replays matching the record
(docs/websocket.md 1.1–1.4, 3.4)."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import nats
import nats.js.errors
import orjson
import pytest
import websockets
from conftest import freeze
from nats.js.api import DiscardPolicy, StorageType, StreamConfig
from stack import SECRET, Stack, stack
from wsclient import WSClient, flat, sign_in, start_with_bot

from ttanjit.common.nats import HISTORY_BUCKET, Subjects, ensure_jetstream
from ttanjit.common.natsserver import NatsServer
from ttanjit.games.record import record_from_json, replay
from ttanjit.gateway.auth import Tokens
from ttanjit.gateway.errors import MESSAGES, FrameError
from ttanjit.gateway.identity import Identities
from ttanjit.matchmaker import standings
from ttanjit.shard.export import fetch


@pytest.fixture(scope="module")
def st(nats_url: str) -> Iterator[Stack]:
    with stack(nats_url, shards=1, gateways=2, bots=True) as s:
        yield s


def call(http: str, path: str, body: Any = None, token: str | None = None,
         method: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(http + path, data=data, headers=headers,
                                 method=method or ("POST" if body is not None else "GET"))
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_refresh_rotates_and_reuse_revokes(st: Stack) -> None:
    me = sign_in(st.http(0), "오래가는이")
    assert me["refresh"] and me["refresh"] not in me["token"]
    assert abs(me["expires_ms"] - time.time() * 1000 - 3_600_000) < 60_000  # short-lived: 1 h
    # another gateway honours it; it rotates
    code, r1 = call(st.http(1), "/api/refresh", {"refresh": me["refresh"]})
    assert code == 200 and r1["player"] == me["player"] and r1["nickname"] == "오래가는이"
    assert r1["refresh"] and r1["refresh"] != me["refresh"]
    # the replaced one within the grace period (another tab raced, or the
    # answer above was lost — a reload, a phone changing networks — and the
    # browser still holds only the replaced one): a token and the same
    # replacement again, from any gateway, no rotation (it said null, the
    # browser kept the replaced one, and its next use after the grace
    # revoked the family: the guest's account gone; identity audit)
    for gw in (0, 1):
        code, r2 = call(st.http(gw), "/api/refresh", {"refresh": me["refresh"]})
        assert code == 200 and r2["player"] == me["player"] and r2["refresh"] == r1["refresh"]
    code, r3 = call(st.http(0), "/api/refresh", {"refresh": r1["refresh"]})
    assert code == 200 and r3["refresh"] not in (None, r1["refresh"])
    # garbage and a forged secret
    for bad in ("nope", r3["refresh"].split(".")[0] + ".forged", "a.b.c"):
        code, err = call(st.http(0), "/api/refresh", {"refresh": bad})
        assert code == 401 and err["code"] == "bad_refresh"
    # sign-out revokes every rotation of it
    assert call(st.http(1), "/api/signout", {"refresh": r3["refresh"]})[1] == {"revoked": True}
    code, err = call(st.http(0), "/api/refresh", {"refresh": r3["refresh"]})
    assert code == 401 and err["code"] == "bad_refresh"


async def test_nickname_and_another_device(st: Stack) -> None:
    me = sign_in(st.http(0), "첫이름")
    code, err = call(st.http(0), "/api/nickname", {"nickname": "바뀐이름"})
    assert code == 401 and err["code"] == "unauthenticated"
    # a route of mine asks who first, whatever else is wrong (history of an
    # unknown game said unknown_game to nobody signed in)
    assert call(st.http(0), "/api/history/zzz")[1]["code"] == "unauthenticated"
    assert call(st.http(0), "/api/history/zzz", token=me["token"])[1]["code"] == "unknown_game"
    # the scheme's name in any case (RFC 7235; "bearer …" was unauthenticated)
    req = urllib.request.Request(st.http(0) + "/api/history/onecard",
                                 headers={"Authorization": f"bearer {me['token']}"})
    with urllib.request.urlopen(req, timeout=15) as r:
        assert r.status == 200
    code, renamed = call(st.http(0), "/api/nickname", {"nickname": "  "}, me["token"])
    assert code == 400 and renamed["code"] == "bad_nickname"
    code, renamed = call(st.http(0), "/api/nickname", {"nickname": "바뀐이름"}, me["token"])
    assert code == 200 and renamed["player"] == me["player"]
    # the new nickname survives a refresh (server-side, not in the old token)
    assert call(st.http(1), "/api/refresh", {"refresh": me["refresh"]})[1]["nickname"] == "바뀐이름"
    # 다른 기기에서 계속하기: a one-time code
    code, tr = call(st.http(0), "/api/transfer", {}, renamed["token"])
    assert code == 200 and len(tr["code"]) == 8
    code, other = call(st.http(1), "/api/transfer/claim", {"code": tr["code"].lower()})
    assert code == 200 and other["player"] == me["player"] and other["nickname"] == "바뀐이름"
    code, err = call(st.http(1), "/api/transfer/claim", {"code": tr["code"]})  # once only
    assert code == 400 and err["code"] == "bad_code"
    # the other device's own credential works; both devices stay signed in
    assert call(st.http(0), "/api/refresh", {"refresh": other["refresh"]})[0] == 200
    c = WSClient(st.http(1), other)
    await c.connect()
    w = await c.hello()
    assert w["player"] == me["player"] and w["nickname"] == "바뀐이름"
    await c.close()
    # the first device's token is from before the change (tokens last 1 h):
    # its next connection goes by the new nickname all the same, and so does
    # the room it opens (others see one name for one player)
    old = WSClient(st.http(0), me)
    await old.connect()
    assert (await old.hello())["nickname"] == "바뀐이름"
    await old.send({"type": "room_create", "game": "onecard", "seats": 2})
    room = (await old.wait_type("room"))["room"]
    assert [m.get("nickname") for m in room["members"]] == ["바뀐이름", None]
    await old.send({"type": "room_leave"})
    await old.wait_type("room_left")
    await old.close()


def test_a_token_left_after_signing_out_makes_nothing_lasting(st: Stack) -> None:
    """After 로그아웃 the 1-hour access token still names the player, but a
    code for another device (a new lasting family) and a new nickname need
    the family it came from to stand: ``bad_token`` (a leftover token made
    a code whose claim gave a new device for good; identity audit)."""
    me = sign_in(st.http(0), "나간사람")
    _, refreshed = call(st.http(1), "/api/refresh", {"refresh": me["refresh"]})
    codes = []
    for tok in (me["token"], refreshed["token"]):  # a signed-in token of either kind works
        code, tr = call(st.http(0), "/api/transfer", {}, tok)
        assert code == 200
        codes.append(tr["code"])
    assert call(st.http(1), "/api/signout", {"refresh": refreshed["refresh"]})[1] == {"revoked": True}
    for tok in (me["token"], refreshed["token"]):
        for path, body in (("/api/transfer", {}), ("/api/nickname", {"nickname": "훔친이름"})):
            code, err = call(st.http(0), path, body, tok)
            assert (code, err["code"]) == (401, "bad_token"), (path, err)
            assert err["message"]
    # the name was not changed (a code made while signed in says it)
    code, other = call(st.http(1), "/api/transfer/claim", {"code": codes[0]})
    assert code == 200 and other["nickname"] == "나간사람"


async def test_signing_out_closes_the_sockets_it_signed_in(st: Stack) -> None:
    """Security audit: after 로그아웃 (or a stolen copy's use revoking the
    family) a token left from it still said hello, read the history and
    kept its socket, playing on as the player for up to an hour. Now the
    family's sockets on every gateway close with 4004, its tokens' hello is
    bad_token and the history refused; the player's other devices (other
    families) are not touched."""
    me = sign_in(st.http(0), "여러기기")
    devices = []
    for _ in range(2):  # two more devices: a code each, claimed
        _, tr = call(st.http(0), "/api/transfer", {}, me["token"])
        code, dev = call(st.http(1), "/api/transfer/claim", {"code": tr["code"]})
        assert code == 200
        devices.append(dev)
    b, c = devices
    on_b = WSClient(st.http(0), b)
    await on_b.connect()
    await on_b.hello()
    assert call(st.http(1), "/api/signout", {"refresh": me["refresh"]})[1] == {"revoked": True}
    await asyncio.sleep(1.5)  # (the removal reached every gateway by now)
    await on_b.send({"type": "ping", "client_ms": 1})
    await on_b.wait_type("pong")  # another device's socket stays
    on_c = WSClient(st.http(1), c)  # (takes the player over from b: one socket a player)
    await on_c.connect()
    await on_c.hello()
    assert call(st.http(0), "/api/signout", {"refresh": c["refresh"]})[1] == {"revoked": True}
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await on_c.wait_type("never", timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004
    left = WSClient(st.http(1), me)
    await left.connect()
    await left.send({"type": "hello", "token": me["token"]})
    err = await left.wait_type("error")
    assert (err["code"], err["ref"]) == ("bad_token", "hello")
    await left.close()
    for tok in (me["token"], c["token"]):
        code, err = call(st.http(0), "/api/history/onecard", token=tok)
        assert (code, err["code"]) == (401, "bad_token")
    assert call(st.http(0), "/api/history/onecard", token=b["token"])[0] == 200
    await on_b.close()


def test_a_token_of_an_older_release_still_renames_and_makes_codes(st: Stack) -> None:
    """Version-skew audit: during an upgrade the older gateways issue
    tokens that name no refresh family (and the web client's live an hour):
    the routes that ask the family to stand refused them all with
    bad_token — every rename and code failed, "다시 로그인해 주세요". A token
    without a family passes as it did before (``Account.standing``)."""
    me = sign_in(st.http(0), "예전토큰")
    old, ident = Tokens(SECRET).issue(me["player"], "예전토큰", int(time.time() * 1000) - 600_000)
    assert "f" not in orjson.loads(base64.urlsafe_b64decode(old.split(".")[0] + "=="))
    code, renamed = call(st.http(0), "/api/nickname", {"nickname": "새토큰"}, old)
    assert code == 200 and renamed["nickname"] == "새토큰", renamed
    # its new token lives no longer than it did (a rename an hour renewed
    # it for good, never asked whether its device signed out: review finding)
    assert renamed["expires_ms"] == ident.expires_ms
    code, tr = call(st.http(1), "/api/transfer", {}, old)
    assert code == 200 and tr["code"], tr


def test_renames_and_codes_are_limited_per_player(st: Stack) -> None:
    """Each rename and each code is a JetStream KV write (a rename goes to
    every gateway too, a code lives 10 minutes): 200 of each went through
    in under half a second (identity audit). 5 at once, then 429 with
    Retry-After; a refused nickname costs nothing; another player has his own."""
    me = sign_in(st.http(0), "자주바꿈")
    assert call(st.http(0), "/api/nickname", {"nickname": "  "}, me["token"])[0] == 400
    for i in range(5):
        assert call(st.http(0), "/api/nickname", {"nickname": f"이름{i}"}, me["token"])[0] == 200
        assert call(st.http(0), "/api/transfer", {}, me["token"])[0] == 200
    for path, body, code in (("/api/nickname", {"nickname": "여섯째"}, "too_many_renames"),
                             ("/api/transfer", {}, "too_many_codes")):
        req = urllib.request.Request(st.http(0) + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {me['token']}"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=15)
        assert err.value.code == 429 and int(err.value.headers["Retry-After"]) >= 1
        assert json.loads(err.value.read())["code"] == code
    other = sign_in(st.http(0), "가끔바꿈")
    assert call(st.http(0), "/api/nickname", {"nickname": "새이름"}, other["token"])[0] == 200


def claim_from(http: str, code: str, address: str) -> tuple[int, dict[str, Any], str | None]:
    """``POST /api/transfer/claim`` as the client ``address`` (the test
    gateways trust X-Forwarded-For from loopback, as uvicorn does by
    default): status, body, Retry-After."""
    req = urllib.request.Request(http + "/api/transfer/claim", method="POST",
                                 data=json.dumps({"code": code}).encode(),
                                 headers={"Content-Type": "application/json",
                                          "X-Forwarded-For": address})
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return r.status, json.loads(r.read()), r.headers.get("Retry-After")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), e.headers.get("Retry-After")


def test_wrong_transfer_codes_are_limited_per_address(st: Stack) -> None:
    """docs/websocket.md 1.1: 10 wrong codes at once per client address,
    then one every 30 s (429 too_many_attempts, Retry-After); a code that
    works gives its attempt back; other addresses are not held up."""
    me = sign_in(st.http(0), "코드주인")
    http = st.http(1)

    def new_code() -> str:
        return str(call(st.http(0), "/api/transfer", {}, me["token"])[1]["code"])

    # no code at all is not a guess (IME audit: 11 empty tries locked the
    # address out): said as such, no attempt spent
    for bad in ["", "  - ", "뮻ㅇㅁ-ㄴㅇㄹ", "ABCD", "ABCD-EFGH-JKLM"] * 3:
        assert claim_from(http, bad, "203.0.113.7")[:2] == (
            400, {"code": "malformed_code", "message": MESSAGES["malformed_code"]}), bad
    # a right code gives its attempt back: 9 wrong, 1 right, 1 wrong, still answered
    for _ in range(9):
        assert claim_from(http, "ZZZZZZZZ", "203.0.113.7")[:2] == (
            400, {"code": "bad_code", "message": MESSAGES["bad_code"]})
    status, body, _ = claim_from(http, new_code(), "203.0.113.7")
    assert status == 200 and body["player"] == me["player"]
    assert claim_from(http, "ZZZZZZZZ", "203.0.113.7")[0] == 400  # the 10th wrong one
    # the 11th is refused before the code is even looked at: a live code too
    good = new_code()
    status, body, retry = claim_from(http, good, "203.0.113.7")
    assert (status, body) == (429, {"code": "too_many_attempts",
                                    "message": MESSAGES["too_many_attempts"]})
    assert retry is not None and 1 <= int(retry) <= 30, retry
    # so that code is still unused: another address claims it
    status, body, _ = claim_from(http, good, "198.51.100.23")
    assert status == 200 and body["player"] == me["player"]
    # the limit is per gateway process: the other one still answers this address
    assert claim_from(st.http(0), "ZZZZZZZZ", "203.0.113.7")[0] == 400


async def _last(js: Any, key: str) -> Any:
    """The identity bucket's last message for ``key`` (headers and all), or
    None when the stream holds nothing for it: no value, no delete marker."""
    try:
        return await js.get_last_msg("KV_ttanjit_identity", f"$KV.ttanjit_identity.{key}")
    except nats.js.errors.NotFoundError:
        return None


async def _gone(js: Any, key: str, within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if await _last(js, key) is None:
            return True
        await asyncio.sleep(0.2)
    return False


async def test_identity_entries_expire_and_leave_nothing_behind(st: Stack, nats_url: str) -> None:
    """gateway/identity.py: a refresh family lives 180 days from its last
    use and a 다른 기기에서 계속하기 code 10 minutes (per-message TTLs:
    JetStream removes them, docs/websocket.md 1.1); a revoked family and a
    used code leave no value and no delete marker behind."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        me = sign_in(st.http(0), "지나가는이")
        family = me["refresh"].split(".")[0]
        first = await _last(js, f"r.{family}")
        assert first.headers["Nats-TTL"] == str(180 * 24 * 3600)
        code, r1 = call(st.http(1), "/api/refresh", {"refresh": me["refresh"]})
        assert code == 200
        rotated = await _last(js, f"r.{family}")
        assert rotated.seq > first.seq and rotated.headers["Nats-TTL"] == str(180 * 24 * 3600)
        # a code nobody claims goes after 10 minutes; a used one at once
        code, unused = call(st.http(0), "/api/transfer", {}, r1["token"])
        assert (await _last(js, f"c.{unused['code']}")).headers["Nats-TTL"] == "600"
        code, used = call(st.http(0), "/api/transfer", {}, r1["token"])
        assert call(st.http(1), "/api/transfer/claim", {"code": used["code"]})[0] == 200
        assert call(st.http(1), "/api/transfer/claim", {"code": used["code"]})[1]["code"] == \
            "bad_code"  # once, also in the second its marker is there
        assert await _gone(js, f"c.{used['code']}")
        assert call(st.http(1), "/api/transfer/claim", {"code": used["code"]})[1]["code"] == \
            "bad_code"
        # signing out: the family is refused at once and gone from the bucket
        assert call(st.http(0), "/api/signout", {"refresh": r1["refresh"]})[1] == {"revoked": True}
        assert call(st.http(0), "/api/refresh", {"refresh": r1["refresh"]})[0] == 401
        assert await _gone(js, f"r.{family}")
        assert call(st.http(1), "/api/refresh", {"refresh": r1["refresh"]})[0] == 401
        assert (await _last(js, f"c.{unused['code']}")) is not None  # its 10 minutes run on
    finally:
        await nc.close()


async def test_a_bucket_made_by_an_older_client_gets_message_ttls() -> None:
    """ensure_jetstream allows per-message TTLs on an identity bucket made
    without them (nats-py before 2.12 did), keeping what it holds."""
    with NatsServer() as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        try:
            await js.add_stream(StreamConfig(
                name="KV_ttanjit_identity", subjects=["$KV.ttanjit_identity.>"],
                allow_rollup_hdrs=True, deny_delete=True, discard=DiscardPolicy.NEW,
                max_msgs_per_subject=1, storage=StorageType.FILE))
            kv = await js.key_value("ttanjit_identity")
            await kv.put("n.p1", b'{"nickname": "old"}')
            assert not (await js.stream_info("KV_ttanjit_identity")).config.allow_msg_ttl
            # before: a writer on such a bucket does without (as on a server before 2.11)
            without = Identities(kv, js)
            cred = await without.create("p0", standings.now_ms())
            assert not without.msg_ttl
            assert (await without.refresh(cred, standings.now_ms())).player == "p0"
            assert await without.revoke(cred)
            with pytest.raises(FrameError, match="bad_refresh"):
                await without.refresh(cred, standings.now_ms())
            buckets = await ensure_jetstream(js, Subjects("ttanjit.v1"))
            assert (await js.stream_info("KV_ttanjit_identity")).config.allow_msg_ttl
            ids = Identities(buckets["ttanjit_identity"], js)
            cred = await ids.create("p1", standings.now_ms())
            assert (await ids.refresh(cred, standings.now_ms())).player == "p1"
            assert ids.msg_ttl and await ids.nickname("p1") == "old"
        finally:
            await nc.close()


async def _closed_within(c: WSClient, seconds: float) -> int | None:
    """The close code if the gateway closes ``c`` within ``seconds``."""
    try:
        while True:
            await c.recv(seconds)
    except websockets.ConnectionClosed as e:
        return e.rcvd.code if e.rcvd else None
    except TimeoutError:
        return None


async def _alive(c: WSClient) -> None:
    await c.send({"type": "ping"})
    assert (await c.wait_type("pong"))["type"] == "pong"


async def test_two_hellos_of_one_player_at_once_leave_the_later_opened_connection(
        st: Stack) -> None:
    """Two tabs (on one gateway or on two) saying hello at the same moment:
    neither found the other to kick, both stayed open, and closing one
    marked the player away under the other. Now the one opened later stays
    and the other is closed 4001."""
    me = sign_in(st.http(0), "두탭")
    for rnd in range(4):
        a = WSClient(st.http(0), me)
        b = WSClient(st.http(rnd % 2), me)
        await a.connect()
        await asyncio.sleep(0.2)  # b is opened later (the gateways share this machine's clock)
        await b.connect()
        first, second = (a, b) if rnd < 2 else (b, a)  # the hellos in either order
        await asyncio.gather(first.send({"type": "hello", "token": me["token"]}),
                             second.send({"type": "hello", "token": me["token"]}))
        codes = await asyncio.gather(_closed_within(a, 3.0), _closed_within(b, 3.0))
        assert codes == [4001, None], (rnd, codes)
        await _alive(b)
        await b.close()


async def test_a_late_hello_on_a_socket_opened_earlier_does_not_close_the_newer(
        st: Stack) -> None:
    """A tab gives a socket up and opens another; the old one's hello can
    be handled after the new one is live (it closed the page's live
    connection: the page went inert). The connection opened later stays;
    the late hello's is closed 4001, on either gateway."""
    me = sign_in(st.http(0), "늦은인사")
    for rnd in range(2):
        old = WSClient(st.http(rnd), me)
        await old.connect()
        await asyncio.sleep(0.2)
        new = WSClient(st.http(0), me)
        await new.connect()
        await new.hello()
        await old.send({"type": "hello", "token": me["token"]})
        assert await _closed_within(old, 3.0) == 4001
        await _alive(new)
        assert await _closed_within(new, 0.5) is None
        await new.close()


async def test_a_game_id_that_is_no_game_id_is_refused_at_once(st: Stack) -> None:
    """A ``spectate`` of ``*`` subscribed the connection to every game's
    public channel (관전 turned off or not) and answered unknown_game 12 s
    later; ``a.>`` was internal_error. Ids that are not one subject token
    are refused before anything is looked up (docs/websocket.md 6)."""
    me = sign_in(st.http(0), "엿보기")
    c = WSClient(st.http(0), me)
    await c.connect()
    await c.hello()
    try:
        for gid in ("*", "a.>", ">", "a b", "x" * 65):
            t0 = time.monotonic()
            await c.send({"type": "spectate", "game_id": gid})
            err = await c.wait_type("error")
            assert (err["code"], err["ref"]) == ("unknown_game", "spectate"), gid
            assert time.monotonic() - t0 < 3.0
            await c.send({"type": "sync", "game_id": gid})
            assert (await c.wait_type("error"))["code"] == "not_in_game", gid
            await c.send({"type": "rematch", "game_id": gid})
            assert (await c.wait_type("error"))["code"] == "no_rematch", gid
        await c.send({"type": "ping"})
        await c.wait_type("pong")  # the connection goes on
    finally:
        await c.close()


async def solo_started(st: Stack, nick: str, game: str, seats: int, **opts: Any
                       ) -> tuple[WSClient, str]:
    """A solo room (the player with easy bots; Hakka fills its own seats)
    started on gateway 0: the player and the game id."""
    c = await WSClient.signed_in(st.http(0), nick)
    await c.send({"type": "room_create", "game": game, "seats": seats,
                  **({"options": opts} if opts else {})})
    await c.wait_type("room")
    for _ in range(seats - 1 if game != "hakka" else 0):
        await c.send({"type": "room_add_bot", "level": "easy"})
        await c.wait_type("room")
    await c.send({"type": "room_start"})
    return c, (await c.wait_type("matched", 20))["game_id"]


async def solo_finished(st: Stack, nick: str, game: str, seats: int, **opts: Any
                        ) -> tuple[WSClient, str]:
    """A solo room the player leaves at once: a bot takes the seat and the
    bots play it out (no real time passes)."""
    c, gid = await solo_started(st, nick, game, seats, **opts)
    await c.action(gid, {"type": "leave"})
    await c.wait_event(lambda e: e["type"] in
                     ("game_over", "game_ended"), 120)
    return c, gid


async def test_rating_change_history_and_leaderboard(st: Stack, nats_url: str) -> None:
    c, gid = await solo_finished(st, "기록왕", "onecard", 2)
    rf = await c.wait_for(lambda f: f.get("type") == "ratings" and "change" in f, 30)
    ch = rf["change"]
    assert ch["game_id"] == gid and ch["outcome"] == "left" and ch["games"] == 1
    assert ch["provisional"] and ch["delta"] == ch["after"] - ch["before"] < 0
    assert ch["before"] == 1500 and "10게임" in ch["why"]
    one = next(r for r in rf["ratings"] if r["game"] == "onecard")
    assert one["display"] == standings.display(one["ordinal"]) == ch["after"]
    assert one["provisional"] is True
    # history comes from JetStream: the same after the shard restarted
    st.shards[0].stop()
    st.shards[0] = st.services.start("shard", name="shard-0b", wait=False)
    st.shards[0].wait_log('"msg":"ready"')
    code, h = call(st.http(1), "/api/history/onecard", token=c.ident["token"])
    assert code == 200 and h["total"] == 1
    g = h["games"][0]
    assert g["game_id"] == gid and g["outcome"] == "left" and g["delta"] == ch["delta"]
    assert g["seats"][g["seat"]]["nickname"] == "기록왕"
    assert call(st.http(1), "/api/history/onecard")[0] == 401
    # a record is kept 30 days (docs/protocol.md 5): a game listed longer
    # says it has no replay any more (its 다시 보기 answered no_record)
    assert g["replay"] is True
    nc = await nats.connect(nats_url)
    try:
        kv = await nc.jetstream().key_value(HISTORY_BUCKET)
        old = {**g, "game_id": "g" + "0" * 25, "ended_ms": g["ended_ms"] - 29 * 86_400_000 - 60_000}
        old.pop("replay")
        await kv.put(f"onecard.{c.ident['player']}",
                     json.dumps({"games": [{k: v for k, v in g.items() if k != "replay"}, old]}).encode())
    finally:
        await nc.close()
    code, h = call(st.http(1), "/api/history/onecard", token=c.ident["token"])
    assert [(x["game_id"], x["replay"]) for x in h["games"]] == [(gid, True), (old["game_id"], False)]
    # leaderboard ordering: only players with 3+ games; equal ratings share a rank
    code, lb = call(st.http(0), "/api/leaderboard/onecard", token=c.ident["token"])
    assert code == 200 and lb["min_games"] == 3
    assert lb["me"]["rank"] is None and lb["me"]["needs"] == 2
    disp = [e["display"] for e in lb["entries"]]
    assert disp == sorted(disp, reverse=True)
    await c.close()


def test_display_math() -> None:
    assert standings.display(0.0) == 1500
    assert standings.display(-1.8) == 1428
    assert standings.display(10.0) == 1900
    ch = standings.change("g", "onecard", "win", 0.0, 3.1, 1)
    assert (ch["before"], ch["after"], ch["delta"]) == (1500, 1624, 124)
    assert ch["why"].startswith("이겨서 레이팅 +124.") and ch["provisional"]
    down = standings.change("g", "onecard", "loss", 5, 4.8, 12)
    assert not down["provisional"] and down["why"].startswith("져서 레이팅 −8.")  # U+2212, as the label
    # both ways, never that this opponent was weak (two new players of equal
    # rating read "약한 상대에게 질수록 더 내려가요." so: trial nitpick)
    assert "상대가 약할수록 더 내려가고, 강할수록 덜 내려가요." in down["why"]
    # a loss that still rose: by place where the game has a score, else the
    # provisional rating's shrinking uncertainty
    up = standings.change("g", "penalty_rows", "loss", 5, 5.5, 12, seats=5)["why"]
    assert up.startswith("졌지만 레이팅 +20.") and "게임 순위가 나보다 낮은 상대" in up
    assert "져도 오를 수 있어요" in standings.change("g", "onecard", "loss", 0, 0.5, 2)["why"]
    # 5th of 5 by score yet up: the seat that left counted below it, and the
    # line says so (nothing on the screen did: trial nitpick)
    result = {"substituted": [False, False, True]}
    assert standings.others_left(result, 0) and not standings.others_left(result, 2)
    why = standings.change("g", "penalty_rows", "loss", 5, 5.1, 12, standings.others_left(result, 0),
                           seats=3)["why"]
    assert why.startswith("졌지만 레이팅 +4. 자리를 비운 사람은 점수와 관계없이 꼴찌로 계산해서, 졌어도 "
                          "그보다 앞선 순위예요."), why
    assert "자리를 비운" not in standings.change("g", "penalty_rows", "loss", 5, 5.1, 12, seats=3)["why"]


async def record_reads(nats_url: str) -> tuple[Any, list[str]]:
    """A NATS connection and the list it fills with each consumer made on
    the records stream from now on (a replay reading a whole record)."""
    nc = await nats.connect(nats_url)
    reads: list[str] = []

    async def seen(m: Any) -> None:
        if ".TTANJIT_RECORDS" in m.subject:
            reads.append(m.subject)
    await nc.subscribe("$JS.API.CONSUMER.>", cb=seen)
    await nc.flush()
    return nc, reads


@pytest.mark.parametrize("game,seats", [("onecard", 3), ("penalty_rows", 2), ("hakka", 4)])
async def test_replay_matches_the_record(st: Stack, nats_url: str, game: str,
                                         seats: int) -> None:
    c, gid = await solo_finished(st, "다시보기", game, seats, **(
        {"rounds": 3} if game == "penalty_rows" else {}))
    other = sign_in(st.http(0), "남의게임")
    # a stranger is refused from the record's header alone: no consumer
    # reads the rest (its whole record was read before the 403: identity audit)
    nc, reads = await record_reads(nats_url)
    code, err = await asyncio.to_thread(call, st.http(0), f"/api/replay/{gid}", token=other["token"])
    assert code == 403 and err["code"] == "not_your_game"
    await nc.flush()
    assert reads == []
    code, doc = await asyncio.to_thread(call, st.http(1), f"/api/replay/{gid}", token=c.ident["token"])
    assert code == 200 and doc["finished"] and doc["game"] == game
    await nc.flush()
    assert reads  # (the subject the test watches is the one a read uses)
    await nc.close()
    me = doc["my_seat"]
    rec = await fetch(nats_url, gid)
    assert rec is not None
    engine, _, _ = replay(record_from_json(rec))
    assert doc["steps"][-1]["view"] == json.loads(json.dumps(engine.view(me)))
    assert doc["steps"][-1]["view"]["finished"] is True
    assert doc["result"] == json.loads(json.dumps(engine.result()))
    # each step carries its input's events as this seat got them live (One
    # Card's replay log reads them): the record re-run, filtered for the seat
    assert [s["events"] for s in doc["steps"]] == json.loads(json.dumps(seat_events(rec, me)))
    if game != "onecard":
        assert len(doc["marks"]) >= 2 and doc["marks"][0] == 0
    # another seat's view after the end: its own hand, as its owner saw it
    seat = (me + 1) % seats
    code, theirs = call(st.http(0), f"/api/replay/{gid}?seat={seat}", token=c.ident["token"])
    assert code == 200 and theirs["steps"][0]["view"]["seat"] == seat
    assert theirs["steps"][0]["view"]["hand"] == engine_hand_at_deal(rec, seat)
    await c.close()


async def test_a_finished_replay_is_made_once_and_asked_a_few_at_a_time(
        st: Stack, nats_url: str, nats_server: NatsServer) -> None:
    """다시 보기 of a finished game (security audit: 32 asks at once from one
    token — each a whole record read and its game re-run — held every
    player's frames on that gateway up to 1.5 s). Asked again, it is the
    one made before (the record is not read again), with the names as
    they are now; one player's asks are made at most 2 at a time on a
    gateway, more are refused rate_limited (429)."""
    c, gid = await solo_finished(st, "또보기", "onecard", 2)
    http, token = st.http(1), c.ident["token"]
    code, first = await asyncio.to_thread(call, http, f"/api/replay/{gid}", token=token)
    assert code == 200 and first["finished"], first
    nc, reads = await record_reads(nats_url)
    code, renamed = call(http, "/api/nickname", {"nickname": "새이름"}, token)
    assert code == 200
    code, again = await asyncio.to_thread(call, http, f"/api/replay/{gid}", token=renamed["token"])
    await nc.flush()
    assert code == 200 and reads == [], reads
    mine = str(first["my_seat"])
    assert again["nicknames"][mine] == "새이름" and first["nicknames"][mine] == "또보기"
    assert {**again, "nicknames": first["nicknames"]} == first
    await nc.close()
    # eight at once, while JetStream does not answer (so each made one
    # waits: a kept replay is made in a millisecond, and asks that do not
    # overlap were all let in — CI): two are let in, the other six told at
    # once to wait a second; the two are made once it answers again
    got: list[tuple[int, dict[str, Any]]] = []
    answered = threading.Semaphore(0)

    def ask() -> None:
        got.append(call(http, f"/api/replay/{gid}", token=token))
        answered.release()
    asks = [threading.Thread(target=ask) for _ in range(8)]
    assert nats_server.proc is not None
    freeze(nats_server.proc)
    try:
        for t in asks:
            t.start()
        until = time.monotonic() + 4  # (within the store read's 5 s timeout)
        for _ in range(6):
            left = until - time.monotonic()
            assert left > 0 and await asyncio.to_thread(answered.acquire, timeout=left), got
        refused = list(got)
    finally:
        nats_server.proc.send_signal(signal.SIGCONT)
    for t in asks:
        await asyncio.to_thread(t.join)
    assert [code for code, _ in refused] == [429] * 6, refused
    assert all(d["code"] == "rate_limited" for _, d in refused)
    assert sorted(code for code, _ in got) == [200] * 2 + [429] * 6, got
    await c.close()


def seat_events(rec: dict[str, Any], seat: int) -> list[list[dict[str, Any]]]:
    """Per step (the deal, then each input that made events) the events as
    ``seat`` got them."""
    record = record_from_json(rec)
    engine = record.engine()
    out: list[list[dict[str, Any]]] = [[]]
    for inp in record.inputs:
        res = engine.apply(inp.t, inp.seat, inp.action)
        if res.events:
            out.append([e.for_seat(seat) for e in res.events])
    return out


def engine_hand_at_deal(rec: dict[str, Any], seat: int) -> Any:
    return record_from_json({**rec, "inputs": []}).engine().view(seat)["hand"]


async def test_live_games_list(st: Stack) -> None:
    c = await WSClient.signed_in(st.http(0), "관전거리")
    gid = await start_with_bot(c, "penalty_rows")
    row = await live_row(st, c.ident["token"], gid)
    assert row["game"] == "penalty_rows" and row["players"][0]["nickname"] == "관전거리"
    assert "substituted" not in row["players"][0]  # playing: no bot stands in for them
    assert row["bots"] == [{"seat": 1, "level": "easy"}]  # named as the players see them
    await c.action(gid, {"type": "leave"})
    await asyncio.sleep(0)
    await c.close()


async def test_live_games_list_puts_games_in_play_first(st: Stack) -> None:
    """A game whose players all left waits for them (RULES.md 4): listed
    after the games in play, though newer (the list is newest first)."""
    a = await WSClient.signed_in(st.http(0), "판하는중")
    playing = await start_with_bot(a, turn_ms=45000)
    b = await WSClient.signed_in(st.http(1), "자리비움")
    waiting = await start_with_bot(b, turn_ms=45000)
    await b.close()  # every player of it away: paused
    await live_row(st, a.ident["token"], waiting, lambda r: r.get("paused") is True)
    code, live = call(st.http(1), "/api/live", token=a.ident["token"])
    assert code == 200
    order = [g["game_id"] for g in live["games"]]
    assert order.index(playing) < order.index(waiting), live["games"]
    assert not next(g for g in live["games"] if g["game_id"] == playing).get("paused")
    await a.action(playing, {"type": "leave"})
    await a.close()


async def live_row(st: Stack, token: str, gid: str,
                   pred: Any = lambda row: True) -> dict[str, Any]:
    """The game's row in the 관전 list once it matches (the list is cached
    for up to 2 s per gateway)."""
    deadline = time.monotonic() + 10
    while True:
        code, live = call(st.http(1), "/api/live", token=token)
        assert code == 200
        row = next((g for g in live["games"] if g["game_id"] == gid), None)
        if row is not None and pred(row):
            return row
        assert time.monotonic() < deadline, live
        await asyncio.sleep(0.3)


def public_events(rec: dict[str, Any]) -> list[dict[str, Any]]:
    record = record_from_json(rec)
    engine = record.engine()
    out = []
    for inp in record.inputs:
        for e in engine.apply(inp.t, inp.seat, inp.action).events:
            out.append(json.loads(json.dumps(e.for_seat(None))))
    return out


def hidden_cards(rec: dict[str, Any]) -> set[str]:
    """Every card dealt into a hand (One Card / Hakka card codes)."""
    engine = record_from_json({**rec, "inputs": []}).engine()
    out: set[str] = set()
    for seat in range(len(rec["seats"])):
        out |= {str(c) for c in engine.view(seat).get("hand") or []}
    return out


PRIVATE = ("hand", "selection", "my_discards")  # a seat's own view only


async def test_a_made_up_game_id_is_refused_without_asking_a_shard(st: Stack, nats_url: str) -> None:
    """Fuzz finding: a ``spectate`` of a well-formed id that is no game
    held the connection about a second (its view asked three times of a
    shard that might be taking the game over); 30,000 of them kept a client
    that had gone counted at its table for minutes. The game directory
    says there is no such game: refused at once, no shard asked."""
    gid = "nosuchgame1"
    nc = await nats.connect(nats_url)
    asked: list[bytes] = []

    async def answer(msg: Any) -> None:  # a shard would answer; this one counts
        asked.append(msg.data)
        await msg.respond(b'{"ok": false, "code": "unknown_game"}')

    sub = await nc.subscribe(Subjects().sync(gid), cb=answer)
    w = await WSClient.signed_in(st.http(0), "없는판")
    try:
        for _ in range(5):
            await w.send({"type": "spectate", "game_id": gid})
            err = await w.wait_type("error")
            assert (err["code"], err["ref"]) == ("unknown_game", "spectate"), err
        await w.send({"type": "ping"})
        await w.wait_type("pong")
        await nc.flush()
        assert asked == []
    finally:
        await w.close()
        await sub.unsubscribe()
        await nc.close()


@pytest.mark.parametrize("game,seats", [("onecard", 3), ("penalty_rows", 2), ("hakka", 4)])
async def test_spectator_frames_are_public_only(st: Stack, nats_url: str, game: str,
                                                seats: int) -> None:
    """The leak test for spectator frames: exactly the public projection
    (tests/unit/test_spectator_leaks.py shows that projection never holds a
    hidden card, every game), no private field, no dealt card."""
    c, gid = await solo_started(st, "보여줄게", game, seats,
                                **({"rounds": 1} if game == "penalty_rows" else {}))
    await c.send({"type": "spectate", "game_id": gid})  # not one's own game
    assert (await c.wait_type("error"))["code"] == "in_game"
    await live_row(st, c.ident["token"], gid)
    w = await WSClient.signed_in(st.http(1), "구경꾼")  # on the other gateway
    await w.send({"type": "spectate", "game_id": gid})
    first = await w.wait_type("spectate_view")
    assert first["game_id"] == gid and first["view"].get("seat") is None
    # who sits where, by nickname and bot level, never by player id (a watch
    # page opened from a link named every seat 봇N)
    people = first["players"]
    assert [p["seat"] for p in people] == list(range(seats)), people
    assert [p for p in people if p["kind"] == "human"] == [{"seat": 0, "kind": "human", "nickname": "보여줄게"}]
    assert all(p["kind"] == "bot" and p["level"] for p in people[1:]), people
    assert c.ident["player"] not in json.dumps(first)
    await c.action(gid, {"type": "leave"})  # the bots play it out at once
    await w.wait_event(lambda e: e["type"] in ("game_over", "game_ended"), 120)
    frames = [f for f in w.frames if f.get("type", "").startswith("spectate_")]
    rec = await fetch(nats_url, gid)
    assert rec is not None
    # exactly the engine's public projection, in order, nothing else
    events = [e for f in frames for e in flat(f)]
    spec = [e["event"] for e in events]
    assert spec == public_events(rec)[-len(spec):]
    seqs = [e["game_seq"] for e in events]
    assert seqs == list(range(first["game_seq"] + 1, first["game_seq"] + 1 + len(seqs)))
    # and no hand, no card of a hand that was not played face up: in the
    # views pushed with every update and in the events
    hands = hidden_cards(rec)
    for f in frames:
        for body in [f.get("view") or {}] + [e["event"] for e in flat(f)]:
            assert not any(body.get(k) for k in PRIVATE), body
            if body.get("type") in ("drew", "dealt", "took"):
                text = json.dumps(body)
                assert not any(f'"{card}"' in text for card in hands), body
    await w.send({"type": "spectate_stop"})
    await w.wait_type("spectate_stopped")
    await c.close()
    await w.close()


def count_is(n: int) -> Any:
    return lambda f: f.get("type") == "spectators" and f["count"] == n


async def test_spectator_count_across_gateways(st: Stack) -> None:
    """A player at the table and the spectators see how many watch, with
    spectators on both gateways (gateway/watchers.py)."""
    c = await WSClient.signed_in(st.http(0), "인기있는판")
    gid = await start_with_bot(c, turn_ms=45000)
    await c.send({"type": "sync", "game_id": gid})
    await c.wait_for(count_is(0))
    w1 = await WSClient.signed_in(st.http(1), "구경1")
    w2 = await WSClient.signed_in(st.http(0), "구경2")
    await w1.send({"type": "spectate", "game_id": gid})
    await w1.wait_type("spectate_view")
    await c.wait_for(count_is(1))
    await w2.send({"type": "spectate", "game_id": gid})
    await w2.wait_type("spectate_view")
    await c.wait_for(count_is(2))
    await w1.wait_for(count_is(2))  # the other gateway's spectator is counted there too
    row = await live_row(st, w1.ident["token"], gid, lambda r: r["spectators"] == 2)
    assert row["seats"] == 2 and len(row["cards"]) == 2
    await w1.send({"type": "spectate_stop"})
    await w1.wait_type("spectate_stopped")
    await c.wait_for(count_is(1))
    await w2.close()  # closing counts as leaving
    await c.wait_for(count_is(0))
    await c.action(gid, {"type": "leave"})
    await c.close()
    await w1.close()


async def test_spectators_see_the_players_reactions(st: Stack) -> None:
    """A player's quick reaction reaches the game's spectators on every
    gateway (docs/websocket.md 3.2) as the players get it, and no longer
    once they stop watching."""
    c = await WSClient.signed_in(st.http(0), "반응하는이")
    gid = await start_with_bot(c, turn_ms=45000)
    seat = (await c.wait_type("view"))["view"]["seat"]
    w = await WSClient.signed_in(st.http(1), "반응구경")
    await w.send({"type": "spectate", "game_id": gid})
    await w.wait_type("spectate_view")
    await c.send({"type": "emote", "emote": "wow"})
    got = await w.wait_type("emote")
    assert {k: got[k] for k in ("game_id", "seat", "emote")} == {
        "game_id": gid, "seat": seat, "emote": "wow"}
    await w.send({"type": "spectate_stop"})
    await w.wait_type("spectate_stopped")
    await c.send({"type": "emote", "emote": "nice"})
    assert (await c.wait_for(lambda f: f.get("type") == "emote" and f["emote"] == "nice"))
    await asyncio.sleep(0.5)
    assert [f["emote"] for f in w.frames if f.get("type") == "emote"] == ["wow"]
    await c.action(gid, {"type": "leave"})
    await c.close()
    await w.close()


async def test_a_player_who_left_may_watch_the_game_go_on(st: Stack) -> None:
    """RULES.md 4: a player who left "may watch but not retake the seat";
    the README: a left game can be watched from the lobby's 관전 list. A
    trial found 관전 on it refused "이미 게임 중이에요." (``in_game``). The
    watch is a spectator's (the public view: the seat is the bot's now)."""
    from wsclient import two_in_a_room

    host = await WSClient.signed_in(st.http(0), "남는사람")
    guest = await WSClient.signed_in(st.http(0), "나간사람")
    await two_in_a_room(host, guest, "onecard", seats=3)
    await host.send({"type": "room_add_bot", "level": "easy"})
    await host.wait_for(lambda f: f.get("type") == "room" and len(f["room"]["members"]) == 3)
    await host.send({"type": "room_start"})
    gid = (await guest.wait_type("matched", 20))["game_id"]
    await guest.send({"type": "spectate", "game_id": gid})  # still seated: its own view
    assert (await guest.wait_type("error"))["code"] == "in_game"
    assert (await guest.action(gid, {"type": "leave"}))["type"] == "result"
    await guest.send({"type": "spectate", "game_id": gid})
    watched = await guest.wait_type("spectate_view")
    assert watched["game_id"] == gid and watched["view"].get("seat") is None
    assert "hand" not in watched["view"]
    left = next(p for p in watched["players"] if p.get("nickname") == "나간사람")
    assert watched["view"]["seats"][left["seat"]]["substituted"]
    await guest.send({"type": "spectate_stop"})
    await guest.wait_type("spectate_stopped")
    await host.action(gid, {"type": "leave"})
    for c in (host, guest):
        await c.close()


async def test_host_turns_spectating_off(st: Stack) -> None:
    c = await WSClient.signed_in(st.http(0), "비공개판")
    await c.send({"type": "room_create", "game": "onecard", "seats": 2})
    await c.wait_type("room")
    await c.send({"type": "room_options", "options": {"spectators": "no"}})
    assert (await c.wait_type("error"))["code"] == "bad_option"
    await c.send({"type": "room_leave"})
    await c.wait_type("room_left")
    gid = await start_with_bot(c, spectators=False)
    code, live = call(st.http(1), "/api/live", token=c.ident["token"])
    assert code == 200 and all(g["game_id"] != gid for g in live["games"])
    w = await WSClient.signed_in(st.http(1), "못보는이")
    await w.send({"type": "spectate", "game_id": gid})
    err = await w.wait_type("error")
    assert err["code"] == "no_spectating" and err["message"] == "이 게임은 관전할 수 없어요."
    assert not [f for f in w.frames if f.get("type") == "spectate_view"]
    await c.action(gid, {"type": "leave"})
    await c.close()
    await w.close()
