"""``python -m ttanjit.keep NAME [--last] -- COMMAND …``: one process of
``make run`` kept as Kubernetes keeps a pod (deploy/Procfile wraps each
line in it).

- A process that dies unasked (a crash, ``kill -9``) is started again after
  1 s, then 2, 4 … up to 10 s while it keeps dying (back to 1 s once it has
  run 30 s): the rest of the stack stays up and shows what a deployment
  does, e.g. a killed shard's games taken over by the other shard, the
  shard back a second later. (honcho alone stopped every process when one
  exited.)
- The process runs in its own session, so a terminal's Ctrl-C reaches it
  only through this keeper, which sends SIGTERM: ``--last`` (nats-server)
  first waits, up to 4 s, for every other kept process to be gone, so the
  services save their sessions and close their streams while NATS is still
  there. A keeper killed outright takes its process with it (the kernel's
  parent-death signal), and so does ``make run`` killed outright (its pid
  is ``TTANJIT_RUN_PID``): each keeper stops its process when that one is
  gone, as after Ctrl-C (honcho runs each line under a forked copy of
  itself, which outlives honcho, so a parent-death signal never came).

Each keeper (but the ``--last``) holds ``$TTANJIT_VAR_DIR/run/NAME.lock``
while its process runs: that is how the last one knows the others are gone.
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

PR_SET_PDEATHSIG = 1
BACKOFF_S = (1, 2, 4, 8, 10)
STEADY_S = 30.0  # a process up this long starts the backoff over
LAST_WAIT_S = 4.0  # within honcho's 5 s before it kills


def on_parent_death(sig: int) -> None:
    """The kernel sends ``sig`` to this process when its parent dies."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, sig)


def _own_session() -> None:  # pragma: no cover - runs in the child before exec
    os.setsid()
    on_parent_death(signal.SIGKILL)


def when_gone(pid: int, then: Callable[[], None]) -> bool:
    """Call ``then()`` (in a thread) once process ``pid`` has exited; False
    when there is no such process (gone already)."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # no such process (ProcessLookupError), or no pidfd here
        return False

    def watch() -> None:
        select.select([fd], [], [])
        os.close(fd)
        then()

    threading.Thread(target=watch, name=f"watch-{pid}", daemon=True).start()
    return True


def say(name: str, text: str) -> None:
    print(f"keep {name}: {text}", file=sys.stderr, flush=True)


def others_gone(run_dir: Path, own: str, deadline: float) -> None:
    """Wait until no other keeper holds its lock (or the deadline)."""
    while time.monotonic() < deadline:
        busy = 0
        for lock in run_dir.glob("*.lock"):
            if lock.stem == own:
                continue
            with open(lock, "a") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    busy += 1
        if not busy:
            return
        time.sleep(0.05)


class Keeper:
    def __init__(self, name: str, cmd: list[str], run_dir: Path, last: bool) -> None:
        self.name, self.cmd, self.run_dir, self.last = name, cmd, run_dir, last
        self.stopping = False
        self.child: subprocess.Popen[bytes] | None = None
        self.lock: IO[str] | None = None

    def on_signal(self, _signum: int, _frame: object) -> None:
        if self.stopping:
            return
        self.stopping = True
        if self.last:
            others_gone(self.run_dir, self.name, time.monotonic() + LAST_WAIT_S)
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def run_gone(self) -> None:
        say(self.name, "make run is gone (killed outright?): stopping")
        self.on_signal(signal.SIGTERM, None)

    def run(self) -> int:
        # honcho gone (killed outright) is a stop, as its SIGTERM would be
        on_parent_death(signal.SIGTERM)
        parent = os.getppid()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not self.last:
            self.lock = open(self.run_dir / f"{self.name}.lock", "a")  # noqa: SIM115
            fcntl.flock(self.lock, fcntl.LOCK_EX)
        signal.signal(signal.SIGTERM, self.on_signal)
        signal.signal(signal.SIGINT, self.on_signal)
        if os.getppid() != parent or parent == 1:  # it died before the signal was set
            return 0
        run_pid = os.environ.get("TTANJIT_RUN_PID", "")
        if run_pid.isdigit() and not when_gone(int(run_pid), self.run_gone):
            return 0  # make run is gone already
        failures = 0
        while not self.stopping:
            started = time.monotonic()
            self.child = subprocess.Popen(self.cmd, preexec_fn=_own_session)  # noqa: PLW1509
            if self.stopping:  # the signal came while it was being started
                self.child.send_signal(signal.SIGTERM)
            code = self.child.wait()
            if self.stopping:
                return 0 if code in (0, -signal.SIGTERM) else code
            failures = 0 if time.monotonic() - started >= STEADY_S else failures + 1
            delay = BACKOFF_S[min(max(failures - 1, 0), len(BACKOFF_S) - 1)]
            how = f"signal {-code}" if code < 0 else f"code {code}"
            say(self.name, f"exited ({how}); starting it again in {delay} s, as Kubernetes "
                           "restarts a crashed pod")
            end = time.monotonic() + delay
            while time.monotonic() < end and not self.stopping:
                time.sleep(0.05)
        return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ttanjit.keep", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name")
    p.add_argument("--last", action="store_true",
                   help="stop after every other kept process (nats-server)")
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        p.error("no command: python -m ttanjit.keep NAME [--last] -- COMMAND …")
    cut = argv.index("--")
    args, cmd = p.parse_args(argv[:cut]), argv[cut + 1:]
    run_dir = Path(os.environ.get("TTANJIT_VAR_DIR", "var")) / "run"
    return Keeper(args.name, cmd, run_dir, args.last).run()


if __name__ == "__main__":
    raise SystemExit(main())
