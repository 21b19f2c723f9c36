"""The alert rules, checked and exercised by Prometheus's own promtool.

`promtool check rules` validates deploy/prometheus/ttanjit-alerts.yaml as
Prometheus loads it; `promtool test rules` then feeds each alert synthetic
series (the failure it is about, next to a healthy neighbour) and checks it
fires, for the right series only, after its `for` period and not before, with
its annotations rendered (labels and value). A healthy system fires nothing.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from chartlib import ROOT

ALERTS = ROOT / "deploy" / "prometheus" / "ttanjit-alerts.yaml"
NS = "games"  # the namespace of a case's series unless it names another


def series(name: str, labels: str, values: str, ns: str = NS) -> dict[str, str]:
    return {"series": f'{name}{{namespace="{ns}",{labels}}}', "values": values}


def buckets(name: str, labels: str, per_step: dict[str, int], steps: int = 200,
            ns: str = NS) -> list[dict[str, str]]:
    """Histogram bucket counters growing by per_step[le] observations each step (cumulative)."""
    return [series(f"{name}_bucket", f'{labels},le="{le}"', f"0+{n}x{steps}", ns)
            for le, n in per_step.items()]


class Case:
    """An alert's failure (series that must fire it) next to healthy series
    (that must not), when it fires, the labels of the expected alerts and
    its rendered `$value`."""

    def __init__(self, failing: list[dict[str, str]], healthy: list[dict[str, str]],
                 fires_at: str, alerts: list[dict[str, str]], value: str = "") -> None:
        self.failing, self.healthy = failing, healthy
        self.fires_at, self.alerts, self.value = fires_at, alerts, value


def statefulset(name: str, replicas: str, ready: str, updated: str,
                ns: str = NS) -> list[dict[str, str]]:
    """kube-state-metrics' series of a StatefulSet: replicas asked for, ready, updated."""
    return [series(f"kube_statefulset_{m}", f'statefulset="{name}"', v, ns) for m, v in (
        ("replicas", replicas), ("status_replicas_ready", ready),
        ("status_replicas_updated", updated))]


RTT = "ttanjit_gateway_command_rtt_seconds"
SKIPPED = "ttanjit_shard_record_skipped_messages_total"


def rtt(ns: str, pod: str, per_step: dict[str, int]) -> list[dict[str, str]]:
    """A gateway's command round-trip histogram (:func:`buckets`) and its _count."""
    return [*buckets(RTT, f'pod="{pod}"', per_step, ns=ns),
            series(f"{RTT}_count", f'pod="{pod}"', f"0+{per_step['+Inf']}x200", ns)]


CASES = {
    "TtanjitServiceUnavailable": Case(
        # kube-state-metrics: the gateway Deployment asks for 2 Pods, none available
        [series("kube_deployment_spec_replicas", 'deployment="ttanjit-gateway"', "2x200"),
         series("kube_deployment_status_replicas_available", 'deployment="ttanjit-gateway"',
                "0x200")],
        # one matchmaker of two is enough; bots scaled to 0 on purpose ask for
        # none; someone else's Deployment is not ours; a gateway Deployment
        # without Pods for 75 s (a rollout) is back before 2 minutes
        [series("kube_deployment_spec_replicas", 'deployment="ttanjit-matchmaker"', "2x200"),
         series("kube_deployment_status_replicas_available", 'deployment="ttanjit-matchmaker"',
                "1x200"),
         series("kube_deployment_spec_replicas", 'deployment="ttanjit-bots"', "0x200"),
         series("kube_deployment_status_replicas_available", 'deployment="ttanjit-bots"',
                "0x200"),
         series("kube_deployment_spec_replicas", 'deployment="other-api"', "3x200"),
         series("kube_deployment_status_replicas_available", 'deployment="other-api"', "0x200"),
         # nor another team's that ends in "gateway" (a critical page for
         # Istio: operator audit)
         series("kube_deployment_spec_replicas", 'deployment="istio-ingressgateway"', "2x200",
                "istio-system"),
         series("kube_deployment_status_replicas_available", 'deployment="istio-ingressgateway"',
                "0x200", "istio-system"),
         series("kube_deployment_spec_replicas", 'deployment="ttanjit-gateway"', "1x200",
                "staging"),
         series("kube_deployment_status_replicas_available", 'deployment="ttanjit-gateway"',
                "0x4 1x196", "staging")],
        "3m",
        [{"deployment": "ttanjit-gateway"}],
        "2",
    ),
    "TtanjitCommandLatencyHigh": Case(
        # games: two gateways, every command 250–500 ms -> p99 497.5 ms
        [*rtt("games", "gw-a", {"0.1": 0, "0.25": 0, "0.5": 60, "+Inf": 60}),
         *rtt("games", "gw-b", {"0.1": 0, "0.25": 0, "0.5": 40, "+Inf": 40})],
        # staging: as slow but one command each 15 s (under one per 10 s: no
        # page); prod: busy and fast (all under 100 ms)
        [*rtt("staging", "gw-s", {"0.1": 0, "0.25": 0, "0.5": 1, "+Inf": 1}),
         *rtt("prod", "gw-p", {"0.1": 100, "0.25": 100, "0.5": 100, "+Inf": 100})],
        "15m",
        [{}],
        "497.5ms",
    ),
    "TtanjitShardDown": Case(
        [series("up", 'job="shard",pod="ttanjit-shard-1",instance="10.0.0.2:9090"', "1 1 0x18"),
         # a gateway down is not a shard down
         series("up", 'job="gateway",pod="ttanjit-gateway-x",instance="10.0.0.3:8080"', "0x20")],
        [series("up", 'job="shard",pod="ttanjit-shard-0",instance="10.0.0.1:9090"', "1x200"),
         # another team's database shards are not ours (operator audit)
         series("up", 'job="mongodb-shard",pod="mongodb-shard0",instance="10.0.0.9:9216"', "0x200",
                "db")],
        "2m",
        [{"job": "shard", "pod": "ttanjit-shard-1", "instance": "10.0.0.2:9090"}],
    ),
    "TtanjitShardsNotReady": Case(
        # kube-state-metrics: 3 shards asked for, shard-2 Pending (never
        # scraped, so no `up` series) — 2 ready; a gateway Deployment short
        # of Pods and a StatefulSet whose Pods are all ready are no shard's
        [series("kube_statefulset_replicas",
                'job="kube-state-metrics",statefulset="ttanjit-shard"', "3x200"),
         series("kube_statefulset_status_replicas_ready",
                'job="kube-state-metrics",statefulset="ttanjit-shard"', "2x200"),
         series("kube_statefulset_status_replicas_updated",
                'job="kube-state-metrics",statefulset="ttanjit-shard"', "3x200")],
        [{"series": 'kube_statefulset_replicas{namespace="staging",statefulset="ttanjit-shard"}',
          "values": "2x200"},
         {"series": 'kube_statefulset_status_replicas_ready{namespace="staging",'
                    'statefulset="ttanjit-shard"}', "values": "2 1x3 2x196"},
         {"series": 'kube_statefulset_replicas{namespace="staging",statefulset="other-db"}',
          "values": "3x200"},
         {"series": 'kube_statefulset_status_replicas_ready{namespace="staging",'
                    'statefulset="other-db"}', "values": "0x200"},
         # another team's "…-shard0" (operator audit), and a roll of 10
         # shards for 15 minutes (one always draining or starting: longer
         # than 5 minutes) — a roll stuck is TtanjitShardRolloutStuck's
         *statefulset("mongodb-shard0", "3x200", "0x200", "3x200", "db"),
         *statefulset("prod-ttanjit-shard", "10x200", "9x60 10x140", "1x20 4x20 7x20 10x140",
                      "rolling")],
        "6m",
        [{"statefulset": "ttanjit-shard"}],
        "1",
    ),
    "TtanjitShardRolloutStuck": Case(
        # 2 of 3 updated, the third not ready for good (its new Pod crash-loops)
        statefulset("ttanjit-shard", "3x200", "2x200", "2x200"),
        # a roll that ends in 10 minutes (shards not ready with no roll are
        # TtanjitShardsNotReady's: its case)
        statefulset("ttanjit-shard", "3x200", "2x40 3x160", "1x20 2x20 3x160", "upgrading"),
        "31m",
        [{"statefulset": "ttanjit-shard"}],
        "1",
    ),
    "TtanjitTimerLagHigh": Case(
        # shard-0: every timer 250–500 ms late → p99 0.4975 s; shard-1: under
        # 25 ms; shard-2 as late as shard-0 but one timer a minute (quiet: its
        # one late timer is its p99, operator audit)
        [*buckets("ttanjit_shard_timer_lag_seconds", 'pod="ttanjit-shard-0"',
                  {"0.025": 0, "0.25": 0, "0.5": 100, "+Inf": 100}),
         series("ttanjit_shard_timer_lag_seconds_count", 'pod="ttanjit-shard-0"', "0+100x200")],
        [*buckets("ttanjit_shard_timer_lag_seconds", 'pod="ttanjit-shard-1"',
                  {"0.025": 100, "0.25": 100, "0.5": 100, "+Inf": 100}),
         series("ttanjit_shard_timer_lag_seconds_count", 'pod="ttanjit-shard-1"', "0+100x200"),
         *[series(f"ttanjit_shard_timer_lag_seconds_{k}", f'pod="ttanjit-shard-2"{le}', v)
           for k, le, v in (("bucket", ',le="0.025"', "0x200"), ("bucket", ',le="0.25"', "0x200"),
                            ("bucket", ',le="0.5"', "0+0.25x200"), ("bucket", ',le="+Inf"', "0+0.25x200"),
                            ("count", "", "0+0.25x200"))]],
        "10m",
        [{"pod": "ttanjit-shard-0"}],
        "497.5ms",
    ),
    "TtanjitCommandErrors": Case(
        [series("ttanjit_shard_commands_total", 'pod="s0",game="onecard",result="ok"', "0+98x200"),
         series("ttanjit_shard_commands_total", 'pod="s0",game="onecard",result="error"',
                "0+2x200")],
        # refused moves are the players' mistakes, not errors
        [series("ttanjit_shard_commands_total", 'pod="s0",game="hakka",result="ok"', "0+50x200"),
         series("ttanjit_shard_commands_total", 'pod="s0",game="hakka",result="refused"',
                "0+50x200")],
        "10m",
        [{"game": "onecard"}],
        "2%",
    ),
    "TtanjitProxyNotNamed": Case(
        [series("ttanjit_gateway_unnamed_proxy_requests_total", 'pod="gw-0"', "0x4 5+5x200")],
        [series("ttanjit_gateway_unnamed_proxy_requests_total", 'pod="gw-0"', "0x200", ns="other")],
        "15m",
        [{}],
        "333.3m",  # 5 a 15 s step: per second
    ),
    "TtanjitGatewaysFull": Case(
        [series("ttanjit_gateway_connections_refused_total", 'pod="gw-0"', "0x4 6+6x200")],
        # (a herd's minute of refusals: test_a_herds_refusals_page_nobody)
        [series("ttanjit_gateway_connections_refused_total", 'pod="gw-0"', "0x200", ns="other")],
        "10m",
        [{}],
        "400m",  # 6 a 15 s step: per second
    ),
    "TtanjitNatsRefused": Case(
        # one refusal is enough (never in a sound deployment): the bot
        # worker's subscription, refused at each of its restarts
        [series("ttanjit_nats_refused_total", 'job="bots",pod="ttanjit-bots-0",op="subscribe"',
                "0x4 1x200")],
        [series("ttanjit_nats_refused_total", 'job="shard",pod="ttanjit-shard-0",op="publish"',
                "0x200"),
         # refused long before (a mistake mended since): no more now
         series("ttanjit_nats_refused_total", 'job="bots",pod="ttanjit-bots-1",op="subscribe"',
                "3x200", ns="other")],
        "3m",
        [{"job": "bots"}],
        "1",
    ),
    "TtanjitRecordAppendFailing": Case(
        [series("ttanjit_shard_record_append_failures_total", 'pod="ttanjit-shard-0"',
                "0x4 1+1x200")],
        # one failure (a stream leader changing, or before: a stale owner's
        # fenced append after a failover) pages nobody (operator audit)
        [series("ttanjit_shard_record_append_failures_total", 'pod="ttanjit-shard-1"', "0x200"),
         series("ttanjit_shard_record_append_failures_total", 'pod="ttanjit-shard-2"', "0x4 1x196")],
        "5m",
        [{"pod": "ttanjit-shard-0"}],
    ),
    "TtanjitGameUnreplayable": Case(
        # a record another release wrote, held for good; a claim that could
        # not replay for a minute (the writing release's shard took it) pages nobody
        [series("ttanjit_shard_unreplayable_games", 'pod="ttanjit-shard-0"', "0x4 1x200")],
        [series("ttanjit_shard_unreplayable_games", 'pod="ttanjit-shard-1"', "0x4 1x2 0x200")],
        "10m",
        [{"pod": "ttanjit-shard-0"}],
        "1",
    ),
    "TtanjitRecordStoredByNoShard": Case(
        # two answers stored on a live game's record, found by its owner's
        # next append; two more on another, found by the shard that claims it
        [series(SKIPPED, 'pod="ttanjit-shard-0",found_at="append"', "0x4 2x200"),
         series(SKIPPED, 'pod="ttanjit-shard-1",found_at="claim"', "0x4 2x200")],
        # none anywhere else; five found before (the counter flat since): none now
        [series(SKIPPED, 'pod="ttanjit-shard-2",found_at="append"', "0x200"),
         series(SKIPPED, 'pod="ttanjit-shard-0",found_at="claim"', "0x200"),
         series(SKIPPED, 'pod="ttanjit-shard-0",found_at="append"', "5x200", ns="other")],
        "3m",
        [{"found_at": "append"}, {"found_at": "claim"}],
        "2",
    ),
    "TtanjitMatchmakingWaitHigh": Case(
        # onecard: everyone waits 30–60 s → p90 57 s; penalty_rows: nobody is
        # matched (no shard takes games), its oldest ticket has waited 57 s;
        # hakka: under 15 s, and its oldest waiting ticket 10 s.
        [*buckets("ttanjit_mm_match_wait_seconds", 'pod="mm",game="onecard"',
                  {"15": 0, "30": 0, "60": 10, "+Inf": 10}),
         series("ttanjit_mm_oldest_ticket_age_seconds", 'pod="mm",game="penalty_rows"',
                "57x200")],
        [*buckets("ttanjit_mm_match_wait_seconds", 'pod="mm",game="hakka"',
                  {"15": 10, "30": 10, "60": 10, "+Inf": 10}),
         series("ttanjit_mm_oldest_ticket_age_seconds", 'pod="mm",game="hakka"', "10x200")],
        "25m",
        [{"game": "onecard"}, {"game": "penalty_rows"}],
        "57s",
    ),
    "TtanjitNoShardForGames": Case(
        # every shard draining: each tick's placement finds none; 6 players wait
        [series("ttanjit_mm_placement_failures_total", 'pod="mm",reason="draining"', "0+3x200"),
         series("ttanjit_mm_tickets_waiting", 'pod="mm",game="onecard"', "6x200")],
        # failed CreateGame calls are retried elsewhere (reason error), and a
        # namespace with no shard but nobody waiting pages nobody
        [series("ttanjit_mm_placement_failures_total", 'pod="mm",reason="error"', "0+1x200"),
         series("ttanjit_mm_placement_failures_total", 'pod="mm",reason="capacity"', "0x200"),
         {"series": 'ttanjit_mm_placement_failures_total{namespace="staging",reason="no_shard"}',
          "values": "0+1x200"},
         {"series": 'ttanjit_mm_tickets_waiting{namespace="staging",game="onecard"}',
          "values": "0x200"},
         {"series": 'ttanjit_mm_placement_failures_total{namespace="prod",reason="error"}',
          "values": "0+1x200"},
         {"series": 'ttanjit_mm_tickets_waiting{namespace="prod",game="onecard"}',
          "values": "6x200"}],
        "2m",
        [{"reason": "draining"}],
    ),
    "TtanjitLobbyNoLeader": Case(
        # two replicas, both followers since the leader's lease could not be renewed
        [series("ttanjit_mm_leader", 'pod="mm-a"', "1x3 0x196"),
         series("ttanjit_mm_leader", 'pod="mm-b"', "0x200")],
        # a failover: the leader gone, the other leads 30 s later
        [{"series": 'ttanjit_mm_leader{namespace="prod",pod="mm-c"}', "values": "1x10 0x190"},
         {"series": 'ttanjit_mm_leader{namespace="prod",pod="mm-d"}', "values": "0x12 1x188"}],
        "2m",
        [{}],
    ),
    "TtanjitLobbyDocumentLarge": Case(
        # the head at 900 KiB (a queue of ~6,000 waiting players)
        [series("ttanjit_mm_lobby_document_bytes", 'pod="mm-a",document="head"', "921600x200"),
         series("ttanjit_mm_lobby_document_bytes", 'pod="mm-a",document="largest_part"',
                "40000x200")],
        # a follower shows 0; a part at 500 KiB is far from it
        [series("ttanjit_mm_lobby_document_bytes", 'pod="mm-b",document="head"', "0x200"),
         {"series": 'ttanjit_mm_lobby_document_bytes{namespace="prod",pod="mm",'
                    'document="largest_part"}', "values": "512000x200"}],
        "11m",
        [{"document": "head"}],
        "900ki",
    ),
    "TtanjitBotPoolSaturated": Case(
        [series("ttanjit_bot_inflight", 'pod="bots-a"', "10x200"),
         series("ttanjit_bot_inflight", 'pod="bots-b"', "9x200"),
         series("ttanjit_bot_capacity", 'pod="bots-a"', "10x200"),
         series("ttanjit_bot_capacity", 'pod="bots-b"', "10x200")],
        # the same pool half busy (in another namespace)
        [{"series": 'ttanjit_bot_inflight{namespace="staging",pod="bots-c"}', "values": "5x200"},
         {"series": 'ttanjit_bot_capacity{namespace="staging",pod="bots-c"}', "values": "10x200"}],
        "10m",
        [{}],
        "95%",
    ),
}


def rules() -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    return {r["alert"]: r for g in doc["groups"] for r in g["rules"]}


def render(template: str, labels: dict[str, str], value: str) -> str:
    """The annotation as Prometheus renders it, for the constructs the rules use."""
    out = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), template)
    out = re.sub(r"\{\{ \$value \| humanize\w* \}\}", value, out)
    assert "{{" not in out, f"template construct this test cannot render: {out}"
    return out


def seconds(duration: str) -> int:
    n, unit = int(duration[:-1]), duration[-1]
    return n * {"s": 1, "m": 60, "h": 3600}[unit]


def promtool_case(alert: str) -> dict[str, Any]:
    case, rule = CASES[alert], rules()[alert]
    exp_alerts = []
    for extra in case.alerts:
        labels = {"namespace": "games", **extra, **rule["labels"]}
        exp_alerts.append({
            "exp_labels": labels,
            "exp_annotations": {k: render(v, labels, case.value)
                                for k, v in rule["annotations"].items()},
        })
    return {
        "name": alert,
        "interval": "15s",
        "input_series": case.failing + case.healthy,
        "alert_rule_test": [
            # the condition holds from the first samples on: still pending here
            {"eval_time": f"{seconds(rule['for']) - 15}s", "alertname": alert, "exp_alerts": []},
            {"eval_time": case.fires_at, "alertname": alert, "exp_alerts": exp_alerts},
        ],
    }


def healthy_case() -> dict[str, Any]:
    """Only the healthy series of every case, for a long time: no alert fires."""
    return {"name": "healthy", "interval": "15s",
            "input_series": [s for case in CASES.values() for s in case.healthy],
            "alert_rule_test": [{"eval_time": f"{m}m", "alertname": a, "exp_alerts": []}
                                for a in rules() for m in (5, 25, 45)]}  # (past the longest `for`)


def run(promtool: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(promtool), *args], capture_output=True, text=True, cwd=ROOT)


def test_promtool_accepts_the_rule_file(promtool: Path) -> None:
    done = run(promtool, "check", "rules", str(ALERTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules())} rules found" in done.stdout


def test_every_alert_has_a_case() -> None:
    assert set(CASES) == set(rules())


@pytest.mark.parametrize("alert", sorted(CASES))
def test_alert_fires_for_its_failure_only(promtool: Path, tmp_path: Path, alert: str) -> None:
    spec = {"rule_files": [str(ALERTS)], "evaluation_interval": "15s",
            "tests": [promtool_case(alert)]}
    path = tmp_path / "test.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    done = run(promtool, "test", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_healthy_system_fires_nothing(promtool: Path, tmp_path: Path) -> None:
    spec = {"rule_files": [str(ALERTS)], "evaluation_interval": "15s", "tests": [healthy_case()]}
    path = tmp_path / "test.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    done = run(promtool, "test", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_herds_refusals_page_nobody(promtool: Path, tmp_path: Path) -> None:
    """TtanjitGatewaysFull: a reconnect herd refused for a minute or two
    (the cap doing its work) never fires it, evaluated every minute until
    long after; refusals that go on do."""
    herd = series("ttanjit_gateway_connections_refused_total", 'pod="gw-0"',
                  "0x4 50+50x8 450x200")  # refused from 1 to 3 min
    spec = {"rule_files": [str(ALERTS)], "evaluation_interval": "15s", "tests": [{
        "interval": "15s", "input_series": [herd],
        "alert_rule_test": [{"eval_time": f"{m}m", "alertname": "TtanjitGatewaysFull",
                             "exp_alerts": []} for m in range(1, 21)],
    }]}
    path = tmp_path / "herd.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
    done = run(promtool, "test", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_shards_serving_says_0_when_every_shard_drains(promtool: Path, tmp_path: Path) -> None:
    """Operator audit: the Overview's "Shards serving" stat was
    `count(ttanjit_shard_draining == 0)`, "No data" exactly when every shard
    drains (no game can start then). It says 0 then, and counts the others."""
    from metricsdoc import dashboard_exprs

    (expr,) = [e for where, e in dashboard_exprs() if where.endswith(": Shards serving")]
    tests = {"rule_files": [], "evaluation_interval": "15s", "tests": [{
        "interval": "15s",
        "input_series": [
            series("ttanjit_shard_draining", 'pod="shard-0"', "1x20"),
            series("ttanjit_shard_draining", 'pod="shard-1"', "1x8 0x12")],
        "promql_expr_test": [
            {"expr": expr, "eval_time": "1m", "exp_samples": [{"labels": "{}", "value": 0}]},
            {"expr": expr, "eval_time": "4m", "exp_samples": [{"labels": "{}", "value": 1}]}],
    }]}
    path = tmp_path / "serving.yaml"
    path.write_text(yaml.safe_dump(tests, allow_unicode=True), encoding="utf-8")
    done = run(promtool, "test", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
