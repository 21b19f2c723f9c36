"""One hosted game, sans-I/O: the engine plus what the shard adds around it
(docs/protocol.md sections 1, 2 and 5) — player ↔ seat mapping, command
dedup by ``cmd_id``, per-(game, player) event sequence numbers with a
bounded backlog for resume, the public (spectator) sequence, and the
record-message form of every accepted input.

No clock and no network here: the caller passes ``t`` (game ms) and
``server_ms`` (wall ms) and ships the returned frames and record entries.
The same code rebuilds a game from its record on failover, so the sequence
numbers, backlogs and dedup table come out exactly as the first owner had
them.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from hashlib import blake2b
from itertools import islice
from typing import Any

import orjson

from ttanjit.common.kept import kept
from ttanjit.games.base import JSON, Engine, Result, Setup
from ttanjit.games.record import FORMAT, Input, Record, RecordError, setup_from_json

# a scoreless game's standing in its directory entry: cards left, who was out, who was dealt in
STANDING_KEYS = ("hand_counts", "eliminated", "dealt")
DEDUP_WINDOW = 1000  # command ids remembered per game (docs/protocol.md 1)

# what a player reads, as docs/websocket.md 6 says it (the gateway passes a
# shard's refusal on as it came; ``bad_request`` answers only a malformed
# request from a gateway)
SHARD_MESSAGES = {
    "bad_request": "잘못된 요청이에요.",
    "not_seated": "이 게임에 앉아 있지 않아요.",
    "game_unavailable": "게임 서버에 잠시 연결할 수 없어요. 잠시 후 다시 해 주세요.",
    "internal_error": "서버 오류가 났어요. 다시 해 주세요.",
    "no_spectating": "이 게임은 관전할 수 없어요.",
}


def refusal(code: str, cmd_id: Any = None, message: str | None = None) -> JSON:
    out: JSON = {"ok": False, "code": code,
                 "message": message or SHARD_MESSAGES.get(code, SHARD_MESSAGES["bad_request"])}
    if cmd_id is not None:
        out["cmd_id"] = cmd_id
    return out


# flags of a seat's part of a burst (what the gateway must notice without
# reading the part: docs/protocol.md 2)
GAME_OVER = 1  # the game ended in this burst
SEAT_AWAY = 2  # this seat was marked away (``disconnected``)
SEAT_BOT = 4  # a bot took this seat for good (``substituted``)


class Unreplayable(RuntimeError):
    """A game's record this release cannot replay: a newer release's rules,
    or a recorded input its engine refuses (it was accepted by the engine
    that wrote it). Claiming it again cannot help until a shard of a
    release that can comes: the game waits (shard/service.py)."""


@dataclass(slots=True)
class Part:
    """One subscriber's share of a burst (issue 13): a player's (``pid``) or
    the spectators' (``None``): its events (``events``: the items, joined
    with commas) and the rest of its ``update`` frame (``tail``:
    ``"view":{…}[,"deadline":{…}]``). A part with no events (``first`` >
    ``last``: the player's own move changed only their own hidden fields)
    has ``"patch":{…}`` instead of the view: those fields, replacing the
    ones of the view the player holds.
    :func:`envelope` puts the parts of a burst into one NATS message; the
    gateway wraps each part with its own ``type``/``seq``/``server_ms`` and
    never parses it."""

    pid: str | None
    first: int
    last: int
    flags: int
    events: bytes
    tail: bytes


def coalesce(parts: list[Part]) -> list[Part]:
    """The parts of several inputs made durable together, one per
    subscriber where they can be one (one WebSocket frame per player): the
    events in order, the view of the last. A ``patch`` part (no events)
    after a whole view cannot be folded into it without reading it: it
    stays a part of its own, after it."""
    if len(parts) < 2:
        return parts
    out: list[Part] = []
    last: dict[str | None, Part] = {}
    for p in parts:
        had = last.get(p.pid)
        if had is None or (p.first > p.last and had.tail[:7] == b'"view":'):
            q = Part(p.pid, p.first, p.last, p.flags, p.events, p.tail)
            out.append(q)
            last[p.pid] = q
        else:
            had.last = max(had.last, p.last)
            had.flags |= p.flags
            had.events = had.events + b"," + p.events if had.events and p.events \
                else had.events or p.events
            had.tail = p.tail
    return out


def part_body(game_id: str, p: Part) -> bytes:
    """The inside of the part's ``update`` frame (no braces)."""
    return (b'"game_id":' + orjson.dumps(game_id) + b',"game_seq":' + str(p.last).encode()
            + b',"events":[' + p.events + b"]," + p.tail)


def envelope(game_id: str, parts: list[Part]) -> bytes:
    """One NATS message for some subscribers of one burst (docs/protocol.md
    2): a JSON line ``{"g": game_id, "p": [[pid, first, last, flags], …]}``,
    then one line per part, :func:`part_body` (JSON never holds a raw
    newline, so the lines split cleanly)."""
    lines = [orjson.dumps({"g": game_id, "p": [[p.pid, p.first, p.last, p.flags]
                                               for p in parts]})]
    lines.extend(part_body(game_id, p) for p in parts)
    return b"\n".join(lines)


@dataclass(slots=True)
class Applied:
    """What one accepted input produced: its record entry, each
    subscriber's part of the burst (:class:`Part`), and the reply (for
    commands, JSON bytes)."""

    entry: JSON
    parts: list[Part]
    reply: bytes | None
    result: Result
    finished_now: bool = False
    # the command came through a gateway (it named one): a part of the
    # player's own with no events may ride on the reply (docs/protocol.md 1)
    via_gateway: bool = False


@dataclass(slots=True)
class Backlog:
    """A subscriber's sequence and its last frames, kept serialized: bytes
    are invisible to the garbage collector, so thousands of games' backlogs
    add nothing to collection pauses."""

    seq: int = 0
    frames: deque[tuple[int, bytes]] = field(default_factory=deque)


class HostedGame:
    """The engine of one game and its seats, players, sequences and dedup."""

    def __init__(self, game_id: str, setup: Setup, players: dict[str, int],
                 origin_ms: int, backlog: int = 256) -> None:
        from ttanjit.games import engine_class

        self.game_id = game_id
        self.setup = setup
        self.engine: Engine = engine_class(setup.game)(setup)
        self.players = dict(players)  # player_id -> seat (human seats)
        self.seat_player: list[str | None] = [None] * self.engine.n
        for pid, seat in self.players.items():
            self.seat_player[seat] = pid
        self.origin_ms = origin_ms  # wall ms of t = 0 (of the creating shard)
        self.last_ms = 0  # wall ms of the last accepted input (replayed ones too)
        self.backlog_size = backlog
        self.backlogs: dict[str | None, Backlog] = {p: Backlog() for p in self.players}
        self.backlogs[None] = Backlog()  # spectators
        self.dedup: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self.inputs = 0
        self.version = 0  # bumps on every accepted input
        # 관전 allowed (the room's ``spectators`` option, issue 15): kept in
        # the record header and the directory entry, never an engine option
        self.spectators = True
        # the key of the bots' per-decision numbers (:meth:`bot_seed`): the
        # game's own secret, kept in its record header. They were a hash of
        # the deal's seed, the inputs and the seat, sent in every ask: a bot
        # worker's user reversed it and dealt every hand (review finding)
        self.bot_key = secrets.token_bytes(16)

    # -- the record header -------------------------------------------------
    def header(self) -> JSON:
        doc = Record(self.setup).header_json()
        doc["game_id"] = self.game_id
        doc["players"] = dict(self.players)
        doc["origin_ms"] = self.origin_ms
        if not self.spectators:
            doc["spectators"] = False
        doc["bot_key"] = self.bot_key.hex()
        return doc

    def bot_seed(self, seat: int, salt: int = 0) -> int:
        """32 bits for ``seat``'s decision now (its thinking pause, its ask's
        ``rng``; ``salt`` 1: a 원카드! press), the same on every ask and on
        the shard that replays the game after a failover, and nothing of
        the deal in them (docs/protocol.md 3)."""
        data = b"%d.%d.%d" % (self.inputs, seat, salt)
        return int.from_bytes(blake2b(data, key=self.bot_key, digest_size=4).digest(), "big")

    @classmethod
    def from_header(cls, doc: JSON, backlog: int = 256) -> HostedGame:
        try:
            setup = setup_from_json({**doc, "format": doc.get("format", FORMAT)})
        except RecordError as exc:  # e.g. a newer release's rules
            raise Unreplayable(f"{doc.get('game_id')}: {exc}") from exc
        game = cls(doc["game_id"], setup, {str(k): int(v) for k, v in doc["players"].items()},
                   int(doc.get("origin_ms", 0)), backlog)
        game.spectators = doc.get("spectators") is not False
        key = doc.get("bot_key")
        try:
            game.bot_key = bytes.fromhex(key) if isinstance(key, str) and 32 <= len(key) <= 128 \
                else b""  # (16 to 64 bytes: BLAKE2b's keys)
        except ValueError:
            game.bot_key = b""
        if not game.bot_key:  # an older release's game: a key made from its seed
            # (its bots' numbers change across the upgrade: harmless, their
            # answers are recorded inputs)
            game.bot_key = blake2b(b"%d" % setup.seed, digest_size=16).digest()
        return game

    # -- who ---------------------------------------------------------------
    def seat_of(self, player: str) -> int | None:
        return self.players.get(player)

    @property
    def finished(self) -> bool:
        return self.engine.finished

    def driven_seats(self) -> list[int]:
        """Seats the shard plays through the bot pool: bot seats, substituted
        seats and seats on autopilot (RULES.md 1.9, 4)."""
        eng = self.engine
        bot_fn = getattr(eng, "bot_seats", None)
        auto = getattr(eng, "autopilot", None)
        if bot_fn is None or auto is None:
            st = eng.state()
            bots, auto = st.get("bot", [False] * eng.n), st.get("autopilot", [False] * eng.n)
        else:
            bots = bot_fn()
        return [s for s in range(eng.n) if bots[s] or auto[s]]

    def on_autopilot(self, seat: int) -> bool:
        auto = getattr(self.engine, "autopilot", None)
        if auto is None:
            auto = self.engine.state().get("autopilot", [False] * self.engine.n)
        return bool(auto[seat])

    def has_active_humans(self) -> bool:
        return self.engine.presence.has_active_humans()

    def level_of(self, seat: int) -> str:
        spec = self.setup.seats[seat]
        return spec.level or "normal" if spec.kind == "bot" else "normal"

    # -- dedup -------------------------------------------------------------
    def seen(self, player: str, cmd_id: str) -> bytes | None:
        """The first reply to this command id (JSON bytes), if any."""
        return self.dedup.get((player, cmd_id))

    def remember(self, player: str, cmd_id: str, reply: bytes) -> None:
        self.dedup[(player, cmd_id)] = kept(reply)
        if len(self.dedup) > DEDUP_WINDOW:
            self.dedup.popitem(last=False)

    # -- inputs ------------------------------------------------------------
    def apply(self, t: int, seat: int | None = None, action: JSON | None = None, *,
              player: str | None = None, cmd_id: str | None = None, server_ms: int = 0,
              by: str | None = None) -> Applied | Result:
        """Apply one input at game time ``t``. Returns the engine's refusal
        (a :class:`Result` with ``ok`` False: nothing changed) or an
        :class:`Applied` to make durable and then publish."""
        res = self.engine.apply(t, seat, action)
        if not res.ok:
            return res
        entry: JSON = {"t": t}
        if seat is not None:
            entry["seat"] = seat
            entry["action"] = action
            if player is not None:
                entry["player"] = player
            if cmd_id is not None:
                entry["cmd"] = cmd_id
            if by is not None:
                entry["by"] = by
        entry["ms"] = server_ms
        return self._accepted(entry, res, server_ms)

    def _accepted(self, entry: JSON, res: Result, server_ms: int,
                  push: bool = True) -> Applied:
        """Number the input's events per subscriber, keep them in the
        backlogs and (``push``) build each subscriber's part of the burst:
        its events and its whole view after them (issue 13: pushed, so no
        client asks with ``sync``). A replayed input (failover) only fills
        the backlogs. Views are built now, at the input, never later: a part
        shows exactly the state its events lead to."""
        self.inputs += 1
        self.version += 1
        self.last_ms = max(self.last_ms, server_ms)
        t = entry["t"]
        dumps = orjson.dumps
        actor = entry.get("player")
        parts: list[Part] = []
        events = res.events
        if events or (push and actor is not None):
            deadline = self.deadline(server_ms, t) if push else None
            tail = b"" if deadline is None else b',"deadline":' + dumps(deadline)
            public = b""
            eng = self.engine
            subst = eng.presence.substituted
            for pid, bl in self.backlogs.items():
                if not events and pid != actor:
                    continue
                seat = None if pid is None else self.players[pid]
                sees = None if seat is None or subst[seat] else seat  # self.sees(pid), inline
                first = bl.seq + 1
                items = []
                flags = 0
                for ev in events:
                    bl.seq += 1
                    data = ev.for_seat(sees)
                    item = dumps({"game_seq": bl.seq, "t": t, "event": data})
                    bl.frames.append((bl.seq, kept(item)))
                    items.append(item)
                    kind = ev.type
                    if kind == "disconnected" and seat is not None \
                            and data.get("seat") == seat:
                        flags |= SEAT_AWAY
                    elif kind == "substituted" and seat is not None \
                            and data.get("seat") == seat:
                        flags |= SEAT_BOT
                while len(bl.frames) > self.backlog_size:
                    bl.frames.popleft()
                if eng.finished:
                    flags |= GAME_OVER
                if not push:
                    continue
                if not events:
                    # the player's own move changed only their own hidden
                    # fields (e.g. a 줄줄이 벌점 selection): those fields as a
                    # patch of the view they hold, not the whole view
                    if sees is None:  # nothing of theirs to show (a bot plays the seat)
                        continue
                    parts.append(Part(pid, first, bl.seq, flags, b"",
                                      b'"patch":' + dumps(eng.private_view(sees)) + tail))
                    continue
                if not public:
                    public = dumps(eng.public_view())
                view = public[:-1] + (b',"seat":null}' if sees is None
                                      else b"," + dumps(eng.private_view(sees))[1:])
                parts.append(Part(pid, first, bl.seq, flags, b",".join(items),
                                  b'"view":' + view + tail))
        reply: bytes | None = None
        cmd_id = entry.get("cmd")
        if actor is not None and cmd_id is not None:
            doc: JSON = {"ok": True, "cmd_id": cmd_id, "seq": self.backlogs[actor].seq}
            if res.info:
                doc["info"] = res.info
            reply = dumps(doc)
            self.remember(actor, cmd_id, reply)
        return Applied(entry, parts, reply, res, finished_now=self.engine.finished)

    def deadline(self, server_ms: int, t: int) -> JSON | None:
        """The next deadline for the players. None while paused: then the
        engine's next deadline is the abandonment time (RULES.md 4), which
        nobody has to beat."""
        nd = self.engine.next_deadline()
        if nd is None or self.engine.presence.paused:
            return None
        out: JSON = {"t": nd, "remaining_ms": max(0, nd - t), "server_ms": server_ms + max(0, nd - t)}
        seat = self.engine.due_seat()
        if seat is not None:
            out["seat"] = seat
        return out

    def replay_entry(self, entry: JSON) -> Applied:
        """Re-apply a recorded input (failover): it was accepted once, so it
        must be again (a deterministic engine); raises if not."""
        inp = Input(int(entry["t"]), entry.get("seat"), entry.get("action"))
        res = self.engine.apply(inp.t, inp.seat, inp.action)
        if not res.ok:
            raise Unreplayable(f"{self.game_id}: recorded input {entry} refused on replay: "
                               f"{res.code}")
        return self._accepted(entry, res, int(entry.get("ms", 0)), push=False)

    def sees(self, pid: str | None) -> int | None:
        """The seat whose hidden share a subscriber gets: the player's own,
        None for the spectators — and for a player whose seat a bot took
        for good (RULES.md 4: they may watch, not play): from then on they
        watch as a spectator does, the bot's hand and draws unseen (their
        page showed the seat's hand live, the bot's new cards too: trial)."""
        if pid is None:
            return None
        seat = self.players[pid]
        return None if self.engine.presence.substituted[seat] else seat

    # -- sync / resume -----------------------------------------------------
    def sync(self, player: str | None, last_seq: int, server_ms: int,
             t_now: int | None = None, recent: int = 0) -> bytes:
        """Everything after ``last_seq`` or a resync view (docs/protocol.md 2),
        as JSON bytes. ``t_now``: the game's clock now (the deadline's
        remaining time counts from it; default: the last input's ``t``).
        ``recent``: a resync view also carries up to that many of the
        subscriber's last events (``recent``, from its backlog: filtered for
        its seat as they were sent), for the log of a tab that never saw them."""
        bl = self.backlogs[player]
        out: JSON = {"game": self.game_id, "seq": bl.seq,
                     "view": self.engine.view(self.sees(player))}
        dl = self.deadline(server_ms, self.engine.now if t_now is None else t_now)
        if dl is not None:
            out["deadline"] = dl
        if last_seq >= bl.seq:
            out["events"] = []
        elif bl.frames and bl.frames[0][0] <= last_seq + 1 and last_seq >= 0:
            return _spliced(out, b"events", (data for seq, data in bl.frames if seq > last_seq))
        else:
            out["resync"] = True
            if recent > 0 and bl.frames:
                newest = islice(bl.frames, max(0, len(bl.frames) - recent), None)
                return _spliced(out, b"recent", (data for _, data in newest))
        return orjson.dumps(out)

    # -- summary -------------------------------------------------------------
    def directory_entry(self) -> JSON:
        """The game's ``ttanjit_games`` entry: its seats are public (a player
        seated while away learns who sits where from them);
        a finished game's carries its result too, so a player who comes back
        after the shard let the game go still learns how it ended
        (docs/websocket.md 4)."""
        out: JSON = {"game": self.setup.game, "players": dict(self.players),
                     "seats": [s.to_json() for s in self.setup.seats],
                     "state": "finished" if self.finished else "live"}
        if not self.spectators:
            out["spectators"] = False
        if self.finished:
            doc = self.result_doc()
            out["result"] = {k: doc[k] for k in ("ended_by", "winners", "scores", "substituted",
                                                 "kept", "length_ms", *STANDING_KEYS) if k in doc}
        return out

    def result_doc(self) -> JSON:
        res = dict(self.engine.result())
        res.pop("counters", None)
        winners = res.get("winners")
        if winners is None:
            w = res.get("winner")
            winners = [] if w is None else [w]
        scores = res.get("scores", res.get("penalties"))
        doc = {
            "game_id": self.game_id, "game": self.setup.game, "players": dict(self.players),
            "seats": [s.to_json() for s in self.setup.seats], "winners": winners,
            "scores": scores, "substituted": list(self.engine.presence.substituted),
            # taken over once out of the game (rules 3): the place stands
            "kept": list(self.engine.presence.kept),
            "length_ms": res.get("length_ms", self.engine.now), "ended_by": res.get("ended_by"),
            "result": res,
        }
        if scores is None:  # One Card: a seat stands by its cards left (the ratings place by it)
            public = self.engine.view(None)  # (public: every seat saw the counts)
            doc.update({k: public[k] for k in STANDING_KEYS if k in public})
        return doc


def _spliced(out: JSON, key: bytes, items: Iterable[bytes]) -> bytes:
    """``out`` as JSON with ``key``: a list of stored items, spliced in as
    the bytes they are (a backlog's frames are kept serialized)."""
    return orjson.dumps(out)[:-1] + b',"' + key + b'":[' + b",".join(items) + b"]}"


def summary_seats(game: HostedGame) -> list[JSON]:
    out = []
    for s, spec in enumerate(game.setup.seats):
        d = spec.to_json()
        pid = game.seat_player[s]
        if pid is not None:
            d["player_id"] = pid
        out.append(d)
    return out


def record_from_messages(header: JSON, entries: list[JSON]) -> Record:
    """The replayable ``ttanjit.record/1`` of a game from its stream messages."""
    setup = setup_from_json({**header, "format": header.get("format", FORMAT)})
    return Record(setup, [Input(int(e["t"]), e.get("seat"), e.get("action")) for e in entries])
