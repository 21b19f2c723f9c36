"""``make run`` (issue 6, DESIGN.md 5): ``python -m ttanjit.run`` starts NATS
with JetStream, the matchmaker, two shards, a bot worker and the gateway,
prints the address only once a game can start (issue 12: a private room
started right then gets a shard, not ``no_shard``), serves games; a shard
killed with ``kill -9`` is started again and the stack stays up; a second
``make run`` on the same var folder is refused; Ctrl-C stops every
process, each on its own (none is SIGKILLed), nats-server last, and exits
0; ``make run`` killed outright takes every process with it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import grpc
import nats
import nats.errors
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from wsclient import WSClient

from ttanjit.common.natsserver import free_port

pytestmark = pytest.mark.integration


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _stack_procs(var: Path) -> dict[int, str]:
    """Every process of the stack, by the var folder in its environment
    (the kept processes run in sessions of their own, outside the group)."""
    mark = f"TTANJIT_VAR_DIR={var}".encode() + b"\0"
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                env = Path(f"/proc/{d}/environ").read_bytes()
                cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if mark in env:
                out[int(d)] = cmd
    return out


def _shards(var: Path) -> set[int]:
    return {pid for pid, cmd in _stack_procs(var).items()
            if cmd.rstrip().endswith("-m ttanjit.shard") and "ttanjit.keep" not in cmd}


def _proc_states(var: Path, *pids: int) -> dict[int, str]:
    """Each process of the stack (and ``pids``, if still there) with its
    state, e.g. "Z (zombie)", and command line: what a failed wait shows."""
    states = {}
    for pid in set(_stack_procs(var)) | set(pids):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            states[pid] = "gone"
            continue
        state = next((ln.split(":", 1)[1].strip() for ln in status.splitlines()
                      if ln.startswith("State:")), "?")
        states[pid] = f"{state}: {cmd[-60:]}"
    return states


def _read(proc: subprocess.Popen[bytes], out: list[str]) -> None:
    assert proc.stdout is not None
    while line := proc.stdout.readline():
        out.append(line.decode(errors="replace"))


async def room_started_at_once(url: str) -> None:
    """Right after the address is printed: a private room, a friend joins,
    the host starts it, both are dealt in (no ``no_shard``)."""
    host = await WSClient.signed_in(url, "방장")
    guest = await WSClient.signed_in(url, "친구")
    await host.send({"type": "room_create", "game": "onecard", "seats": 2})
    code = (await host.wait_type("room"))["room"]["code"]
    await guest.send({"type": "room_join", "code": code})
    await host.wait_for(lambda f: f.get("type") == "room"
                        and all(m["kind"] == "human" for m in f["room"]["members"]))
    await host.send({"type": "room_start"})
    first = await host.wait_for(lambda f: f.get("type") in ("matched", "error"), 20)
    assert first["type"] == "matched", first  # an error here: e.g. no_shard
    assert (await guest.wait_type("matched", 20))["game_id"] == first["game_id"]
    for c in (host, guest):
        await c.action(first["game_id"], {"type": "leave"})
        await c.close()


async def test_make_run_starts_everything_and_ctrl_c_stops_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
    env.update(TTANJIT_VAR_DIR=str(tmp_path / "var"), TTANJIT_HTTP_PORT=str(free_port()),
               TTANJIT_NATS_PORT=str(free_port()), TTANJIT_BOT_WAIT_MS="200",
               TTANJIT_GW_METRICS_PORT=str(free_port()))  # pinned (ops trial)
    proc = subprocess.Popen([sys.executable, "-m", "ttanjit.run"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)  # its own group, as a terminal gives it
    pgid = proc.pid
    out: list[str] = []
    url = None
    try:
        deadline = time.monotonic() + 90
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                await asyncio.sleep(0.1)
                continue
            out.append(line.decode(errors="replace"))
            m = re.search(r"open (http://127\.0\.0\.1:\d+)/", out[-1])
            url = m.group(1) if m else None
        assert url, "".join(out[-50:])
        # and where an operator scrapes each process (docs/metrics.md), and
        # the shards' gRPC addresses, which `ttanjit drain --addr` needs
        shard_line = re.compile(r"^\s+(shard-\d)\s+(127\.0\.0\.1:\d+)$", re.M)
        while (sum("/metrics" in ln for ln in out) < 6 or len(shard_line.findall("".join(out))) < 2
               ) and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line:
                out.append(line.decode(errors="replace"))
            else:
                await asyncio.sleep(0.1)
        scraped = {}
        for m in re.finditer(r"^\s+(\S+)\s+(http://127\.0\.0\.1:\d+/metrics)$",
                             "".join(out), re.M):
            with urllib.request.urlopen(m.group(2), timeout=5) as r:
                scraped[m.group(1)] = r.read().decode()
        assert sorted(scraped) == ["bots", "gateway", "matchmaker-1", "matchmaker-2",
                                   "shard-1", "shard-2"], "".join(out[-30:])
        assert "ttanjit_gateway_" in scraped["gateway"] and "ttanjit_shard_" in scraped["shard-2"]
        # a metrics port given is kept (a local Prometheus's config need not
        # change each run: ops trial), and every one picked is in a file a
        # Prometheus's file_sd_configs follows
        printed = dict(re.findall(r"^\s+(\S+)\s+http://(127\.0\.0\.1:\d+)/metrics$",
                                  "".join(out), re.M))
        assert printed["gateway"] == f"127.0.0.1:{env['TTANJIT_GW_METRICS_PORT']}"
        sd = json.loads((tmp_path / "var" / "prometheus-targets.json").read_text())
        assert {t["labels"]["instance"]: t["targets"][0] for t in sd} == printed
        # labelled as the chart's ServiceMonitors: what the alerts match (up{job="shard"}, by pod)
        assert {t["labels"]["pod"]: t["labels"]["job"] for t in sd} == {
            "gateway": "gateway", "matchmaker-1": "matchmaker", "matchmaker-2": "matchmaker",
            "shard-1": "shard", "shard-2": "shard", "bots": "bots"}
        # NATS asks for a user, as deployed: the address printed has the
        # services' (ttanjit.common.natsauth), and without one nobody is let in
        printed_nats = re.search(r"NATS      (nats://ttanjit:[0-9a-f]{32}@127\.0\.0\.1:(\d+))$",
                                 "".join(out), re.M)
        assert printed_nats and printed_nats.group(2) == env["TTANJIT_NATS_PORT"], out
        nc = await nats.connect(printed_nats.group(1))
        assert (await nc.jetstream().account_info()).streams >= 1
        await nc.close()
        with pytest.raises(nats.errors.Error, match="Authorization Violation"):
            await nats.connect(f"nats://127.0.0.1:{env['TTANJIT_NATS_PORT']}",
                               allow_reconnect=False)
        assert oct((tmp_path / "var" / "nats-users.conf").stat().st_mode & 0o777) == "0o600"
        assert "ttanjit drain --addr" in "".join(out)
        grpc_addrs = dict(shard_line.findall("".join(out)))
        assert sorted(grpc_addrs) == ["shard-1", "shard-2"], "".join(out[-30:])
        assert len(set(grpc_addrs.values())) == 2
        for addr in grpc_addrs.values():  # each a shard's gRPC port, serving
            with grpc.insecure_channel(addr) as channel:
                rep = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service="ttanjit.v1.ShardService"), timeout=5)
            assert rep.status == health_pb2.HealthCheckResponse.SERVING, addr
        await room_started_at_once(url)
        with urllib.request.urlopen(url + "/", timeout=5) as r:
            assert r.status == 200 and "utf-8" in r.headers["Content-Type"].lower()
            assert "딴짓" in r.read().decode()
        assert (tmp_path / "var" / "nats").is_dir()
        c = await WSClient.signed_in(url, "실행")
        await c.send({"type": "queue", "game": "onecard", "seats": 2})
        matched = await c.wait_type("matched", 30)
        view = await c.wait_type("view")
        assert view["game_id"] == matched["game_id"]
        await c.close()
        # one `make run` per var folder: a second one is refused (two
        # nats-servers on one JetStream store corrupt it)
        second = subprocess.run([sys.executable, "-m", "ttanjit.run"], capture_output=True,
                                text=True, timeout=30, env={**env, "TTANJIT_HTTP_PORT": "0"})
        assert second.returncode == 1 and "another `make run`" in second.stderr, second
        # kill -9 of a shard: it is started again, as Kubernetes restarts a
        # pod; the rest of the stack stays up (honcho alone stopped it all)
        var = (tmp_path / "var").resolve()
        shards = _shards(var)
        assert len(shards) == 2, _stack_procs(var)
        victim = min(shards)
        os.kill(victim, signal.SIGKILL)
        # its keeper says so and starts it again 1 s later (about 1 s in all
        # here); the bound is wide because once in CI (2026-12-03) nothing
        # of the stack printed or moved for the 20 s the test gave it
        said = re.compile(r"keep shard-\d: exited \(signal 9\); starting it again")
        end = time.monotonic() + 60
        while time.monotonic() < end and not (
                said.search("".join(out)) and len(_shards(var)) == 2 and victim not in _shards(var)):
            _read(proc, out)  # (the pipe never fills meanwhile)
            await asyncio.sleep(0.2)
        _read(proc, out)
        assert len(_shards(var)) == 2 and victim not in _shards(var), (
            _proc_states(var, victim), "".join(out[-30:]))
        assert said.search("".join(out)), "".join(out[-30:])
        assert proc.poll() is None
        await room_started_at_once(url)  # and games start as before
        # Ctrl-C: the terminal signals the whole foreground group, with the
        # game still live on its shard (its player left, a bot plays on)
        os.killpg(pgid, signal.SIGINT)
        # a stop asked for is a success: make says no "Error 130" after it
        assert proc.wait(30) == 0
        rest = proc.stdout.read() or b""
        out.append(rest.decode(errors="replace"))
        # every process stopped on its own and cleanly, though nats-server
        # stopped at the same moment: no shard outlived honcho's 5 s (a
        # draining shard waited out its NATS timeouts), and the gateway's
        # session saves did not outlive uvicorn's graceful shutdown
        assert "sending SIGKILL" not in out[-1], out[-1][-4000:]
        # the bot worker, NATS's ttanjit-bots, needed nothing its user may not do
        assert "Violation" not in "".join(out), "".join(out)[-4000:]
        assert "Exception in ASGI application" not in out[-1], out[-1][-4000:]
        assert "Application shutdown failed" not in out[-1], out[-1][-4000:]
        end = time.monotonic() + 15
        while (_group_alive(pgid) or _stack_procs(var)) and time.monotonic() < end:
            await asyncio.sleep(0.2)
        assert not _group_alive(pgid), "a process of make run outlived Ctrl-C"
        assert not _stack_procs(var), "a kept process outlived Ctrl-C"
        # nats-server stopped last: the services' goodbyes reached it
        assert "session save failed" not in out[-1] and "nats connection lost" not in out[-1]
        for port in (env["TTANJIT_HTTP_PORT"], env["TTANJIT_NATS_PORT"]):
            with pytest.raises(OSError):  # gateway and nats-server are gone too
                socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
    finally:
        if _group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
        proc.wait(10)
        for pid in _stack_procs((tmp_path / "var").resolve()):  # each in a session of its own
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_make_run_killed_outright_takes_every_process_with_it(tmp_path: Path) -> None:
    """``kill -9`` of ``make run``'s own process (no Ctrl-C, no SIGTERM):
    every process of the stack stops — honcho and its forked copies, each
    keeper and its kept process, nats-server — as after Ctrl-C, and the var
    folder can be used by the next ``make run``. Defect: honcho's forked
    copies and the keepers ran on, with the whole stack, a second
    ``make run`` refused."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TTANJIT_")}
    var = (tmp_path / "var").resolve()
    env.update(TTANJIT_VAR_DIR=str(var), TTANJIT_HTTP_PORT=str(free_port()),
               TTANJIT_NATS_PORT=str(free_port()))
    proc = subprocess.Popen([sys.executable, "-m", "ttanjit.run"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    out: list[str] = []
    try:
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        deadline = time.monotonic() + 90
        while not any("open http://" in ln for ln in out) and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if line:
                out.append(line.decode(errors="replace"))
            else:
                await asyncio.sleep(0.1)
        assert any("open http://" in ln for ln in out), "".join(out[-40:])
        assert len(_shards(var)) == 2
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        end = time.monotonic() + 20
        while _stack_procs(var) and time.monotonic() < end:
            await asyncio.sleep(0.2)
        assert not _stack_procs(var), _stack_procs(var)
        again = subprocess.Popen([sys.executable, "-m", "ttanjit.run"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 start_new_session=True)
        try:
            await asyncio.sleep(3)
            assert again.poll() is None, again.communicate()[1]  # not refused: it runs
        finally:
            os.killpg(again.pid, signal.SIGINT)
            again.wait(30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _stack_procs(var):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
