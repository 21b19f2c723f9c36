"""Calls to a replicated service (the matchmaker's replicas, docs/protocol.md
4.1) through ``Replicas`` and ``Retrying``: a call goes to the replica that
answered last; one that is frozen (SIGSTOP: its connections stay up, it
answers nothing) or gone hands the call to the next, and later calls go
there too, so a frozen replica costs one attempt, not the first attempt of
every call; and no replica is ever left out. Real gRPC servers (the health
service) in their own processes."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ttanjit.common import grpcutil
from ttanjit.common.grpcutil import Replicas, Retrying

pytestmark = pytest.mark.integration

SERVER = """
import asyncio, sys
import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
async def main():
    server = grpc.aio.server()
    servicer = health.aio.HealthServicer()
    await servicer.set("up", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await server.wait_for_termination()
asyncio.run(main())
"""
Replica = tuple[subprocess.Popen[str], int]


def start_replica() -> Replica:
    p = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())  # type: ignore[union-attr]


@pytest.fixture
def replicas() -> Iterator[list[Replica]]:
    procs = [start_replica() for _ in range(2)]
    try:
        yield procs
    finally:
        for p, _ in procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
                p.kill()
            p.wait()


def target(procs: list[Replica]) -> str:
    return "ipv4:" + ",".join(f"127.0.0.1:{port}" for _, port in procs)


def pid_of(procs: list[Replica], addr: str | None) -> int:
    return next(p.pid for p, port in procs if addr == f"127.0.0.1:{port}")


CHECK = health_pb2.HealthCheckRequest(service="up")


async def test_a_frozen_replica_costs_the_calls_under_way_one_attempt_each(
        replicas: list[Replica]) -> None:
    """The replica calls go to is frozen while 5 calls wait for it: each
    goes on to the other replica after its attempt, and the 20 calls after
    them go there at once. Before (round robin over one channel) the first
    attempt of every call went to the frozen replica in turn (trial: two
    players met 8.4 s after 빠른 대전)."""
    retries: list[grpc.StatusCode] = []
    reps = Replicas(target(replicas))
    try:
        stub = Retrying(health_pb2_grpc.HealthStub, reps, attempt_s=2.0, on_retry=retries.append)
        for _ in range(4):
            assert (await stub.Check(CHECK, timeout=5)).status == \
                health_pb2.HealthCheckResponse.SERVING
        assert not retries
        frozen = stub.good
        os.kill(pid_of(replicas, frozen), signal.SIGSTOP)
        await asyncio.gather(*(stub.Check(CHECK, timeout=8) for _ in range(5)))
        assert retries == [grpc.StatusCode.DEADLINE_EXCEEDED] * 5
        assert stub.good != frozen
        for _ in range(20):
            await stub.Check(CHECK, timeout=8)
        assert len(retries) == 5
    finally:
        await reps.close()


async def test_a_replica_that_is_gone_hands_calls_on_and_is_called_again_when_back(
        replicas: list[Replica]) -> None:
    """A replica killed: the call made to it fails at once (UNAVAILABLE) and
    goes to the other; when that one is gone too and the first is back on
    its port, calls go to it again (nobody is left out)."""
    retries: list[grpc.StatusCode] = []
    reps = Replicas(target(replicas))
    try:
        stub = Retrying(health_pb2_grpc.HealthStub, reps, attempt_s=2.0, on_retry=retries.append)
        await stub.Check(CHECK, timeout=5)
        first = stub.good
        (p, port), = [(p, port) for p, port in replicas if f"127.0.0.1:{port}" == first]
        p.kill()
        p.wait()
        await stub.Check(CHECK, timeout=5)
        assert retries == [grpc.StatusCode.UNAVAILABLE] and stub.good != first
        for q, _ in replicas:
            q.kill()
            q.wait()
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.Check(CHECK, timeout=1)
        assert err.value.code() in grpcutil.RETRYABLE
        back = subprocess.Popen([sys.executable, "-c", SERVER.replace(
            "127.0.0.1:0", f"127.0.0.1:{port}")], stdout=subprocess.PIPE, text=True)
        replicas.append((back, port))
        assert int(back.stdout.readline()) == port  # type: ignore[union-attr]
        assert (await stub.Check(CHECK, timeout=8)).status == \
            health_pb2.HealthCheckResponse.SERVING
        assert stub.good == first
    finally:
        await reps.close()


async def test_while_every_replica_fails_none_is_left_out(replicas: list[Replica]) -> None:
    """A failover: for a while every replica fails calls (the leader is
    frozen, the followers wait for a leader). A call keeps trying them in
    turn and is answered by whichever comes back first, even the one whose
    attempts failed last (gRPC's outlier detection, tried before, ejected
    it: calls failed after their whole 10 s)."""
    reps = Replicas(target(replicas))
    try:
        stub = Retrying(health_pb2_grpc.HealthStub, reps, attempt_s=0.4)
        await stub.Check(CHECK, timeout=5)
        for p, _ in replicas:
            os.kill(p.pid, signal.SIGSTOP)
        call = asyncio.ensure_future(stub.Check(CHECK, timeout=15))
        await asyncio.sleep(2.0)  # each failed a few attempts
        assert not call.done()
        comes_back = replicas[1][0]
        os.kill(comes_back.pid, signal.SIGCONT)
        assert (await call).status == health_pb2.HealthCheckResponse.SERVING
        assert stub.good == f"127.0.0.1:{replicas[1][1]}"
    finally:
        await reps.close()


async def test_an_error_of_the_call_itself_is_not_tried_again(replicas: list[Replica]) -> None:
    """Only a replica that does not answer or is gone is passed over: an
    answer that is an error (here NOT_FOUND, a service the health server
    does not know) is the call's, at once, and the replica stays."""
    retries: list[grpc.StatusCode] = []
    reps = Replicas(target(replicas))
    try:
        stub = Retrying(health_pb2_grpc.HealthStub, reps, on_retry=retries.append)
        await stub.Check(CHECK, timeout=5)
        good = stub.good
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=5)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert not retries and stub.good == good
    finally:
        await reps.close()


async def test_a_dns_name_is_every_address_it_resolves_to(replicas: list[Replica]) -> None:
    """``dns:///name:port`` (the gateways' target: the matchmaker's headless
    Service) is the addresses the name resolves to, a channel each; the
    name is looked up again after a while, and a replica that left the
    answer is no longer called."""
    _, port = replicas[0]
    reps = Replicas(f"dns:///localhost:{port}")
    try:
        addrs = await reps.current()
        assert f"127.0.0.1:{port}" in addrs
        assert all(a.endswith(f":{port}") for a in addrs)
        stub = Retrying(health_pb2_grpc.HealthStub, reps, attempt_s=2.0)
        assert (await stub.Check(CHECK, timeout=8)).status == \
            health_pb2.HealthCheckResponse.SERVING  # (over ::1 too, if it came first)
        # the Service's answer changes (a Pod replaced: another address, the
        # same port). No DNS server to change here: the lookup's answer is
        # the test's.
        moved = subprocess.Popen([sys.executable, "-c", SERVER.replace(
            "127.0.0.1:0", f"127.0.0.2:{port}")], stdout=subprocess.PIPE, text=True)
        replicas.append((moved, port))
        assert int(moved.stdout.readline()) == port  # type: ignore[union-attr]
        loop = asyncio.get_running_loop()
        real = loop.getaddrinfo

        async def answer(host: str, p: int, **kw: Any) -> Any:
            assert host == "localhost" and p == port
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]

        loop.getaddrinfo = answer  # type: ignore[method-assign, assignment]
        try:
            await reps.refresh(0.0)
        finally:
            loop.getaddrinfo = real  # type: ignore[method-assign]
        assert await reps.current() == [f"127.0.0.2:{port}"]
        os.kill(replicas[0][0].pid, signal.SIGSTOP)  # the old one would not answer
        await stub.Check(CHECK, timeout=1.5)
        assert stub.good == f"127.0.0.2:{port}"
    finally:
        await reps.close()


def test_targets_are_read_as_grpc_names_them() -> None:
    assert Replicas("ipv4:127.0.0.1:7200,127.0.0.1:7201").addresses == [
        "127.0.0.1:7200", "127.0.0.1:7201"]
    assert Replicas("10.0.0.7:7200").addresses == ["10.0.0.7:7200"]
    assert Replicas("[::1]:7200").addresses == ["[::1]:7200"]
    assert Replicas("dns:///mm-headless:7200").addresses == []  # looked up when called
    with pytest.raises(ValueError):
        Replicas("dns:///mm-headless")
