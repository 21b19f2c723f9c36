"""The shard's sans-I/O core (ttanjit.shard.game, ttanjit.shard.ownership):
sequence numbers, dedup, sync/resync, and the failover rebuild from the
record giving exactly what the first owner had (docs/protocol.md 1, 2, 5)."""

from __future__ import annotations

import random
import tracemalloc
from collections import Counter
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from ttanjit.games import GAMES, engine_class
from ttanjit.games.base import SeatSpec, Setup
from ttanjit.shard.game import GAME_OVER, SEAT_BOT, Applied, HostedGame, Part, coalesce, envelope
from ttanjit.shard.ownership import OwnerBook, rendezvous


def _games() -> list[str]:
    out = []
    for g in GAMES:
        try:
            engine_class(g)
        except ImportError:
            continue
        out.append(g)
    return out


def play(game: str, seed: int, moves: int = 300,
         check: Callable[[HostedGame, Applied], None] | None = None,
         left: int | None = None, backlog: int = 32) -> tuple[HostedGame, list[dict]]:
    """Random legal commands (and clock inputs at deadlines) on a hosted
    game. ``left``: a seat whose player leaves first; the bot pool plays it
    then (its commands come with no player)."""
    n = 4
    players = {f"p_{i}": i for i in range(n)}
    setup = Setup(game, {"seats": n}, [SeatSpec("human")] * n, seed)
    h = HostedGame("g" * 12, setup, players, origin_ms=0, backlog=backlog)
    rng = random.Random(seed)
    entries: list[dict] = []
    t = 0
    if left is not None:
        t = 1000
        out = h.apply(t, left, {"type": "leave"}, player=f"p_{left}", cmd_id="bye", server_ms=t)
        assert isinstance(out, Applied)
        if check is not None:
            check(h, out)
        entries.append(out.entry)
    for k in range(moves):
        if h.finished:
            break
        t += rng.randint(100, 3000)
        nd = h.engine.next_deadline()
        if nd is not None and nd <= t:
            out = h.apply(nd, server_ms=nd)
            t = nd
        else:
            choices = [(p, s, a) for p, s in players.items() for a in h.engine.legal_actions(s)]
            if not choices:
                continue
            p, s, a = rng.choice(choices)
            pid = None if s == left else p
            out = h.apply(t, s, a, player=pid, cmd_id=None if pid is None else f"c{k}",
                          server_ms=t)
        assert isinstance(out, Applied), out
        if check is not None:
            check(h, out)
        entries.append(out.entry)
    return h, entries


@pytest.mark.parametrize("game", _games())
def test_rebuild_from_record_equals_first_owner(game: str) -> None:
    """Failover: replaying the record gives the same state, per-player
    sequences, backlogs and dedup replies as the owner that wrote it."""
    first, entries = play(game, 5)
    second = HostedGame.from_header(orjson.loads(orjson.dumps(first.header())), backlog=32)
    for e in entries:
        second.replay_entry(orjson.loads(orjson.dumps(e)))
    assert second.engine.state() == first.engine.state()
    for pid in first.backlogs:
        assert second.backlogs[pid].seq == first.backlogs[pid].seq
        assert list(second.backlogs[pid].frames) == list(first.backlogs[pid].frames)
    assert second.dedup == first.dedup


def test_the_bots_numbers_follow_the_record_and_not_the_deal() -> None:
    """docs/protocol.md 3: a bot decision's numbers (its ask's ``rng``, its
    thinking pause) are the same on every ask and on the shard that replays
    the game after a failover — and not a function of the deal's seed: they
    were ``hash((seed, inputs, seat))``, sent in every ask, and a bot
    worker's user reversed them to the seed and dealt every hand (review
    finding). Two games of one deal get unrelated numbers."""
    first, entries = play("onecard", 5, moves=40)
    second = HostedGame.from_header(orjson.loads(orjson.dumps(first.header())), backlog=32)
    for e in entries:
        second.replay_entry(orjson.loads(orjson.dumps(e)))
    assert second.inputs == first.inputs
    numbers = [first.bot_seed(seat, salt) for seat in range(4) for salt in (0, 1)]
    assert [second.bot_seed(seat, salt) for seat in range(4) for salt in (0, 1)] == numbers
    assert len(set(numbers)) == len(numbers)  # per seat and per use
    same_deal, _ = play("onecard", 5, moves=40)
    assert same_deal.engine.state() == first.engine.state()
    assert [same_deal.bot_seed(seat, salt) for seat in range(4) for salt in (0, 1)] != numbers
    assert first.bot_seed(0) != hash((first.setup.seed, first.inputs, 0)) & 0xFFFFFFFF
    # a game an older release started (no key in its header): from its seed, as before
    old = {k: v for k, v in first.header().items() if k != "bot_key"}
    a, b = HostedGame.from_header(dict(old)), HostedGame.from_header(dict(old))
    assert a.bot_seed(1) == b.bot_seed(1) and len(a.bot_key) == 16


# view fields that follow the clock, not the game (a client counts down from
# ``deadline``): they may differ after an input with no event
CLOCK_FIELDS = ("t", "remaining_ms")


def parts_of(gid: str, applied: Applied) -> dict[str | None, dict]:
    """Each subscriber's part as the gateway turns it into an ``update``."""
    msg = envelope(gid, applied.parts).split(b"\n")
    meta = orjson.loads(msg[0])
    assert meta["g"] == gid and len(meta["p"]) == len(msg) - 1
    out = {}
    for (pid, first, last, flags), body in zip(meta["p"], msg[1:], strict=True):
        part = orjson.loads(b"{" + body + b"}")
        part.update(first=first, last=last, flags=flags)
        out[pid] = part
    return out


@pytest.mark.parametrize("game", _games())
def test_each_seat_gets_its_events_and_its_whole_view_after_them(game: str) -> None:
    """Issue 13 (docs/protocol.md 2): an accepted input pushes every
    subscriber that got events (and the acting seat) one part: exactly its
    filtered events, numbered on from its last, and exactly
    ``engine.view(seat)`` after the input (the spectators: ``view(None)``);
    the game-over flag on the input that ends the game."""
    seen = Counter[str]()
    before: dict[str, Any] = {}

    def check(h: HostedGame, out: Applied) -> None:
        parts = parts_of(h.game_id, out)
        events = out.result.events
        actor = out.entry.get("player")
        want = set(h.backlogs) if events else ({actor} if actor else set())
        assert set(parts) == want
        public = {k: v for k, v in h.engine.public_view().items() if k not in CLOCK_FIELDS}
        if not events and before:
            # no event: nobody else's view changed, so the mover gets only
            # its own fields as a patch of the view it holds
            assert public == before
        before.clear()
        before.update(public)
        for pid, part in parts.items():
            seat = None if pid is None else h.players[pid]
            if not events:
                assert seat is not None and "view" not in part
                assert {**h.engine.view(seat), **part["patch"]} == h.engine.view(seat)
                assert part["patch"] == h.engine.private_view(seat)
            else:
                assert part["view"] == h.engine.view(seat) and "patch" not in part
            assert [e["event"] for e in part["events"]] == [ev.for_seat(seat) for ev in events]
            assert [e["game_seq"] for e in part["events"]] == list(
                range(part["first"], part["last"] + 1))
            assert part["game_seq"] == h.backlogs[pid].seq
            assert bool(part["flags"] & GAME_OVER) == h.finished
            seen["events" if events else "view only"] += 1
    play(game, 21, check=check)
    assert seen["events"] and (seen["view only"] or game != "penalty_rows"), seen


def test_parts_of_inputs_made_durable_together_are_one_per_subscriber() -> None:
    """One WebSocket frame per player per burst: the events in order, the view of the last."""
    h, _ = play("onecard", 3, moves=2)
    applied = []
    for _ in range(3):
        nd = h.engine.next_deadline()
        assert nd is not None
        out = h.apply(nd, server_ms=nd)
        assert isinstance(out, Applied)
        applied.append(out)
    merged = coalesce([p for a in applied for p in a.parts])
    by = {p.pid: p for p in merged}
    assert len(merged) == len(by) == len(h.backlogs)
    for pid, p in by.items():
        firsts = [q.first for a in applied for q in a.parts if q.pid == pid]
        assert (p.first, p.last) == (firsts[0], h.backlogs[pid].seq)
        assert p.tail == [q for q in applied[-1].parts if q.pid == pid][0].tail


@pytest.mark.parametrize("game", _games())
def test_sequences_are_gapless_and_sync_never_skips(game: str) -> None:
    h, _ = play(game, 9)
    for pid, bl in h.backlogs.items():
        seqs = [s for s, _ in bl.frames]
        assert seqs == list(range(bl.seq - len(seqs) + 1, bl.seq + 1))
        assert len(seqs) <= 32
        # within the backlog: exactly the missing frames
        last = bl.seq - 3
        got = orjson.loads(h.sync(pid, last, 0))
        assert [f["game_seq"] for f in got["events"]] == [last + 1, last + 2, last + 3]
        assert "resync" not in got
        # beyond it: a view marked resync, never a silent gap
        if bl.seq > 32:
            old = orjson.loads(h.sync(pid, 0, 0))
            assert old["resync"] is True and "events" not in old and old["seq"] == bl.seq
        # up to date: nothing
        assert orjson.loads(h.sync(pid, bl.seq, 0))["events"] == []


@pytest.mark.parametrize("game", _games())
def test_a_resync_view_brings_the_seats_last_events_for_a_log(game: str) -> None:
    """docs/protocol.md 2 ``recent``: a whole view asked with ``recent: N``
    carries the subscriber's last N events exactly as they were pushed to it
    (so filtered for its seat: nothing another seat holds), in order; a
    sync that returns events, or one that asks for none, carries no
    ``recent``."""
    sent: dict[str | None, list[dict]] = {}

    def check(h: HostedGame, out: Applied) -> None:
        for pid, part in parts_of(h.game_id, out).items():
            sent.setdefault(pid, []).extend(part["events"])
    h, _ = play(game, 8, moves=60, check=check)
    for pid, items in sent.items():
        got = orjson.loads(h.sync(pid, -1, 0, recent=5))
        assert got["resync"] is True and got["recent"] == items[-5:], pid
        seat = None if pid is None else h.players[pid]
        assert got["view"] == h.engine.view(seat)
        assert "recent" not in orjson.loads(h.sync(pid, -1, 0))
        assert "recent" not in orjson.loads(h.sync(pid, h.backlogs[pid].seq - 2, 0, recent=5))
    # the events of another seat's view differ: each got its own (a drawn card is seen by its drawer only)
    assert len({orjson.dumps(v) for v in sent.values()}) > 1


def test_refused_input_changes_nothing_and_dedup_replays_reply() -> None:
    game = _games()[0]
    h, _ = play(game, 3, moves=5)
    before = (h.engine.state(), {p: b.seq for p, b in h.backlogs.items()}, h.version)
    out = h.apply(h.engine.now, 0, {"type": "no_such_action"}, player="p_0", cmd_id="x")
    assert not isinstance(out, Applied) and out.code in ("bad_action", "unknown_action")
    assert (h.engine.state(), {p: b.seq for p, b in h.backlogs.items()}, h.version) == before
    seat, act = next((s, a) for s in range(4) for a in h.engine.legal_actions(s))
    ok = h.apply(h.engine.now, seat, act, player=f"p_{seat}", cmd_id="once")
    assert isinstance(ok, Applied) and ok.reply is not None
    assert h.seen(f"p_{seat}", "once") == ok.reply
    assert orjson.loads(ok.reply)["seq"] == h.backlogs[f"p_{seat}"].seq


def test_orphans_and_rendezvous() -> None:
    book = OwnerBook()
    book.on_put("shard.a", {"shard": "a", "inc": "1", "expires_ms": 1000, "renewed_ms": 0}, 1)
    book.on_put("shard.b", {"shard": "b", "inc": "2", "expires_ms": 5000, "renewed_ms": 3000}, 2)
    book.on_put("game1", {"shard": "a", "inc": "1", "epoch": 1}, 3)
    book.on_put("game2", {"shard": "b", "inc": "2", "epoch": 1}, 4)
    book.on_put("game3", {"shard": "b", "inc": "old", "epoch": 4}, 5)  # b restarted since
    # a's lease is still valid; game3 belongs to an earlier incarnation of b
    assert {gid for gid, _, _ in book.orphaned(500, "b")} == {"game3"}
    orphans = {gid for gid, _, _ in book.orphaned(2000, "b")}
    assert orphans == {"game1", "game3"}
    assert book.takers(2000) == ["b"]
    book.on_delete("game1")
    assert {gid for gid, _, _ in book.orphaned(2000, "b")} == {"game3"}
    # rendezvous: stable, and spreads games over the takers
    spread = Counter(rendezvous(f"g{i:05d}", ["a", "b", "c"]) for i in range(3000))
    assert set(spread) == {"a", "b", "c"} and min(spread.values()) > 800
    assert rendezvous("g00001", ["a", "b", "c"]) == rendezvous("g00001", ["c", "b", "a"])


def test_a_patch_after_a_whole_view_stays_its_own_part() -> None:
    """A view-only patch cannot be folded into an earlier whole view without
    reading it: it follows it, in order; a later whole view absorbs both."""
    view = Part("p", 1, 2, 0, b"e1,e2", b'"view":{"a":1}')
    patch = Part("p", 3, 2, 0, b"", b'"patch":{"sel":1}')
    later = Part("p", 3, 3, 1, b"e3", b'"view":{"a":2}')
    out = coalesce([view, patch])
    assert [(p.first, p.last, p.tail) for p in out] == [(1, 2, view.tail), (3, 2, patch.tail)]
    out = coalesce([view, patch, later])
    assert [(p.first, p.last, p.events, p.tail, p.flags) for p in out] == [
        (1, 2, b"e1,e2", view.tail, 0), (3, 3, b"e3", later.tail, 1)]


@pytest.mark.parametrize("game", _games())
def test_a_finished_games_directory_entry_says_where_each_seat_stood(game: str) -> None:
    """RULES.md 4 ("a player who comes back later sees the final result"):
    the game directory's result of a game without scores (One Card, RULES.md
    1) keeps each seat's cards left and who was out, so the result rebuilt
    from it lists 승리, 탈락 or N장 남음 as the live one does; a scored
    game's has its scores."""
    h, _ = play(game, 7, moves=20_000)
    assert h.finished
    result = h.directory_entry()["result"]
    public = h.engine.view(None)
    if game == "onecard":
        assert result["scores"] is None
        assert result["hand_counts"] == public["hand_counts"]
        assert result["eliminated"] == public["eliminated"] and result["dealt"] == public["dealt"]
    else:
        assert isinstance(result["scores"], list)
        assert not {"hand_counts", "eliminated", "dealt"} & set(result)
    assert orjson.loads(orjson.dumps(result)) == result


@pytest.mark.parametrize("game", _games())
def test_a_player_whose_seat_a_bot_took_watches_as_a_spectator(game: str) -> None:
    """RULES.md 4: a player who left (or stayed away 60 s) may watch but
    not retake the seat; the bot plays it. From then on their parts are a
    spectator's — ``view(None)``, events as a spectator gets them — and so
    is their sync: the bot's hand and its draws stay in the shard (their
    page showed the seat's hand live, the bot's new cards too: trial)."""
    private = 0

    def check(h: HostedGame, out: Applied) -> None:
        nonlocal private
        part = parts_of(h.game_id, out).get("p_1")
        if part is None:
            return
        if out.entry.get("cmd") == "bye":  # the gateway still learns its seat is the bot's
            assert part["flags"] & SEAT_BOT
        assert part["view"] == h.engine.view(None) and "hand" not in part["view"]
        events = out.result.events
        assert [e["event"] for e in part["events"]] == [ev.for_seat(None) for ev in events]
        private += sum(1 for ev in events if 1 in (ev.private or {}))  # the bot's own: not sent

    h, _ = play(game, 9, moves=400, check=check, left=1, backlog=256)
    assert private, "the bot got no private event: nothing was checked"
    t = h.engine.now
    synced = orjson.loads(h.sync("p_1", -1, t))
    assert synced["view"] == h.engine.view(None)
    assert orjson.loads(h.sync("p_2", -1, t))["view"] == h.engine.view(2)  # the others' own


@pytest.mark.parametrize("game", _games())
def test_what_a_game_keeps_costs_its_length(game: str) -> None:
    """Soak audit: a shard held ~3 MiB per live game (docs/capacity.md: ~30
    KiB) — its backlogs' events and the replies kept for repeats were
    orjson.dumps results, each in a buffer of ~4 KiB whatever its length.
    What a game keeps is allocated at about its length."""
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        h, _ = play(game, 9, moves=120, backlog=256)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    kept = [data for bl in h.backlogs.values() for _, data in bl.frames] + list(h.dedup.values())
    assert len(kept) > 200
    length = sum(len(x) for x in kept)
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    # each kept bytes object costs its length and a 33-byte header; the
    # engine's own state adds a little (a 4 KiB buffer each: ~14x the length)
    assert grown < 3 * length + 200_000, (grown, length, len(kept))
