"""The matchmaker answers "can a game start now?" over gRPC health
(``ttanjit.v1.Matchmaker.Placement``, matchmaker/readiness.py; ``make run``
waits for it): SERVING only while it knows a live, non-draining shard."""

from __future__ import annotations

import time

import grpc
import pytest
from conftest import Services
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ttanjit.matchmaker.readiness import PLACEMENT_SERVICE

pytestmark = pytest.mark.integration

SERVING = health_pb2.HealthCheckResponse.SERVING


def _status(stub: health_pb2_grpc.HealthStub, service: str) -> int:
    rep = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
    return int(rep.status)


def _wait(stub: health_pb2_grpc.HealthStub, serving: bool, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while (_status(stub, PLACEMENT_SERVICE) == SERVING) != serving:
        assert time.monotonic() < deadline, f"placement never became serving={serving}"
        time.sleep(0.1)


def test_placement_health_follows_the_live_shards(svc: Services) -> None:
    services = svc  # a nats-server of its own: no other test's shard heartbeats
    mm = services.start("matchmaker", name="mm-ready")
    with grpc.insecure_channel(f"127.0.0.1:{mm.ports['grpc']}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        assert _status(stub, "") == SERVING  # rooms and queues work without shards
        _wait(stub, serving=False, timeout=5)
        shard = services.start("shard", name="shard-ready")
        _wait(stub, serving=True, timeout=15)  # its first heartbeat
        shard.kill()
        _wait(stub, serving=False, timeout=15)  # heartbeats older than 5 s
        assert _status(stub, "") == SERVING
