"""Calls to a replicated service (the matchmaker's replicas, docs/protocol.md
4.1) through ``Replicas`` and ``Retrying``: a call goes to the replica that
answered last; one that is frozen (SIGSTOP: its connections stay up, it
answers nothing) or gone hands the call to the next, and later calls go
there too, so a frozen replica costs one attempt, not the first attempt of
every call; and no replica is ever left out. Real gRPC servers (the health
service) in their own processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
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
PORT = 0
class Servicer(health.aio.HealthServicer):
    async def Check(self, request, context):
        if request.service == "slow":  # a call slow for its own reasons
            await asyncio.sleep(30)
        if request.service.startswith("only-"):  # one replica answers it
            if request.service != f"only-{PORT}":
                await asyncio.sleep(30)
            request = health_pb2.HealthCheckRequest(service="up")
        return await super().Check(request, context)
async def main():
    server = grpc.aio.server()
    servicer = Servicer()
    await servicer.set("up", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    global PORT
    port = PORT = server.add_insecure_port("127.0.0.1:0")
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


@contextlib.asynccontextmanager
async def calling(target_: str, attempt_s: float = 2.5
                  ) -> AsyncIterator[tuple[Retrying, list[grpc.StatusCode], Replicas]]:
    """The health service over ``Replicas(target_, …)`` through ``Retrying``,
    the codes of its failed attempts, and the replicas (closed after)."""
    failures: list[grpc.StatusCode] = []
    reps = Replicas(target_, health_pb2_grpc.HealthStub)
    try:
        yield (Retrying(reps, attempt_s=attempt_s, on_failed=failures.append), failures, reps)
    finally:
        await reps.close()


async def test_a_frozen_replica_costs_the_calls_under_way_one_attempt_each(
        replicas: list[Replica]) -> None:
    """The replica calls go to is frozen while 5 calls wait for it: each
    goes on to the other replica after its attempt, and the 20 calls after
    them go there at once. Before (round robin over one channel) the first
    attempt of every call went to the frozen replica in turn (trial: two
    players met 8.4 s after 빠른 대전)."""
    async with calling(target(replicas), attempt_s=2.0) as (stub, retries, reps):
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


async def test_a_replica_that_is_gone_hands_calls_on_and_is_called_again_when_back(
        replicas: list[Replica]) -> None:
    """A replica killed: the call made to it fails at once (UNAVAILABLE) and
    goes to the other; when that one is gone too and the first is back on
    its port, calls go to it again (nobody is left out)."""
    async with calling(target(replicas), attempt_s=2.0) as (stub, retries, reps):
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


async def test_while_every_replica_fails_none_is_left_out(replicas: list[Replica]) -> None:
    """A failover: for a while every replica fails calls (the leader is
    frozen, the followers wait for a leader). A call keeps trying them in
    turn and is answered by whichever comes back first, even the one whose
    attempts failed last (gRPC's outlier detection, tried before, ejected
    it: calls failed after their whole 10 s)."""
    async with calling(target(replicas), attempt_s=0.4) as (stub, _, reps):
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


async def test_an_error_of_the_call_itself_is_not_tried_again(replicas: list[Replica]) -> None:
    """Only a replica that does not answer or is gone is passed over: an
    answer that is an error (here NOT_FOUND, a service the health server
    does not know) is the call's, at once, and the replica stays."""
    async with calling(target(replicas)) as (stub, retries, reps):
        await stub.Check(CHECK, timeout=5)
        good = stub.good
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=5)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert not retries and stub.good == good


async def test_a_dns_name_is_every_address_it_resolves_to(replicas: list[Replica]) -> None:
    """``dns:///name:port`` (the gateways' target: the matchmaker's headless
    Service) is the addresses the name resolves to, a channel each; the
    name is looked up again after a while, and a replica that left the
    answer is no longer called."""
    _, port = replicas[0]
    async with calling(f"dns:///localhost:{port}") as (stub, _, reps):
        addrs = await reps.current(5.0)
        assert f"127.0.0.1:{port}" in addrs
        assert all(a.endswith(f":{port}") for a in addrs)
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
            await reps.refresh(0.0)  # (the lookup every 5 s, now)
        finally:
            loop.getaddrinfo = real  # type: ignore[method-assign]
        assert await reps.current(5.0) == [f"127.0.0.2:{port}"]
        os.kill(replicas[0][0].pid, signal.SIGSTOP)  # the old one would not answer
        await stub.Check(CHECK, timeout=1.5)
        assert stub.good == f"127.0.0.2:{port}"


def test_targets_are_read_as_grpc_names_them() -> None:
    def addresses(target_: str) -> list[str]:
        return Replicas(target_, health_pb2_grpc.HealthStub).addresses

    assert addresses("ipv4:127.0.0.1:7200,127.0.0.1:7201") == [
        "127.0.0.1:7200", "127.0.0.1:7201"]
    assert addresses("ipv6:[::1]:7200,[::1]:7201") == ["[::1]:7200", "[::1]:7201"]
    assert addresses("10.0.0.7:7200") == ["10.0.0.7:7200"]
    assert addresses("[::1]:7200") == ["[::1]:7200"]
    for name in ("dns:///mm-headless:7200", "dns:mm-headless:7200", "mm-headless:7200"):
        assert addresses(name) == []  # looked up when called
    for bad in ("dns:///mm-headless", "dns://10.0.0.10/mm-headless:7200", "unix:/run/mm.sock",
                "ipv4:mm:7200", "ipv6:::1:7200", "mm-headless", "::1:7200",
                "ipv4:[::1]:7200", "ipv6:127.0.0.1:7200"):
        with pytest.raises(ValueError):
            addresses(bad)


async def test_a_failure_older_than_an_answer_moves_no_call(replicas: list[Replica]) -> None:
    """The calls went to the other replica when theirs froze; there, an
    attempt slow for its own reasons (a follower forwarding to the frozen
    leader, a slow CreateGame) runs out while other calls are answered.
    That failure says nothing new: the calls stay (before, it moved them
    back to the frozen replica, 2.5 s each, audit)."""
    async with calling(target(replicas), attempt_s=1.0) as (stub, failures, reps):
        await stub.Check(CHECK, timeout=5)
        frozen = stub.good
        os.kill(pid_of(replicas, frozen), signal.SIGSTOP)
        await stub.Check(CHECK, timeout=5)  # one attempt on the frozen one
        answering = stub.good
        assert answering != frozen and len(failures) == 1
        slow = asyncio.ensure_future(stub.Check(health_pb2.HealthCheckRequest(service="slow"),
                                                timeout=1.5))
        while not slow.done():
            await stub.Check(CHECK, timeout=5)
            assert stub.good == answering
            await asyncio.sleep(0.05)
        with pytest.raises(grpc.aio.AioRpcError):
            await slow
        for _ in range(5):
            await stub.Check(CHECK, timeout=5)
        assert stub.good == answering
        # the slow call's own two (its replica, then the frozen one with the
        # time it had left); none of the calls around it failed
        assert len(failures) == 1 + 2, failures


async def test_a_late_answer_does_not_pull_the_calls_back(replicas: list[Replica]) -> None:
    """A call sent to a replica before the calls moved off it (it froze)
    is answered after all (it thawed): the calls stay where they moved
    (before, the late answer pulled them back to a replica that had just
    failed them, audit)."""
    async with calling(target(replicas), attempt_s=3.0) as (stub, _, reps):
        await stub.Check(CHECK, timeout=5)
        stuck = stub.good
        os.kill(pid_of(replicas, stuck), signal.SIGSTOP)
        first = asyncio.ensure_future(stub.Check(CHECK, timeout=8))
        await asyncio.sleep(1.0)
        late = asyncio.ensure_future(stub.Check(CHECK, timeout=8))  # to the stuck one too
        await first  # went on to the other after 3 s
        moved = stub.good
        assert moved != stuck
        os.kill(pid_of(replicas, stuck), signal.SIGCONT)
        await late  # answered by the one that thawed
        assert stub.good == moved


async def test_a_call_shorter_than_an_attempt_still_moves_the_calls(
        replicas: list[Replica]) -> None:
    """A call whose whole timeout is shorter than an attempt (the gateway's
    Away, 2 s) fails on a frozen replica: the calls after it go to the
    other one (before, only a failure with time left moved them, audit)."""
    async with calling(target(replicas)) as (stub, failures, reps):
        await stub.Check(CHECK, timeout=5)
        frozen = stub.good
        os.kill(pid_of(replicas, frozen), signal.SIGSTOP)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.Check(CHECK, timeout=0.5)
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert failures == [grpc.StatusCode.DEADLINE_EXCEEDED] and stub.good != frozen
        await stub.Check(CHECK, timeout=0.5)
        assert len(failures) == 1


async def test_with_every_replica_gone_a_call_backs_off_and_a_closed_client_calls_none(
        replicas: list[Replica]) -> None:
    """Every replica gone (connections refused at once): a call tries them
    in turn, pausing longer after each round (0.05 s doubled up to 0.8 s),
    not every 0.05 s for its whole timeout (200 attempts in 10 s, audit).
    After ``close`` a call fails at once and opens no channel."""
    async with calling(target(replicas)) as (stub, failures, reps):
        await stub.Check(CHECK, timeout=5)
        for p, _ in replicas:
            p.kill()
            p.wait()
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.Check(CHECK, timeout=4)
        assert 4 <= len(failures) <= 20, len(failures)
        assert set(failures) == {grpc.StatusCode.UNAVAILABLE}
        await reps.close()
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.Check(CHECK, timeout=4)
        assert loop.time() - start < 1.0  # at once, not at the call's timeout
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "closed" in str(err.value.details()) and not reps._channels


async def test_a_lookup_that_hangs_costs_a_call_no_more_than_its_timeout() -> None:
    """The name's lookup hangs (a DNS server that does not answer; the
    test's resolver here): a call fails when its own timeout runs out, not
    when the lookup gives up."""
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo
    looked_up = 0

    async def hangs(*a: Any, **kw: Any) -> Any:
        nonlocal looked_up
        looked_up += 1
        await asyncio.sleep(30)

    loop.getaddrinfo = hangs  # type: ignore[method-assign, assignment]
    try:
        async with calling("dns:///mm-headless:7200") as (stub, _, _reps):
            start = loop.time()
            calls = [stub.Check(CHECK, timeout=1.0) for _ in range(3)]
            for got in await asyncio.gather(*calls, return_exceptions=True):
                assert isinstance(got, grpc.aio.AioRpcError)
                assert got.code() == grpc.StatusCode.UNAVAILABLE
            assert loop.time() - start < 3.0
            assert looked_up == 1  # one lookup at a time
    finally:
        loop.getaddrinfo = real  # type: ignore[method-assign]


async def test_a_call_tries_every_replica_in_turn() -> None:
    """Three replicas. A call's attempt fails on the one the calls go to
    while it answers other calls (so they stay there); the call goes on
    to the next, frozen, and then to the third, which answers it. Before,
    it went back to the first after the second and never tried the third
    (audit)."""
    procs = [start_replica() for _ in range(3)]
    async with calling(target(procs), attempt_s=1.0) as (stub, _, reps):
        await stub.Check(CHECK, timeout=5)
        good = stub.good
        addrs = reps.addresses
        i = addrs.index(good)  # type: ignore[arg-type]
        after, third = addrs[(i + 1) % 3], addrs[(i + 2) % 3]
        os.kill(pid_of(procs, after), signal.SIGSTOP)
        only = health_pb2.HealthCheckRequest(service=f"only-{third.rpartition(':')[2]}")
        call = asyncio.ensure_future(stub.Check(only, timeout=6))
        while not call.done():  # the first replica answers all along
            await stub.Check(CHECK, timeout=5)
            await asyncio.sleep(0.05)
        assert (await call).status == health_pb2.HealthCheckResponse.SERVING
        assert stub.good == third  # (it answered: news)
        for p, _ in procs:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
            p.wait()
