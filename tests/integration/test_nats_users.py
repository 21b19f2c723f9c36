"""ttanjit's NATS users (ttanjit.common.natsauth; README "Install", step 2):
the bot workers' user may take the shards' asks and answer them, nothing
else — on the tests' nats-server (every integration test's bot worker is
that user) and as deploy/nats/values.yaml gives them to the NATS chart."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import secrets
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import nats
import pytest
import yaml
from conftest import Services
from stack import stack
from wsclient import WSClient, start_with_bot

from ttanjit.common import natsauth
from ttanjit.common.natsserver import NatsServer, free_port, nats_server_binary, wait_port

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "ttanjit.v1"


async def bots_user_is_held_to_asks(full_url: str, bots_url: str) -> None:
    """As the bots' user: an ask in the queue group is taken and answered;
    a player's frames, a game's public part and every subject are not
    heard, no command or event is published, JetStream does not answer,
    and the asks are not heard outside the queue group."""
    refused: list[str] = []

    async def on_error(exc: Exception) -> None:
        refused.append(str(exc))
    services = await nats.connect(full_url)
    bot = await nats.connect(bots_url, error_cb=on_error, max_reconnect_attempts=0)
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
        await bot.publish(f"{PREFIX}.game.g1.cmd", b'{"type": "action"}')
        await bot.publish(f"{PREFIX}.player.p1.events", b"{}")
        await bot.flush()
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
    assert set(passwords) == {natsauth.SERVICES, natsauth.BOTS}


async def test_the_nats_charts_users_on_a_real_server() -> None:
    """The values' ``config.merge`` as nats-server reads it (the chart
    writes ``<< $X >>`` as ``$X``: the environment's), the passwords in
    the environment as the Secret puts them there: the services' user
    uses JetStream, the bots' user is held to asks and answers."""
    merge = chart_values()["config"]["merge"]
    conf = re.sub(r'"<< (\$\w+) >>"', r"\1", json.dumps(merge))
    passwords = {"TTANJIT_NATS_PASSWORD": secrets.token_hex(12),
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
        finally:
            proc.terminate()
            proc.wait(10)
