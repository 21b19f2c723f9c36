"""``python -m ttanjit.matchmaker``: settings from ``TTANJIT_*`` env vars
(docs/protocol.md 6; ``TTANJIT_BOT_WAIT_MS`` default 15000,
``TTANJIT_TEST_OPTIONS=1`` accepts test-only room options); SIGTERM/SIGINT
stop it cleanly (also while it waits for NATS)."""

from __future__ import annotations

import asyncio
import logging
import signal

from ttanjit.common import log as logsetup
from ttanjit.common.config import Settings
from ttanjit.common.nats import Stopped, connect
from ttanjit.matchmaker.service import serve


async def main() -> None:
    settings = Settings.for_service("matchmaker")
    logsetup.setup("matchmaker", settings.log_level, settings.log_format)
    if settings.metrics_port:
        from ttanjit.common.metrics_http import serve as serve_metrics
        serve_metrics(settings.metrics_port, settings.metrics_host)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        nc = await connect(settings.nats_url, "matchmaker", stop=stop)
    except Stopped:
        logging.getLogger("ttanjit.matchmaker").info("stopped before NATS answered")
        return
    try:
        await serve(settings, nc, stop)
    finally:
        try:
            if nc.is_connected:
                await asyncio.wait_for(nc.drain(), 2.0)
        except Exception:  # NATS went away meanwhile (it stops with us under make run)
            pass
        try:  # (bounded: a frozen server takes nothing it is sent)
            await asyncio.wait_for(nc.close(), 2.0)
        except Exception:  # noqa: BLE001 - exiting either way
            pass


if __name__ == "__main__":
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main())
