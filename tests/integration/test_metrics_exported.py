"""Every metric the dashboards and alerts use is exported by the running services.

Issue 8 / docs/metrics.md: the Grafana dashboards (deploy/grafana) and alert
rules (deploy/prometheus) name metrics; this starts the real services (real
nats-server, shard, matchmaker, bot worker, gateway), scrapes each one's
/metrics and checks that every name is there with the documented type.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml
from conftest import Services
from prometheus_client.parser import text_string_to_metric_families

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS_BUILTINS = {"up"}  # made by Prometheus for each target, not by a service
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h"}


def documented() -> dict[str, str]:
    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `(ttanjit_[a-z_]+)` \| (\w+) \|", text, flags=re.M))


def used_series() -> set[str]:
    exprs = [r["expr"] for g in yaml.safe_load(
        (ROOT / "deploy" / "prometheus" / "ttanjit-alerts.yaml").read_text())["groups"]
        for r in g["rules"]]
    for path in (ROOT / "deploy" / "grafana").glob("*.json"):
        for panel in json.loads(path.read_text(encoding="utf-8"))["panels"]:
            for target in panel.get("targets", []):
                expr = target["expr"]
                for var, value in GRAFANA_VARIABLES.items():
                    expr = expr.replace(var, value)
                exprs.append(expr)
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)

    for expr in exprs:
        promql_parser.walk(promql_parser.parse(expr), visit)
    return names - PROMETHEUS_BUILTINS


def metric_of(series: str, docs: dict[str, str]) -> str:
    if series in docs:
        return series
    for suffix in HISTOGRAM_SUFFIXES:
        if series.endswith(suffix) and docs.get(series.removesuffix(suffix)) == "histogram":
            return series.removesuffix(suffix)
    raise AssertionError(f"{series} is not in docs/metrics.md")


def scrape(port: int) -> dict[str, str]:
    """Family name (as documented: counters keep `_total`) → type."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        name = family.name + ("_total" if family.type == "counter" else "")
        out[name] = family.type
    return out


def test_every_dashboard_and_alert_metric_is_exported(services: Services) -> None:
    docs = documented()
    wanted = {metric_of(s, docs) for s in used_series()}
    assert len(wanted) >= 20
    shard = services.start("shard", name="metrics-shard")
    bots = services.start("bots", name="metrics-bots")
    matchmaker = services.start("matchmaker", name="metrics-mm")
    gateway = services.start("gateway", name="metrics-gw", env={
        "TTANJIT_MATCHMAKER_ADDR": f"127.0.0.1:{matchmaker.ports['grpc']}",
        "TTANJIT_TOKEN_SECRET": "metrics-test-secret-0123456789abcdef"})
    exported: dict[str, str] = {}
    for proc, port in ((shard, "metrics"), (bots, "metrics"), (matchmaker, "metrics"),
                       (gateway, "http")):
        exported.update(scrape(proc.ports[port]))
    missing = sorted(wanted - set(exported))
    assert not missing, f"used by dashboards/alerts but not exported: {missing}"
    wrong = {n: (exported[n], docs[n]) for n in wanted if exported[n] != docs[n]}
    assert not wrong, f"exported type differs from docs/metrics.md: {wrong}"
