"""Every metric the dashboards and alerts use is exported by the running services.

Issue 8 / docs/metrics.md: the Grafana dashboards (deploy/grafana) and alert
rules (deploy/prometheus) name metrics; this starts the real services (real
nats-server, shard, matchmaker, bot worker, gateway), scrapes each one's
/metrics and checks that every name is there with the documented type. Then
a real Prometheus (from `make tools`) scrapes the same services with the
alert rules loaded: every target is up, every rule evaluates, every
dashboard query runs and has a value before anyone has played.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import Services
from metricsdoc import (
    ALERTS,
    ROOT,
    all_exprs,
    dashboard_exprs,
    documented,
    elsewhere,
    metric_of,
    series_names,
)
from prometheus_client.parser import text_string_to_metric_families

from ttanjit.common.natsserver import free_port, wait_port

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def used_series() -> set[str]:
    """Every ttanjit series an alert rule or dashboard query selects."""
    names = set().union(*(series_names(e) for _, e in all_exprs()))
    return names - elsewhere()


def scrape(port: int) -> dict[str, str]:
    """Family name (as documented: counters keep `_total`) → type."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    # no `*_created` series beside the counters and histograms (no
    # dashboard or alert reads them; they doubled what Prometheus stored)
    assert not [ln for ln in text.splitlines() if "_created{" in ln or "_created " in ln]
    out = {}
    for family in text_string_to_metric_families(text):
        name = family.name + ("_total" if family.type == "counter" else "")
        out[name] = family.type
    return out


def prometheus_binary() -> Path:
    path = ROOT / ".tools" / "bin" / "prometheus"
    if not path.is_file():
        subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    return path


def api(port: int, path: str, **params: str) -> Any:
    url = f"http://127.0.0.1:{port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        doc = json.loads(resp.read())
    assert doc["status"] == "success", doc
    return doc["data"]


def ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def check_with_prometheus(targets: dict[str, int], workdir: Path) -> None:
    """A real Prometheus scrapes the services and runs the rules and queries."""
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ALERTS)],
        "scrape_configs": [{"job_name": job, "static_configs": [
            {"targets": [f"127.0.0.1:{p}"], "labels": {"pod": f"{job}-0"}}]}
            for job, p in targets.items()],
    }
    (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
    with open(workdir / "prometheus.log", "wb") as log:
        proc = subprocess.Popen(
            [str(prometheus_binary()), f"--config.file={workdir / 'prometheus.yml'}",
             f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_port("127.0.0.1", port, 20)
        deadline = time.monotonic() + 30
        while not ready(port):
            assert time.monotonic() < deadline, (workdir / "prometheus.log").read_text()
            time.sleep(0.2)
        while True:  # every target scraped and every rule evaluated at least once
            active = api(port, "targets")["activeTargets"]
            rules = [r for g in api(port, "rules")["groups"] for r in g["rules"]]
            if (len(active) == len(targets) and all(t["health"] == "up" for t in active)
                    and rules and all(r["lastEvaluation"][:4] != "0001" for r in rules)):
                break
            assert time.monotonic() < deadline, (active, rules)
            time.sleep(0.5)
        time.sleep(2.5)  # a few more scrapes, so that rate() has samples
        assert all(r["health"] == "ok" for r in rules), [
            (r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
        no_data = []
        for _, expr in dashboard_exprs():
            if not api(port, "query", query=expr)["result"]:  # raises unless it ran
                no_data.append(expr)
        # on a stack nobody has used yet every panel shows 0 (or NaN for a
        # ratio or quantile of nothing), not "No data": the known label sets
        # are exported from the start, so rate()/increase() also see the first
        # event. Only the server frames by type wait for a first connection.
        assert [e for e in no_data if "frames_out_total" not in e] == [], no_data
        online = api(port, "query", query=dict(dashboard_exprs())["ttanjit-overview.json: Players online"])
        assert online["resultType"] == "vector"
        capacity = api(port, "query", query="sum(ttanjit_bot_capacity)")["result"]
        assert float(capacity[0]["value"][1]) >= 1, capacity
    finally:
        proc.terminate()
        proc.wait(10)


def test_every_dashboard_and_alert_metric_is_exported(services: Services, tmp_path: Path) -> None:
    docs = documented()
    undocumented = {s for s in used_series() if not metric_of(s, docs)}
    assert not undocumented, f"not in docs/metrics.md: {undocumented}"
    wanted = {metric_of(s, docs) or s for s in used_series()}
    assert len(wanted) >= 20
    shard = services.start("shard", name="metrics-shard")
    bots = services.start("bots", name="metrics-bots")
    matchmaker = services.start("matchmaker", name="metrics-mm")
    gateway = services.start("gateway", name="metrics-gw", env={
        "TTANJIT_MATCHMAKER_ADDR": f"127.0.0.1:{matchmaker.ports['grpc']}",
        "TTANJIT_TOKEN_SECRET": "metrics-test-secret-0123456789abcdef"})
    exported: dict[str, str] = {}
    for proc, port in ((shard, "metrics"), (bots, "metrics"), (matchmaker, "metrics"),
                       (gateway, "metrics")):
        exported.update(scrape(proc.ports[port]))
    missing = sorted(wanted - set(exported))
    assert not missing, f"used by dashboards/alerts but not exported: {missing}"
    wrong = {n: (exported[n], docs[n]) for n in wanted if exported[n] != docs[n]}
    assert not wrong, f"exported type differs from docs/metrics.md: {wrong}"
    check_with_prometheus({"shard": shard.ports["metrics"], "bots": bots.ports["metrics"],
                           "matchmaker": matchmaker.ports["metrics"],
                           "gateway": gateway.ports["metrics"]}, tmp_path)
    gateway.stop()
    assert matchmaker.terminate(timeout=10) == 0  # SIGTERM: test_shutdown.py
