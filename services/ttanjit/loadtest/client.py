"""One load-test WebSocket connection (docs/websocket.md): sends frames,
times every request to its answer (per message type), counts frames, errors
and disconnects into :class:`~ttanjit.loadtest.stats.Stats`, optionally
writes every frame to a capture, and hands each server frame to a callback.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import orjson
import websockets
from websockets.exceptions import ConnectionClosed

from ttanjit.gateway import codec
from ttanjit.gateway.capture import CLIENT, SERVER, CaptureWriter
from ttanjit.loadtest.report import http_why
from ttanjit.loadtest.stats import ANSWERS, Stats

Frame = dict[str, Any]
OnFrame = Callable[[Frame], Awaitable[None] | None]

# answer type -> request types it may answer (the oldest pending one wins)
ANSWERED_BY: dict[str, tuple[str, ...]] = {}
for _req, _answers in ANSWERS.items():
    if _req != "action":
        for _a in _answers:
            ANSWERED_BY[_a] = (*ANSWERED_BY.get(_a, ()), _req)


class SignInError(RuntimeError):
    pass


async def sign_in(http: httpx.AsyncClient, base: str, nickname: str) -> dict[str, Any]:
    """Guest sign-in (docs/websocket.md 1): ``{player, nickname, token, …}``."""
    for attempt in range(5):
        try:
            r = await http.post(f"{base}/api/guest", json={"nickname": nickname}, timeout=30)
        except httpx.HTTPError as exc:
            if attempt == 4:
                raise SignInError(f"sign-in failed: {http_why(exc)}") from None
            await asyncio.sleep(0.2 * (attempt + 1))
            continue
        if r.status_code == 503 and attempt < 4:  # store_unavailable: JetStream away a moment
            await asyncio.sleep(min(2.0, float(r.headers.get("retry-after") or 1)))
            continue
        if r.status_code != 200:
            raise SignInError(f"sign-in: HTTP {r.status_code} {r.text[:200]}")
        out: dict[str, Any] = r.json()
        return out
    raise SignInError("sign-in failed")


def ws_url(base: str) -> str:
    if base.startswith("https://"):
        return "wss://" + base[len("https://"):] + "/ws"
    return base.replace("http://", "ws://", 1).rstrip("/") + "/ws"


class Conn:
    def __init__(self, base: str, stats: Stats, on_frame: OnFrame | None = None,
                 writer: CaptureWriter | None = None, label: str = "",
                 proto: bool = False) -> None:
        self.base = base
        self.stats = stats
        self.on_frame = on_frame
        self.writer = writer
        self.label = label
        self.proto = proto
        self.ws: Any = None
        self.session = ""
        self.last_seq = 0
        self.closing = False
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self._pending: dict[str, deque[tuple[float, asyncio.Future[Frame]]]] = {}
        self._cmds: dict[str, tuple[float, asyncio.Future[Frame]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def connect(self, timeout: float = 30.0) -> None:
        sub = [codec.PROTO_SUBPROTOCOL] if self.proto else [codec.JSON_SUBPROTOCOL]
        self.ws = await websockets.connect(ws_url(self.base), subprotocols=sub,  # type: ignore[arg-type]
                                           compression=None, max_size=2**22,
                                           ping_interval=None, open_timeout=timeout,
                                           close_timeout=2)
        self.closing = False
        self.closed = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    # -- sending ------------------------------------------------------------
    async def send(self, frame: Frame) -> asyncio.Future[Frame]:
        """Send a frame; a future resolved with its answer (``error`` frames
        included) when the type has one.

        Once the connection is dropped or closing, nothing is sent and nothing
        captured: the future answers ``connection_closed``. (A dropped
        transport takes a write without a word and loses it, so such a frame
        used to be captured as sent; a replay then sent it for real, and
        whether the gateway read it before the drop was a race: a move that
        never happened in the capture could happen in the replay.)"""
        fut: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        if self.closing or self.closed.is_set():
            fut.set_result({"type": "error", "code": "connection_closed"})
            return fut
        kind = frame.get("type", "")
        now = time.perf_counter()
        if kind == "action":
            self._cmds[str(frame.get("cmd_id"))] = (now, fut)
        elif kind in ANSWERS:
            self._pending.setdefault(kind, deque()).append((now, fut))
        else:
            fut.set_result({})
        data = codec.encode_client_proto(frame) if self.proto else orjson.dumps(frame).decode()
        try:
            await self.ws.send(data)
        except ConnectionClosed:
            self._fail_pending()
            return fut
        if self.writer is not None:  # only frames that went out are captured
            self.writer.frame(self.label, CLIENT, frame, self.proto)
        self.stats.count["frames_out"] += 1
        return fut

    async def request(self, frame: Frame, timeout: float = 30.0) -> Frame:
        fut = await self.send(frame)
        return await asyncio.wait_for(fut, timeout)

    async def hello(self, token: str, resume: dict[str, Any] | None = None,
                    timeout: float = 30.0) -> Frame:
        frame: Frame = {"type": "hello", "token": token}
        if resume:
            frame["resume"] = resume
            self.last_seq = int(resume["last_seq"])
        welcome = await self.request(frame, timeout)
        if welcome.get("type") == "welcome":
            self.session = welcome["session"]
            if welcome.get("resumed"):
                self.stats.resumes[welcome.get("resume_result") or "resumed"] += 1
            elif resume:
                self.stats.resumes["failed"] += 1
        return welcome

    # -- receiving ------------------------------------------------------------
    async def _read(self) -> None:
        ws = self.ws
        try:
            async for data in ws:
                frame = codec.decode_server_proto(data) if self.proto else orjson.loads(data)
                self.stats.count["frames_in"] += 1
                if self.writer is not None:
                    self.writer.frame(self.label, SERVER, frame, self.proto)
                seq = frame.get("seq") or 0
                if seq:
                    if seq != self.last_seq + 1:
                        self.stats.count["seq_gaps"] += 1
                    self.last_seq = seq
                self._answer(frame)
                if self.on_frame is not None:
                    r = self.on_frame(frame)
                    if r is not None:
                        await r
        except ConnectionClosed:
            pass
        except Exception:  # noqa: BLE001 - a bug in a handler must not hang the run
            self.stats.count["client_errors"] += 1
            import traceback

            traceback.print_exc()
        finally:
            self.close_code = ws.close_code
            if not self.closing and ws.close_code != 1013:  # (a full gateway's refusal:
                self.stats.count["disconnects"] += 1          # refused_full, player.py)
            if self.writer is not None:
                self.writer.close_conn(self.label, ws.close_code,
                                       "client" if self.closing else "server")
            self._fail_pending()
            self.closed.set()

    def _answer(self, frame: Frame) -> None:
        kind = frame.get("type", "")
        now = time.perf_counter()
        if kind == "error":
            self.stats.errors[frame.get("code", "?")] += 1
        cmd = frame.get("cmd_id")
        if kind in ("result", "error") and cmd in self._cmds:
            t0, fut = self._cmds.pop(cmd)
            self.stats.sample("action", (now - t0) * 1000)
            if not fut.done():
                fut.set_result(frame)
            return
        if kind == "error":
            candidates: tuple[str, ...] = (frame["ref"],) if frame.get("ref") else ()
        else:
            candidates = ANSWERED_BY.get(kind, ())
        best: str | None = None
        for req in candidates:
            q = self._pending.get(req)
            if q and (best is None or q[0][0] < self._pending[best][0][0]):
                best = req
        if best is None:
            return
        t0, fut = self._pending[best].popleft()
        self.stats.sample(best, (now - t0) * 1000)
        if not fut.done():
            fut.set_result(frame)

    def _fail_pending(self) -> None:
        for q in self._pending.values():
            for _, fut in q:
                if not fut.done():
                    fut.set_result({"type": "error", "code": "connection_closed"})
            q.clear()
        for _, fut in self._cmds.values():
            if not fut.done():
                fut.set_result({"type": "error", "code": "connection_closed"})
        self._cmds.clear()

    async def close(self, code: int = 1000) -> None:
        self.closing = True
        if self.ws is not None:
            try:
                await self.ws.close(code)
            except Exception:  # noqa: BLE001
                pass
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    def quiet(self) -> bool:
        """No request waiting for its answer."""
        return not self._cmds and not any(self._pending.values())

    def drop(self) -> None:
        """Cut the TCP connection without a close handshake (a phone losing
        signal); the gateway sees it go away."""
        self.closing = True
        transport = getattr(self.ws, "transport", None)
        if transport is not None:
            transport.abort()
