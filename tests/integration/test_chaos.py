"""The chaos drill, short version (issue 12 item 8; ``make chaos`` runs the
long one): ``python -m ttanjit.chaos --quick`` starts its own stack (3-node
NATS cluster at R3, two matchmaker replicas, two shards, two bot workers, two
gateways), plays a table of the load tester's players through the gateways,
and runs every fault — kill -9 and SIGTERM of a shard, a gateway, a bot
worker, a matchmaker replica and a NATS node, SIGSTOP of a shard for 10 s.
No fault may lose an accepted command or stall a game for more than 3 s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REFUSED

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]


def test_quick_chaos_drill_loses_nothing_and_stalls_nothing(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    proc = subprocess.run([sys.executable, "-m", "ttanjit.chaos", "--quick", "--json", str(out),
                           "--logs", str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=400)
    print(proc.stdout[-6000:])
    rows = json.loads(out.read_text()) if out.exists() else []
    faults = [r for r in rows if r["fault"] != "whole run"]
    assert len(faults) == 11, proc.stderr[-4000:]
    assert all(r["lost"] == 0 for r in rows), rows
    assert all(r["stalled"] == 0 for r in faults), rows
    assert proc.returncode == 0, proc.stderr[-4000:]
    # the drill's own reconnects after it kills a NATS node are not printed
    # among the rows (they read as a fault of the drill)
    assert "nats error" not in proc.stderr and "nats disconnected" not in proc.stderr, proc.stderr
    # every service as its own NATS user (the gateways' and bot workers'
    # may do less), as deployed: none was refused what it does
    refused = [ln for f in sorted((tmp_path / "logs").glob("*.log"))
               for ln in f.read_text(errors="replace").splitlines() if REFUSED in ln]
    assert refused == [], refused[:5]
