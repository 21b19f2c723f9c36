"""The lobby's durable state and the matchmaker leader lease (docs/protocol.md 4.1).

Every matchmaker replica runs :class:`LeaderLease`; the one holding the lease
(key ``leader.<lobby>`` in the ``ttanjit_lobby`` bucket, renewed with a
revision check) is the leader and the only replica that changes the lobby.
The lobby itself is written by :class:`LobbyStore` with revision checks
after every change and before any reply or notification. It is spread over
``PARTS`` part documents per group, ``state.<lobby>.<group>.<i>``, each
item in the part its key (a game id, a room code, a player) hashes to: the
seats of each game's humans, 한 판 더 offers, the codes of started rooms,
the open rooms, the room members away, the quick-match tickets, the quick
matches being placed. Only the parts that changed are written, then the
head, ``state.<lobby>``, which holds the writer and its epoch (the commit
point and the fence). So no document nears NATS's 1 MB message limit
however many play or wait, and a change writes its part, not the whole
lobby.

A new leader reads the head and the parts, then writes the head back with
its own epoch: any later head write of a previous leader (a frozen process
that thaws, a partitioned one) fails with a wrong last revision, and that
replica steps down (:class:`Fenced`) before it replies to anyone. Then it
writes every part (creating the ones that do not exist yet): a part a
previous leader wrote since the read (a change never acknowledged: its
head write fails) is overwritten with what was read, and any later part
write of that leader fails, as a part written by a *newer* epoch fences
the writer. So no write of a fenced leader stays in the lobby, the lobby
has one writer at a time, and it loses nothing a client was told about
when any replica dies.

One commit writes its parts before its head, group by group in the
order of ``GROUPS``: a commit cut off half way leaves a game's seats
written while what placed it (``placing``, a started offer without
``new_game_id``, a ``starting`` room) still says it is being placed, and
the next leader places it again under the same game id — the same game,
the same seats (a 한 판 더's players seated in it still count as free to
sit there). A room whose start was cut off so is open again: its code is
not kept as started nor its players as seated until the host starts it
again (``Matchmaker.restore``). A quick match formed writes its
``placing`` part alone: its tickets stay in their parts until its game is
placed, dropped after its seats and before the match, so no cut-off
commit loses a waiting player's ticket or queues a seated one again.
"""

from __future__ import annotations

import asyncio
import logging
import time
import zlib
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

import orjson
from nats.js.errors import KeyWrongLastSequenceError, NotFoundError
from nats.js.kv import KeyValue

from ttanjit.common.kept import kept
from ttanjit.games.base import JSON

log = logging.getLogger("ttanjit.matchmaker")

PARTS = 64  # part documents per group
# The groups of parted collections, in the order a commit writes them
# (before the head): group -> its collections.
GROUPS: dict[str, tuple[str, ...]] = {
    "seated": ("seated",),  # by game: its humans' seats
    "offers": ("rematches", "rematched"),  # both keyed by the old game id
    "started": ("started_rooms",),  # by code
    "rooms": ("rooms",),  # the open rooms, by code
    "away": ("away",),  # room members away, by player
    "tickets": ("tickets",),  # by player: queued, or in a match being placed
    "placing": ("placing",),  # the quick matches being placed, by match id
}
GROUP_OF = {name: group for group, names in GROUPS.items() for name in names}
# a collection a lobby from before the parts kept as a list: its items' key
LIST_KEY = {"rematches": "game_id", "rematched": "game_id", "rooms": "code",
            "tickets": "player", "placing": "id"}
CLAIM_TRIES = 5

V = TypeVar("V")


def now_ms() -> int:
    return int(time.time() * 1000)


def part_of(key: str) -> int:
    return zlib.crc32(key.encode()) % PARTS


class Fenced(Exception):
    """Another replica took the lead: this one's lobby is stale."""


class Parted(dict[str, V], Generic[V]):
    """A lobby collection kept in part documents: remembers the keys
    changed since the last write. An item changed in place (a 한 판 더
    offer's answers) is marked with :meth:`touch`."""

    def __init__(self, items: Iterable[tuple[str, V]] = ()) -> None:
        super().__init__(items)
        self.dirty: set[str] = set()

    def __setitem__(self, key: str, value: V) -> None:
        super().__setitem__(key, value)
        self.dirty.add(key)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.dirty.add(key)

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            self.dirty.add(key)
        return super().pop(key, *default)

    def touch(self, key: str) -> None:
        if key in self:
            self.dirty.add(key)

    def _unsupported(self, *_: Any, **__: Any) -> Any:
        raise TypeError("a Parted collection changes by item (set, del, pop)")

    update = clear = popitem = setdefault = _unsupported


# name -> (the collection as it is now, an item as JSON)
Collections = Callable[[], dict[str, tuple[Parted[Any], Callable[[Any], Any]]]]


class _Doc:
    """One stored document: its key and the revision last read or written."""

    __slots__ = ("key", "rev")

    def __init__(self, key: str) -> None:
        self.key = key
        self.rev = 0


class LobbyStore:
    """Group commit of the lobby, head and parts, with fencing.

    ``commit()`` returns once writes that include every change made before
    the call are durable; concurrent callers share them. ``snapshot``
    renders the head; ``collections`` gives the parted collections (each
    named in ``GROUPS``) and how an item is written."""

    def __init__(self, kv: KeyValue, lobby: str, snapshot: Callable[[], JSON],
                 collections: Collections | None = None) -> None:
        # read from the stream's leader: a bucket that allows direct gets
        # (every replica answers, R3) may answer a read just after a write
        # with what was there before it
        self.kv = KeyValue(kv._name, kv._stream, kv._pre, kv._js, direct=False) \
            if isinstance(kv, KeyValue) else kv
        self.key = f"state.{lobby}"
        self.snapshot = snapshot
        self.collections: Collections = collections or dict
        self.head = _Doc(self.key)
        self.parts = {(g, i): _Doc(f"{self.key}.{g}.{i}") for g in GROUPS for i in range(PARTS)}
        # each part's items as stored or to be stored: part -> name -> key -> JSON
        self.items: dict[tuple[str, int], dict[str, dict[str, bytes]]] = {}
        self.unwritten: set[tuple[str, int]] = set()  # parts changed since written
        self.sizes: dict[str, int] = {}  # bytes last written, by document key
        self.owner: tuple[str, int] = ("", 0)  # (replica id, epoch) stamped on writes
        self._waiters: list[asyncio.Future[None]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.writes = 0

    # -- reading --------------------------------------------------------------
    async def load(self) -> JSON | None:
        """The stored lobby, the parts' collections merged into the head
        (each a dict by key; None when there is none yet). Remembers every
        document's revision and the parts' items."""
        self.items, self.unwritten, self.sizes = {}, set(), {}
        for d in self.parts.values():
            d.rev = 0
        doc = await self._get(self.head)
        if doc is None:
            return None
        stored = int(doc.get("parts") or 0)
        # collections an earlier version wrote in the head (moved into the
        # parts): the head has them as they are, any parts of them are
        # older (a leader of this version before that one)
        in_head = {name for name in GROUP_OF if name in doc}
        for name in GROUP_OF:
            inline = doc.get(name)
            if name == "seated" and isinstance(inline, dict):
                inline = _seated_by_game(inline)
            doc[name] = {}
            if inline:
                self._adopt(name, inline.items() if isinstance(inline, dict)
                            else ((str(r.get(LIST_KEY[name])), r) for r in inline
                                  if isinstance(r, dict)), doc[name])
        if stored:
            # group by group, the last written first: a commit of an earlier
            # leader under way meanwhile (it writes them in GROUPS order) is
            # seen as a commit cut off half way, never later groups without
            # the earlier ones (a match's tickets dropped, not its seats)
            read: dict[tuple[str, int], JSON | None] = {}
            for group in reversed(GROUPS):
                mine = [(group, i) for i in range(stored)]
                docs = [self.parts.get(k) or _Doc(f"{self.key}.{k[0]}.{k[1]}") for k in mine]
                read.update(zip(mine, await asyncio.gather(*(self._get(d) for d in docs)),
                                strict=True))
            by_player: dict[str, Any] = {}  # seats kept by player in parts (never released)
            for (group, i), part in read.items():
                for name in GROUPS[group]:
                    items = ((part or {}).get(name) or {}).items()
                    if name in in_head:
                        if items:
                            self.unwritten.add((group, i))  # written again without them
                        continue
                    if name == "seated" and any(isinstance(v, list) for _, v in items):
                        by_player.update((k, v) for k, v in items if isinstance(v, list))
                        items = [(k, v) for k, v in items if not isinstance(v, list)]
                        if i < PARTS:
                            self.unwritten.add((group, i))  # written again without them
                    self._adopt(name, items, doc[name], moved=stored != PARTS)
            self._adopt("seated", _seated_by_game(by_player).items(), doc["seated"])
            if stored != PARTS:  # counted otherwise: every part written anew
                self.unwritten.update(self.parts)
        return doc

    def _adopt(self, name: str, items: Iterable[tuple[str, Any]], into: dict[str, Any],
               moved: bool = True) -> None:
        """Items read: into the merged lobby and their part's items; a
        part whose items were not read from it (read inline, or from parts
        counted otherwise) is to be written."""
        group = GROUP_OF[name]
        for key, value in items:
            into[key] = value
            part = (group, part_of(key))
            self.items.setdefault(part, {}).setdefault(name, {})[key] = kept(orjson.dumps(value))
            if moved:
                self.unwritten.add(part)

    async def _get(self, d: _Doc) -> JSON | None:
        try:
            entry = await self.kv.get(d.key)
        except NotFoundError:
            d.rev = 0
            return None
        d.rev = entry.revision or 0
        if not entry.value:
            return None
        self.sizes[d.key] = len(entry.value)
        doc: JSON = orjson.loads(entry.value)
        return doc

    async def claim(self, replica: str, epoch: int) -> JSON | None:
        """Take the lobby for ``epoch``: read it, write its head back
        stamped with this replica, which fences every earlier writer's
        commits, then every part (those that do not exist yet created
        empty), so that no part write of an earlier writer lands after
        this: a part it wrote since the read is overwritten with what was
        read, a later write of it fails (and fences it). Returns the lobby
        as it was (None for a new deployment). A write of the head between
        the read and the write (a previous leader's last) makes it read
        again."""
        self.owner = (replica, epoch)
        for _ in range(CLAIM_TRIES):
            doc = await self.load()
            body = {k: v for k, v in (doc or {}).items() if k not in GROUP_OF}
            body.update(leader=replica, epoch=epoch, written_ms=now_ms(), parts=PARTS)
            await self._write_parts()  # a lobby from before the parts: moved first
            try:
                await self._write(self.head, orjson.dumps(body), claiming=True)
            except _Raced:
                continue
            self.unwritten.update(self.parts)
            await self._write_parts()
            return doc
        raise Fenced()

    # -- writing --------------------------------------------------------------
    async def commit(self) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await fut

    async def _flush(self) -> None:
        while self._waiters:
            waiters, self._waiters = self._waiters, []
            self._take_changes()  # the parts and the head as of this moment
            body = self.snapshot()
            body.update(leader=self.owner[0], epoch=self.owner[1], written_ms=now_ms(),
                        parts=PARTS)
            try:
                await self._write_parts()
                await self._write(self.head, orjson.dumps(body))
            except BaseException as exc:  # noqa: BLE001 - handed to every waiter
                for w in waiters:
                    if not w.done():
                        w.set_exception(Fenced() if isinstance(exc, Fenced) else exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                continue
            for w in waiters:
                if not w.done():
                    w.set_result(None)

    def _take_changes(self) -> None:
        """The changed items into their parts' items, those parts to be written."""
        for name, (coll, encode) in self.collections().items():
            if not coll.dirty:
                continue
            group = GROUP_OF[name]
            for key in coll.dirty:
                part = (group, part_of(key))
                items = self.items.setdefault(part, {}).setdefault(name, {})
                if key in coll:
                    items[key] = kept(orjson.dumps(encode(coll[key])))
                else:
                    items.pop(key, None)
                self.unwritten.add(part)
            coll.dirty = set()

    async def _write_parts(self) -> None:
        """Every part to be written, group by group in ``GROUPS`` order
        (the parts of a group at once)."""
        for group in GROUPS:
            todo = sorted(p for p in self.unwritten if p[0] == group)
            if not todo:
                continue
            done = await asyncio.gather(*(self._write(self.parts[p], self._part(p))
                                          for p in todo), return_exceptions=True)
            for part, res in zip(todo, done, strict=True):
                if res is None:
                    self.unwritten.discard(part)
            errors = [e for e in done if isinstance(e, BaseException)]
            if errors:
                raise next((e for e in errors if isinstance(e, Fenced)), errors[0])

    def _part(self, part: tuple[str, int]) -> bytes:
        items = self.items.get(part, {})
        out = [b'{"leader":', orjson.dumps(self.owner[0]), b',"epoch":',
               str(self.owner[1]).encode()]
        for name in GROUPS[part[0]]:
            out += [b',', orjson.dumps(name), b':{',
                    b','.join(orjson.dumps(k) + b':' + v
                              for k, v in items.get(name, {}).items()), b'}']
        out.append(b'}')
        return b"".join(out)

    async def _write(self, d: _Doc, data: bytes, claiming: bool = False) -> None:
        try:
            if d.rev == 0:
                d.rev = await self.kv.create(d.key, data)
            else:
                d.rev = await self.kv.update(d.key, data, last=d.rev)
        except KeyWrongLastSequenceError:
            await self._recheck(d, data, claiming)
        except Exception:
            # A timeout may hide a write that landed: look before failing.
            if not await self._landed(d, data):
                raise
        self.writes += 1
        self.sizes[d.key] = len(data)

    async def _landed(self, d: _Doc, data: bytes) -> bool:
        try:
            entry = await self.kv.get(d.key)
        except Exception:  # noqa: BLE001 - NATS still away: the write failed for us
            return False
        if entry.value == data:
            d.rev = entry.revision or d.rev
            return True
        return False

    async def _recheck(self, d: _Doc, data: bytes, claiming: bool) -> None:
        """Wrong last revision. Written by this leader (an earlier write that
        landed after a timeout): adopt its revision and write again. A part
        written by an earlier epoch (a previous leader's last commit, whose
        head write failed): overwrite it. Otherwise another replica claimed
        the lobby (fenced) — or, while claiming, the previous leader wrote
        the head meanwhile (read again)."""
        try:
            entry = await self.kv.get(d.key)
        except NotFoundError:
            entry = None
        if entry is not None and entry.value:
            doc = orjson.loads(entry.value)
            stamp = (doc.get("leader"), int(doc.get("epoch") or 0))
            if stamp == self.owner or (d is not self.head and stamp[1] < self.owner[1]):
                d.rev = entry.revision or 0
                d.rev = await self.kv.update(d.key, data, last=d.rev)
                return
            if claiming and stamp[1] < self.owner[1]:
                raise _Raced()
        raise Fenced()

    def largest(self) -> tuple[int, int]:
        """Bytes last written: the head, the largest part."""
        parts = [n for k, n in self.sizes.items() if k != self.key]
        return self.sizes.get(self.key, 0), max(parts, default=0)

    def cancel(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
        for w in self._waiters:
            if not w.done():
                w.set_exception(Fenced())
        self._waiters = []


def _seated_by_game(by_player: dict[str, Any]) -> dict[str, Any]:
    """``seated`` as a lobby before the parts kept it, by player
    (``{player: [game_id, seat]}``), as the parts keep it, by game."""
    out: dict[str, Any] = {}
    for player, v in by_player.items():
        if isinstance(v, list) and len(v) == 2:
            out.setdefault(str(v[0]), {"ms": 0, "seats": {}})["seats"][player] = int(v[1])
    return out


class _Raced(Exception):
    """The head changed between a claim's read and its write."""


class LeaderLease:
    """The leader lease ``leader.<lobby>``: ``{"id", "grpc", "epoch",
    "renewed_ms", "expires_ms"}``. The holder renews it every ``renew_ms``
    with a revision check; any replica takes it (epoch + 1) once
    ``expires_ms`` has passed. A leader that cannot renew before its own
    expiry stops leading at once, without waiting to learn who took over."""

    def __init__(self, kv: KeyValue, lobby: str, replica: str, grpc_addr: str,
                 lease_ms: int = 2000, renew_ms: int = 500) -> None:
        self.kv = kv
        self.key = f"leader.{lobby}"
        self.id = replica
        self.grpc = grpc_addr
        self.lease_ms = lease_ms
        self.renew_ms = renew_ms
        self.leading = False
        self.epoch = 0
        self.rev = 0
        self.expires_ms = 0
        self.leader_addr = ""  # the current leader's gRPC address as last seen
        self.leader_id = ""

    def _doc(self, epoch: int) -> tuple[bytes, int]:
        """The lease as written now, and the expiry it holds: this replica's
        own lease runs to it only once the write is in (a write that failed
        or hangs moved nothing: it kept leading past the expiry the bucket
        held, which another replica had taken by then)."""
        now = now_ms()
        expires = now + self.lease_ms
        return orjson.dumps({"id": self.id, "grpc": self.grpc, "epoch": epoch,
                             "renewed_ms": now, "expires_ms": expires}), expires

    async def step(self) -> bool:
        """One round: renew (leader) or look and maybe take over (follower).
        True when this replica has just become the leader."""
        if self.leading:
            doc, expires = self._doc(self.epoch)
            try:
                self.rev = await self.kv.update(self.key, doc, last=self.rev)
                self.expires_ms = expires
            except KeyWrongLastSequenceError:
                if not await self._still_ours():
                    log.error("leader lease lost to another replica")
                    self.leading = False
            except Exception as exc:  # noqa: BLE001 - NATS away: lead until our own expiry
                if now_ms() >= self.expires_ms:
                    log.error("leader lease expired unrenewed: %r", exc)
                    self.leading = False
            if self.leading and now_ms() >= self.expires_ms:
                # written, but answered after the expiry it wrote: another
                # replica may take it now
                log.error("leader lease renewed too late")
                self.leading = False
            return False
        try:
            entry = await self.kv.get(self.key)
        except NotFoundError:
            entry = None
        if entry is None or not entry.value:
            doc, expires = self._doc(1)
            try:
                rev = await self.kv.create(self.key, doc)
            except Exception:  # noqa: BLE001 - another replica created it first
                return False
            return self._won(rev, 1, expires)
        doc = orjson.loads(entry.value)
        self.leader_id, self.leader_addr = str(doc.get("id", "")), str(doc.get("grpc", ""))
        if int(doc.get("expires_ms", 0)) > now_ms():
            return False
        epoch = int(doc.get("epoch", 0)) + 1
        value, expires = self._doc(epoch)
        try:
            rev = await self.kv.update(self.key, value, last=entry.revision)
        except KeyWrongLastSequenceError:
            return False
        return self._won(rev, epoch, expires)

    async def _still_ours(self) -> bool:
        """A renewal refused on the revision: is the lease still this
        replica's, with its epoch? So it is when an earlier renewal was
        written but its answer lost (a timeout): the revision is taken from
        the bucket and the lease kept, rather than let go for nothing."""
        try:
            entry = await self.kv.get(self.key)
            doc = orjson.loads(entry.value or b"{}")
        except Exception:  # noqa: BLE001 - unreadable: as lost
            return False
        if doc.get("id") != self.id or doc.get("epoch") != self.epoch:
            return False
        self.rev = entry.revision or self.rev
        self.expires_ms = int(doc.get("expires_ms", 0))  # (the renewal written)
        log.warning("leader lease: a renewal's answer was lost; it was written")
        return True

    def _won(self, rev: int, epoch: int, expires: int) -> bool:
        self.rev, self.epoch, self.leading, self.expires_ms = rev, epoch, True, expires
        self.leader_id, self.leader_addr = self.id, self.grpc
        log.info("leader of the lobby", extra={"epoch": epoch})
        return True

    async def release(self) -> None:
        """On a clean stop: let a follower take over at once."""
        if not self.leading:
            return
        self.leading = False
        try:
            await self.kv.update(self.key, orjson.dumps({
                "id": self.id, "grpc": "", "epoch": self.epoch, "renewed_ms": now_ms(),
                "expires_ms": 0}), last=self.rev)
        except Exception:  # noqa: BLE001 - someone else leads already, or NATS gone
            pass
