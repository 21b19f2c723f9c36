"""``/metrics`` (Prometheus text) and ``/healthz`` on ``TTANJIT_METRICS_PORT``,
served from a daemon thread by the standard library (no event-loop cost)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    disable_created_metrics,
    generate_latest,
)


def serve(port: int, host: str = "0.0.0.0",
          healthy: Callable[[], bool] = lambda: True) -> ThreadingHTTPServer:
    """Start the server; ``healthy()`` decides ``/healthz`` (200 or 503).
    No ``*_created`` series: a timestamp beside every counter's and
    histogram's series, which no dashboard or alert reads, doubled what
    Prometheus stores of them (operator audit)."""
    disable_created_metrics()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            if self.path.startswith("/metrics"):
                body, ctype, code = generate_latest(REGISTRY), CONTENT_TYPE_LATEST, 200
            elif self.path.startswith("/healthz"):
                ok = healthy()
                body, ctype, code = (b"ok\n" if ok else b"unhealthy\n"), "text/plain", (
                    200 if ok else 503)
            else:
                body, ctype, code = b"not found\n", "text/plain", 404
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="metrics-http", daemon=True).start()
    return server
