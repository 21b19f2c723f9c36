"""The container tier cleans up after a run that was killed (Ctrl-C of
``make test``, a CI job cut short): that run's containers kept running and
its podman network kept its subnet, run after run. Each run's containers
and network carry its test process's pid; the next run removes those whose
process is gone, and never another live run's."""

from __future__ import annotations

import json
import subprocess
import sys

from podkit import OWNER_KEY, RUN_FLAGS, podman, remove_orphans

# its own label: a cluster another test worker starts meanwhile removes the
# orphans of OWNER_KEY, this test's dead one among them, before this test does
KEY = OWNER_KEY + ".orphans-test"


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid  # gone (and reaped): no process has it for a while


def _names(*args: str) -> set[str]:
    out = json.loads(podman(*args, "--format", "json").stdout or "[]") or []
    return {(o.get("Names") or [""])[0] if "Names" in o else o.get("name", "") for o in out}


def test_a_killed_runs_containers_and_network_are_removed_by_the_next(image: str) -> None:
    dead, live = _dead_pid(), subprocess.Popen(["sleep", "60"])
    made: list[tuple[str, str]] = []
    try:
        for tag, pid in (("dead", dead), ("live", live.pid)):
            name = f"ttctorphan-{tag}-{pid}"
            podman("network", "create", "--label", f"{KEY}={pid}", name)
            podman("run", "-d", "--name", name, "--label", f"{KEY}={pid}", *RUN_FLAGS,
                   "--network", name, "--entrypoint", '["sleep", "60"]', image)
            made.append((tag, name))
        gone = remove_orphans(KEY)
        dead_name, live_name = made[0][1], made[1][1]
        assert gone.count(dead_name) == 2, gone  # its container, then its network
        assert live_name not in gone
        assert dead_name not in _names("ps", "-a") and live_name in _names("ps", "-a")
        assert dead_name not in _names("network", "ls") and live_name in _names("network", "ls")
    finally:
        live.kill()
        live.wait()
        for _, name in made:
            podman("rm", "-f", "--time", "0", name, check=False)
            podman("network", "rm", "-f", name, check=False)
