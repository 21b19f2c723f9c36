"""The matchmaker's lobby at scale (docs/protocol.md 4.1): what a lobby
change costs the leader with N players in games and N/5 waiting, and what
a take-over reads.

For each N, a real nats-server (JetStream, file storage) and a leading
:class:`Matchmaker` in this process hold N players seated in games of 4, a
started 한 판 더 offer for every fourth game and a started room's code for
every fourth, N/5 quick-match tickets waiting (games and table sizes
spread so that none meet) and N/20 open rooms of 2 humans and a bot (a
member of every fourth away). Timed:
- ``game``: a game placed and another over, as the leader writes them —
  4 players seated, 4 others' seats dropped, one commit (the parts those
  8 players hash to, then the head);
- ``ticket``: a quick-match ticket queued and cancelled (two commits: its
  part and the head each);
- ``room``: a player joins an open room and leaves it (two commits);
- ``match``: two tickets queued, matched and their game placed as the
  leader writes it (four commits: the tickets, the match being placed,
  the seats with the tickets and the match dropped);
- ``one document``: the same lobby as one JSON document (how the lobby
  was written before the parts) put once per change — its bytes and time,
  or that NATS refuses it (over its 1 MB message limit); ``one head``: the
  head of the version before the last (tickets, rooms, members away and
  matches being placed in it): its bytes;
- ``tick``: the queue's matching over the N/5 tickets that do not meet
  (``QuickQueue.take_matches``, CPU ms, the median of five; every 200 ms
  on the leader);
- ``take-over``: a second replica leading: the head and every part read,
  the head written back.

Per change: wall ms (p50, p99), bytes written, CPU of this process and of
nats-server (from /proc) per change.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from typing import Any

import nats
import orjson
from nats.errors import MaxPayloadError

from ttanjit.common.config import Settings
from ttanjit.common.nats import Subjects, ensure_jetstream
from ttanjit.common.natsserver import NatsServer
from ttanjit.matchmaker.queue import QuickMatch, Ticket
from ttanjit.matchmaker.rematch import Rematch
from ttanjit.matchmaker.rooms import Seat
from ttanjit.matchmaker.service import Matchmaker, now_ms
from ttanjit.matchmaker.store import GROUPS, PARTS, part_of


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def _ms(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"p50_ms": round(statistics.median(xs) * 1000, 2),
            "p99_ms": round(xs[min(len(xs) - 1, int(len(xs) * 0.99))] * 1000, 2)}


def _humans(first: int, prefix: str = "p_") -> list[Seat]:
    return [Seat("human", f"{prefix}{j:016x}", f"닉네임{j % 100}") for j in range(first, first + 4)]


def _fill(mm: Matchmaker, n: int) -> None:
    for i in range(0, n, 4):
        g = i // 4
        mm._seat(f"g{g:011x}", _humans(i))
        if i % 16 == 0:  # every fourth game started as a 한 판 더, every fourth from a room
            r = Rematch(f"o{g:011x}", "penalty_rows", {"rounds": 3, "timer_s": 20},
                        [["human", ""]] * 4, {f"p_{j:016x}": j % 4 for j in range(i, i + 4)},
                        now_ms(), {f"p_{j:016x}": f"닉네임{j % 100}" for j in range(i, i + 4)},
                        [], f"g{g:011x}", now_ms(), f"g{g:011x}")
            mm.rematched[r.game_id] = r
        if i % 16 == 8:
            mm.rooms.started_codes[f"R{g:07X}"] = (now_ms(), [f"p_{j:016x}" for j in
                                                               range(i, i + 4)], f"g{g:011x}")
    # waiting: tickets that do not meet (apart in rating, each kind of table;
    # none waits long enough for bots)
    mm.queue.bot_wait_ms = 10**12
    tables = [("onecard", 2), ("onecard", 3), ("onecard", 4), ("penalty_rows", 4),
              ("penalty_rows", 5), ("hakka", 4)]
    for k in range(n // 5):
        game, seats = tables[k % len(tables)]
        mm.queue.add(Ticket(f"w_{k:016x}", f"닉네임{k % 100}", game, seats,
                            float(k // len(tables)) * 1000, now_ms(), bot_level="normal"))
    for k in range(n // 20):
        room = mm.rooms.create(f"h_{k:016x}", f"방장{k % 100}", "penalty_rows", 5,
                               {"rounds": 3})
        mm.rooms.join(f"j_{k:016x}", f"손님{k % 100}", room.code)
        mm.rooms.add_bot(f"h_{k:016x}", "normal")
        if k % 4 == 0:
            mm.away[f"j_{k:016x}"] = now_ms()


def _one_head(mm: Matchmaker) -> dict[str, Any]:
    """The head of the version before the last: what the players waiting
    are, in one document."""
    return {"leader": "bench", "epoch": 1, "written_ms": now_ms(), "parts": PARTS,
            "tickets": [t.to_json() for t in mm.queue.by_player.values()],
            "placing": [mt.to_json() for mt in mm.placing.values()],
            "rooms": [r.to_store() for r in mm.rooms.by_code.values()],
            "away": dict(mm.away)}


def _one_document(mm: Matchmaker) -> bytes:
    """The lobby as the single document it was before the parts."""
    doc = _one_head(mm)
    doc.update(seated={p: list(v) for p, v in mm.seated.items()},  # by player, then
               rematches=[r.to_json() for r in mm.rematches.values()],
               rematched=[r.to_json() for r in mm.rematched.values()],
               started_rooms=mm.rooms.started_json())
    return orjson.dumps(doc)


async def _size(n: int, changes: int, server: NatsServer) -> dict[str, Any]:
    assert server.proc is not None
    nc = await nats.connect(server.url)
    try:
        buckets = await ensure_jetstream(nc.jetstream(), Subjects())
        lobby = f"bench{n}"
        settings = Settings(lobby=lobby)
        mm = Matchmaker(nc, buckets["ttanjit_ratings"], settings, buckets["ttanjit_lobby"])
        await mm.lead("bench-a", 1)
        _fill(mm, n)
        assert mm.store is not None
        t0 = time.perf_counter()
        await mm.commit()
        first_s = time.perf_counter() - t0
        head, part = mm.store.largest()
        out: dict[str, Any] = {"players_in_games": n, "offers": len(mm.rematched),
                               "started_rooms": len(mm.rooms.started_codes),
                               "tickets": len(mm.queue.by_player),
                               "open_rooms": len(mm.rooms.by_code),
                               "first_write_s": round(first_s, 2), "head_bytes": head,
                               "largest_part_bytes": part}

        async def timed(name: str, one: Any) -> None:
            walls: list[float] = []
            written = 0
            cpu0, ncpu0 = time.process_time(), _cpu_s(server.proc.pid)  # type: ignore[union-attr]
            for k in range(changes):
                t = time.perf_counter()
                written += await one(k)
                walls.append(time.perf_counter() - t)
            cpu = time.process_time() - cpu0
            ncpu = _cpu_s(server.proc.pid) - ncpu0  # type: ignore[union-attr]
            out[name] = {**_ms(walls), "bytes_per_change": written // changes,
                         "matchmaker_cpu_us": round(cpu / changes * 1e6),
                         "nats_cpu_us": round(ncpu / changes * 1e6)}

        store = mm.store

        async def game(k: int) -> int:
            writes = store.writes
            mm.unseat(f"g{k:011x}")  # a game over (its result)
            mm._seat(f"n{k:011x}", _humans(k * 4, "q_"))  # and one placed
            await mm.commit()
            assert store.writes - writes <= 3
            keys = {store.key, *(store.parts[("seated", part_of(g))].key
                                 for g in (f"g{k:011x}", f"n{k:011x}"))}
            return sum(store.sizes[key] for key in keys)

        async def ticket(k: int) -> int:
            writes, total = store.writes, 0
            await mm.enqueue(f"t_{k:014x}", "대기", "onecard", 4)
            total += store.sizes[store.key] + store.sizes[
                store.parts[("tickets", part_of(f"t_{k:014x}"))].key]
            await mm.cancel(f"t_{k:014x}")
            total += store.sizes[store.key] + store.sizes[
                store.parts[("tickets", part_of(f"t_{k:014x}"))].key]
            assert store.writes - writes == 4
            return total

        codes = list(mm.rooms.by_code)

        async def room(k: int) -> int:
            code = codes[k % len(codes)]
            part = store.sizes.get(store.parts[("rooms", part_of(code))].key, 0)
            writes = store.writes
            mm.rooms.join(f"r_{k:014x}", "참가", code)
            await mm.commit()
            mm.rooms.leave(f"r_{k:014x}")
            await mm.commit()
            assert store.writes - writes == 4
            return 2 * (store.sizes[store.key] + part)

        async def match(k: int) -> int:
            a, b = f"m_{k:014x}", f"n_{k:014x}"
            writes, total = store.writes, 0
            for p in (a, b):  # two tickets of a kind nobody else waits for
                await mm.enqueue(p, "짝", "penalty_rows", 2)
                total += store.sizes[store.key] + store.sizes[
                    store.parts[("tickets", part_of(p))].key]
            # matched, as the tick's take_matches does it (not timed: its
            # cost is the queue's, not the lobby's writes)
            mt = QuickMatch("penalty_rows", 2, [mm.queue.by_player.pop(p) for p in (a, b)], [])
            mm.placing[mt.id] = mt  # as tick does
            await mm.commit()
            total += store.sizes[store.key] + store.sizes[
                store.parts[("placing", part_of(mt.id))].key]
            del mm.placing[mt.id]  # placed, as _place_quick does
            seats = [Seat("human", t.player, t.nickname) for t in mt.tickets]
            mm._seat(mt.game_id, seats)
            mm.queue.placed(mt)
            await mm.commit()
            total += store.sizes[store.key] + sum(
                store.sizes[store.parts[(g, part_of(key))].key]
                for g, key in {("seated", mt.game_id), ("tickets", a), ("tickets", b),
                               ("placing", mt.id)})
            assert store.writes - writes <= 4 + 2 + 5, (store.writes - writes)
            return total

        kv = buckets["ttanjit_lobby"]

        async def one_document(_: int) -> int:
            data = _one_document(mm)
            await kv.put(f"bench-one.{lobby}", data)
            return len(data)

        ticks = []
        for _ in range(5):  # the median of five (a collection of the fill's garbage may
            cpu = time.process_time()  # fall in one)
            assert mm.queue.take_matches(now_ms()) == []
            ticks.append(time.process_time() - cpu)
        out["tick_ms"] = round(statistics.median(ticks) * 1000, 1)
        await timed("game", game)
        await timed("ticket", ticket)
        await timed("room", room)
        await timed("match", match)
        await mm.commit()
        size = len(_one_document(mm))
        out["one_document_bytes"] = size
        out["one_head_bytes"] = len(orjson.dumps(_one_head(mm)))
        try:
            await timed("one_document", one_document)
        except MaxPayloadError:
            out["one_document"] = "refused: over NATS's 1 MB message limit"
        other = Matchmaker(nc, buckets["ttanjit_ratings"], settings, buckets["ttanjit_lobby"])
        t = time.perf_counter()
        await other.lead("bench-b", 2)
        out["take_over_s"] = round(time.perf_counter() - t, 3)
        assert len(other.seated) == len(mm.seated)
        assert len(other.queue.by_player) == len(mm.queue.by_player)
        assert len(other.rooms.by_code) == len(mm.rooms.by_code)
        return out
    finally:
        await nc.close()


def _line(r: dict[str, Any]) -> str:
    def one(k: str) -> str:
        v = r.get(k)
        if not isinstance(v, dict):
            return f"{k}: {v}"
        return (f"{k}: p50 {v['p50_ms']} ms p99 {v['p99_ms']} ms, "
                f"{v['bytes_per_change']:,} B, mm {v['matchmaker_cpu_us']} µs + "
                f"nats {v['nats_cpu_us']} µs CPU")
    return (f"{r['players_in_games']:,} players in games ({r['offers']:,} offers, "
            f"{r['started_rooms']:,} started rooms), {r['tickets']:,} tickets, "
            f"{r['open_rooms']:,} open rooms: head {r['head_bytes']:,} B, largest of "
            f"{len(GROUPS) * PARTS} parts {r['largest_part_bytes']:,} B; "
            f"take-over {r['take_over_s']} s; a tick's matching {r['tick_ms']} ms CPU\n"
            f"    {one('game')}\n    {one('ticket')}\n    {one('room')}\n    {one('match')}\n"
            f"    the head before these parts: {r['one_head_bytes']:,} B\n"
            f"    as one document ({r['one_document_bytes']:,} B): " + one("one_document"))


def run(args: Any) -> dict[str, Any]:
    sizes = (2_000, 10_000) if args.quick else (10_000, 25_000, 100_000, 250_000)
    changes = 50 if args.quick else 300
    out: dict[str, Any] = {"changes_per_kind": changes, "sizes": []}
    with tempfile.TemporaryDirectory(prefix="ttanjit-bench-lobby-") as tmp, \
            NatsServer(store_dir=tmp) as server:
        for n in sizes:
            r = asyncio.run(_size(n, changes, server))
            print(_line(r), flush=True)
            out["sizes"].append(r)
    return out
