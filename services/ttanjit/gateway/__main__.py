"""``python -m ttanjit.gateway``: uvicorn (uvloop, permessage-deflate off,
1 MiB hard frame cap) on ``TTANJIT_HTTP_PORT``, ``/metrics`` on
``TTANJIT_METRICS_PORT``; SIGTERM/SIGINT stop it cleanly (open sockets are
closed with 1001 and their sessions saved for resume on another gateway).
Refuses to start (exit 1) without ``TTANJIT_TOKEN_SECRET`` unless
``TTANJIT_DEV=1``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Generator
from types import FrameType

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ttanjit.common import log as logsetup
from ttanjit.common import metrics_http
from ttanjit.common.config import Settings
from ttanjit.common.nats import Stopped
from ttanjit.gateway import metrics as m
from ttanjit.gateway.app import create_app
from ttanjit.gateway.limits import HARD_MAX_FRAME


def main() -> None:
    settings = Settings.for_service("gateway")  # or one line saying what to set; exit 1
    logsetup.setup("gateway", settings.log_level, settings.log_format)
    app = create_app(settings)
    if settings.metrics_port:  # never on the public HTTP port
        metrics_http.serve(settings.metrics_port, settings.metrics_host)
    try:
        import uvloop  # noqa: F401
        loop = "uvloop"
    except ImportError:
        loop = "asyncio"
    config = uvicorn.Config(
        app, host=settings.http_host, port=settings.http_port, loop=loop,
        http=request_within(settings.ws_hello_ms / 1000), ws=settings.ws_impl,
        ws_per_message_deflate=False, ws_max_size=HARD_MAX_FRAME,
        ws_ping_interval=20.0, ws_ping_timeout=20.0, lifespan="on",
        proxy_headers=True, forwarded_allow_ips=settings.forwarded_allow_ips,
        log_level="warning", access_log=False, timeout_graceful_shutdown=3,
        log_config=None,
    )
    Server(config).run()


def request_within(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, and each request must have come whole —
    headers and body — within ``seconds`` of the connection's opening or of
    the answer before it (TTANJIT_WS_HELLO_MS: the same 10 s a socket has
    for its hello); else the connection is closed. Before, a connection
    that sent nothing, or half a request, stayed open for good, and 20,000
    of them from one client took the gateway's every file descriptor —
    /healthz unanswered, the Pod restarted with its players (security
    audit); uvicorn's own keep-alive timeout is undone by any byte that
    comes, so a second request begun and never finished, or a body never
    finished, held it as well (review finding)."""

    class RequestWithin(H11Protocol):
        _waiting: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._wait()

        def _wait(self) -> None:
            if self._waiting is None:
                self._waiting = self.loop.call_later(seconds, self._no_request)

        def _coming(self) -> bool:
            """A request is awaited or under way, not all of it here (and
            the connection is still HTTP's: an upgraded one is the
            WebSocket's, with its hello and idle timeouts)."""
            return self.transport.get_protocol() is self and \
                self.conn.their_state in (h11.IDLE, h11.SEND_BODY)

        def handle_events(self) -> None:
            super().handle_events()
            if self._waiting is not None and not self._coming():  # all of it came
                self._waiting.cancel()
                self._waiting = None

        def on_response_complete(self) -> None:
            super().on_response_complete()  # (may take a pipelined request)
            if not self.transport.is_closing() and self._coming():
                self._wait()  # the next request's time

        def connection_lost(self, exc: Exception | None) -> None:
            if self._waiting is not None:
                self._waiting.cancel()
                self._waiting = None
            super().connection_lost(exc)

        def _no_request(self) -> None:
            self._waiting = None
            if self._coming() and not self.transport.is_closing():
                m.NO_REQUEST.inc()
                self.transport.close()

    return RequestWithin


class Server(uvicorn.Server):
    _stop: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # NATS (and JetStream's streams, which the shards make) first,
        # minding SIGTERM: uvicorn takes signals from here on but looks at
        # them only once the app has started, and a gateway waiting for NATS
        # waited out its Pod's grace period to be killed
        gw = getattr(self.config.app, "gateway", None)
        if gw is not None:
            self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
            if self.should_exit:
                self._stop.set()
            try:
                await gw.connect(self._stop)
            except Stopped:
                logging.getLogger("ttanjit.gateway").info(
                    "stopped before NATS answered" if gw.nc is None
                    else "stopped before JetStream's streams were made")
                return  # (should_exit: no app started, nothing to shut down)
        await super().startup(sockets)
        if self.started:  # NATS connected, port listening
            logging.getLogger("ttanjit.gateway").info(
                "gateway ready", extra={"http_port": self.config.port})

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # Ours first: uvicorn would close every WebSocket with 1012 before
        # the lifespan shutdown runs; clients get 1001 and saved sessions.
        # New connections are refused from now on: a client told 1001
        # reconnects at once, and must reach another gateway (or wait for
        # this one's successor), not this one on its way out.
        for server in self.servers:
            server.close()
        gw = getattr(self.config.app, "gateway", None)
        if gw is not None:
            await gw.going_away()
        await super().shutdown(sockets)
        logging.getLogger("ttanjit.gateway").info("gateway stopped")

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)  # (a signal handler)

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        with super().capture_signals():
            yield
            # uvicorn re-raises the signal after a graceful shutdown (exit
            # 143 for SIGTERM); a clean shutdown exits 0.
            self._captured_signals.clear()


if __name__ == "__main__":
    main()
