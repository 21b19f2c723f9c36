"""The drill's own local stack: a NATS cluster (or one node), matchmaker
replicas, two game shards, bot workers and two gateways, each
``python -m ttanjit.<service>`` on free loopback ports (as
:mod:`ttanjit.loadtest.localstack`), plus what a fault needs: a signal to one
process and a restart of it with the same name, ports and settings (what a
Kubernetes controller does after a crash). As deployed: each service
connects as its own NATS user (``common.natsauth``), the shards sign
their records."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

from ttanjit.common import natsauth
from ttanjit.common.natscluster import NatsCluster
from ttanjit.common.natsserver import free_port
from ttanjit.loadtest.localstack import RECORD_KEY, SECRET, Proc


class ChaosStack:
    def __init__(self, nats_nodes: int = 3, matchmakers: int = 2, shards: int = 2,
                 bots: int = 2, gateways: int = 2, keep_logs: str | None = None) -> None:
        self.counts = {"matchmaker": matchmakers, "shard": shards, "bots": bots,
                       "gateway": gateways}
        self.tmp = tempfile.TemporaryDirectory(prefix="ttanjit-chaos-")
        self.logdir = Path(keep_logs or self.tmp.name)
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.users = natsauth.made("ttanjit.v1")
        self.nats = NatsCluster(nats_nodes, base_dir=str(Path(self.tmp.name) / "nats"),
                                users=self.users)
        self.procs: dict[str, Proc] = {}
        self.envs: dict[str, dict[str, str]] = {}
        self.restarts: dict[str, int] = {}

    def _env(self, svc: str, name: str, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
        env.update(TTANJIT_NATS_URL=natsauth.service_url(self.nats.url, self.users, svc),
                   TTANJIT_JS_REPLICAS=str(self.nats.size),
                   TTANJIT_LOG_LEVEL="INFO", PYTHONUNBUFFERED="1",
                   TTANJIT_GRPC_PORT=str(free_port()), TTANJIT_METRICS_PORT=str(free_port()),
                   TTANJIT_HTTP_PORT=str(free_port()), TTANJIT_SHARD_ID=name,
                   TTANJIT_ADVERTISE_HOST="127.0.0.1", TTANJIT_TOKEN_SECRET=SECRET,
                   TTANJIT_HTTP_HOST="127.0.0.1")
        env.update(extra)
        return env

    def _spawn(self, svc: str, name: str, env: dict[str, str]) -> Proc:
        self.envs[name] = env
        proc = Proc(svc, name, env, self.logdir)
        self.procs[name] = proc
        return proc

    def start(self) -> ChaosStack:
        self.nats.start()
        try:
            mm_ports = []
            for i in range(self.counts["matchmaker"]):
                env = self._env("matchmaker", f"matchmaker-{i}", TTANJIT_TEST_OPTIONS="1",
                                TTANJIT_BOT_WAIT_MS="1000")
                mm_ports.append(env["TTANJIT_GRPC_PORT"])
                self._spawn("matchmaker", f"matchmaker-{i}", env)
            for i in range(self.counts["shard"]):
                # the shards sign their records, as a deployment's
                self._spawn("shard", f"shard-{i}",
                            self._env("shard", f"shard-{i}", TTANJIT_RECORD_KEY=RECORD_KEY))
            for i in range(self.counts["bots"]):
                self._spawn("bots", f"bots-{i}", self._env("bots", f"bots-{i}"))
            addr = "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in mm_ports)
            for i in range(self.counts["gateway"]):
                self._spawn("gateway", f"gateway-{i}",
                            self._env("gateway", f"gateway-{i}", TTANJIT_MATCHMAKER_ADDR=addr))
            for p in self.procs.values():
                p.wait_ready(90)
        except BaseException:
            self.stop()
            raise
        return self

    def of(self, svc: str) -> list[Proc]:
        return [p for p in self.procs.values() if p.svc == svc]

    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{g.ports['http']}" for g in self.of("gateway")]

    def signal(self, name: str, sig: int) -> None:
        p = self.procs[name]
        if p.proc.poll() is None:
            os.kill(p.pid, sig)

    def wait_exit(self, name: str, timeout: float = 40.0) -> int | None:
        p = self.procs[name]
        try:
            return p.proc.wait(timeout)
        except Exception:  # noqa: BLE001 - still draining: kill it
            p.proc.kill()
            return p.proc.wait()

    def restart(self, name: str, timeout: float = 90.0) -> float:
        """Start ``name`` again (same ports and settings) once it has exited;
        returns seconds until it is ready."""
        old = self.procs[name]
        self.wait_exit(name)
        old.stop()
        n = self.restarts[name] = self.restarts.get(name, 0) + 1
        old.logfile.rename(old.logfile.with_suffix(f".{n}.log"))
        t0 = time.monotonic()
        self._spawn(old.svc, name, self.envs[name]).wait_ready(timeout)
        return time.monotonic() - t0

    def stop(self) -> None:
        for p in reversed(list(self.procs.values())):
            if p.proc.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGCONT)
                except OSError:
                    pass
            p.stop()
        self.procs.clear()
        self.nats.stop()

    def close(self) -> None:
        self.stop()
        self.tmp.cleanup()

    def __enter__(self) -> ChaosStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
