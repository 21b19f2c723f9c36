"""The shard link (issue 13; docs/protocol.md 1.1) against a real shard
process: a command over NATS names the owner's link; over the link a
command is answered exactly as over NATS (same dedup, written before the
reply) and a burst comes back on it; a game the shard does not serve is
``not here``; garbage on the link closes that link only."""

from __future__ import annotations

import asyncio
import struct

import nats
import orjson
import pytest
from conftest import Services
from shardkit import SUBJ, RecordTail, command, create_game, player_id

from ttanjit.shard.link import BURST, COMMAND, HELLO, NOT_HERE, REPLY, frame

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


class Link:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.r, self.w = reader, writer
        self.rid = 0

    @classmethod
    async def dial(cls, addr: str, gw: str) -> Link:
        host, _, port = addr.rpartition(":")
        link = cls(*await asyncio.open_connection(host, int(port)))
        link.w.write(frame(HELLO, gw.encode()))
        return link

    async def command(self, gid: str, body: dict) -> int:
        self.rid += 1
        g = gid.encode()
        self.w.write(frame(COMMAND, struct.pack("!I", self.rid) + bytes((len(g),)) + g
                           + orjson.dumps(body)))
        await self.w.drain()
        return self.rid

    async def read(self, timeout: float = 5.0) -> tuple[int, bytes]:
        head = await asyncio.wait_for(self.r.readexactly(5), timeout)
        n, kind = struct.unpack("!I", head[:4])[0], head[4]
        return kind, await asyncio.wait_for(self.r.readexactly(n - 1), timeout)


async def test_commands_over_the_link_and_their_bursts(svc: Services) -> None:
    shard = svc.start("shard", name="shard-a")
    nc = await nats.connect(svc.nats_url)
    pids = [player_id(str(i)) for i in range(2)]
    gid = await create_game(shard.ports["grpc"], "penalty_rows",
                            [{"kind": "human", "player_id": p} for p in pids], {"rounds": 1}, 3)
    tail = await RecordTail(nc, gid).start()
    # over NATS, a command that names a gateway: the reply names the link
    # (one that names none, e.g. a test's: no link)
    assert "link" not in await command(nc, gid, pids[0], {"type": "nope"})
    first = orjson.loads((await nc.request(SUBJ.cmd(gid), orjson.dumps(
        {"player": pids[0], "cmd_id": "N1", "action": {"type": "nope"}, "gw": "gw-x"}))).data)
    assert first["ok"] is False and isinstance(first.get("link"), str), first
    link = await Link.dial(first["link"], "gw-test")
    await tail.caught_up()
    before = tail.seq
    view = orjson.loads((await nc.request(SUBJ.sync(gid), orjson.dumps(
        {"player": pids[0], "last_seq": 0}))).data)["view"]
    card = view["hand"][0]["card"]
    # a select over the link, naming this "gateway": answered after it is
    # recorded, with the mover's own patch riding on the reply
    rid = await link.command(gid, {"player": pids[0], "cmd_id": "L1", "gw": "gw-test",
                                   "action": {"type": "select", "card": card, "row": 1}})
    kind, body = await link.read()
    assert kind == REPLY and struct.unpack("!I", body[:4])[0] == rid
    reply, _, own = body[4:].partition(b"\n")
    assert orjson.loads(reply)["ok"] is True and "link" not in orjson.loads(reply)
    part = orjson.loads(b"{" + own + b"}")
    assert part["events"] == [] and part["patch"]["selection"]["card"] == card
    await tail.caught_up()
    assert tail.seq == before + 1 and tail.entries[-1]["cmd"] == "L1"
    # the same command id again: the first reply, nothing recorded twice
    await link.command(gid, {"player": pids[0], "cmd_id": "L1", "gw": "gw-test",
                             "action": {"type": "select", "card": card, "row": 2}})
    kind, body = await link.read()
    assert kind == REPLY and orjson.loads(body[4:].partition(b"\n")[0]) == orjson.loads(reply)
    # a confirm: every seat of this gateway gets its part of the burst here
    await link.command(gid, {"player": pids[1], "cmd_id": "L2", "gw": "gw-test",
                             "action": {"type": "nope"}})  # routes player 1 here too
    assert (await link.read())[0] == REPLY
    await link.command(gid, {"player": pids[0], "cmd_id": "L3", "gw": "gw-test",
                             "action": {"type": "confirm"}})
    kinds = {}
    for _ in range(2):
        kind, body = await link.read()
        kinds[kind] = body
    assert set(kinds) == {REPLY, BURST}
    meta = orjson.loads(kinds[BURST].split(b"\n")[0])
    assert meta["g"] == gid and {p[0] for p in meta["p"]} == set(pids)
    # a game this shard does not serve: not here (the gateway asks NATS)
    await link.command("nosuchgame12", {"player": pids[0], "cmd_id": "L4",
                                        "action": {"type": "confirm"}})
    kind, body = await link.read()
    assert kind == NOT_HERE and len(body) == 4
    # garbage closes that link only; the shard keeps answering
    bad = await Link.dial(first["link"], "gw-bad")
    bad.w.write(b"\xff\xff\xff\xff" + b"x" * 16)
    await bad.w.drain()
    assert await asyncio.wait_for(bad.r.read(), 5) == b""
    again = await command(nc, gid, pids[1], {"type": "nope"})
    assert again["ok"] is False and again["code"]
    link.w.close()
    await nc.close()
