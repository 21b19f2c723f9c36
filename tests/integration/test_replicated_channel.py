"""Calls to a replicated service (the matchmaker's replicas, docs/protocol.md
4.1) through ``replicated_channel`` and ``Retrying``: a replica that is
frozen (SIGSTOP: its connections stay up, it answers nothing) is soon left
out of the round, so calls stop spending an attempt on it. Real gRPC
servers in their own processes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ttanjit.common.grpcutil import Retrying, replicated_channel

pytestmark = pytest.mark.integration

SERVER = """
import asyncio, sys
import grpc
from grpc_health.v1 import health, health_pb2_grpc
async def main():
    server = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()
asyncio.run(main())
"""


@pytest.fixture
def replicas() -> Iterator[list[tuple[subprocess.Popen[str], int]]]:
    procs = [subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        yield [(p, int(p.stdout.readline())) for p in procs]  # type: ignore[union-attr]
    finally:
        for p in procs:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
            p.wait()


class Counting:
    """A stub that counts the attempts made through it."""

    def __init__(self, stub: Any) -> None:
        self.stub, self.attempts = stub, 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.stub, name)

        async def call(*a: Any, **kw: Any) -> Any:
            self.attempts += 1
            return await method(*a, **kw)

        return call


async def test_a_frozen_replica_is_left_out_of_the_round(
        replicas: list[tuple[subprocess.Popen[str], int]]) -> None:
    """Of 20 calls made one after another while one of two replicas is
    frozen, only the first few spend an attempt on it (before, with round
    robin alone, the first attempt of every call went to it)."""
    channel = replicated_channel("ipv4:" + ",".join(f"127.0.0.1:{port}" for _, port in replicas))
    try:
        counting = Counting(health_pb2_grpc.HealthStub(channel))
        stub = Retrying(counting, attempt_s=0.5)
        for _ in range(4):  # both replicas in the round
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        os.kill(replicas[0][0].pid, signal.SIGSTOP)
        counting.attempts = 0
        for _ in range(20):
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
            await asyncio.sleep(0.1)
        assert counting.attempts <= 20 + 5, counting.attempts
    finally:
        await channel.close()
