"""``python -m ttanjit.bots``: one bot worker (issue 4, docs/protocol.md 3).

Settings from ``TTANJIT_*`` env vars (docs/protocol.md 6): ``TTANJIT_NATS_URL``,
``TTANJIT_NATS_PREFIX``, ``TTANJIT_METRICS_PORT`` (``/metrics`` and
``/healthz``), ``TTANJIT_LOG_LEVEL``/``TTANJIT_LOG_FORMAT``, and
``TTANJIT_BOT_CAPACITY`` (concurrent decisions, default 2). SIGTERM/SIGINT: stop
taking requests, answer those in flight, exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal

from ttanjit.bots.worker import QUEUE_GROUP, BotWorker, NotAllowed
from ttanjit.common import log as logsetup
from ttanjit.common import metrics_http
from ttanjit.common.config import Settings
from ttanjit.common.nats import Stopped, connect


async def main(cfg: Settings) -> int:
    capacity = cfg.bot_capacity
    log = logsetup.setup("bots", cfg.log_level, cfg.log_format)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        nc = await connect(cfg.nats_url, "ttanjit-bots", stop=stop)
    except Stopped:
        log.info("stopped before NATS answered")
        return 0
    worker = BotWorker(nc, cfg.prefix, capacity)
    try:
        await worker.start()
    except NotAllowed as exc:  # (its Pod restarts, saying why each time)
        log.error("%s", exc)
        await nc.close()
        return 1
    if cfg.metrics_port:
        metrics_http.serve(cfg.metrics_port, cfg.metrics_host, healthy=lambda: nc.is_connected)
    # (one line: the worker logged its start a second time: operator audit)
    log.info("bot worker ready", extra={"subject": worker.subject, "queue": QUEUE_GROUP,
                                        "capacity": capacity})
    await stop.wait()
    log.info("draining", extra={"inflight": worker.inflight})
    # (NATS away meanwhile: the decisions in flight are finished and
    # dropped, nobody can take them; it exited 1 with a traceback: review)
    await worker.drain(unsubscribe=nc.is_connected)
    try:
        if nc.is_connected:
            await asyncio.wait_for(nc.drain(), 5.0)
    except Exception as exc:  # noqa: BLE001 - exiting either way
        log.warning("nats drain at shutdown: %r", exc)
    with contextlib.suppress(Exception):  # (bounded: a frozen server takes nothing)
        await asyncio.wait_for(nc.close(), 2.0)
    log.info("stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main(Settings.for_service("bots"))))
