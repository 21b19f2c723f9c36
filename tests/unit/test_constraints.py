"""constraints.txt (`make lock`): the version of every Python package the
project installs, so a fresh machine gets what the tests passed with — not
whatever was released since (a release of orjson once changed what a kept
event costs in memory six-fold; one of any dependency can break a clean
clone's `make test` or an image built from the same commit).

Checked against the interpreter running the tests (make install's .venv):
every package pyproject.toml asks for, with its extras, and every package
those pull in, is pinned, the pin meets pyproject's own range, and the
version installed is the pin.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = ("dev", "bench")  # what make install installs: -e '.[dev,bench]'


def pins() -> dict[str, Version]:
    out: dict[str, Version] = {}
    for raw in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        assert m, f"constraints.txt: {line!r} is not name==version"
        name = canonicalize_name(m.group(1))
        assert name not in out, f"constraints.txt pins {name} twice"
        out[name] = Version(m.group(2))
    return out


def wanted() -> list[Requirement]:
    """pyproject.toml's requirements: the project's and its extras'."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in EXTRAS:
        reqs += [Requirement(r) for r in project["optional-dependencies"][extra]]
    return reqs


def applies(req: Requirement, extra: str = "") -> bool:
    return req.marker is None or req.marker.evaluate({**default_environment(), "extra": extra})


def closure() -> dict[str, set[str]]:
    """Every distribution make install puts in the environment here, with the
    extras asked of it: pyproject's requirements and theirs, markers evaluated."""
    seen: dict[str, set[str]] = {}
    todo = [(r, "") for r in wanted()]
    while todo:
        req, extra = todo.pop()
        if not applies(req, extra):
            continue
        name = canonicalize_name(req.name)
        new = set(req.extras) - seen.get(name, {"-"})
        if name in seen and not new:
            continue
        seen.setdefault(name, set()).update(req.extras)
        dist = metadata.distribution(name)
        for r in dist.requires or []:
            child = Requirement(r)
            if child.marker is None or applies(child):
                todo.append((child, ""))
            else:
                todo += [(child, e) for e in req.extras]
    return seen


def test_every_requirement_is_pinned_within_pyprojects_range() -> None:
    pinned = pins()
    for req in wanted():
        name = canonicalize_name(req.name)
        if not applies(req):
            continue
        assert name in pinned, f"{req} has no pin in constraints.txt: run make lock"
        assert req.specifier.contains(pinned[name], prereleases=True), (
            f"constraints.txt pins {name}=={pinned[name]} outside pyproject's {req}: run make lock")


def test_everything_installed_for_the_project_is_the_pinned_version() -> None:
    pinned = pins()
    for name in closure():
        assert name in pinned, f"{name} is installed for the project but not pinned: run make lock"
        installed = Version(metadata.version(name))
        assert installed == pinned[name], (
            f"{name} {installed} is installed, constraints.txt says {pinned[name]}: make install")


def test_nothing_is_pinned_that_the_project_does_not_install() -> None:
    """A pin left behind by a dependency dropped from pyproject.toml would
    hold back whatever else comes to need that package."""
    assert set(pins()) - set(closure()) == set()
