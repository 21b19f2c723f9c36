"""The container image (deploy/Dockerfile) — issue 8.

There is no container engine here, so the image is checked in two parts:
the Dockerfile itself (stages, non-root runtime without build tools, every
COPY source present and not excluded by .dockerignore) and its builder step,
deploy/build-wheel.sh, run for real on a copy of the tree: the wheel it makes
must carry the generated gRPC stubs, the web client and every service.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from chartlib import ROOT

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
SERVICES = ("gateway", "matchmaker", "shard", "bots")


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def stages() -> list[list[tuple[str, str]]]:
    result: list[list[tuple[str, str]]] = []
    for ins in instructions():
        if ins[0] == "FROM":
            result.append([])
        if result:
            result[-1].append(ins)
    return result


def dockerignored(path: str) -> bool:
    ignored = False
    for raw in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/").removeprefix("**/")
        hit = any(fnmatch.fnmatch(part, pattern) for part in _prefixes(path))
        if hit:
            ignored = not negate
    return ignored


def _prefixes(path: str) -> list[str]:
    parts = path.strip("/").split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))] + parts


def test_runtime_stage_is_slim_non_root_and_has_no_build_tools() -> None:
    *build, runtime = stages()
    assert len(build) >= 1, "multi-stage: build tools stay in the builder"
    assert re.match(r"\$\{PYTHON_IMAGE\}|python:3\.11-slim", runtime[0][1])
    assert "python:3.11-slim" in DOCKERFILE.read_text()
    users = [args for word, args in runtime if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    body = " ".join(args for _, args in runtime)
    for tool in ("grpcio-tools", "grpc_tools", "gcc", "build-essential", "apt-get install", "npm"):
        assert tool not in body, tool
    assert "pip uninstall -y pip" in body
    assert any(word == "CMD" and "ttanjit." in args for word, args in runtime)


def test_every_copied_source_is_in_the_build_context() -> None:
    for word, args in instructions():
        if word != "COPY" or "--from=" in args:
            continue
        *sources, _dest = args.split()
        for source in sources:
            assert (ROOT / source).exists(), source
            assert not dockerignored(source), f"{source} is excluded by .dockerignore"
    # Generated and local files never reach the build context.
    for generated in ("services/ttanjit/v1", ".venv", ".tools",
                      "services/ttanjit/gateway/web/node_modules"):
        assert dockerignored(generated), generated


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The builder stage's wheel, built from a copy of the tree."""
    src = tmp_path_factory.mktemp("src")
    out = tmp_path_factory.mktemp("wheels")
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copytree(ROOT / "proto", src / "proto")
    shutil.copytree(ROOT / "services", src / "services",
                    ignore=shutil.ignore_patterns("__pycache__", "node_modules", "v1"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["sh", str(ROOT / "deploy" / "build-wheel.sh"), str(src), str(out),
         "--no-build-isolation", "--no-index", "-q"],
        capture_output=True, text=True, env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (whl,) = out.glob("ttanjit-*.whl")
    return whl


def test_wheel_carries_stubs_web_client_and_services(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "ttanjit/v1/__init__.py" in names
    for proto in (ROOT / "proto" / "ttanjit" / "v1").glob("*.proto"):
        assert f"ttanjit/v1/{proto.stem}_pb2.py" in names, proto.name
        if "service " in proto.read_text(encoding="utf-8"):
            assert f"ttanjit/v1/{proto.stem}_pb2_grpc.py" in names, proto.name
    static = ROOT / "services" / "ttanjit" / "gateway" / "static"
    for path in static.rglob("*"):
        if path.is_file() and "fonts" not in path.parts and not path.name.startswith("."):
            rel = path.relative_to(ROOT / "services").as_posix()
            assert rel in names, rel
    present = [s for s in SERVICES if (ROOT / "services" / "ttanjit" / s / "__main__.py").exists()]
    for service in present:
        assert f"ttanjit/{service}/__main__.py" in names, service


def test_generated_stubs_import_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    zipfile.ZipFile(wheel).extractall(tmp_path)
    modules = sorted(p.stem for p in (tmp_path / "ttanjit" / "v1").glob("*_pb2*.py"))
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module('ttanjit.v1.' + m)"
    done = subprocess.run([sys.executable, "-c", code, *modules], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
