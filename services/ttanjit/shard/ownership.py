"""Who owns which game, as seen from the ``ttanjit_owners`` KV bucket
(docs/protocol.md section 5) — sans-I/O bookkeeping fed by a KV watch.

Two kinds of keys:

- ``shard.<shard_id>`` — a shard's lease: ``{"shard", "inc", "grpc",
  "renewed_ms", "expires_ms", "draining"}``, renewed every ``renew_ms`` with a
  revision check (a renewal that finds another revision means the shard was
  declared dead: it drops every game at once).
- ``<game_id>`` — the game's owner: ``{"shard", "inc", "epoch", "reason",
  "claimed_ms"}``, written with a revision check on every claim (create,
  failover, handover) and deleted when the game is finished.

A game's ownership is leased through its owner's shard lease: it is valid
while the lease with the same incarnation (``inc``) is unexpired. Renewing
one key per shard instead of one per game keeps the cost flat at thousands
of games per shard and lets failover start within ``lease_ms``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

SHARD_PREFIX = "shard."


REPLACED_MAX = 8  # replaced incarnations a lease names (a crash loop's last few)


@dataclass(slots=True)
class Lease:
    shard: str
    inc: str
    expires_ms: int
    renewed_ms: int
    draining: bool
    grpc: str
    revision: int
    # inc -> last renewal of the earlier incarnations of this shard whose
    # lease entry this one replaced (a StatefulSet Pod or a kept process
    # back under its name): their games' clocks ran until then
    replaced: dict[str, int] = field(default_factory=dict)

    def last_renewed(self, inc: str) -> int:
        """When incarnation ``inc`` of this shard last renewed its lease: this
        lease's, or a replaced one's (0: not known)."""
        return self.renewed_ms if inc == self.inc else self.replaced.get(inc, 0)

    def names(self, inc: str) -> bool:
        """Is ``inc`` this lease's incarnation or one it replaced?"""
        return inc == self.inc or inc in self.replaced


def replacing(old: Lease | None, inc: str, known: dict[str, int] | None = None
              ) -> dict[str, int]:
    """The ``replaced`` of incarnation ``inc`` whose lease entry replaces
    ``old``: what it knew already (``known``), the old one's, and the old one
    itself; the newest :data:`REPLACED_MAX`."""
    both = dict(known or {})
    if old is not None:
        both.update(old.replaced)
        if old.inc != inc:
            both[old.inc] = old.renewed_ms
    return dict(sorted(both.items(), key=lambda kv: -kv[1])[:REPLACED_MAX])


@dataclass(slots=True)
class Owner:
    shard: str
    inc: str
    epoch: int
    revision: int


@dataclass(slots=True)
class OwnerBook:
    leases: dict[str, Lease] = field(default_factory=dict)
    owners: dict[str, Owner] = field(default_factory=dict)

    def on_put(self, key: str, value: dict[str, object], revision: int) -> None:
        """One watch update. An update older than what the book holds (a
        restarted watch replaying, a late delivery) changes nothing."""
        if key.startswith(SHARD_PREFIX):
            name = key[len(SHARD_PREFIX):]
            old_lease = self.leases.get(name)
            if old_lease is not None and revision and revision < old_lease.revision:
                return
            self.leases[name] = parse_lease(value, revision)
        else:
            old_owner = self.owners.get(key)
            if old_owner is not None and revision and revision < old_owner.revision:
                return
            self.owners[key] = Owner(str(value["shard"]), str(value.get("inc", "")),
                                     int(value.get("epoch", 0)), revision)  # type: ignore[call-overload]

    def on_delete(self, key: str) -> None:
        if key.startswith(SHARD_PREFIX):
            self.leases.pop(key[len(SHARD_PREFIX):], None)
        else:
            self.owners.pop(key, None)

    def alive(self, now_ms: int) -> list[Lease]:
        return [x for x in self.leases.values() if x.expires_ms >= now_ms]

    def takers(self, now_ms: int, exclude: str | None = None) -> list[str]:
        """Shards that may take games now: alive and not draining."""
        return sorted(x.shard for x in self.alive(now_ms)
                      if not x.draining and x.shard != exclude)

    def orphaned(self, now_ms: int, me: str) -> list[tuple[str, Owner, Lease | None]]:
        """Games whose owner's lease is gone, of another incarnation, or expired."""
        out = []
        for gid, own in self.owners.items():
            lease = self.leases.get(own.shard)
            if lease is not None and lease.inc == own.inc and lease.expires_ms >= now_ms:
                continue
            if own.shard == me and lease is not None and lease.inc == own.inc:
                continue  # my own live game (my lease is renewed by me)
            out.append((gid, own, lease))
        return out


def parse_lease(value: dict[str, object], revision: int) -> Lease:
    """A ``shard.<id>`` entry's value (raises on a malformed one)."""
    replaced = value.get("replaced") or {}
    if not isinstance(replaced, dict):
        raise TypeError("replaced is not an object")
    return Lease(str(value["shard"]), str(value["inc"]), int(value["expires_ms"]),  # type: ignore[call-overload]
                 int(value.get("renewed_ms", 0)), bool(value.get("draining")),  # type: ignore[call-overload]
                 str(value.get("grpc", "")), revision,
                 {str(k): int(v) for k, v in replaced.items()})


def rendezvous(game_id: str, shards: list[str]) -> str | None:
    """The shard that should take ``game_id`` (highest random weight), so
    survivors split a dead shard's games without talking to each other."""
    best, best_w = None, b""
    for s in shards:
        w = hashlib.blake2b(f"{game_id}/{s}".encode(), digest_size=8).digest()
        if best is None or w > best_w:
            best, best_w = s, w
    return best
