"""One source of truth for the settings the services share
(docs/protocol.md 6): ``TTANJIT_BOT_WAIT_MS`` (quick-match wait, 15 s) is
``common.config.Settings.bot_wait_ms``, which the matchmaker takes; the
shard's bot-decision budget is a setting of its own."""

from __future__ import annotations

import pytest

from ttanjit.common.config import Settings
from ttanjit.matchmaker.service import MMSettings
from ttanjit.run import stack_env


def _clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TTANJIT_BOT_WAIT_MS", "TTANJIT_BOT_BUDGET_MS", "TTANJIT_GRPC_PORT",
                 "TTANJIT_NATS_URL"):
        monkeypatch.delenv(name, raising=False)


def test_quick_match_wait_defaults_to_15_s_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    assert Settings().bot_wait_ms == Settings.from_env().bot_wait_ms == 15_000
    mm = MMSettings.from_env()
    assert mm.bot_wait_ms == MMSettings().bot_wait_ms == 15_000
    assert mm.grpc_port == 7200  # the matchmaker's own default
    assert Settings.from_env().bot_budget_ms == 2000


def test_matchmaker_reads_the_shared_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear(monkeypatch)
    monkeypatch.setenv("TTANJIT_BOT_WAIT_MS", "300")
    monkeypatch.setenv("TTANJIT_NATS_URL", "nats://10.0.0.9:4222")
    mm = MMSettings.from_env()
    assert (mm.bot_wait_ms, mm.nats_url) == (300, "nats://10.0.0.9:4222")
    assert Settings.from_env().bot_budget_ms == 2000  # the shard's is separate
    monkeypatch.setenv("TTANJIT_BOT_WAIT_MS", "soon")
    with pytest.raises(ValueError, match="TTANJIT_BOT_WAIT_MS"):
        MMSettings.from_env()


def test_make_run_fills_quick_matches_after_5_s_unless_told(
        monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    _clear(monkeypatch)
    monkeypatch.setenv("TTANJIT_VAR_DIR", str(tmp_path))
    assert stack_env()["TTANJIT_BOT_WAIT_MS"] == "5000"
    monkeypatch.setenv("TTANJIT_BOT_WAIT_MS", "15000")
    assert stack_env()["TTANJIT_BOT_WAIT_MS"] == "15000"
