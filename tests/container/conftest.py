"""Fixtures of the container tier: the image (`make image`, skipped only
where no container can run), the chart rendered by a real helm, and a
cluster of the chart's Pods as podman containers (tests/container/podkit.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from podkit import IMAGE_BUILD, ROOT, Chart

HERE = Path(__file__).parent
VALUES = HERE / "values.yaml"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "container: runs the image's containers with podman")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent == HERE:
            item.add_marker(pytest.mark.container)


@pytest.fixture(scope="session")
def image() -> str:
    """ttanjit/ttanjit:<version>, built by `make image` when its sources changed."""
    if sys.platform != "linux":
        pytest.skip("container tier: podman needs Linux")
    if os.geteuid() != 0 and shutil.which("podman") is None:
        pytest.skip("container tier: podman is not installed and installing it needs root")
    done = subprocess.run([sys.executable, str(ROOT / "deploy" / "image" / "build.py")],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode == IMAGE_BUILD.NO_RUNTIME:
        pytest.skip("container tier: no container runtime can run here:\n"
                    + done.stderr[-2000:])
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-8000:]
    print(done.stderr.strip())
    return f"localhost/{IMAGE_BUILD.tag()}"


@pytest.fixture(scope="session")
def helm() -> Path:
    path = ROOT / ".tools" / "bin" / "helm"
    if not path.is_file():
        subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    return path


@pytest.fixture(scope="session")
def prometheus_bin(helm: Path) -> Path:
    path = ROOT / ".tools" / "bin" / "prometheus"
    if not path.is_file():
        subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    return path


@pytest.fixture(scope="session")
def render(helm: Path) -> Iterator[object]:
    def run(*sets: str) -> Chart:
        return Chart.render(helm, VALUES, *sets)

    yield run
