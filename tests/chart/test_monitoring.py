"""Dashboards (deploy/grafana) and alerts (deploy/prometheus) — issue 8.

Every alert and dashboard expression parses as PromQL (promql-parser, the
Rust parser of the Prometheus grammar, with type checks), uses only metric
names of docs/metrics.md, and each alert links a runbook section that exists
in the README.  That the running services export those names is
tests/integration/test_metrics_exported.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from chartlib import ROOT
from metricsdoc import (
    DASHBOARDS,
    HISTOGRAM_SUFFIXES,
    alert_rules,
    all_exprs,
    dashboard_exprs,
    dashboard_panels,
    documented,
    elsewhere,
    metric_of,
    series_names,
)


def test_docs_list_the_metrics() -> None:
    docs = documented()
    assert len(docs) >= 25
    assert set(docs.values()) <= {"counter", "gauge", "histogram"}


def test_series_from_elsewhere_are_few_and_each_is_used() -> None:
    """docs/metrics.md's "Series from elsewhere" may not grow into a way
    around the contract: each is used by a rule or a panel, none is ttanjit's."""
    outside = elsewhere()
    assert "up" in outside and not {n for n in outside if n.startswith("ttanjit_")}, outside
    used = set().union(*(series_names(e) for _, e in all_exprs()))
    assert outside <= used, outside - used


@pytest.mark.parametrize(("where", "expr"), all_exprs(), ids=lambda v: v[:60])
def test_expression_parses_and_uses_documented_metrics(where: str, expr: str) -> None:
    docs = documented()
    names = series_names(expr)  # raises on a syntax or type error
    assert names, f"{where}: no metric in {expr}"
    unknown = {n for n in names - elsewhere() if not metric_of(n, docs)}
    assert not unknown, f"{where}: not in docs/metrics.md: {unknown}"
    for name in names:
        kind = docs.get(metric_of(name, docs) or "")
        if kind == "histogram":
            assert name.endswith(HISTOGRAM_SUFFIXES), f"{where}: {name} is a histogram"


def test_parser_rejects_broken_expressions() -> None:
    for broken in ("sum(rate(ttanjit_shard_commands_total[5m])",
                   "rate(ttanjit_shard_commands_total)",
                   "histogram_quantile(0.9, ttanjit_mm_match_wait_seconds_bucket[5m])"):
        with pytest.raises(ValueError):
            series_names(broken)


REQUIRED_ALERTS = {
    "TtanjitShardDown", "TtanjitTimerLagHigh", "TtanjitCommandErrors",
    "TtanjitRecordAppendFailing", "TtanjitMatchmakingWaitHigh", "TtanjitBotPoolSaturated",
    "TtanjitNoShardForGames", "TtanjitShardsNotReady", "TtanjitServiceUnavailable",
    "TtanjitCommandLatencyHigh", "TtanjitGameUnreplayable",
}


def readme_anchors() -> set[str]:
    """GitHub's heading anchors of README.md."""
    anchors = set()
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"#{1,6} (.+)", line):
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            anchors.add(slug)
    return anchors


def test_alerts_are_complete_and_have_runbooks() -> None:
    rules = alert_rules()
    names = [r["alert"] for r in rules]
    assert len(names) == len(set(names))
    assert REQUIRED_ALERTS <= set(names)
    anchors = readme_anchors()
    for rule in rules:
        assert rule["labels"]["severity"] in {"warning", "critical"}, rule["alert"]
        assert re.fullmatch(r"\d+[smh]", rule["for"]), rule["alert"]
        notes = rule["annotations"]
        assert notes["summary"] and notes["description"], rule["alert"]
        page, _, anchor = notes["runbook_url"].partition("#")
        assert page == "README.md" and anchor in anchors, (rule["alert"], anchor)


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_is_a_grafana_dashboard_with_a_datasource_variable(path: Path) -> None:
    board = json.loads(path.read_text(encoding="utf-8"))
    assert board["uid"] and board["title"] and board["schemaVersion"] >= 36
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    panels = dashboard_panels(path)
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
    for panel in panels:
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24, panel["title"]
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["refId"] and target["expr"], panel["title"]


def test_dashboards_are_what_the_generator_writes() -> None:
    """deploy/dashboards.py is the source; the JSON files must match it."""
    done = subprocess.run([sys.executable, str(ROOT / "deploy" / "dashboards.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_dashboards_cover_the_issue() -> None:
    """Issue 8: what an SRE must see."""
    exprs = " ".join(e for _, e in dashboard_exprs())
    wanted = [
        "ttanjit_gateway_connections",  # players online
        "ttanjit_mm_tickets_waiting",  # in queue
        "sum by (game) (ttanjit_shard_games_live",  # games live by type
        "sum by (pod) (ttanjit_shard_games_live",  # … and by shard
        "ttanjit_shard_command_latency_seconds_bucket",  # command latency
        'result="error"',  # command error rate
        "ttanjit_shard_timer_lag_seconds_bucket",
        "ttanjit_shard_record_append_seconds_bucket",
        "ttanjit_shard_ownership_claims_total",  # failovers
        "ttanjit_shard_handovers_total",
        "ttanjit_bot_decision_seconds_bucket",
        "sum(ttanjit_bot_inflight{",  # pool saturation: inflight / capacity
        "ttanjit_bot_capacity",
        "ttanjit_mm_match_wait_seconds_bucket",
        "ttanjit_shard_games_abandoned_total",  # issue 12: abandoned games reclaimed
        # no shard takes games: why, and how long the oldest player has waited
        "sum by (reason) (rate(ttanjit_mm_placement_failures_total{",
        "ttanjit_mm_oldest_ticket_age_seconds",
    ]
    assert [w for w in wanted if w not in exprs] == []
