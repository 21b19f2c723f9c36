"""A simulated player: signs in, queues for a quick match or meets its group
in a private room, and plays real games with a bot policy (``ttanjit.bots``)
from the view the server sends it — never more. It acts like the web client
(issue 13): each ``update`` frame brings a burst of events and the seat's
view after them, so it asks for a view (``sync``) only after a resume (on
its ``welcome``) or when an update's events skip a ``game_seq`` (a gap);
then it thinks for a human pause before it moves; it pings every 10 s (as
the web client's net.js), and (optionally) makes mistakes (a move sent
twice: the second is refused) and loses its connection once in a while and
resumes its session.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from ttanjit import bots
from ttanjit.gateway.capture import CaptureWriter
from ttanjit.loadtest.client import Conn, Frame, sign_in
from ttanjit.loadtest.report import hello_refused
from ttanjit.loadtest.stats import Stats

GAME_OVER = ("game_ended", "game_over")  # One Card's game_over: before issue 13
# actions the web client sends without the view's turn_key (not tied to a turn)
ANY_TURN = frozenset({"one_card", "resume"})


@dataclass
class UpdateRead:
    """What one ``update`` frame means to a seat holding events up to ``held``."""

    events: list[dict[str, Any]]  # the new ones (a resume's replay may repeat some)
    take_view: bool  # its view replaces the one held
    gap: bool  # its events skip a game_seq: ask for the whole view (``sync``)
    game_over: bool
    patch: dict[str, Any] | None = None  # fields replacing those of the view held


def read_update(f: Frame, held: int, have_view: bool) -> UpdateRead:
    """An ``update`` frame (issue 13) against ``held``, the game_seq of the
    view the seat holds — as the web client takes it (static/js/updates.js
    ``planUpdate``): an update older than ``held``, or ending at ``held``
    with events (one already taken, replayed after a resume), is dropped
    whole; one ending at ``held`` without events changes the seat's own view
    only (taken); else its events after ``held`` are new and its view is
    taken, and a first event past ``held + 1`` is a gap (the view is still
    the whole truth, but the client asks for a ``sync``). Without a view
    held there is nothing to be behind of: no gap. An update without events
    may carry ``patch`` instead of ``view`` (the shard since 4c4591e: the
    seat's own hidden fields after a move that changed only them), applied
    to the view held."""
    events = [e for e in (f.get("events") or ()) if isinstance(e, dict)]
    last = f.get("game_seq")
    if isinstance(last, int) and (last < held or (last == held and events and have_view)):
        return UpdateRead([], False, False, False)
    new = [e for e in events if not isinstance(e.get("game_seq"), int) or e["game_seq"] > held]
    first = events[0].get("game_seq") if events else None
    gap = have_view and isinstance(first, int) and first > held + 1
    view = f.get("view")
    over = any((e.get("event") or {}).get("type") in GAME_OVER for e in new) \
        or (isinstance(view, dict) and bool(view.get("finished")))
    patch = f.get("patch")
    if isinstance(view, dict) or not isinstance(patch, dict) or events or not have_view:
        patch = None
    return UpdateRead(new, isinstance(view, dict), gap, over, patch)


def seat_flag(view: dict[str, Any], seat: int, key: str) -> bool:
    """A per-seat flag: from the common ``seats`` list (issue 13: ``{seat,
    kind, bot, substituted, autopilot, connected}``) or a game's own list
    by seat (One Card's ``autopilot``, ``resume_pending``)."""
    seats = view.get("seats")
    if isinstance(seats, list) and seat < len(seats) and isinstance(seats[seat], dict) \
            and key in seats[seat]:
        return bool(seats[seat][key])
    flags = view.get(key)
    return bool(isinstance(flags, list) and seat < len(flags) and flags[seat])


@dataclass
class PlayConfig:
    game: str = "onecard"
    seats: int = 4
    mode: str = "quick"  # quick | room
    level: str = "normal"  # the policy the simulated humans play with
    think_ms: tuple[int, int] = (1000, 3000)
    mistake_rate: float = 0.0  # chance a move is sent twice (the copy is refused)
    resume_rate: float = 0.0  # chance per game to lose the connection once and resume
    seed: int | None = None  # room games: the room option ``seed`` (test deployments)
    games: int = 0  # games per player (0 = until the run stops)
    ping_s: float = 10.0  # the web client's PING_MS (it said 15 s: load tester audit)
    proto: bool = False
    options: dict[str, Any] = field(default_factory=dict)


# refusals of queue and room_create that repeating cannot change (docs/websocket.md 6)
LASTING = frozenset({"unknown_game", "bad_seats", "bad_option", "bad_frame", "unauthenticated"})


# a full gateway's refusal (close 1013, server_full): tried again after
# 2.5–5 s, then twice as long each time up to 15–30 s, as the web client
# does (docs/websocket.md 5)
BUSY_S = (5.0, 30.0)
# a resume that fails otherwise (no gateway answers: a kill, a rolling
# upgrade) is tried again with the web client's backoff (0.5 s doubling to
# 5 s, each wait half to all of it) for this long before it counts as lost
RESUME_FOR_S = 60.0


def spread(wait: float, rng: random.Random) -> float:
    """Half the wait and up to as much again at random (web client net.js)."""
    return wait / 2 + rng.random() * wait / 2


class GatewayFull(RuntimeError):
    """The gateway refused the hello: it holds its most players
    (``server_full``, close 1013)."""


class Refused(RuntimeError):
    """A queue or room_create refused for good: the player (or its room's
    group) cannot play."""


class RoomRetry(RuntimeError):
    """The host's room_create was refused for now: the group tries again."""


class RoomGroup:
    """The players who meet in one private room per game: the first member
    creates it, the others join by its code in member order (so seats are
    the same every time), the host starts when all are in."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.members: list[Player] = []
        self._codes: dict[int, asyncio.Future[str]] = {}
        self._joined: dict[int, int] = {}
        self._full: dict[int, asyncio.Event] = {}

    def code(self, rnd: int) -> asyncio.Future[str]:
        if rnd not in self._codes:
            self._codes[rnd] = asyncio.get_running_loop().create_future()
        return self._codes[rnd]

    def full(self, rnd: int) -> asyncio.Event:
        return self._full.setdefault(rnd, asyncio.Event())

    def joined(self, rnd: int) -> int:
        return self._joined.get(rnd, 0)

    def join(self, rnd: int) -> None:
        self._joined[rnd] = self._joined.get(rnd, 0) + 1
        if self._joined[rnd] == self.size:
            self.full(rnd).set()


class Player:
    def __init__(self, n: int, base: str, cfg: PlayConfig, stats: Stats,
                 http: httpx.AsyncClient, writer: CaptureWriter | None = None,
                 group: RoomGroup | None = None, finished: set[str] | None = None) -> None:
        self.n = n
        self.base = base
        self.cfg = cfg
        self.stats = stats
        self.http = http
        self.writer = writer
        self.group = group
        self.finished_games = finished if finished is not None else set()
        self.rng = random.Random(n * 7919 + (cfg.seed or 0))
        self.ident: dict[str, Any] = {}
        self.conn: Conn | None = None
        self.label = f"p{n}"
        self.reconnects = 0
        self.game_id = ""
        self.seat: int | None = None
        self.view: dict[str, Any] | None = None
        self.view_seq = 0
        self.min_seq = 0  # act only on a view at least this fresh
        self.matched: asyncio.Future[Frame] | None = None
        self.game_done = asyncio.Event()
        self.moved = asyncio.Event()  # this game's first own move was accepted
        self.in_game = False
        self.games_played = 0
        self.cmd = 0
        self._think: asyncio.Task[None] | None = None
        self._acting = False
        self._pressed: Any = None
        self._dropped_this_game = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self.stopping = False
        self.online = False
        self.admitted = False  # a gateway took its first hello (play.py: not_admitted)
        self.refused = False  # a full gateway refused it (server_full) at least once
        self.round = 0

    # -- connection --------------------------------------------------------------
    async def start(self) -> None:
        self.ident = await sign_in(self.http, self.base, f"부하{self.n}")
        await self._connect_until_in(None, None)
        self.admitted = True
        self._online(True)

    def _online(self, on: bool) -> None:
        if on != self.online:
            self.online = on
            self.stats.connected += 1 if on else -1

    async def _connect(self, resume: dict[str, Any] | None) -> None:
        label = self.label if not self.reconnects else f"{self.label}.{self.reconnects}"
        if self.writer is not None:
            meta: dict[str, Any] = {"nickname": self.ident["nickname"]}
            if self.reconnects:
                meta["player_of"] = self.label
            self.writer.open_conn(label, **meta)
        conn = Conn(self.base, self.stats, self.on_frame, self.writer, label, self.cfg.proto)
        await conn.connect()
        self.conn = conn
        welcome = await conn.hello(self.ident["token"], resume)
        if welcome.get("type") != "welcome":
            if welcome.get("code") == "server_full":
                raise GatewayFull(hello_refused(welcome))
            raise RuntimeError(hello_refused(welcome))
        self._spawn(self._watch(conn))

    async def _connect_until_in(self, resume: dict[str, Any] | None,
                                give_up_s: float | None) -> None:
        """Connect as the web client does: a full gateway's refusal is tried
        again for as long as it lasts (counted ``refused_full``), another
        failure for ``give_up_s`` (None: not at all) — a player resuming
        after their gateway went tried once, and a second gateway still
        starting lost them for good (overload audit's left-alone item)."""
        t0 = time.monotonic()
        busy, backoff = 0.0, 0.5
        while True:
            try:
                await self._connect(resume)
                return
            except GatewayFull:
                self.refused = True
                self.stats.count["refused_full"] += 1
                busy = min(busy * 2 if busy else BUSY_S[0], BUSY_S[1])
                wait = spread(busy, self.rng)
            except Exception:
                wait = spread(backoff, self.rng)
                if give_up_s is None or time.monotonic() - t0 + wait > give_up_s:
                    raise
                backoff = min(backoff * 2, 5.0)
            if self.stopping:
                raise RuntimeError("stopped while connecting")
            await asyncio.sleep(wait)
            self.reconnects += 1

    async def _watch(self, conn: Conn) -> None:
        """An unexpected close: resume the session like a real client."""
        await conn.closed.wait()
        if conn.closing or self.stopping or conn is not self.conn:
            return
        self._online(False)
        await asyncio.sleep(self.rng.uniform(0.2, 1.0))
        await self._resume(conn)

    async def _resume(self, old: Conn) -> None:
        self.reconnects += 1
        try:
            await self._connect_until_in({"session": old.session, "last_seq": old.last_seq},
                                         RESUME_FOR_S)
        except Exception:  # noqa: BLE001 - no gateway took it for a minute
            self.stats.count["reconnect_failures"] += 1
            return
        self._online(True)

    async def drop_and_resume(self) -> None:
        """Lose the connection (no close handshake) and resume 0.3–1.5 s later."""
        old = self.conn
        if old is None:
            return
        for _ in range(200):  # between requests, so the counts of both sides agree
            if old.quiet():
                break
            await asyncio.sleep(0.01)
        old.drop()
        await old.closed.wait()
        self._online(False)
        self.stats.count["drops"] += 1
        await asyncio.sleep(self.rng.uniform(0.3, 1.5))
        await self._resume(old)

    def _spawn(self, coro: Any) -> None:
        t = asyncio.create_task(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def send(self, frame: Frame) -> asyncio.Future[Frame]:
        assert self.conn is not None
        return await self.conn.send(frame)

    async def request(self, frame: Frame, timeout: float = 30.0) -> Frame:
        assert self.conn is not None
        return await self.conn.request(frame, timeout)

    # -- the run -----------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        self._spawn(self._pinger(stop))
        while not stop.is_set():
            if self.cfg.games and self.games_played >= self.cfg.games:
                break
            ok = await self._find_game(stop)
            if not ok:
                if stop.is_set():
                    break
                await asyncio.sleep(1.0)
                continue
            await self._play(stop)
            await asyncio.sleep(self.rng.uniform(0.5, 1.5))

    async def _pinger(self, stop: asyncio.Event) -> None:
        await asyncio.sleep(self.rng.uniform(0, self.cfg.ping_s))
        while not stop.is_set():
            if self.conn is not None and not self.conn.closed.is_set():
                await self.send({"type": "ping", "client_ms": 0})
            await asyncio.sleep(self.cfg.ping_s)

    async def _find_game(self, stop: asyncio.Event) -> bool:
        self.matched = asyncio.get_running_loop().create_future()
        self.game_done = asyncio.Event()
        self.moved = asyncio.Event()
        if self.cfg.mode == "room" and self.group is not None:
            if not await self._room():
                return False
        else:
            ans = await self.request({"type": "queue", "game": self.cfg.game,
                                      "seats": self.cfg.seats})
            if ans.get("type") != "queued":
                if ans.get("code") in LASTING:  # asking again cannot change it
                    raise Refused(f"queue refused: {ans['code']} ({ans.get('message', '')})")
                return False
        waiter: asyncio.Future[Any] = asyncio.ensure_future(self.matched)
        stopper: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        stopper.cancel()
        if not waiter.done():
            waiter.cancel()
            if self.cfg.mode == "quick":
                await self.send({"type": "cancel_queue"})
            return False
        return True

    async def _room(self) -> bool:
        g = self.group
        assert g is not None
        self.round += 1
        rnd, code = self.round, g.code(self.round)
        if g.members[0] is self:
            opts = dict(self.cfg.options)
            if self.cfg.seed is not None:
                opts["seed"] = self.cfg.seed
            frame: Frame = {"type": "room_create", "game": self.cfg.game, "seats": g.size}
            if opts:
                frame["options"] = opts
            ans = await self.request(frame)
            if ans.get("type") != "room":
                err = ans.get("code") or ans.get("type")
                hint = ("; --seed needs a server started with TTANJIT_TEST_OPTIONS=1 "
                        "(as --local does)" if err == "bad_option" and self.cfg.seed is not None
                        else "")
                refused = Refused(f"room_create refused: {err} ({ans.get('message', '')}){hint}")
                code.set_exception(refused if err in LASTING else RoomRetry(str(refused)))
                code.exception()  # retrieved: the members waiting for it read it (or none do)
                if err in LASTING:
                    raise refused  # it will be refused every time: the group fails, loudly
                return False  # the gateway is busy or away: every member tries the next round
            code.set_result(ans["room"]["code"])
            g.join(rnd)
            await asyncio.wait_for(g.full(rnd).wait(), 60)
            ans = await self.request({"type": "room_start"}, 60)
            return ans.get("type") == "matched"
        try:
            room_code = await asyncio.wait_for(asyncio.shield(code), 60)
        except RoomRetry:
            return False
        idx = g.members.index(self)
        while g.joined(rnd) != idx:  # join in member order: the same seats every time
            await asyncio.sleep(0.01)
        ans = await self.request({"type": "room_join", "code": room_code})
        g.join(rnd)
        return ans.get("type") == "room"

    async def _play(self, stop: asyncio.Event) -> None:
        waiter = asyncio.ensure_future(self.game_done.wait())
        stopper = asyncio.ensure_future(stop.wait())
        if self.cfg.resume_rate and self.rng.random() < self.cfg.resume_rate:
            self._spawn(self._drop_later())
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        stopper.cancel()
        if self.in_game:
            self.in_game = False
            self.stats.in_game -= 1

    async def _drop_later(self) -> None:
        # 1-4 s into the game, or at the player's first move if that comes
        # sooner: a short game (fast thinking) could end before the drop, and
        # the resume it is there for was not exercised (CI: 0 drops of 4)
        moved = self.moved
        try:
            await asyncio.wait_for(moved.wait(), self.rng.uniform(1.0, 4.0))
        except TimeoutError:
            pass
        if self.in_game and not self.stopping:
            await self.drop_and_resume()

    # -- frames ---------------------------------------------------------------------------
    def on_frame(self, f: Frame) -> None:
        kind = f.get("type")
        if kind == "matched":
            self.game_id, self.seat = f["game_id"], f.get("seat")
            self.view, self.view_seq, self.min_seq = None, 0, 0
            self._pressed = None
            if not self.in_game:
                self.in_game = True
                self.stats.in_game += 1
            if self.matched is not None and not self.matched.done():
                self.matched.set_result(f)
        elif kind == "update" and f.get("game_id") == self.game_id:
            self._update(f)
        elif kind == "view" and f.get("game_id") == self.game_id:
            seq = int(f.get("game_seq") or 0)
            if self.view is not None and seq < self.view_seq:
                return  # older than the updates already taken
            self._take_view(f.get("view") or {}, seq)
        elif kind == "game_result" and f.get("game_id") == self.game_id:
            self._game_over()  # the game left its shard while this seat was away
        elif kind == "welcome":
            named = f.get("game_id")
            if named and not self.game_id:
                self.game_id, self.seat = named, f.get("seat")
            # like the web client: a welcome naming the game is followed by
            # what was missed or the whole view (docs/websocket.md 4), nothing
            # to ask for; one without it asks (it synced after every resume,
            # the gapless too: load tester audit)
            elif self.reconnects and self.game_id and named != self.game_id and self.in_game \
                    and not self.game_done.is_set():
                self._sync("resume")

    def _update(self, f: Frame) -> None:
        self.stats.count["updates"] += 1
        u = read_update(f, self.view_seq, self.view is not None)
        self.stats.count["update_events"] += len(u.events)
        if u.gap:
            self.stats.count["game_seq_gaps"] += 1
        if u.take_view:
            self._take_view(f["view"], max(self.view_seq, int(f.get("game_seq") or 0)),
                            u.game_over)
        elif u.patch is not None and self.view is not None:
            self.stats.count["update_patches"] += 1
            self._take_view({**self.view, **u.patch}, self.view_seq)
        elif u.game_over:
            self._game_over()
        if u.gap and not self.game_done.is_set():
            self._sync("gap")

    def _take_view(self, view: dict[str, Any], seq: int, over: bool = False) -> None:
        self.view, self.view_seq = view, seq
        if isinstance(view.get("seat"), int):
            self.seat = view["seat"]
        if over or view.get("finished"):
            self._game_over()
        else:
            self._consider()

    def _sync(self, why: str) -> None:
        """Ask for the seat's whole view (only on a resume or a gap)."""
        if self.conn is not None and not self.conn.closed.is_set():
            self.stats.count[f"syncs_{why}"] += 1
            self._spawn(self.send({"type": "sync", "game_id": self.game_id}))

    def _game_over(self) -> None:
        if self.game_done.is_set():
            return
        if self.game_id and self.game_id not in self.finished_games:
            self.finished_games.add(self.game_id)
            self.stats.count["games_finished"] += 1
        self.games_played += 1
        self.game_done.set()
        if self._think is not None:
            self._think.cancel()

    def _consider(self) -> None:
        """A fresh view: plan a move (after a human pause), or a press."""
        v, seat = self.view, self.seat
        if v is None or seat is None or self._acting or self.view_seq < self.min_seq \
                or self.game_done.is_set() or self.stopping:
            return
        if self.cfg.game == "onecard":
            key = bots.module("onecard").window_key(v)
            if key is not None and key != self._pressed:
                self._pressed = key
                delay = bots.press_after_ms("onecard", "normal", seat, v, self.rng)
                if delay is not None:
                    self._spawn(self._press(key, delay))
        if self._think is None or self._think.done():
            self._think = asyncio.create_task(self._act_later())

    async def _press(self, key: Any, delay_ms: int) -> None:
        await asyncio.sleep(delay_ms / 1000)
        v = self.view
        if v is None or bots.module("onecard").window_key(v) != key or self.game_done.is_set():
            return
        await self._action({"type": "one_card"})

    async def _act_later(self) -> None:
        v, seat = self.view, self.seat
        assert v is not None and seat is not None
        if seat_flag(v, seat, "autopilot") and not seat_flag(v, seat, "resume_pending"):
            await self._action({"type": "resume"})
            return
        if bots.decide(self.cfg.game, self.cfg.level, seat, v, self.rng, 20) is None:
            return
        lo, hi = self.cfg.think_ms
        await asyncio.sleep(self.rng.uniform(lo, hi) / 1000)
        v = self.view  # the latest view: the table may have moved meanwhile
        if v is None or self.game_done.is_set() or self.view_seq < self.min_seq:
            return
        action = bots.decide(self.cfg.game, self.cfg.level, seat, v, self.rng, 20)
        if action is None:
            return
        if action["type"] not in ANY_TURN and isinstance(v.get("turn_key"), int):
            # as the web client: applied only on the turn it was chosen on
            # (docs/websocket.md 3)
            action = {**action, "turn_key": v["turn_key"]}
        self._acting = True
        try:
            ans = await self._action(action)
            if ans.get("type") == "result":
                self.moved.set()
                self.min_seq = int(ans.get("game_seq") or 0)
                if self.cfg.mistake_rate and self.rng.random() < self.cfg.mistake_rate:
                    await self._action(action)  # a double tap: refused
        finally:
            self._acting = False
        # the update our move made may have come while we waited for its
        # result (and was not considered then): look at the latest view again
        # once this task is done (no sync: the updates carry the view)
        asyncio.get_running_loop().call_soon(self._consider)

    async def _action(self, action: dict[str, Any]) -> Frame:
        self.cmd += 1
        try:
            fut = await self.send({"type": "action", "game_id": self.game_id,
                                   "cmd_id": f"c{self.cmd}", "action": action})
            return await asyncio.wait_for(fut, 30)
        except TimeoutError:
            return {"type": "error", "code": "timeout"}

    async def stop(self) -> None:
        self.stopping = True
        for t in list(self._tasks):
            t.cancel()
        if self._think is not None:
            self._think.cancel()
        if self.conn is not None:
            await self.conn.close()
        self._online(False)
        if self.in_game:
            self.in_game = False
            self.stats.in_game -= 1
