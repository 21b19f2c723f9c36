"""The matchmaker process: gRPC ``ttanjit.v1.Matchmaker`` for the gateways,
shard heartbeats and results from NATS, ratings in JetStream KV, placement by
gRPC ``CreateGame`` (docs/protocol.md 4, 5). Several replicas run side by
side (docs/protocol.md 4.1): the one holding the leader lease keeps the lobby
(tickets, rooms, seats) in memory and writes it to JetStream KV before every
reply or notification; the others follow and forward gRPC calls to it, and
take over within a few seconds when it dies. Lobby notifications go to
players on ``<prefix>.player.<player_id>.lobby`` as client frames
(docs/websocket.md).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Container, Coroutine, Iterable
from typing import Any, TypeVar

import grpc
import orjson
from nats.aio.client import Client
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from ttanjit.common.config import Settings
from ttanjit.common.grpcutil import (
    GATEWAY_MD,
    OPENED_MD,
    OWNER_MD,
    REQUEST_MD,
    HealthServer,
    aio_server,
    opened_md,
)
from ttanjit.common.ids import new_game_id
from ttanjit.common.nats import (
    GAMES_BUCKET,
    HISTORY_BUCKET,
    LOBBY_BUCKET,
    RATINGS_BUCKET,
    RECORDS_STREAM,
    RESULTS_STREAM,
    Subjects,
    ensure_jetstream,
    passing,
    relayed,
    subscribed,
)
from ttanjit.games import GAMES
from ttanjit.matchmaker import metrics as m
from ttanjit.matchmaker import standings
from ttanjit.matchmaker.errors import LobbyError
from ttanjit.matchmaker.gateways import LobbyGatewayWatch
from ttanjit.matchmaker.options import BOT_LEVELS, check_seats, defaults
from ttanjit.matchmaker.placement import ShardTable
from ttanjit.matchmaker.queue import QuickMatch, QuickQueue, Ticket
from ttanjit.matchmaker.ratings import Rating, placed, rate_result, seat_players
from ttanjit.matchmaker.readiness import watch_placement
from ttanjit.matchmaker.rematch import Rematch
from ttanjit.matchmaker.rooms import Room, Rooms, Seat
from ttanjit.matchmaker.store import Fenced, LeaderLease, LobbyStore, Parted
from ttanjit.v1 import client_pb2, matchmaker_pb2, matchmaker_pb2_grpc, shard_pb2, shard_pb2_grpc

log = logging.getLogger("ttanjit.matchmaker")

PLACE_TRIES = 6  # CreateGame calls of one placement, within PLACE_BUDGET_S
PLACE_BUDGET_S = 20.0
CREATE_TIMEOUT_S = 5.0  # one CreateGame call
# a failed CreateGame whose making may go on at the shard (the same shard is
# asked again: it answers for that making)
UNKNOWN_OUTCOME = (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED,
                   grpc.StatusCode.UNKNOWN)
FORWARDED = "ttanjit-forwarded"  # gRPC metadata: a follower passed this call on
CALLS_KEPT = 10_000  # request ids the leader remembers (Servicer._once) ...
CALL_KEPT_S = 60.0  # ... each at least this long after it is done
FORWARD_WAIT_S = 8.0  # how long a call waits for a leader (a failover takes ~2.5 s)
# A game's players see it end (its last update) a moment before its shard
# writes "finished" to the directory (Room.finalize: the results stream
# first, then the entry): a 한 판 더 pressed at once waits this long for it
# (within a forwarded call's 2.5 s) rather than hear game_not_finished.
FINISHING_S = 1.5
# A 한 판 더 that started is kept (Matchmaker.rematched) at least this long,
# and while its new game is on: a player who reloads the old game's result
# screen (the web client asks again) or answers late learns that it started
# and where, and the old table never starts a second game.
STARTED_KEEP_MS = 10 * 60_000
RATINGS_KEPT = 100_000  # ratings the leader keeps in memory (the least recently used go)
RATE_ATTEMPTS = 3  # rated again at once this often when a rating moved since it was read (then later)

# ttanjit_mm_placement_failures_total's reasons, as the log says them
WHY = {"no_shard": "no shard heard from in the last 5 s",
       "draining": "every shard is draining",
       "capacity": "every shard that is not draining has TTANJIT_CAPACITY games",
       "error": "CreateGame failed on every shard tried"}


def now_ms() -> int:
    return int(time.time() * 1000)


def _pb_room(room: Room, away: Container[str] = ()) -> client_pb2.Room:
    j = room.to_json(away)
    out = client_pb2.Room(code=j["code"], game=j["game"], seats=j["seats"], host=j["host"],
                          state=j["state"])
    out.options.update(j["options"])
    for mem in j["members"]:
        out.members.add(**mem)
    return out


def _owner(exc: grpc.aio.AioRpcError) -> str:
    """The shard a CreateGame's FAILED_PRECONDITION names as the id's owner."""
    for k, v in exc.trailing_metadata() or ():
        if k == OWNER_MD:
            return str(v)
    return ""


T = TypeVar("T")


def _read(stored: Any, parse: Callable[[str, Any], T]) -> Parted[T]:
    """A parted collection as read, by the key each item is stored by (so
    that dropping it drops it where it is): ``parse(key, item)``; an item
    that cannot be read is left out, with a warning, not the take-over."""
    out: list[tuple[str, T]] = []
    for k, v in (stored or {}).items() if isinstance(stored, dict) else ():
        try:
            out.append((str(k), parse(str(k), v)))
        except Exception as exc:  # noqa: BLE001 - any damage: the rest is still read
            log.warning("lobby item unreadable, left out: %r: %r", k, exc)
    return Parted(out)


def _keyed(from_json: Callable[[dict[str, Any]], T], field: str) -> Callable[[str, Any], T]:
    """``_read``'s parse for an item that names its own key (``field``):
    taken under the key it is stored by, whatever it says."""
    return lambda key, d: from_json({**d, field: key})


def _table(_: str, t: Any) -> dict[str, Any]:
    """A game's humans' seats as read (``Matchmaker.seated_games``)."""
    ms = t.get("ms", 0)
    return {"ms": ms if isinstance(ms, int) else 0,
            "seats": {str(p): int(i) for p, i in t["seats"].items()}}


def _asker(req: Any) -> str:
    """The player a lobby call is for (``player``: an id or a PlayerRef)."""
    p = req.player
    return p if isinstance(p, str) else p.player


def _opened(raw: Any) -> int:
    """OPENED_MD's value (0: not said, or not a number)."""
    try:
        return max(0, int(raw or 0))
    except (TypeError, ValueError):
        return 0


def _options(raw: str) -> Any:
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise LobbyError("bad_option") from None


async def finished_entry(kv: KeyValue, game_id: str, wait_s: float) -> dict[str, Any]:
    """The game's ``ttanjit_games`` entry, once it says ``finished`` or
    after ``wait_s`` as it is then. A game with no entry raises at once
    (``KeyNotFoundError``): nothing will finish there."""
    loop = asyncio.get_running_loop()
    end = loop.time() + wait_s
    while True:
        entry: dict[str, Any] = orjson.loads((await kv.get(game_id)).value or b"{}")
        if entry.get("state") == "finished" or loop.time() >= end:
            return entry
        await asyncio.sleep(0.05)


# ``room_left`` ``reason: "away"``: a room seat waited its 60 s (RULES.md 4)
AWAY_LEFT_MESSAGE = "연결이 끊겨 있는 동안 방에서 나왔어요."
# ``queue_cancelled`` ``reason: "away"``: a drop the lobby heard late took the ticket
AWAY_UNQUEUED = "연결이 끊겨 있는 동안 빠른 대전 대기가 취소됐어요."
# how long a player's latest connection heard is kept (Matchmaker.back):
# longer than a gateway tells an unanswered Away again (conn.AWAY_LATER_S:
# at most about two minutes with its tries' timeouts)
BACK_KEPT_MS = 10 * 60_000


class Matchmaker:
    def __init__(self, nc: Client, kv_ratings: KeyValue, settings: Settings,
                 kv_lobby: KeyValue | None = None) -> None:
        self.nc = nc
        self.kv = kv_ratings
        self.s = settings
        self.subjects = Subjects(settings.prefix)
        self.queue = QuickQueue(settings.bot_wait_ms)
        self.rooms = Rooms(allow_test_options=settings.test_options)
        self.shards = ShardTable()
        # (game, player) -> rating, the most recently used RATINGS_KEPT
        self.ratings: OrderedDict[tuple[str, str], Rating] = OrderedDict()
        # player -> (game id, seat) of the game it was last seated in, until
        # that game's result arrives: a player who was offline when
        # ``matched`` went out still finds the game (GetPlayer). Kept by
        # game in the lobby's parts (``seated_games``: a game placed or over
        # writes one part), this index rebuilt from them.
        self.seated: dict[str, tuple[str, int]] = {}
        # game id -> {"ms": placed, "seats": {player: seat}} of its humans,
        # until its result
        self.seated_games: Parted[dict[str, Any]] = Parted()
        # room members without a connection, since ms
        self.away: Parted[int] = Parted()
        # player -> (opened_ms, heard_ms): the latest-opened connection of
        # the player a call came from (OPENED_MD: a ``hello``'s GetPlayer, a
        # lobby request), oldest heard first, kept BACK_KEPT_MS. The Away of
        # a connection opened before it is not the player's going: ignored
        # (a drop the gateway told again after a leader change, the player
        # back meanwhile on another connection; a socket given up whose end
        # its gateway saw late). This replica's memory only: a second leader
        # change meanwhile lets such an Away through.
        self.back: dict[str, tuple[int, int]] = {}
        # player -> (opened_ms, gateway id) of the latest-opened connection
        # a call named its gateway for, while they wait in the queue or a
        # room: watched for a gateway killed without a word (gateways.py).
        # This leading term's memory only (cleared by lead and step_down).
        self.via: dict[str, tuple[int, str]] = {}
        # told of every call through a gateway (gateways.py: it is there)
        self.on_gateway_call: Callable[[str], None] | None = None
        self.placing: Parted[QuickMatch] = Parted()  # quick matches being placed, by id
        self.rematches: Parted[Rematch] = Parted()  # open 한 판 더 offers, by the old game id
        # 한 판 더 offers that started, by the old game id: being placed (no
        # ``new_game_id`` yet) or placed, until forget_rematched
        self.rematched: Parted[Rematch] = Parted()
        # who turned down an offer that then expired unanswered by the rest,
        # by the old game id (when it expired): a later offer of that table
        # starts with them declined, so it does not wait its window for
        # someone gone back to the lobby (it did: trial finding). This
        # replica's memory only: after a leader change they are asked again.
        self.declined_before: dict[str, tuple[list[str], int]] = {}
        self._kv_history: KeyValue | None = None  # ttanjit_history (standings.py)
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # quick match ids and "r:<old game id>" of offers whose placing runs
        self.placing_now: set[str] = set()
        # Placement failing since (ms), why, how often: one warning when it
        # starts, one when a game is placed again (not one per tick).
        self.failing: dict[str, Any] | None = None
        # Leadership (docs/protocol.md 4.1): only the leader changes the lobby.
        self.leading = kv_lobby is None  # a Matchmaker without a store leads alone
        self.since_ms = now_ms()
        self.store = LobbyStore(kv_lobby, settings.lobby, self.snapshot, self.collections) \
            if kv_lobby is not None else None

    # -- the durable lobby (docs/protocol.md 4.1) --------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The lobby's head: nothing but the writer (store.LobbyStore adds
        it): the lobby is all in the parts."""
        return {}

    def collections(self) -> dict[str, tuple[Parted[Any], Callable[[Any], Any]]]:
        """The lobby's parts: what grows with the players (its name,
        store.GROUPS: the collection and how an item is written). Started
        offers are apart from open ones: a replica that does not know them
        (a rolling upgrade) must not take them for open offers. The
        tickets are the queue's and those of the matches being placed
        (``QuickQueue.held``): a match formed writes its ``placing`` part
        alone."""
        return {"seated": (self.seated_games, dict), "rematches": (self.rematches, Rematch.to_json),
                "rematched": (self.rematched, Rematch.to_json),
                "started_rooms": (self.rooms.started_codes, list),
                "rooms": (self.rooms.by_code, Room.to_store), "away": (self.away, int),
                "tickets": (self.queue.held, Ticket.to_json),
                "placing": (self.placing, QuickMatch.to_json)}

    def restore(self, doc: dict[str, Any] | None) -> None:
        doc = doc or {}
        self.placing = _read(doc.get("placing"), _keyed(QuickMatch.from_json, "id"))
        self.queue.restore(_read(doc.get("tickets"), _keyed(Ticket.from_json, "player")).values(),
                           self.placing.values())
        self.rooms.restore(_read(doc.get("rooms"), _keyed(Room.from_store, "code")).values(),
                           doc.get("started_rooms"))
        self.seated_games = _read(doc.get("seated"), _table)
        self.seated = {}
        for gid, table in sorted(self.seated_games.items(), key=lambda kv: kv[1]["ms"]):
            for p, seat in table["seats"].items():  # the latest game a player is in
                self.seated[p] = (gid, seat)
        self.away = _read(doc.get("away"), lambda _, ms: int(ms))
        self.rematches = _read(doc.get("rematches"), _keyed(Rematch.from_json, "game_id"))
        self.rematched = _read(doc.get("rematched"), _keyed(Rematch.from_json, "game_id"))
        for room in self.rooms.by_code.values():
            # open in the head but started in the parts: its start was cut
            # off between them (docs/protocol.md 4.1). Nobody was told: its
            # code is not started, nobody is seated, until the host starts it
            self.rooms.started_codes.pop(room.code, None)
            self.unseat(room.place_id)
        self.ratings.clear()  # re-read from KV: another replica may have rated since

    async def commit(self) -> None:
        """Make every change so far durable (before a reply or a notification)."""
        if self.store is not None:
            await self.store.commit()

    async def lead(self, replica: str, epoch: int) -> None:
        """This replica won the lease: take the lobby (fencing the old leader)
        and carry on with whatever it left half done."""
        assert self.store is not None
        doc = await self.store.claim(replica, epoch)
        self.restore(doc)
        self.via.clear()  # (a replica leading again: its last term's are stale)
        self.leading = True
        self.since_ms = now_ms()
        log.info("lobby taken over", extra={
            "epoch": epoch, "tickets": len(self.queue.by_player),
            "rooms": len(self.rooms.by_code), "placing": len(self.placing)})
        self._carry_on()

    def _carry_on(self) -> None:
        """Place what the lobby says is being placed and nothing places now:
        what a former leader left half done, and what a lobby write that
        failed (a JetStream hiccup) left stranded — matches taken and offers
        started whose placing never began, a game made but not yet written
        as seated. Each asks for its own game id, so the game already made
        is the one placed (docs/protocol.md 4)."""
        for mt in list(self.placing.values()):
            self._spawn_placing(mt.id, self._place_quick(mt))
        for r in list(self.rematched.values()):
            if not r.new_game_id:  # ready, but its game not placed (or not seated) yet
                self._spawn_placing("r:" + r.game_id, self._start_rematch(r))

    def _spawn_placing(self, key: str, coro: Coroutine[Any, Any, None]) -> None:
        """One placing at a time per quick match or offer; an error (a lobby
        write that failed) leaves it to the next tick's :meth:`_carry_on`."""
        if key in self.placing_now:
            coro.close()
            return
        self.placing_now.add(key)

        async def run() -> None:
            try:
                await coro
            except Fenced:
                pass  # not the leader any more: the new one carries on
            except Exception as exc:  # noqa: BLE001 - logged: tried again next tick
                log.warning("placing interrupted, tried again: %r", exc, extra={"what": key})
            finally:
                self.placing_now.discard(key)
        self._spawn(run())

    def step_down(self) -> None:
        """Not the leader any more: forget the lobby (the leader has it)."""
        if not self.leading:
            return
        log.warning("no longer the lobby's leader")
        self.leading = False
        if self.store is not None:
            self.store.cancel()
        for task in list(self._tasks):
            task.cancel()
        self.restore(None)
        self.via.clear()
        self.failing = None
        self.gauges(now_ms())  # the leader counts the waiting tickets, not this replica

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- ratings ------------------------------------------------------------
    async def rating(self, game: str, player: str, strict: bool = False) -> Rating:
        """The player's rating (a new player's when there is none). When the
        bucket cannot be read: with ``strict`` (rating a result) the error
        is raised — a default taken for the stored rating would overwrite
        it — else a new player's rating is shown, not kept."""
        key = (game, player)
        r = self.ratings.get(key)
        if r is None:
            try:
                entry = await self.kv.get(f"{game}.{player}")
                r = Rating.from_json(orjson.loads(entry.value or b"{}"))
                r.rev = int(entry.revision or 0)
            except KeyNotFoundError:
                r = Rating()
            except Exception:
                if strict:
                    raise
                log.warning("rating unreadable", extra={"player": player, "game": game})
                return Rating()
            self._keep_rating(key, r)
        else:
            self.ratings.move_to_end(key)
        return r

    def _keep_rating(self, key: tuple[str, str], r: Rating) -> None:
        self.ratings[key] = r
        self.ratings.move_to_end(key)
        while len(self.ratings) > RATINGS_KEPT:
            self.ratings.popitem(last=False)

    async def ratings_of(self, player: str) -> list[dict[str, Any]]:
        out = []
        for g in GAMES:
            r = await self.rating(g, player)
            out.append(standings.decorate({"game": g, "mu": round(r.mu, 3),
                                           "sigma": round(r.sigma, 3),
                                           "ordinal": round(r.ordinal, 3), "games": r.games}))
        return out

    async def on_result(self, result: dict[str, Any]) -> None:
        game = result.get("game")
        if game not in GAMES:
            return
        gid = str(result.get("game_id"))
        if self.unseat(gid, seat_players(result).values()):
            await self.commit()
        for attempt in range(RATE_ATTEMPTS):
            try:
                changes = await self._rate(game, gid, result)
                break
            except KeyWrongLastSequenceError:
                # a rating moved in the bucket since it was read: a write of
                # ours a frozen NATS server held and applied late, or a
                # replica that led before this one. Read again and rate from
                # what is stored (never over it)
                for pid in seat_players(result).values():
                    self.ratings.pop((game, pid), None)
                log.warning("a rating moved since it was read: rated again",
                            extra={"game_id": gid})
                if attempt == RATE_ATTEMPTS - 1:
                    raise
        await self._history(result, changes)

    async def _rate(self, game: str, gid: str, result: dict[str, Any]
                    ) -> dict[str, dict[str, Any]]:
        """Write the new ratings of a result's players, each on the stored
        revision it was computed from (a write held up somewhere and applied
        late then fails rather than take a rating back), and tell them."""
        current = {pid: await self.rating(game, pid, strict=True)
                   for pid in seat_players(result).values()}
        new = rate_result(result, current)
        changes: dict[str, dict[str, Any]] = {}
        for pid, r in new.items():
            if current[pid].last == gid:  # this result again: applied before it failed
                if current[pid].change is not None:
                    changes[pid] = current[pid].change
                continue
            seat = next(s for s, p in seat_players(result).items() if p == pid)
            changes[pid] = standings.change(gid, game, standings.outcome(result, seat),
                                            current[pid].ordinal, r.ordinal, r.games,
                                            standings.others_left(result, seat),
                                            any((s or {}).get("kind") == "bot"
                                                for s in result.get("seats") or []),
                                            standings.table_seats(result), placed(result),
                                            r.capped)
            r.last, r.change = gid, changes[pid]
            key, doc = f"{game}.{pid}", orjson.dumps(r.to_json())
            if current[pid].rev:
                r.rev = int(await self.kv.update(key, doc, last=current[pid].rev))
            else:
                r.rev = int(await self.kv.create(key, doc))
            self._keep_rating((game, pid), r)
            await self.notify(pid, {"type": "ratings", "ratings": await self.ratings_of(pid),
                                    "change": changes[pid]})
        return changes

    async def _history(self, result: dict[str, Any], changes: dict[str, dict[str, Any]]) -> None:
        """Every human's "내 기록" entry of a finished game (issue 15)."""
        try:
            if self._kv_history is None:
                self._kv_history = await self.nc.jetstream().key_value(HISTORY_BUCKET)
            for seat, pid in seat_players(result).items():
                entry = standings.history_entry(result, seat, changes.get(pid),
                                                standings.now_ms())
                await standings.add_history(self._kv_history, str(result.get("game")), pid,
                                            entry)
        except Exception as exc:
            if passing(exc):
                raise  # JetStream away: the result comes again (its ratings are not applied twice)
            log.exception("history not written", extra={"game": result.get("game_id")})

    # -- notifications -------------------------------------------------------
    async def notify(self, player: str, frame: dict[str, Any]) -> None:
        await self.nc.publish(self.subjects.player_lobby(player), orjson.dumps(frame))

    async def notify_room(self, room: Room, skip: str | None = None) -> None:
        """The room as it is now, to its members (but ``skip``: one away, or
        one whose answer or welcome brings it)."""
        frame = {"type": "room", "room": room.to_json(self.away)}
        for s in room.humans():
            if s.player != skip:
                await self.notify(s.player, frame)

    # -- placement -------------------------------------------------------------
    def _stub(self, addr: str) -> shard_pb2_grpc.ShardServiceStub:
        ch = self._channels.get(addr)
        if ch is None:
            ch = self._channels[addr] = grpc.aio.insecure_channel(addr)
        return shard_pb2_grpc.ShardServiceStub(ch)

    async def place(self, game: str, options: dict[str, Any], seats: list[Seat],
                    game_id: str = "",
                    keep: Callable[[str], Awaitable[None]] | None = None) -> str:
        """CreateGame on the least-loaded shard, retrying elsewhere; the game's id.

        ``game_id`` is the placement's (chosen once and kept with what is
        placed, so a new leader asks for the same game) and every try asks
        for it: a try whose answer was lost (a deadline, a cut connection)
        and the next make one game, never two (docs/protocol.md 4). After a
        deadline the same shard is asked again (it answers for the making it
        went on with); a shard that names the id's owner sends the next try
        there; an id that is taken (another game's, or an undone making's)
        is replaced by a new one, which ``keep`` makes durable with what is
        placed before it is asked for (a retry, or a new leader, asks for
        it, not for the taken one)."""
        options = dict(options)
        seed = options.pop("seed", None)  # a test option (options.TEST_OPTIONS)
        req = shard_pb2.CreateGameRequest(game=game, options_json=orjson.dumps(options).decode(),
                                          seed=seed, game_id=game_id or new_game_id())
        for s in seats:
            # a room member away (its 60 s running) is away in the game too:
            # nobody's gateway would say so (it said so to the lobby)
            req.seats.add(kind=s.kind, level=s.level, player_id=s.player,
                          away=s.kind == "human" and s.player in self.away)
        loop = asyncio.get_running_loop()
        until = loop.time() + PLACE_BUDGET_S
        refused: set[str] = set()  # shards that made nothing and said why: not asked again
        ask = ""  # the shard the next try goes to: where an earlier one's making is
        reason = "error"  # every shard tried failed, unless none could be tried
        for _ in range(PLACE_TRIES):
            if loop.time() >= until:
                break
            live = {s.shard: s for s in self.shards.live(now_ms())}
            shard = live.get(ask)
            if shard is None:
                cands = [c for c in self.shards.candidates(now_ms()) if c.shard not in refused]
                while not cands and not refused and now_ms() - self.since_ms < 3_000:
                    await asyncio.sleep(0.2)  # just started or took over: heartbeats come each 1 s
                    cands = [c for c in self.shards.candidates(now_ms())
                             if c.shard not in refused]
                if not cands:
                    if not refused and not ask:  # no shard to try at all (each failed
                        # call is counted below)
                        reason = self.shards.why_none(now_ms())
                        m.PLACEMENT_FAILURES.labels(reason).inc()
                    break
                shard = cands[0]
            ask = ""
            self.shards.asking(shard.shard, 1)
            try:
                try:
                    rep = await self._stub(shard.grpc).CreateGame(req, timeout=CREATE_TIMEOUT_S)
                finally:
                    self.shards.asking(shard.shard, -1)
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
                if code == grpc.StatusCode.INVALID_ARGUMENT:
                    log.warning("CreateGame refused: %s", exc.details())
                    raise LobbyError("bad_option") from None
                if code == grpc.StatusCode.ALREADY_EXISTS:
                    log.warning("CreateGame: %s; placing it under a new id", exc.details(),
                                extra={"game": req.game_id})
                    req.game_id = new_game_id()
                    if keep is not None:
                        await keep(req.game_id)
                    continue
                if code == grpc.StatusCode.FAILED_PRECONDITION:  # an earlier try's making
                    ask = _owner(exc)
                    if ask not in live or ask == shard.shard:
                        await asyncio.sleep(0.5)  # its owner is being replaced: ask again
                    continue
                m.PLACEMENT_FAILURES.labels("error").inc()
                self.shards.failed(shard.shard, now_ms())
                log.warning("CreateGame failed on %s: %s", shard.shard, exc.code(),
                            extra={"game": req.game_id})
                if code in UNKNOWN_OUTCOME:  # the making may go on there: ask it again
                    ask = shard.shard
                else:
                    refused.add(shard.shard)
                continue
            self.shards.placed(shard.shard)
            self._placement_ok(shard.shard)
            return str(rep.game_id)
        self._placement_failed(reason)
        raise LobbyError("no_shard")

    def _keeper(self, placed: Any, field: str) -> Callable[[str], Awaitable[None]]:
        """``place``'s ``keep`` for what is placed (a quick match, a 한 판 더,
        a room): its new game id, written to the lobby."""
        async def keep(game_id: str) -> None:
            setattr(placed, field, game_id)
            if isinstance(placed, Rematch):
                self.rematched.touch(placed.game_id)
            elif isinstance(placed, Room):
                self.rooms.by_code.touch(placed.code)
            elif isinstance(placed, QuickMatch):
                self.placing.touch(placed.id)
            await self.commit()
        return keep

    def _placement_failed(self, reason: str) -> None:
        """A game could not be placed: say so once, when it starts."""
        now = now_ms()
        if self.failing is not None:
            self.failing["count"] += 1
            self.failing["reason"] = reason
            self.failing["last_ms"] = now
            return
        self.failing = {"since_ms": now, "last_ms": now, "reason": reason, "count": 1}
        waiting = len(self.waiting_tickets())
        log.warning("cannot place games: %s; players wait until a shard takes them",
                    WHY.get(reason, reason), extra={"reason": reason, "waiting": waiting,
                                                    "shards": self.shards.describe(now)})

    def _placement_ok(self, shard: str) -> None:
        """A game was placed: if placement was failing, say it works again."""
        if self.failing is None:
            return
        f, self.failing = self.failing, None
        # how long placements failed, and since when nothing was tried (the
        # players who waited left): "after 201.6 s of failed placements" was
        # 10 s of failures and 190 s with nobody to place (operator audit)
        now = now_ms()
        log.warning("games are placed again (on %s): placements failed for %.1f s (%d tries), "
                    "the last %.1f s ago", shard, (f["last_ms"] - f["since_ms"]) / 1000, f["count"],
                    (now - f["last_ms"]) / 1000,
                    extra={"shard": shard, "failed": f["count"], "last_reason": f["reason"]})

    async def _announce(self, game_id: str, game: str, kind: str, options: dict[str, Any],
                        seats: list[Seat]) -> None:
        players = []
        for i, s in enumerate(seats):
            p: dict[str, Any] = {"seat": i, "kind": s.kind}
            if s.kind == "human":
                ordinal = (await self.rating(game, s.player)).ordinal
                p.update(player=s.player, nickname=s.nickname, rating=round(ordinal, 2),
                         display=standings.display(ordinal))
            else:
                p["level"] = s.level
            players.append(p)
        for i, s in enumerate(seats):
            if s.kind == "human":
                await self.notify(s.player, {"type": "matched", "game_id": game_id,
                                             "game": game, "seat": i, "kind": kind,
                                             "players": players, "options": options})
        m.MATCHES.labels(game, kind).inc()

    def _seat(self, game_id: str, seats: list[Seat]) -> None:
        """The humans of a game placed are seated in it, and no longer in
        the game they were in before (one they left, still on): a player
        is in one game's seats at a time, as the index says."""
        humans = {s.player: i for i, s in enumerate(seats) if s.kind == "human"}
        for p in humans:
            before = self.seated.get(p, ("",))[0]
            table = self.seated_games.get(before)
            if before != game_id and table is not None and p in table["seats"]:
                left = {q: i for q, i in table["seats"].items() if q != p}
                if left:
                    self.seated_games[before] = {**table, "seats": left}
                else:
                    del self.seated_games[before]
        self.seated_games[game_id] = {"ms": now_ms(), "seats": humans}
        for p, i in humans.items():
            self.seated[p] = (game_id, i)

    def unseat(self, game_id: str, players: Iterable[str] = ()) -> bool:
        """A game is over: its players (and ``players``) are not seated in it
        any more. True when that changed the lobby."""
        table = self.seated_games.pop(game_id, None)
        freed = table is not None
        for p in {*(table or {}).get("seats", {}), *players}:
            if self.seated.get(p, ("",))[0] == game_id:
                del self.seated[p]
                freed = True
        return freed

    async def _place_quick(self, match: QuickMatch) -> None:
        """Place a match that is already durable in ``placing``, with its
        game id (a new leader finishes the ones its predecessor left: the
        same game, if its predecessor made it or was making it)."""
        options = defaults(match.game, quick=True)
        seats = [Seat("human", t.player, t.nickname) for t in match.tickets]
        seats += [Seat("bot", level=lvl) for lvl in match.bots]
        try:
            game_id = await self.place(match.game, options, seats, match.game_id,
                                       keep=self._keeper(match, "game_id"))
        except LobbyError:
            if self.placing.get(match.id) is match:
                del self.placing[match.id]
                self.queue.put_back(match)
                await self.commit()
            return
        if self.placing.get(match.id) is not match:
            return  # cancelled meanwhile (a new leader restored the lobby)
        del self.placing[match.id]
        self._seat(game_id, seats)
        self.queue.placed(match)  # its tickets' parts after the seats' (docs/protocol.md 4.1)
        try:
            await self.commit()
        except Exception:
            # not written: still being placed (a later tick places it again,
            # the same game), its players told nothing yet
            self.placing[match.id] = match
            raise
        now = now_ms()
        for t in match.tickets:
            m.MATCH_WAIT.labels(match.game).observe((now - t.since_ms) / 1000)
        if match.backfilled:
            m.BOT_BACKFILLS.labels(match.game).inc()
        await self._announce(game_id, match.game, "quick", options, seats)

    async def expire_away(self, now: int) -> None:
        """Room members away for longer than the 60 s of RULES.md 4 leave."""
        gone = [p for p, since in self.away.items() if now - since >= self.s.room_away_ms]
        if not gone:
            return
        changed: list[Room] = []
        let_go: list[tuple[str, str]] = []
        for player in gone:
            if getattr(self.rooms.room_of(player), "state", "") == "starting":
                continue  # seated in the game being made (or, if it fails, away still)
            del self.away[player]
            if self.rooms.room_of(player) is not None:
                room = self.rooms.leave(player)
                room.ratings.pop(player, None)
                let_go.append((player, room.code))
                if room.state != "closed":
                    changed.append(room)
        await self.commit()
        for room in changed:
            await self.notify_room(room)
        # and the player, should they be back unnoticed (their "back" did not
        # reach the lobby: it was changing leaders): they were let go silently
        for player, code in let_go:
            await self.notify(player, {"type": "room_left", "code": code, "reason": "away",
                                       "message": AWAY_LEFT_MESSAGE})

    def called(self, name: str, player: str, opened_ms: int, now: int) -> bool:
        """A call of the player's connection opened at ``opened_ms``
        (docs/protocol.md 4.1): False for an Away to ignore, as a later
        connection of theirs called."""
        if name != "Away":
            self.heard(player, opened_ms, now)
        elif self.outlived(player, opened_ms):
            return False
        else:
            self.gone(player, opened_ms)
        return True

    def heard(self, player: str, opened_ms: int, now: int) -> None:
        """A call from the player's connection opened at ``opened_ms``
        (:attr:`back`)."""
        was = self.back.pop(player, None)
        self.back[player] = (max(opened_ms, was[0]) if was else opened_ms, now)
        while True:  # forget the oldest (a gateway tells again within ~2 min)
            first, (_, at) = next(iter(self.back.items()))
            if now - at < BACK_KEPT_MS:
                break
            del self.back[first]

    def outlived(self, player: str, opened_ms: int) -> bool:
        """A connection of the player opened after ``opened_ms`` was heard:
        the Away of the one opened then is not the player's going."""
        was = self.back.get(player)
        return was is not None and was[0] > opened_ms

    def called_via(self, player: str, opened_ms: int, gateway: str) -> None:
        """A call of the player's connection opened at ``opened_ms`` came
        through ``gateway`` (:attr:`via`: the latest-opened one counts)."""
        was = self.via.get(player)
        if was is None or was[0] <= opened_ms:
            self.via[player] = (opened_ms, gateway)
        if self.on_gateway_call is not None:
            self.on_gateway_call(gateway)

    def gone(self, player: str, opened_ms: int) -> None:
        """The connection heard last went away: nothing outlives it."""
        was = self.back.get(player)
        if was is not None and was[0] <= opened_ms:
            del self.back[player]

    async def tick(self) -> None:
        if not self.leading:
            return
        self._carry_on()
        await self.expire_away(now_ms())
        await self.settle_rematches(now_ms())
        matches = self.queue.take_matches(now_ms()) if self._can_place() else []
        if matches:
            for match in matches:
                self.placing[match.id] = match
            await self.commit()
            for match in matches:
                self._spawn_placing(match.id, self._place_quick(match))
        for addr in self.shards.forget_gone(now_ms()):  # (their channels kept
            ch = self._channels.pop(addr, None)  # reconnecting to a dead address)
            if ch is not None:
                await ch.close()
        self.gauges(now_ms())

    def _can_place(self) -> bool:
        """Whether a shard could take a game now. While none can (none heard
        from, every one draining or full), the queue forms no matches: each
        would only fail and go back, its tickets rewritten each time
        (108,035 tries in 58 s, half a core, and the lobby's own requests
        timed out behind them: overload audit). Counted and said as a failed
        placement, once a tick; just started or taken over, the heartbeats
        are waited for first."""
        now = now_ms()
        if self.shards.candidates(now) or not self.queue.by_player:
            return True
        if now - self.since_ms >= 3_000:
            reason = self.shards.why_none(now)
            m.PLACEMENT_FAILURES.labels(reason).inc()
            self._placement_failed(reason)
        return False

    def waiting_tickets(self) -> list[Any]:
        """Quick-match tickets still waiting for a game: queued, or in a match
        being placed (one that finds no shard goes back to the queue)."""
        return [*self.queue.by_player.values(),
                *(t for mt in self.placing.values() for t in mt.tickets)]

    def gauges(self, now: int) -> None:
        """Tickets still waiting for a game, per game: in the queue or in a
        match being placed (one that finds no shard goes back to the queue),
        and how long the oldest of them has waited. A follower shows 0."""
        tickets = self.waiting_tickets()
        for g in GAMES:
            mine = [t for t in tickets if t.game == g]
            m.TICKETS_WAITING.labels(g).set(len(mine))
            oldest = min((t.since_ms for t in mine), default=now)
            m.OLDEST_TICKET.labels(g).set(max(0, now - oldest) / 1000)
        m.ROOMS_OPEN.set(len(self.rooms.by_code))
        head, part = self.store.largest() if self.store is not None and self.leading else (0, 0)
        m.LOBBY_BYTES.labels("head").set(head)
        m.LOBBY_BYTES.labels("largest_part").set(part)

    # -- lobby operations (called by the gRPC servicer) ------------------------
    def _matching(self, player: str) -> bool:
        """Matched, its game being placed (``placing``): no longer in the
        queue, not yet seated, and not free either."""
        return self._placed(player) is not None

    def _placed(self, player: str) -> Ticket | None:
        return next((t for mt in self.placing.values() for t in mt.tickets if t.player == player),
                    None)

    def _ticket(self, player: str) -> Ticket | None:
        """The player's ticket: waiting in the queue, or matched (its game being placed)."""
        return self.queue.by_player.get(player) or self._placed(player)

    def _free(self, player: str) -> None:
        if self._ticket(player) is not None:
            raise LobbyError("already_queued")
        if self.rooms.room_of(player) is not None:
            raise LobbyError("in_room")

    async def enqueue(self, player: str, nickname: str, game: str, seats: int,
                      bot_level: str = "") -> Ticket:
        n = check_seats(game, seats)
        if bot_level and bot_level not in BOT_LEVELS:
            raise LobbyError("bad_level")
        held = self._ticket(player)
        if held is not None and (held.game, held.seats) == (game, n):
            # the same queue asked again: a tab's re-queue after a reconnect
            # the lobby did not hear (a leader change), its ticket kept
            # meanwhile — the ticket as it is, its wait not begun again (its
            # bot level too: a tab shown another tab's queue does not know
            # it); matched, ``matched`` follows (a ``queued`` could come
            # after it: the two go different ways)
            if player not in self.queue.by_player:
                raise LobbyError("match_found")
            return held
        self._free(player)
        r = await self.rating(game, player)
        ticket = self.queue.add(Ticket(player, nickname, game, n, r.ordinal, now_ms(),
                                       bot_level=bot_level))
        await self.commit()
        return ticket

    async def cancel(self, player: str) -> Ticket:
        if player not in self.queue.by_player and self._matching(player):
            raise LobbyError("match_found")  # too late: its game is being made
        ticket = self.queue.remove(player)
        await self.commit()
        return ticket

    async def _room_ratings(self, room: Room) -> None:
        for s in room.humans():
            room.ratings[s.player] = (await self.rating(room.game, s.player)).ordinal

    # -- 한 판 더 (rematch; ttanjit.matchmaker.rematch) ---------------------------
    async def _finished_table(self, game_id: str, player: str
                              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The finished game's record header and directory entry, for one
        who sat in it: to anyone else it is ``no_rematch`` whatever its state
        (a stranger's ``rematch`` was told ``game_not_finished``: whether a
        game exists and is live, 관전 off too: bad input audit)."""
        js = self.nc.jetstream()
        try:
            msg = await js.get_msg(RECORDS_STREAM, seq=1, subject=self.subjects.record(game_id),
                                   next=True)
            header = orjson.loads(msg.data or b"{}")
        except Exception:  # noqa: BLE001 - no such game (or JetStream away)
            raise LobbyError("no_rematch") from None
        if player not in (header.get("players") or {}):
            raise LobbyError("no_rematch")
        try:
            kv = await js.key_value(GAMES_BUCKET)
            entry = await finished_entry(kv, game_id, FINISHING_S)
        except Exception:  # noqa: BLE001 - no such game (or JetStream away)
            raise LobbyError("no_rematch") from None
        return header, entry

    async def rematch(self, player: str, nickname: str, game_id: str, accept: bool) -> None:
        if await self._answer_started(player, game_id):
            return
        r = self.rematches.get(game_id)
        if r is None:  # the first answer opens the offer (a "no" too: the others see it)
            header, entry = await self._finished_table(game_id, player)
            if await self._answer_started(player, game_id):  # it started while we read
                return
            r = self.rematches.get(game_id) or Rematch.from_game(
                game_id, header, entry, now_ms(), self.s.rematch_ms)
            if player not in r.humans:
                raise LobbyError("no_rematch")
            gone, _ = self.declined_before.pop(game_id, ([], 0))
            r.declined += [p for p in gone if p in r.humans and p not in r.declined]
            self.rematches[game_id] = r
        r.answer(player, nickname, accept)
        self.rematches.touch(game_id)
        await self.commit()
        await self.notify_rematch(r, r.frame())
        await self.settle_rematches(now_ms(), only=game_id)

    async def peek_rematch(self, player: str, game_id: str) -> None:
        """The table's offer as it is, to one of its humans (a results page
        reloaded, or opened later: it showed none until the offer changed,
        and offered 한 판 더 after it had started); nothing when there is
        none (the page offers 한 판 더) or the player is not one of them."""
        try:
            if await self._answer_started(player, game_id):  # its state, as to a late answer
                return
        except LobbyError:  # not one of the table's humans: nothing to tell
            return
        r = self.rematches.get(game_id)
        if r is not None and player in r.humans:
            await self.notify(player, r.frame())

    async def _answer_started(self, player: str, game_id: str) -> bool:
        """An offer that started already: an answer (a reload asking again, a
        late one, 로비로) changes nothing and opens no new offer; the player
        gets its state, "started" with the new game once that is placed."""
        done = self.rematched.get(game_id)
        if done is None:
            return False
        if player not in done.humans:
            raise LobbyError("no_rematch")
        await self.notify(player, done.frame("started" if done.new_game_id else "open"))
        return True

    async def notify_rematch(self, r: Rematch, frame: dict[str, Any]) -> None:
        for pid in r.humans:
            await self.notify(pid, frame)

    async def settle_rematches(self, now: int, only: str = "") -> None:
        """Start the offers that are ready; drop the ones nobody wants."""
        for gid, r in list(self.rematches.items()):
            if only and gid != only:
                continue
            if r.dead(now):
                del self.rematches[gid]
                # kept when everyone declined too (docs/websocket.md 3.1: who
                # turned it down stays turned down): one who asks later is
                # taken off the list by their own answer, the others not waited
                # for (the later offer waited its 20 s for a player in the
                # lobby, then started with a bot anyway: docs audit)
                if r.declined:
                    self.declined_before[gid] = (list(r.declined), now)
                await self.commit()
                await self.notify_rematch(r, r.frame("expired"))
            elif r.ready(now):
                # moved, not dropped, in the same write: from now on an
                # answer for the old game gets this offer's state
                del self.rematches[gid]
                r.started_ms = now
                r.place_id = new_game_id()
                self.rematched[gid] = r
                await self.commit()
                self._spawn_placing("r:" + gid, self._start_rematch(r))
        if not only:
            await self.forget_rematched(now)

    async def forget_rematched(self, now: int) -> None:
        """Drop the started offers kept long enough: STARTED_KEEP_MS (at least
        the offer's window) after they started, once their new game is over
        (none of its players is seated in it any more); and the declines of
        expired offers (``declined_before``) as long after they expired."""
        keep = max(STARTED_KEEP_MS, self.s.rematch_ms)
        for gid in [g for g, (_, at) in self.declined_before.items() if now - at >= keep]:
            del self.declined_before[gid]
        old = [gid for gid, r in self.rematched.items() if now - r.started_ms >= keep
               and not any(self.seated.get(p, ("",))[0] == r.new_game_id
                           for p in r.humans if r.new_game_id)]
        for gid in old:
            del self.rematched[gid]
        if old:
            await self.commit()

    async def _start_rematch(self, r: Rematch) -> None:
        """Place the new game of an offer that is ready (in ``rematched``,
        durable: a new leader finishes the ones its predecessor left)."""
        free = {p for p in r.agreed if p not in self.queue.by_player
                and not self._matching(p) and self.rooms.room_of(p) is None
                # still in the old game, or already seated in this offer's own
                # (placed before a lobby write failed: the same game again)
                and self.seated.get(p, (r.game_id,))[0] in (r.game_id, r.place_id)}
        seats = r.new_seats(free)
        if not any(s.kind == "human" for s in seats):
            await self._rematch_ended(r, "expired")
            return
        try:
            game_id = await self.place(r.game, r.options, seats, r.place_id,
                                       keep=self._keeper(r, "place_id"))
        except LobbyError:
            await self._rematch_ended(r, "failed")  # may be asked again: a new offer
            return
        if self.rematched.get(r.game_id) is not r:
            return  # not ours any more (a new leader restored the lobby)
        r.new_game_id = game_id
        self.rematched.touch(r.game_id)
        self._seat(game_id, seats)
        try:
            await self.commit()
        except Exception:
            r.new_game_id = ""  # not written: placed again by a later tick (the same game)
            self.rematched.touch(r.game_id)
            raise
        await self.notify_rematch(r, r.frame("started"))
        await self._announce(game_id, r.game, "rematch", r.options, seats)

    async def _rematch_ended(self, r: Rematch, state: str) -> None:
        """A ready offer that started no game after all: forget it, then say so."""
        if self.rematched.get(r.game_id) is r:
            del self.rematched[r.game_id]
            await self.commit()
        await self.notify_rematch(r, r.frame(state))

    async def start_room(self, player: str) -> tuple[Room, str]:
        room, seats = self.rooms.start_seats(player)  # starting: nobody joins or leaves
        try:
            if not room.place_id:  # durable before CreateGame: a start pressed again
                # (a new leader's too) asks for the same game
                room.place_id = new_game_id()
                self.rooms.by_code.touch(room.code)
            await self.commit()
            game_id = await self.place(room.game, room.options, seats, room.place_id,
                                       keep=self._keeper(room, "place_id"))
        except BaseException:
            self.rooms.unstart(room)
            raise
        self.rooms.started(room, game_id, now_ms())
        self._seat(game_id, seats)
        await self.commit()
        await self._announce(game_id, room.game, "room", room.options, seats)
        return room, game_id


class Servicer(matchmaker_pb2_grpc.MatchmakerServicer):
    """Every replica serves the gRPC API; a follower passes each call on to
    the leader (docs/protocol.md 4.1) and waits for one while a failover is
    under way, so a gateway may call any replica."""

    def __init__(self, mm: Matchmaker, lease: LeaderLease | None = None) -> None:
        self.mm = mm
        self.lease = lease
        self._channels: dict[str, grpc.aio.Channel] = {}
        # request id -> (loop time, the call's outcome), oldest first (_once)
        self._calls: OrderedDict[str, tuple[float, asyncio.Future[Any]]] = OrderedDict()

    def _stub(self, addr: str) -> matchmaker_pb2_grpc.MatchmakerStub:
        ch = self._channels.get(addr)
        if ch is None:
            ch = self._channels[addr] = grpc.aio.insecure_channel(addr)
        return matchmaker_pb2_grpc.MatchmakerStub(ch)

    async def close(self) -> None:
        for ch in self._channels.values():
            await ch.close()

    async def _serve(self, name: str, req: Any, ctx: Any, local: Any) -> Any:
        left = ctx.time_remaining()
        if left is not None and left <= 0:
            # the caller gave up (this replica was frozen, say) and has tried
            # another: carrying it out now would do it twice
            await ctx.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline passed")
        md = dict(ctx.invocation_metadata() or ())
        forwarded = FORWARDED in md
        rid = str(md.get(REQUEST_MD) or "")
        opened = _opened(md.get(OPENED_MD))
        gateway = str(md.get(GATEWAY_MD) or "")[:64]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + FORWARD_WAIT_S
        while True:
            if self.mm.leading:
                if opened and not self.mm.called(name, _asker(req), opened, now_ms()):
                    return matchmaker_pb2.PlayerState()  # an Away outlived: nothing to do
                if opened and gateway and name != "Away":
                    self.mm.called_via(_asker(req), opened, gateway)
                try:
                    if opened and name not in ("Away", "GetPlayer"):
                        # a call of a connection: its player is here (an Away
                        # told late left a host who went on adding bots 연결
                        # 끊김, then let go: review)
                        await self._back(_asker(req))
                    return await self._once(rid, lambda: local(req))
                except Fenced:
                    self.mm.step_down()
            elif forwarded:
                # passed on to us but we don't lead (any more): the
                # forwarding replica looks for the leader again
                await ctx.abort(grpc.StatusCode.UNAVAILABLE, "not the lobby's leader")
            elif self.lease is not None and self.lease.leader_addr \
                    and self.lease.leader_id != self.lease.id:
                left = deadline - loop.time()
                caller = ctx.time_remaining()  # the caller's attempt: not past it
                if caller is not None:
                    if caller <= 0.01:
                        await ctx.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline passed")
                    left = min(left, caller)
                try:
                    rep = await getattr(self._stub(self.lease.leader_addr), name)(
                        req, timeout=max(0.01, min(2.5, left)),
                        metadata=((FORWARDED, "1"),) + (((REQUEST_MD, rid),) if rid else ())
                        + (opened_md(opened, gateway) if opened else ()))
                    m.FORWARDED.inc()
                    return rep
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (grpc.StatusCode.UNAVAILABLE,
                                          grpc.StatusCode.DEADLINE_EXCEEDED):
                        await ctx.abort(exc.code(), exc.details() or "")
            if loop.time() >= deadline:
                await ctx.abort(grpc.StatusCode.UNAVAILABLE, "no lobby leader")
            await asyncio.sleep(0.2)

    async def _once(self, rid: str, run: Callable[[], Awaitable[Any]]) -> Any:
        """Carry out a call once per request id (grpcutil.Retrying sends one
        with every attempt): an attempt cut off by its deadline (a slow
        lobby write, a slow CreateGame) does not cut the call short, and the
        next attempt gets its outcome rather than doing it again — a second
        bot, a second join, ``room_started`` for the start that worked."""
        if not rid:
            return await run()
        now = asyncio.get_running_loop().time()
        while self._calls:  # forget the calls done a while ago (a retry comes within 20 s)
            first, (at, done) = next(iter(self._calls.items()))
            if len(self._calls) <= CALLS_KEPT and not (done.done() and now - at > CALL_KEPT_S):
                break
            del self._calls[first]
        entry = self._calls.get(rid)
        if entry is None:
            task = asyncio.ensure_future(run())
            task.add_done_callback(lambda t: t.cancelled() or t.exception())  # (retrieved)
            entry = self._calls[rid] = (now, task)
        try:
            return await asyncio.shield(entry[1])
        except Fenced:
            self._calls.pop(rid, None)  # not carried out here: the new leader does it
            raise

    async def _room_op(self, fn: Any, *args: Any, notify: bool = True) -> Any:
        try:
            room = fn(*args)
            await self.mm.commit()
            await self.mm._room_ratings(room)
        except LobbyError as e:
            return matchmaker_pb2.RoomReply(error_code=e.code, error_message=e.message,
                                            game_id=e.game_id)
        if notify:
            await self.mm.notify_room(room)
        return matchmaker_pb2.RoomReply(room=_pb_room(room, self.mm.away))

    async def Enqueue(self, req: Any, ctx: Any) -> Any:
        return await self._serve("Enqueue", req, ctx, self._enqueue)

    async def _enqueue(self, req: Any) -> Any:
        try:
            t = await self.mm.enqueue(req.player.player, req.player.nickname, req.game,
                                      req.seats, req.bot_level)
        except LobbyError as e:
            return matchmaker_pb2.EnqueueReply(error_code=e.code, error_message=e.message)
        return matchmaker_pb2.EnqueueReply(ticket=t.id)

    async def Cancel(self, req: Any, ctx: Any) -> Any:
        return await self._serve("Cancel", req, ctx, self._cancel)

    async def _cancel(self, req: Any) -> Any:
        try:
            t = await self.mm.cancel(req.player)
        except LobbyError as e:
            return matchmaker_pb2.CancelReply(error_code=e.code, error_message=e.message)
        return matchmaker_pb2.CancelReply(game=t.game)

    async def CreateRoom(self, req: Any, ctx: Any) -> Any:
        return await self._serve("CreateRoom", req, ctx, self._create_room)

    async def _create_room(self, req: Any) -> Any:
        try:
            self.mm._free(req.player.player)
            opts = _options(req.options_json)
        except LobbyError as e:
            return matchmaker_pb2.RoomReply(error_code=e.code, error_message=e.message)
        return await self._room_op(self.mm.rooms.create, req.player.player,
                                   req.player.nickname, req.game, req.seats or None, opts)

    async def JoinRoom(self, req: Any, ctx: Any) -> Any:
        return await self._serve("JoinRoom", req, ctx, self._join_room)

    async def _join_room(self, req: Any) -> Any:
        try:
            self.mm._free(req.player.player)  # (queued, being matched, in a room)
        except LobbyError as e:
            return matchmaker_pb2.RoomReply(error_code=e.code, error_message=e.message)
        return await self._room_op(self.mm.rooms.join, req.player.player, req.player.nickname,
                                   req.code)

    async def LeaveRoom(self, req: Any, ctx: Any) -> Any:
        return await self._serve("LeaveRoom", req, ctx, self._leave_room)

    async def _leave_room(self, req: Any) -> Any:
        try:
            room = self.mm.rooms.leave(req.player)
        except LobbyError as e:
            return matchmaker_pb2.RoomReply(error_code=e.code, error_message=e.message)
        self.mm.away.pop(req.player, None)
        await self.mm.commit()
        room.ratings.pop(req.player, None)
        if room.state != "closed":
            await self.mm.notify_room(room)
        return matchmaker_pb2.RoomReply(room=_pb_room(room, self.mm.away))

    async def SetRoomOptions(self, req: Any, ctx: Any) -> Any:
        return await self._serve("SetRoomOptions", req, ctx, self._set_room_options)

    async def _set_room_options(self, req: Any) -> Any:
        try:
            opts = _options(req.options_json)
        except LobbyError as e:
            return matchmaker_pb2.RoomReply(error_code=e.code, error_message=e.message)
        return await self._room_op(self.mm.rooms.set_options, req.player, req.seats or None, opts)

    async def AddBot(self, req: Any, ctx: Any) -> Any:
        return await self._serve("AddBot", req, ctx, lambda r: self._room_op(
            self.mm.rooms.add_bot, r.player, r.level))

    async def RemoveBot(self, req: Any, ctx: Any) -> Any:
        return await self._serve("RemoveBot", req, ctx, lambda r: self._room_op(
            self.mm.rooms.remove_bot, r.player, r.seat))

    async def StartRoom(self, req: Any, ctx: Any) -> Any:
        return await self._serve("StartRoom", req, ctx, self._start_room)

    async def _start_room(self, req: Any) -> Any:
        try:
            room, game_id = await self.mm.start_room(req.player)
        except LobbyError as e:
            return matchmaker_pb2.RoomReply(error_code=e.code, error_message=e.message)
        return matchmaker_pb2.RoomReply(room=_pb_room(room, self.mm.away), game_id=game_id)

    async def Rematch(self, req: Any, ctx: Any) -> Any:
        return await self._serve("Rematch", req, ctx, self._rematch)

    async def _rematch(self, req: Any) -> Any:
        try:
            await self.mm.rematch(req.player.player, req.player.nickname, req.game_id,
                                  req.accept)
        except LobbyError as e:
            return matchmaker_pb2.RematchReply(error_code=e.code, error_message=e.message)
        return matchmaker_pb2.RematchReply()

    async def RematchState(self, req: Any, ctx: Any) -> Any:
        return await self._serve("RematchState", req, ctx, self._rematch_state)

    async def _rematch_state(self, req: Any) -> Any:
        await self.mm.peek_rematch(req.player.player, req.game_id)
        return matchmaker_pb2.RematchReply()

    async def Away(self, req: Any, ctx: Any) -> Any:
        return await self._serve("Away", req, ctx, self._away)

    async def _away(self, req: Any) -> Any:
        # (an Away of a connection older than one heard from: _serve)
        since = now_ms() - max(0, req.away_ms)  # the close (told late: away_ms ago)
        ticket = self.mm.queue.by_player.get(req.player)
        changed = self.mm.queue.drop(req.player)
        room = self.mm.rooms.room_of(req.player)
        newly = room is not None and req.player not in self.mm.away
        if room is not None:
            # an older connection's end told late does not bring the seat's
            # 60 s forward
            self.mm.away[req.player] = max(since, self.mm.away.get(req.player, since))
            changed = True
        if changed:
            await self.mm.commit()
        if newly and room is not None and room.state == "open":
            # the others see the seat wait (a host gone for good read as
            # one still there for its 60 s: rooms audit)
            await self.mm.notify_room(room, skip=req.player)
        if ticket is not None and req.away_ms:
            # told late: a connection of theirs whose calls the leader missed
            # (a second leader change) may be there; its 빠른 대전 must not
            # wait on for nothing (not said for a first try: a reload's
            # new tab, queueing again, would read it as its own)
            await self.mm.notify(req.player, {"type": "queue_cancelled", "game": ticket.game,
                                              "reason": "away", "message": AWAY_UNQUEUED})
        return matchmaker_pb2.PlayerState()

    async def GetPlayer(self, req: Any, ctx: Any) -> Any:
        return await self._serve("GetPlayer", req, ctx, self._get_player)

    async def _back(self, player: str) -> None:
        """A connected player's call: they are back, their room seat waits no
        more; the others see its away mark go (the player's own room comes
        with the answer, or their welcome: a frame before it broke the
        welcome's seq)."""
        if self.mm.away.pop(player, None) is None:
            return
        await self.mm.commit()
        room = self.mm.rooms.room_of(player)
        if room is not None and room.state == "open":
            await self.mm.notify_room(room, skip=player)

    async def _get_player(self, req: Any) -> Any:
        await self._back(req.player)  # asked by a connected player: back
        out = matchmaker_pb2.PlayerState()
        # the ratings first (reading them may wait for JetStream): the
        # lobby as it is once they are read, not as it was before
        for r in await self.mm.ratings_of(req.player):
            out.ratings.add(**r)
        room = self.mm.rooms.room_of(req.player)
        if room is not None:
            out.room.CopyFrom(_pb_room(room, self.mm.away))
        t = self.mm.queue.by_player.get(req.player)
        if t is not None:
            out.queued_game, out.queued_seats = t.game, t.seats
        if req.player in self.mm.seated:
            out.game_id, out.seat = self.mm.seated[req.player]
        return out


async def run_results(mm: Matchmaker, js: Any, stop: asyncio.Event) -> None:
    """Ratings from the finished-games stream (durable: each result once)."""
    sub = await js.pull_subscribe(mm.subjects.results, durable="matchmaker-ratings",
                                  stream=RESULTS_STREAM)
    try:
        await _results_loop(mm, sub, stop)
    finally:
        # A pull subscription keeps what arrives after a fetch gave up (the
        # server's 408 at the fetch's expiry races the client's timeout);
        # nothing takes it from the queue, so ``nc.drain()`` would wait on
        # it forever. Gone before the drain.
        try:
            await sub.unsubscribe()
        except Exception:  # noqa: BLE001 - NATS already gone
            pass


async def _results_loop(mm: Matchmaker, sub: Any, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            msgs = await sub.fetch(32, timeout=1)
        except TimeoutError:
            continue
        except Exception as exc:  # server restarting: try again
            log.warning("results fetch: %r", exc)
            await asyncio.sleep(1)
            continue
        for i, msg in enumerate(msgs):
            try:
                await mm.on_result(orjson.loads(msg.data))
            except Exception as exc:
                # (a rating that kept moving while rated: rated again later)
                if not isinstance(exc, Fenced | KeyWrongLastSequenceError) and not passing(exc):
                    log.exception("bad result message")  # a bug or a result no retry rates
                    await msg.ack()
                    continue
                # NATS away (or another replica leads now): not acknowledged, so
                # it comes again (here, or to the new leader) with those after
                # it, in order; a rating already applied is not applied twice
                for later in msgs[i:]:
                    try:
                        await later.nak(delay=1)
                    except Exception:  # noqa: BLE001 - redelivered after ack_wait anyway
                        pass
                if isinstance(exc, Fenced):
                    log.warning("results left to the new leader")
                    return
                log.warning("result not rated yet, tried again: %r", exc)
                await asyncio.sleep(1)
                break
            await msg.ack()


class LeaseLost(Exception):
    """The lease ran out while the lobby was being taken."""


async def _step(lease: LeaderLease, timeout_s: float) -> bool:
    """One round of the lease (LeaderLease.step): True when just won. A
    leader's round waits no longer than its own lease lasts: a renewal that
    hangs past it ends the leading then, not up to ``timeout_s`` later."""
    if lease.leading:
        timeout_s = max(0.0, min(timeout_s, (lease.expires_ms - now_ms()) / 1000))
    try:
        return await asyncio.wait_for(lease.step(), timeout_s)
    except Exception as exc:  # noqa: BLE001 - NATS away: keep trying
        log.warning("leader lease: %r", exc)
        if lease.leading and now_ms() >= lease.expires_ms:
            lease.leading = False
        return False


async def _take_lobby(mm: Matchmaker, lease: LeaderLease) -> None:
    """Take the lobby for the lease just won, renewing the lease every
    ``renew_ms`` meanwhile: a large lobby takes longer to read and write
    back than the lease lasts (BENCHMARKS.md "Lobby": 4.5 s with 250,000
    players in games), and a lease left to expire would go to another
    replica, whose take-over fences this one's, and so on, with nobody
    leading. Raises LeaseLost when the lease is lost all the same."""
    s = mm.s
    taking = asyncio.create_task(mm.lead(lease.id, lease.epoch))
    try:
        while not taking.done():
            await asyncio.wait({taking}, timeout=s.renew_ms / 1000)
            if taking.done():
                break
            await _step(lease, s.lease_ms / 1000)  # (leading: renews)
            if not lease.leading:
                raise LeaseLost()
    finally:
        if not taking.done():  # the lease lost, or this one cancelled (the replica stops)
            taking.cancel()
            await asyncio.gather(taking, return_exceptions=True)
    taking.result()


async def lead_loop(mm: Matchmaker, lease: LeaderLease, js: Any, stop: asyncio.Event) -> None:
    """Renew or seek the leader lease every ``renew_ms``; take the lobby on
    winning it, let it go on losing it (docs/protocol.md 4.1). The leader
    alone consumes the results stream (ratings)."""
    s = mm.s
    results: asyncio.Task[None] | None = None
    try:
        while not stop.is_set():
            if await _step(lease, s.lease_ms / 1000):
                try:
                    await _take_lobby(mm, lease)
                except Exception as exc:  # noqa: BLE001 - fenced or NATS away: retry later
                    log.warning("taking the lobby failed: %r", exc)
                    mm.step_down()
                    if lease.leading:
                        await lease.release()
                else:
                    results = asyncio.create_task(run_results(mm, js, stop))
            if not lease.leading and mm.leading:
                mm.step_down()
            if not mm.leading and lease.leading:
                await lease.release()  # fenced by a newer leader's lobby write
            if not mm.leading and results is not None:
                results.cancel()
                await asyncio.gather(results, return_exceptions=True)
                results = None
            m.LEADER.set(1 if mm.leading else 0)
            await asyncio.sleep(s.renew_ms / 1000)
    finally:
        if results is not None:
            results.cancel()
            await asyncio.gather(results, return_exceptions=True)


async def serve(settings: Settings, nc: Client, stop: asyncio.Event,
                ready: asyncio.Event | None = None) -> None:
    js = nc.jetstream()
    buckets = await ensure_jetstream(js, Subjects(settings.prefix), settings.js_replicas)
    mm = Matchmaker(nc, buckets[RATINGS_BUCKET], settings, buckets[LOBBY_BUCKET])

    async def on_heartbeat(msg: Any) -> None:
        if relayed(msg, mm.subjects.heartbeat):  # (not a shard's: common.nats.relayed)
            log.warning("a heartbeat relayed by JetStream, dropped")
            return
        try:
            mm.shards.heartbeat(orjson.loads(msg.data), now_ms())
        except (orjson.JSONDecodeError, TypeError, ValueError, AttributeError):
            log.warning("bad heartbeat")

    await nc.subscribe(mm.subjects.heartbeat, cb=on_heartbeat)
    await subscribed(nc)  # the shards' next heartbeats reach us before we say ready
    server, port = aio_server(settings.grpc_port, settings.grpc_host)
    host = settings.advertise_host or socket.gethostname()
    replica = settings.replica or f"{socket.gethostname()}-{secrets.token_hex(3)}"
    lease = LeaderLease(buckets[LOBBY_BUCKET], settings.lobby, replica, f"{host}:{port}",
                        settings.lease_ms, settings.renew_ms)
    servicer = Servicer(mm, lease)
    matchmaker_pb2_grpc.add_MatchmakerServicer_to_server(servicer, server)
    health = HealthServer(server, ["ttanjit.v1.Matchmaker"])
    await server.start()
    await health.set(True)
    placeable = asyncio.create_task(watch_placement(
        mm.shards, health.servicer, stop, has_leader=lambda: mm.leading or bool(
            lease.leader_addr and lease.leader_id != lease.id)))
    log.info("matchmaker ready", extra={"grpc_port": port, "bot_wait_ms": settings.bot_wait_ms,
                                        "replica": replica})
    if ready is not None:
        ready.set()
    leadership = asyncio.create_task(lead_loop(mm, lease, js, stop))
    watch = LobbyGatewayWatch(mm, lambda player, away_ms: servicer._away(
        matchmaker_pb2.PlayerRequest(player=player, away_ms=away_ms)), servicer._back)
    mm.on_gateway_call = watch.heard_from
    gateways = asyncio.create_task(watch.run(stop))
    try:
        while not stop.is_set():
            try:
                await mm.tick()
            except Fenced:
                mm.step_down()
                lease.leading = False
            except Exception:  # noqa: BLE001 - NATS away mid-tick: the next tick retries
                log.exception("lobby tick failed")
            try:
                await asyncio.wait_for(stop.wait(), settings.tick_ms / 1000)
            except TimeoutError:
                pass
    finally:
        await health.set(False)
        placeable.cancel()
        gateways.cancel()
        leadership.cancel()
        await asyncio.gather(leadership, return_exceptions=True)
        await server.stop(2)
        if mm.leading:
            try:
                await asyncio.wait_for(mm.commit(), 2.0)
            except Exception:  # noqa: BLE001 - fenced or NATS gone: the store has the rest
                pass
        await asyncio.gather(*mm._tasks, return_exceptions=True)
        try:
            await asyncio.wait_for(lease.release(), 2.0)  # a follower takes over at once
        except Exception:  # noqa: BLE001 - NATS gone
            pass
        await servicer.close()
