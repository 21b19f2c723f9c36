"""Game shard benchmark (issue 5; BENCHMARKS.md "## Game shard").

Real processes: a nats-server with JetStream and ``python -m ttanjit.shard``
processes; this process is the load (NATS requests as the gateway sends
them). Per shard process:

1. commands: 1,000 live games (penalty rows, 2 humans each); paced
   requests at a fixed rate -> p50/p99 request->reply latency and the shard's
   CPU per command; then a closed loop (many in flight) -> commands/s;
2. timers: 2,000 live games with their turn deadlines firing while commands
   flow -> timer lag (fired minus due) p50/p99 from the shard's histogram;
3. failover: kill -9 of the owner of N games -> seconds until each game
   accepts a move again on the other shard;
4. drain: SIGTERM of the owner of 500 games -> seconds until the process
   exited and until every game accepts moves on the other shard.

``--quick`` runs every part smaller.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import nats
import orjson
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from ttanjit.common.nats import Subjects
from ttanjit.common.natsserver import NatsServer, free_port
from ttanjit.loadtest.localstack import RECORD_KEY  # (the benchmark stacks' shards' key)

SUBJ = Subjects()
TARGETS = {"p99_command_ms": 20, "timer_lag_p99_ms": 20, "failover_s": 3, "drain_500_s": 10}


class ShardProc:
    def __init__(self, nats_url: str, name: str, logdir: Path, **env: str) -> None:
        self.name = name
        self.grpc_port, self.metrics_port = free_port(), free_port()
        full = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
        full.update(TTANJIT_NATS_URL=nats_url, TTANJIT_SHARD_ID=name,
                    TTANJIT_GRPC_PORT=str(self.grpc_port),
                    TTANJIT_METRICS_PORT=str(self.metrics_port),
                    TTANJIT_ADVERTISE_HOST="127.0.0.1", TTANJIT_LOG_LEVEL="WARNING",
                    # the shards sign their records, as a deployment's should
                    TTANJIT_RECORD_KEY=RECORD_KEY, **env)
        self.logfile = logdir / f"{name}.log"
        self._fh = open(self.logfile, "wb")  # noqa: SIM115
        full["TTANJIT_LOG_LEVEL"] = "INFO"
        self.proc = subprocess.Popen([sys.executable, "-m", "ttanjit.shard"], env=full,
                                     stdout=self._fh, stderr=subprocess.STDOUT)

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if '"msg":"ready"' in self.logfile.read_text(errors="replace"):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.logfile.read_text()[-2000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"{self.name} not ready")

    def cpu_s(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
        return float("nan")

    def metrics(self) -> str:
        import urllib.request

        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as r:
            return str(r.read().decode())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def hist_quantile(text: str, name: str, q: float) -> float:
    """histogram_quantile over a Prometheus text histogram (seconds)."""
    buckets: list[tuple[float, float]] = []
    for line in text.splitlines():
        if line.startswith(f"{name}_bucket"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float("inf") if le == "+Inf" else float(le),
                            float(line.rsplit(" ", 1)[1])))
    if not buckets or buckets[-1][1] == 0:
        return float("nan")
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in buckets:
        if c >= rank:
            if le == float("inf"):
                return prev_le
            return prev_le + (le - prev_le) * ((rank - prev_c) / max(c - prev_c, 1e-9))
        prev_le, prev_c = le, c
    return prev_le


def hist_count(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(f"{name}_count"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


class Games:
    """Live games of two humans each, with the hands to build legal selects."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.players: list[tuple[str, str]] = []
        self.card: dict[str, int] = {}
        self.k: dict[str, int] = {}

    async def create(self, nc: Any, port: int, n: int, select_ms: int = 45_000,
                     concurrency: int = 16, spread_s: float = 0.0) -> None:
        """Create ``n`` games; ``spread_s`` > 0 starts them evenly over that
        many seconds (so their deadlines do not all fall together)."""
        from ttanjit.v1 import shard_pb2, shard_pb2_grpc

        sem = asyncio.Semaphore(concurrency)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = shard_pb2_grpc.ShardServiceStub(ch)

            async def one(i: int) -> None:
                pa, pb = f"p_b{i:06d}a{random.getrandbits(24):06x}", f"p_b{i:06d}b{i:06x}"
                if spread_s:
                    await asyncio.sleep(i * spread_s / n)
                async with sem:
                    resp = await stub.CreateGame(shard_pb2.CreateGameRequest(
                        game="penalty_rows", seed=i,
                        options_json=orjson.dumps({"select_ms": select_ms, "rounds": 5}).decode(),
                        seats=[shard_pb2.SeatSpec(kind="human", player_id=pa),
                               shard_pb2.SeatSpec(kind="human", player_id=pb)]), timeout=30)
                    for p in (pa, pb):
                        msg = await nc.request(SUBJ.sync(resp.game_id), orjson.dumps(
                            {"player": p, "last_seq": 0}), timeout=10)
                        first = orjson.loads(msg.data)["view"]["hand"][0]
                        self.card[p] = first["card"] if isinstance(first, dict) else first
                        self.k[p] = 0
                self.ids.append(resp.game_id)
                self.players.append((pa, pb))

            await asyncio.gather(*(one(i) for i in range(n)))

    def action(self, p: str) -> dict[str, Any]:
        self.k[p] += 1
        return {"type": "select", "card": self.card[p], "row": self.k[p] % 4 + 1}

    async def command(self, nc: Any, i: int, which: int, retry_s: float = 0.0) -> tuple[
            bool, float]:
        gid, p = self.ids[i], self.players[i][which]
        body = orjson.dumps({"player": p, "cmd_id": f"b{self.k[p]}-{random.getrandbits(40)}",
                             "action": self.action(p)})
        t0 = time.perf_counter()
        deadline = time.monotonic() + retry_s
        while True:
            try:
                # retrying like the gateway: short waits (a killed owner may
                # still hold the subscription for a moment)
                msg = await nc.request(SUBJ.cmd(gid), body, timeout=0.5 if retry_s else 5)
                ok = bool(orjson.loads(msg.data).get("ok"))
                if ok or time.monotonic() > deadline:
                    return ok, time.perf_counter() - t0
            except (NoRespondersError, NatsTimeout):
                if time.monotonic() > deadline:
                    return False, time.perf_counter() - t0
            await asyncio.sleep(0.02)


async def paced(nc: Any, games: Games, rate: float, seconds: float) -> dict[str, Any]:
    lat: list[float] = []
    fails = 0
    tasks: set[asyncio.Task[Any]] = set()

    async def one() -> None:
        nonlocal fails
        i = random.randrange(len(games.ids))
        ok, dt = await games.command(nc, i, random.randrange(2))
        lat.append(dt)
        fails += 0 if ok else 1

    start = time.perf_counter()
    sent = 0
    while (now := time.perf_counter() - start) < seconds:
        due = int(now * rate)
        while sent < due:
            t = asyncio.ensure_future(one())
            tasks.add(t)
            t.add_done_callback(tasks.discard)
            sent += 1
        await asyncio.sleep(0.002)
    if tasks:
        await asyncio.wait(tasks, timeout=10)
    return {"rate_per_s": rate, "seconds": seconds, "commands": len(lat), "refused": fails,
            "p50_ms": round(pct(lat, 0.5) * 1000, 2), "p99_ms": round(pct(lat, 0.99) * 1000, 2),
            "max_ms": round(max(lat) * 1000, 2) if lat else None}


async def closed_loop(nc: Any, games: Games, inflight: int, seconds: float) -> dict[str, Any]:
    done = 0
    lat: list[float] = []
    stop = time.perf_counter() + seconds

    async def worker(w: int) -> None:
        nonlocal done
        rng = random.Random(w)
        while time.perf_counter() < stop:
            ok, dt = await games.command(nc, rng.randrange(len(games.ids)), rng.randrange(2))
            done += 1
            lat.append(dt)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(inflight)))
    el = time.perf_counter() - t0
    return {"inflight": inflight, "commands_per_s": round(done / el), "p50_ms":
            round(pct(lat, 0.5) * 1000, 2), "p99_ms": round(pct(lat, 0.99) * 1000, 2)}


async def part_commands(tmp: Path, n_games: int, rate: float, seconds: float,
                        store: str | None = None) -> dict[str, Any]:
    """``store``: where nats-server keeps JetStream (default: on disk under tmp)."""
    with NatsServer(store_dir=store or str(tmp / "nats1")) as server:
        shard = ShardProc(server.url, "bench-a", tmp)
        try:
            shard.wait_ready()
            nc = await nats.connect(server.url, pending_size=256 * 1024 * 1024)
            games = Games()
            t0 = time.perf_counter()
            await games.create(nc, shard.grpc_port, n_games)
            create_s = time.perf_counter() - t0
            cpu0 = shard.cpu_s()
            pace = await paced(nc, games, rate, seconds)
            cpu = shard.cpu_s() - cpu0
            text = shard.metrics()
            name = "ttanjit_shard_command_latency_seconds"
            pace["shard_side_p50_ms"] = round(hist_quantile(text, name, 0.5) * 1000, 2)
            pace["shard_side_p99_ms"] = round(hist_quantile(text, name, 0.99) * 1000, 2)
            pace["shard_cpu_per_command_us"] = round(cpu / max(1, pace["commands"]) * 1e6)
            pace["shard_cpu_share"] = round(cpu / seconds, 2)
            loop = await closed_loop(nc, games, 64, seconds / 2)
            await nc.close()
        finally:
            shard.stop()
    return {"games": n_games, "create_games_per_s": round(n_games / create_s), "paced": pace,
            "closed_loop": loop}


async def part_timers(tmp: Path, n_games: int, rate: float, seconds: float) -> dict[str, Any]:
    with NatsServer(store_dir=str(tmp / "nats2")) as server:
        shard = ShardProc(server.url, "bench-t", tmp)
        try:
            shard.wait_ready()
            nc = await nats.connect(server.url, pending_size=256 * 1024 * 1024)
            games = Games()
            # games start evenly over one select window (20 s), as players
            # arrive, so deadlines fall evenly too (~n/20 per second); the
            # commands flow meanwhile and for the next window
            creating = asyncio.ensure_future(games.create(nc, shard.grpc_port, n_games,
                                                          select_ms=20_000, spread_s=20.0))
            while len(games.ids) < 10:
                await asyncio.sleep(0.05)
            pace = await paced(nc, games, rate, seconds)
            await creating
            text = shard.metrics()
            rss = shard.rss_mb()
            await nc.close()
        finally:
            shard.stop()
    name = "ttanjit_shard_timer_lag_seconds"
    return {"games": n_games, "seconds": seconds, "commands_per_s": rate,
            "timers_fired": int(hist_count(text, name)),
            "timer_lag_p50_ms": round(hist_quantile(text, name, 0.5) * 1000, 2),
            "timer_lag_p99_ms": round(hist_quantile(text, name, 0.99) * 1000, 2),
            "command_p99_ms": pace["p99_ms"], "shard_rss_mb": rss}


async def part_failover(tmp: Path, n_games: int) -> dict[str, Any]:
    with NatsServer(store_dir=str(tmp / "nats3")) as server:
        a = ShardProc(server.url, "bench-fa", tmp)
        b = ShardProc(server.url, "bench-fb", tmp)
        try:
            a.wait_ready()
            b.wait_ready()
            nc = await nats.connect(server.url)
            games = Games()
            await games.create(nc, a.grpc_port, n_games)
            for i in range(n_games):
                await games.command(nc, i, 0)
            a.proc.kill()
            res = await asyncio.gather(*(games.command(nc, i, 1, retry_s=20)
                                         for i in range(n_games)))
            back = [dt for _, dt in res]
            ok = sum(1 for r, _ in res if r)
            await nc.close()
        finally:
            a.stop()
            b.stop()
    return {"games": n_games, "resumed": ok, "p50_s": round(pct(back, 0.5), 2),
            "max_s": round(max(back), 2)}


async def part_drain(tmp: Path, n_games: int) -> dict[str, Any]:
    with NatsServer(store_dir=str(tmp / "nats4")) as server:
        a = ShardProc(server.url, "bench-da", tmp)
        b = ShardProc(server.url, "bench-db", tmp)
        try:
            a.wait_ready()
            b.wait_ready()
            nc = await nats.connect(server.url)
            games = Games()
            await games.create(nc, a.grpc_port, n_games)
            t0 = time.perf_counter()
            a.proc.send_signal(signal.SIGTERM)
            exited = asyncio.ensure_future(asyncio.to_thread(a.proc.wait, 60))
            res = await asyncio.gather(*(games.command(nc, i, 0, retry_s=30)
                                         for i in range(n_games)))
            all_back = time.perf_counter() - t0
            rc = await exited
            exit_s = time.perf_counter() - t0
            await nc.close()
        finally:
            a.stop()
            b.stop()
    pauses = [dt for _, dt in res]
    return {"games": n_games, "exit_code": rc, "exit_s": round(exit_s, 2),
            "all_games_accept_moves_s": round(all_back, 2),
            "resumed": sum(1 for r, _ in res if r),
            "pause_p50_s": round(pct(pauses, 0.5), 2), "pause_max_s": round(max(pauses), 2)}


async def main(quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ttanjit-bench-shard-") as d:
        tmp = Path(d)
        out: dict[str, Any] = {"targets": TARGETS, "load_avg_before": os.getloadavg()}
        if quick:
            out["commands"] = await part_commands(tmp, 200, 400, 4)
            out["timers"] = await part_timers(tmp, 300, 200, 42)
            out["failover"] = await part_failover(tmp, 20)
            out["drain"] = await part_drain(tmp, 100)
        else:
            out["commands"] = await part_commands(tmp, 1000, 1000, 10)
            if os.path.isdir("/dev/shm"):
                # the same with JetStream's files on tmpfs: shows what the
                # shard costs without this machine's disk write stalls
                shm = tempfile.mkdtemp(prefix="ttanjit-bench-", dir="/dev/shm")
                try:
                    out["commands_tmpfs"] = await part_commands(tmp, 1000, 1000, 10, shm)
                finally:
                    import shutil

                    shutil.rmtree(shm, ignore_errors=True)
            out["timers"] = await part_timers(tmp, 2000, 500, 42)
            out["failover"] = await part_failover(tmp, 100)
            out["drain"] = await part_drain(tmp, 500)
        out["load_avg_after"] = os.getloadavg()
        return out


def run(args: Any) -> dict[str, Any]:
    quick = bool(getattr(args, "quick", False))
    try:
        import uvloop

        res: dict[str, Any] = uvloop.run(main(quick))
    except ImportError:
        res = asyncio.run(main(quick))
    c, t, f, d = res["commands"], res["timers"], res["failover"], res["drain"]
    print(f"commands: {c['games']} games, paced {c['paced']['rate_per_s']:.0f}/s: "
          f"p50 {c['paced']['p50_ms']} ms, p99 {c['paced']['p99_ms']} ms, "
          f"(in the shard: p99 {c['paced']['shard_side_p99_ms']} ms), "
          f"shard CPU {c['paced']['shard_cpu_per_command_us']} µs/command; "
          f"closed loop {c['closed_loop']['commands_per_s']}/s")
    if "commands_tmpfs" in res:
        ct = res["commands_tmpfs"]["paced"]
        print(f"commands, JetStream on tmpfs: p50 {ct['p50_ms']} ms, p99 {ct['p99_ms']} ms "
              f"(in the shard: p99 {ct['shard_side_p99_ms']} ms)")
    print(f"timers: {t['games']} games, {t['timers_fired']} fired, lag p50 "
          f"{t['timer_lag_p50_ms']} ms, p99 {t['timer_lag_p99_ms']} ms; shard RSS "
          f"{t['shard_rss_mb']} MB")
    print(f"failover (kill -9): {f['games']} games, all accept moves after max {f['max_s']} s "
          f"(p50 {f['p50_s']} s)")
    print(f"drain (SIGTERM): {d['games']} games, exit after {d['exit_s']} s, every game "
          f"accepts moves after {d['all_games_accept_moves_s']} s")
    print(f"machine load average before/after: {res['load_avg_before'][0]:.1f} / "
          f"{res['load_avg_after'][0]:.1f} (2 cores; other processes add to every tail)")
    print(orjson.dumps(res, option=orjson.OPT_INDENT_2).decode())
    return res
