"""A small real WebSocket client of the gateway for the integration tests
and the benchmark (docs/websocket.md): guest sign-in over HTTP, then frames
over a real ``websockets`` connection, JSON or protobuf."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable
from typing import Any

import orjson
import websockets

from ttanjit.gateway import codec


def post(http: str, path: str, body: dict[str, Any], timeout: float = 5) -> dict[str, Any]:
    """A JSON POST to the gateway at ``http``: its answer."""
    req = urllib.request.Request(f"{http}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        out: dict[str, Any] = json.loads(r.read())
        return out


def sign_in(http: str, nickname: str) -> dict[str, Any]:
    return post(http, "/api/guest", {"nickname": nickname})


def sign_out(http: str, refresh: str) -> dict[str, Any]:
    """``POST /api/signout`` with a lasting credential: its answer."""
    return post(http, "/api/signout", {"refresh": refresh}, timeout=10)


class WSClient:
    def __init__(self, http: str, ident: dict[str, Any], proto: bool = False) -> None:
        self.http = http
        self.ident = ident
        self.proto = proto
        self.ws: Any = None
        self.frames: list[dict[str, Any]] = []  # everything received, in order
        self._i = 0  # frames consumed by wait_for
        self.session = ""
        self.last_seq = 0
        self.cmd = 0

    @classmethod
    async def signed_in(cls, http: str, nickname: str, proto: bool = False,
                        resume: dict[str, Any] | None = None) -> WSClient:
        c = cls(http, sign_in(http, nickname), proto)
        await c.connect()
        await c.hello(resume)
        return c

    async def connect(self, http: str | None = None) -> None:
        self.http = http or self.http
        url = self.http.replace("http://", "ws://") + "/ws"
        sub = [codec.PROTO_SUBPROTOCOL] if self.proto else None
        self.ws = await websockets.connect(url, subprotocols=sub, compression=None,
                                           max_size=2**22)

    async def send(self, frame: dict[str, Any]) -> None:
        if self.proto:
            await self.ws.send(codec.encode_client_proto(frame))
        else:
            await self.ws.send(orjson.dumps(frame).decode())

    async def send_raw(self, data: str | bytes) -> None:
        await self.ws.send(data)

    async def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        data = await asyncio.wait_for(self.ws.recv(), timeout)
        frame = codec.decode_server_proto(data) if self.proto else orjson.loads(data)
        seq = frame.get("seq", 0)
        if seq:
            assert seq == self.last_seq + 1, f"seq gap: {self.last_seq} -> {seq}: {frame}"
            self.last_seq = seq
        self.frames.append(frame)
        return frame

    async def wait_for(self, pred: Callable[[dict[str, Any]], bool],
                       timeout: float = 15.0) -> dict[str, Any]:
        """The next frame (not consumed before) matching ``pred``."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            while self._i < len(self.frames):
                f = self.frames[self._i]
                self._i += 1
                if pred(f):
                    return f
            left = end - loop.time()
            if left <= 0:
                raise TimeoutError(f"no matching frame; last: {self.frames[-5:]}")
            await self.recv(left)

    async def wait_type(self, kind: str, timeout: float = 15.0) -> dict[str, Any]:
        return await self.wait_for(lambda f: f.get("type") == kind, timeout)

    async def hello(self, resume: dict[str, Any] | None = None) -> dict[str, Any]:
        frame: dict[str, Any] = {"type": "hello", "token": self.ident["token"]}
        if resume:
            frame["resume"] = resume
            self.last_seq = resume["last_seq"]  # the session's numbering continues
        await self.send(frame)
        welcome = await self.wait_type("welcome")
        self.session = welcome["session"]
        return welcome

    async def action(self, game_id: str, action: dict[str, Any], **extra: Any
                     ) -> dict[str, Any]:
        """Send a game action; its ``result`` or ``error`` frame."""
        self.cmd += 1
        cmd_id = f"c{self.cmd}"
        await self.send({"type": "action", "game_id": game_id, "cmd_id": cmd_id,
                         "action": action, **extra})
        return await self.wait_for(lambda f: f.get("type") in ("result", "error")
                                   and f.get("cmd_id") == cmd_id)

    def events(self, game_id: str) -> list[dict[str, Any]]:
        """Every game event received, one record per event (the events of
        ``update`` frames, issue 13)."""
        return [e for f in self.frames for e in flat(f) if e["game_id"] == game_id]

    async def wait_event(self, pred: Callable[[dict[str, Any]], bool],
                         timeout: float = 15.0, game_id: str | None = None) -> dict[str, Any]:
        """The first event (of an ``update`` not consumed before) whose
        ``event`` object matches ``pred``, as a record of :func:`flat`."""
        found: list[dict[str, Any]] = []

        def match(f: dict[str, Any]) -> bool:
            for e in flat(f):
                if (game_id is None or e["game_id"] == game_id) and pred(e["event"]):
                    found.append(e)
                    return True
            return False
        await self.wait_for(match, timeout)
        return found[0]

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


async def two_in_a_room(host: WSClient, guest: WSClient, game: str = "onecard",
                        seats: int = 2) -> str:
    """``host`` opens a room, ``guest`` joins it by its code; returns once
    the host sees both of them in it (the room's code)."""
    await host.send({"type": "room_create", "game": game, "seats": seats})
    code = str((await host.wait_type("room"))["room"]["code"])
    await guest.send({"type": "room_join", "code": code})
    await host.wait_for(lambda f: f.get("type") == "room" and len(
        [m for m in f["room"]["members"] if m["kind"] == "human"]) == 2)
    return code


async def start_with_bot(c: WSClient, game: str = "onecard", **options: Any) -> str:
    """``c`` opens a 2-seat room of ``game`` (with ``options``), adds an
    easy bot and starts it; the game id."""
    await c.send({"type": "room_create", "game": game, "seats": 2})
    await c.wait_type("room")
    if options:
        await c.send({"type": "room_options", "options": options})
        room = (await c.wait_type("room"))["room"]
        assert all(room["options"][k] == v for k, v in options.items())
    await c.send({"type": "room_add_bot", "level": "easy"})
    await c.wait_type("room")
    await c.send({"type": "room_start"})
    return str((await c.wait_type("matched", 20))["game_id"])


def flat(frame: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of an ``update`` (or ``spectate_update``) frame, one
    record each: ``game_id``, ``game_seq``, ``t``, ``event``, the frame's
    ``deadline``/``replayed``/``seq`` and ``view``."""
    if frame.get("type") not in ("update", "spectate_update"):
        return []
    return [{"game_id": frame["game_id"], "game_seq": e["game_seq"], "t": e.get("t", 0),
             "event": e["event"], "deadline": frame.get("deadline"),
             "replayed": frame.get("replayed", False), "seq": frame.get("seq"),
             "view": frame.get("view"), "type": frame["type"]}
            for e in frame.get("events", [])]


def assert_gapless(frames: list[dict[str, Any]], game_id: str,
                   repeats: bool = False) -> list[int]:
    """The game's events in ``frames`` (one client's, or one and then the
    one that resumed its session, in order) never skip one: each event
    follows the last the client had, from an event or from a whole ``view``
    (a view answering a ``sync`` includes the events it was made from: a
    burst the gateway got meanwhile is not sent again). No event comes twice
    unless ``repeats`` (a resume from a crashed gateway's checkpoint).
    Returns the events' ``game_seq``s."""
    have: int | None = None
    seqs: list[int] = []
    for f in frames:
        if f.get("game_id") != game_id:
            continue
        if f.get("type") == "view":
            have = f["game_seq"] if have is None else max(have, f["game_seq"])
            continue
        for e in flat(f):
            g = e["game_seq"]
            if have is not None and g <= have:
                assert repeats, f"event {g} again after {have}"
                continue
            assert have is None or g == have + 1, f"gap: had {have}, then event {g}"
            have = g
            seqs.append(g)
    return seqs
