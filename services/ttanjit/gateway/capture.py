"""The capture file ``ttanjit.capture/1``: every frame of some connections,
with its timing and direction, as JSON lines.

```
{"format": "ttanjit.capture/1", "source": "loadtest", "created_ms": 1764…, …}
{"c": "p0", "t": 0.0, "open": {"nickname": "부하0"}}
{"c": "p0", "t": 1.7, "d": ">", "f": {"type": "hello", "token": ""}}
{"c": "p0", "t": 9.2, "d": "<", "f": {"type": "welcome", "seq": 1, …}}
{"c": "p0", "t": 8312.5, "close": {"code": 1000, "by": "client"}}
```
- line 1 is the header; every other line belongs to one connection ``c``
  (a label, unique in the file; a reconnection of the same player is a new
  label with ``"player_of"`` in its ``open`` naming the first one);
- ``t`` is ms since the capture started; ``d`` is ``>`` (client to server) or
  ``<`` (server to client); ``f`` is the frame as its JSON object (binary
  protobuf frames are stored decoded, with ``"bin": true`` on the line);
- tokens are never written (``hello.token`` is ``""``; the replayer signs
  its players in anew).

The format belongs to the gateway (product code); the load tester
(``ttanjit.loadtest``) writes and replays it through this module.
:class:`GatewayRecorder` is the gateway's side: with ``TTANJIT_RECORD_SAMPLE``
(a fraction, e.g. ``0.01``) and ``TTANJIT_RECORD_DIR`` set, that fraction of
WebSocket connections is written, one capture file per gateway process.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import orjson

from ttanjit.common.config import Settings
from ttanjit.gateway import codec
from ttanjit.gateway.errors import FrameError

FORMAT = "ttanjit.capture/1"
CLIENT, SERVER = ">", "<"
MAX_MB = 32.0  # a gateway's capture file stops growing here (TTANJIT_RECORD_MAX_MB)

log = logging.getLogger("ttanjit.gateway")


class CaptureError(ValueError):
    pass


def scrub(frame: dict[str, Any]) -> dict[str, Any]:
    """A client frame without secrets (the sign-in token)."""
    if frame.get("type") == "hello" and "token" in frame:
        frame = {**frame, "token": ""}
    return frame


class CaptureWriter:
    """Appends capture lines to a file (one per load-generator or gateway
    process). Each line is written whole, so a file cut short by a crash is
    still readable up to its last line."""

    def __init__(self, path: str | Path, source: str, **meta: Any) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: TextIO = open(self.path, "w", encoding="utf-8")  # noqa: SIM115
        self.size = 0  # bytes written
        self._t0 = time.monotonic()
        self._write({"format": FORMAT, "source": source,
                     "created_ms": int(time.time() * 1000), **meta})

    def now(self) -> float:
        return round((time.monotonic() - self._t0) * 1000, 2)

    def _write(self, obj: dict[str, Any]) -> None:
        line = orjson.dumps(obj) + b"\n"
        self.size += len(line)
        self._f.write(line.decode())

    def open_conn(self, conn: str, **meta: Any) -> None:
        self._write({"c": conn, "t": self.now(), "open": meta})

    def frame(self, conn: str, direction: str, frame: dict[str, Any],
              binary: bool = False) -> None:
        line: dict[str, Any] = {"c": conn, "t": self.now(), "d": direction,
                                "f": scrub(frame) if direction == CLIENT else frame}
        if binary:
            line["bin"] = True
        self._write(line)

    def close_conn(self, conn: str, code: int | None, by: str) -> None:
        self._write({"c": conn, "t": self.now(), "close": {"code": code, "by": by}})
        self._f.flush()

    def flush(self) -> None:
        self._f.flush()

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()


@dataclass
class Line:
    t: float
    direction: str  # ">" / "<" for frames, "open" / "close"
    frame: dict[str, Any]


@dataclass
class ConnCapture:
    label: str
    meta: dict[str, Any] = field(default_factory=dict)
    lines: list[Line] = field(default_factory=list)
    closed: dict[str, Any] | None = None

    def client_frames(self) -> list[Line]:
        return [ln for ln in self.lines if ln.direction == CLIENT]

    def server_frames(self) -> list[Line]:
        return [ln for ln in self.lines if ln.direction == SERVER]


@dataclass
class Capture:
    header: dict[str, Any]
    conns: dict[str, ConnCapture]

    def players(self) -> list[list[ConnCapture]]:
        """Connections grouped by player (a reconnection continues the one
        named by ``player_of``), in the order they opened."""
        groups: dict[str, list[ConnCapture]] = {}
        for c in self.conns.values():
            groups.setdefault(str(c.meta.get("player_of") or c.label), []).append(c)
        return list(groups.values())


def _what_else(raw_lines: list[bytes]) -> str:
    """What a file given for a capture is instead, when it can tell (ops
    trial: a load-test report given to ``replay``)."""
    try:
        whole = orjson.loads(b"\n".join(raw_lines))
    except orjson.JSONDecodeError:
        return ""
    if isinstance(whole, dict) and "counts" in whole and "rtt" in whole:
        return (" (a load-test report: replay takes the capture that `record --out` or "
                "a gateway's TTANJIT_RECORD_DIR wrote)")
    return ""


def load(path: str | Path) -> Capture:
    """A capture file, read whole. A last line cut short (the writer was
    killed mid-line: it writes whole lines, with no newline until the end)
    is left out; anything else that is not a capture line is a
    :class:`CaptureError` naming the file and line, as is a file that cannot
    be read."""
    try:
        with open(path, "rb") as f:
            raw_lines = f.read().split(b"\n")
    except OSError as exc:
        raise CaptureError(f"{path}: {exc.strerror or exc}") from None
    if not any(ln.strip() for ln in raw_lines):
        raise CaptureError(f"{path}: the file is empty")
    try:  # the header first: a file that is no capture is said so, and only that
        header = orjson.loads(raw_lines[0])
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CaptureError(f"{path}: not a {FORMAT} file{_what_else(raw_lines)}")
    if len(raw_lines) > 1 and raw_lines[-1].strip():  # no newline after it: cut short
        try:
            orjson.loads(raw_lines[-1])
        except orjson.JSONDecodeError:
            log.warning("%s: its last line is cut short; replaying the lines before it", path)
            raw_lines.pop()
    conns: dict[str, ConnCapture] = {}
    for no, raw in enumerate(raw_lines[1:], start=2):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
            label, t = str(obj["c"]), float(obj["t"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            raise CaptureError(f"{path}:{no}: not a capture line") from None
        conn = conns.setdefault(label, ConnCapture(label))
        if "open" in obj:
            conn.meta = dict(obj["open"] or {})
        elif "close" in obj:
            conn.closed = dict(obj["close"] or {})
            conn.lines.append(Line(t, "close", conn.closed))
        elif obj.get("d") in (CLIENT, SERVER) and isinstance(obj.get("f"), dict):
            conn.lines.append(Line(t, obj["d"], obj["f"]))
        else:
            raise CaptureError(f"{path}:{no}: not a capture line")
    return Capture(header, conns)


# -- the gateway's sampler ----------------------------------------------------------
class GatewayRecorder:
    """Records a sample of a gateway's WebSocket connections by wrapping the
    ASGI ``receive``/``send`` of ``/ws`` (the gateway's code path is
    untouched for the connections not sampled).

    Recording never costs a player the connection: when the capture file
    cannot be made or written (a read-only or full disk), or reaches
    ``max_mb``, the gateway logs it once and records no more."""

    def __init__(self, sample: float, directory: str, rng: random.Random | None = None,
                 max_mb: float = MAX_MB) -> None:
        self.sample = sample
        self.dir = Path(directory)
        self.rng = rng or random.Random()
        self.writer: CaptureWriter | None = None
        self.n = 0
        self.max_bytes = int(max_mb * 1024 * 1024)
        self.off = ""  # why recording stopped ("" = recording)
        # session id (from a recorded welcome) -> the label of the player's
        # first recorded connection: a resume names it as ``player_of``
        self.players: dict[str, str] = {}

    @classmethod
    def from_settings(cls, s: Settings) -> GatewayRecorder | None:
        """The recorder ``TTANJIT_RECORD_SAMPLE`` asks for (None: 0 or less)."""
        if s.record_sample <= 0:
            return None
        return cls(min(s.record_sample, 1.0), s.record_dir, max_mb=s.record_max_mb)

    def stop(self, why: str) -> None:
        if not self.off:
            self.off = why
            log.warning("capture stopped: %s (connections go on unrecorded)", why,
                        extra={"dir": str(self.dir)})
            if self.writer is not None:
                try:
                    self.writer.close()
                except OSError:
                    pass

    def _writer(self) -> CaptureWriter | None:
        if self.writer is None and not self.off:
            name = f"gateway-{socket.gethostname()}-{os.getpid()}-{int(time.time())}"
            try:
                self.writer = CaptureWriter(self.dir / f"{name}.capture.jsonl", "gateway",
                                            sample=self.sample)
            except OSError as exc:
                self.stop(f"cannot write {self.dir}: {exc!r}")
        return None if self.off else self.writer

    def _put(self, write: Any, *args: Any, **kw: Any) -> None:
        """One capture line; a failed write or a full file ends recording."""
        if self.off or self.writer is None:
            return
        try:
            write(*args, **kw)
            if self.writer.size > self.max_bytes:
                self.stop(f"the file reached {self.max_bytes // (1024 * 1024)} MiB")
        except (OSError, ValueError) as exc:  # ValueError: the file was closed
            self.stop(f"write failed: {exc!r}")

    def wrap(self, receive: Any, send: Any) -> tuple[Any, Any]:
        if self.off or self.rng.random() >= self.sample:
            return receive, send
        w = self._writer()
        if w is None:
            return receive, send
        self.n += 1
        label = f"g{os.getpid()}-{self.n}"
        state: dict[str, Any] = {"closed": False, "opened": False, "root": label}

        def opened(first: dict[str, Any] | None = None) -> None:
            """The ``open`` line, written before the connection's first
            line: a first ``hello`` that resumes a recorded session makes
            this a reconnection of that player (``player_of``)."""
            if state["opened"]:
                return
            state["opened"] = True
            meta = {}
            resume = first.get("resume") if first and first.get("type") == "hello" else None
            root = self.players.get(str(resume.get("session"))) \
                if isinstance(resume, dict) else None
            if root is not None:
                meta["player_of"] = state["root"] = root
            self._put(w.open_conn, label, **meta)

        def close(code: int | None, by: str) -> None:
            if not state["closed"]:
                opened()
                state["closed"] = True
                self._put(w.close_conn, label, code, by)

        def server_frame(frame: dict[str, Any], binary: bool = False) -> None:
            opened()
            if frame.get("type") == "welcome" and frame.get("session"):
                self.players.setdefault(str(frame["session"]), state["root"])
            self._put(w.frame, label, SERVER, frame, binary)

        async def rec_receive() -> Any:
            msg = await receive()
            kind = msg.get("type")
            if kind == "websocket.receive":
                text = msg.get("text")
                frame, binary = (_decode_json(text), False) if text is not None else (
                    _decode_bin(msg.get("bytes") or b"", True), True)
                opened(frame)
                self._put(w.frame, label, CLIENT, frame, binary)
            elif kind == "websocket.disconnect":
                close(msg.get("code"), "client")
            return msg

        async def rec_send(msg: Any) -> None:
            kind = msg.get("type")
            if kind == "websocket.send":
                text = msg.get("text")
                if text is not None:
                    server_frame(_decode_json(text))
                else:
                    server_frame(_decode_bin(msg.get("bytes") or b"", False), True)
            elif kind == "websocket.close":
                close(msg.get("code"), "server")
            await send(msg)

        return rec_receive, rec_send


def _decode_json(text: str) -> dict[str, Any]:
    try:
        obj = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {"raw": text[:4096]}
    return obj if isinstance(obj, dict) else {"raw": text[:4096]}


def _decode_bin(data: bytes, client: bool) -> dict[str, Any]:
    try:
        return codec.decode_proto(data) if client else codec.decode_server_proto(data)
    except (FrameError, Exception):  # noqa: BLE001 - a bad frame is recorded as bytes
        return {"raw_hex": data[:4096].hex()}
