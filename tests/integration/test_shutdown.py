"""SIGTERM stops a service cleanly (exit code 0, within a few seconds) while
the rest of the stack keeps talking to it (DESIGN.md 4: rolling upgrades)."""

from __future__ import annotations

import time

import pytest
from conftest import Services

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


def _stop_timed(proc: object) -> tuple[int, float]:
    t0 = time.monotonic()
    rc = proc.terminate(timeout=15)  # type: ignore[attr-defined]
    return rc, time.monotonic() - t0


def test_matchmaker_exits_on_sigterm_while_shards_heartbeat(services: Services) -> None:
    """A shard sends heartbeats every second to the matchmaker (docs/protocol.md
    4); SIGTERM still stops the matchmaker with exit code 0 within 5 s."""
    shard = services.start("shard", name="sd-shard")
    mm = services.start("matchmaker", name="sd-mm")
    # heartbeats arrive; the ratings consumer's 1 s fetches come and go
    time.sleep(3.5)
    assert shard.alive() and mm.alive()
    rc, took = _stop_timed(mm)
    log = mm.log()
    assert rc == 0 and took < 1.5, (rc, took, log[-3000:])
    # nothing left waiting: a pull subscription's stray 408 made nc.drain()
    # hang until its timeout (and log a never-retrieved CancelledError)
    assert "never retrieved" not in log and '"level":"error"' not in log, log[-3000:]
