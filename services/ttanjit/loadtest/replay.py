"""``ttanjit loadtest replay``: a capture replayed against a deployment at
``speed`` times its pace, fanned out into ``fanout`` copies of its players.

Per copy, every captured player signs in anew (new player id, token and
session) and sends the captured client frames with their recorded pauses
(divided by ``speed``); what ties the copies to the capture:

- **lobby order**: lobby frames (rooms, queue) of a copy go one at a time in
  the capture's order, each after the previous one's answer, so the players
  of a copy take the same seats in their own room; room codes and game ids
  are remapped per copy (the answer's new code replaces the captured one);
- **seeded deals**: a room created with the test option ``seed`` (the
  load tester's ``record --mode room --seed N``; the server must run with
  ``TTANJIT_TEST_OPTIONS=1``) deals every copy the same cards, so the
  captured moves stay legal;
- **causal order**: a game frame is sent only once the player has received
  as many of its game's events (``game_seq`` of its ``update`` frames, or
  the ``event`` frames of a capture made before issue 13) as it had when the
  frame was captured — timer events included, presence events
  (``disconnected``, ``reconnected``) not: they never change whose turn it
  is, and where they fall among the moves depends on the timing of the
  drops, so counting them could let a move go before the one it answers
  (:class:`Progress`) — so moves of different players keep their order at
  any speed;
- **turn keys**: an action's ``turn_key`` (the turn it was chosen on,
  docs/websocket.md 3) is a game time of the captured game, not the
  copy's: an action the capture's game refused ``turn_passed`` (a double
  tap, a move kept while offline) goes with a key no turn has, refused
  again; any other goes without its key, so it lands on the turn the
  causal order puts it on, as the captured one did (:func:`copy_turn_key`);
- **outcomes**: every answer is compared with the captured one: accepted vs
  refused (and the refusal code); each difference is a divergence.

Quick-match captures replay too, but the matchmaker then seats players of
different copies together and deals at random, so their moves diverge:
capture room games with a seed when the outcomes must reproduce. A game
dealt at random (its ``matched`` options have no ``seed``), or one whose
answers differed from the capture's, does not follow the capture's events:
its players do not wait for them (a wait under way ends within
:data:`POLL_S`) and the capture's pace alone orders their moves; a game
seen ending ends every wait for it too. So an unseeded capture replays at
its pace instead of stalling until a turn timer or ``--timeout`` moves it on.

A seeded room that the server refuses with ``bad_option`` (a server not
started with ``TTANJIT_TEST_OPTIONS=1``) ends the whole replay at once
(:class:`Unreplayable`): no copy of it could follow the capture.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from ttanjit.gateway.capture import CLIENT, SERVER, Capture, ConnCapture, Line, load
from ttanjit.loadtest.client import ANSWERED_BY, Conn, Frame, sign_in
from ttanjit.loadtest.play import ctrl_c_ends_run
from ttanjit.loadtest.player import read_update
from ttanjit.loadtest.report import hello_refused, message
from ttanjit.loadtest.stats import ANSWERS, Stats

LOBBY = frozenset({"queue", "cancel_queue", "room_create", "room_join", "room_leave",
                   "room_options", "room_add_bot", "room_remove_bot", "room_start"})
GAME = frozenset({"action", "sync"})
# lobby frames that lead to a game (a refusal: the capture's next game is not coming)
SEATING = frozenset({"queue", "room_create", "room_join", "room_start"})
# server frames that say how far the player's game has gone (its game_seq):
# ``update`` (issue 13: a burst's events and the view after them; its
# game_seq is the last event's), ``view``, ``result``, and ``event`` of
# captures made before issue 13
SEQ_FRAMES = frozenset({"update", "view", "result", "event"})
# events that say who is connected: not part of the causal order (Progress)
PRESENCE_EVENTS = frozenset({"disconnected", "reconnected"})
# how often a wait for a game's events looks whether the game has diverged
POLL_S = 1.0


class Progress:
    """How far a player has followed each of its games: the last
    ``game_seq`` received, less the presence events among them. Presence
    events are told by the events of ``update`` (and old ``event``) frames,
    each once however often it is replayed; a ``view`` frame (a resume that
    could not replay) moves the ``game_seq`` on without saying what came in
    between, so what it skipped counts as moves."""

    def __init__(self) -> None:
        self.seq: dict[str, int] = {}
        self.presence: dict[str, set[int]] = {}

    def see(self, gid: str, f: Frame) -> None:
        kind = f.get("type")
        if kind == "event":  # a capture made before issue 13: one event a frame
            events = [{"game_seq": f.get("game_seq"), "event": f.get("event")}]
        else:
            events = f.get("events") if kind == "update" else None
        for e in events or []:
            ev = e.get("event") if isinstance(e, dict) else None
            if isinstance(ev, dict) and ev.get("type") in PRESENCE_EVENTS \
                    and isinstance(e.get("game_seq"), int):
                self.presence.setdefault(gid, set()).add(e["game_seq"])
        if kind in SEQ_FRAMES and f.get("game_seq"):
            self.seq[gid] = max(self.seq.get(gid, 0), int(f["game_seq"]))

    def at(self, gid: str) -> int:
        """Game events received other than presence events."""
        seq = self.seq.get(gid, 0)
        return seq - sum(1 for n in self.presence.get(gid, ()) if n <= seq)


def copy_turn_key(f: Frame, answer: Frame | None) -> Frame:
    """A captured ``action`` frame as a copy sends it (module docstring,
    turn keys): its ``turn_key`` -1 (no turn's) when the captured answer was
    ``turn_passed``, else dropped."""
    action = f.get("action")
    if f.get("type") != "action" or not isinstance(action, dict) or "turn_key" not in action:
        return f
    if (answer or {}).get("code") == "turn_passed":
        return {**f, "action": {**action, "turn_key": -1}}
    return {**f, "action": {k: v for k, v in action.items() if k != "turn_key"}}


# -- what the capture says, per client frame (sans-I/O) --------------------------
@dataclass
class Step:
    conn: int  # index of the player's connection
    line: Line
    answer: Frame | None = None  # the captured answer
    need_seq: int = 0  # game events (not presence) the player had received when it sent it
    game_no: int = -1  # which of the player's games (by its matched frames) it belongs to
    lobby_no: int = -1  # global order of lobby frames in the capture
    act: tuple[str, int] | None = None  # (captured game id, order of actions in that game)


def expected_answers(lines: list[Line]) -> dict[int, Frame]:
    """Index of each client frame -> its captured answer (the same matching
    as :class:`~ttanjit.loadtest.client.Conn`: by ``cmd_id`` for actions,
    by ``ref`` for errors, else the oldest pending request the type answers)."""
    out: dict[int, Frame] = {}
    pending: dict[str, list[int]] = {}
    cmds: dict[str, int] = {}
    for i, ln in enumerate(lines):
        f = ln.frame
        kind = f.get("type", "")
        if ln.direction == CLIENT:
            if kind == "action":
                cmds[str(f.get("cmd_id"))] = i
            elif kind in ANSWERS:
                pending.setdefault(kind, []).append(i)
            continue
        if ln.direction != SERVER:
            continue
        cmd = f.get("cmd_id")
        if kind in ("result", "error") and cmd in cmds:
            out[cmds.pop(cmd)] = f
            continue
        cands = (f["ref"],) if kind == "error" and f.get("ref") else ANSWERED_BY.get(kind, ())
        best = None
        for req in cands:
            q = pending.get(req)
            if q and (best is None or q[0] < pending[best][0]):
                best = req
        if best is not None:
            out[pending[best].pop(0)] = f
    return out


@dataclass
class PlayerPlan:
    label: str
    nickname: str
    conns: list[ConnCapture]
    steps: list[Step] = field(default_factory=list)
    opens: list[float] = field(default_factory=list)  # capture time each connection opened
    closes: list[tuple[float, int | None, str]] = field(default_factory=list)
    games: list[str] = field(default_factory=list)  # captured game ids, in matched order


def plan(capture: Capture) -> tuple[list[PlayerPlan], float]:
    """The steps of every captured player; the capture's first time."""
    plans: list[PlayerPlan] = []
    lobby: list[tuple[float, int, int]] = []
    actions: list[tuple[float, str, int, int]] = []
    t_first = min((ln.t for c in capture.conns.values() for ln in c.lines), default=0.0)
    for group in capture.players():
        first = group[0]
        pp = PlayerPlan(first.label, str(first.meta.get("nickname") or first.label), group)
        seen = Progress()
        current = ""
        for ci, conn in enumerate(group):
            pp.opens.append(conn.lines[0].t if conn.lines else t_first)
            answers = expected_answers(conn.lines)
            close = (conn.lines[-1].t if conn.lines else t_first, None, "server")
            for i, ln in enumerate(conn.lines):
                f = ln.frame
                if ln.direction == SERVER:
                    kind = f.get("type")
                    if kind == "matched":
                        current = str(f.get("game_id"))
                        if current not in pp.games:
                            pp.games.append(current)
                    elif kind == "welcome" and f.get("game_id") and not current:
                        current = str(f["game_id"])
                        if current not in pp.games:
                            pp.games.append(current)
                    if kind in SEQ_FRAMES:
                        seen.see(str(f.get("game_id") or current), f)
                elif ln.direction == CLIENT:
                    kind = f.get("type", "")
                    step = Step(ci, ln, answers.get(i))
                    if kind in GAME:
                        gid = str(f.get("game_id") or current)
                        step.need_seq = seen.at(gid)
                        step.game_no = pp.games.index(gid) if gid in pp.games else -1
                    if kind in LOBBY:
                        lobby.append((ln.t, len(plans), len(pp.steps)))
                    if kind == "action":
                        actions.append((ln.t, str(f.get("game_id") or current), len(plans),
                                        len(pp.steps)))
                    pp.steps.append(step)
                elif ln.direction == "close":
                    close = (ln.t, f.get("code"), str(f.get("by") or "server"))
            pp.closes.append(close)
        plans.append(pp)
    for no, (_, pi, si) in enumerate(sorted(lobby)):
        plans[pi].steps[si].lobby_no = no
    per_game: dict[str, int] = {}
    for _, gid, pi, si in sorted(actions):
        plans[pi].steps[si].act = (gid, per_game.get(gid, 0))
        per_game[gid] = per_game.get(gid, 0) + 1
    return plans, t_first


# -- the replay (asyncio) -----------------------------------------------------------
SEED_HINT = ("the capture's rooms are dealt with a seed: --seed needs a server started "
             "with TTANJIT_TEST_OPTIONS=1 (as --local does)")


class Unreplayable(RuntimeError):
    """The server refuses what every copy of the capture needs (a seeded
    room without test options): the replay stops, with this reason."""


class Copy:
    """What the players of one copy share: the lobby turn and the maps from
    captured room codes and game ids to this copy's."""

    def __init__(self, k: int, lobby_frames: int, diverged: set[str]) -> None:
        self.k = k
        self.lobby_done = [asyncio.Event() for _ in range(lobby_frames)]
        self.codes: dict[str, str] = {}
        self.acted: dict[tuple[str, int], asyncio.Event] = {}
        # the games (ids of this replay's) that do not follow the capture,
        # shared by every copy: a quick match seats copies together
        self.diverged = diverged

    def act_done(self, key: tuple[str, int]) -> asyncio.Event:
        return self.acted.setdefault(key, asyncio.Event())


class Divergences:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []
        self.checked = 0
        self.same = 0

    def compare(self, k: int, label: str, step: Step, got: Frame) -> None:
        exp = step.answer
        if exp is None:
            return
        self.checked += 1
        f = step.line.frame
        exp_ok, got_ok = exp.get("type") != "error", got.get("type") != "error"
        if exp_ok == got_ok and (exp_ok or exp.get("code") == got.get("code")):
            self.same += 1
            return
        d: dict[str, Any] = {"copy": k, "player": label, "type": f.get("type"),
                             "t_ms": step.line.t,
                             "expected": "accepted" if exp_ok else f"refused:{exp.get('code')}",
                             "got": "accepted" if got_ok else f"refused:{got.get('code')}"}
        if f.get("type") == "action":
            d["cmd_id"] = f.get("cmd_id")
            d["action"] = f.get("action")
        self.items.append(d)

    def stalled(self, k: int, label: str, step: Step, why: str) -> None:
        self.items.append({"copy": k, "player": label, "type": step.line.frame.get("type"),
                           "t_ms": step.line.t, "expected": "sent", "got": why})


class Pacer:
    """Keeps a connection under the gateway's rate limit (the ``limits`` of
    its ``welcome``), with a margin: a faster replay is never throttled by
    the server (a throttled frame is not done: its answer would differ)."""

    def __init__(self, rate: float = 20.0, burst: float = 40.0, margin: float = 0.8) -> None:
        self.set(rate, burst, margin)
        self.tokens = self.burst
        self.last = time.monotonic()

    def set(self, rate: float, burst: float, margin: float = 0.8) -> None:
        self.rate, self.burst = rate * margin, max(1.0, burst * margin / 2)

    async def take(self) -> None:
        while True:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
            self.last = now
            if self.tokens >= 1:
                self.tokens -= 1
                return
            await asyncio.sleep((1 - self.tokens) / self.rate)


class ReplayPlayer:
    def __init__(self, pp: PlayerPlan, copy: Copy, base: str, stats: Stats,
                 div: Divergences, http: httpx.AsyncClient, start: float, t_first: float,
                 speed: float, timeout_s: float, proto: bool) -> None:
        self.pp, self.copy, self.base, self.stats, self.div = pp, copy, base, stats, div
        self.http = http
        self.start_at, self.t_first, self.speed = start, t_first, speed
        self.timeout_s = timeout_s
        self.proto = proto
        self.label = f"{pp.label}#{copy.k}"
        self.conn: Conn | None = None
        self.games: list[str] = []  # this copy's game ids, in matched order
        self.progress = Progress()
        self.changed = asyncio.Event()
        self.stalled = False
        self.lost = False  # the gateway closed a connection the capture kept open
        self.over: set[str] = set()  # this copy's games seen ending
        self.no_game_coming = False  # a request that seated the capture's player was refused
        self.pacer = Pacer()

    def at(self, t: float) -> float:
        return self.start_at + (t - self.t_first) / 1000 / self.speed

    async def sleep_until(self, t: float) -> None:
        delay = self.at(t) - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    def on_frame(self, f: Frame) -> None:
        kind = f.get("type")
        if kind == "matched" or (kind == "welcome" and f.get("game_id")):
            gid = str(f["game_id"])
            if gid not in self.games:
                self.games.append(gid)
            if kind == "matched" and (f.get("options") or {}).get("seed") is None:
                # dealt at random (a quick match, a room without a seed):
                # the capture's events say nothing of it, only its pace
                self.copy.diverged.add(gid)
        if kind in SEQ_FRAMES:
            gid = str(f.get("game_id") or (self.games[-1] if self.games else ""))
            self.progress.see(gid, f)
            if kind == "update" and read_update(f, 0, False).game_over \
                    or kind == "view" and (f.get("view") or {}).get("finished"):
                self.over.add(gid)
        elif kind == "game_result" and f.get("game_id"):
            self.over.add(str(f["game_id"]))
        self.changed.set()

    async def _watch(self, conn: Conn) -> None:
        """A close the replay did not ask for (the gateway went away): this
        player's remaining steps cannot be replayed, and nobody waits for it."""
        await conn.closed.wait()
        if not conn.closing and conn is self.conn:
            self.lost = True
        self.changed.set()

    async def wait_for(self, ok: Callable[[], bool],
                       give_up: Callable[[], bool] | None = None) -> bool:
        """Until ``ok()``, for up to the timeout; or until ``give_up()``
        (looked at every :data:`POLL_S`)."""
        if self.stalled or self.lost:
            return ok()
        end = time.monotonic() + self.timeout_s
        while not ok():
            left = end - time.monotonic()
            if left <= 0 or self.lost:
                return False
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(),
                                       left if give_up is None else min(left, POLL_S))
            except TimeoutError:
                if give_up is None or give_up() or time.monotonic() >= end:
                    return ok()
        return True

    async def run(self) -> None:
        try:
            await self._run()
        finally:  # whatever ended it: the other players stop waiting for this one's turns
            for step in self.pp.steps:
                self.done(step)

    async def _run(self) -> None:
        pp = self.pp
        nick = f"{pp.nickname[:12]}#{self.copy.k}"[:16]
        ident = await sign_in(self.http, self.base, nick)
        prev: Conn | None = None
        by_conn: dict[int, list[Step]] = {}
        for s in pp.steps:
            by_conn.setdefault(s.conn, []).append(s)
        for ci in range(len(pp.conns)):
            await self.sleep_until(pp.opens[ci])
            conn = Conn(self.base, self.stats, self.on_frame, proto=self.proto)
            await conn.connect()
            self.conn = conn
            self.lost = False
            watcher = asyncio.ensure_future(self._watch(conn))
            cut = False
            for step in by_conn.get(ci, []):
                if self.lost:
                    self.div.stalled(self.copy.k, self.label, step, "connection_lost")
                    cut = True
                    break
                await self.step(step, ident, prev)
            watcher.cancel()
            if cut:  # the capture's later connections would resume what is not there
                self.stats.count["connections_lost"] += 1
                # why, by the close code (an idle timeout is not a gateway gone)
                self.stats.lost[conn.close_code or 1006] += 1
                return
            t, code, by = pp.closes[ci]
            await self.sleep_until(t)
            if by == "client":
                if code in (None, 1006):
                    self.stats.count["drops"] += 1
                    conn.drop()
                    await conn.closed.wait()
                else:
                    await conn.close(int(code))
            prev = conn
        if self.conn is not None and not self.conn.closed.is_set():
            await self.conn.close()

    async def step(self, step: Step, ident: dict[str, Any], prev: Conn | None) -> None:
        assert self.conn is not None
        f = dict(step.line.frame)
        kind = f.get("type", "")
        if (step.answer or {}).get("code") == "rate_limited":
            # the gateway dropped it unread when it was captured: not sent
            # (the paced replay would have it done), so not compared either
            self.done(step)
            return
        if kind == "hello":
            f["token"] = ident["token"]
            if f.get("resume"):
                if prev is not None:
                    f["resume"] = {"session": prev.session, "last_seq": prev.last_seq}
                    self.conn.last_seq = prev.last_seq
                else:
                    f.pop("resume")
        if step.lobby_no >= 0 and step.lobby_no > 0:
            ev = self.copy.lobby_done[step.lobby_no - 1]
            try:
                await asyncio.wait_for(ev.wait(), self.timeout_s)
            except TimeoutError:
                self.div.stalled(self.copy.k, self.label, step, "lobby_turn_timeout")
        if kind == "room_join" and f.get("code"):
            f["code"] = self.copy.codes.get(str(f["code"]), f["code"])
        gid = ""
        if kind in GAME:
            ok = await self.wait_for(lambda: 0 <= step.game_no < len(self.games),
                                     give_up=lambda: self.no_game_coming)
            if not ok:
                self.div.stalled(self.copy.k, self.label, step, "no_game")
                self.stalled = True
            else:
                gid = self.games[step.game_no]
                if f.get("game_id"):
                    f["game_id"] = gid
                if gid in self.copy.diverged:
                    pass  # its events are not the capture's: the pace alone orders the moves
                elif not await self.wait_for(lambda: self.progress.at(gid) >= step.need_seq
                                             or gid in self.over,
                                             give_up=lambda: gid in self.copy.diverged):
                    if gid not in self.copy.diverged:
                        self.div.stalled(self.copy.k, self.label, step,
                                         f"waited_for_event_{step.need_seq}")
                        self.stalled = True
                elif self.progress.at(gid) < step.need_seq:  # over here, not in the capture
                    self.div.stalled(self.copy.k, self.label, step,
                                     f"game_over_before_event_{step.need_seq}")
                    self.copy.diverged.add(gid)
        if step.act is not None and step.act[1] > 0 and not self.stalled \
                and gid not in self.copy.diverged:  # a random deal: the pace alone
            # the game's previous command (any player's) was answered first
            prev_act = self.copy.act_done((step.act[0], step.act[1] - 1))
            try:
                await asyncio.wait_for(prev_act.wait(), self.timeout_s)
            except TimeoutError:
                self.div.stalled(self.copy.k, self.label, step, "previous_command_timeout")
                self.stalled = True
        f = copy_turn_key(f, step.answer)
        await self.pacer.take()
        fut = await self.conn.send(f)
        if kind in ANSWERS:
            try:
                got = await asyncio.wait_for(fut, self.timeout_s)
            except TimeoutError:
                got = {"type": "error", "code": "no_answer"}
            # a hello refused where the capture's was welcomed: this player
            # can replay nothing (it sent every frame unauthenticated, timed
            # the refusals as round trips, and the run exited 0: load tester audit)
            if kind == "hello" and got.get("type") != "welcome" \
                    and (step.answer is None or step.answer.get("type") == "welcome"):
                raise RuntimeError(hello_refused(got))
            if kind == "hello" and got.get("type") == "welcome":
                self.conn.session = got["session"]
                if got.get("resumed"):
                    self.stats.resumes[str(got.get("resume_result") or "resumed")] += 1
                elif f.get("resume"):
                    self.stats.resumes["failed"] += 1
                lim = got.get("limits") or {}
                if lim.get("rate"):
                    self.pacer.set(float(lim["rate"]), float(lim.get("burst") or lim["rate"]))
            if kind == "room_create" and got.get("type") == "error" \
                    and got.get("code") == "bad_option" \
                    and (f.get("options") or {}).get("seed") is not None \
                    and not (step.answer and step.answer.get("type") == "error"):
                raise Unreplayable(f"room_create refused: bad_option "
                                   f"({got.get('message', '')}); {SEED_HINT}")
            if kind == "room_create" and got.get("type") == "room" and step.answer \
                    and step.answer.get("type") == "room":
                self.copy.codes[str(step.answer["room"]["code"])] = str(got["room"]["code"])
            if kind == "room_start" and got.get("type") == "matched":
                await self.wait_for(lambda: len(self.games) > 0)
            seen = len(self.div.items)
            if kind in SEATING and got.get("type") == "error" and step.answer is not None \
                    and step.answer.get("type") != "error":
                # e.g. a re-queue while this replay's faster game still runs
                # (in_game): the game it led to in the capture is not coming
                self.no_game_coming = True
            self.div.compare(self.copy.k, self.label, step, got)
            if len(self.div.items) > seen and gid:  # the game no longer follows the capture
                self.copy.diverged.add(gid)
        self.done(step)

    def done(self, step: Step) -> None:
        """The step's turn is over: the lobby frame or command after it may go."""
        if step.lobby_no >= 0:
            self.copy.lobby_done[step.lobby_no].set()
        if step.act is not None:
            self.copy.act_done(step.act).set()


def _counts(stats: Stats, players: list[ReplayPlayer]) -> None:
    """The progress line's and the report's counts: connections open, the
    players in a game that has not ended, the games seen ending."""
    over = {g for rp in players for g in rp.over}
    stats.connected = sum(1 for rp in players if rp.conn is not None
                          and not rp.conn.closed.is_set())
    stats.in_game = sum(1 for rp in players if rp.games and rp.games[-1] not in over
                        and rp.conn is not None and not rp.conn.closed.is_set())
    stats.count["games_finished"] = len(over)


async def replay(base: str, capture_path: str, speed: float = 1.0, fanout: int = 1,
                 ramp_s: float = 0.0, progress: float = 1.0, proto: bool = False,
                 timeout_s: float = 60.0, loaded: Capture | None = None) -> dict[str, Any]:
    """Replay the capture at ``capture_path`` (``loaded``: already read)."""
    import sys

    capture = loaded or load(capture_path)
    plans, t_first = plan(capture)
    n_lobby = sum(1 for pp in plans for s in pp.steps if s.lobby_no >= 0)
    stats = Stats()
    div = Divergences()
    failures: list[str] = []
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:
        t0 = time.monotonic() + 0.5
        tasks = []
        players: list[ReplayPlayer] = []
        diverged: set[str] = set()
        for k in range(fanout):
            copy = Copy(k, n_lobby, diverged)
            start = t0 + (ramp_s * k / fanout if fanout > 1 else 0.0)
            for pp in plans:
                players.append(ReplayPlayer(pp, copy, base, stats, div, http, start, t_first,
                                            speed, timeout_s, proto))

        stopped = asyncio.Event()  # Unreplayable: nobody else goes on

        async def one(rp: ReplayPlayer) -> None:
            try:
                await rp.run()
            except Unreplayable as exc:  # the first one says why; the replay ends
                if not stopped.is_set():
                    stopped.set()
                    stats.count["player_failures"] += 1
                    failures.append(f"{rp.label}: {message(exc)}")
                    everyone.cancel()
            except Exception as exc:  # noqa: BLE001 - reported, the others go on
                stats.count["player_failures"] += 1
                if len(failures) < 20:
                    failures.append(f"{rp.label}: {message(exc)}")

        tasks = [asyncio.ensure_future(one(rp)) for rp in players]
        everyone = asyncio.ensure_future(asyncio.gather(*tasks))
        everyone.add_done_callback(lambda f: f.cancelled() or f.exception())  # (play.py's)
        interrupted = asyncio.Event()

        def end() -> None:  # Ctrl-C: the steps not replayed yet are left out
            interrupted.set()
            everyone.cancel()

        with ctrl_c_ends_run(end):
            while not everyone.done():
                await asyncio.wait({everyone}, timeout=progress or None)
                if progress and not everyone.done():
                    _counts(stats, players)
                    print(stats.progress_line() + f"  divergences {len(div.items)}",
                          file=sys.stderr, flush=True)
            try:
                await everyone
            except asyncio.CancelledError:
                if not (interrupted.is_set() or stopped.is_set()):
                    raise
                if interrupted.is_set():
                    stats.count["interrupted"] = 1
                for rp in players:
                    if rp.conn is not None and not rp.conn.closed.is_set():
                        await rp.conn.close()
        _counts(stats, players)
    return stats.report(run={"url": base, "capture": capture_path, "speed": speed, "fanout": fanout},
                        players=len(players), copies=fanout, speed=speed,
                        capture=capture_path, checked=div.checked, same=div.same,
                        divergences=div.items, failures=failures,
                        games=sorted({g for rp in players for g in rp.games}))
