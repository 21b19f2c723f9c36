"""The shard's view of the owners bucket (docs/protocol.md 5), sans-I/O:
leases, owners, orphans, and stale watch updates (issue 12 item 4)."""

from __future__ import annotations

from ttanjit.shard.ownership import (
    REPLACED_MAX,
    SHARD_PREFIX,
    OwnerBook,
    parse_lease,
    rendezvous,
    replacing,
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


def test_a_new_incarnation_names_the_ones_it_replaced() -> None:
    """A shard back under its name (a StatefulSet Pod) replaces its dead
    incarnation's lease entry; the new lease names the dead one with its
    last renewal, when the clocks of its games stopped (failover's
    ``dead_renewed_ms``), so whichever shard claims them knows it, also one
    that never saw the old lease. A crash loop's last few are kept."""
    dead = parse_lease(lease("s0", "dead", 6000), 2)
    assert dead.last_renewed("dead") == 4000 and dead.last_renewed("other") == 0
    got = parse_lease({**lease("s0", "new", 9000), "replaced": replacing(dead, "new")}, 3)
    assert got.last_renewed("dead") == 4000  # from the entry alone
    assert got.last_renewed("new") == 7000 and got.last_renewed("never") == 0
    assert got.names("dead") and got.names("new") and not got.names("never")
    assert replacing(None, "x") == {} and replacing(got, "new") == got.replaced  # itself
    # what the shard knew already (its last lease, lost and registered again) stays
    assert replacing(None, "y", {"older": 1000}) == {"older": 1000}
    assert replacing(dead, "y", {"older": 1000}) == {"dead": 4000, "older": 1000}
    chain = dead
    for i in range(REPLACED_MAX + 3):  # a crash loop: each replaces the last
        inc = f"i{i}"
        chain = parse_lease({**lease("s0", inc, 10_000 + i), "replaced": replacing(chain, inc)}, i)
    assert len(chain.replaced) == REPLACED_MAX
    assert chain.last_renewed(f"i{REPLACED_MAX + 1}") == 8000 + REPLACED_MAX + 1  # the newest kept
    assert chain.last_renewed("dead") == 0  # the oldest went first
    book = OwnerBook()  # the watch parses it too
    book.on_put(SHARD_PREFIX + "s0", {**lease("s0", "new", 9000), "replaced": {"dead": 4000}}, 4)
    assert book.leases["s0"].last_renewed("dead") == 4000


def test_parse_lease() -> None:
    got = parse_lease(lease("s", "i", 7), 3)
    assert (got.shard, got.inc, got.expires_ms, got.revision) == ("s", "i", 7, 3)
