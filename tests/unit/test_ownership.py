"""The shard's view of the owners bucket (docs/protocol.md 5), sans-I/O:
leases, owners, orphans, and stale watch updates (issue 12 item 4)."""

from __future__ import annotations

from ttanjit.shard.ownership import (
    RETIRED_MAX,
    SHARD_PREFIX,
    OwnerBook,
    parse_lease,
    rendezvous,
)


def lease(shard: str, inc: str, expires: int) -> dict[str, object]:
    return {"shard": shard, "inc": inc, "expires_ms": expires, "renewed_ms": expires - 2000,
            "draining": False, "grpc": "h:1"}


def test_an_older_update_changes_nothing() -> None:
    """A restarted watch (or a late delivery) replays older revisions: the
    book keeps the newest it has seen, for leases and owners alike."""
    book = OwnerBook()
    book.on_put(SHARD_PREFIX + "b", lease("b", "i2", 9000), 20)
    book.on_put(SHARD_PREFIX + "b", lease("b", "i1", 3000), 10)
    assert book.leases["b"].inc == "i2" and book.leases["b"].expires_ms == 9000
    book.on_put("g1", {"shard": "b", "inc": "i2", "epoch": 2}, 30)
    book.on_put("g1", {"shard": "a", "inc": "i0", "epoch": 1}, 5)
    assert (book.owners["g1"].shard, book.owners["g1"].epoch) == ("b", 2)


def test_orphans_are_games_whose_owner_lease_ran_out() -> None:
    book = OwnerBook()
    book.on_put(SHARD_PREFIX + "a", lease("a", "ia", 1000), 1)
    book.on_put(SHARD_PREFIX + "b", lease("b", "ib", 5000), 2)
    book.on_put("ga", {"shard": "a", "inc": "ia", "epoch": 1}, 3)
    book.on_put("gb", {"shard": "b", "inc": "ib", "epoch": 1}, 4)
    book.on_put("gold", {"shard": "b", "inc": "old", "epoch": 1}, 5)
    got = {gid for gid, _, _ in book.orphaned(2000, "b")}
    assert got == {"ga", "gold"}
    assert book.takers(2000) == ["b"]
    assert rendezvous("ga", ["b"]) == "b"


def test_a_replaced_incarnation_keeps_its_last_renewal() -> None:
    """A shard back under its name (a StatefulSet Pod) replaces its dead
    incarnation's lease: the book remembers when that one was last renewed,
    which is when the clocks of its games stopped running (failover's
    ``dead_renewed_ms``); an incarnation never seen is 0."""
    book = OwnerBook()
    book.on_put(SHARD_PREFIX + "s0", lease("s0", "dead", 5000), 1)
    book.on_put(SHARD_PREFIX + "s0", lease("s0", "dead", 6000), 2)  # a renewal
    assert book.last_renewed("s0", "dead") == 4000
    book.on_put(SHARD_PREFIX + "s0", lease("s0", "new", 9000), 3)
    assert book.last_renewed("s0", "dead") == 4000  # replaced: remembered
    assert book.last_renewed("s0", "new") == 7000
    assert book.last_renewed("s0", "never") == 0
    for i in range(RETIRED_MAX + 5):  # bounded: the oldest go first
        book.on_put(SHARD_PREFIX + "s0", lease("s0", f"i{i}", 10_000 + i), 4 + i)
    assert len(book.retired) == RETIRED_MAX
    assert book.last_renewed("s0", "dead") == 0


def test_parse_lease() -> None:
    got = parse_lease(lease("s", "i", 7), 3)
    assert (got.shard, got.inc, got.expires_ms, got.revision) == ("s", "i", 7, 3)
