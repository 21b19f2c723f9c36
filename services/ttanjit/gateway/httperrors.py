"""Every HTTP error of the gateway in the project's shape (docs/websocket.md
1.3): ``{"code", "message", "field"?}`` with a stable snake_case ``code``
and the Korean ``message`` of ``errors.MESSAGES`` — never FastAPI's or
Starlette's English ``{"detail": …}``.

- a body that is not a JSON object (not JSON, empty, an array, a form) →
  400 ``bad_json``;
- a field of the body, the query or the path that is absent (or ``null``)
  → 422 ``missing_field``; of the wrong type or out of range → 422
  ``bad_field``; ``field`` names it;
- no such address → 404 ``not_found``; an address of the API with another
  method → 405 ``method_not_allowed`` (with ``Allow``: the API route's own
  methods, also when the web client's catch-all mount answered first);
- a body over :data:`MAX_BODY` → 413 ``body_too_large``, before any route
  reads it (:func:`with_body_limit`);
- a bug → 500 ``internal_error`` (logged).

Sans-I/O apart from the handlers themselves: :func:`validation_refusal`
is a pure mapping, unit-testable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.routing import Match, Mount
from starlette.types import Scope

from ttanjit.gateway import metrics as m
from ttanjit.gateway.errors import FrameError

log = logging.getLogger("ttanjit.gateway")

# the largest request body any route takes (the API's bodies are a
# nickname, a credential or a code: well under 1 KiB), as a WebSocket frame
MAX_BODY = 16 * 1024
# how much of a refused body is still read (and dropped) before the 413, and
# for how long: a client still sending when the server closes gets a reset,
# and most clients (a browser's fetch, Python's http.client) then report a
# broken pipe rather than the answer (a 40 KB chunked body did, once, in CI)
DRAIN_BODY = 1024 * 1024
DRAIN_S = 2.0

# where a request field comes from, in FastAPI's error ``loc``
_PLACES = ("body", "query", "path", "header", "cookie")
_STATUS = {"bad_json": 400, "missing_field": 422, "bad_field": 422}


def refusal(code: str, status: int = 400, field: str | None = None,
            headers: dict[str, str] | None = None) -> JSONResponse:
    """An HTTP refusal in the project's shape, counted like a refused frame."""
    m.REJECTIONS.labels(code).inc()
    body: dict[str, Any] = {"code": code, "message": FrameError(code).message}
    if field:
        body["field"] = field
    return JSONResponse(body, status_code=status, headers=headers)


def validation_refusal(errors: Sequence[Any]) -> tuple[str, int, str | None]:
    """(code, HTTP status, field) for FastAPI's validation ``errors``: the
    body as a whole first (it hides the rest), else the first field."""
    field_error: tuple[str, int, str | None] | None = None
    for e in errors:
        loc = [str(x) for x in e.get("loc") or ()]
        if loc and loc[0] == "body" and (len(loc) == 1 or e.get("type") == "json_invalid"):
            return "bad_json", _STATUS["bad_json"], None
        if field_error is None:
            name = ".".join(loc[1:] if loc and loc[0] in _PLACES else loc) or None
            absent = e.get("type") == "missing" or e.get("input", "") is None
            code = "missing_field" if absent else "bad_field"
            field_error = code, _STATUS[code], name
    return field_error or ("bad_json", _STATUS["bad_json"], None)


def _api_methods(app: FastAPI, scope: Scope) -> set[str]:
    """The methods of the API routes at this address (not the web client's
    mount, which matches every address)."""
    allowed: set[str] = set()
    for route in app.router.routes:
        if isinstance(route, Mount):
            continue
        match, _ = route.matches(scope)
        if match in (Match.FULL, Match.PARTIAL):
            allowed |= set(getattr(route, "methods", None) or ())
    return allowed


ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error", "type": "object", "required": ["code", "message"],
    "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                   "field": {"type": "string"}}}


def _document(app: FastAPI) -> None:
    """``/openapi.json`` (and ``/docs``) describe these errors, not FastAPI's
    ``HTTPValidationError`` that is never sent."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        schema = generate()  # cached by FastAPI: changed in place, once
        schemas = schema.setdefault("components", {}).setdefault("schemas", {})
        if "Error" in schemas:
            return schema
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        schemas["Error"] = ERROR_SCHEMA
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        for item in schema.get("paths", {}).values():
            for op in item.values():
                responses = op.get("responses", {})
                if "422" in responses:
                    responses["422"] = {"description": "missing_field, bad_field",
                                        "content": error}
                if "requestBody" in op:
                    prior = responses.get("400", {}).get("description")
                    responses["400"] = {"description": f"{prior}, bad_json" if prior
                                        else "bad_json", "content": error}
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def install(app: FastAPI) -> None:
    """The handlers, on ``app`` (before any request), and their description
    in the OpenAPI document."""
    _document(app)

    async def on_validation(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        code, status, field = validation_refusal(exc.errors())
        return refusal(code, status, field)

    async def on_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        status, headers = exc.status_code, dict(exc.headers or {})
        if status in (404, 405):
            # the web client's mount answers every address the API routes
            # do not take in full: GET /api/guest reached it as "no file"
            api = _api_methods(app, request.scope)
            if api and request.method not in api:
                status = 405
                headers["Allow"] = ", ".join(sorted(api))
        if status == 404:
            code = "not_found"
        elif status == 405:
            code = "method_not_allowed"
        elif status >= 500:
            code = "internal_error"
        elif status == 400:  # FastAPI's own: a body its JSON reader gave up on (nested
            code = "bad_json"  # past its depth, not UTF-8)
        else:
            code = "bad_request"
        return refusal(code, status, headers=headers or None)

    async def on_bug(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
        return refusal("internal_error", 500)

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    app.add_exception_handler(Exception, on_bug)


def with_body_limit(app: Any, limit: int = MAX_BODY) -> Any:
    """``app`` (ASGI) with its HTTP request bodies held to ``limit`` bytes:
    a larger one (by ``Content-Length``, or counted as it comes when it
    has none) is answered 413 ``body_too_large`` without reaching a route
    (a 200 MB body to ``POST /api/guest`` was read whole before its 400,
    the gateway growing by 400 MB: fuzz finding). So that a client still
    sending reads the answer, not a reset, the rest of a refused body is
    read and dropped first while it is within ``DRAIN_BODY`` in all and
    comes within ``DRAIN_S``; one declared longer, or whose client waits
    for ``100 Continue``, is answered at once, unread. Every 413 closes
    its connection. The body, read here, goes to ``app`` as it came."""

    async def limited(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        length = next((v for k, v in scope.get("headers") or () if k == b"content-length"), None)
        if length is not None and (not length.isdigit() or int(length) > limit):
            if length.isdigit():
                # (a client waiting for "100 Continue" has sent nothing: not invited now)
                expects = any(k == b"expect" for k, _ in scope.get("headers") or ())
                if int(length) <= DRAIN_BODY and not expects:
                    await _drain(receive, 0)
                await _too_large(send)
                return
            await app(scope, receive, send)  # a malformed length: the server's own answer
            return
        chunks: list[bytes] = []
        size = 0
        first: dict[str, Any] = {}
        while True:
            msg = await receive()
            if msg["type"] != "http.request":  # gone before its body ended: nobody to answer
                return
            body = msg.get("body", b"")
            size += len(body)
            if size > limit:
                if msg.get("more_body", False):
                    await _drain(receive, size)
                await _too_large(send)
                return
            chunks.append(body)
            if not msg.get("more_body", False):
                first = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
                break
        handed = False

        async def replay() -> Any:
            nonlocal handed
            if not handed:
                handed = True
                return first
            return await receive()

        await app(scope, replay, send)

    return limited


async def _drain(receive: Any, size: int) -> None:
    """Read and drop the rest of a body (``size`` bytes of it read so far)
    while it stays within ``DRAIN_BODY`` and ``DRAIN_S``."""
    try:
        async with asyncio.timeout(DRAIN_S):
            while size <= DRAIN_BODY:
                msg = await receive()
                if msg["type"] != "http.request":
                    return
                size += len(msg.get("body", b""))
                if not msg.get("more_body", False):
                    return
    except TimeoutError:
        return


async def _too_large(send: Any) -> None:
    r = refusal("body_too_large", 413)
    await send({"type": "http.response.start", "status": 413, "headers": r.raw_headers
                + [(b"connection", b"close")]})
    await send({"type": "http.response.body", "body": r.body})
