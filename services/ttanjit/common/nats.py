"""NATS and JetStream plumbing shared by the services (docs/protocol.md).

- :class:`Subjects`: every subject name, under one prefix (``TTANJIT_NATS_PREFIX``).
- :func:`connect`: a NATS connection that keeps reconnecting; ``url`` may be
  a comma-separated list of a cluster's servers (:func:`server_urls`).
- :func:`unless_disconnected`: await a NATS step, given up when the
  connection is lost (shutdowns that must not wait out NATS timeouts).
- :func:`subscribed`: wait until the server holds a connection's subscriptions.
- :func:`ensure_jetstream`: creates (or updates) the streams and KV buckets of
  docs/protocol.md section 5, idempotently; the shards and matchmakers call
  it at start. :func:`find_jetstream`: the gateway's, which may not make
  them (its NATS user, ``common.natsauth``), waits for them instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import (
    DiscardPolicy,
    Header,
    KeyValueConfig,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import APIError, BadRequestError, KeyWrongLastSequenceError
from nats.js.kv import KV_DEL, KV_OP, KV_PURGE, MSG_ROLLUP_SUBJECT, KeyValue
from prometheus_client import Counter

from ttanjit.common.config import masked_urls

log = logging.getLogger("ttanjit.nats")
T = TypeVar("T")

RECORDS_STREAM = "TTANJIT_RECORDS"
RESULTS_STREAM = "TTANJIT_RESULTS"
OWNERS_BUCKET = "ttanjit_owners"
GAMES_BUCKET = "ttanjit_games"
RATINGS_BUCKET = "ttanjit_ratings"
SESSIONS_BUCKET = "ttanjit_sessions"
LOBBY_BUCKET = "ttanjit_lobby"
IDENTITY_BUCKET = "ttanjit_identity"  # refresh credentials, device codes (issue 15)
HISTORY_BUCKET = "ttanjit_history"  # 내 기록: each player's last games per game
WATCHERS_BUCKET = "ttanjit_watchers"  # spectators per game and gateway (in memory)

DAY_S = 86_400.0
# a game's record is kept 30 days (its oldest messages, the header first,
# go then: 내 기록 lists a game longer, without its 다시 보기)
RECORDS_MAX_AGE_S = 30 * DAY_S


@dataclass(frozen=True, slots=True)
class Subjects:
    """Subject names (docs/protocol.md). Partitioned by game id where they
    concern one game."""

    prefix: str = "ttanjit.v1"

    def cmd(self, game_id: str) -> str:
        return f"{self.prefix}.game.{game_id}.cmd"

    def sync(self, game_id: str) -> str:
        return f"{self.prefix}.game.{game_id}.sync"

    def public(self, game_id: str) -> str:
        return f"{self.prefix}.game.{game_id}.public"

    def player_events(self, player_id: str) -> str:
        return f"{self.prefix}.player.{player_id}.events"

    def gateway_games(self, gateway_id: str) -> str:
        """Game bursts for the players connected to one gateway (issue 13:
        one message per burst and gateway; ``player_events`` only while the
        shard does not know a player's gateway)."""
        return f"{self.prefix}.gw.{gateway_id}.games"

    def player_lobby(self, player_id: str) -> str:
        """Lobby frames (matchmaker -> the player's gateway connection)."""
        return f"{self.prefix}.player.{player_id}.lobby"

    def player_kick(self, player_id: str) -> str:
        """A newer connection of the player asks the old one to close."""
        return f"{self.prefix}.player.{player_id}.kick"

    def emotes(self, game_id: str) -> str:
        """A player's quick reaction, for the game's spectators (docs/websocket.md 3.2)."""
        return f"{self.prefix}.game.{game_id}.emotes"

    def watchers(self, game_id: str) -> str:
        """A gateway's spectator count of the game changed (docs/websocket.md 3.5)."""
        return f"{self.prefix}.game.{game_id}.watchers"

    def player_all(self, player_id: str) -> str:
        """Every subject of one player (a gateway connection subscribes)."""
        return f"{self.prefix}.player.{player_id}.*"

    def record(self, game_id: str) -> str:
        return f"{self.prefix}.record.{game_id}"

    def result(self, game: str) -> str:
        return f"{self.prefix}.result.{game}"

    @property
    def results(self) -> str:
        """Every game's results (the ratings consumer)."""
        return f"{self.prefix}.result.*"

    @property
    def bots_decide(self) -> str:
        return f"{self.prefix}.bots.decide"

    @property
    def heartbeat(self) -> str:
        return f"{self.prefix}.shards.heartbeat"

    def adopt(self, shard_id: str) -> str:
        """Handover: a draining shard asks ``shard_id`` to take games."""
        return f"{self.prefix}.shard.{shard_id}.adopt"


def server_urls(url: str) -> list[str]:
    """``TTANJIT_NATS_URL`` as nats-py's ``servers``: one URL or several
    separated by commas (the nodes of a cluster), e.g.
    ``nats://a:4222,nats://b:4222,nats://c:4222``."""
    urls = [u.strip() for u in url.split(",") if u.strip()]
    if not urls:
        raise ValueError(f"no NATS server in {url!r}")
    return urls


def server_options(url: str) -> dict[str, Any]:
    """nats-py's ``servers`` for ``url`` (:func:`server_urls`), with the user
    and password (or token) in them taken out and given as ``user`` and
    ``password`` (``token``), percent-decoded: nats-py sends a URL's user to
    that server only, so a server the cluster announced (reached once the
    ones named went) got none and refused every try (review finding), and
    it sent them still percent-encoded."""
    servers, creds = [], {}
    for one in server_urls(url):
        parts = urlsplit(one if "://" in one else f"nats://{one}")
        if parts.username is not None:
            these = ({"user": unquote(parts.username), "password": unquote(parts.password)}
                     if parts.password is not None else {"token": unquote(parts.username)})
            if creds and these != creds:  # (one connection signs in as one user)
                raise ValueError("the NATS addresses name different users: "
                                 f"{masked_urls(url)} (give them all the same)")
            creds = these
        servers.append(urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2])))
    return {"servers": servers, **creds}


# each connection's "disconnected" state, for :func:`unless_disconnected`
_LOST: weakref.WeakKeyDictionary[Client, asyncio.Event] = weakref.WeakKeyDictionary()


# A server that goes silent (its host gone without a FIN, its network cut,
# the process frozen: the kernel still takes the bytes) is noticed by pings
# alone. nats-py's default (one every 120 s, stale after 2 unanswered) left a
# shard or bot worker on such a node idle for 4-6 minutes while its games
# stalled; here the connection is stale 3-4 s after the server went silent
# (a ping unanswered for 3 s: a loaded server or network gets that long),
# and the client moves to another server of the list or that the cluster
# announced (tests/integration/test_nats_cluster.py). A ping a second per
# connection costs a cluster nothing.
PING_INTERVAL_S = 1
MAX_OUTSTANDING_PINGS = 3
# Before it reconnects, nats-py closes the stale connection and waits until
# it is closed, which asyncio does once the unsent bytes are sent: to a silent
# server never (until TCP gives up, ~15 min), so a client that had more
# unsent than the kernel's buffers hold (a busy shard or gateway) stayed on
# the silent server (nats-io/nats.py#671). The wait is cut short here: when
# no unsent byte went out for CLOSE_WAIT_S the connection is aborted, its
# unsent bytes dropped (a request among them times out and is asked again,
# as for any reconnect). A close whose bytes are still moving (a slow link)
# waits for them as before.
CLOSE_WAIT_S = 1.0


def _bounded_close_wait() -> None:
    from nats.aio.transport import TcpTransport

    if getattr(TcpTransport.wait_closed, "_ttanjit", False):
        return

    def _retrieved(fut: asyncio.Future[None]) -> None:
        if not fut.cancelled():
            fut.exception()  # (a reset is no news to a connection given up)

    async def wait_closed(self: TcpTransport) -> None:
        writer = self._io_writer
        if writer is None:
            return
        closed = asyncio.ensure_future(writer.wait_closed())
        closed.add_done_callback(_retrieved)
        try:
            unsent = writer.transport.get_write_buffer_size()
            while not (await asyncio.wait({closed}, timeout=CLOSE_WAIT_S))[0]:
                left = writer.transport.get_write_buffer_size()
                if left and left < unsent:
                    unsent = left  # going out: wait on
                    continue
                log.warning("nats: %d bytes not taken in %.0f s (the server takes "
                            "nothing); aborting the connection", left, CLOSE_WAIT_S)
                writer.transport.abort()
                await asyncio.wait({closed}, timeout=CLOSE_WAIT_S)
                break
        except BaseException:  # cancelled meanwhile (a close during a reconnect)
            writer.transport.abort()
            raise

    wait_closed._ttanjit = True  # type: ignore[attr-defined]
    TcpTransport.wait_closed = wait_closed  # type: ignore[method-assign]


_bounded_close_wait()


# NATS refused this process's user a subscription or a publish (its
# permissions, ttanjit.common.natsauth): nats-py says it in an error
# callback, "nats: permissions violation for subscription to …"
PERMISSIONS = "permissions violation"
LATE_REPLY = 'publish to "_inbox.'  # (nats-py's words are lowered)
REFUSED = Counter(
    "ttanjit_nats_refused_total",
    "Subscriptions and publishes NATS refused this process's user: the NATS users' "
    "permissions and nats.prefix disagree, or a service runs as another's user",
    ["op"])
for _op in ("subscribe", "publish"):  # (0 from the start: increase() sees the first)
    REFUSED.labels(_op)
_REFUSALS: weakref.WeakKeyDictionary[Client, list[str]] = weakref.WeakKeyDictionary()


def refused(nc: Client | None, what: str) -> None:
    """Count and say a refusal (``what``: nats-py's words)."""
    REFUSED.labels("subscribe" if "subscription" in what.lower() else "publish").inc()
    log.error("NATS refused this process's user: %s (the NATS users' permissions — "
              "deploy/nats/values.yaml — and nats.prefix disagree, or this service runs "
              "as another's user)", what)
    if nc is not None:
        kept = _REFUSALS.setdefault(nc, [])
        kept[:] = [*kept[-19:], what]


def refusals(nc: Client) -> list[str]:
    """The last refusals (nats-py's words) ``nc`` was told of: a
    subscription's comes before the answer to a flush that follows it."""
    return list(_REFUSALS.get(nc, ()))


class Stopped(Exception):
    """Asked to stop (``connect``'s ``stop``) before NATS answered."""


async def connect(url: str, name: str, *,
                  disconnected_cb: Callable[[], Awaitable[None]] | None = None,
                  reconnected_cb: Callable[[], Awaitable[None]] | None = None,
                  stop: asyncio.Event | None = None,
                  **kwargs: object) -> Client:
    """Connect, retrying until a server is there; reconnects forever (to any
    server of the list or that the cluster announces). ``stop`` set
    meanwhile (SIGTERM) raises :class:`Stopped`: a Pod deleted while NATS
    was away waited out its grace period to be killed."""
    lost = asyncio.Event()
    made: list[Client] = []

    async def _err(exc: Exception) -> None:
        text = str(exc)
        if PERMISSIONS in text.lower() and LATE_REPLY in text.lower():
            # an answer sent on a later connection than its ask came on
            # (nats-py holds publishes over a reconnect): refused to a user
            # held to answering (the bots'), its asker asks again — not a
            # misconfiguration
            log.info("NATS refused an answer to an ask from before it reconnected: %s", text)
        elif PERMISSIONS in text.lower():
            refused(made[0] if made else None, text)
        else:
            log.warning("nats error: %s", exc)

    async def _disc() -> None:
        lost.set()
        if made and made[0].is_closed:  # our own close (a service stopping): not a fault
            log.info("nats connection closed")
        elif disconnected_cb is not None:
            await disconnected_cb()
        else:
            log.warning("nats disconnected")

    async def _recon() -> None:
        lost.clear()
        if reconnected_cb is not None:
            await reconnected_cb()
        else:
            log.info("nats reconnected")

    opts: dict[str, object] = dict(
        **server_options(url), name=name, max_reconnect_attempts=-1, reconnect_time_wait=0.5,
        connect_timeout=2, error_cb=_err, disconnected_cb=_disc, reconnected_cb=_recon,
        allow_reconnect=True, pending_size=64 * 1024 * 1024,
        ping_interval=PING_INTERVAL_S, max_outstanding_pings=MAX_OUTSTANDING_PINGS,
    )
    opts.update(kwargs)
    for attempt in range(60):
        try:
            nc = Client()
            try:
                await _unless(stop, nc.connect(**opts))  # type: ignore[arg-type]
            except Stopped:  # (its socket, if one was opened, goes too)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(nc.close(), 2.0)
                raise
            made.append(nc)
            _LOST[nc] = lost
            return nc
        except (TimeoutError, OSError, nats.errors.NoServersError) as exc:
            if attempt == 59:
                raise
            log.info("waiting for NATS at %s: %s", masked_urls(url), exc)
            await _unless(stop, asyncio.sleep(0.5))
    raise RuntimeError("unreachable")


async def _unless(stop: asyncio.Event | None, aw: Awaitable[T]) -> T:
    """``aw``'s result, or :class:`Stopped` (``aw`` cancelled) once ``stop``
    is set."""
    if stop is None:
        return await aw
    if stop.is_set():
        if asyncio.iscoroutine(aw):
            aw.close()
        raise Stopped
    work = asyncio.ensure_future(aw)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({work, stopped}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # (cancelled itself)
        work.cancel()
        raise
    finally:
        stopped.cancel()
    if not work.done():
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
        raise Stopped
    return work.result()


def relayed(msg: Any, subject: str) -> bool:
    """Whether ``msg``, heard on the literal ``subject``, was sent there on
    someone's behalf instead of published by a peer: a push consumer's
    delivery (it keeps the subject it was stored under), a consumer's idle
    heartbeat or flow control (a ``Status`` header, no body) or a direct
    get's answer to a reply subject its asker named (it carries the
    stream's headers). NATS checks what a user publishes, not where
    JetStream sends for it (``common.natsauth``): the gateways' user,
    refused the shards' subjects, got a heartbeat heard through a consumer
    it made (review finding). The receivers of a shard's or matchmaker's
    say drop these."""
    return msg.subject != subject or bool(msg.headers and (
        "Nats-Stream" in msg.headers or "Status" in msg.headers))


# nats-py's KeyValue.keys() leaves its consumer on the server for 5 minutes
# (the watch's inactive threshold): a stream takes 1,000 consumers (the
# server's default), so 1,000 listings in 5 minutes (the 관전 list, 2 s per
# gateway) and no shard could start its owners watch. Here the consumer goes
# 2 s after the listing ends. And nats-py's watch puts its "all in" marker
# when the consumer says nothing is pending and nothing has come yet, which
# the server's deliveries can still be on their way after (on a cluster the
# new consumer may not have counted them yet): a listing that trusted it
# came back empty now and then (1 in 1,000 on one server, 1 in 100 on a
# cluster: audit). Here the stream's last message under the filter says
# whether there is anything, and the listing ends on the entry that says
# none is pending after it.
KEYS_INACTIVE_S = 2.0
KEYS_WAIT_S = 5.0  # for the next entry of a listing (then TimeoutError)


async def kv_entries(kv: KeyValue, keys: str = ">", meta_only: bool = False
                     ) -> list[KeyValue.Entry]:
    """The bucket's entries (``keys``: a subject filter within it), deleted
    and purged ones left out, in the order of their last writes."""
    try:
        await kv._js.get_last_msg(kv._stream, f"{kv._pre}{keys}")
    except nats.js.errors.NotFoundError:
        return []  # nothing there
    watcher = await kv.watch(keys, meta_only=meta_only, inactive_threshold=KEYS_INACTIVE_S)
    out: list[KeyValue.Entry] = []
    try:
        while True:
            entry = await watcher.updates(timeout=KEYS_WAIT_S)
            if entry is None:  # nats-py's marker (it may come before the entries)
                continue
            if entry.operation not in (KV_DEL, KV_PURGE):
                out.append(entry)
            if not entry.delta:  # none pending after it (later writes included)
                return out
    finally:
        await watcher.stop()


async def kv_keys(kv: KeyValue) -> list[str]:
    """The bucket's keys, deleted and purged ones left out, in the order of
    their last writes ([] for none)."""
    return [e.key for e in await kv_entries(kv, meta_only=True)]


# What NATS raises while it is away or not answering yet (a restart, a
# JetStream leader election, a full outbound buffer while reconnecting):
# worth trying again, never a sign that the data is absent.
PASSING = (TimeoutError, nats.errors.NoRespondersError, nats.errors.ConnectionClosedError,
           nats.errors.ConnectionReconnectingError, nats.errors.ConnectionDrainingError,
           nats.errors.StaleConnectionError, nats.errors.OutboundBufferLimitError,
           nats.errors.NoServersError, nats.js.errors.ServiceUnavailableError,
           nats.js.errors.NoStreamResponseError)


def passing(exc: BaseException) -> bool:
    """Whether ``exc`` says NATS is away for now (:data:`PASSING`, or a
    JetStream API error with status 503), not that the request was wrong."""
    if isinstance(exc, PASSING):
        return True
    return isinstance(exc, APIError) and getattr(exc, "code", None) == 503  # (not all set one)


async def unless_disconnected(nc: Client, aw: Awaitable[Any], timeout: float) -> str | None:
    """Await ``aw`` (something sent over ``nc``) for up to ``timeout`` s, and
    give it up at once when ``nc`` is not connected or loses its server:
    nothing it sends can finish then, and a service shutting down (``make
    run``'s Ctrl-C stops nats-server beside it) must not wait out each
    step's own NATS timeout. Returns None when it completed, else why not:
    ``"nats connection lost"``, ``"timeout"`` or the error it raised. (A
    connection not made by :func:`connect` gets the timeout only.)"""
    task = asyncio.ensure_future(aw)
    lost = _LOST.get(nc) or asyncio.Event()  # another client: the timeout only
    waiting = asyncio.ensure_future(lost.wait())  # done at once if already lost
    try:
        if nc.is_connected:
            await asyncio.wait({task, waiting}, timeout=timeout,
                               return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
        if not task.done():
            task.cancel()
            # a step that does not stop at once (a library that swallowed the
            # cancellation) is left to end by itself
            await asyncio.wait({task}, timeout=1.0)
    if not task.done() or task.cancelled():
        return "nats connection lost" if lost.is_set() or not nc.is_connected else "timeout"
    exc = task.exception()
    return None if exc is None else repr(exc)


async def subscribed(nc: Client) -> None:
    """Return once the server holds every subscription ``nc`` asked for
    (so messages published from any connection reach them). One
    ``flush()`` is not enough: nats-py writes its PING straight to the
    socket, ahead of the SUBs still queued for its flusher task
    (``subscribe()`` only wakes that task), so the PONG can come back before
    the server has them; another connection's messages then went past the
    subscription (measured: 12 runs in 400 under load, none with two
    flushes). The first PONG means the flusher has run; the second PING
    follows the SUBs."""
    await nc.flush()
    await nc.flush()


class NatsTaken(RuntimeError):
    """A stream of ours on this NATS account serves another prefix's
    subjects: another release's (docs/protocol.md 5)."""


async def _stream(js: JetStreamContext, cfg: StreamConfig) -> None:
    try:
        await js.add_stream(cfg)
    except BadRequestError:
        # exists with other settings: converge — but never onto other
        # subjects: the names do not change with the prefix, and a second
        # release with its own prefix moved the first one's record stream
        # to its subjects (every append of the first then had no stream,
        # no move accepted: operator audit)
        _not_taken(cfg, (await js.stream_info(cfg.name)).config.subjects or [])
        await js.update_stream(cfg)


def _not_taken(cfg: StreamConfig, have: list[str]) -> None:
    """:class:`NatsTaken` unless the stream ``cfg`` names serves its subjects
    (``have``)."""
    want = cfg.subjects or []
    if sorted(have) != sorted(want):
        raise NatsTaken(
            f"stream {cfg.name} on this NATS account serves {', '.join(have)}, not "
            f"{', '.join(want)}: another release uses this account (its streams and "
            "buckets have the same names whatever the prefix); give each release a NATS "
            "account of its own (its user in TTANJIT_NATS_URL)") from None


async def _bucket(js: JetStreamContext, cfg: KeyValueConfig) -> KeyValue:
    try:
        return await js.create_key_value(cfg)
    except BadRequestError:
        return await js.key_value(cfg.bucket)


NO_MSG_TTL = 10166  # JetStream: "per-message TTL is disabled" (the stream does not allow it)
WRONG_LAST = (10071, 10164)  # JetStream: "wrong last sequence" (a revision check failed)


class Expiring:
    """Writes to a KV bucket whose entries expire: ``put`` with a per-message
    TTL, ``remove`` with a purge marker that expires too (a plain delete
    leaves a marker per key for ever, and every ``watchall`` replays them
    all: the owners bucket had one per game ever played). Both check the
    revision when given ``last`` (0: only if the key has none;
    ``KeyWrongLastSequenceError`` otherwise). Without per-message TTLs (a
    server before 2.11, or a bucket that refuses them) the same writes
    without, logged once. nats-py's KV has a TTL on ``create`` and
    ``purge`` only, with no revision check on the latter."""

    def __init__(self, js: JetStreamContext, kv: KeyValue, bucket: str) -> None:
        self.js, self.kv, self.bucket = js, kv, bucket
        self.msg_ttl = True  # until the server says it has none

    async def put(self, key: str, value: bytes, ttl_s: int, last: int | None = None) -> None:
        if not await self._publish(key, value, ttl_s, last, {}):
            if last == 0:
                await self.kv.create(key, value)
            elif last is None:
                await self.kv.put(key, value)
            else:
                await self.kv.update(key, value, last=last)

    async def remove(self, key: str, ttl_s: int = 600, last: int | None = None) -> None:
        purge = {KV_OP: KV_PURGE, Header.ROLLUP: MSG_ROLLUP_SUBJECT}
        if not await self._publish(key, b"", ttl_s, last, purge):
            await self.kv.delete(key, last=last)

    async def _publish(self, key: str, value: bytes, ttl_s: int, last: int | None,
                       headers: dict[str, str]) -> bool:
        if not self.msg_ttl:
            return False
        if last is not None:
            headers[Header.EXPECTED_LAST_SUBJECT_SEQUENCE] = str(last)
        try:
            await self.js.publish(f"$KV.{self.bucket}.{key}", value, headers=headers,
                                  msg_ttl=ttl_s)
            return True
        except APIError as e:
            if e.err_code in WRONG_LAST:
                raise KeyWrongLastSequenceError(description=e.description) from None
            if e.err_code != NO_MSG_TTL:
                raise
        self.msg_ttl = False
        log.warning("%s: no per-message TTLs on this NATS server: expired keys and removal "
                    "markers stay in the bucket", self.bucket)
        return False


async def _allow_msg_ttl(js: JetStreamContext, bucket: str) -> None:
    """Per-message TTLs on ``bucket`` (nats-py makes new buckets with them;
    a bucket made by an older client gets them here, once). A server
    without them (nats-server < 2.11) is logged; its writers do without."""
    try:
        info = await js.stream_info(f"KV_{bucket}")
        if not info.config.allow_msg_ttl:
            info.config.allow_msg_ttl = True
            await js.update_stream(info.config)
            log.info("%s: per-message TTLs allowed", bucket)
    except APIError as e:  # the writers find out again, and do without
        log.warning("%s: no per-message TTLs on this NATS server: %s", bucket, e.description)


def _streams(subjects: Subjects, replicas: int) -> list[StreamConfig]:
    """The streams of docs/protocol.md section 5."""
    p = subjects.prefix
    return [
        StreamConfig(
            name=RECORDS_STREAM, subjects=[f"{p}.record.*"], retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE, num_replicas=replicas, max_age=RECORDS_MAX_AGE_S,
            discard=DiscardPolicy.OLD, duplicate_window=120.0),
        StreamConfig(
            name=RESULTS_STREAM, subjects=[f"{p}.result.*"], retention=RetentionPolicy.LIMITS,
            storage=StorageType.FILE, num_replicas=replicas, max_age=365 * DAY_S,
            duplicate_window=3600.0),
    ]


def _buckets(replicas: int) -> list[KeyValueConfig]:
    """The KV buckets of docs/protocol.md section 5."""
    return [
        KeyValueConfig(bucket=OWNERS_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.FILE),
        KeyValueConfig(bucket=GAMES_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.FILE, ttl=7 * DAY_S),
        KeyValueConfig(bucket=RATINGS_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.FILE),
        KeyValueConfig(bucket=SESSIONS_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.FILE, ttl=3600.0),
        KeyValueConfig(bucket=LOBBY_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.FILE),
        KeyValueConfig(bucket=IDENTITY_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.FILE),
        KeyValueConfig(bucket=HISTORY_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.FILE),
        KeyValueConfig(bucket=WATCHERS_BUCKET, history=1, replicas=replicas,
                       storage=StorageType.MEMORY, ttl=600.0),
    ]


async def ensure_jetstream(js: JetStreamContext, subjects: Subjects, replicas: int = 1
                           ) -> dict[str, KeyValue]:
    """Create the streams and buckets of docs/protocol.md section 5 if missing.
    Returns the KV buckets by name."""
    for stream in _streams(subjects, replicas):
        await _stream(js, stream)
    buckets = {}
    for cfg in _buckets(replicas):
        buckets[cfg.bucket] = await _bucket(js, cfg)
    for bucket in (IDENTITY_BUCKET, OWNERS_BUCKET):  # entries that expire, markers that go
        await _allow_msg_ttl(js, bucket)
    return buckets


async def find_jetstream(js: JetStreamContext, subjects: Subjects,
                         stop: asyncio.Event | None = None) -> dict[str, KeyValue]:
    """The KV buckets by name, once :func:`ensure_jetstream` (a shard's or a
    matchmaker's) has made every stream and bucket: a gateway's NATS user
    may not make them. Waits for them — and for JetStream while it does
    not answer (a cluster without its leader yet, a server started without
    JetStream) — logging what it waits for; raises :class:`NatsTaken` as
    ``ensure_jetstream`` does when a stream serves another release's
    subjects; ``stop`` set meanwhile raises :class:`Stopped`."""
    said = ""
    while True:
        missing: list[str] = []
        buckets: dict[str, KeyValue] = {}
        try:
            for stream in _streams(subjects, 1):
                try:
                    info = await _unless(stop, js.stream_info(stream.name or ""))
                except nats.js.errors.NotFoundError:
                    missing.append(stream.name or "")
                    continue
                _not_taken(stream, info.config.subjects or [])
            for cfg in _buckets(1):
                try:
                    buckets[cfg.bucket] = await _unless(stop, js.key_value(cfg.bucket))
                except nats.js.errors.BucketNotFoundError:
                    missing.append(cfg.bucket)
            waiting = ("a shard or matchmaker to make JetStream's " + ", ".join(missing)
                       if missing else "")
        except Exception as exc:  # noqa: BLE001 - sorted below
            if not passing(exc):
                raise
            waiting = f"JetStream to answer ({exc!r})"
        if not waiting:
            if said:
                log.info("JetStream's streams and buckets are there")
            return buckets
        if waiting != said:
            log.info("waiting for %s", waiting)
            said = waiting
        await _unless(stop, asyncio.sleep(1.0))
