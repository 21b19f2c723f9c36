"""관전 count: how many people watch a game, across every gateway (issue 15;
docs/websocket.md 3.5).

Each gateway knows only its own spectators, so each one owns a key per game
in the KV bucket ``ttanjit_watchers`` (memory storage, entries expire after
10 min): ``<game_id>.<gateway id>`` = ``{"gw", "n", "v", "ms"}`` — ``n`` its
spectators of that game, ``v`` a per-gateway version that only grows, ``ms``
when it was written. A change is written there and published on the core
subject ``ttanjit.v1.game.<game_id>.watchers`` (same document).

A gateway with a local connection interested in a game (a player at the
table, after its first ``sync``, or a spectator) subscribes to that subject
once, then reads the game's keys (subscribe first: nothing is missed), keeps
the newest ``v`` per gateway, and sends ``{"type": "spectators", "game_id",
"count"}`` to those connections whenever the sum changes. Every minute a
gateway re-writes its non-zero counts; counts not re-written for 3 minutes
(a gateway that died) no longer count.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from typing import Any

import orjson

from ttanjit.common.nats import WATCHERS_BUCKET, Subjects, kv_entries, kv_keys

log = logging.getLogger("ttanjit.gateway")

REFRESH_S = 60.0
FRESH_MS = 180_000


def now_ms() -> int:
    return int(time.time() * 1000)


class _Game:
    __slots__ = ("conns", "counts", "total", "sub", "ready", "waiting")

    def __init__(self) -> None:
        self.conns: set[Any] = set()
        self.counts: dict[str, tuple[int, int, int]] = {}  # gateway -> (v, n, ms)
        self.total = 0
        self.sub: Any = None
        self.ready = asyncio.Event()
        self.waiting = 0  # follows waiting for ``ready`` (not in ``conns`` yet)


class Watchers:
    """One per gateway (:func:`of`)."""

    def __init__(self, gw: Any) -> None:
        self.gw = gw
        self.id = secrets.token_hex(6)
        self.local: dict[str, int] = {}  # game -> spectators on this gateway
        self.v = 0
        self.kv: Any = None
        self.games: dict[str, _Game] = {}
        self.roles: dict[str, dict[str, str]] = {}  # connection id -> role -> game
        self.lock = asyncio.Lock()
        self._loop: asyncio.Task[None] | None = None

    def subject(self, gid: str) -> str:
        return Subjects(self.gw.prefix).watchers(gid)

    async def bucket(self) -> Any:
        if self.kv is None:
            # created with the others at start (common.nats.ensure_jetstream)
            self.kv = await self.gw.nc.jetstream().key_value(WATCHERS_BUCKET)
        return self.kv

    # -- this gateway's spectators ---------------------------------------------
    async def change(self, gid: str, delta: int) -> None:
        n = max(0, self.local.get(gid, 0) + delta)
        if n:
            self.local[gid] = n
        else:
            self.local.pop(gid, None)
        await self._put(gid, n)
        if self._loop is None:
            self._loop = asyncio.create_task(self._refresh())

    async def _put(self, gid: str, n: int) -> None:
        async with self.lock:  # versions reach the bucket in order
            self.v += 1
            doc = orjson.dumps({"gw": self.id, "n": n, "v": self.v, "ms": now_ms()})
            try:
                kv = await self.bucket()
                if n:
                    await kv.put(f"{gid}.{self.id}", doc)
                else:
                    await kv.delete(f"{gid}.{self.id}")
            except Exception as exc:  # noqa: BLE001 - JetStream away: the subject still tells
                log.warning("watchers bucket: %r", exc, extra={"game": gid})
            try:
                await self.gw.nc.publish(self.subject(gid), doc)
            except Exception:  # noqa: BLE001 - NATS away
                pass

    async def _refresh(self) -> None:
        while True:
            await asyncio.sleep(REFRESH_S)
            for gid, n in list(self.local.items()):
                await self._put(gid, n)
            for gid in list(self.games):  # counts of a gateway that died age out
                await self._recount(gid)

    # -- connections that show the count ---------------------------------------
    async def follow(self, c: Any, gid: str, role: str) -> None:
        """``c`` hears the count of ``gid`` (role ``own``: its table, or
        ``watch``: the game it spectates); one game per role."""
        roles = self.roles.setdefault(c.id, {})
        if roles.get(role) == gid:
            return
        if role in roles:
            await self._drop(c, roles.pop(role))
        roles[role] = gid
        g = self.games.get(gid)
        if g is None:
            g = self.games[gid] = _Game()
            try:
                g.sub = await self.gw.nc.subscribe(self.subject(gid), cb=self._on_msg)
                await self._load(gid, g)
            except Exception as exc:  # noqa: BLE001 - NATS away: no count for now
                # (a side feature: the sync or the update that asked for it
                # goes on; the next follow of the game tries again)
                log.warning("watchers: cannot follow the game: %r", exc, extra={"game": gid})
                self.games.pop(gid, None)
            finally:
                g.ready.set()
        else:
            g.waiting += 1
            try:
                await g.ready.wait()
            finally:
                g.waiting -= 1
        if self.games.get(gid) is not g:  # its subscription failed
            if self.roles.get(c.id, {}).get(role) == gid:
                del self.roles[c.id][role]
            return
        if c.closed or self.roles.get(c.id, {}).get(role) != gid:
            # gone, or on to another game, while the subscription was made:
            # the unfollow then found the game not ready and left it — let
            # it go now (it stayed subscribed for good: soak audit)
            if c.closed and self.roles.get(c.id, {}).get(role) == gid:
                self.roles[c.id].pop(role)
                if not self.roles[c.id]:
                    self.roles.pop(c.id)
            await self._drop(c, gid)
            return
        g.conns.add(c)
        await c.send({"type": "spectators", "game_id": gid, "count": g.total})

    async def unfollow(self, c: Any, role: str | None = None) -> None:
        roles = self.roles.get(c.id, {})
        for r in [role] if role else list(roles):
            gid = roles.pop(r, None) if r else None
            if gid:
                await self._drop(c, gid)
        if not roles:
            self.roles.pop(c.id, None)

    async def _drop(self, c: Any, gid: str) -> None:
        if gid in self.roles.get(c.id, {}).values():
            return  # still followed in its other role
        g = self.games.get(gid)
        if g is None:
            return
        g.conns.discard(c)
        # (a table-mate's follow still waiting for the subscription keeps it)
        if not g.conns and g.ready.is_set() and not g.waiting:
            self.games.pop(gid, None)
            if g.sub is not None:
                try:
                    await g.sub.unsubscribe()
                except Exception:  # noqa: BLE001 - NATS gone
                    pass

    async def _load(self, gid: str, g: _Game) -> None:
        try:  # the game's keys only
            kv = await self.bucket()
            for entry in await kv_entries(kv, f"{gid}.*"):
                self._merge(g, orjson.loads(entry.value or b"{}"))
        except Exception as exc:  # noqa: BLE001 - JetStream away: the subject still tells
            log.warning("watchers bucket: %r", exc, extra={"game": gid})
        g.total = self._sum(g)

    @staticmethod
    def _merge(g: _Game, doc: dict[str, Any]) -> None:
        gw, v = doc.get("gw"), doc.get("v")
        if not isinstance(gw, str) or not isinstance(v, int):
            return
        if gw in g.counts and g.counts[gw][0] >= v:
            return
        g.counts[gw] = (v, int(doc.get("n") or 0), int(doc.get("ms") or 0))

    @staticmethod
    def _sum(g: _Game) -> int:
        fresh = now_ms() - FRESH_MS
        return sum(n for _, n, ms in g.counts.values() if ms >= fresh)

    async def _on_msg(self, msg: Any) -> None:
        gid = msg.subject.split(".")[-2]
        g = self.games.get(gid)
        if g is None:
            return
        try:
            self._merge(g, orjson.loads(msg.data))
        except orjson.JSONDecodeError:
            return
        await self._recount(gid)

    async def _recount(self, gid: str) -> None:
        g = self.games.get(gid)
        if g is None or not g.ready.is_set():
            return
        total = self._sum(g)
        if total == g.total:
            return
        g.total = total
        frame = {"type": "spectators", "game_id": gid, "count": total}
        for c in list(g.conns):
            if not c.closed:
                await c.send(frame)


def of(gw: Any) -> Watchers:
    w: Watchers | None = getattr(gw, "watchers", None)
    if w is None:
        w = Watchers(gw)
        gw.watchers = w
    return w


async def counts(gw: Any) -> dict[str, int]:
    """Spectators per game over every gateway (the 관전 list)."""
    try:
        kv = await of(gw).bucket()
        keys = await kv_keys(kv)
    except Exception:  # noqa: BLE001 - NATS away
        return {}
    fresh = now_ms() - FRESH_MS
    out: dict[str, int] = {}
    for k in keys:
        try:
            doc = orjson.loads((await kv.get(k)).value or b"{}")
        except Exception:  # noqa: BLE001 - deleted meanwhile
            continue
        if int(doc.get("ms") or 0) >= fresh:
            gid = k.split(".")[0]
            out[gid] = out.get(gid, 0) + int(doc.get("n") or 0)
    return out
