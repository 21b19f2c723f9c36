"""``python -m ttanjit.bots``: run one bot worker.

Settings (env): ``TTANJIT_NATS_URL``, ``TTANJIT_NATS_PREFIX``,
``TTANJIT_METRICS_PORT`` (0 = no metrics endpoint), ``TTANJIT_BOT_CAPACITY``
(concurrent decisions, default 4), ``TTANJIT_LOG_LEVEL``. SIGTERM/SIGINT:
stop taking requests, answer those in flight, exit 0.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from dataclasses import dataclass

import nats
from prometheus_client import start_http_server

from ttanjit.bots.worker import BotWorker


@dataclass(frozen=True)
class Settings:
    nats_url: str = "nats://127.0.0.1:4222"
    prefix: str = "ttanjit.v1"
    metrics_port: int = 0
    capacity: int = 4
    log_level: str = "INFO"

    @classmethod
    def from_env(cls) -> Settings:
        env = os.environ
        return cls(
            nats_url=env.get("TTANJIT_NATS_URL", cls.nats_url),
            prefix=env.get("TTANJIT_NATS_PREFIX", cls.prefix),
            metrics_port=int(env.get("TTANJIT_METRICS_PORT", "0")),
            capacity=max(1, int(env.get("TTANJIT_BOT_CAPACITY", "4"))),
            log_level=env.get("TTANJIT_LOG_LEVEL", cls.log_level),
        )


async def serve(settings: Settings) -> None:
    log = logging.getLogger("ttanjit.bots")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    nc = await nats.connect(settings.nats_url, name="ttanjit-bots",
                            max_reconnect_attempts=-1, reconnect_time_wait=0.5)
    worker = BotWorker(nc, settings.prefix, settings.capacity)
    await worker.start()
    log.info("ready")
    await stop.wait()
    log.info("draining: %d in flight", worker.inflight)
    await worker.drain()
    await nc.drain()
    log.info("stopped")


def main() -> None:
    settings = Settings.from_env()
    logging.basicConfig(level=settings.log_level,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if settings.metrics_port:
        start_http_server(settings.metrics_port)
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
