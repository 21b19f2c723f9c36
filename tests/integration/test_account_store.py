"""The account routes and the stores behind them (docs/websocket.md 1.1–1.3,
docs/protocol.md 5 ``ttanjit_identity``), with a real nats-server: signing
in never waits for the leaderboards' ratings, JetStream away is a 503
``store_unavailable`` that changes nothing, nicknames are read when a page
names their player — never all of them at a gateway's start — kept in a
bounded cache that follows their changes, and the 관전 list reads the live
games, not the directory of every game of the last 7 days."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import nats
import orjson
import pytest
from conftest import Services
from nats.errors import TimeoutError as NatsTimeout
from stack import stack
from wsclient import WSClient, start_with_bot

from ttanjit.common.nats import (
    GAMES_BUCKET,
    IDENTITY_BUCKET,
    RATINGS_BUCKET,
    Subjects,
    ensure_jetstream,
)
from ttanjit.gateway.account import Nicknames
from ttanjit.gateway.errors import MESSAGES
from ttanjit.loadtest.client import sign_in

SECRET = "test-secret"


def call(http: str, path: str, body: Any = None, token: str | None = None
         ) -> tuple[int, dict[str, Any], str | None]:
    """(status, JSON body, Retry-After) of a request to the gateway."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(http + path, data=data, headers=headers,
                                 method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read()), r.headers.get("Retry-After")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), e.headers.get("Retry-After")


def unavailable() -> dict[str, str]:
    return {"code": "store_unavailable", "message": MESSAGES["store_unavailable"]}


async def test_signing_in_does_not_wait_for_the_leaderboards(svc: Services) -> None:
    """The ratings cannot be read (their bucket is gone): a guest still
    gets a lasting identity and refreshes it; the leaderboard answers 503
    ``store_unavailable`` until the ratings are back, then answers."""
    gw = svc.start("gateway", name="gateway", env={
        "TTANJIT_MATCHMAKER_ADDR": "127.0.0.1:1", "TTANJIT_TOKEN_SECRET": SECRET})
    http = f"http://127.0.0.1:{gw.ports['http']}"
    nc = await nats.connect(svc.nats_url)
    js = nc.jetstream()
    try:
        await js.delete_key_value(RATINGS_BUCKET)
        code, me, _ = call(http, "/api/guest", {"nickname": "먼저온이"})
        assert code == 200 and me["refresh"], me  # the lasting identity, not a one-tab guest
        code, again, _ = call(http, "/api/refresh", {"refresh": me["refresh"]})
        assert code == 200 and again["player"] == me["player"], again
        assert again["nickname"] == "먼저온이"
        code, err, retry = call(http, "/api/leaderboard/onecard")
        assert (code, err, retry) == (503, unavailable(), "2")
        await ensure_jetstream(js, Subjects())  # the ratings back (empty)
        code, board, _ = call(http, "/api/leaderboard/onecard")
        assert code == 200 and board["players"] == 0 and board["entries"] == [], board
        assert "Traceback" not in gw.log()
    finally:
        await nc.close()


async def test_jetstream_away_is_store_unavailable_and_changes_nothing(svc: Services) -> None:
    """NATS stops: a refresh answers 503 ``store_unavailable`` (with
    ``Retry-After``), not a 500 with a traceback; the credential it carried
    was not rotated, so it still works once NATS is back. A new guest's
    sign-in answers the same rather than sign them in without a lasting
    identity."""
    gw = svc.start("gateway", name="gateway", env={
        "TTANJIT_MATCHMAKER_ADDR": "127.0.0.1:1", "TTANJIT_TOKEN_SECRET": SECRET})
    http = f"http://127.0.0.1:{gw.ports['http']}"
    code, me, _ = call(http, "/api/guest", {"nickname": "기다리는이"})
    assert code == 200 and me["refresh"]
    svc.nats.stop()
    try:
        code, err, retry = call(http, "/api/refresh", {"refresh": me["refresh"]})
        assert (code, err, retry) == (503, unavailable(), "2")
        # a replay whose record cannot be read now: later, not "no record"
        # (404 no_record said the game had none: docs audit)
        code, err, retry = call(http, "/api/replay/g0000000000000000000000001", token=me["token"])
        assert (code, err, retry) == (503, unavailable(), "2")
        # a new guest is not signed in on a token alone (forgotten in an hour)
        code, err, retry = call(http, "/api/guest", {"nickname": "새로온이"})
        assert (code, err, retry) == (503, unavailable(), "2")
        # the load tester's players sign in again after Retry-After, as a person would
        web = httpx.AsyncClient()
        signing = asyncio.create_task(sign_in(web, http, "기다린이"))
        for _ in range(300):  # until its first try was refused too
            if gw.log().count("no lasting identity for a new guest") >= 2:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)  # (the refusal on its way back)
        assert not signing.done()
    finally:
        svc.nats.start()
    waited = await signing
    await web.aclose()
    assert waited["refresh"] and waited["nickname"] == "기다린이", waited
    for _ in range(100):  # the gateway reconnects
        code, r, _ = call(http, "/api/refresh", {"refresh": me["refresh"]})
        if code != 503:
            break
        await asyncio.sleep(0.2)
    assert code == 200 and r["player"] == me["player"] and r["refresh"] != me["refresh"], r
    code, new, _ = call(http, "/api/guest", {"nickname": "새로온이"})
    assert code == 200 and new["refresh"] and new["player"] != me["player"], new
    log = gw.log()
    assert "account store unavailable" in log and "Traceback" not in log


async def test_nicknames_are_read_when_asked_bounded_and_followed(nats_url: str) -> None:
    """Nothing is read at start; a name is read when asked for ("손님" when
    the player has none); the cache keeps ``max_size`` names, the least
    recently asked going first; a change of a kept name arrives without a
    read, a change of a name nobody asked for is not kept."""
    nc = await nats.connect(nats_url)
    try:
        kv = (await ensure_jetstream(nc.jetstream(), Subjects()))[IDENTITY_BUCKET]
        run = uuid.uuid4().hex[:8]
        pids = [f"p_{run}{i:02d}" for i in range(8)]
        for i, p in enumerate(pids):
            await kv.put(f"n.{p}", orjson.dumps({"nickname": f"이름{i}", "changed_ms": 1}))
        reads: list[str] = []

        class Counted:  # the real bucket, its reads counted
            async def get(self, key: str) -> Any:
                reads.append(key)
                return await kv.get(key)

        names = Nicknames(nc, Counted(), max_size=5)  # type: ignore[arg-type]
        await names.start()
        try:
            assert not names.cache and not reads  # nothing read at start
            got = await names.names([pids[0], pids[1], f"p_{run}none"])
            assert got == {pids[0]: "이름0", pids[1]: "이름1", f"p_{run}none": "손님"}
            assert len(reads) == 3
            assert await names.names([pids[0]]) == {pids[0]: "이름0"} and len(reads) == 3
            # a change of a kept name comes by the subscription, without a read
            await kv.put(f"n.{pids[0]}", orjson.dumps({"nickname": "새이름", "changed_ms": 2}))
            await kv.put(f"n.{pids[7]}", orjson.dumps({"nickname": "안물어봄", "changed_ms": 2}))
            for _ in range(100):
                if names.cache[pids[0]][0] == "새이름":
                    break
                await asyncio.sleep(0.02)
            assert await names.names([pids[0]]) == {pids[0]: "새이름"} and len(reads) == 3
            assert pids[7] not in names.cache  # nobody asked for it here
            # bounded: asking for more drops the least recently asked
            await names.names(pids[2:6])
            assert len(names.cache) == 5
            assert pids[1] not in names.cache and pids[0] in names.cache
            # an older read never overwrites a newer change
            names._keep(pids[0], "옛이름", 1)
            assert names.cache[pids[0]][0] == "새이름"
        finally:
            await names.stop()
    finally:
        await nc.close()


async def test_a_change_missed_while_away_is_read_again(nats_url: str) -> None:
    """A kept name older than ``max_age_s`` is read again: a change that
    came while the gateway did not follow (NATS away) shows after that."""
    nc = await nats.connect(nats_url)
    try:
        kv = (await ensure_jetstream(nc.jetstream(), Subjects()))[IDENTITY_BUCKET]
        pid = f"p_{uuid.uuid4().hex[:10]}"
        await kv.put(f"n.{pid}", orjson.dumps({"nickname": "처음", "changed_ms": 1}))
        names = Nicknames(nc, kv, max_age_s=5)
        assert await names.names([pid]) == {pid: "처음"}  # not following (never started)
        await kv.put(f"n.{pid}", orjson.dumps({"nickname": "나중", "changed_ms": 2}))
        assert await names.names([pid]) == {pid: "처음"}  # kept, not yet read again
        # the kept name grows older than max_age_s (not waited for: a loaded
        # machine's put and read took more than a short max age)
        nick, changed, read_at = names.cache[pid]
        names.cache[pid] = (nick, changed, read_at - 6)
        assert await names.names([pid]) == {pid: "나중"}
    finally:
        await nc.close()


async def test_a_change_during_the_first_read_is_not_lost(nats_url: str) -> None:
    """A name changes while its first read is under way (the read's answer
    is the old one): the change, which came by the subscription, stays."""
    nc = await nats.connect(nats_url)
    try:
        kv = (await ensure_jetstream(nc.jetstream(), Subjects()))[IDENTITY_BUCKET]
        pid = f"p_{uuid.uuid4().hex[:10]}"
        await kv.put(f"n.{pid}", orjson.dumps({"nickname": "옛날", "changed_ms": 1}))
        answered, release = asyncio.Event(), asyncio.Event()

        class Slow:  # the real bucket, its answer handed over late
            async def get(self, key: str) -> Any:
                entry = await kv.get(key)
                answered.set()
                await release.wait()
                return entry

        names = Nicknames(nc, Slow())  # type: ignore[arg-type]
        await names.start()
        try:
            asking = asyncio.create_task(names.names([pid]))
            await answered.wait()
            await kv.put(f"n.{pid}", orjson.dumps({"nickname": "지금", "changed_ms": 2}))
            for _ in range(100):
                if pid in names.cache:
                    break
                await asyncio.sleep(0.02)
            release.set()
            assert await asking == {pid: "지금"}
            assert await names.names([pid]) == {pid: "지금"}
        finally:
            await names.stop()
    finally:
        await nc.close()


async def test_the_live_list_finds_a_game_behind_many_finished_ones(svc: Services) -> None:
    """The 관전 list holds a live game however many games ended after it
    started: 600 finished games' directory entries came later (the
    directory keeps every game of 7 days; the list looked only at its
    newest 500 entries)."""
    with stack(svc.nats_url, shards=1, gateways=1, bots=True) as st:
        http = st.http(0)
        c = await WSClient.signed_in(http, "오래하는중")
        gid = await start_with_bot(c, "penalty_rows")
        nc = await nats.connect(svc.nats_url)
        try:
            games = await nc.jetstream().key_value(GAMES_BUCKET)
            done = orjson.dumps({"game": "onecard", "players": {}, "seats": [],
                                 "state": "finished", "result": {"ended_by": "win"}})
            for i in range(600):
                await games.put(f"fin{i:09d}", done)
        finally:
            await nc.close()
        await asyncio.sleep(2.1)  # the list is cached 2 s per gateway
        code, live, _ = call(http, "/api/live", token=c.ident["token"])
        assert code == 200
        assert [g["game_id"] for g in live["games"]] == [gid], live
        await c.action(gid, {"type": "leave"})
        await c.close()


async def test_a_refresh_whose_answer_is_lost_keeps_the_player_signed_in(
        nats_url: str) -> None:
    """The rotation is written but its acknowledgement never comes (NATS
    away at that moment): the answer still carries the new credential
    (the rotation is read back), which goes on working. Before, the answer
    was an error, the client kept the replaced secret, and its next
    refresh after 60 s revoked the family: the guest was signed out for
    good, their player id, ratings and history gone with it."""
    from ttanjit.gateway.identity import Identities
    from ttanjit.matchmaker import standings

    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        kv = (await ensure_jetstream(js, Subjects()))[IDENTITY_BUCKET]
        ids = Identities(kv, js)
        pid = f"p_{uuid.uuid4().hex[:10]}"
        await ids.set_nickname(pid, "잃지않기", standings.now_ms())
        cred = await ids.create(pid, standings.now_ms())
        real = ids.expiring.put

        async def landed_unanswered(*args: Any, **kw: Any) -> None:
            await real(*args, **kw)
            raise NatsTimeout

        ids.expiring.put = landed_unanswered  # type: ignore[method-assign]
        r = await ids.refresh(cred, standings.now_ms())
        assert r.refresh and r.refresh != cred and r.nickname == "잃지않기"
        ids.expiring.put = real  # type: ignore[method-assign]
        later = standings.now_ms() + 120_000  # past the grace period
        again = await ids.refresh(r.refresh, later)
        assert again.player == pid and again.refresh
    finally:
        await nc.close()


async def test_a_refresh_that_fails_before_rotating_changes_nothing(nats_url: str) -> None:
    """The player's nickname cannot be read (NATS away): the refresh fails
    before the credential is rotated, so the credential is as it was — a
    refresh later (past the grace period) rotates it, not revokes it."""
    from ttanjit.gateway.identity import Identities
    from ttanjit.matchmaker import standings

    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        kv = (await ensure_jetstream(js, Subjects()))[IDENTITY_BUCKET]
        pid = f"p_{uuid.uuid4().hex[:10]}"

        class NicknamesAway:  # the real bucket; nicknames unreadable once
            def __init__(self) -> None:
                self.away = True

            def __getattr__(self, name: str) -> Any:
                return getattr(kv, name)

            async def get(self, key: str, *a: Any, **kw: Any) -> Any:
                if key.startswith("n.") and self.away:
                    self.away = False
                    raise NatsTimeout
                return await kv.get(key, *a, **kw)

        ids = Identities(NicknamesAway(), js)  # type: ignore[arg-type]
        cred = await ids.create(pid, standings.now_ms())
        with pytest.raises(NatsTimeout):
            await ids.refresh(cred, standings.now_ms())
        later = standings.now_ms() + 120_000
        r = await ids.refresh(cred, later)  # the same credential, still the current one
        assert r.player == pid and r.refresh and r.refresh != cred
    finally:
        await nc.close()


async def test_a_saved_session_is_read_again_when_jetstream_falters(nats_url: str) -> None:
    """A hello reads the player's saved session; JetStream does not answer
    the first reads: the gateway reads again rather than start a new
    session, which forgot the game the player had left by choice (they
    were seated back in it until it ended)."""
    from ttanjit.common.config import Settings
    from ttanjit.common.nats import SESSIONS_BUCKET
    from ttanjit.gateway.app import Gateway
    from ttanjit.gateway.session import Session

    nc = await nats.connect(nats_url)
    try:
        kv = (await ensure_jetstream(nc.jetstream(), Subjects()))[SESSIONS_BUCKET]
        pid = f"p_{uuid.uuid4().hex[:10]}"
        saved = Session(f"s_{uuid.uuid4().hex[:10]}", pid, "떠난이")
        saved.new_game("gleftbychoi", 1)
        saved.walked_out()
        await kv.put(saved.id, orjson.dumps(saved.to_json()))
        await kv.put(f"player.{pid}", orjson.dumps({"session": saved.id}))

        class Faltering:  # the real bucket; its first two reads time out
            def __init__(self) -> None:
                self.failures = 2

            async def get(self, key: str) -> Any:
                if self.failures:
                    self.failures -= 1
                    raise NatsTimeout
                return await kv.get(key)

        gw = Gateway(Settings(token_secret="x" * 32))
        gw.nc, gw.kv = nc, Faltering()  # type: ignore[assignment]

        class Newcomer:  # the connection saying hello
            id = "c_new"
            opened_at = (0, "c_new")

        prior = await gw.take_over(pid, Newcomer())  # type: ignore[arg-type]
        assert prior is not None and prior.id == saved.id and prior.left == "gleftbychoi"
    finally:
        await nc.close()


@contextlib.asynccontextmanager
async def identity_writes_capped(nats_url: str, max_bytes: int) -> AsyncIterator[None]:
    """While inside, the identity bucket refuses every message (headers and
    value) over ``max_bytes``; reads and every other bucket are as before."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    info = await js.stream_info(f"KV_{IDENTITY_BUCKET}")
    await js.update_stream(dataclasses.replace(info.config, max_msg_size=max_bytes))
    try:
        yield
    finally:
        await js.update_stream(info.config)
        await nc.close()


async def test_a_sign_out_that_cannot_be_written_says_so_and_revokes_nothing(
        svc: Services) -> None:
    """JetStream does not take the removal: 로그아웃 answers 503
    ``store_unavailable`` (the web client then keeps the player signed in
    and says so). Before, it answered ``revoked: true`` while the
    credential went on working for 180 days."""
    gw = svc.start("gateway", name="gateway", env={
        "TTANJIT_MATCHMAKER_ADDR": "127.0.0.1:1", "TTANJIT_TOKEN_SECRET": SECRET})
    http = f"http://127.0.0.1:{gw.ports['http']}"
    code, me, _ = call(http, "/api/guest", {"nickname": "나갈사람"})
    assert code == 200
    async with identity_writes_capped(svc.nats_url, 1):
        code, err, retry = call(http, "/api/signout", {"refresh": me["refresh"]})
        assert (code, err, retry) == (503, unavailable(), "2")
    code, r, _ = call(http, "/api/refresh", {"refresh": me["refresh"]})
    assert code == 200 and r["player"] == me["player"], r  # as it was: nothing revoked
    assert call(http, "/api/signout", {"refresh": r["refresh"]})[:2] == (200, {"revoked": True})
    code, gone, _ = call(http, "/api/refresh", {"refresh": r["refresh"]})
    assert (code, gone["code"]) == (401, "bad_refresh")


async def test_a_transfer_code_whose_claim_failed_half_way_still_works_once(
        svc: Services) -> None:
    """The code is read and the new device's credential cannot be written
    (JetStream refuses it): the claim answers 503 and the code is not spent,
    so the same code works once JetStream takes writes again — once. Before,
    the code was spent first and the claim then failed: the player had to
    fetch a new code from the other device."""
    gw = svc.start("gateway", name="gateway", env={
        "TTANJIT_MATCHMAKER_ADDR": "127.0.0.1:1", "TTANJIT_TOKEN_SECRET": SECRET})
    http = f"http://127.0.0.1:{gw.ports['http']}"
    code, me, _ = call(http, "/api/guest", {"nickname": "옮겨가요"})
    code, got, _ = call(http, "/api/transfer", {}, token=me["token"])
    assert code == 200, got
    # a code's removal (a purge marker, ~100 bytes) is taken; a new family
    # (~270 bytes) is not
    async with identity_writes_capped(svc.nats_url, 200):
        code, err, retry = call(http, "/api/transfer/claim", {"code": got["code"]})
        assert (code, err, retry) == (503, unavailable(), "2")
    code, other, _ = call(http, "/api/transfer/claim", {"code": got["code"]})
    assert code == 200 and other["player"] == me["player"] and other["refresh"], other
    code, again, _ = call(http, "/api/transfer/claim", {"code": got["code"]})
    assert (code, again["code"]) == (400, "bad_code")


@pytest.mark.parametrize("cred", ["한글.x", "١٢.x", "²³.x", "abc.\ud800"])
async def test_a_credential_no_store_could_hold_is_a_bad_refresh(svc: Services, cred: str) -> None:
    """Letters beyond ASCII pass ``isalnum``: such a family reached the
    store, which cannot name a key with them, and the answer was 503 "try
    again" (a secret with a lone surrogate: a 500). It is 401 ``bad_refresh``,
    and signing out with it revokes nothing (found by an audit)."""
    gw = svc.start("gateway", name="gateway", env={
        "TTANJIT_MATCHMAKER_ADDR": "127.0.0.1:1", "TTANJIT_TOKEN_SECRET": SECRET})
    http = f"http://127.0.0.1:{gw.ports['http']}"
    code, err, _ = call(http, "/api/refresh", {"refresh": cred})
    assert (code, err["code"]) == (401, "bad_refresh"), err
    assert call(http, "/api/signout", {"refresh": cred})[:2] == (200, {"revoked": False})
    assert "Traceback" not in gw.log() and "store unavailable" not in gw.log()
