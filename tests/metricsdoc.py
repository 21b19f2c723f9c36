"""docs/metrics.md, the alert rules and the dashboards, read the way the
metric tests need them: the chart test (every expression parses and names
only documented series, tests/chart/test_monitoring.py) and the integration
test (the running services export them, tests/integration/test_metrics_exported.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import promql_parser
import yaml

ROOT = Path(__file__).resolve().parents[1]
METRICS_MD = ROOT / "docs" / "metrics.md"
ALERTS = ROOT / "deploy" / "prometheus" / "ttanjit-alerts.yaml"
DASHBOARDS = sorted((ROOT / "deploy" / "grafana").glob("*.json"))
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
# Grafana's variables, replaced by what Grafana would put there ($namespace: all).
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__interval": "15s", "$__range": "1h",
                     "$namespace": ".*"}
ELSEWHERE_HEADING = "## Series from elsewhere"


def documented() -> dict[str, str]:
    """name → type of every series a ttanjit process exports (the tables of docs/metrics.md)."""
    text = METRICS_MD.read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `(ttanjit_[a-z_]+)` \| (\w+) \|", text, flags=re.M))


def elsewhere() -> set[str]:
    """The series the rules use that no ttanjit process exports (Prometheus's
    ``up``, kube-state-metrics'): the table under "Series from elsewhere"."""
    text = METRICS_MD.read_text(encoding="utf-8")
    section = text.partition(ELSEWHERE_HEADING)[2].partition("\n## ")[0]
    return set(re.findall(r"^\| `([a-z_:]+)` \|", section, flags=re.M))


def metric_of(series: str, docs: dict[str, str]) -> str | None:
    """The documented metric a series belongs to (a histogram's parts too)."""
    if series in docs:
        return series
    for suffix in HISTOGRAM_SUFFIXES:
        base = series.removesuffix(suffix)
        if base != series and docs.get(base) == "histogram":
            return base
    return None


def series_names(expr: str) -> set[str]:
    """The series an expression selects; raises ValueError on a syntax or type error."""
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            names.add(node.name)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return names


def alert_rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return [rule for group in doc["groups"] for rule in group["rules"]]


def dashboard_panels(path: Path) -> list[dict[str, Any]]:
    panels = []
    for panel in json.loads(path.read_text(encoding="utf-8"))["panels"]:
        panels.append(panel)
        panels.extend(panel.get("panels", []))  # collapsed rows
    return panels


def grafana_expr(expr: str) -> str:
    for var, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(var, value)
    return expr


def dashboard_exprs() -> list[tuple[str, str]]:
    """(dashboard: panel, query with Grafana's variables filled in), in dashboard order."""
    return [(f"{p.name}: {panel['title']}", grafana_expr(target["expr"]))
            for p in DASHBOARDS for panel in dashboard_panels(p)
            for target in panel.get("targets", [])]


def all_exprs() -> list[tuple[str, str]]:
    """Every alert's and dashboard query's expression, with where it is."""
    return [(r["alert"], r["expr"]) for r in alert_rules()] + dashboard_exprs()
