"""ttanjit's NATS users (ttanjit.common.natsauth; README "Install", step 2):
the bot workers' user may take the shards' asks and answer them, nothing
else; the gateways' user may do a gateway's work and not a shard's or a
matchmaker's — on the tests' nats-server (every integration test's bot
worker and gateway is that user) and as deploy/nats/values.yaml gives them
to the NATS chart."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import nats
import orjson
import pytest
import yaml
from conftest import PASSWORD, USERS, Services
from stack import stack
from wsclient import WSClient, start_with_bot

from ttanjit.common import natsauth
from ttanjit.common.nats import subscribed
from ttanjit.common.natsserver import NatsServer, free_port, nats_server_binary, wait_port

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "ttanjit.v1"


async def refused_to(url: str) -> tuple[Any, list[str]]:
    """A connection as the user in ``url`` (no reconnects) and the list its
    refusals are said into, as NATS tells them."""
    refused: list[str] = []

    async def on_error(exc: Exception) -> None:
        refused.append(str(exc))
    return await nats.connect(url, error_cb=on_error, max_reconnect_attempts=0), refused


async def bots_user_is_held_to_asks(full_url: str, bots_url: str) -> None:
    """As the bots' user: an ask in the queue group is taken and answered;
    a player's frames, a game's public part and every subject are not
    heard, no command or event is published, JetStream does not answer,
    and the asks are not heard outside the queue group."""
    services = await nats.connect(full_url)
    bot, refused = await refused_to(bots_url)
    try:
        heard: list[str] = []

        async def overheard(msg: Any) -> None:
            heard.append(msg.subject)

        async def answer(msg: Any) -> None:
            await msg.respond(b'{"action": {"type": "draw"}}')
        await bot.subscribe(f"{PREFIX}.bots.decide", queue=natsauth.BOTS_QUEUE, cb=answer)
        for subject in (f"{PREFIX}.player.*.events", f"{PREFIX}.game.*.public", ">"):
            await bot.subscribe(subject, cb=overheard)
        await bot.subscribe(f"{PREFIX}.bots.decide", cb=overheard)  # (no queue group)
        commands = await services.subscribe(f"{PREFIX}.game.*.cmd")
        await subscribed(services)  # (one flush is not enough: common.nats.subscribed)
        await bot.publish(f"{PREFIX}.game.g1.cmd", b'{"type": "action"}')
        await bot.publish(f"{PREFIX}.player.p1.events", b"{}")
        await subscribed(bot)  # (its queue subscription held: CI once had no responder)
        reply = await services.request(f"{PREFIX}.bots.decide", b"{}", timeout=5)
        assert json.loads(reply.data) == {"action": {"type": "draw"}}
        await services.publish(f"{PREFIX}.player.p1.events", b'{"hand": ["S1"]}')
        await services.publish(f"{PREFIX}.game.g1.public", b"{}")
        await services.flush()
        with pytest.raises(nats.errors.TimeoutError):
            await bot.jetstream(timeout=1).account_info()
        await asyncio.sleep(0.3)
        await bot.flush()
        assert heard == [] and commands.pending_msgs == 0
        wanted = [f'subscription to "{PREFIX}.player.*.events"',
                  f'subscription to "{PREFIX}.game.*.public"', 'subscription to ">"',
                  f'subscription to "{PREFIX}.bots.decide"',
                  f'publish to "{PREFIX}.game.g1.cmd"', f'publish to "{PREFIX}.player.p1.events"',
                  'publish to "$js.api.info"']
        for w in wanted:
            assert any(w.lower() in r.lower() for r in refused), (w, refused)
    finally:
        await bot.close()
        await services.close()


async def gateway_user_is_held(full_url: str, gateway_url: str) -> None:
    """As the gateways' user, on a server whose streams a shard has made:
    what a gateway does works (sessions, sign-ins and 관전 counts written,
    the other buckets and the records read, commands and lobby frames
    sent); a game's record or result, a shard's say and the other buckets
    are not written, no stream is made, changed, purged or emptied of a
    message, no durable consumer made or deleted — and NATS says so for
    each. (A server of the test's own: a permission missing from the list
    would delete its streams.)"""
    from ttanjit.common.nats import (
        GAMES_BUCKET,
        HISTORY_BUCKET,
        IDENTITY_BUCKET,
        LOBBY_BUCKET,
        OWNERS_BUCKET,
        RATINGS_BUCKET,
        RECORDS_STREAM,
        RESULTS_STREAM,
        SESSIONS_BUCKET,
        WATCHERS_BUCKET,
        Subjects,
        ensure_jetstream,
        find_jetstream,
    )
    from ttanjit.shard import records

    services = await nats.connect(full_url)
    gw, refused = await refused_to(gateway_url)
    try:
        js = services.jetstream()
        made = await ensure_jetstream(js, Subjects())
        await made[OWNERS_BUCKET].put("g1", b'{"shard": "s1"}')
        await js.publish(f"{PREFIX}.record.g1", b'{"players": ["p1"]}')
        heard = await services.subscribe(f"{PREFIX}.>")
        # what a gateway does
        gjs = gw.jetstream(timeout=5)
        buckets = await find_jetstream(gjs, Subjects())
        for name in (SESSIONS_BUCKET, IDENTITY_BUCKET, WATCHERS_BUCKET):
            await buckets[name].put("k1", b"{}")
        assert (await buckets[OWNERS_BUCKET].get("g1")).value == b'{"shard": "s1"}'
        rec = await records.read(gjs, f"{PREFIX}.record.g1")
        assert rec is not None and rec.header == {"players": ["p1"]}
        await gw.publish(f"{PREFIX}.game.g1.cmd", b"{}")
        await gw.publish(f"{PREFIX}.player.p1.lobby", b"{}")
        # and what it may not
        denied = [f"{PREFIX}.record.g1", f"{PREFIX}.result.g1", f"{PREFIX}.shards.heartbeat",
                  f"{PREFIX}.shard.s1.adopt", f"{PREFIX}.bots.decide",
                  f"{PREFIX}.player.p1.events", f"{PREFIX}.gw.gw1.games",
                  f"{PREFIX}.game.g1.public",
                  *(f"$KV.{b}.g1" for b in (OWNERS_BUCKET, GAMES_BUCKET, RATINGS_BUCKET,
                                            LOBBY_BUCKET, HISTORY_BUCKET)),
                  *(f"$JS.API.STREAM.{op}.{RECORDS_STREAM}" for op in (
                      "CREATE", "UPDATE", "DELETE", "PURGE", "MSG.DELETE", "SNAPSHOT")),
                  f"$JS.API.STREAM.DELETE.KV_{SESSIONS_BUCKET}",
                  f"$JS.API.CONSUMER.DELETE.{RESULTS_STREAM}.matchmaker-ratings",
                  f"$JS.API.CONSUMER.DURABLE.CREATE.{RECORDS_STREAM}.mine",
                  f"$JS.API.CONSUMER.CREATE.{RECORDS_STREAM}.mine",
                  *(f"$JS.API.CONSUMER.{op}.{RESULTS_STREAM}.matchmaker-ratings"
                    for op in ("MSG.NEXT", "PAUSE", "RESET", "UNPIN", "INFO")),
                  f"$JS.API.CONSUMER.CREATE.{RESULTS_STREAM}",  # (a body naming the durable)
                  f"$JS.API.CONSUMER.NAMES.KV_{OWNERS_BUCKET}",
                  f"$JS.API.CONSUMER.LIST.KV_{OWNERS_BUCKET}",
                  f"$JS.ACK.{RESULTS_STREAM}.matchmaker-ratings.1.1.1.1.0"]
        for subject in denied:
            await gw.publish(subject, b'{"name": "x"}', reply="_INBOX.refused")
        # nor hear what a shard is asked (its answer would be the shard's say)
        asked = [f"{PREFIX}.game.*.cmd", f"{PREFIX}.game.g1.sync", f"{PREFIX}.shard.s1.adopt",
                 f"{PREFIX}.shards.heartbeat", f"{PREFIX}.bots.decide"]
        for subject in asked:
            await gw.subscribe(subject)
        await gw.subscribe(f"{PREFIX}.bots.decide", queue=natsauth.BOTS_QUEUE)
        await gw.flush()
        await asyncio.sleep(0.3)
        await services.flush()
        got = []
        while heard.pending_msgs:
            got.append((await heard.next_msg(timeout=1)).subject)
        assert got == [f"{PREFIX}.game.g1.cmd", f"{PREFIX}.player.p1.lobby"], got
        for subject in denied:
            assert any(f'publish to "{subject}"'.lower() in r.lower() for r in refused), (
                subject, refused)
        for subject in asked:
            assert any(f'subscription to "{subject}"'.lower() in r.lower() for r in refused), (
                subject, refused)
        assert any(f'subscription to "{PREFIX}.bots.decide" using queue'.lower() in r.lower()
                   for r in refused), refused
        assert (await js.stream_info(RECORDS_STREAM)).state.messages == 1
        assert (await made[OWNERS_BUCKET].get("g1")).value == b'{"shard": "s1"}'
        assert len(refused) == len(denied) + len(asked) + 1, refused  # (and nothing it does)
    finally:
        await gw.close()
        await services.close()


async def test_a_gateway_may_do_a_gateways_work_only(svc: Services) -> None:
    assert svc.nats is not None
    await gateway_user_is_held(svc.nats.url_as(natsauth.SERVICES),
                               svc.nats.url_as(natsauth.GATEWAY))


async def test_a_gateway_cannot_speak_for_a_shard_through_jetstream(svc: Services) -> None:
    """NATS checks what a user publishes, not where JetStream sends for it:
    as the gateways' user, a heartbeat written to a bucket it may write
    reaches the shards' heartbeat subject through a push consumer it makes
    (delivered there), and JetStream's answer to a read it asks with that
    reply subject reaches it too. The matchmaker drops the first
    (common.nats.relayed) and reads no shard in the second: it knows none,
    where the same heartbeat published by a shard makes games placeable
    (review finding: a forged heartbeat moved a shard's games to an
    address of the forger's)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

    from ttanjit.common.nats import SESSIONS_BUCKET, find_jetstream
    from ttanjit.common.nats import Subjects as Subj
    from ttanjit.matchmaker.readiness import PLACEMENT_SERVICE

    assert svc.nats is not None
    mm = svc.start("matchmaker", name="mm-forged")
    serving = health_pb2.HealthCheckResponse.SERVING
    heartbeat = f"{PREFIX}.shards.heartbeat"
    gw = await nats.connect(svc.nats.url_as(natsauth.GATEWAY))
    full = await nats.connect(svc.nats.url_as(natsauth.SERVICES))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{mm.ports['grpc']}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)

            def placeable() -> bool:
                return stub.Check(health_pb2.HealthCheckRequest(service=PLACEMENT_SERVICE),
                                  timeout=5).status == serving

            async def beat_for(s: float) -> bool:  # placeable at any time meanwhile
                for _ in range(int(s / 0.1)):
                    await asyncio.sleep(0.1)
                    if placeable():
                        return True
                return False
            assert not placeable()
            gjs = gw.jetstream(timeout=5)
            sessions = (await find_jetstream(gjs, Subj()))[SESSIONS_BUCKET]
            await gjs.add_consumer(f"KV_{SESSIONS_BUCKET}", ConsumerConfig(
                deliver_subject=heartbeat, filter_subject=f"$KV.{SESSIONS_BUCKET}.hb",
                deliver_policy=DeliverPolicy.NEW, ack_policy=AckPolicy.NONE,
                idle_heartbeat=0.5))  # (its idle heartbeats: empty, on the subject itself)
            heard = await full.subscribe(heartbeat)
            await full.flush()
            for _ in range(5):
                doc = orjson.dumps({"shard": "shard-forged", "grpc": "forger.example:50051",
                                    "games": 0, "players": 0, "draining": False,
                                    "capacity": 100000, "ts": int(time.time() * 1000)})
                await sessions.put("hb", doc)  # delivered onto the heartbeat subject
                await gw.publish(f"$JS.API.STREAM.MSG.GET.KV_{SESSIONS_BUCKET}",
                                 orjson.dumps({"last_by_subj": f"$KV.{SESSIONS_BUCKET}.hb"}),
                                 reply=heartbeat)  # answered onto it (a JSON wrapping)
                await gw.flush()
                await asyncio.sleep(0.2)
            got: list[Any] = []
            deadline = time.monotonic() + 10
            while len(got) < 10 and time.monotonic() < deadline:
                try:
                    m = await heard.next_msg(timeout=0.5)
                except nats.errors.TimeoutError:
                    continue
                if not (m.headers and "Status" in m.headers):  # (not an idle heartbeat)
                    got.append(m)
            # both ways, every time: they do reach the subject
            assert sorted(m.subject for m in got) == [f"$KV.{SESSIONS_BUCKET}.hb"] * 5 + [
                heartbeat] * 5, got
            assert not await beat_for(2.0), "a relayed heartbeat was taken for a shard's"
            assert "a heartbeat relayed by JetStream, dropped" in mm.log()
            assert "bad heartbeat" not in mm.log()  # (the idle heartbeats: relayed too)
            # the same beat, published by a shard's user: taken
            await full.publish(heartbeat, doc)
            await full.flush()
            assert await beat_for(5.0)
    finally:
        await gw.close()
        await full.close()


def test_a_gateway_waits_while_jetstream_does_not_answer(services: Services,
                                                          tmp_path: Path) -> None:
    """A gateway whose NATS has no JetStream yet (a cluster electing its
    leader; here a server started without it) waits for it, saying so,
    and stops at once when asked — it exited 1 with JetStream's 503
    (review finding)."""
    conf = tmp_path / "nats.conf"
    conf.write_text(natsauth.server_config(USERS), encoding="utf-8")
    port = free_port()
    with open(tmp_path / "server.log", "wb") as log:
        proc = subprocess.Popen([nats_server_binary(), "-c", str(conf), "-a", "127.0.0.1",
                                 "-p", str(port)], stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_port("127.0.0.1", port)
        url = natsauth.as_user(f"nats://127.0.0.1:{port}", natsauth.SERVICES, PASSWORD)
        gw = services.start("gateway", name="gateway-no-js", wait=False, streams_first=False,
                            env={"TTANJIT_NATS_URL": url})
        gw.wait_log("waiting for JetStream to answer", 30)
        assert gw.alive(), gw.log()
        assert gw.terminate(timeout=5) == 0, gw.log()
        assert "stopped before JetStream's streams were made" in gw.log()
    finally:
        proc.terminate()
        proc.wait(10)


def test_a_gateway_waits_for_a_shard_to_make_the_streams(svc: Services) -> None:
    """A gateway started on a NATS with no streams yet (a new install whose
    shards start after it) may not make them: it waits, saying so, and
    serves once a shard has made them; SIGTERM meanwhile stops it at once."""
    early = svc.start("gateway", name="gateway-early", wait=False, streams_first=False)
    early.wait_log("waiting for a shard or matchmaker to make JetStream's", 30)
    stopped = svc.start("gateway", name="gateway-stopped", wait=False, streams_first=False)
    stopped.wait_log("waiting for a shard or matchmaker to make JetStream's", 30)
    assert stopped.terminate(timeout=5) == 0, stopped.log()
    assert "stopped before JetStream's streams were made" in stopped.log()
    assert "gateway ready" not in early.log()
    svc.start("shard", name="shard-maker")
    early.wait_log('"msg":"gateway ready"', 30)
    assert "JetStream's streams and buckets are there" in early.log()


async def test_a_bot_worker_may_take_asks_and_answer_them_only(nats_server: NatsServer) -> None:
    await bots_user_is_held_to_asks(nats_server.url_as(natsauth.SERVICES),
                                    nats_server.url_as(natsauth.BOTS))
    assert "Subscription Violation" in nats_server.log()  # (said by the server too)


async def test_the_bot_workers_play_as_the_bots_user(nats_url: str,
                                                    nats_server: NatsServer) -> None:
    """A game the bots play out (its player left at once), whose worker is
    the bots' user: it ends (the worker needed nothing its user may not
    do), and the server refused that user nothing."""
    before = nats_server.log().count('"$G/user:ttanjit-bots"')
    with stack(nats_url, shards=1, gateways=1, bots=True) as st:
        assert st.bots is not None and f"{natsauth.BOTS}:" in st.bots.env["TTANJIT_NATS_URL"]
        c = await WSClient.signed_in(st.http(0), "봇상대")
        try:
            gid = await start_with_bot(c, "onecard")
            await c.action(gid, {"type": "leave"})
            await c.wait_event(lambda e: e["type"] in ("game_over", "game_ended"), 120)
        finally:
            await c.close()
    log = nats_server.log()
    assert log.count('"$G/user:ttanjit-bots"') == before, log[-2000:]


async def test_what_nats_refuses_is_counted_and_said(nats_server: NatsServer,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A subscription or publish NATS refuses a service's user is counted
    (ttanjit_nats_refused_total, alert TtanjitNatsRefused) and logged as an
    error saying what; the connection keeps the refusals it was told of."""
    from ttanjit.common.nats import connect, refusals, subscribed

    before = refused_count("subscribe"), refused_count("publish")
    nc = await connect(nats_server.url_as(natsauth.BOTS), "refusals-test")
    try:
        async def nothing(_: Any) -> None:
            pass
        await nc.subscribe(f"{PREFIX}.player.p1.events", cb=nothing)
        await nc.publish(f"{PREFIX}.game.g1.cmd", b"{}")
        await subscribed(nc)
        assert (refused_count("subscribe"), refused_count("publish")) == (before[0] + 1, before[1] + 1)
        said = refusals(nc)
        assert len(said) == 2 and f'"{PREFIX}.player.p1.events"' in said[0], said
        assert [r.levelname for r in caplog.records if "NATS refused" in r.getMessage()] == \
            ["ERROR", "ERROR"]
    finally:
        await nc.close()


async def test_an_answer_held_over_a_reconnect_is_dropped_not_counted(
        svc: Services, caplog: pytest.LogCaptureFixture) -> None:
    """NATS lets the bots' user answer an ask on the connection it came on
    only: a decision still being made when NATS restarted was answered on
    the next connection, refused, and counted as a misconfiguration (alert
    TtanjitNatsRefused paging at every NATS rolling restart under bot load:
    review finding). The worker drops such an answer (the shard asks
    again), and a refused late answer is not counted."""
    from ttanjit.bots.worker import BotWorker
    from ttanjit.common.nats import connect, refusals, subscribed

    caplog.set_level(logging.INFO, logger="ttanjit")
    server = svc.nats
    assert server is not None and server.users
    held: list[Any] = []
    bot = await connect(server.url_as(natsauth.BOTS), "late-answers")
    services = await connect(server.url, "asker")
    worker = BotWorker(bot, PREFIX)
    try:
        async def hold(msg: Any) -> None:  # (the worker's _on_msg, the decision not made yet)
            msg.ttanjit_conn = bot.stats["reconnects"]
            held.append(msg)
        await bot.subscribe(f"{PREFIX}.bots.decide", queue=natsauth.BOTS_QUEUE, cb=hold)
        await subscribed(bot)
        asks = [asyncio.ensure_future(services.request(f"{PREFIX}.bots.decide", b"{}", timeout=20))
                for _ in range(2)]
        for _ in range(100):
            if len(held) == 2:
                break
            await asyncio.sleep(0.05)
        assert len(held) == 2
        before = refused_count("publish")
        server.stop()
        server.start()  # (same port and store)
        for _ in range(200):
            if bot.is_connected and services.is_connected and bot.stats["reconnects"]:
                break
            await asyncio.sleep(0.05)
        assert bot.stats["reconnects"] >= 1
        # the worker's answer: dropped, nothing sent
        await worker._reply(held[0], {"action": {"type": "draw"}})
        # an answer sent all the same (the old way): refused, and not counted
        await held[1].respond(b'{"action": null}')
        await subscribed(bot)  # (a refusal is said before these flushes' answers)
        await asyncio.sleep(0.3)
        assert refused_count("publish") == before and refusals(bot) == []
        assert any("before it reconnected" in r.getMessage() for r in caplog.records)
        for ask in asks:
            ask.cancel()
        await asyncio.gather(*asks, return_exceptions=True)
    finally:
        await bot.close()
        await services.close()


def test_a_bot_worker_refused_its_subject_exits_saying_why(services: Services) -> None:
    """The bots' user allowed another prefix's asks than the worker's (the
    NATS chart's values and nats.prefix disagree): it exits 1 at its start,
    saying so — it was "ready" and healthy, and no ask ever reached it."""
    services.refusals_expected = True
    bots = services.start("bots", name="bots-other-prefix", wait=False,
                          env={"TTANJIT_NATS_PREFIX": "other.v1"})
    assert bots.proc.wait(30) == 1, bots.log()
    log = bots.log()
    assert "NATS refuses this user the bots' subject other.v1.bots.decide" in log, log
    assert "bot worker ready" not in log


def refused_count(op: str) -> float:
    """This process's ttanjit_nats_refused_total{op}."""
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value("ttanjit_nats_refused_total", {"op": op}) or 0.0


def chart_values() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "deploy/nats/values.yaml").read_text(encoding="utf-8"))


def test_the_nats_charts_users_are_ttanjits() -> None:
    """deploy/nats/values.yaml's users are natsauth's, their passwords from
    the Secret README step 2 makes."""
    values = chart_values()
    users = values["config"]["merge"]["authorization"]["users"]
    env = values["container"]["env"]
    passwords = {}
    for u in users:
        (var,) = re.fullmatch(r"<< \$(\w+) >>", u["password"]).groups()  # type: ignore[union-attr]
        assert env[var] == {"valueFrom": {"secretKeyRef": {
            "name": "ttanjit-nats-users", "key": u["user"]}}}
        passwords[u["user"]] = u["password"]
    assert users == natsauth.users(passwords, PREFIX)
    assert set(passwords) == {natsauth.SERVICES, natsauth.GATEWAY, natsauth.BOTS}


async def test_the_nats_charts_users_on_a_real_server() -> None:
    """The values' ``config.merge`` as nats-server reads it (the chart
    writes ``<< $X >>`` as ``$X``: the environment's), the passwords in
    the environment as the Secret puts them there: the services' user
    uses JetStream, the gateways' does a gateway's work only, the bots'
    user is held to asks and answers."""
    merge = chart_values()["config"]["merge"]
    conf = re.sub(r'"<< (\$\w+) >>"', r"\1", json.dumps(merge))
    passwords = {"TTANJIT_NATS_PASSWORD": secrets.token_hex(12),
                 "TTANJIT_GATEWAY_NATS_PASSWORD": secrets.token_hex(12),
                 "TTANJIT_BOTS_NATS_PASSWORD": secrets.token_hex(12)}
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ttanjit-natsconf-") as tmp:
        Path(tmp, "nats.conf").write_text(conf, encoding="utf-8")
        with open(Path(tmp, "server.log"), "wb") as log:
            proc = subprocess.Popen(
                [nats_server_binary(), "-c", str(Path(tmp, "nats.conf")), "-a", "127.0.0.1",
                 "-p", str(port), "-js", "-sd", str(Path(tmp, "js"))],
                env={**os.environ, **passwords}, stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_port("127.0.0.1", port)
            address = f"nats://127.0.0.1:{port}"
            full = natsauth.as_user(address, natsauth.SERVICES, passwords["TTANJIT_NATS_PASSWORD"])
            bots = natsauth.as_user(address, natsauth.BOTS, passwords["TTANJIT_BOTS_NATS_PASSWORD"])
            nc = await nats.connect(full)
            try:
                kv = await nc.jetstream().create_key_value(bucket="users_check")
                await kv.put("k", b"v")
                assert (await kv.get("k")).value == b"v"
            finally:
                await nc.close()
            with pytest.raises(nats.errors.Error, match="Authorization Violation"):
                await nats.connect(address, allow_reconnect=False)  # no user, no way in
            await bots_user_is_held_to_asks(full, bots)
            await gateway_user_is_held(full, natsauth.as_user(
                address, natsauth.GATEWAY, passwords["TTANJIT_GATEWAY_NATS_PASSWORD"]))
        finally:
            proc.terminate()
            proc.wait(10)
