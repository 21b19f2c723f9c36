"""Game command round trips on one NATS node (JetStream R1) vs a 3-node
cluster (R3, as production runs it): ``python -m ttanjit.bench nats-cluster
[--quick]``.

Each setup: a fresh nats-server (or cluster), one game shard, one bot worker;
``GAMES`` games of four scripted human seats (:mod:`ttanjit.chaos.natsplay`,
over NATS as the gateway sends commands) thinking 50-150 ms, played for a
fixed time. A command's round trip is request → shard validates → write-ahead
append to ``TTANJIT_RECORDS`` acknowledged (by a quorum of 2 of 3 at R3) →
reply. Games that finish are replaced.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from ttanjit.chaos.natsplay import Tables
from ttanjit.common.nats import connect
from ttanjit.common.natscluster import NatsCluster
from ttanjit.common.natsserver import free_port
from ttanjit.loadtest.localstack import Proc
from ttanjit.loadtest.stats import summary


def _env(url: str, replicas: int, name: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
    env.update(TTANJIT_NATS_URL=url, TTANJIT_JS_REPLICAS=str(replicas), TTANJIT_SHARD_ID=name,
               TTANJIT_LOG_LEVEL="INFO", PYTHONUNBUFFERED="1",
               TTANJIT_GRPC_PORT=str(free_port()), TTANJIT_METRICS_PORT=str(free_port()),
               TTANJIT_HTTP_PORT=str(free_port()), TTANJIT_ADVERTISE_HOST="127.0.0.1")
    return env


async def _play(url: str, grpc_port: int, games: int, seconds: float) -> dict[str, Any]:
    nc = await connect(url, "bench-nats-cluster")
    lat: list[float] = []
    accepted = 0
    try:
        deadline = time.monotonic() + seconds
        rnd = 0
        while time.monotonic() < deadline:  # a round of games; finished ones replaced
            rnd += 1
            tables = Tables(nc, [grpc_port], think_ms=(50, 150), seed=rnd)
            await tables.create(games, humans=4, bots_=0)
            stop = asyncio.Event()
            runner = asyncio.create_task(tables.play(stop))
            while time.monotonic() < deadline and not runner.done():
                await asyncio.sleep(0.2)
            stop.set()
            await asyncio.wait_for(runner, 30)
            lat += tables.latencies_ms
            accepted += len(tables.accepted)
    finally:
        await nc.close()
    out = summary(lat)
    out["accepted"] = accepted
    out["commands_per_s"] = round(len(lat) / seconds, 1)
    return out


def measure(nodes: int, games: int, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ttanjit-bench-natsc-") as tmp:
        cluster = NatsCluster(nodes, base_dir=str(Path(tmp) / "nats")).start()
        procs: list[Proc] = []
        try:
            shard = Proc("shard", "shard-0", _env(cluster.url, nodes, "shard-0"), Path(tmp))
            procs.append(shard)
            procs.append(Proc("bots", "bots-0", _env(cluster.url, nodes, "bots-0"), Path(tmp)))
            for p in procs:
                p.wait_ready(60)
            return asyncio.run(_play(cluster.url, shard.ports["grpc"], games, seconds))
        finally:
            for p in procs:
                p.stop()
            cluster.stop()


def run(args: argparse.Namespace) -> dict[str, Any]:
    games, seconds = (8, 15.0) if args.quick else (25, 45.0)
    print(f"{games} games x 4 scripted seats (50-150 ms pauses), {seconds:.0f} s per setup")
    out: dict[str, Any] = {"games": games, "seconds": seconds}
    for label, nodes in (("R1 single node", 1), ("R3 3-node cluster", 3)):
        r = measure(nodes, games, seconds)
        out[f"r{nodes}"] = r
        print(f"  {label:18s} commands {r['count']:6d} ({r['commands_per_s']}/s)  "
              f"p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms  p99 {r['p99_ms']:.1f} ms  "
              f"max {r['max_ms']:.1f} ms", flush=True)
    return out
