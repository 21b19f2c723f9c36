"""A load-test report pushed to a real Prometheus Pushgateway (Debian's
``prometheus-pushgateway``, installed by ``make pushgateway``) shows up on
its ``/metrics`` under the job and run, as Prometheus would scrape it
(with the counts of issue 13's frames: ``update`` frames and their events,
syncs sent after a resume)."""

from __future__ import annotations

import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ttanjit.common.natsserver import free_port
from ttanjit.loadtest.stats import Stats, push

pytestmark = pytest.mark.integration

BINARY = shutil.which("prometheus-pushgateway") or shutil.which("pushgateway")


@pytest.fixture
def pushgateway(tmp_path: Path) -> Iterator[str]:
    if BINARY is None:
        pytest.skip("prometheus-pushgateway is not installed (make pushgateway)")
    port = free_port()
    # its own store: Debian's build keeps every pushgateway's groups in
    # /var/lib/prometheus/pushgateway.data, shared by every run of this test
    proc = subprocess.Popen([BINARY, f"--web.listen-address=127.0.0.1:{port}",
                             f"--persistence.file={tmp_path / 'pushgateway.data'}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{url}/-/ready", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def test_report_lands_on_a_real_pushgateway(pushgateway: str) -> None:
    s = Stats()
    for ms in (2.0, 3.0, 90.0):
        s.sample("action", ms)
    s.errors["not_your_turn"] += 1
    s.resumes["gapless"] += 2
    s.count.update(updates=40, update_events=95, syncs_resume=2)  # issue 13's frames
    assert push(pushgateway, s.report(), job="ttanjit_loadtest", run="ci") == 200
    with urllib.request.urlopen(f"{pushgateway}/metrics", timeout=5) as r:
        fams = {f.name: f for f in text_string_to_metric_families(r.read().decode())}
    rtt = [x for x in fams["ttanjit_loadtest_rtt_seconds"].samples
           if x.labels.get("job") == "ttanjit_loadtest" and x.labels.get("run") == "ci"]
    p99 = {x.labels["quantile"]: x.value for x in rtt if x.labels["type"] == "action"}
    assert p99["0.99"] == pytest.approx(0.090)
    errs = {x.labels["code"]: x.value for x in fams["ttanjit_loadtest_errors"].samples}
    assert errs == {"not_your_turn": 1}
    res = {x.labels["result"]: x.value for x in fams["ttanjit_loadtest_resumes"].samples}
    assert res == {"gapless": 2, "resync": 0, "failed": 0}  # (none: 0, not absent)
    counts = {x.labels["what"]: x.value for x in fams["ttanjit_loadtest_count"].samples
              if x.labels.get("run") == "ci" and x.value}
    assert counts == {"updates": 40, "update_events": 95, "syncs_resume": 2}


def test_each_run_keeps_its_own_figures(pushgateway: str) -> None:
    """Two runs pushed one after the other (names with a slash and a space):
    both are on the Pushgateway, each with its own counts."""
    for run, n in (("night/a", 1), ("night b", 2)):
        s = Stats()
        s.count.update(updates=n)
        assert push(pushgateway, s.report(), run=run) == 200
    with urllib.request.urlopen(f"{pushgateway}/metrics", timeout=5) as r:
        fams = {f.name: f for f in text_string_to_metric_families(r.read().decode())}
    updates = {x.labels.get("run"): x.value for x in fams["ttanjit_loadtest_count"].samples
               if x.labels.get("what") == "updates"}
    assert updates.get("night/a") == 1 and updates.get("night b") == 2, updates
