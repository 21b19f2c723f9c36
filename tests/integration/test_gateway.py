"""The gateway's protocol against a real stack (docs/websocket.md): sign-in,
hello, ping/pong, limits, bad frames, the protobuf subprotocol, one
connection per player, and random frames (Hypothesis). Every refused frame
gets its error and the connection carries on."""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import signal
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import websockets
from conftest import Services
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shardkit import metric, metrics_text
from stack import Stack, stack
from websockets.sync.client import connect as sync_connect
from wsclient import WSClient, sign_in

from ttanjit.gateway import codec
from ttanjit.gateway.errors import MESSAGES

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def gw(nats_url: str) -> Iterator[Stack]:
    with stack(nats_url, shards=1, gateways=1, bot_wait_ms=200) as st:
        yield st


def _open(url: str) -> Any:
    """The response (errors too: their headers count as well)."""
    try:
        return urllib.request.urlopen(url, timeout=5)
    except urllib.error.HTTPError as e:
        return e


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def test_http_routes(gw: Stack) -> None:
    http = gw.http()
    assert _get(f"{http}/healthz")[0] == 200
    assert _get(f"{http}/readyz")[0] == 200
    code, ctype, body = _get(f"{http}/")
    assert code == 200 and "utf-8" in ctype.lower() and "딴짓" in body
    api = json.loads(_get(f"{http}/openapi.json")[2])
    assert "/api/guest" in api["paths"]
    req = urllib.request.Request(f"{http}/api/guest", data=b'{"nickname": "   "}',
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(req, timeout=5)
    assert exc.value.code == 400
    assert json.loads(exc.value.read())["code"] == "bad_nickname"
    ident = sign_in(http, "딴짓왕")
    assert ident["player"].startswith("p_") and ident["nickname"] == "딴짓왕"


def _request(url: str, method: str, body: bytes | None) -> tuple[int, Any, dict[str, Any]]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, e.headers, json.loads(e.read())


@pytest.mark.parametrize(("method", "path", "body", "status", "code", "field"), [
    ("POST", "/api/guest", b"not json", 400, "bad_json", None),
    ("POST", "/api/guest", b"", 400, "bad_json", None),
    ("POST", "/api/guest", b"[1,2]", 400, "bad_json", None),
    # a body the JSON reader gives up on (nested past its depth, not UTF-8):
    # FastAPI's own 400, which said bad_request (found by an audit helper)
    ("POST", "/api/guest", b"[" * 8_000 + b"]" * 8_000, 400, "bad_json", None),
    # a body over 16 KiB is refused before it is read (fuzz finding: 200 MB
    # were read whole, the gateway growing by 400 MB, before a 400)
    ("POST", "/api/guest", b'{"nickname": "' + b"a" * 20_000 + b'"}', 413, "body_too_large", None),
    ("POST", "/api/refresh", b" " * (16 * 1024 + 1), 413, "body_too_large", None),
    ("POST", "/api/guest", b'{"nickname": "\xff\xfe"}', 400, "bad_json", None),
    ("POST", "/api/guest", b'{"nickname":123}', 422, "bad_field", "nickname"),
    ("POST", "/api/guest", b"{}", 422, "missing_field", "nickname"),
    ("POST", "/api/refresh", b"{}", 422, "missing_field", "refresh"),
    ("POST", "/api/transfer/claim", b'{"code":null}', 422, "missing_field", "code"),
    ("GET", "/api/leaderboard/onecard?limit=-1", None, 422, "bad_field", "limit"),
    ("GET", "/api/leaderboard/onecard?limit=lots", None, 422, "bad_field", "limit"),
    ("GET", "/api/no-such-route", None, 404, "not_found", None),
    ("GET", "/no-such-file", None, 404, "not_found", None),
    ("GET", "/api/replay/..%2F..", None, 404, "not_found", None),  # a bodyless 307 before
    ("GET", "/api/leaderboard/onecard/", None, 404, "not_found", None),  # a bodyless 307 too
])
def test_http_junk_gets_the_projects_error_shape(gw: Stack, method: str, path: str,
                                                 body: bytes | None, status: int, code: str,
                                                 field: str | None) -> None:
    """docs/websocket.md 1.3: every HTTP error of the gateway is
    ``{code, message, field?}`` with a Korean message (FastAPI's English
    ``{"detail": …}`` before)."""
    got, _, doc = _request(f"{gw.http()}{path}", method, body)
    assert (got, doc) == (status, {"code": code, "message": MESSAGES[code],
                                   **({"field": field} if field else {})})


def test_a_body_without_a_length_is_cut_off_at_16_kib(gw: Stack) -> None:
    """A chunked body (no Content-Length) is counted as it comes: over
    16 KiB it is answered 413 without reaching the route, and the client
    still sending it reads that answer (CI, once: a broken pipe for a 40 KB
    body, the server having closed on its unread rest); under it, the route
    gets it whole (a guest signs in through it)."""
    host, port = gw.http().removeprefix("http://").split(":")

    def chunked(body: bytes) -> tuple[int, dict[str, Any]]:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        try:
            step = 1000
            conn.request("POST", "/api/guest", body=(body[i:i + step] for i in range(0, len(body), step)),
                         headers={"Content-Type": "application/json"}, encode_chunked=True)
            r = conn.getresponse()
            return r.status, json.loads(r.read())
        finally:
            conn.close()

    too_large = (413, {"code": "body_too_large", "message": MESSAGES["body_too_large"]})
    for size in (40_000, 600_000):
        assert chunked(b'{"nickname": "' + b"a" * size + b'"}') == too_large, size
    status, doc = chunked(json.dumps({"nickname": "길게보낸이", "pad": "x" * 9_000}).encode())
    assert status == 200 and doc["nickname"] == "길게보낸이", doc


def test_a_body_declared_too_large_is_refused_before_it_comes(gw: Stack) -> None:
    """A ``Content-Length`` over 16 KiB is answered 413 at once: a body
    declared 200 MB is not waited for (nor read), one of 600 KB sent whole
    is read and dropped so that its sender gets the answer, not a reset."""
    host, port = gw.http().removeprefix("http://").split(":")

    def post(declared: int, body: bytes, more: bytes = b"") -> bytes:
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(b"POST /api/guest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      + more + f"Content-Length: {declared}\r\n\r\n".encode() + body)
            got = b""
            while chunk := s.recv(65536):
                got += chunk
            return got

    head = post(200_000_000, b"")  # waited for, it would be a timeout: nothing more comes
    assert head.startswith(b"HTTP/1.1 413 ") and b'"body_too_large"' in head, head[:300]
    body = b'{"nickname": "' + b"a" * 600_000 + b'"}'
    head = post(len(body), body)
    assert head.startswith(b"HTTP/1.1 413 ") and b'"body_too_large"' in head, head[:300]
    # a client that waits to be asked for its body is refused, not asked
    head = post(20_000, b"", b"Expect: 100-continue\r\n")
    assert head.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in head, head[:300]


def test_a_proxy_nobody_named_is_said_once_in_the_log(gw: Stack) -> None:
    """X-Forwarded-For from a peer TTANJIT_FORWARDED_ALLOW_IPS does not name
    (a cloud load balancer reaching the Pods from public addresses, beyond
    the chart's private ranges): all its clients share its address for the
    per-address limits. The gateway says so once, naming the peer; a named
    proxy's requests say nothing."""
    strict = gw.add_gateway(TTANJIT_FORWARDED_ALLOW_IPS="10.9.9.9")
    try:
        for base in (f"http://127.0.0.1:{strict.ports['http']}", gw.http()):
            for _ in range(2):
                req = urllib.request.Request(
                    f"{base}/api/guest", method="POST", data='{"nickname": "프록시"}'.encode(),
                    headers={"Content-Type": "application/json", "X-Forwarded-For": "203.0.113.7"})
                with urllib.request.urlopen(req, timeout=10) as r:
                    assert r.status == 200
        said = [ln for ln in strict.log().splitlines() if "a proxy TTANJIT_FORWARDED_ALLOW_IPS" in ln]
        assert len(said) == 1 and "127.0.0.1" in said[0], said
        assert "a proxy TTANJIT_FORWARDED_ALLOW_IPS" not in gw.gateways[0].log()

        def counted(metrics: str) -> float:  # alert TtanjitProxyNotNamed
            with urllib.request.urlopen(f"{metrics}/metrics", timeout=5) as r:
                text = r.read().decode()
            m = re.search(r"^ttanjit_gateway_unnamed_proxy_requests_total (\S+)$", text, re.M)
            return float(m.group(1)) if m else -1.0

        assert counted(f"http://127.0.0.1:{strict.ports['metrics']}") == 2
        assert counted(gw.metrics()) == 0
    finally:
        gw.gateways.remove(strict)
        strict.stop()


def test_new_guests_are_limited_per_address(gw: Stack) -> None:
    """30 new guests at once per client address, then one every 2 s (429
    too_many_signups, Retry-After): one address made 1,671 in 5 s, each an
    identity kept 180 days (fuzz finding). Other addresses, and clients
    connected from the gateway's own machine (the load tester), are not held
    up."""
    def guest(address: str | None) -> tuple[int, dict[str, Any], str | None]:
        headers = {"Content-Type": "application/json"}
        if address:
            headers["X-Forwarded-For"] = address  # the test gateway trusts it from loopback
        req = urllib.request.Request(f"{gw.http()}/api/guest", method="POST", headers=headers,
                                     data=json.dumps({"nickname": "많이만듦"}).encode())
        try:
            with urllib.request.urlopen(req, timeout=15) as r:
                return r.status, json.loads(r.read()), r.headers.get("Retry-After")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read()), e.headers.get("Retry-After")

    assert [guest("203.0.113.50")[0] for _ in range(30)] == [200] * 30
    status, doc, retry = guest("203.0.113.50")
    assert (status, doc) == (429, {"code": "too_many_signups", "message": MESSAGES["too_many_signups"]})
    assert retry is not None and 1 <= int(retry) <= 2, retry
    assert guest("198.51.100.50")[0] == 200
    assert all(guest(None)[0] == 200 for _ in range(3))  # loopback itself: not counted
    # but an X-Forwarded-For that says loopback is counted (behind a proxy
    # that passes the header on, a client could name itself so: review)
    assert [guest("127.0.0.1")[0] for _ in range(31)] == [200] * 30 + [429]


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("GET", "/api/guest", "POST"),  # was 404: the web client's mount answered it
    ("DELETE", "/api/guest", "POST"),  # was 405 with the mount's "GET, HEAD"
    ("POST", "/healthz", "GET"),
    ("PUT", "/api/leaderboard/onecard", "GET"),
])
def test_a_wrong_method_is_405_with_the_routes_own_methods(gw: Stack, method: str, path: str,
                                                           allow: str) -> None:
    got, headers, doc = _request(f"{gw.http()}{path}", method, b"{}" if method != "GET" else None)
    assert (got, headers["Allow"], doc) == (405, allow, {
        "code": "method_not_allowed", "message": MESSAGES["method_not_allowed"]})


def _hellos(gw: Stack) -> float:
    text = _get(f"{gw.metrics()}/metrics")[2]
    return float(re.search(r"^ttanjit_gateway_hello_seconds_count (\S+)$", text, re.M).group(1))


async def test_hello_ping_and_metrics(gw: Stack) -> None:
    before = _hellos(gw)
    c = await WSClient.signed_in(gw.http(), "핑퐁")
    welcome = c.frames[0]
    assert welcome["seq"] == 1 and welcome["resumed"] is False
    assert welcome["player"] == c.ident["player"]
    assert {r["game"] for r in welcome["ratings"]} == {"onecard", "penalty_rows", "hakka"}
    await c.send({"type": "ping", "client_ms": 1234.5})
    pong = await c.wait_type("pong")
    assert pong["client_ms"] == 1234.5 and pong["server_ms"] > 1.7e12
    await c.close()
    assert _get(f"{gw.http()}/metrics")[0] == 404  # not on the public port
    text = _get(f"{gw.metrics()}/metrics")[2]
    for name in ("ttanjit_gateway_connections", "ttanjit_gateway_frames_in_total",
                 "ttanjit_gateway_frames_out_total", "ttanjit_gateway_command_rtt_seconds",
                 "ttanjit_gateway_resumes_total", "ttanjit_gateway_rejections_total"):
        assert name in text
    assert 'ttanjit_gateway_frames_in_total{type="ping"}' in text
    # the wait to connect is measured (overload audit: a reconnect herd's
    # 13 s median showed nowhere)
    assert _hellos(gw) >= before + 1
    # and the event loop's lag, once a second
    deadline = time.monotonic() + 10
    while True:
        text = _get(f"{gw.metrics()}/metrics")[2]
        lags = re.search(r"^ttanjit_gateway_event_loop_lag_seconds_count (\S+)$", text, re.M)
        assert lags is not None
        if float(lags.group(1)) >= 1:
            break
        assert time.monotonic() < deadline, "no lag measured in 10 s"
        await asyncio.sleep(0.2)


def test_a_token_in_the_address_is_not_taken(gw: Stack) -> None:
    """docs/websocket.md 1.1: no route takes a secret in its address (one
    there is logged by proxies): ``/ws?token=…`` was taken for a hello
    without a token, unused by any client of ours (identity audit)."""
    ident = sign_in(gw.http(), "주소토큰")
    url = gw.http().replace("http", "ws") + "/ws?token=" + ident["token"]
    with sync_connect(url, compression=None) as ws:
        ws.send(orjson.dumps({"type": "hello"}).decode())
        got = orjson.loads(ws.recv(timeout=10))
    assert (got["type"], got["code"]) == ("error", "bad_token"), got


def test_no_token_secret_no_gateway(services: Services) -> None:
    """Without TTANJIT_TOKEN_SECRET (and without TTANJIT_DEV=1) a gateway
    refuses to start: exit 1 and one line saying what to set."""
    p = services.start("gateway", name="gateway-no-secret", wait=False,
                       env={"TTANJIT_DEV": "", "TTANJIT_TOKEN_SECRET": ""})
    assert p.proc.wait(30) == 1
    lines = p.log().strip().splitlines()
    assert len(lines) == 1 and "TTANJIT_TOKEN_SECRET" in lines[0], lines


def test_security_headers_on_every_response(gw: Stack) -> None:
    """The web client's responses carry a Content-Security-Policy (scripts
    and styles from this origin only, the WebSocket to this host) and
    nosniff; so do the API's."""
    host = gw.http().removeprefix("http://")
    for path in ("/", "/index.html", "/js/main.js", "/app.css", "/healthz", "/openapi.json",
                 "/no-such-file"):
        with _open(f"{gw.http()}{path}") as r:
            assert r.headers["X-Content-Type-Options"] == "nosniff", path
            policy = r.headers["Content-Security-Policy"] or ""
            directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
            assert directives["default-src"] == "'self'", path
            assert directives["script-src"] == "'self'", path  # no inline script
            assert directives["style-src"] == "'self'", path
            assert directives["frame-ancestors"] == "'none'", path
            assert directives["connect-src"].split() == ["'self'", f"ws://{host}",
                                                         f"wss://{host}"], path


def test_api_answers_are_kept_by_no_cache_and_its_pages_are_a_local_runs(gw: Stack) -> None:
    """Security audit: the API's answers (tokens, the lasting credential, a
    history) came without Cache-Control; its pages (/docs, /redoc) run a
    CDN's unpinned script on the origin that keeps the players' lasting
    credentials, without a CSP (framed by anyone). A gateway of a real
    deployment (no TTANJIT_DEV) serves no such page; a local run's are
    framed by nobody."""
    ident = sign_in(gw.http(), "캐시")
    for path, body, token in (("/api/guest", {"nickname": "캐시둘"}, None),
                              ("/api/history/onecard", None, ident["token"]),
                              ("/api/live", None, None)):  # (refused: 401 kept by none either)
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body).encode()
        with _open(urllib.request.Request(gw.http() + path, data=data, headers=headers)) as r:
            assert r.headers["Cache-Control"] == "no-store", path
    with _open(gw.http() + "/") as r:
        assert r.headers["Cache-Control"] == "no-cache"  # (the client's files: asked again)
    with _open(gw.http() + "/docs") as r:  # the test stack runs as a local run does
        assert r.status == 200 and "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
    real = gw.add_gateway(TTANJIT_DEV="")
    http = f"http://127.0.0.1:{real.ports['http']}"
    for path in ("/docs", "/redoc"):
        assert _get(http + path)[0] == 404, path
    assert _get(http + "/openapi.json")[0] == 200
    gw.gateways.remove(real)
    real.stop()


def test_the_client_files_are_asked_for_again_but_the_fonts(gw: Stack) -> None:
    """Version-skew audit: without Cache-Control a browser kept the web
    client's modules by its own guess (a fraction of the time since their
    Last-Modified) and, after an upgrade, ran some of the release before
    with the new ones': a page that did not start. Each is asked again
    (``no-cache``: 304 while unchanged); the fonts are kept a week."""
    for path in ("/", "/index.html", "/js/main.js", "/js/state.js", "/app.css", "/rules/onecard.txt"):
        with _open(f"{gw.http()}{path}") as r:
            assert r.headers["Cache-Control"] == "no-cache", path
            etag = r.headers["ETag"]
        req = urllib.request.Request(f"{gw.http()}{path}", headers={"If-None-Match": etag})
        with pytest.raises(urllib.error.HTTPError) as unchanged:
            urllib.request.urlopen(req, timeout=5)
        assert unchanged.value.code == 304, path
        assert unchanged.value.headers["Cache-Control"] == "no-cache", path
    with _open(f"{gw.http()}/fonts/fonts.css") as r:
        assert r.headers["Cache-Control"] == "public, max-age=604800"


async def test_permessage_deflate_is_never_negotiated(gw: Stack) -> None:
    """PERFORMANCE.md: compression off even when the client offers it (browsers do)."""
    url = gw.http().replace("http://", "ws://") + "/ws"
    async with websockets.connect(url, compression="deflate") as ws:
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None


async def test_unauthenticated_frames_are_refused(gw: Stack) -> None:
    c = WSClient(gw.http(), sign_in(gw.http(), "손님"))
    await c.connect()
    await c.send({"type": "queue", "game": "onecard", "seats": 2})
    err = await c.wait_type("error")
    assert err["code"] == "unauthenticated" and err["message"] and err["seq"] == 0
    await c.send({"type": "hello", "token": c.ident["token"] + "x"})
    assert (await c.wait_type("error"))["code"] == "bad_token"
    forged = dict(c.ident, token="e30." + c.ident["token"].split(".")[1])
    await c.send({"type": "hello", "token": forged["token"]})
    assert (await c.wait_type("error"))["code"] == "bad_token"
    await c.send({"type": "hello", "token": c.ident["token"] + "x" * 600})  # over 512
    assert (await c.wait_type("error"))["code"] == "bad_token"
    welcome = await c.hello()  # the same connection carries on
    assert welcome["seq"] == 1
    await c.send({"type": "hello", "token": c.ident["token"]})
    assert (await c.wait_type("error"))["code"] == "already_hello"
    await c.close()


async def test_the_clients_first_subprotocol_is_taken(gw: Stack) -> None:
    """docs/websocket.md 2: of the two subprotocols, the one the client
    names first (the protobuf one was taken whenever offered: fuzz)."""
    url = gw.http().replace("http://", "ws://") + "/ws"
    for offered, chosen in (([codec.JSON_SUBPROTOCOL, codec.PROTO_SUBPROTOCOL], codec.JSON_SUBPROTOCOL),
                            ([codec.PROTO_SUBPROTOCOL, codec.JSON_SUBPROTOCOL], codec.PROTO_SUBPROTOCOL),
                            (["chat", codec.PROTO_SUBPROTOCOL], codec.PROTO_SUBPROTOCOL)):
        async with websockets.connect(url, subprotocols=offered, compression=None) as ws:  # type: ignore[arg-type]
            assert ws.subprotocol == chosen, offered
            await ws.send(orjson.dumps({"type": "ping"}).decode())  # JSON: refused as the wrong kind if proto
            got = await asyncio.wait_for(ws.recv(), 10)
            assert isinstance(got, str) is (chosen == codec.JSON_SUBPROTOCOL), (offered, got)


async def test_an_unknown_type_is_named_back_only_if_it_is_a_name(gw: Stack) -> None:
    """docs/websocket.md 1: ``ref`` names the frame's type; an unknown type
    that is no name (control characters, 200 bytes) is not echoed back
    (fuzz finding)."""
    c = await WSClient.signed_in(gw.http(), "이상한")
    for kind, ref in (("dance", "dance"), ("da\u0007nce\n", None), ("x" * 200, None),
                      ("Dance", None)):
        await c.send({"type": kind})
        err = await c.wait_type("error")
        assert (err["code"], err.get("ref")) == ("unknown_type", ref), (kind, err)
    await c.close()


@pytest.mark.parametrize("raw,code", [
    ("not json", "bad_frame"),
    ("[1, 2]", "bad_frame"),
    ('{"no_type": 1}', "bad_frame"),
    ('{"type": "dance"}', "unknown_type"),
    ('{"type": "queue", "game": 7}', "bad_frame"),
    ('{"type": "queue", "game": "onecard", "seats": -1}', "bad_frame"),
    ('{"type": "queue", "game": "onecard", "colour": "red"}', "bad_frame"),
    # another frame's field (one list of all frames' fields took them: a
    # misspelt seats queued the player for the default size, bad input audit)
    ('{"type": "queue", "game": "penalty_rows", "seat": 2}', "bad_frame"),
    ('{"type": "ping", "game": "onecard"}', "bad_frame"),
    ('{"type": "room_create", "game": "onecard", "code": "MYROOM"}', "bad_frame"),
    ('{"type": "ratings", "token": "zzz"}', "bad_frame"),
    ('{"type": "queue", "game": "chess"}', "unknown_game"),
    ('{"type": "queue", "game": "hakka", "seats": 3}', "bad_seats"),
    ('{"type": "room_join", "code": "ZZZZZZ"}', "room_not_found"),
    ('{"type": "room_start"}', "not_in_room"),
    ('{"type": "cancel_queue"}', "not_queued"),
    ('{"type": "action", "game_id": "aaaaaaaaaaaa", "cmd_id": "c1", "action": {"type": "draw"}}',
     "not_in_game"),
    # the frame's own shape before the player's state (docs/websocket.md 6)
    ('{"type": "action"}', "missing_field"),
    ('{"type": "action", "cmd_id": "' + "c" * 65 + '", "action": {"type": "draw"}}', "bad_cmd_id"),
    ('{"type": "emote", "emote": "bomb"}', "bad_emote"),
    ("x" * 20_000, "frame_too_large"),
])
async def test_bad_frames_get_errors_and_change_nothing(gw: Stack, raw: str, code: str) -> None:
    c = await WSClient.signed_in(gw.http(), "실수")
    await c.send_raw(raw)
    err = await c.wait_type("error")
    assert err["code"] == code, err
    assert err["message"] and not err["message"].isascii()  # Korean for players
    await c.send({"type": "ping"})
    await c.wait_type("pong")  # the connection carries on
    await c.send({"type": "cancel_queue"})  # nothing was queued by the bad frame
    assert (await c.wait_type("error"))["code"] == "not_queued"
    await c.close()


async def test_wrong_room_codes_are_limited_per_player(gw: Stack) -> None:
    """docs/websocket.md 6 ``too_many_attempts`` (security audit: one socket
    tried 19 room codes a second without end, ~1e9 codes and rooms that
    wait minutes): 10 wrong codes, then the next — even a right one — is
    refused without asking the lobby; a code that found its room gives its
    try back (a friend's code typed right costs nothing), and another
    player is not held by it."""
    host = await WSClient.signed_in(gw.http(), "방장님")
    guesser = await WSClient.signed_in(gw.http(), "찍는이")
    await host.send({"type": "room_create", "game": "onecard", "seats": 3})
    code = str((await host.wait_type("room"))["room"]["code"])
    for _ in range(3):  # right codes cost nothing: in and out again
        await guesser.send({"type": "room_join", "code": code})
        await guesser.wait_type("room")
        await guesser.send({"type": "room_leave"})
        await guesser.wait_type("room_left")
    wrong = [g for g in (f"ZZZZ{a}{b}" for a in "YZ" for b in "23456789") if g != code]
    for guess in wrong[:10]:
        await guesser.send({"type": "room_join", "code": guess})
        assert (await guesser.wait_type("error"))["code"] == "room_not_found"
    await guesser.send({"type": "room_join", "code": code})
    err = await guesser.wait_type("error")
    assert err["code"] == "too_many_attempts" and err["message"] == MESSAGES["too_many_attempts"]
    await guesser.send({"type": "room_join", "code": wrong[10]})
    assert (await guesser.wait_type("error"))["code"] == "too_many_attempts"
    # nobody else is held by it: the host's friend joins by the code
    friend = await WSClient.signed_in(gw.http(), "친구")
    await friend.send({"type": "room_join", "code": code})
    assert (await friend.wait_type("room"))["room"]["code"] == code
    for c in (host, guesser, friend):
        await c.close()


async def test_a_bad_frame_names_the_frame_it_refuses(gw: Stack) -> None:
    """docs/websocket.md 3: ``bad_frame`` carries ``ref`` (and an action's
    ``cmd_id``) like every other refusal."""
    c = await WSClient.signed_in(gw.http(), "이름표")
    await c.send_raw('{"type": "queue", "game": 7}')
    err = await c.wait_type("error")
    assert (err["code"], err.get("ref")) == ("bad_frame", "queue")
    await c.send_raw('{"type": "action", "cmd_id": "c9", "action": "draw"}')
    err = await c.wait_type("error")
    assert (err["code"], err.get("ref"), err.get("cmd_id")) == ("bad_frame", "action", "c9")
    await c.close()


async def test_flooding_is_rate_limited(gw: Stack) -> None:
    c = await WSClient.signed_in(gw.http(), "도배")
    t0 = time.monotonic()
    for i in range(120):
        await c.send({"type": "ping", "client_ms": i})
    pongs, errors, last = 0, 0, t0
    while True:
        try:
            f = await c.recv(1.0)
        except TimeoutError:
            break
        last = time.monotonic()
        pongs += f["type"] == "pong"
        errors += f["type"] == "error" and f["code"] == "rate_limited"
    # a burst of 40, then 20 a second for as long as the gateway took over
    # the 120 (well under a second when quiet; more on a loaded machine)
    assert 30 <= pongs <= 41 + 20 * (last - t0) and errors >= 1, (pongs, last - t0)
    await asyncio.sleep(1.0)
    c._i = len(c.frames)
    await c.send({"type": "ping", "client_ms": 999})
    assert (await c.wait_type("pong"))["client_ms"] == 999
    await c.close()


@pytest.mark.parametrize("proto", [False, True], ids=["json", "proto"])
async def test_every_action_the_rate_limit_drops_is_answered(gw: Stack, proto: bool) -> None:
    """docs/websocket.md 5: an ``action`` the rate limit drops is answered,
    each one, with ``rate_limited`` and its ``cmd_id`` (its sender waited
    for an answer that never came, and sent it again, same ``cmd_id``, on
    a later reconnect, where a stale move could land on a later turn);
    other frames get at most one ``rate_limited`` a second. Nothing is done."""
    c = await WSClient.signed_in(gw.http(), "연타", proto=proto)
    t0 = time.monotonic()
    for i in range(60):  # the burst (40) and then some
        await c.send({"type": "ping", "client_ms": i})
    for i in range(10):
        await c.send({"type": "action", "game_id": "g-nope", "cmd_id": f"flood{i}",
                      "action": {"type": "draw"}})
    got = [await c.wait_for(lambda f, i=i: f.get("cmd_id") == f"flood{i}") for i in range(10)]
    took = time.monotonic() - t0
    # every one answered; dropped ones as rate_limited (a loaded machine's
    # gateway, paused 50 ms among them, may let one through to the game's
    # own refusal: a token refilled)
    dropped = [f for f in got if f["code"] == "rate_limited"]
    assert all(f["type"] == "error" and f.get("ref") == "action" for f in got), got
    assert len(dropped) >= 10 - 20 * took and len(dropped) >= 5, (got, took)
    assert dropped[0]["message"] == "너무 빨리 보내고 있어요. 잠시 후 다시 해 주세요."
    assert {f["code"] for f in got} <= {"rate_limited", "not_in_game"}, got
    await asyncio.sleep(0.5)
    while True:
        try:
            await c.recv(0.3)
        except TimeoutError:
            break
    warned = [f for f in c.frames if f["type"] == "error" and "cmd_id" not in f]
    # the pings: one warning (at most one a second)
    assert [f["code"] for f in warned][:1] == ["rate_limited"]
    assert len(warned) <= 1 + took, (warned, took)
    await c.close()


async def test_idle_and_silent_connections_are_closed(gw: Stack) -> None:
    """docs/websocket.md 5, with the limits shortened on a second gateway."""
    short = gw.add_gateway(TTANJIT_WS_IDLE_MS="1500", TTANJIT_WS_HELLO_MS="1500")
    http = f"http://127.0.0.1:{short.ports['http']}"
    silent = WSClient(http, sign_in(http, "조용"))
    await silent.connect()
    idle = await WSClient.signed_in(http, "잠수")
    # below the WebSocket (security audit): a connection that sends nothing,
    # and one that sends half a request, stayed open for good — 20,000 took
    # every file descriptor; now they have the hello's time
    nothing = socket.create_connection(("127.0.0.1", short.ports["http"]))
    half = socket.create_connection(("127.0.0.1", short.ports["http"]))
    half.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    # and on a kept-alive connection, the next request begun and never
    # finished, or a body never finished (review finding: any byte undid
    # uvicorn's keep-alive timeout)
    again = socket.create_connection(("127.0.0.1", short.ports["http"]))
    again.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHo")
    body = socket.create_connection(("127.0.0.1", short.ports["http"]))
    body.sendall(b"POST /api/guest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n{\"nick")
    t0 = time.monotonic()
    for c, code in ((silent, 4003), (idle, 4002)):
        with pytest.raises(websockets.ConnectionClosed) as exc:
            await c.recv(6)
        assert exc.value.rcvd is not None and exc.value.rcvd.code == code
    for sock, answers in ((nothing, 0), (half, 0), (again, 1), (body, 0)):
        sock.settimeout(8)
        got = b""
        while True:
            try:
                more = sock.recv(4096)
            except TimeoutError:
                raise AssertionError("a connection without a whole request was kept") from None
            except ConnectionResetError:
                more = b""
            if not more:
                break
            got += more
        assert got.count(b"HTTP/1.1 200") == answers, got
        sock.close()
    assert time.monotonic() - t0 < 8
    assert metric(metrics_text(short.ports["metrics"]),
                  "ttanjit_gateway_connections_without_request_total") == 4
    short.stop()


async def test_a_full_gateway_refuses_players_until_one_goes(gw: Stack) -> None:
    """docs/websocket.md 5: a gateway holding TTANJIT_MAX_CONNECTIONS
    players answers the next player's hello ``server_full`` (in its
    subprotocol) and closes with 1013 before the hello's work; a player
    already there takes their own socket over; sockets that never said
    hello count for nothing (silent ones kept every player out: review
    finding); /readyz stays ready, saying it is full (a gateway out of its
    Service served no sign-in either); a player who goes makes room
    (overload audit's left-alone item: a reconnect herd took a gateway past
    the memory it is sized for)."""
    small = gw.add_gateway(TTANJIT_MAX_CONNECTIONS="2")
    http = f"http://127.0.0.1:{small.ports['http']}"
    one = await WSClient.signed_in(http, "첫째")
    silent = [WSClient(http, {}) for _ in range(3)]
    for c in silent:
        await c.connect()
    two = await WSClient.signed_in(http, "둘째")  # (the silent three hold no place)
    assert _ready(small) == (200, "ready", True)
    for proto in (False, True):
        third = WSClient(http, sign_in(http, "셋째"), proto=proto)
        await third.connect()
        await third.send({"type": "hello", "token": third.ident["token"]})
        refused = await third.recv()
        assert (refused["type"], refused["code"], refused["ref"]) == ("error", "server_full", "hello")
        assert refused["message"] == MESSAGES["server_full"]
        with pytest.raises(websockets.ConnectionClosed) as exc:
            await third.recv(5)
        assert exc.value.rcvd is not None and exc.value.rcvd.code == 1013
    assert metric(metrics_text(small.ports["metrics"]),
                  "ttanjit_gateway_connections_refused_total") == 2
    again = WSClient(http, one.ident)  # the first player's reload: their own place
    await again.connect()
    assert (await again.hello())["type"] == "welcome"
    with pytest.raises(websockets.ConnectionClosed) as exc:
        await one.recv(5)
    assert exc.value.rcvd is not None and exc.value.rcvd.code == 4001
    await again.close()
    deadline = time.monotonic() + 10
    while _ready(small)[2]:
        assert time.monotonic() < deadline, "the gone player's place never came back"
        await asyncio.sleep(0.1)
    third = await WSClient.signed_in(http, "셋째")
    assert third.frames[0]["type"] == "welcome"
    for c in (third, two, *silent):
        await c.close()
    small.stop()


def _ready(p: Any) -> tuple[int, str, bool]:
    status, _, body = _get(f"http://127.0.0.1:{p.ports['http']}/readyz")
    ready = json.loads(body)
    return status, ready["status"], ready["full"]


async def test_a_room_that_started_says_so(gw: Stack) -> None:
    """The code of a room that started, typed by a friend a moment late:
    "이미 시작한 방이에요." (``room_started``), not "방을 찾을 수 없어요.
    코드를 확인해 주세요."; the host's second 시작 the same (it was
    ``not_in_room``)."""
    from wsclient import two_in_a_room

    host = await WSClient.signed_in(gw.http(), "먼저시작")
    guest = await WSClient.signed_in(gw.http(), "같이온")
    late = await WSClient.signed_in(gw.http(), "늦은친구")
    code = await two_in_a_room(host, guest)
    await host.send({"type": "room_start"})
    gid = (await host.wait_type("matched", 20))["game_id"]
    await late.send({"type": "room_join", "code": code})
    err = await late.wait_type("error")
    assert (err["code"], err["message"]) == ("room_started", "이미 시작한 방이에요.")
    # the room's game, for the friend to watch (docs/websocket.md 3)
    assert (err["ref"], err["game_id"]) == ("room_join", gid)
    await host.send({"type": "room_start"})
    err = await host.wait_type("error")
    assert err["code"] == "room_started" and "game_id" not in err
    for c in (host, guest):
        await c.action(gid, {"type": "leave"})
    for c in (host, guest, late):
        await c.close()


async def test_second_connection_replaces_the_first(gw: Stack) -> None:
    first = await WSClient.signed_in(gw.http(), "둘째")
    second = WSClient(gw.http(), first.ident)
    await second.connect()
    welcome = await second.hello({"session": first.session, "last_seq": first.last_seq})
    assert welcome["session"] == first.session and welcome["resumed"]
    assert welcome["seq"] == first.last_seq + 1  # the session continues
    with pytest.raises(websockets.ConnectionClosed) as exc:
        await first.recv(5)
    assert exc.value.rcvd is not None and exc.value.rcvd.code == 4001
    await second.send({"type": "ping"})
    await second.wait_type("pong")
    await second.close()


async def test_a_slow_matchmaker_holds_neither_pongs_nor_moves(gw: Stack) -> None:
    """The matchmaker stopped (a leader change: its calls wait up to 10 s,
    a room's start 20 s): the connection's lobby requests wait their turn,
    answered in the order sent, while its pings and game moves are answered
    at once. They waited behind the call, and the web client takes 5 s
    without a word for a lost connection: a re-queue during a leader change
    dropped the tab's connection every few seconds (last session's note)."""
    from wsclient import start_with_bot

    c = await WSClient.signed_in(gw.http(), "기다림")
    gid = await start_with_bot(c, "onecard")
    assert gw.matchmaker is not None
    gw.matchmaker.proc.send_signal(signal.SIGSTOP)
    try:
        await c.send({"type": "ratings"})
        await c.send({"type": "cancel_queue"})
        await c.send({"type": "ping", "client_ms": 77})
        pong = await c.wait_type("pong", 3)
        assert pong["client_ms"] == 77
        moved = await c.action(gid, {"type": "draw"})  # its answer, legal or not
        assert moved["cmd_id"] == "c1"
        waiting = [f["type"] for f in c.frames if f["type"] in ("ratings", "queue_cancelled")
                   or f.get("ref") in ("ratings", "cancel_queue")]
        assert waiting == []  # both still with the stopped matchmaker
    finally:
        gw.matchmaker.proc.send_signal(signal.SIGCONT)
    first = await c.wait_for(lambda f: f["type"] in ("ratings", "queue_cancelled")
                             or f.get("ref") in ("ratings", "cancel_queue"))
    second = await c.wait_for(lambda f: f["type"] in ("ratings", "queue_cancelled")
                              or f.get("ref") in ("ratings", "cancel_queue"))
    # (a ratings call that outwaited its 3 s on a loaded machine is answered
    # matchmaker_unavailable: in its turn all the same)
    assert (first.get("ref", first["type"]), second.get("ref")) == ("ratings", "cancel_queue")
    assert second["code"] == "not_queued"
    await c.action(gid, {"type": "leave"})
    await c.close()


async def test_matchmaker_calls_waiting_their_turn_are_bounded(gw: Stack) -> None:
    """A flood of lobby requests while the matchmaker does not answer: at
    most LANE_MAX wait their turn (held in the gateway's memory), the rest
    refused at once (``rate_limited``, naming the request); each one kept
    is answered when the matchmaker is back."""
    from ttanjit.gateway.conn import LANE_MAX

    c = await WSClient.signed_in(gw.http(), "한꺼번에")
    assert gw.matchmaker is not None
    gw.matchmaker.proc.send_signal(signal.SIGSTOP)
    try:
        for _ in range(LANE_MAX + 4):
            await c.send({"type": "ratings"})
        await c.send({"type": "ping"})
        await c.wait_type("pong", 3)
    finally:
        gw.matchmaker.proc.send_signal(signal.SIGCONT)
    refused = [f for f in c.frames if f["type"] == "error" and f["code"] == "rate_limited"]
    assert {f["ref"] for f in refused} == {"ratings"}
    assert len(refused) in (3, 4)  # the first is with the matchmaker, or waits too
    for _ in range(LANE_MAX + 4 - len(refused)):  # answered: the ratings, or (a call
        # that outwaited its 3 s on a loaded machine) that the matchmaker did not answer
        await c.wait_for(lambda f: f["type"] == "ratings" or (
            f.get("ref") == "ratings" and f.get("code") == "matchmaker_unavailable"))
    await c.close()


async def test_protobuf_subprotocol_same_messages(gw: Stack) -> None:
    c = await WSClient.signed_in(gw.http(), "바이너리", proto=True)
    assert c.ws.subprotocol == "ttanjit.v1.proto"
    await c.send({"type": "ping", "client_ms": 7})
    assert (await c.wait_type("pong"))["client_ms"] == 7
    await c.send_raw(b"\xff\xff\xff")
    assert (await c.wait_type("error"))["code"] == "bad_frame"
    await c.send({"type": "queue", "game": "onecard", "seats": 2})
    await c.wait_type("queued")
    matched = await c.wait_type("matched")
    view = await c.wait_type("view")
    assert view["game_id"] == matched["game_id"] and len(view["view"]["hand"]) == 7
    # leave: the bot finishes the game at once; every frame decodes as ServerFrame
    res = await c.action(matched["game_id"], {"type": "leave"})
    assert res["type"] == "result"
    await c.wait_event(lambda e: e["type"] in ("game_ended", "game_over"), 30)
    await c.close()


@pytest.fixture(scope="module")
def raw_ws(gw: Stack) -> Iterator[object]:
    ident = sign_in(gw.http(), "무작위")
    with sync_connect(gw.http().replace("http", "ws") + "/ws", compression=None) as ws:
        ws.send(orjson.dumps({"type": "hello", "token": ident["token"]}).decode())
        assert json.loads(ws.recv(5))["type"] == "welcome"
        yield ws


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12)
frame_types = st.sampled_from(["hello", "ping", "queue", "cancel_queue", "room_create",
                               "room_join", "room_leave", "room_options", "room_add_bot",
                               "room_remove_bot", "room_start", "action", "sync", "ratings",
                               "zzz"])
frames = st.one_of(
    st.builds(lambda t, d: {"type": t, **d}, frame_types,
              st.dictionaries(st.sampled_from(["game", "seats", "options", "code", "level",
                                               "seat", "game_id", "cmd_id", "action",
                                               "token", "resume", "client_ms", "x"]),
                              json_values, max_size=4)).map(lambda f: orjson.dumps(f).decode()),
    json_values.map(lambda v: orjson.dumps(v).decode()),
    st.binary(max_size=64),
    st.text(max_size=64),
)


class Pace:
    """The gateway's rate limit (20 frames/s, a burst of 40) kept from this
    side, with a margin: a fixed sleep per example spent 12 s of waiting."""

    tokens, last = 36.0, time.monotonic()

    @classmethod
    def take(cls, n: int) -> None:
        now = time.monotonic()
        cls.tokens = min(36.0, cls.tokens + (now - cls.last) * 18)
        cls.last = now
        if cls.tokens < n:
            time.sleep((n - cls.tokens) / 18)
            cls.tokens, cls.last = float(n), time.monotonic()
        cls.tokens -= n


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(frame=frames)
def test_random_frames_never_break_the_gateway(gw: Stack, raw_ws: object, frame: object) -> None:
    ws = raw_ws
    Pace.take(2)  # two frames per example: under the limit
    if isinstance(frame, str) and '"type":"room_create"' in frame or \
            isinstance(frame, str) and '"type":"queue"' in frame:
        frame = frame.replace('"type":"queue"', '"type":"ratings"').replace(
            '"type":"room_create"', '"type":"ratings"')  # stay out of lobbies
    ws.send(frame)  # type: ignore[attr-defined]
    marker = {"type": "ping", "client_ms": 42.0}
    ws.send(orjson.dumps(marker).decode())  # type: ignore[attr-defined]
    while True:
        got = json.loads(ws.recv(20))  # type: ignore[attr-defined]
        assert "seq" in got and got["type"] in (
            "pong", "error", "ratings", "room_left", "queue_cancelled", "view")
        if got["type"] == "error":
            assert got["code"] and got["message"]
        if got["type"] == "pong" and got.get("client_ms") == 42.0:
            break
    assert gw.gateways[0].alive()


async def test_a_deadline_names_the_seat_it_waits_for(gw: Stack) -> None:
    """docs/websocket.md 3 (``deadline.seat``, "absent when every seat has
    the deadline") and client.proto said it; no frame carried it (docs
    audit). A One Card turn's deadline names the seat whose turn it is; 줄줄이
    벌점's pick, every seat's, names none."""
    c = await WSClient.signed_in(gw.http(), "마감자리")
    for game, seats in (("onecard", 2), ("penalty_rows", 3)):
        await c.send({"type": "queue", "game": game, "seats": seats})
        gid = (await c.wait_type("matched", 20))["game_id"]
        await c.send({"type": "sync", "game_id": gid})
        got = await c.wait_for(lambda f, g=gid: f.get("type") == "view" and f.get("game_id") == g
                               and bool(f.get("deadline")), 20)
        if game == "onecard":
            assert got["deadline"].get("seat") == got["view"]["turn"], got["deadline"]
            assert isinstance(got["deadline"]["seat"], int)
        else:
            assert "seat" not in got["deadline"], got["deadline"]
        await c.action(gid, {"type": "leave"})
    await c.close()
