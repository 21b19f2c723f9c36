"""One settings object for every service (docs/protocol.md 6):
``common.config.Settings``, read by ``Settings.from_env(service)`` with the
few per-service defaults. ``TTANJIT_BOT_WAIT_MS`` (quick-match wait, 15 s)
is ``Settings.bot_wait_ms``, which the matchmaker takes; the shard's
bot-decision budget is a setting of its own."""

from __future__ import annotations

import os
import socket
from dataclasses import fields

import pytest

from ttanjit.common.config import Settings
from ttanjit.matchmaker.rematch import WINDOW_MS
from ttanjit.run import stack_env


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("TTANJIT_"):
            monkeypatch.delenv(name)


def test_quick_match_wait_defaults_to_15_s_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    assert Settings().bot_wait_ms == Settings.from_env().bot_wait_ms == 15_000
    mm = Settings.from_env("matchmaker")
    assert mm.bot_wait_ms == Settings.defaults("matchmaker").bot_wait_ms == 15_000
    assert mm.grpc_port == 7200  # the matchmaker's own default
    assert Settings.from_env().bot_budget_ms == 2000


def test_matchmaker_reads_the_shared_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    monkeypatch.setenv("TTANJIT_BOT_WAIT_MS", "300")
    monkeypatch.setenv("TTANJIT_NATS_URL", "nats://10.0.0.9:4222")
    mm = Settings.from_env("matchmaker")
    assert (mm.bot_wait_ms, mm.nats_url) == (300, "nats://10.0.0.9:4222")
    assert Settings.from_env().bot_budget_ms == 2000  # the shard's is separate
    monkeypatch.setenv("TTANJIT_BOT_WAIT_MS", "soon")
    with pytest.raises(ValueError, match="TTANJIT_BOT_WAIT_MS"):
        Settings.from_env("matchmaker")


def test_make_run_fills_quick_matches_after_5_s_unless_told(
        monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    _clear(monkeypatch)
    monkeypatch.setenv("TTANJIT_VAR_DIR", str(tmp_path))
    assert stack_env()["TTANJIT_BOT_WAIT_MS"] == "5000"
    monkeypatch.setenv("TTANJIT_BOT_WAIT_MS", "15000")
    assert stack_env()["TTANJIT_BOT_WAIT_MS"] == "15000"


def test_per_service_defaults_are_as_they_were(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every env var name and default of the three former settings classes
    (gateway, matchmaker, shard/bots) is kept."""
    _clear(monkeypatch)
    host = socket.gethostname()
    shard = Settings.from_env()
    assert shard == Settings.from_env("shard") and shard.grpc_port == 7100
    assert (shard.advertise_host, shard.shard_id) == (host, host)
    mm = Settings.from_env("matchmaker")
    assert (mm.grpc_port, mm.advertise_host, mm.replica) == (7200, "", "")
    assert (mm.lobby, mm.room_away_ms, mm.tick_ms, mm.test_options) == ("main", 60_000, 200,
                                                                         False)
    assert mm.rematch_ms == WINDOW_MS == 20_000
    assert (mm.lease_ms, mm.renew_ms, mm.metrics_port, mm.grpc_host) == (2000, 500, 0, "0.0.0.0")
    monkeypatch.setenv("TTANJIT_DEV", "1")
    gw = Settings.from_env("gateway")
    assert (gw.http_host, gw.http_port, gw.matchmaker_addr) == ("0.0.0.0", 8080,
                                                                "127.0.0.1:7200")
    assert (gw.nats_url, gw.prefix, gw.js_replicas) == ("nats://127.0.0.1:4222", "ttanjit.v1", 1)
    assert gw.ws_impl == "websockets-sansio"
    assert Settings.from_env("bots").bot_capacity == 2
    assert Settings.defaults("matchmaker").grpc_port == 7200
    assert Settings.defaults().grpc_port == Settings().grpc_port == 7100


def test_every_env_var_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    env = {
        "TTANJIT_NATS_URL": "nats://a:1,nats://b:2", "TTANJIT_NATS_PREFIX": "p.v9",
        "TTANJIT_JS_REPLICAS": "3", "TTANJIT_METRICS_PORT": "9100",
        "TTANJIT_GRPC_PORT": "7300", "TTANJIT_GRPC_HOST": "127.0.0.2",
        "TTANJIT_ADVERTISE_HOST": "10.1.2.3", "TTANJIT_SHARD_ID": "s9",
        "TTANJIT_MATCHMAKER_ADDR": "mm:7200", "TTANJIT_TOKEN_SECRET": "x" * 40,
        "TTANJIT_HTTP_PORT": "8181", "TTANJIT_HTTP_HOST": "127.0.0.3",
        "TTANJIT_LOG_LEVEL": "debug", "TTANJIT_LOG_FORMAT": "text",
        "TTANJIT_BOT_WAIT_MS": "1", "TTANJIT_BOT_BUDGET_MS": "2", "TTANJIT_ABSENCE_MS": "3",
        "TTANJIT_ABANDON_MS": "4", "TTANJIT_LEASE_MS": "5", "TTANJIT_RENEW_MS": "6",
        "TTANJIT_CAPACITY": "7", "TTANJIT_BACKLOG": "8", "TTANJIT_DRAIN_TIMEOUT_S": "9",
        "TTANJIT_WS_IMPL": "wsproto", "TTANJIT_TEST_OPTIONS": "1",
        "TTANJIT_ROOM_AWAY_MS": "10", "TTANJIT_LOBBY": "t1", "TTANJIT_REPLICA_ID": "r1",
        "TTANJIT_REMATCH_MS": "11", "TTANJIT_BOT_CAPACITY": "0",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for service in ("", "gateway", "matchmaker", "shard", "bots"):
        s = Settings.from_env(service)
        assert (s.nats_url, s.prefix, s.js_replicas, s.metrics_port) == (
            "nats://a:1,nats://b:2", "p.v9", 3, 9100)
        assert (s.grpc_port, s.grpc_host, s.advertise_host, s.shard_id) == (
            7300, "127.0.0.2", "10.1.2.3", "s9")
        assert (s.matchmaker_addr, s.token_secret, s.http_port, s.http_host) == (
            "mm:7200", "x" * 40, 8181, "127.0.0.3")
        assert (s.log_level, s.log_format, s.ws_impl) == ("DEBUG", "text", "wsproto")
        assert (s.bot_wait_ms, s.bot_budget_ms, s.absence_ms, s.abandon_ms, s.lease_ms,
                s.renew_ms, s.capacity, s.backlog, s.drain_timeout_s) == tuple(range(1, 10))
        assert (s.test_options, s.room_away_ms, s.lobby, s.replica, s.rematch_ms) == (
            True, 10, "t1", "r1", 11)
        assert s.bot_capacity == 1  # at least one
        assert not s.ephemeral_secret
    described = Settings.from_env("gateway").describe()
    assert described["token_secret"] == "***"
    assert set(described) == {f.name for f in fields(Settings)} - {"extra"}


def test_the_gateway_needs_a_token_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    with pytest.raises(ValueError, match="TTANJIT_TOKEN_SECRET"):
        Settings.from_env("gateway")
    assert Settings.from_env("shard").token_secret == ""  # only the gateway needs one
    monkeypatch.setenv("TTANJIT_DEV", "1")
    a, b = Settings.from_env("gateway"), Settings.from_env("gateway")
    assert a.ephemeral_secret and len(a.token_secret) == 64 and a.token_secret != b.token_secret
    with pytest.raises(ValueError, match="unknown service"):
        Settings.from_env("gatewya")
