"""Which messages of a game's record its shards wrote
(``ttanjit.shard.records.Chain``, docs/protocol.md 5): a signed record's
message counts if it names the last one counted and its MAC holds; what
else JetStream stored on the subject is skipped."""

from __future__ import annotations

import pytest

from ttanjit.common.config import Settings
from ttanjit.shard import records
from ttanjit.shard.records import SIG, Chain, keys_of, sign

KEY = b"k" * 32
SUBJECT = "ttanjit.v1.record.g1"


def signed(prev: int, data: bytes, key: bytes = KEY, subject: str = SUBJECT) -> dict[str, str]:
    return {SIG: sign(key, subject, prev, data)}


def taken(chain: Chain, messages: list[tuple[int, dict[str, str] | None, bytes]]) -> list[int]:
    return [seq for seq, headers, data in messages if chain.take(seq, headers, data)]


def test_a_signed_record_counts_its_shards_messages_only() -> None:
    header, move, later = b'{"players": {}}', b'{"t": 1}', b'{"t": 2}'
    messages = [
        (3, signed(0, header), header),
        (5, signed(3, move), move),
        (6, None, b'{"type": "io.nats.jetstream.api.v1.stream_info_response"}'),  # an answer
        (7, {SIG: "5." + "A" * 24}, later),  # the right previous message, a made-up MAC
        (8, signed(0, header), header),  # a shard's message again, stored later
        (9, signed(5, later, key=b"x" * 32), later),  # another key's
        (10, signed(5, later, subject="ttanjit.v1.record.g2"), later),  # another game's
        (11, signed(5, later), later),  # the owner's next append, after the rest
    ]
    chain = Chain(SUBJECT, (KEY,))
    assert taken(chain, messages[:-1]) == [3, 5]
    assert chain.skipped == 5 and chain.after_head == 5  # none gone past yet
    assert taken(chain, messages[-1:]) == [11]
    assert chain.signed and chain.head == 11 and chain.skipped == 5
    assert chain.after_head == 0  # the owner's append went past them (counted there)
    assert not chain.take(12, None, b"{}") and chain.after_head == 1


def test_the_mac_covers_the_payload() -> None:
    header = b'{"players": {}}'
    chain = Chain(SUBJECT, (KEY,))
    assert taken(chain, [(1, signed(0, header), header),
                         (2, signed(1, b'{"t": 1}'), b'{"t": 9}')]) == [1]


def test_a_reader_without_the_key_checks_the_order_only() -> None:
    """The gateways read records (다시 보기) without the shards' key: a
    message naming the last one counted passes, MAC unchecked."""
    header, move = b'{"players": {}}', b'{"t": 1}'
    chain = Chain(SUBJECT, None)
    assert taken(chain, [(1, signed(0, header), header), (2, None, b"{}"),
                         (3, {SIG: "2.x"}, move), (4, {SIG: "1." + "A" * 24}, move)]) == [1, 4]


def test_a_record_whose_first_message_is_not_signed_is_read_whole() -> None:
    """An older release's record, or a shard's without a key: every
    message, as before signing."""
    header, move = b'{"players": {}}', b'{"t": 1}'
    chain = Chain(SUBJECT, (KEY,))
    assert taken(chain, [(1, None, header), (2, signed(1, move), move), (3, None, b"{}")]) \
        == [1, 2, 3]
    assert chain.signed is False and chain.skipped == 0


def test_a_signature_is_short_and_names_its_place() -> None:
    sig = sign(KEY, SUBJECT, 41, b"{}")
    prev, _, mac = sig.partition(".")
    assert prev == "41" and len(mac) == 24
    assert sign(KEY, SUBJECT, 42, b"{}") != sig


def test_a_key_is_changed_in_steps() -> None:
    """``TTANJIT_RECORD_KEY=new,old``: the first key signs, any holds — a
    record signed with the old key and then the new reads whole with both,
    and a reader with the new key alone finds the old key's messages not its
    own (README "Install", step 2: keep the old key as long as its records)."""
    old, new = b"o" * 32, b"n" * 32
    header, move = b'{"players": {}}', b'{"t": 1}'
    messages = [(1, signed(0, header, key=old), header), (2, signed(1, move, key=new), move)]
    assert keys_of(f" {new.decode()} ,{old.decode()},") == (new, old)
    assert keys_of("") is None
    assert taken(Chain(SUBJECT, (new, old)), messages) == [1, 2]
    alone = Chain(SUBJECT, (new,))
    assert taken(alone, messages) == [] and alone.forged == 1


def test_a_short_key_stops_the_shard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTANJIT_RECORD_KEY", "k" * 32 + ",short")
    with pytest.raises(ValueError, match="at least 16 characters"):
        Settings.from_env("")
    monkeypatch.setenv("TTANJIT_RECORD_KEY", "k" * 32 + "," + "o" * 16)
    assert records.keys_of(Settings.from_env("").record_key) == (b"k" * 32, b"o" * 16)
    assert Settings.from_env("").describe()["record_key"] == "***"
