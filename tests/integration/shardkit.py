"""Client-side helpers for tests that talk to real shards (docs/protocol.md):
gRPC CreateGame, NATS commands/sync, per-player event logs, and a
:class:`RecordTail` that follows a game's write-ahead record in JetStream
and keeps an identical engine (so a test knows the legal actions and can
check that every accepted move is in the record)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import time
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import grpc
import orjson
from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from nats.js.api import DeliverPolicy, DiscardPolicy

from ttanjit.common.nats import RECORDS_STREAM, RESULTS_STREAM, Subjects
from ttanjit.shard.game import HostedGame
from ttanjit.shard.records import Chain, StoredRecord, split
from ttanjit.v1 import shard_pb2, shard_pb2_grpc

SUBJ = Subjects()
_ids = itertools.count(1)


def player_id(tag: str = "") -> str:
    return f"p_{tag}{time.time_ns() % 10**12:012d}{next(_ids):04d}"[:18]


async def create_game(grpc_port: int, game: str, seats: list[dict[str, str]],
                      options: dict[str, Any] | None = None, seed: int = 1) -> str:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as ch:
        stub = shard_pb2_grpc.ShardServiceStub(ch)
        resp = await stub.CreateGame(shard_pb2.CreateGameRequest(
            game=game, options_json=orjson.dumps(options or {}).decode(), seed=seed,
            seats=[shard_pb2.SeatSpec(**s) for s in seats]), timeout=10)
        return str(resp.game_id)


async def command(nc: Client, gid: str, player: str, action: Any, cmd_id: str | None = None,
                  retry_s: float = 8.0) -> dict[str, Any]:
    """A game command as the gateway sends it: retried while the game has no
    owner (between owners), for up to ``retry_s``."""
    cmd_id = cmd_id or f"c{next(_ids)}"
    payload = orjson.dumps({"player": player, "cmd_id": cmd_id, "action": action})
    deadline = time.monotonic() + retry_s
    while True:
        try:
            msg = await nc.request(SUBJ.cmd(gid), payload, timeout=2.0)
            out: dict[str, Any] = orjson.loads(msg.data)
            if out.get("code") != "game_unavailable":
                return out
        except (NoRespondersError, NatsTimeout):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"game {gid}: no owner answered for {retry_s}s")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def records_refused(nc: Client) -> AsyncIterator[None]:
    """While inside, JetStream refuses every new record message (the records
    stream is full and discards new ones): NATS and every other stream stay
    up, a game's appends fail at once. Only on a nats-server of the test's
    own with nothing else writing records (lowering the limit under the
    stream's count would delete old messages)."""
    async with _stream_full(nc, RECORDS_STREAM):
        yield


@contextlib.asynccontextmanager
async def results_refused(nc: Client) -> AsyncIterator[None]:
    """As :func:`records_refused`, for the finished games' results stream (a
    first message is put there when it is empty: a limit of 0 is none)."""
    js = nc.jetstream()
    if (await js.stream_info(RESULTS_STREAM)).state.messages == 0:
        await js.publish(f"{SUBJ.prefix}.result.none", b"{}")
    async with _stream_full(nc, RESULTS_STREAM):
        yield


@contextlib.asynccontextmanager
async def _stream_full(nc: Client, stream: str) -> AsyncIterator[None]:
    js = nc.jetstream()
    info = await js.stream_info(stream)
    before = info.config
    await js.update_stream(dataclasses.replace(before, discard=DiscardPolicy.NEW,
                                               max_msgs=info.state.messages))
    try:
        yield
    finally:
        await js.update_stream(before)


async def until(pred: Any, timeout: float, what: str) -> None:
    """Wait until ``pred()`` holds, polling; fail saying ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def metrics_text(port: int) -> str:
    """A service's ``/metrics`` page (its metrics port)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        return str(r.read().decode())


def metric(text: str, series: str) -> float | None:
    """The value of ``series`` (name with its labels, as written) in a
    ``/metrics`` page, None when absent."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None


async def raw_request(nc: Client, subject: str, payload: bytes) -> dict[str, Any]:
    msg = await nc.request(subject, payload, timeout=3.0)
    out: dict[str, Any] = orjson.loads(msg.data)
    return out


async def sync(nc: Client, gid: str, player: str | None, last_seq: int) -> dict[str, Any]:
    body: dict[str, Any] = {"last_seq": last_seq}
    if player is None:
        body["spectator"] = True
    else:
        body["player"] = player
    deadline = time.monotonic() + 8.0
    while True:
        try:
            return await raw_request(nc, SUBJ.sync(gid), orjson.dumps(body))
        except (NoRespondersError, NatsTimeout):
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def stored_after(nc: Client, subject: str, after: int, count: int,
                       timeout: float = 10.0) -> list[Any]:
    """The messages stored on a record's ``subject`` after stream sequence
    ``after``, once there are ``count`` (or ``timeout`` has passed): an
    answer sent there is stored a moment after its request."""
    js = nc.jetstream()
    deadline = time.monotonic() + timeout
    while True:
        out, seq = [], after + 1
        while True:
            try:
                msg = await js.get_msg(RECORDS_STREAM, seq=seq, subject=subject, next=True)
            except Exception:  # noqa: BLE001 - none further
                break
            out.append(msg)
            seq = int(msg.seq or 0) + 1
        if len(out) >= count or time.monotonic() > deadline:
            return out
        await asyncio.sleep(0.05)


class EventLog:
    """Frames a player (or the public subject) received, by game."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    async def subscribe(self, nc: Client, subject: str) -> EventLog:
        """Burst messages (docs/protocol.md 2) of a player's or the public
        subject, one frame per event: ``game``, ``seq`` (its game_seq),
        ``t``, ``event`` and the ``view`` pushed with it."""
        async def cb(msg: Any) -> None:
            lines = msg.data.split(b"\n")
            meta = orjson.loads(lines[0])
            for body in lines[1:]:
                part = orjson.loads(b"{" + body + b"}")
                for e in part["events"]:
                    self.frames.append({"game": meta["g"], "seq": e["game_seq"], "t": e["t"],
                                        "event": e["event"], "view": part["view"]})
        await nc.subscribe(subject, cb=cb)
        return self

    def seqs(self, gid: str) -> list[int]:
        return [f["seq"] for f in self.frames if f["game"] == gid]


class RecordTail:
    """Follows ``record.<game_id>`` and applies it to a local engine: the
    messages its shards wrote (signed with the tests' key, conftest), as a
    shard reads it."""

    def __init__(self, nc: Client, gid: str) -> None:
        from conftest import RECORD_KEY
        self.nc, self.gid = nc, gid
        self.chain = Chain(SUBJ.record(gid), (RECORD_KEY.encode(),))
        self.js = nc.jetstream()
        self.rec: StoredRecord | None = None
        self.hosted: HostedGame | None = None
        self.seq = 0
        self.applied = 0

    async def start(self) -> RecordTail:
        async def cb(msg: Any) -> None:
            seq = msg.metadata.sequence.stream
            if not self.chain.take(seq, msg.headers, msg.data):
                self.seq = seq
                return
            doc = orjson.loads(msg.data)
            if self.rec is None:
                self.rec = StoredRecord(header=doc)
                self.hosted = HostedGame.from_header(doc)
            else:
                split(doc, self.rec)
                assert self.hosted is not None
                while self.applied < len(self.rec.entries):
                    self.hosted.replay_entry(self.rec.entries[self.applied])
                    self.applied += 1
            self.seq = seq
        self.sub = await self.js.subscribe(SUBJ.record(self.gid), cb=cb, ordered_consumer=True,
                                           deliver_policy=DeliverPolicy.ALL,
                                           stream=RECORDS_STREAM)
        await self.caught_up()
        return self

    async def caught_up(self, timeout: float = 5.0) -> None:
        last = await self.js.get_last_msg(RECORDS_STREAM, SUBJ.record(self.gid))
        deadline = time.monotonic() + timeout
        while self.seq < (last.seq or 0):
            if time.monotonic() > deadline:
                raise TimeoutError(f"record tail of {self.gid} stuck at {self.seq}")
            await asyncio.sleep(0.005)

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [] if self.rec is None else self.rec.entries

    async def stop(self) -> None:
        await self.sub.unsubscribe()


async def play_humans(nc: Client, tail: RecordTail, rng: Any, *, max_moves: int = 100_000,
                      until_finished: bool = True, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Play the human seats with random legal actions (what the record says
    is legal now); returns every accepted command's (player, cmd_id, reply)."""
    accepted: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    moves = 0
    while moves < max_moves:
        await tail.caught_up()
        h = tail.hosted
        assert h is not None
        if h.finished:
            break
        choices = []
        for pid, seat in h.players.items():
            if not h.engine.presence.is_active_human(seat):
                continue
            acts = [a for a in h.engine.legal_actions(seat)
                    if a["type"] not in ("resume", "one_card")]
            if acts:
                choices.append((pid, acts))
        if not choices:
            if not until_finished or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)  # bots or a deadline move the game on
            continue
        pid, acts = rng.choice(choices)
        confirm = [a for a in acts if a["type"] == "confirm"]
        action = confirm[0] if confirm and rng.random() < 0.7 else rng.choice(acts)
        cmd_id = f"m{next(_ids)}"
        reply = await command(nc, tail.gid, pid, action, cmd_id)
        moves += 1
        if reply["ok"]:
            accepted.append({"player": pid, "cmd": cmd_id, "action": action, "reply": reply})
        if time.monotonic() > deadline:
            raise TimeoutError(f"game {tail.gid} not finished after {timeout}s")
    return accepted
