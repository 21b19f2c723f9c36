"""Ports for the servers the tests start (ttanjit.common.natsserver.free_port):
below the kernel's ephemeral range, and, with ``make test``'s two workers,
from each worker's own share — a port one worker freed for a moment (a
server started again on its port) is never the other's pick."""

from __future__ import annotations

import pytest

from ttanjit.common import natsserver


def test_each_test_worker_picks_from_a_share_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    lo, _ = natsserver._ephemeral_range()
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "2")
    picked = {}
    for worker in ("gw0", "gw1"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        picked[worker] = {natsserver.free_port() for _ in range(40)}
        assert all(p < lo for p in picked[worker])
    assert max(picked["gw0"]) < min(picked["gw1"])
    assert natsserver._worker_share(10_000, 32_767) == (21_384, 32_767)  # gw1's, of two


def test_one_process_picks_from_the_whole_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    assert natsserver._worker_share(10_000, 32_767) == (10_000, 32_767)
