"""`ttanjit record GAME_ID` against an address where no NATS server is: one
line that says so and how to point it elsewhere, exit 1 (it printed two
nats-py tracebacks first)."""

from __future__ import annotations

import subprocess
import sys

from ttanjit.common.natsserver import free_port


def test_no_nats_server_is_one_line() -> None:
    url = f"nats://127.0.0.1:{free_port()}"
    out = subprocess.run([sys.executable, "-m", "ttanjit", "record", "g1", "--nats", url],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == (f"ttanjit record: cannot read {url}: no NATS server there "
                                  "(--nats, or TTANJIT_NATS_URL)")
