"""Can a game start now? The matchmaker's answer, over gRPC health
(``grpc.health.v1``, docs/protocol.md 4): the service name
``ttanjit.v1.Matchmaker.Placement`` is SERVING while the lobby has a leader
(docs/protocol.md 4.1) and this replica knows a shard it would place a game on
(a live, non-draining shard with room: the placement candidates), NOT_SERVING
otherwise. The overall status ("") and
``ttanjit.v1.Matchmaker`` stay what they were: a matchmaker without shards
still serves rooms and queues.

``make run`` (``ttanjit.run``) waits for it before printing its address;
operators can ask too (``grpc_health_probe -service=ttanjit.v1.Matchmaker.Placement``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from grpc_health.v1 import health, health_pb2

from ttanjit.matchmaker.placement import ShardTable

PLACEMENT_SERVICE = "ttanjit.v1.Matchmaker.Placement"
EVERY_S = 0.25


async def watch_placement(shards: ShardTable, servicer: health.aio.HealthServicer,
                          stop: asyncio.Event, every_s: float = EVERY_S,
                          has_leader: Callable[[], bool] = lambda: True) -> None:
    """Keep :data:`PLACEMENT_SERVICE`'s status current until ``stop`` (or
    cancellation); NOT_SERVING at the end."""
    serving = health_pb2.HealthCheckResponse.SERVING
    not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
    status = None
    try:
        while not stop.is_set():
            ok = has_leader() and shards.has_room(int(time.time() * 1000))
            new = serving if ok else not_serving
            if new != status:
                await servicer.set(PLACEMENT_SERVICE, new)
                status = new
            try:
                await asyncio.wait_for(stop.wait(), every_s)
            except TimeoutError:
                pass
    finally:
        await servicer.set(PLACEMENT_SERVICE, not_serving)
