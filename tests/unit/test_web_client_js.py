"""The web client's unit tests (its pure modules, ``static/js``) with Node's
own test runner: ``node --test services/ttanjit/gateway/web/test``. Run here
so that ``make test`` (and CI) fails when one of them fails."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "services" / "ttanjit" / "gateway" / "web"


def test_node_unit_tests_pass() -> None:
    node = shutil.which("node")
    assert node, "node is needed for the web client's tests (make web installs its packages)"
    run = subprocess.run([node, "--test", "test/"], cwd=WEB, capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout and "# pass 0" not in run.stdout
