"""HTTP routes of issue 15 (docs/websocket.md 1.1–1.4): the lasting guest
identity (refresh, sign-out, nickname, moving to another device), the
leaderboards, "내 기록" (history) and the replay viewer's steps, and the
live games a player may watch (관전).

Every route that concerns "me" takes the access token in the
``Authorization: Bearer …`` header, never in the URL.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import orjson
from fastapi import FastAPI, Header, Query, Request
from fastapi.responses import Response
from nats.errors import Error as NatsError
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue
from pydantic import BaseModel

from ttanjit.common.nats import (
    DAY_S,
    HISTORY_BUCKET,
    IDENTITY_BUCKET,
    RATINGS_BUCKET,
    RECORDS_MAX_AGE_S,
    Subjects,
    kv_keys,
)
from ttanjit.games import GAMES
from ttanjit.games.record import RecordError
from ttanjit.games.replay_views import seat_steps
from ttanjit.gateway import (
    codec,
    spectate,  # noqa: F401 - registers the spectate frames
)
from ttanjit.gateway.auth import Identity, clean_nickname
from ttanjit.gateway.errors import FrameError
from ttanjit.gateway.finals import bot_levels
from ttanjit.gateway.httperrors import refusal
from ttanjit.gateway.identity import Identities
from ttanjit.gateway.limits import Attempts, client_address
from ttanjit.matchmaker import standings
from ttanjit.matchmaker.ratings import Rating

log = logging.getLogger("ttanjit.gateway")


def now_ms() -> int:
    return standings.now_ms()


class _Once:
    """``start`` run once, however many requests wait for it; run again by
    the next request after it failed."""

    def __init__(self, start: Callable[[], Awaitable[None]]) -> None:
        self.start = start
        self.task: asyncio.Task[None] | None = None

    async def __call__(self) -> None:
        if self.task is None:
            self.task = asyncio.create_task(self.start())
        try:
            await asyncio.shield(self.task)
        except Exception:
            self.task = None  # try again on the next request
            raise


NICK_CACHE_MAX = 50_000  # nicknames a gateway keeps (least recently asked go first)
NICK_CACHE_S = 120.0  # read again after this: a change missed while NATS was away


class Nicknames:
    """Players' nicknames (``ttanjit_identity`` ``n.<player>``) as the
    leaderboards, histories, replays and the 관전 list name them: read when
    first asked for, kept in a bounded cache, and renewed by every change
    (a subscription on the bucket's subjects: new puts only, nothing read
    at start — every guest who ever signed in has an entry). A cached name
    older than ``NICK_CACHE_S`` is read again, in case its change came while
    this gateway's NATS connection was away."""

    def __init__(self, nc: Any, kv: KeyValue, max_size: int = NICK_CACHE_MAX,
                 max_age_s: float = NICK_CACHE_S) -> None:
        self.nc, self.kv = nc, kv
        self.max_size, self.max_age_s = max_size, max_age_s
        # player -> (nickname or "" for none, changed_ms, monotonic time read)
        self.cache: OrderedDict[str, tuple[str, int, float]] = OrderedDict()
        self.reading: set[str] = set()  # asked for, their read under way
        self._sub: Any = None

    async def start(self) -> None:
        self._sub = await self.nc.subscribe(f"$KV.{IDENTITY_BUCKET}.n.*", cb=self._changed)

    async def stop(self) -> None:
        if self._sub is not None:
            try:
                await self._sub.unsubscribe()
            except Exception:  # noqa: BLE001 - connection already closed
                pass

    @staticmethod
    def _parse(value: bytes | None) -> tuple[str, int]:
        try:
            doc = orjson.loads(value or b"{}")
            return str(doc.get("nickname") or ""), int(doc.get("changed_ms") or 0)
        except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError):
            return "", 0

    def _keep(self, pid: str, nick: str, changed: int) -> None:
        old = self.cache.get(pid)
        if old is not None and old[1] > changed:
            return  # a newer change arrived while this one was read
        self.cache[pid] = (nick, changed, time.monotonic())
        self.cache.move_to_end(pid)
        while len(self.cache) > self.max_size:
            self.cache.popitem(last=False)

    async def _changed(self, msg: Any) -> None:
        pid = msg.subject.rsplit(".", 1)[-1]
        if pid not in self.cache and pid not in self.reading:
            return  # nobody asked for it here: not worth keeping
        if (msg.headers or {}).get("KV-Operation") in ("DEL", "PURGE"):
            self.cache.pop(pid, None)
        else:
            self._keep(pid, *self._parse(msg.data))

    async def _read(self, pid: str) -> str:
        self.reading.add(pid)
        try:
            entry = await self.kv.get(f"n.{pid}")
            self._keep(pid, *self._parse(entry.value))
        except KeyNotFoundError:
            self._keep(pid, "", 0)
        except Exception as exc:  # noqa: BLE001 - NATS away: named 손님 this time
            log.warning("nickname unreadable: %r", exc)
        finally:
            self.reading.discard(pid)
        hit = self.cache.get(pid)
        return hit[0] if hit else ""

    async def names(self, pids: Iterable[str]) -> dict[str, str]:
        """Each player's nickname ("손님" for a player who has none)."""
        out: dict[str, str] = {}
        stale = []
        now = time.monotonic()
        for p in set(pids):
            hit = self.cache.get(p)
            if hit is None or now - hit[2] > self.max_age_s:
                stale.append(p)
            else:
                self.cache.move_to_end(p)
                out[p] = hit[0]
        if stale:
            out.update(zip(stale, await asyncio.gather(*(self._read(p) for p in stale)),
                           strict=True))
        return {p: nick or "손님" for p, nick in out.items()}


class Board:
    """Every player's rating per game, kept by watching ``ttanjit_ratings``
    (which the matchmaker updates from the results stream), and per game
    the players on the leaderboard (at least ``BOARD_MIN_GAMES`` rated
    games) in order, kept sorted as ratings change: a change moves one
    row (a bisection and a list insert), and a rank is a bisection. (The
    whole board was sorted again at the first request after any change:
    ~190 ms of the event loop at 100,000 rated players.)"""

    def __init__(self) -> None:
        self.ratings: dict[str, dict[str, Rating]] = {g: {} for g in GAMES}
        # per game, ascending (-display, player): the board, best first
        self.rows: dict[str, list[tuple[int, str]]] = {g: [] for g in GAMES}
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, ratings: KeyValue) -> None:
        w = await ratings.watch(">")
        while True:  # the current values, up to the marker (None), sorted once
            e = await w.updates(timeout=5)
            if e is None:
                break
            self._rating(e, loading=True)
        for game, by_player in self.ratings.items():
            self.rows[game] = sorted(k for k in map(self._row, by_player.values(),
                                                    by_player) if k is not None)
        self._tasks.append(asyncio.create_task(self._follow(w)))

    async def _follow(self, w: Any) -> None:
        while True:
            try:
                e = await w.updates(timeout=3600)
            except Exception:  # noqa: BLE001 - timeout or NATS away: keep watching
                await asyncio.sleep(0.5)
                continue
            if e is not None:
                self._rating(e)

    @staticmethod
    def _row(r: Rating, pid: str) -> tuple[int, str] | None:
        if r.games < standings.BOARD_MIN_GAMES:
            return None
        return -standings.display(r.ordinal), pid

    def _rating(self, e: Any, loading: bool = False) -> None:
        game, _, pid = e.key.partition(".")
        if game not in self.ratings:
            return
        old = self.ratings[game].get(pid)
        if e.operation in ("DEL", "PURGE") or not e.value:
            self.ratings[game].pop(pid, None)
            new = None
        else:
            r = Rating.from_json(orjson.loads(e.value))
            new = self.ratings[game][pid] = Rating(r.mu, r.sigma, r.games)  # no more is shown
        if loading:
            return
        rows = self.rows[game]
        was = self._row(old, pid) if old is not None else None
        if was is not None:
            i = bisect.bisect_left(rows, was)
            if i < len(rows) and rows[i] == was:
                del rows[i]
        now = self._row(new, pid) if new is not None else None
        if now is not None:
            bisect.insort(rows, now)

    def board(self, game: str, me: str | None, limit: int) -> dict[str, Any]:
        rows = self.rows[game]
        out: dict[str, Any] = {"game": game, "min_games": standings.BOARD_MIN_GAMES,
                               "players": len(rows), "entries": []}
        rank = 0
        for i, (neg, pid) in enumerate(rows[:limit]):
            if i == 0 or neg != rows[i - 1][0]:
                rank = i + 1  # equal ratings share a rank
            out["entries"].append({"rank": rank, "player": pid, "display": -neg,
                                   "games": self.ratings[game][pid].games})
        if me is not None:
            r = self.ratings[game].get(me, Rating())
            mine = self._row(r, me)
            if mine is not None:  # the first row of my display is my rank
                out["me"] = {"rank": bisect.bisect_left(rows, (mine[0], "")) + 1,
                             "display": -mine[0], "games": r.games}
            else:
                out["me"] = {"rank": None, "display": standings.display(r.ordinal),
                             "games": r.games,
                             "needs": max(0, standings.BOARD_MIN_GAMES - r.games)}
        return out

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()


class Account:
    """The routes' shared parts. Signing in, refreshing and the other
    identity routes wait only for the buckets' handles; the leaderboards
    wait for the ratings to be read (every rated player's), so a gateway
    that just started never holds a sign-in up behind them."""

    def __init__(self, gw: Any) -> None:
        self.gw = gw
        self.ids: Identities | None = None
        self.history: KeyValue | None = None
        self.names: Nicknames | None = None
        self.board = Board()
        self.ready = _Once(self._start)
        self.board_ready = _Once(self._start_board)

    async def _start(self) -> None:
        js = self.gw.nc.jetstream()
        ident = await js.key_value(IDENTITY_BUCKET)  # made at start (ensure_jetstream)
        names = Nicknames(self.gw.nc, ident)
        await names.start()
        self.ids, self.names = Identities(ident, js, self.gw.tokens.key), names
        self.history = await js.key_value(HISTORY_BUCKET)

    async def _start_board(self) -> None:
        board = Board()
        await board.start(await self.gw.nc.jetstream().key_value(RATINGS_BUCKET))
        self.board = board

    async def nicknames(self, pids: Iterable[str]) -> dict[str, str]:
        assert self.names is not None
        return await self.names.names(pids)

    def who(self, authorization: str | None) -> Identity:
        # the scheme's name in any case (RFC 7235: "bearer …" was unauthenticated)
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise FrameError("unauthenticated")
        return self.gw.tokens.verify(token.strip(), now_ms())  # type: ignore[no-any-return]

    async def standing(self, authorization: str | None) -> Identity:
        """:meth:`who`, for a route that makes something lasting: the token's
        refresh family must still stand (``bad_token`` after 로그아웃 or a
        revocation, though the token has not expired: a 1-hour token left
        behind made a code for another device, a new lasting family, after
        its owner had signed out; identity audit). A token that names no
        family, an older release's, passes as it did there: during an
        upgrade the older gateways still issue them and the web client's
        tokens live an hour, and every rename and code was refused with
        다시 로그인해 주세요 meanwhile (version-skew audit). Drop that once
        no gateway issues them (the release after next)."""
        me = self.who(authorization)
        assert self.ids is not None
        if me.family and not await self.ids.stands(me.family, me.player, now_ms()):
            raise FrameError("bad_token")
        return me

    def issue(self, player: str, nickname: str, refresh: str | None = None,
              with_refresh: bool = False, family: str = "",
              until_ms: int | None = None) -> dict[str, Any]:
        family = family or (refresh.split(".")[0] if refresh else "")
        token, ident = self.gw.tokens.issue(player, nickname, now_ms(), family, until_ms)
        out: dict[str, Any] = {"player": player, "nickname": nickname, "token": token,
                               "expires_ms": ident.expires_ms}
        if with_refresh:
            out["refresh"] = refresh
        return out


class RefreshIn(BaseModel):
    refresh: str


class NicknameIn(BaseModel):
    nickname: str


class CodeIn(BaseModel):
    code: str


STORE_RETRY_S = "2"  # Retry-After of a 503 store_unavailable
RENAME_RATE, RENAME_BURST = 1 / 10, 5  # nickname changes: 5 at once, then one every 10 s
CODE_RATE, CODE_BURST = 1 / 60, 5  # 다른 기기에서 계속하기 codes: 5 at once, then one a minute
# 다시 보기: a player's replays being made at once on a gateway (each reads
# a whole record and re-runs its game: ~0.2 s of CPU and 2 MB for a long
# 10-seat game — 32 at once from one token held every player's frames on
# that gateway up to 1.5 s: security audit)
REPLAYS_AT_ONCE = 2
# finished games' replays kept made (encoded, without the asker's part):
# the same one asked again is read from here
REPLAYS_KEPT, REPLAYS_KEPT_BYTES = 16, 32 * 1024 * 1024


class Replays:
    """Finished games' replay documents, encoded, by (game, seat): a
    finished game's steps never change, so the same one asked again (the
    page reloaded, another seat of the table, or a flood of asks) costs a
    header read and a splice instead of the record's read and its game
    re-run. Least recently used go first, past a count or a size."""

    def __init__(self, most: int = REPLAYS_KEPT, most_bytes: int = REPLAYS_KEPT_BYTES) -> None:
        self.most, self.most_bytes = most, most_bytes
        self.kept: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self.size = 0

    def get(self, game_id: str, seat: int) -> bytes | None:
        body = self.kept.get((game_id, seat))
        if body is not None:
            self.kept.move_to_end((game_id, seat))
        return body

    def put(self, game_id: str, seat: int, body: bytes) -> None:
        if len(body) > self.most_bytes // 4:
            return  # (one would push out most of the others)
        old = self.kept.pop((game_id, seat), None)
        self.size += len(body) - (len(old) if old is not None else 0)
        self.kept[(game_id, seat)] = body
        while len(self.kept) > self.most or self.size > self.most_bytes:
            _, gone = self.kept.popitem(last=False)
            self.size -= len(gone)


def with_fields(body: bytes, extra: dict[str, Any]) -> bytes:
    """An encoded JSON object with ``extra``'s fields added (none of them
    in it): the kept replay with the asker's own part."""
    more = orjson.dumps(extra)
    return more if body == b"{}" else body[:-1] + b"," + more[1:]


@contextlib.asynccontextmanager
async def per_player(limit: Attempts, player: str, code: str) -> AsyncIterator[Any]:
    """One of ``player``'s tries of ``limit``: yields a 429 ``code`` refusal
    (with ``Retry-After``) when none is left, else None; a try that fails
    is given back (only what was made counts)."""
    wait = limit.take(player, time.monotonic())
    if wait:
        yield refusal(code, 429, headers={"Retry-After": str(math.ceil(wait))})
        return
    made = False
    try:
        yield None
        made = True
    finally:
        if not made:
            limit.give_back(player, time.monotonic())


def store_unavailable(exc: BaseException | None = None) -> Any:
    """503 ``store_unavailable`` with ``Retry-After``: JetStream (the
    identities, ratings, histories) is away or not answering — not a bug,
    so a warning, not a traceback."""
    if exc is not None:
        log.warning("account store unavailable: %r", exc)
    return refusal("store_unavailable", 503, headers={"Retry-After": STORE_RETRY_S})


def install(api: FastAPI, gw: Any) -> Account:
    """Add the routes to ``api`` (before the web client's catch-all mount)."""
    acc = Account(gw)
    gw.account = acc

    async def guarded(fn: Any) -> Any:
        try:
            await acc.ready()
            return await fn()
        except FrameError as e:
            if e.code == "store_unavailable":
                return store_unavailable()
            status = 401 if e.code in ("unauthenticated", "bad_token", "bad_refresh") else \
                403 if e.code == "not_your_game" else 404 if e.code == "no_record" else \
                409 if e.code == "game_not_finished" else 400
            return refusal(e.code, status)
        except (NatsError, TimeoutError) as exc:  # JetStream away or not answering
            return store_unavailable(exc)

    # each a KV write (a rename also goes to every gateway; a code lives 10
    # minutes): 200 of each took under half a second (identity audit).
    # Per player, each gateway process on its own (as ``claims``).
    renames = Attempts(RENAME_RATE, RENAME_BURST)
    codes = Attempts(CODE_RATE, CODE_BURST)

    @api.post("/api/refresh")
    async def refresh(body: RefreshIn) -> Any:
        """Trade the refresh credential for an access token and its
        replacement (``refresh: null``: another tab just rotated it — keep
        the one in local storage)."""
        async def go() -> Any:
            assert acc.ids is not None
            r = await acc.ids.refresh(body.refresh, now_ms())
            return acc.issue(r.player, r.nickname, r.refresh, with_refresh=True, family=r.family)
        return await guarded(go)

    @api.post("/api/signout")
    async def signout(body: RefreshIn) -> Any:
        """Revoke the refresh credential (and every rotation of it)."""
        async def go() -> Any:
            assert acc.ids is not None
            return {"revoked": await acc.ids.revoke(body.refresh)}
        return await guarded(go)

    @api.post("/api/nickname")
    async def nickname(body: NicknameIn, authorization: str | None = Header(None)) -> Any:
        """Change my nickname; a new access token carries it."""
        async def go() -> Any:
            assert acc.ids is not None
            me = await acc.standing(authorization)
            nick = clean_nickname(body.nickname)
            async with per_player(renames, me.player, "too_many_renames") as refused:
                if refused is not None:
                    return refused
                await acc.ids.set_nickname(me.player, nick, now_ms())
            # a token of an older release (no family) is renewed no further
            # than it ran: renamed every hour, it lived on for good, never
            # asked whether its device had signed out (review finding)
            return acc.issue(me.player, nick, family=me.family,
                             until_ms=None if me.family else me.expires_ms)
        return await guarded(go)

    @api.post("/api/transfer")
    async def transfer(authorization: str | None = Header(None)) -> Any:
        """다른 기기에서 계속하기: a one-time code (10 minutes)."""
        async def go() -> Any:
            assert acc.ids is not None
            me = await acc.standing(authorization)
            async with per_player(codes, me.player, "too_many_codes") as refused:
                if refused is not None:
                    return refused
                code, expires = await acc.ids.new_code(me.player, now_ms())
            return {"code": code, "expires_ms": expires}
        return await guarded(go)

    claims = Attempts()  # per client address (docs/websocket.md 1.1)

    @api.post("/api/transfer/claim")
    async def claim(body: CodeIn, request: Request) -> Any:
        """Continue as the player of a one-time code, on this device; 10
        attempts at once per client address, then one every 30 s (429
        ``too_many_attempts`` with ``Retry-After``)."""
        address = client_address(request)

        async def go() -> Any:
            assert acc.ids is not None
            wait = claims.take(address, time.monotonic())
            if wait:
                return refusal("too_many_attempts", 429,
                               headers={"Retry-After": str(math.ceil(wait))})
            wrong = False  # only a wrong (or spent, or expired) code costs an attempt
            try:
                player, nick, cred = await acc.ids.use_code(body.code, now_ms())
            except FrameError as e:
                wrong = e.code == "bad_code"
                raise
            finally:
                if not wrong:
                    claims.give_back(address, time.monotonic())
            return acc.issue(player, nick, cred, with_refresh=True)
        return await guarded(go)

    @api.get("/api/leaderboard/{game}")
    async def leaderboard(game: str, limit: int = Query(100, ge=1, le=100),
                          authorization: str | None = Header(None)) -> Any:
        """Top players of a game by display rating (at least 3 rated games),
        and my own rank when signed in."""
        async def go() -> Any:
            if game not in GAMES:
                raise FrameError("unknown_game")
            me = acc.who(authorization).player if authorization else None
            await acc.board_ready()
            out = acc.board.board(game, me, limit)
            names = await acc.nicknames(e["player"] for e in out["entries"])
            for e in out["entries"]:
                e["nickname"] = names[e["player"]]
            return out
        return await guarded(go)

    @api.get("/api/history/{game}")
    async def history(game: str, offset: int = Query(0, ge=0, le=50),
                      limit: int = Query(10, ge=1, le=50),
                      authorization: str | None = Header(None)) -> Any:
        """내 기록: my last 50 games of a game, newest first, paginated."""
        async def go() -> Any:
            # (first, as every route of mine: identity audit; a token left
            # after 로그아웃 reads no history: security audit)
            me = await acc.standing(authorization)
            if game not in GAMES:
                raise FrameError("unknown_game")
            assert acc.history is not None
            games = await standings.read_history(acc.history, game, me.player)
            page = games[offset:offset + limit]
            # a record goes after RECORDS_MAX_AGE_S from its first message
            # (the game's start): a day's margin over the longest game
            replayable = now_ms() - int((RECORDS_MAX_AGE_S - DAY_S) * 1000)
            for g in page:
                g["replay"] = int(g.get("ended_ms") or 0) > replayable
            seats = [s for g in page for s in g.get("seats", []) if s.get("player")]
            names = await acc.nicknames(s["player"] for s in seats)
            for s in seats:
                s["nickname"] = names[s["player"]]
            return {"game": game, "total": len(games), "offset": offset, "games": page}
        return await guarded(go)

    replays = Replays()
    replaying: dict[str, int] = {}  # player -> replays being made for them now

    @api.get("/api/replay/{game_id}")
    async def replay(game_id: str, seat: int | None = Query(None, ge=0, le=9),
                     authorization: str | None = Header(None)) -> Any:
        """A finished game of mine, re-run from its record through its engine
        (the code path of ``ttanjit replay``): one view per step, from my
        seat (or, the game being over, any seat's: ``seat``)."""
        async def go() -> Any:
            me = acc.who(authorization)
            # counted from the token's check on: the family's read is one of
            # the asks' store reads a flood would multiply
            if replaying.get(me.player, 0) >= REPLAYS_AT_ONCE:
                return refusal("rate_limited", 429, headers={"Retry-After": "1"})
            replaying[me.player] = replaying.get(me.player, 0) + 1
            try:
                await acc.standing(authorization)  # (not a token left after 로그아웃)
                if not codec.is_game_id(game_id):
                    raise FrameError("no_record")
                return await made(me.player)
            finally:
                replaying[me.player] -= 1
                if not replaying[me.player]:
                    del replaying[me.player]

        async def made(player: str) -> Any:
            from ttanjit.shard import records
            from ttanjit.shard.game import record_from_messages

            subject = Subjects(gw.prefix).record(game_id)
            try:
                # who sat in it first, from its header alone: a stranger's
                # ask had the whole record read before its 403 (identity audit)
                head = await records.first(gw.nc.jetstream(), subject)
            except (NatsError, TimeoutError):
                raise  # JetStream away: 503 store_unavailable (guarded)
            except Exception as exc:  # noqa: BLE001 - a header that cannot be read as one
                log.warning("record unreadable: %r", exc, extra={"game": game_id})
                raise FrameError("no_record") from None
            if head is None:
                raise FrameError("no_record")
            players = head.get("players") or {}
            mine = players.get(player)
            if not isinstance(mine, int):
                raise FrameError("not_your_game")
            body = replays.get(game_id, mine if seat is None else seat)
            if body is None:
                try:
                    rec = await records.read(gw.nc.jetstream(), subject)
                except (NatsError, TimeoutError):
                    raise  # JetStream away: 503 store_unavailable (guarded), try again later
                except Exception as exc:  # noqa: BLE001 - a record that cannot be read as one
                    log.warning("record unreadable: %r", exc, extra={"game": game_id})
                    raise FrameError("no_record") from None
                if rec is None:
                    raise FrameError("no_record")
                players = rec.header.get("players") or {}
                mine = players.get(player)
                if not isinstance(mine, int):
                    raise FrameError("not_your_game")
                try:  # (a newer release's record, read during a rolling upgrade: 500 before)
                    record = record_from_messages(rec.header, rec.entries)
                except RecordError:
                    raise FrameError("no_record") from None
                if seat is not None and seat >= len(record.setup.seats):
                    # a seat the game does not have (it said no_record: fuzz finding)
                    return refusal("bad_field", 422, field="seat")
                try:  # (made and encoded beside the event loop)
                    doc = await asyncio.to_thread(seat_steps, record, mine if seat is None else seat)
                except RecordError:
                    raise FrameError("no_record") from None
                if seat is not None and seat != mine and not doc["finished"]:
                    # other seats only after the end (it said not_your_game, "내가
                    # 참여한 게임만 …", of my own game: replay audit)
                    raise FrameError("game_not_finished")
                body = await asyncio.to_thread(orjson.dumps, doc)
                if doc["finished"]:  # (a live game's own seat grows: made anew each time)
                    replays.put(game_id, mine if seat is None else seat, body)
            names = await acc.nicknames(players)
            return Response(with_fields(body, {
                "game_id": game_id, "my_seat": mine,
                "nicknames": {str(s): names[p] for p, s in players.items()}}),
                media_type="application/json")
        return await guarded(go)

    @api.get("/api/live")
    async def live(authorization: str | None = Header(None)) -> Any:
        """관전: the live games (game, players, spectators allowed)."""
        async def go() -> Any:
            acc.who(authorization)
            return {"games": await live_games(gw, acc)}
        return await guarded(go)

    return acc


_live_cache: dict[int, tuple[float, list[dict[str, Any]]]] = {}
LIVE_CACHE_S = 2.0  # one directory scan per gateway per 2 s, however many lobbies ask


def _progress(view: dict[str, Any]) -> dict[str, Any]:
    """Where the game is, from its public view: the round of 줄줄이 벌점, the
    hand (판) of Hakka, the cards left in One Card hands."""
    out: dict[str, Any] = {}
    if isinstance(view.get("round"), int):
        out["round"] = view["round"]
        total = view.get("rounds") if view.get("game") == "penalty_rows" else view.get("hands_total")
        if isinstance(total, int):
            out["rounds"] = total
    if view.get("game") == "onecard" and isinstance(view.get("hand_counts"), list):
        # the seats dealt in, one out of the game null (its 0 cards read as a
        # winner's: "남은 카드 0·4·7"; an empty seat's 0 as a player's: audit)
        dealt, out_of_it = view.get("dealt"), set(view.get("eliminated") or [])
        out["cards"] = [None if s in out_of_it else n for s, n in enumerate(view["hand_counts"])
                        if not isinstance(dealt, list) or s >= len(dealt) or dealt[s]]
    if view.get("paused"):  # every player away: it waits (RULES.md 4), nothing goes on
        out["paused"] = True
    return out


async def _public_view(gw: Any, gid: str) -> dict[str, Any] | None:
    try:
        msg = await gw.replies.request(gw.subjects.sync(gid),
                                       orjson.dumps({"spectator": True, "last_seq": -1}), 1.0)
        reply = orjson.loads(msg.data)
    except Exception:  # noqa: BLE001 - the shard is moving it: listed without progress
        return None
    if not isinstance(reply, dict) or reply.get("ok") is False:
        return None
    view = reply.get("view")
    return view if isinstance(view, dict) else None


LIVE_LOOK_AT = 500  # the newest live games the list looks at (for 50 that allow 관전)


async def live_games(gw: Any, acc: Account, limit: int = 50) -> list[dict[str, Any]]:
    """Live games, newest first: the games that have an owner (``ttanjit_owners``
    holds one entry per live game, removed when it ends — the game directory
    ``ttanjit_games`` keeps every game of 7 days), with their directory
    entries, where each one is (its public view) and its spectators
    (:mod:`ttanjit.gateway.watchers`); games whose host turned 관전 off are
    left out."""
    from ttanjit.gateway import watchers

    now = time.monotonic()
    hit = _live_cache.get(id(gw))
    if hit is not None and now - hit[0] < LIVE_CACHE_S:
        return hit[1]
    kv = gw.games
    try:  # in the order their shards took them (created, or moved after a failure)
        keys = [k for k in await kv_keys(gw.owners) if codec.is_game_id(k)]
    except Exception:  # noqa: BLE001 - NATS away
        keys = []
    found = []
    for k in reversed(keys[-LIVE_LOOK_AT:]):
        try:
            doc = orjson.loads((await kv.get(k)).value or b"{}")
        except Exception:  # noqa: BLE001 - deleted meanwhile
            continue
        if doc.get("state") != "live" or doc.get("spectators") is False:
            continue
        found.append((k, doc))
        if len(found) >= limit:
            break
    views = await asyncio.gather(*(_public_view(gw, k) for k, _ in found))
    watching = await watchers.counts(gw)
    names = await acc.nicknames(p for _, doc in found for p in doc.get("players") or {})
    out = []
    for (k, doc), view in zip(found, views, strict=True):
        if view is not None and view.get("finished"):
            continue
        players = doc.get("players") or {}
        seated = (view or {}).get("seats") or []
        # a player whose seat a bot took over (left, or away for 60 s): said
        # so (the list named them as if still playing: trial finding)
        # (not a seat taken once out of the game: 탈락, no bot plays it)
        gone = {x.get("seat") for x in seated if isinstance(x, dict) and x.get("substituted")
                and not x.get("kept")}
        item: dict[str, Any] = {
            "game_id": k, "game": doc.get("game"),
            "players": [{"seat": s, "nickname": names[p], **({"substituted": True} if s in gone else {})}
                        for p, s in sorted(players.items(), key=lambda x: x[1])],
            "bots": [{"seat": i, "level": lvl} for i, lvl in bot_levels(doc).items()],
            "spectators": watching.get(k, 0)}
        if view is not None:
            item["seats"] = _seat_count(view)
            item.update(_progress(view))
        out.append(item)
    # games in play before those that wait for their players (nothing moves
    # there to watch), each group newest first
    out.sort(key=lambda g: bool(g.get("paused")))
    _live_cache[id(gw)] = (now, out)
    return out


def _seat_count(view: dict[str, Any]) -> int:
    n = view.get("n")
    return n if isinstance(n, int) else len(view.get("seats") or [])
