"""The image, run as the chart runs it (issue 16).

One podman network; nats-server, two matchmaker replicas, two shards, a bot
worker and two gateways, every one a container of ttanjit/ttanjit:<version>
(`make image`) with the command, env, ports, probes, securityContext (user
10001, read-only root, capabilities dropped), tmp volume, resource limits,
preStop hook and grace period that `helm template` renders for
tests/container/values.yaml (podkit.py translates; nothing is restated).
The tests run in order on that one cluster, under a steady load of the load
tester's players (two humans and two pool bots a table, through both
gateways), and judge from the games' write-ahead records:

1. every Pod ready by its own probes, locked down as the chart says;
2. games of all three kinds played to the end by `ttanjit loadtest play`;
3. kill -9 of a shard container: its games go on on the other shard, no
   accepted command lost (then it is started again, as the StatefulSet does);
4. `podman stop` (SIGTERM) of a shard: drain and handover, exit 0 within
   terminationGracePeriodSeconds, no command lost;
5. a rolling replacement of both gateways (new one ready, old one's preStop
   and SIGTERM): every player resumes on another gateway;
6. scale out (`shard.replicas` 2 -> 3, as `helm upgrade --set` renders it):
   the new shard takes new games; scale in (3 -> 2): the StatefulSet's last
   Pod drains (preStop hook, SIGTERM), its games go on elsewhere;
7. the whole run: no accepted command lost, no game left behind;
8. a real Prometheus scrapes every container's metrics port.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml
from podkit import ROOT, Chart, Cluster, Pod, free_port

from ttanjit.chaos import audit
from ttanjit.chaos.drill import DrillPlayer, Ledger
from ttanjit.common.nats import GAMES_BUCKET, Subjects, connect, kv_keys
from ttanjit.loadtest.player import PlayConfig
from ttanjit.loadtest.stats import Stats

# the first test's set-up builds the image when its sources changed (on a new
# machine: podman from Debian, the base images, the build: about 3 minutes)
pytestmark = pytest.mark.timeout(600)

ALERTS = ROOT / "deploy" / "prometheus" / "ttanjit-alerts.yaml"
# A game no input moved for longer than this is stuck: One Card's turn timer
# (30 s, the quick-match default) plus 5 s acts for a seat that does not.
STALL_S = 35.0
# Gaps above this are printed (the chaos drill's bar is 3 s on processes).
SLOW_S = 10.0


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture(scope="module")
def cluster(image: str, render: Callable[..., Chart], request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    chart = render()
    # TTANJIT_CT_LOGS=DIR keeps the containers' logs there (pytest's own
    # temporary folders are rotated by later runs)
    keep = os.environ.get("TTANJIT_CT_LOGS")
    logdir = Path(keep) if keep else tmp_path_factory.mktemp("container-logs")
    logdir.mkdir(parents=True, exist_ok=True)
    cl = Cluster(image, chart, logdir)
    failed = request.session.testsfailed
    try:
        t0 = time.monotonic()
        nats_url = chart.env(chart.workloads["shard"], "x", "0.0.0.0")["TTANJIT_NATS_URL"]
        cl.wait_nats(cl.start_nats(nats_url))
        pods = [cl.start(comp, cl.pod_name(comp, i))
                for comp in ("matchmaker", "shard", "bots", "gateway")
                for i in range(chart.workloads[comp].replicas)]
        ready = {p.name: round(p.wait_ready(), 1) for p in pods}
        print(f"\ncluster ready in {time.monotonic() - t0:.1f} s: {ready}")
        yield cl
    finally:
        if request.session.testsfailed > failed:
            for p in [*cl.gone, *cl.pods.values()]:
                text = p.logs() if p.name in cl.pods else ""
                print(f"\n===== {p.name} ({p.container}) =====\n{text[-3000:]}")
        cl.close()
        print(f"container logs: {logdir}")


class Load:
    """The load tester's players (onecard quick matches, bots fill the
    tables) through the gateways, keeping every accepted command."""

    def __init__(self, cluster: Cluster, players: int = 8) -> None:
        self.cluster = cluster
        self.n = players
        self.nats_url = f"nats://127.0.0.1:{cluster.pods['nats-0'].ports[4222]}"
        self.bases = [g.url("http") for g in cluster.of("gateway")]
        self.ledger = Ledger()
        self.stats = Stats()
        self.stop_ev = asyncio.Event()
        self.players: list[DrillPlayer] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.errors: list[str] = []

    async def start(self) -> None:
        self.nc = await connect(self.nats_url, "container-tier")
        self.http = httpx.AsyncClient(timeout=30)
        self.add(self.n)
        deadline = time.monotonic() + 60
        while len(self.ledger.games) < 2:  # humans queued together share a table
            assert time.monotonic() < deadline, f"tables not seated: {self.ledger.games}"
            await asyncio.sleep(0.2)
        await asyncio.sleep(2.0)  # the tables under way

    def add(self, n: int) -> list[DrillPlayer]:
        """``n`` more players, each queueing for a table at once."""
        cfg = PlayConfig(game="onecard", seats=4, mode="quick", level="normal",
                         think_ms=(200, 700))
        first = len(self.players)
        live = [g.url("http") for g in self.cluster.of("gateway")]  # the Service's endpoints
        new = [DrillPlayer(i, live[i % len(live)], cfg, self.stats, self.http,
                           bases=self.bases, ledger=self.ledger, finished=self.ledger.finished)
               for i in range(first, first + n)]

        async def one(p: DrillPlayer) -> None:
            try:
                await p.start()
                await p.run(self.stop_ev)
            except Exception as exc:  # noqa: BLE001 - reported by the tests
                self.errors.append(f"{p.label}: {exc!r}")

        self.players += new
        self.tasks += [asyncio.create_task(one(p)) for p in new]
        return new

    async def close(self) -> None:
        self.stop_ev.set()
        await asyncio.wait(self.tasks, timeout=10)
        for p in self.players:
            await p.stop()
        for t in self.tasks:
            t.cancel()
        await self.http.aclose()
        await self.nc.close()

    async def owners(self) -> dict[str, str]:
        """Live game -> the shard that owns it (the owners bucket)."""
        kv = await self.nc.jetstream().key_value("ttanjit_owners")
        out: dict[str, str] = {}
        try:
            keys = await kv_keys(kv)
        except Exception:  # noqa: BLE001 - NATS away
            return out
        for key in keys:
            if key.startswith("shard.") or key not in self.ledger.games:
                continue
            try:
                entry = await kv.get(key)
            except Exception:  # noqa: BLE001 - deleted meanwhile
                continue
            shard = orjson.loads(entry.value or b"{}").get("shard")
            if shard:
                out[key] = shard
        return out

    async def live_on(self, shard: str) -> list[str]:
        return sorted(g for g, s in (await self.owners()).items()
                      if s == shard and g not in self.ledger.finished)

    async def busiest(self, shards: list[Pod]) -> tuple[Pod, list[str]]:
        """The shard with the most live games (waits until one has some)."""
        deadline = time.monotonic() + 30
        while True:
            counts = {p.name: await self.live_on(p.name) for p in shards}
            name = max(counts, key=lambda k: len(counts[k]))
            if counts[name]:
                return self.cluster.pods[name], counts[name]
            assert time.monotonic() < deadline, "no live game on any shard"
            await asyncio.sleep(0.5)

    async def continued(self, games: list[str], gone: str, since_ms: int,
                        timeout: float = 45) -> dict[str, str]:
        """Wait until each game has moved off ``gone`` and recorded an input
        after ``since_ms`` (or finished); returns game -> new owner."""
        deadline = time.monotonic() + timeout
        while True:
            owners = await self.owners()
            recs = await audit.fetch(self.nc, games)
            waiting = [g for g in games if g not in self.ledger.finished and not (
                owners.get(g, gone) != gone
                and any(t > since_ms for t in audit.input_times_ms(recs[g])))]
            if not waiting:
                return {g: owners.get(g, "finished") for g in games}
            assert time.monotonic() < deadline, (
                f"games not going on after {gone} went away: "
                f"{ {g: owners.get(g) for g in waiting} }")
            await asyncio.sleep(0.5)

    async def judge(self, since_ms: int = 0, fault_ms: int | None = None,
                    stall_s: float = STALL_S) -> audit.Verdict:
        # the accepted commands up to now, taken before the records are read:
        # the players go on playing meanwhile
        until = now_ms()
        acc = [(g, p, c) for g, p, c, t in list(self.ledger.accepted) if since_ms <= t <= until]
        games = sorted(self.ledger.games)
        recs = await audit.fetch(self.nc, games)
        return audit.judge(recs, acc, since_ms=since_ms, until_ms=until,
                           finished=self.ledger.finished | await self.directory_finished(),
                           fault_ms=fault_ms, stall_s=stall_s)

    async def heartbeat_of(self, shard: str, timeout: float = 10) -> dict[str, Any]:
        """The next heartbeat of ``shard`` on NATS (what placement reads)."""
        got: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        async def on(msg: Any) -> None:
            hb = orjson.loads(msg.data)
            if hb.get("shard") == shard and not hb.get("draining") and not got.done():
                got.set_result(hb)

        shards = self.cluster.chart.workloads["shard"]
        prefix = self.cluster.chart.env(shards, shard, "0.0.0.0")["TTANJIT_NATS_PREFIX"]
        sub = await self.nc.subscribe(Subjects(prefix).heartbeat, cb=on)
        try:
            return await asyncio.wait_for(got, timeout)
        finally:
            await sub.unsubscribe()

    async def directory_finished(self) -> set[str]:
        """Games the game directory (``ttanjit_games``) says are finished:
        a game over is no stall even if its players missed the last event."""
        kv = await self.nc.jetstream().key_value(GAMES_BUCKET)
        out = set()
        for gid in sorted(self.ledger.games):
            try:
                entry = await kv.get(gid)
            except Exception:  # noqa: BLE001 - not in the directory (yet)
                continue
            if orjson.loads(entry.value or b"{}").get("state") == "finished":
                out.add(gid)
        return out


@pytest.fixture(scope="module")
async def load(cluster: Cluster) -> AsyncIterator[Load]:
    ld = Load(cluster)
    await ld.start()
    try:
        yield ld
    finally:
        await ld.close()


async def replace(cluster: Cluster, pod: Pod, chart: Chart | None = None) -> Pod:
    """What the StatefulSet controller does once a Pod is gone: a new one of
    the same name (and a new IP)."""
    await asyncio.to_thread(cluster.remove, pod)
    new = await asyncio.to_thread(cluster.start, pod.component, pod.name, chart)
    await asyncio.to_thread(new.wait_ready)
    return new


# --- 1 ------------------------------------------------------------------------------

def test_the_image_is_what_the_chart_expects(cluster: Cluster) -> None:
    """The image's user is the chart's runAsUser/runAsGroup, it exposes every
    containerPort, and every command the chart runs is in it."""
    config = json.loads(subprocess.run(["podman", "image", "inspect", cluster.image],
                                       capture_output=True, text=True, check=True).stdout)[0]
    exposed = {int(p.split("/")[0]) for p in config["Config"].get("ExposedPorts", {})}
    for w in cluster.chart.workloads.values():
        sc = {**w.pod.get("securityContext", {}), **w.container.get("securityContext", {})}
        assert config["Config"]["User"] == f"{sc['runAsUser']}:{sc['runAsGroup']}", w.name
        assert {int(p["containerPort"]) for p in w.container["ports"]} <= exposed, w.name
        assert w.container["command"][:2] == ["python", "-m"], w.name
        hook = w.container.get("lifecycle", {}).get("preStop", {}).get("exec", {})
        pod = cluster.of(w.component)[0]
        for cmd in (w.container["command"], hook.get("command")):
            if cmd and cmd[:2] == ["python", "-m"]:
                probe = pod.exec("python", "-c", f"import importlib.util as u, sys; "
                                 f"sys.exit(u.find_spec({cmd[2]!r}) is None)")
                assert probe.returncode == 0, (w.name, cmd)
            elif cmd:
                assert pod.exec("sh", "-c", f"command -v {cmd[0]}").returncode == 0, cmd


def test_the_image_runs_every_package_at_its_pinned_version(cluster: Cluster) -> None:
    """The image has what the tests ran with: each Python package in it at its
    version in constraints.txt (`make lock`), none from outside it."""
    pinned = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.strip().split("==")
            pinned[canonical(name)] = version
    pod = next(iter(cluster.pods.values()))
    done = pod.exec("python", "-c", "import json, importlib.metadata as m; print(json.dumps("
                    "{d.metadata['Name']: d.version for d in m.distributions()}))")
    assert done.returncode == 0, done.stderr
    installed = {canonical(k): v for k, v in json.loads(done.stdout).items()}
    assert installed.pop("ttanjit")
    assert len(installed) >= 20, installed
    assert {k: v for k, v in installed.items() if pinned.get(k) != v} == {}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_pod_is_ready_by_its_probes_and_locked_down(cluster: Cluster) -> None:
    comps = Counter(p.component for p in cluster.pods.values())
    wl = cluster.chart.workloads
    assert comps == {"nats": 1, **{c: wl[c].replicas for c in wl}}, comps
    assert comps["matchmaker"] >= 2 and comps["shard"] == 2 and comps["gateway"] == 2
    for pod in cluster.pods.values():
        if pod.workload is None:
            continue
        for which in ("startupProbe", "livenessProbe", "readinessProbe"):
            assert pod.workload.container.get(which), (pod.name, which)
            assert pod.probe(which), (pod.name, which)
        limit = pod.workload.container["resources"]["limits"]["memory"]
        host = pod.inspect()["HostConfig"]
        assert host["Memory"] > 0 and host["ReadonlyRootfs"], (pod.name, limit)
        out = pod.exec("sh", "-c", "id -u; id -g; pwd; grep -E '^(CapEff|NoNewPrivs)' "
                       "/proc/self/status; touch /app/x 2>/dev/null && echo root-writable; "
                       "touch /tmp/x && echo tmp-writable").stdout
        uid, gid, cwd, capeff, nnp, *rest = out.split("\n")
        assert (uid, gid, cwd) == ("10001", "10001", "/app"), out
        assert capeff.split()[1] == "0000000000000000" and nnp.split()[1] == "1", out
        assert "root-writable" not in rest and "tmp-writable" in rest, out


# --- 2 ------------------------------------------------------------------------------

async def test_games_of_all_three_kinds_are_played_to_the_end(cluster: Cluster,
                                                              tmp_path: Path) -> None:
    """`ttanjit loadtest play --url` on the published gateway ports: a table
    of load-test players per game, one game each, to its end."""
    ttanjit = Path(sys.executable).parent / "ttanjit"
    gateways = cluster.of("gateway")
    # seats, and how the table is made: a quick match, or a private room (one
    # round of 줄줄이 벌점, the shortest game its options allow)
    kinds = {"onecard": (2, []), "hakka": (4, []),
             "penalty_rows": (3, ["--mode", "room", "--options", '{"rounds": 1}'])}
    procs = {}
    for i, (game, (seats, how)) in enumerate(kinds.items()):
        url = gateways[i % len(gateways)].url("http")
        procs[game] = await asyncio.create_subprocess_exec(
            str(ttanjit), "loadtest", "play", "--url", url, "--game", game, *how,
            "--seats", str(seats), "-n", str(seats), "--games", "1", "--think", "20-80",
            "--ramp", "0", "--duration", "200", "--level", "random", "--quiet",
            "--json", str(tmp_path / f"{game}.json"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    t0 = time.monotonic()
    outs = {g: (await p.communicate())[0].decode() for g, p in procs.items()}
    print(f"\nthree kinds played in {time.monotonic() - t0:.1f} s")
    for game, (seats, _) in kinds.items():
        assert procs[game].returncode == 0, outs[game]
        report = json.loads((tmp_path / f"{game}.json").read_text())
        assert report["failures"] == [], (game, report["failures"])
        assert report["games_finished"] == 1, (game, outs[game])
        assert report["games_played"] == seats, (game, outs[game])


# --- 3, 4 -----------------------------------------------------------------------------

async def test_kill_9_of_a_shard_container_its_games_go_on_on_the_other(
        cluster: Cluster, load: Load) -> None:
    victim, games = await load.busiest(cluster.of("shard"))
    fault = now_ms()
    await asyncio.to_thread(cluster.kill, victim)
    moved = await load.continued(games, victim.name, fault)
    took = (now_ms() - fault) / 1000
    v = await load.judge(since_ms=fault - 1000, fault_ms=fault)
    print(f"\nkill -9 {victim.name}: {len(games)} games moved {set(moved.values())} in "
          f"{took:.1f} s; recovery {v.recovery_s:.2f} s, longest gap {v.longest_gap_s:.2f} s")
    assert not v.lost, v.lost
    await replace(cluster, victim)


async def test_podman_stop_of_a_shard_drains_and_exits_0_within_the_grace_period(
        cluster: Cluster, load: Load) -> None:
    victim, games = await load.busiest(cluster.of("shard"))
    grace = victim.workload.grace_s if victim.workload else 0
    fault = now_ms()
    code, took = await asyncio.to_thread(cluster.stop, victim, False)  # SIGTERM only
    logs = victim.logs()
    print(f"\npodman stop {victim.name}: exit {code} after {took:.1f} s (grace {grace} s)")
    assert code == 0, logs[-3000:]
    assert took < grace
    assert '"msg":"drained"' in logs, logs[-3000:]
    moved = await load.continued(games, victim.name, fault)
    assert victim.name not in moved.values()
    v = await load.judge(since_ms=fault - 1000, fault_ms=fault)
    assert not v.lost, v.lost
    await replace(cluster, victim)


# --- 5 ------------------------------------------------------------------------------

async def test_rolling_replacement_of_the_gateways_players_resume_elsewhere(
        cluster: Cluster, load: Load) -> None:
    since = now_ms()
    for old in list(cluster.of("gateway")):
        new = await asyncio.to_thread(cluster.start, "gateway")  # maxSurge: new one first
        await asyncio.to_thread(new.wait_ready)
        # the Service drops a terminating Pod from its endpoints: from now on a
        # player that (re)connects reaches the ready gateways only
        old_url, new_url = old.url("http"), new.url("http")
        load.bases[load.bases.index(old_url)] = new_url
        on_old = {p: p.reconnects for p in load.players if p.base == old_url}
        for p in on_old:
            p.base = new_url
        code, took = await asyncio.to_thread(cluster.stop, old)  # preStop, then SIGTERM
        grace = old.workload.grace_s if old.workload else 0
        print(f"\ngateway {old.name} -> {new.name}: exit {code} after {took:.1f} s, "
              f"{len(on_old)} players to resume")
        assert code == 0 and took < grace, old.logs()[-3000:]
        await asyncio.to_thread(cluster.remove, old)
        deadline = time.monotonic() + 30
        while any(p.reconnects == n or not p.online for p, n in on_old.items()):
            assert time.monotonic() < deadline, [(p.label, p.base, p.online) for p in on_old]
            await asyncio.sleep(0.2)
    assert load.stats.count["reconnect_failures"] == 0, load.stats.count
    assert "failed" not in load.stats.resumes, load.stats.resumes
    assert sum(load.stats.resumes.values()) >= 1, load.stats.resumes
    await asyncio.sleep(3.0)  # moves after the resumes
    v = await load.judge(since_ms=since)
    assert not v.lost, v.lost


# --- 6 ------------------------------------------------------------------------------

async def test_scale_shards_out_and_in_by_the_charts_replicas(
        cluster: Cluster, load: Load, render: Callable[..., Chart]) -> None:
    since = now_ms()
    # helm upgrade --set shard.replicas=3: the StatefulSet adds ordinal 2
    up = render("shard.replicas=3")
    sts = up.workloads["shard"]
    have = {p.name for p in cluster.of("shard")}
    added = [await asyncio.to_thread(cluster.start, "shard", f"{sts.name}-{i}", up)
             for i in range(sts.replicas) if f"{sts.name}-{i}" not in have]
    assert [p.name for p in added] == [f"{sts.name}-2"]
    new = added[0]
    await asyncio.to_thread(new.wait_ready)
    await load.heartbeat_of(new.name)  # the matchmaker hears it too: placeable
    # new players: new tables, placed on the least-loaded shard, the new one;
    # a few more every 15 s (a placement that fails on a shard just started
    # skips it for 10 s, docs/protocol.md 4)
    fresh: list[Any] = []
    deadline = time.monotonic() + 60
    more_at = 0.0
    while not (placed := await load.live_on(new.name)):
        if time.monotonic() > deadline:
            owners = await load.owners()
            said = [ln for p in cluster.of("matchmaker") for ln in p.logs().splitlines()
                    if "CreateGame" in ln or new.name in ln]
            pytest.fail(f"the third shard took no new game: owners {owners}, new players "
                        f"{[(p.label, p.game_id, owners.get(p.game_id)) for p in fresh]}, "
                        f"errors {load.errors}, matchmaker: {said[-10:]}", pytrace=False)
        if time.monotonic() >= more_at:
            fresh += load.add(4)
            more_at = time.monotonic() + 15
        await asyncio.sleep(0.5)
    print(f"\n{new.name} took {len(placed)} new games")

    # helm upgrade --set shard.replicas=2: the StatefulSet deletes ordinal 2
    # (preStop `ttanjit drain`, then SIGTERM within the grace period)
    down = render("shard.replicas=2")
    assert down.workloads["shard"].replicas == 2
    await asyncio.sleep(2.0)
    games = await load.live_on(new.name)
    fault = now_ms()
    code, took = await asyncio.to_thread(cluster.stop, new)
    print(f"{new.name} scaled in: exit {code} after {took:.1f} s with {len(games)} live games")
    assert code == 0 and took < new.workload.grace_s, new.logs()[-3000:]  # type: ignore[union-attr]
    moved = await load.continued(games, new.name, fault)
    assert new.name not in moved.values()
    await asyncio.to_thread(cluster.remove, new)
    v = await load.judge(since_ms=since)
    assert not v.lost, v.lost


# --- 7 ------------------------------------------------------------------------------

async def test_the_whole_run_lost_no_command_and_no_game(cluster: Cluster, load: Load) -> None:
    await asyncio.sleep(2.0)
    slow = await load.judge(stall_s=SLOW_S)
    for gid, gap in slow.stalls.items():
        rec = (await audit.fetch(load.nc, [gid]))[gid]
        entries = [e for e in (rec.entries if rec else []) if "ms" in e]
        worst = max(range(1, len(entries)), default=0,
                    key=lambda i: entries[i]["ms"] - entries[i - 1]["ms"])
        near = [{k: e.get(k) for k in ("t", "seat", "by", "ms")} | {
                 "action": (e.get("action") or {}).get("type")}
                for e in entries[max(0, worst - 2): worst + 2]]
        print(f"\nslow game {gid}: {gap} s without an input, around it: {near}")
    v = await load.judge()
    owners = await load.owners()
    live = {p.name for p in cluster.of("shard")}
    stranded = {g: s for g, s in owners.items() if s not in live and g not in load.ledger.finished}
    over = await load.directory_finished()
    print(f"\nwhole run: {v.games} games ({len(over)} finished, "
          f"{len(over - load.ledger.finished)} of them unseen by their players), "
          f"{v.accepted} accepted commands, {len(v.lost)} lost, resumes {dict(load.stats.resumes)}")
    assert v.accepted > 50 and not v.lost, v.lost
    assert not stranded, stranded
    assert not v.stalls, v.stalls
    assert not load.errors, load.errors


# --- 8 ------------------------------------------------------------------------------

def _api(port: int, path: str, **params: str) -> Any:
    url = f"http://127.0.0.1:{port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        doc = json.loads(resp.read())
    assert doc["status"] == "success", doc
    return doc["data"]


def test_a_real_prometheus_scrapes_every_containers_metrics_port(
        cluster: Cluster, prometheus_bin: Path, tmp_path: Path) -> None:
    pods = [p for p in cluster.pods.values() if p.workload is not None]
    jobs: dict[str, list[dict[str, Any]]] = {}
    for p in pods:
        jobs.setdefault(p.component, []).append(
            {"targets": [f"127.0.0.1:{p.host_port('metrics')}"], "labels": {"pod": p.name}})
    config = {"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
              "rule_files": [str(ALERTS)],
              "scrape_configs": [{"job_name": job, "static_configs": sc}
                                 for job, sc in jobs.items()]}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    with open(tmp_path / "prometheus.log", "wb") as log:
        proc = subprocess.Popen(
            [str(prometheus_bin), f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                active = _api(port, "targets")["activeTargets"]
                if len(active) == len(pods) and all(t["health"] == "up" for t in active):
                    break
            except OSError:
                active = []
            assert time.monotonic() < deadline, (active, (tmp_path / "prometheus.log").read_text())
            time.sleep(0.5)
        up = _api(port, "query", query="up")["result"]
        assert sorted(r["metric"]["pod"] for r in up) == sorted(p.name for p in pods)
        assert all(r["value"][1] == "1" for r in up), up
        capacity = _api(port, "query", query="sum(ttanjit_bot_capacity)")["result"]
        assert float(capacity[0]["value"][1]) >= 1, capacity
        per_job = _api(port, "query", query="count by (job) ({__name__=~\"ttanjit_.+\"})")
        assert {r["metric"]["job"] for r in per_job["result"]} == set(jobs), per_job
        cpu = _api(port, "query", query='process_cpu_seconds_total{job="shard"}')["result"]
        assert len(cpu) == len(jobs["shard"]), cpu  # what the README sizes shards by
    finally:
        proc.terminate()
        proc.wait(10)
