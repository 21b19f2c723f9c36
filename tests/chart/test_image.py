"""The container image (deploy/Dockerfile) — issue 8.

There is no container engine here, so the image is checked in two parts:
the Dockerfile itself, read by BuildKit's parser and linted by hadolint
(stages, non-root runtime without build tools, every COPY source present and
not excluded by .dockerignore), and its builder step,
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

import dockerfile
import pytest
from chartlib import ROOT

DOCKERFILE = ROOT / "deploy" / "Dockerfile"
SERVICES = ("gateway", "matchmaker", "shard", "bots")


def instructions() -> list[dockerfile.Command]:
    """The Dockerfile as BuildKit's own parser (the `dockerfile` package) reads it."""
    return list(dockerfile.parse_file(str(DOCKERFILE)))


def stages() -> list[list[dockerfile.Command]]:
    result: list[list[dockerfile.Command]] = []
    for ins in instructions():
        if ins.cmd == "FROM":
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


def test_hadolint_finds_nothing() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    done = subprocess.run([str(hadolint), "--no-color", "--failure-threshold", "info",
                           str(DOCKERFILE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_runtime_stage_is_slim_non_root_and_has_no_build_tools() -> None:
    args = {c.value[0].split("=")[0]: c.value[0].split("=", 1)[1]
            for c in instructions() if c.cmd == "ARG" and "=" in c.value[0]}
    *build, runtime = stages()
    assert len(build) >= 2, "web and builder stages keep npm and grpcio-tools out"
    base = runtime[0].value[0]
    assert re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], base).startswith("python:3.11-slim")
    users = [c.value[0] for c in runtime if c.cmd == "USER"]
    assert users and users[-1].split(":")[0] not in ("0", "root")
    body = " ".join(" ".join(c.value) for c in runtime)
    for tool in ("grpcio-tools", "grpc_tools", "gcc", "build-essential", "apt-get", "npm"):
        assert tool not in body, tool
    assert "pip uninstall -y pip" in body
    (cmd,) = [c for c in runtime if c.cmd == "CMD"]
    assert cmd.json and list(cmd.value) == ["python", "-m", "ttanjit.gateway"]


def test_the_builder_takes_every_package_at_its_pinned_version() -> None:
    """Every pip in the builder that resolves from an index is held to
    constraints.txt (`make lock`: the versions the tests passed with) — an
    image built from a commit runs what that commit was tested with."""
    resolving = []
    for stage in stages():
        copied = {src for c in stage if c.cmd == "COPY" for src in c.value[:-1]}
        for c in stage:
            body = " ".join(c.value)
            for step in re.split(r"&&|;", body) if c.cmd == "RUN" else []:
                if re.search(r"\bpip (install|wheel)\b", step) and "--no-index" not in step:
                    resolving.append(step.strip())
                    assert "-c constraints.txt" in step, step
                    assert "constraints.txt" in copied, "constraints.txt is not copied before: " + step
    assert len(resolving) >= 2, resolving  # grpcio-tools, and the wheels of every dependency


def test_every_copied_source_is_in_the_build_context() -> None:
    for c in instructions():
        if c.cmd != "COPY" or any(f.startswith("--from=") for f in c.flags):
            continue
        *sources, _dest = c.value
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
