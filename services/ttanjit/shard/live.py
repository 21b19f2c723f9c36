"""A game this shard owns right now: the hosted game plus its I/O state
(record position, game clock, timer, bot requests, subscriptions)."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass, field

from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from ttanjit.shard.game import Applied, HostedGame

B32 = "abcdefghijklmnopqrstuvwxyz234567"


def new_game_id() -> str:
    return "".join(secrets.choice(B32) for _ in range(12))


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class CreateError(ValueError):
    """CreateGame input the shard refuses (INVALID_ARGUMENT)."""


@dataclass(eq=False)
class Live:
    """A game this shard owns right now."""

    hosted: HostedGame
    epoch: int
    owner_rev: int
    last_seq: int  # stream sequence of the game's last record message
    t_base: int  # game t at mono_base
    mono_base: float
    pending: list[tuple[Applied, Msg | None, float]] = field(default_factory=list)
    flushing: bool = False
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    timer: asyncio.TimerHandle | None = None
    timer_due: float = 0.0
    bots: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    subs: list[Subscription] = field(default_factory=list)
    inflight: dict[tuple[str, str], list[Msg]] = field(default_factory=dict)
    windows: dict[int, asyncio.TimerHandle] = field(default_factory=dict)  # bot presses
    gone: bool = False  # lost / handed over / dropped
    frozen: bool = False  # being handed over
    finalized: bool = False
    msg_no: int = 0

    @property
    def game_id(self) -> str:
        return self.hosted.game_id

    @property
    def game(self) -> str:
        return self.hosted.setup.game

    def now_t(self, mono: float) -> int:
        t = self.t_base + int((mono - self.mono_base) * 1000)
        return max(t, self.hosted.engine.now)

