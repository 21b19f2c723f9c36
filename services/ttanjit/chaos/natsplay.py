"""Scripted players that talk to the game shards over NATS as the gateway
does (docs/protocol.md 1-2): ``sync`` for the seat's view, a bot policy picks
the move from that view only, then a command with a fresh ``cmd_id``, retried
with the same id while the game is between owners or NATS fails over.

Every command's round trip is timed (``latencies_ms``) and every accepted one
kept as ``(game, player, cmd)`` for :func:`ttanjit.chaos.audit.judge`.

Example::

    table = Tables(nc, grpc_ports=[7101, 7102])
    await table.create(8, humans=2, bots=2)
    stop = asyncio.Event()
    runner = asyncio.create_task(table.play(stop))
    ...; stop.set(); await runner
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
import orjson
from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from ttanjit import bots
from ttanjit.common.nats import Subjects
from ttanjit.v1 import shard_pb2, shard_pb2_grpc

_ids = itertools.count(1)


def new_player_id(tag: str = "c") -> str:
    return f"p_{tag}{time.time_ns() % 10**12:012d}{next(_ids):04d}"[:18]


async def create_game(addr: str, game: str, seats: list[dict[str, str]], seed: int,
                      options: dict[str, Any] | None = None) -> str:
    async with grpc.aio.insecure_channel(addr) as ch:
        stub = shard_pb2_grpc.ShardServiceStub(ch)
        resp = await stub.CreateGame(shard_pb2.CreateGameRequest(
            game=game, options_json=orjson.dumps(options or {}).decode(), seed=seed,
            seats=[shard_pb2.SeatSpec(**s) for s in seats]), timeout=15)
        return str(resp.game_id)


@dataclass
class Seat:
    game_id: str
    player: str
    finished: bool = False


@dataclass
class Tables:
    """Games with scripted human seats (and pool bots) on the given shards."""

    nc: Client
    grpc_ports: list[int]
    game: str = "onecard"
    think_ms: tuple[int, int] = (100, 400)
    prefix: str = "ttanjit.v1"
    seed: int = 1
    seats: list[Seat] = field(default_factory=list)
    game_ids: list[str] = field(default_factory=list)
    accepted: list[tuple[str, str, str]] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    refused: int = 0
    unavailable: int = 0

    def __post_init__(self) -> None:
        self.subj = Subjects(self.prefix)
        self.rng = random.Random(self.seed)

    async def create(self, n: int, humans: int = 2, bots_: int = 2, level: str = "hard") -> None:
        for i in range(n):
            pids = [new_player_id() for _ in range(humans)]
            spec = [{"kind": "human", "player_id": p} for p in pids]
            spec += [{"kind": "bot", "level": level} for _ in range(bots_)]
            port = self.grpc_ports[i % len(self.grpc_ports)]
            gid = await create_game(f"127.0.0.1:{port}", self.game, spec,
                                    seed=self.seed * 1000 + len(self.game_ids))
            self.game_ids.append(gid)
            self.seats += [Seat(gid, p) for p in pids]

    @property
    def finished(self) -> set[str]:
        by_game: dict[str, bool] = {}
        for s in self.seats:
            by_game[s.game_id] = by_game.get(s.game_id, True) and s.finished
        return {g for g, done in by_game.items() if done}

    async def play(self, stop: asyncio.Event) -> None:
        await asyncio.gather(*(self._seat(s, stop) for s in self.seats))

    async def _request(self, subject: str, body: dict[str, Any], total_s: float
                       ) -> dict[str, Any] | None:
        data = orjson.dumps(body)
        deadline = time.monotonic() + total_s
        delay = 0.05
        while True:
            try:
                msg = await self.nc.request(subject, data, timeout=2.0)
                out: dict[str, Any] = orjson.loads(msg.data)
                if out.get("code") != "game_unavailable":
                    return out
            except (NoRespondersError, NatsTimeout):
                pass
            except Exception:  # noqa: BLE001 - disconnected while NATS fails over
                pass
            if time.monotonic() + delay > deadline:
                return None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)

    async def _seat(self, s: Seat, stop: asyncio.Event) -> None:
        rng = random.Random(f"{self.seed}:{s.player}")
        moved = asyncio.Event()

        async def on_event(_msg: Any) -> None:
            moved.set()

        sub = await self.nc.subscribe(self.subj.player_events(s.player), cb=on_event)
        try:
            while not stop.is_set():
                moved.clear()
                reply = await self._request(self.subj.sync(s.game_id),
                                            {"player": s.player, "last_seq": 1 << 30}, 10.0)
                view = (reply or {}).get("view")
                if not isinstance(view, dict):
                    await asyncio.sleep(0.2)
                    continue
                if view.get("finished"):
                    s.finished = True
                    return
                seat = view.get("seat")
                action = (bots.decide(self.game, "normal", seat, view, rng, 20)
                          if isinstance(seat, int) else None)
                if action is None:
                    try:
                        await asyncio.wait_for(moved.wait(), 0.5)
                    except TimeoutError:
                        pass
                    continue
                await asyncio.sleep(rng.uniform(*self.think_ms) / 1000)
                await self._command(s, action)
        finally:
            try:
                await sub.unsubscribe()
            except Exception:  # noqa: BLE001 - connection closing
                pass

    async def _command(self, s: Seat, action: dict[str, Any]) -> None:
        cmd_id = f"k{next(_ids)}"
        t0 = time.perf_counter()
        reply = await self._request(self.subj.cmd(s.game_id),
                                    {"player": s.player, "cmd_id": cmd_id, "action": action}, 10.0)
        if reply is None:
            self.unavailable += 1
            return
        self.latencies_ms.append((time.perf_counter() - t0) * 1000)
        if reply.get("ok"):
            self.accepted.append((s.game_id, s.player, cmd_id))
        else:
            self.refused += 1
