"""One settings object for every service (docs/protocol.md 6):
``common.config.Settings``, read by ``Settings.from_env(service)`` with the
few per-service defaults. ``TTANJIT_BOT_WAIT_MS`` (quick-match wait, 15 s)
is ``Settings.bot_wait_ms``, which the matchmaker takes; the shard's
bot-decision budget is a setting of its own."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

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


def test_make_run_keeps_its_internal_ports_on_loopback(
        monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    """Fuzz finding: `make run` bound the shards' link and every gRPC port
    on all interfaces; the link takes no credentials."""
    _clear(monkeypatch)
    monkeypatch.setenv("TTANJIT_VAR_DIR", str(tmp_path))
    env = stack_env()
    assert env["TTANJIT_GRPC_HOST"] == env["TTANJIT_METRICS_HOST"] == "127.0.0.1"
    # a Pod's default: all its interfaces
    assert Settings.from_env("shard").grpc_host == Settings.from_env("shard").metrics_host == "0.0.0.0"
    monkeypatch.setenv("TTANJIT_METRICS_HOST", "127.0.0.1")
    assert Settings.from_env("matchmaker").metrics_host == "127.0.0.1"
    procfile = (Path(__file__).parents[2] / "deploy" / "Procfile").read_text()
    assert '-a 127.0.0.1 -p "$TTANJIT_NATS_PORT"' in procfile


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
    assert (gw.signup_burst, gw.signup_per_min) == (30, 30)
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
        "TTANJIT_WS_IDLE_MS": "12", "TTANJIT_WS_HELLO_MS": "13",
        "TTANJIT_RECORD_SAMPLE": "0.25", "TTANJIT_RECORD_DIR": "/tmp/caps",
        "TTANJIT_RECORD_MAX_MB": "1.5", "TTANJIT_SIGNUP_BURST": "14", "TTANJIT_SIGNUP_PER_MIN": "15",
        "TTANJIT_MAX_CONNECTIONS": "16",
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
        assert (s.ws_idle_ms, s.ws_hello_ms) == (12, 13)
        assert (s.record_sample, s.record_dir, s.record_max_mb) == (0.25, "/tmp/caps", 1.5)
        assert (s.signup_burst, s.signup_per_min, s.max_connections) == (14, 15, 16)
        assert not s.ephemeral_secret
    described = Settings.from_env("gateway").describe()
    assert described["token_secret"] == "***"
    # a user's password or token in the NATS address is not logged (security audit)
    monkeypatch.setenv("TTANJIT_NATS_URL", "nats://ttanjit:S3cret@nats-0:4222, tls://tok@nats-1:4222")
    assert Settings.from_env("gateway").describe()["nats_url"] == \
        "nats://***@nats-0:4222,tls://***@nats-1:4222"
    assert Settings.from_env("gateway").nats_url.startswith("nats://ttanjit:S3cret@")
    for url in ("nats://u:p@ss@nats-0:4222", "NATS://u:pw@nats-0:4222", "tls://u:p/w@nats-0:4222"):
        monkeypatch.setenv("TTANJIT_NATS_URL", url)
        shown = str(Settings.from_env("gateway").describe()["nats_url"])
        assert shown.endswith("://***@nats-0:4222") and "p" not in shown.split("@")[0][7:], shown
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


@pytest.mark.parametrize("name,raw,says", [
    ("TTANJIT_WS_IDLE_MS", "1m", "must be an integer"),
    ("TTANJIT_WS_HELLO_MS", "ten", "must be an integer"),
    ("TTANJIT_RECORD_SAMPLE", "1%", "must be a number"),
    ("TTANJIT_RECORD_MAX_MB", "lots", "must be a number"),
])
def test_a_gateway_setting_it_cannot_read_stops_it_with_one_line(
        monkeypatch: pytest.MonkeyPatch, name: str, raw: str, says: str) -> None:
    """The WebSocket limits and the capture sample are settings like the
    rest (read when the gateway starts, not when a module is imported): a
    value that is no number is one line naming the variable — it used to be
    a traceback at import (the limits) or a silently unrecorded gateway
    (the sample)."""
    _clear(monkeypatch)
    monkeypatch.setenv("TTANJIT_DEV", "1")
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=f"{name} {says}, not '{raw}'"):
        Settings.from_env("gateway")


@pytest.mark.parametrize("service,name", [
    ("gateway", "TTANJIT_WS_IDLE_MS"), ("matchmaker", "TTANJIT_ROOM_AWAY_MS"),
    ("shard", "TTANJIT_LEASE_MS"), ("bots", "TTANJIT_BOT_CAPACITY"),
])
def test_every_service_stops_with_one_line_on_a_setting_it_cannot_use(
        service: str, name: str) -> None:
    """``python -m ttanjit.<service>`` with a variable that is no number:
    exit 1 and one line naming it (the shard, the matchmaker and the bot
    worker printed a traceback)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
    env.update({"TTANJIT_DEV": "1", name: "soon", "TTANJIT_NATS_URL": "nats://127.0.0.1:1"})
    p = subprocess.run([sys.executable, "-m", f"ttanjit.{service}"], env=env,
                       capture_output=True, text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and lines == [
        f"{service}: {name} must be an integer, not 'soon'"], (p.returncode, p.stderr)
