"""Bytes to keep: ``orjson.dumps`` (3.13 here) returns its text in a buffer
of at least ~4 KiB whatever its length, so a short event or reply kept for
long — a shard's backlogs and replies for repeats, the lobby's entries —
held ~4 KiB each: ~3 MiB per live game where docs/capacity.md counts ~30
KiB (soak audit: 100,000 kept dumps of a 100-byte event took 393 MiB, their
copies 12 MiB). What is sent at once and dropped needs no copy."""

from __future__ import annotations


def kept(data: bytes) -> bytes:
    """``data`` in a buffer of its own length (a copy: ~0.1 µs for an event)."""
    return bytes(memoryview(data))
