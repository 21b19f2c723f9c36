"""The shard's Kubernetes preStop hook, run for real (issue 8).

The chart's StatefulSet runs `shard.drain.command --timeout N` from
helm/ttanjit/values.yaml inside the shard container before SIGTERM. Here the
same command runs against a real shard (real nats-server, a second shard to
take the games): it hands the live games over, returns, and the SIGTERM that
follows stops the emptied shard. `ttanjit drain --addr` by hand takes the
shard out of readiness but not liveness, and on the last shard taking games
says what is left and exits 3.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import nats
import orjson
import pytest
import yaml
from conftest import Proc, Services
from grpc_health.v1 import health_pb2
from shardkit import create_game, player_id

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

VALUES = Path(__file__).resolve().parents[2] / "helm" / "ttanjit" / "values.yaml"
SERVING = health_pb2.HealthCheckResponse.SERVING
LIVENESS = "ttanjit.v1.ShardService.Liveness"  # the chart's liveness probe (shard.yaml)


def prestop_command() -> list[str]:
    """The chart's preStop exec command (templates/shard.yaml)."""
    drain = yaml.safe_load(VALUES.read_text(encoding="utf-8"))["shard"]["drain"]
    command = [*drain["command"], "--timeout", str(drain["timeoutSeconds"])]
    assert command[0] == "python"
    return [sys.executable, *command[1:]]


async def test_prestop_drain_hands_games_over_then_sigterm_stops(svc: Services) -> None:
    """On a JetStream of its own: on the session's, games an earlier test
    left there (their leases run out) were the first shard's to take over
    and hand over too, 7 where 3 were made."""
    tag = uuid.uuid4().hex[:6]
    a = svc.start("shard", name=f"drain-a-{tag}")
    b = svc.start("shard", name=f"drain-b-{tag}")
    pids = [player_id("d"), player_id("e")]
    seats = [{"kind": "human", "player_id": p} for p in pids]
    games = [await create_game(a.ports["grpc"], "onecard", seats, seed=7 + i) for i in range(3)]

    # As in the Pod: the container's env gives the command the shard's port.
    env = {**a.env}
    done = await asyncio.to_thread(subprocess.run, prestop_command(), env=env,
                                   capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["handed_over"] == len(games) and out["left"] == 0
    assert a.alive(), "the hook drains; SIGTERM (next) stops the process"
    # the shard's log says which games it made, and how the drain ended
    # (only "draining" was there: operator audit)
    made = [json.loads(line) for line in a.log().splitlines() if '"game made"' in line]
    assert sorted(m["game"] for m in made) == sorted(games), a.log()[-2000:]
    assert all(m["kind"] == "onecard" and m["humans"] == 2 for m in made), made
    (drained,) = [json.loads(line) for line in a.log().splitlines() if '"drained"' in line]
    assert (drained["handed_over"], drained["left"], drained["by"]) == (len(games), 0, "Drain call")

    nc = await nats.connect(svc.nats_url)
    try:
        owners = await nc.jetstream().key_value("ttanjit_owners")
        for gid in games:
            entry = orjson.loads((await owners.get(gid)).value)
            assert entry["shard"] == b.name, entry
    finally:
        await nc.close()
    assert await asyncio.to_thread(a.terminate, 20) == 0


def test_drain_command_reports_an_unreachable_shard() -> None:
    done = subprocess.run([sys.executable, "-m", "ttanjit", "drain", "--addr", "127.0.0.1:9",
                           "--timeout", "1"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "UNAVAILABLE" in done.stderr


def _health(port: int, service: str) -> int:
    import grpc
    from grpc_health.v1 import health_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        rep = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5)
    return int(rep.status)


def _healthz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _probes(shard: Proc) -> dict[str, int | bool]:
    """What the chart's probes (templates/shard.yaml) and an operator see."""
    return {"ready": _health(shard.ports["grpc"], "") == SERVING,
            "service": _health(shard.ports["grpc"], "ttanjit.v1.ShardService") == SERVING,
            "live": _health(shard.ports["grpc"], LIVENESS) == SERVING,
            "healthz": _healthz(shard.ports["metrics"])}


def _drain(shard: Proc, timeout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ttanjit", "drain", "--addr",
                           f"127.0.0.1:{shard.ports['grpc']}", "--timeout", str(timeout)],
                          capture_output=True, text=True, timeout=60)


async def test_a_drained_shard_is_not_ready_but_live_and_the_last_one_says_what_is_left(
        svc: Services) -> None:
    """`ttanjit drain --addr` (gRPC Drain, no SIGTERM): the shard reports
    not-ready (gRPC health "" and ttanjit.v1.ShardService, /healthz) but stays
    live (ttanjit.v1.ShardService.Liveness, the chart's liveness probe) so
    Kubernetes takes it out of readiness without restarting it. Drained on
    the last serving shard, the games stay: the command says so and exits 3."""
    services = svc  # a nats-server of its own: no other test's shard takes games
    a = services.start("shard", name="ready-a")
    b = services.start("shard", name="ready-b")
    serving = {"ready": True, "service": True, "live": True, "healthz": 200}
    drained = {"ready": False, "service": False, "live": True, "healthz": 503}
    assert _probes(a) == serving and _probes(b) == serving
    seats = [{"kind": "human", "player_id": player_id("h")} for _ in range(2)]
    await create_game(a.ports["grpc"], "onecard", seats, seed=3)

    done = await asyncio.to_thread(_drain, a, 20)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"handed_over": 1, "finished": 0, "left": 0}
    assert done.stderr == ""
    assert _probes(a) == drained, "a drained shard is not ready, and not restarted"
    assert _probes(b) == serving

    # b is the last shard taking games: its games have nowhere to go
    await create_game(b.ports["grpc"], "onecard", seats, seed=4)
    done = await asyncio.to_thread(_drain, b, 2)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert json.loads(done.stdout) == {"handed_over": 0, "finished": 0, "left": 2}
    assert "2 live game(s) left" in done.stderr and "leases expire" in done.stderr, done.stderr
    assert _probes(b) == drained
    assert a.alive() and b.alive()
    assert await asyncio.to_thread(a.terminate, 20) == 0
