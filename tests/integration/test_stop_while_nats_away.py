"""A service asked to stop (SIGTERM) while it waits for NATS at its start
stops at once: before, the gateway, matchmaker and bot worker went on
waiting (a Pod deleted while NATS was away waited out its grace period to
be killed, a rollout stood still meanwhile)."""

from __future__ import annotations

import pytest
from conftest import Services

from ttanjit.common.natsserver import free_port


@pytest.mark.parametrize("svc", ["gateway", "matchmaker", "bots", "shard"])
def test_a_service_waiting_for_nats_stops_when_asked(services: Services, svc: str) -> None:
    nowhere = f"nats://127.0.0.1:{free_port()}"  # (nothing listens there)
    p = services.start(svc, name=f"{svc}-waiting", wait=False,
                       env={"TTANJIT_NATS_URL": nowhere})
    p.wait_log("nats error", 30)  # trying, again and again
    code = p.terminate(timeout=5)
    if svc == "shard":  # (it takes signals once it has started: killed by this one)
        assert code == -15, p.log()
    else:
        assert code == 0, p.log()
        assert "stopped before NATS answered" in p.log()


@pytest.mark.parametrize("svc_name", ["gateway", "matchmaker", "bots"])
def test_a_service_whose_nats_went_away_stops_when_asked(svc: Services, svc_name: str) -> None:
    """NATS gone while it runs, then SIGTERM: it stops cleanly (the bot
    worker exited 1 with a traceback, its drain asking the absent server:
    review finding)."""
    p = svc.start(svc_name, name=f"{svc_name}-left")
    assert svc.nats is not None
    svc.nats.stop()
    p.wait_log("disconnected", 30)
    code = p.terminate(timeout=15)
    assert code == 0, p.log()
    assert "Traceback" not in p.log(), p.log()
