"""Gateway round trip (issue 6): a game command through
WebSocket → gateway → NATS → shard → NATS → gateway → WebSocket, p50/p99,
with 1,000 players connected and seated in games, beside the bare cost of
its two hops measured in the same run (a plain ``websockets`` echo and a
NATS request/reply, one in flight each).

Real processes: ``nats-server`` (JetStream), two shards, a bot worker, the
matchmaker and one gateway; this process is the 1,000 clients. Players
quick-match into 줄줄이 벌점 tables of 10 humans (no bots: every seat can act
at any time); every command is a ``select`` (change of selection, always
answered, never ends the turn). Players arrive in waves of 50 a second, so
the tables' turn deadlines (20 s) are spread as in real traffic. Commands are
paced at ``RATE`` per second in total, each player at most one in flight.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import nats
import orjson
import websockets

from ttanjit.common import natsauth
from ttanjit.common.nats import subscribed
from ttanjit.common.natsserver import NatsServer, free_port, wait_port
from ttanjit.loadtest.localstack import RECORD_KEY  # (the benchmark stacks' shards' key)

PLAYERS = 1000
TABLE = 10
RATE = 500  # commands per second, all players together


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def figures(xs: list[float]) -> dict[str, float]:
    return {"n": len(xs), "p50_ms": round(pct(xs, 50) * 1000, 3),
            "p99_ms": round(pct(xs, 99) * 1000, 3),
            "mean_ms": round(statistics.fmean(xs) * 1000, 3) if xs else float("nan")}


class Procs:
    def __init__(self, nats: NatsServer, logdir: Path) -> None:
        self.nats, self.logdir = nats, logdir
        self.procs: list[subprocess.Popen[bytes]] = []
        self.pids: dict[str, int] = {}  # name -> pid of every process started

    def start(self, svc: str, name: str, **env: str) -> subprocess.Popen[bytes]:
        full = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
        # each as its own NATS user, as deployed (common.natsauth)
        url = natsauth.service_url(self.nats.address, self.nats.users, svc)
        full.update(TTANJIT_NATS_URL=url, TTANJIT_SHARD_ID=name,
                    TTANJIT_ADVERTISE_HOST="127.0.0.1", TTANJIT_LOG_LEVEL="WARNING", **env)
        log = open(self.logdir / f"{name}.log", "wb")  # noqa: SIM115 - lives with the process
        p = subprocess.Popen([sys.executable, "-m", f"ttanjit.{svc}"], env=full, stdout=log,
                             stderr=subprocess.STDOUT)
        self.procs.append(p)
        self.pids[name] = p.pid
        return p

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.kill()
            p.wait()


def rtt_buckets(http: str, name: str = "ttanjit_gateway_command_rtt_seconds"
                ) -> dict[float, float]:
    """A latency histogram of a service (default: the gateway's own command
    round trip, WS in -> reply out)."""
    with urllib.request.urlopen(f"{http}/metrics", timeout=5) as r:
        text = r.read().decode()
    out: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith(name + "_bucket"):
            le = line.split('le="')[1].split('"')[0]
            key = float("inf") if le == "+Inf" else float(le)
            out[key] = out.get(key, 0.0) + float(line.rsplit(" ", 1)[1])
    return out


def shard_buckets(urls: list[str]) -> dict[float, float]:
    total: dict[float, float] = {}
    for url in urls:
        for k, v in rtt_buckets(url, "ttanjit_shard_command_latency_seconds").items():
            total[k] = total.get(k, 0.0) + v
    return total


def bucket_pct(before: dict[float, float], after: dict[float, float], p: float) -> float:
    """Upper bound (bucket edge) of the p-th percentile between two scrapes, ms."""
    les = sorted(after)
    total = after[les[-1]] - before.get(les[-1], 0)
    for le in les:
        if after[le] - before.get(le, 0) >= p / 100 * total:
            return le * 1000
    return float("inf")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def bare_costs(nats_url: str, n: int) -> dict[str, Any]:
    """One in flight: a plain websockets echo (server in a subprocess) and a
    NATS request/reply (responder on its own connection)."""
    port = free_port()
    code = ("import asyncio, websockets\n"
            "async def echo(ws):\n    async for m in ws: await ws.send(m)\n"
            "async def main():\n"
            f"    async with websockets.serve(echo, '127.0.0.1', {port}, compression=None):\n"
            "        await asyncio.Future()\nasyncio.run(main())\n")
    echo = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_port("127.0.0.1", port)
        msg = orjson.dumps({"type": "action", "game_id": "abcdefghijkl", "cmd_id": "c1",
                            "action": {"type": "select", "card": 58, "row": 2}}).decode()
        ws_rtt = []
        async with websockets.connect(f"ws://127.0.0.1:{port}", compression=None) as ws:
            for _ in range(n):
                t0 = time.perf_counter()
                await ws.send(msg)
                await ws.recv()
                ws_rtt.append(time.perf_counter() - t0)
    finally:
        echo.kill()
        echo.wait()
    responder = await nats.connect(nats_url)
    requester = await nats.connect(nats_url)
    reply = orjson.dumps({"ok": True, "cmd_id": "c1", "seq": 41})

    async def respond(m: Any) -> None:
        await m.respond(reply)

    await responder.subscribe("bench.echo", cb=respond)
    # (one flush was not enough: the "no responders" seen twice in ~15 runs
    # on 2026-12-01, see subscribed())
    await subscribed(responder)
    nats_rtt: list[float] = []
    while len(nats_rtt) < n:
        t0 = time.perf_counter()
        await requester.request("bench.echo", msg.encode(), timeout=2)
        nats_rtt.append(time.perf_counter() - t0)
    await requester.close()
    await responder.close()
    return {"ws_echo": figures(ws_rtt[n // 10:]), "nats_request_reply": figures(nats_rtt[n // 10:])}


class Player:
    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.game_id = ""
        self.card = 0
        self.pending: dict[str, float] = {}
        self.ready = asyncio.Event()
        self.rtts: list[float] | None = None
        self.frames = 0

    async def reader(self) -> None:
        async for data in self.ws:
            self.frames += 1
            f = orjson.loads(data)
            kind = f.get("type")
            if kind in ("result", "error") and f.get("cmd_id") in self.pending:
                t0 = self.pending.pop(f["cmd_id"])
                if self.rtts is not None:
                    self.rtts.append(time.perf_counter() - t0)
            elif kind == "view" and not self.ready.is_set():
                self.game_id = f["game_id"]
                self.card = f["view"]["hand"][0]["card"]
                self.ready.set()

    async def command(self, i: int) -> None:
        cmd_id = f"b{i}"
        self.pending[cmd_id] = time.perf_counter()
        await self.ws.send(orjson.dumps({
            "type": "action", "game_id": self.game_id, "cmd_id": cmd_id,
            "action": {"type": "select", "card": self.card, "row": 1 + i % 4}}).decode())


def sign_in(http: str, i: int) -> str:
    req = urllib.request.Request(f"{http}/api/guest", data=json.dumps(
        {"nickname": f"b{i}"}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return str(json.loads(r.read())["token"])


async def measure(http: str, gw_pid: int, players: int, seconds: float,
                  shard_urls: list[str], gw_metrics: str,
                  pids: dict[str, int] | None = None) -> dict[str, Any]:
    """``pids`` (name -> pid): processes whose CPU over the timed window is
    returned too, as ``process_cpu_s`` (seconds each) beside ``window_s``."""
    pids = pids or {}
    loop = asyncio.get_running_loop()
    tokens = await asyncio.gather(*(loop.run_in_executor(None, sign_in, http, i)
                                    for i in range(players)))
    url = http.replace("http://", "ws://") + "/ws"
    conns: list[Player] = []
    tasks = []
    t_connect = time.perf_counter()
    for i in range(0, players, 50):  # connect in waves, 1 s apart: tables start (and
        if i:                          # their 20 s selection deadlines fall) spread out
            await asyncio.sleep(1.0)   # as in real traffic, not all in the same instant
        batch = await asyncio.gather(*(websockets.connect(url, compression=None,
                                                          max_queue=None)
                                       for _ in tokens[i:i + 50]))
        for ws, tok in zip(batch, tokens[i:i + 50], strict=True):
            p = Player(ws)
            conns.append(p)
            tasks.append(asyncio.create_task(p.reader()))
            await ws.send(orjson.dumps({"type": "hello", "token": tok}).decode())
            await ws.send(orjson.dumps({"type": "queue", "game": "penalty_rows",
                                        "seats": TABLE}).decode())
    await asyncio.wait_for(asyncio.gather(*(p.ready.wait() for p in conns)), 120)
    seated_s = time.perf_counter() - t_connect
    print(f"  {players} players connected and seated in {players // TABLE} games "
          f"in {seated_s:.1f} s (arriving 50 a second)", flush=True)

    async def paced(rate: float, dur: float, record: bool) -> list[float]:
        rtts: list[float] = []
        for p in conns:
            p.rtts = rtts if record else None
        i, t_end = 0, loop.time() + dur
        interval = 1.0 / rate
        nxt = loop.time()
        while loop.time() < t_end:
            p = random.choice(conns)
            if not p.pending:
                await p.command(i)
                i += 1
            nxt += interval
            delay = nxt - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
        await asyncio.sleep(1.0)  # let the last replies land
        return rtts

    await paced(RATE, 2.0, False)  # warm-up
    h0 = await loop.run_in_executor(None, rtt_buckets, gw_metrics)
    s0 = await loop.run_in_executor(None, shard_buckets, shard_urls)
    cpu0, f0 = cpu_seconds(gw_pid), sum(p.frames for p in conns)
    cpus0 = {name: cpu_seconds(pid) for name, pid in pids.items()}
    t0 = time.perf_counter()
    loaded = await paced(RATE, seconds, True)
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(gw_pid) - cpu0
    process_cpu = {name: round(cpu_seconds(pid) - cpus0[name], 3) for name, pid in pids.items()}
    frames = sum(p.frames for p in conns) - f0
    h1 = await loop.run_in_executor(None, rtt_buckets, gw_metrics)
    s1 = await loop.run_in_executor(None, shard_buckets, shard_urls)
    inside = {"p50_ms_at_most": bucket_pct(h0, h1, 50), "p99_ms_at_most": bucket_pct(h0, h1, 99),
              "shard_p50_ms_at_most": bucket_pct(s0, s1, 50),
              "shard_p99_ms_at_most": bucket_pct(s0, s1, 99)}
    single: list[float] = []  # one command in flight, the same players connected
    for i in range(300):
        p = conns[i % len(conns)]  # a different player each time (20 frames/s limit)
        p.rtts = single
        await p.command(10_000_000 + i)
        end = loop.time() + 2
        while p.pending and loop.time() < end:
            await asyncio.sleep(0)
    for p in conns:
        await p.ws.close()
    for t in tasks:
        t.cancel()
    return {"players": players, "games": players // TABLE, "seated_s": round(seated_s, 1),
            "rate_per_s": RATE, "loaded": figures(loaded), "inside_gateway": inside,
            "one_in_flight": figures(single[30:]),
            "gateway_cpu_us_per_command": round(cpu / max(1, len(loaded)) * 1e6, 1),
            "gateway_cpu_share": round(cpu / wall, 3),
            "frames_out_per_s": round(frames / wall, 1),
            "window_s": round(wall, 3), "process_cpu_s": process_cpu}


def run(args: Any) -> dict[str, Any]:
    quick = bool(getattr(args, "quick", False))
    players = 200 if quick else PLAYERS
    seconds = 5.0 if quick else 20.0
    with tempfile.TemporaryDirectory(prefix="ttanjit-bench-gw-") as tmp, \
            NatsServer(store_dir=os.path.join(tmp, "js"), users=natsauth.made("ttanjit.v1")) as ns:
        procs = Procs(ns, Path(tmp))
        try:
            mm_port, http_port = free_port(), free_port()
            shard_urls = []
            for i in range(2):
                mport = free_port()
                shard_urls.append(f"http://127.0.0.1:{mport}")
                # (the shards sign their records, as a deployment's should)
                procs.start("shard", f"shard-{i}", TTANJIT_GRPC_PORT=str(free_port()),
                            TTANJIT_METRICS_PORT=str(mport), TTANJIT_RECORD_KEY=RECORD_KEY)
            procs.start("bots", "bots")
            procs.start("matchmaker", "matchmaker", TTANJIT_GRPC_PORT=str(mm_port),
                        TTANJIT_BOT_WAIT_MS="600000")
            gw_metrics = free_port()  # /metrics is not on the public HTTP port
            gw = procs.start("gateway", "gateway", TTANJIT_HTTP_PORT=str(http_port),
                             TTANJIT_METRICS_PORT=str(gw_metrics),
                             TTANJIT_TOKEN_SECRET=os.urandom(16).hex(),
                             TTANJIT_MATCHMAKER_ADDR=f"127.0.0.1:{mm_port}")
            http = f"http://127.0.0.1:{http_port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{http}/readyz", timeout=1) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError("gateway not ready")
                time.sleep(0.2)
            time.sleep(1.5)  # shard heartbeats reach the matchmaker
            bare = asyncio.run(bare_costs(ns.url, 300 if quick else 2000))
            print(f"  bare: websocket echo p50 {bare['ws_echo']['p50_ms']} ms, "
                  f"NATS request/reply p50 {bare['nats_request_reply']['p50_ms']} ms",
                  flush=True)
            assert ns.proc is not None
            pids = {**procs.pids, "nats-server": ns.proc.pid}
            main = asyncio.run(measure(http, gw.pid, players, seconds, shard_urls,
                                       f"http://127.0.0.1:{gw_metrics}", pids))
        finally:
            procs.stop()
    bare_p50 = bare["ws_echo"]["p50_ms"] + bare["nats_request_reply"]["p50_ms"]
    out = {**main, "pids": pids, "bare": bare, "bare_p50_ms": round(bare_p50, 3),
           "p50_over_bare": round(main["loaded"]["p50_ms"] / bare_p50, 2),
           "targets": {"p99_ms": 50, "p50_over_bare": 3}}
    lo = main["loaded"]
    print(f"  game command round trip, {players} players, {RATE}/s: p50 {lo['p50_ms']} ms, "
          f"p99 {lo['p99_ms']} ms (n={lo['n']}); one in flight p50 "
          f"{main['one_in_flight']['p50_ms']} ms; inside the gateway (WS in -> reply out, "
          f"bucket edges) p50 <= {main['inside_gateway']['p50_ms_at_most']} ms, "
          f"p99 <= {main['inside_gateway']['p99_ms_at_most']} ms; inside the shards p50 <= "
          f"{main['inside_gateway']['shard_p50_ms_at_most']} ms, p99 <= "
          f"{main['inside_gateway']['shard_p99_ms_at_most']} ms", flush=True)
    print(f"  bare cost (echo + request/reply) p50 {bare_p50:.3f} ms -> "
          f"{out['p50_over_bare']}x; gateway CPU {main['gateway_cpu_us_per_command']} µs "
          f"per command ({main['frames_out_per_s']} frames out/s)", flush=True)
    return out
