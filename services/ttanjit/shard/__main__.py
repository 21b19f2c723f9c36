"""``python -m ttanjit.shard``: the game shard (issue 5).

Settings from ``TTANJIT_*`` env vars (docs/protocol.md 6). SIGTERM/SIGINT
drain: no new games, live games handed to other shards, then exit.

Health (ttanjit.shard.grpc_api): a draining shard — SIGTERM or gRPC
``Drain`` (``ttanjit drain``) — is not ready (gRPC health ``""`` and
``ttanjit.v1.ShardService`` NOT_SERVING, ``/healthz`` on the metrics port
503) but stays live (``ttanjit.v1.ShardService.Liveness`` SERVING) until
the process stops."""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import time

from ttanjit.common import log as logsetup
from ttanjit.common import metrics_http
from ttanjit.common.config import Settings


def watch_gc(log: logging.Logger, slow_s: float = 0.02) -> None:
    """Log collector passes long enough to show in command latency."""
    started = [0.0]

    def cb(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            took = time.perf_counter() - started[0]
            if took > slow_s:
                log.warning("slow gc pass", extra={"generation": info.get("generation"),
                                                   "ms": round(took * 1000, 1),
                                                   "collected": info.get("collected")})
    gc.callbacks.append(cb)


async def main(cfg: Settings) -> int:
    from ttanjit.shard import grpc_api
    from ttanjit.shard.service import Shard

    log = logsetup.setup("shard", cfg.log_level, cfg.log_format)
    shard = Shard(cfg)
    done = asyncio.Event()
    server, health, port = await grpc_api.serve(shard, cfg.grpc_port, cfg.grpc_host, done.set)
    shard.grpc_addr = f"{cfg.advertise_host}:{port}"
    if cfg.link_port >= 0:  # gateways' direct connections (docs/protocol.md 1.1)
        await shard.link.start(cfg.grpc_host, cfg.link_port, cfg.advertise_host)
    await shard.start()
    if cfg.metrics_port:
        metrics_http.serve(cfg.metrics_port, cfg.metrics_host,
                           healthy=lambda: not done.is_set() and not shard.draining)
    log.info("ready", extra={"settings": cfg.describe(), "grpc_port": port})

    loop = asyncio.get_running_loop()
    draining: list[asyncio.Task[object]] = []

    def on_signal(signame: str) -> None:
        # after a preStop drain, only what is left of its budget (service.stop_budget)
        budget = shard.stop_budget()
        shard.stop_taking()  # now, not after the awaits before the drain
        log.info("signal: draining", extra={"signal": signame, "budget_s": round(budget, 1)})
        if not draining:
            async def drain_and_exit() -> None:
                await health.set(False)
                out = await shard.drain(budget)
                log.info("drained", extra=out)
                done.set()
            draining.append(asyncio.ensure_future(drain_and_exit()))

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)

    gc.collect()
    gc.freeze()
    gc.set_threshold(5_000, 20, 100)
    watch_gc(log)
    await done.wait()
    await health.set(False)
    await grpc_api.set_live(health, False)
    await shard.close()
    await server.stop(1.0)
    log.info("stopped")
    return 0


def run() -> int:
    cfg = Settings.for_service("shard")
    try:
        import uvloop

        return uvloop.run(main(cfg))
    except ImportError:
        return asyncio.run(main(cfg))


if __name__ == "__main__":
    raise SystemExit(run())
