"""The shard's Kubernetes preStop hook, run for real (issue 8).

The chart's StatefulSet runs `shard.drain.command --timeout N` from
helm/ttanjit/values.yaml inside the shard container before SIGTERM. Here the
same command runs against a real shard (real nats-server, a second shard to
take the games): it hands the live games over, returns, and the SIGTERM that
follows stops the emptied shard.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path

import nats
import orjson
import pytest
import yaml
from conftest import Services
from shardkit import create_game, player_id

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

VALUES = Path(__file__).resolve().parents[2] / "helm" / "ttanjit" / "values.yaml"


def prestop_command() -> list[str]:
    """The chart's preStop exec command (templates/shard.yaml)."""
    drain = yaml.safe_load(VALUES.read_text(encoding="utf-8"))["shard"]["drain"]
    command = [*drain["command"], "--timeout", str(drain["timeoutSeconds"])]
    assert command[0] == "python"
    return [sys.executable, *command[1:]]


async def test_prestop_drain_hands_games_over_then_sigterm_stops(services: Services) -> None:
    tag = uuid.uuid4().hex[:6]
    a = services.start("shard", name=f"drain-a-{tag}")
    b = services.start("shard", name=f"drain-b-{tag}")
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

    nc = await nats.connect(services.nats_url)
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
