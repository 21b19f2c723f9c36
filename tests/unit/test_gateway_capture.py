"""The gateway's sample of sessions (TTANJIT_RECORD_SAMPLE, docs/capacity.md):
recording never costs a player the connection. A capture folder that cannot
be made (a read-only root, a file in the way) or a file that reaches its cap
stops the recording, logged once; the sampled connection's frames still pass
both ways."""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from ttanjit.gateway.capture import GatewayRecorder, load


class Socket:
    """The ASGI side of one WebSocket: what the client sent, what the
    gateway sent."""

    def __init__(self, incoming: list[dict[str, Any]]) -> None:
        self.incoming = list(incoming)
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        return self.incoming.pop(0)

    async def send(self, msg: dict[str, Any]) -> None:
        self.sent.append(msg)


async def one_session(rec: GatewayRecorder) -> Socket:
    sock = Socket([{"type": "websocket.connect"},
                   {"type": "websocket.receive", "text": '{"type":"ping"}'},
                   {"type": "websocket.disconnect", "code": 1000}])
    receive, send = rec.wrap(sock.receive, sock.send)
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept", "subprotocol": None})
    assert (await receive())["text"] == '{"type":"ping"}'
    await send({"type": "websocket.send", "text": orjson.dumps({"type": "pong"}).decode()})
    assert (await receive())["type"] == "websocket.disconnect"
    return sock


async def test_a_folder_that_cannot_be_made_records_nothing_and_breaks_nothing(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    rec = GatewayRecorder(1.0, str(blocker / "captures"), random.Random(1))
    with caplog.at_level(logging.WARNING, logger="ttanjit.gateway"):
        for _ in range(3):
            sock = await one_session(rec)
            assert [m["type"] for m in sock.sent] == ["websocket.accept", "websocket.send"]
    assert rec.off and rec.writer is None
    assert sum("capture stopped" in r.getMessage() for r in caplog.records) == 1


async def test_a_full_capture_file_stops_growing(tmp_path: Path) -> None:
    rec = GatewayRecorder(1.0, str(tmp_path), random.Random(1), max_mb=0.0005)  # ~500 bytes
    for _ in range(6):
        sock = await one_session(rec)
        assert [m["type"] for m in sock.sent] == ["websocket.accept", "websocket.send"]
    assert rec.off.startswith("the file reached")
    path, = tmp_path.glob("*.capture.jsonl")
    size = path.stat().st_size
    assert size < 1000  # stopped just past its cap
    await one_session(rec)
    assert path.stat().st_size == size
    assert load(path).conns  # what was written still reads


async def test_a_resumed_session_is_recorded_as_the_same_player(tmp_path: Path) -> None:
    """The format (capture.py): a reconnection of the same player is a new
    label with ``player_of`` naming the first one, so a replay plays one
    player, not two strangers."""
    rec = GatewayRecorder(1.0, str(tmp_path), random.Random(1))

    async def session(hello: dict[str, Any], sid: str) -> None:
        sock = Socket([{"type": "websocket.connect"},
                       {"type": "websocket.receive", "text": orjson.dumps(hello).decode()},
                       {"type": "websocket.disconnect", "code": 1006}])
        receive, send = rec.wrap(sock.receive, sock.send)
        await receive()
        await send({"type": "websocket.accept", "subprotocol": None})
        await receive()
        await send({"type": "websocket.send", "text": orjson.dumps(
            {"type": "welcome", "seq": 1, "session": sid}).decode()})
        await receive()

    await session({"type": "hello", "token": "secret"}, "s_a")
    await session({"type": "hello", "token": "other"}, "s_b")  # another player
    await session({"type": "hello", "token": "secret", "resume": {"session": "s_a",
                                                                 "last_seq": 1}}, "s_a")
    await session({"type": "hello", "token": "secret", "resume": {"session": "s_a",
                                                                 "last_seq": 1}}, "s_a")
    rec.writer.flush()  # type: ignore[union-attr]
    cap = load(next(tmp_path.glob("*.capture.jsonl")))
    labels = list(cap.conns)
    assert [c.meta for c in cap.conns.values()] == [
        {}, {}, {"player_of": labels[0]}, {"player_of": labels[0]}]
    assert [[c.label for c in group] for group in cap.players()] == [
        [labels[0], labels[2], labels[3]], [labels[1]]]
    # tokens are never written
    assert all(ln.frame.get("token") in (None, "") for c in cap.conns.values()
               for ln in c.client_frames())
