"""A JetStream cluster of real ``nats-server`` processes on loopback, as
production runs NATS (docs/protocol.md 5: streams and KV at 3 replicas):
each node its own store dir, client port, route port and monitoring port,
all routed to each other. Used by the cluster tests, the chaos drill
(``python -m ttanjit.chaos``) and ``python -m ttanjit.bench nats_cluster``.

Example::

    with NatsCluster(3) as cluster:
        env["TTANJIT_NATS_URL"] = cluster.url      # "nats://…:a,nats://…:b,…"
        env["TTANJIT_JS_REPLICAS"] = "3"
        cluster.kill(1)                            # kill -9 of one node
        cluster.restart(1)                         # same ports, same store
        cluster.wait_healthy()                     # routes up, JetStream current

A node's ``/healthz`` answers 200 only once its JetStream is current (meta
group and every stream/consumer it holds caught up), which is what a rolling
restart waits for between nodes (the NATS Helm chart's startup probe does).

A node whose monitoring port has not answered once within
``STARTUP_PROBE_S`` of its start, while its process runs, is hung: it is
restarted on its ports and store, as the kubelet restarts a NATS pod that
fails its startup probe (once in CI, on 2026-12-03, a node's monitoring port
answered nothing for 30 s while its peers formed the cluster). Its goroutines
are dumped into its log first (SIGQUIT), which the warning names.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from ttanjit.common.natsauth import server_config, userinfo
from ttanjit.common.natsserver import free_port, nats_server_binary, wait_port

CLUSTER_NAME = "ttanjit"
STARTUP_PROBE_S = 10.0  # a node's monitor silent this long after its start: restart it
LOG_TAIL_LINES = 12  # of an unhealthy node's log, in a TimeoutError


class Node:
    """One cluster member. Ports and store dir stay the same across restarts."""

    def __init__(self, name: str, store_dir: str, host: str = "127.0.0.1",
                 conf: str = "", creds: str = "") -> None:
        self.name, self.store_dir, self.host = name, store_dir, host
        self.conf, self.creds = conf, creds  # (users: the config, "user:password@")
        self.port, self.route_port, self.http_port = free_port(host), free_port(host), free_port(host)
        self.proc: subprocess.Popen[bytes] | None = None
        self.logfile = Path(store_dir).parent / f"{name}.log"
        self.started_at = 0.0  # time.monotonic() of the last start
        self.answered = False  # its monitoring port has answered since then
        self.startup_restarts = 0

    @property
    def url(self) -> str:
        return f"nats://{self.creds}{self.host}:{self.port}"

    @property
    def route_url(self) -> str:
        return f"nats://{self.host}:{self.route_port}"

    def start(self, routes: list[str]) -> None:
        """Start on its ports and store, routed to ``routes`` (none: a node alone)."""
        os.makedirs(self.store_dir, exist_ok=True)
        cmd = [nats_server_binary(), "-a", self.host, "-p", str(self.port), "-js",
               "-sd", self.store_dir, "-n", self.name, "-m", str(self.http_port)]
        if self.conf:
            cmd += ["-c", self.conf]
        if routes:
            cmd += ["--cluster_name", CLUSTER_NAME, "--cluster", self.route_url,
                    "--routes", ",".join(r for r in routes if r != self.route_url)]
        self._spawn(cmd)

    def _spawn(self, cmd: list[str]) -> None:
        with open(self.logfile, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        self.started_at, self.answered = time.monotonic(), False
        wait_port(self.host, self.port)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        try:
            text = self.logfile.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(sig)

    def wait(self, timeout: float = 15.0) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def monitor(self, path: str, timeout: float = 1.0) -> tuple[int, dict[str, object]]:
        """GET a monitoring endpoint: (HTTP status, JSON body); (0, {}) when down."""
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.http_port}{path}",
                                        timeout=timeout) as r:
                self.answered = True
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            self.answered = True
            try:
                return e.code, json.loads(e.read() or b"{}")
            except ValueError:
                return e.code, {}
        except (OSError, ValueError):
            return 0, {}

    def healthy(self) -> bool:
        """Routes to every peer up and JetStream current (``/healthz``)."""
        if not self.alive():
            return False
        status, _ = self.monitor("/healthz")
        return status == 200


class NatsCluster:
    """``size`` routed nats-server nodes with JetStream (``size`` 1: a plain
    single node with the same interface, for R1 comparisons); with ``users``
    (``ttanjit.common.natsauth.users``) a client must be one of them, and
    the URLs are the first's."""

    def __init__(self, size: int = 3, base_dir: str | None = None,
                 host: str = "127.0.0.1", users: list[dict[str, Any]] | None = None) -> None:
        self._tmp = None if base_dir else tempfile.TemporaryDirectory(prefix="ttanjit-natsc-")
        self.base_dir = base_dir or self._tmp.name  # type: ignore[union-attr]
        conf, creds = "", ""
        if users:
            os.makedirs(self.base_dir, exist_ok=True)
            conf = os.path.join(self.base_dir, "users.conf")
            Path(conf).write_text(server_config(users), encoding="utf-8")
            creds = userinfo(users[0]["user"], users[0]["password"])
        self.nodes = [Node(f"n{i + 1}", os.path.join(self.base_dir, f"n{i + 1}"), host,
                           conf, creds)
                      for i in range(size)]

    @property
    def size(self) -> int:
        return len(self.nodes)

    @property
    def url(self) -> str:
        """Every node's client URL, comma-separated (``TTANJIT_NATS_URL``)."""
        return ",".join(n.url for n in self.nodes)

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def _routes(self) -> list[str]:
        return [n.route_url for n in self.nodes] if self.size > 1 else []

    def start(self, timeout: float = 30.0) -> NatsCluster:
        for n in self.nodes:
            n.start(self._routes())
        try:
            self.wait_healthy(timeout)
        except TimeoutError:
            self.stop()
            raise
        return self

    def meta_leader(self) -> str:
        """The JetStream meta leader's name as some live node sees it ("" = none)."""
        for n in self.nodes:
            if n.alive():
                _, body = n.monitor("/jsz")
                meta = body.get("meta_cluster") or {}
                if isinstance(meta, dict) and meta.get("leader"):
                    return str(meta["leader"])
        return ""

    def healthy(self) -> bool:
        if not all(n.healthy() for n in self.nodes):
            return False
        if self.size == 1:
            return True
        for n in self.nodes:  # every route up (a node restarted since sees its peers)
            _, body = n.monitor("/routez")
            peers = {r.get("remote_name") for r in body.get("routes") or []  # type: ignore[union-attr]
                     if isinstance(r, dict)}
            if len(peers - {None}) < self.size - 1:
                return False
        return bool(self.meta_leader())

    def wait_healthy(self, timeout: float = 30.0) -> float:
        """Wait until every node is up, routed and JetStream-current; returns
        the seconds it took."""
        t0 = time.monotonic()
        while not self.healthy():
            self._restart_hung()
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(self._why_unhealthy(timeout))
            time.sleep(0.1)
        return time.monotonic() - t0

    def _restart_hung(self) -> None:
        """The startup probe: a running node whose monitoring port has not
        answered once in ``STARTUP_PROBE_S`` since its start is restarted
        (its goroutines dumped into its log first)."""
        for i, n in enumerate(self.nodes):
            if (not n.alive() or n.answered
                    or time.monotonic() - n.started_at < STARTUP_PROBE_S):
                continue
            n.monitor("/healthz", timeout=3.0)  # one last, patient look (a node
            # polled after an unhealthy one may not have been asked yet)
            if n.answered:
                continue
            n.startup_restarts += 1
            print(f"natscluster: {n.name} answered nothing on its monitoring port "
                  f"for {STARTUP_PROBE_S:.0f} s after its start; restarting it "
                  f"(goroutine dump in {n.logfile})", file=sys.stderr, flush=True)
            n.signal(signal.SIGQUIT)  # the Go runtime dumps every goroutine and exits
            n.signal(signal.SIGCONT)  # (a stopped process takes it only once continued)
            n.wait(5)
            self.restart(i)

    def _why_unhealthy(self, timeout: float) -> str:
        lines = [f"NATS cluster not healthy after {timeout}s:"]
        for n in self.nodes:
            status, body = n.monitor("/healthz")
            lines.append(f"  {n.name}: alive={n.alive()} healthz={status} {body} "
                         f"startup restarts={n.startup_restarts}")
            if status != 200:
                lines += [f"    | {line}" for line in n.log_tail().splitlines()]
        return "\n".join(lines)

    def kill(self, i: int) -> None:
        """kill -9 of node ``i``."""
        self.nodes[i].signal(signal.SIGKILL)
        self.nodes[i].wait()

    def terminate(self, i: int, timeout: float = 15.0) -> None:
        """SIGTERM (nats-server shuts down cleanly, stepping down as leader)."""
        self.nodes[i].signal(signal.SIGTERM)
        self.nodes[i].wait(timeout)

    def restart(self, i: int) -> None:
        """Start node ``i`` again on its ports with its store (after a kill or stop)."""
        n = self.nodes[i]
        if not n.alive():
            n.start(self._routes())

    def stream_leader(self, stream: str) -> str:
        """The node leading ``stream`` ("" if unknown)."""
        for n in self.nodes:
            if n.alive():
                _, body = n.monitor("/jsz?streams=true&raft=true")
                for acc in body.get("account_details") or []:  # type: ignore[union-attr]
                    for s in acc.get("stream_detail") or []:
                        if s.get("name") == stream:
                            leader = (s.get("cluster") or {}).get("leader")
                            if leader:
                                return str(leader)
        return ""

    def leaders(self) -> dict[str, str]:
        """Every stream's (KV buckets are ``KV_<bucket>`` streams) leader by
        stream name, plus ``"$meta"``: the JetStream meta leader."""
        out = {"$meta": self.meta_leader()}
        for n in self.nodes:
            if n.alive():
                _, body = n.monitor("/jsz?streams=true")
                for acc in body.get("account_details") or []:  # type: ignore[union-attr]
                    for st in acc.get("stream_detail") or []:
                        leader = (st.get("cluster") or {}).get("leader")
                        if leader:
                            out.setdefault(st["name"], str(leader))
        return out

    async def move_leaders_off(self, nc: object, victim: int, streams: list[str],
                               timeout: float = 20.0) -> None:
        """Graceful leader step-downs (``$JS.API.STREAM.LEADER.STEPDOWN``) until
        node ``victim`` leads none of ``streams`` (an operator's move before
        maintenance; a test's way to choose what a crash of that node hits)."""
        import asyncio

        name = self.nodes[victim].name
        deadline = time.monotonic() + timeout
        while True:
            led = [s for s, who in self.leaders().items() if s in streams and who == name]
            if not led:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} still leads {led}")
            for st in led:
                try:
                    await nc.request(f"$JS.API.STREAM.LEADER.STEPDOWN.{st}", b"",  # type: ignore[attr-defined]
                                     timeout=2.0)
                except Exception:  # noqa: BLE001 - the election answers late: look again
                    pass
            await asyncio.sleep(0.5)

    def index(self, name: str) -> int:
        return next(i for i, n in enumerate(self.nodes) if n.name == name)

    def stop(self) -> None:
        for n in self.nodes:
            n.signal(signal.SIGTERM)
        for n in self.nodes:
            n.wait(10)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
