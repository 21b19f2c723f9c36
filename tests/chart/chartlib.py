"""Paths and helpers shared by the chart tests (fixtures are in conftest.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "ttanjit"
TOOLS = ROOT / ".tools" / "bin"
HELM = TOOLS / "helm"
SCENARIOS = sorted(p.name for p in (CHART / "ci").glob("*.yaml"))
# The default values plus every helm/ttanjit/ci/*.yaml scenario.
ALL_VALUES = ["default", *SCENARIOS]

Manifest = dict[str, Any]


def values_args(values: str) -> list[str]:
    return [] if values == "default" else ["-f", str(CHART / "ci" / values)]


def run_helm(helm: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(helm), *args], cwd=ROOT, capture_output=True, text=True)


def by_kind(manifests: list[Manifest], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in manifests if m["kind"] == kind}


def pod_specs(manifests: list[Manifest]) -> dict[str, dict[str, Any]]:
    """Pod templates of every workload, by "<Kind>/<name>"."""
    return {
        f"{m['kind']}/{m['metadata']['name']}": m["spec"]["template"]["spec"]
        for m in manifests
        if m["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job")
    }
