"""Security headers on every HTTP response of the gateway (docs/websocket.md
1): ``X-Content-Type-Options: nosniff`` everywhere, and a
Content-Security-Policy strict enough to matter on everything but the
OpenAPI pages (``/docs``, ``/redoc``: FastAPI's Swagger UI loads its script
from a CDN and starts it inline; they are a local run's only, TTANJIT_DEV=1,
and framed by nobody); ``Cache-Control: no-store`` on the API's answers.

The web client (``static/``) needs nothing else: a classic script
(``js/boot.js``), one module script (``js/main.js``) and stylesheets from
this origin, no inline script or
style attribute (styles set through the CSSOM are not affected), fonts from
``fonts/``, ``fetch`` to ``api/guest`` and ``rules/``, and the WebSocket to
``/ws`` on the same host — which ``connect-src 'self'`` covers in CSP 3
browsers; ``ws://HOST`` and ``wss://HOST`` (this request's host) are named
as well for the older ones.

A plain ASGI wrapper: one header list per response, no middleware stack.
"""

from __future__ import annotations

import re
from typing import Any

NOSNIFF = (b"x-content-type-options", b"nosniff")
BASE_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
            "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
            "frame-ancestors 'none'; connect-src 'self'")
NO_CSP = ("/docs", "/redoc")  # FastAPI's API pages (CDN script, inline start-up)
_HOST = re.compile(rb"^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$")


def csp(host: bytes | None) -> bytes:
    """The policy for a response to a request with this ``Host`` header."""
    if host and _HOST.match(host):
        h = host.decode("ascii")
        return f"{BASE_CSP} ws://{h} wss://{h}".encode("ascii")
    return BASE_CSP.encode("ascii")


# the API pages (a local run's only, app.create_app) are framed by nobody
DOCS_CSP = (b"content-security-policy", b"frame-ancestors 'none'")
# an API answer is the asker's own (tokens, the lasting credential, a
# history): kept by no cache, shared or the browser's (security audit)
NO_STORE = (b"cache-control", b"no-store")


def headers_for(scope: dict[str, Any]) -> list[tuple[bytes, bytes]]:
    path: str = scope.get("path", "")
    if path.startswith(NO_CSP):
        return [NOSNIFF, DOCS_CSP]
    host = next((v for k, v in scope.get("headers", ()) if k == b"host"), None)
    out = [NOSNIFF, (b"content-security-policy", csp(host))]
    if path.startswith("/api/"):
        out.append(NO_STORE)
    return out


def with_security_headers(app: Any) -> Any:
    """``app`` with :func:`headers_for` added to every HTTP response."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        extra = headers_for(scope)

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", ()), *extra]
            await send(message)

        await app(scope, receive, send_with_headers)

    return wrapped
