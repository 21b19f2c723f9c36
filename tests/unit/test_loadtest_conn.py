"""The load tester's connection (ttanjit.loadtest.client.Conn) against a real
WebSocket server on a loopback port: a frame sent after the connection was
dropped is neither sent nor captured.

Found by CI: a simulated player's drop came in the same loop turn as its
move. The dropped transport took the write without a word and lost it, but
the capture said the move was sent; the replay sent it for real, the gateway
sometimes read it before the drop, and the move that never happened in the
capture happened in the replay (the player's next move then got
``not_your_turn``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from ttanjit.gateway.capture import CLIENT, CaptureWriter, load
from ttanjit.loadtest.client import Conn
from ttanjit.loadtest.stats import Stats


async def test_a_frame_after_a_drop_is_neither_sent_nor_captured(tmp_path: Path) -> None:
    got: list[dict] = []
    gone = asyncio.Event()

    async def handler(ws: ServerConnection) -> None:
        try:
            async for data in ws:
                frame = orjson.loads(data)
                got.append(frame)
                if frame.get("cmd_id"):
                    await ws.send(orjson.dumps({"type": "result", "cmd_id": frame["cmd_id"],
                                                "seq": len(got)}).decode())
        except ConnectionClosed:  # the drop: no close handshake
            pass
        finally:
            gone.set()

    path = tmp_path / "c.jsonl"
    writer = CaptureWriter(path, "loadtest", game="onecard")
    writer.open_conn("p0", nickname="하나")
    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        conn = Conn(f"http://127.0.0.1:{port}", Stats(), writer=writer, label="p0")
        await conn.connect()
        first = {"type": "action", "game_id": "g", "cmd_id": "c1", "action": {"type": "draw"}}
        assert (await conn.request(first, 5))["type"] == "result"
        conn.drop()
        # the same loop turn as the drop, as a player's move can be
        late = await conn.send({"type": "action", "game_id": "g", "cmd_id": "c2",
                                "action": {"type": "draw"}})
        assert late.done() and late.result() == {"type": "error", "code": "connection_closed"}
        await asyncio.wait_for(conn.closed.wait(), 5)
        await asyncio.wait_for(gone.wait(), 5)
    writer.close()
    assert [f["cmd_id"] for f in got] == ["c1"]
    sent = [ln.frame.get("cmd_id") for c in load(path).conns.values() for ln in c.lines
            if ln.direction == CLIENT]
    assert sent == ["c1"]  # the capture says what went out, and only that
    assert conn.stats.count["frames_out"] == 1
