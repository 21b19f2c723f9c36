"""What the pieces of :class:`ttanjit.shard.service.Shard` share: its state
(annotations only) and, for the type checker, the methods one mixin calls
on another. No behaviour lives here."""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nats.aio.client import Client
    from nats.aio.msg import Msg
    from nats.js import JetStreamContext
    from nats.js.kv import KeyValue

    from ttanjit.common.config import Settings
    from ttanjit.common.nats import Subjects
    from ttanjit.games.base import JSON
    from ttanjit.shard.game import Applied
    from ttanjit.shard.live import Live
    from ttanjit.shard.ownership import OwnerBook


class ShardParts:
    cfg: Settings
    id: str
    inc: str
    subj: Subjects
    nc: Client
    js: JetStreamContext
    owners: KeyValue
    directory: KeyValue
    loop: asyncio.AbstractEventLoop
    rng: random.Random
    games: dict[str, Live]
    book: OwnerBook
    draining: bool
    stopping: asyncio.Event
    claiming: set[str]
    grpc_addr: str
    lease_rev: int
    lease_expires: int
    renew_lock: asyncio.Lock
    watcher: KeyValue.KeyWatcher
    watch_seen: float
    watch_task: asyncio.Task[None]
    claims_from: float  # loop time before which no failover claim is made
    nats_back: asyncio.Event  # set (and replaced) when NATS reconnects
    nats_back_at: float  # loop time of the last reconnect

    if TYPE_CHECKING:
        async def _claim(self, gid: str, reason: str, rev: int, epoch: int, *,
                         dead_renewed_ms: int = 0) -> bool: ...

        def _drop(self, live: Live, why: str) -> None: ...

        def _gauges(self) -> None: ...

        def _cmd_cb(self, live: Live) -> Any: ...

        def _sync_cb(self, live: Live) -> Any: ...

        def _respond(self, msg: Msg, doc: JSON | bytes) -> None: ...

        def _submit(self, live: Live, applied: Applied, msg: Msg | None,
                    t0: float = 0.0) -> None: ...

        def _after_change(self, live: Live) -> None: ...

        def _engine_failed(self, live: Live) -> None: ...

        async def _renew(self) -> None: ...

        async def _heartbeat(self) -> None: ...

        async def _nats_back(self, timeout: float) -> None: ...

        def _arm(self, live: Live) -> None: ...
