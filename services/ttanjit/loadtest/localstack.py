"""A whole local stack for the capacity benchmark and ``loadtest --local``:
a real ``nats-server`` (JetStream), game shards, a bot worker, the
matchmaker (with test options on, so rooms accept ``seed``) and gateways,
each ``python -m ttanjit.<service>`` on free loopback ports — as deployed:
each service connects as its own NATS user (``common.natsauth``: the
gateways' and the bot workers' may do only what theirs may), and the shards
sign their records (``shard.records``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ttanjit.common import natsauth
from ttanjit.common.natsserver import NatsServer, free_port

READY = {"shard": '"msg":"ready"', "bots": "ready", "matchmaker": "matchmaker ready",
         "gateway": "gateway ready"}
SECRET = "loadtest-secret"
RECORD_KEY = os.urandom(24).hex()  # the shards' (ttanjit.shard.records)


class Proc:
    def __init__(self, svc: str, name: str, env: dict[str, str], logdir: Path) -> None:
        self.svc, self.name = svc, name
        self.ports = {k: int(env[v]) for k, v in (("grpc", "TTANJIT_GRPC_PORT"),
                                                  ("metrics", "TTANJIT_METRICS_PORT"),
                                                  ("http", "TTANJIT_HTTP_PORT"))}
        self.logfile = logdir / f"{name}.log"
        self._fh = open(self.logfile, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", f"ttanjit.{svc}"], env=env,
                                     stdout=self._fh, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return self.logfile.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if READY[self.svc] in self.log():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.log()[-3000:]}")
            time.sleep(0.05)
        raise TimeoutError(f"{self.name} not ready:\n{self.log()[-3000:]}")

    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['metrics']}/metrics"  # every service's own port

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()


class LocalStack:
    def __init__(self, shards: int = 1, gateways: int = 1, bots: int = 1,
                 env: dict[str, str] | None = None, tmpfs: bool = False) -> None:
        """``tmpfs``: JetStream's store in /dev/shm (benchmarks: this VM's
        disk stalls now and then, BENCHMARKS.md "## Game shard")."""
        self.n_shards, self.n_gateways, self.n_bots = shards, gateways, bots
        self.extra = env or {}
        self.tmp = tempfile.TemporaryDirectory(prefix="ttanjit-loadtest-")
        self.logdir = Path(self.tmp.name)
        self.store: tempfile.TemporaryDirectory[str] | None = None
        if tmpfs and os.path.isdir("/dev/shm"):
            self.store = tempfile.TemporaryDirectory(prefix="ttanjit-js-", dir="/dev/shm")
        self.nats: NatsServer | None = None
        self.procs: list[Proc] = []

    def _env(self, svc: str, name: str, **extra: str) -> dict[str, str]:
        assert self.nats is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
        env.update(TTANJIT_NATS_URL=natsauth.service_url(self.nats.address, self.nats.users, svc),
                   TTANJIT_LOG_LEVEL="WARNING",
                   PYTHONUNBUFFERED="1", TTANJIT_GRPC_PORT=str(free_port()),
                   TTANJIT_METRICS_PORT=str(free_port()), TTANJIT_HTTP_PORT=str(free_port()),
                   TTANJIT_SHARD_ID=name, TTANJIT_ADVERTISE_HOST="127.0.0.1",
                   TTANJIT_TOKEN_SECRET=SECRET, TTANJIT_HTTP_HOST="127.0.0.1")
        env.update(self.extra)
        env.update(extra)
        return env

    def start(self) -> LocalStack:
        store = self.store.name if self.store is not None else str(self.logdir / "js")
        prefix = self.extra.get("TTANJIT_NATS_PREFIX") or "ttanjit.v1"
        self.nats = NatsServer(store_dir=store, users=natsauth.made(prefix)).start()
        start = self.procs.append
        for i in range(self.n_shards):
            start(Proc("shard", f"shard-{i}", self._env(
                "shard", f"shard-{i}", TTANJIT_LOG_LEVEL="INFO", TTANJIT_RECORD_KEY=RECORD_KEY),
                self.logdir))
        for i in range(self.n_bots):
            start(Proc("bots", f"bots-{i}", self._env(
                "bots", f"bots-{i}", TTANJIT_LOG_LEVEL="INFO"), self.logdir))
        mm = Proc("matchmaker", "matchmaker", self._env(
            "matchmaker", "matchmaker", TTANJIT_LOG_LEVEL="INFO", TTANJIT_TEST_OPTIONS="1",
            TTANJIT_BOT_WAIT_MS="2000"), self.logdir)
        start(mm)
        for i in range(self.n_gateways):
            start(Proc("gateway", f"gateway-{i}", self._env(
                "gateway", f"gateway-{i}", TTANJIT_LOG_LEVEL="INFO",
                TTANJIT_MATCHMAKER_ADDR=f"127.0.0.1:{mm.ports['grpc']}"), self.logdir))
        try:
            for p in self.procs:
                p.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def of(self, svc: str) -> list[Proc]:
        return [p for p in self.procs if p.svc == svc]

    def urls(self) -> list[str]:
        return [f"http://127.0.0.1:{g.ports['http']}" for g in self.of("gateway")]

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.stop()
        self.procs.clear()
        if self.nats is not None:
            self.nats.stop()
            self.nats = None

    def close(self) -> None:
        self.stop()
        self.tmp.cleanup()
        if self.store is not None:
            self.store.cleanup()

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
