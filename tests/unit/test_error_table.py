"""docs/websocket.md 6 is the client's table of refusal codes and the words
players read. Every code the gateway (or a shard, or the matchmaker, through
it) sends a client is there, with the message the code sends; and the table
names no code nothing sends. The shard said two of them in words of its own
(``game_unavailable``, ``internal_error``) and sent ``not_seated``, which
the table did not have (docs audit)."""

from __future__ import annotations

import re
from pathlib import Path

from ttanjit.gateway.errors import MESSAGES
from ttanjit.shard.game import SHARD_MESSAGES

DOC = Path(__file__).resolve().parents[2] / "docs" / "websocket.md"


def table() -> dict[str, str]:
    section = DOC.read_text(encoding="utf-8").split("## 6. Error codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)`(?:[^|\\]|\\.)*\| (.+?) \|$", section, re.M)
    return dict(rows)


def test_every_code_a_client_gets_is_in_the_table_with_its_words() -> None:
    doc = table()
    missing = sorted(set(MESSAGES) - set(doc))
    assert not missing, f"not in docs/websocket.md 6: {missing}"
    differ = {c: (m, doc[c]) for c, m in MESSAGES.items() if not doc[c].startswith(m)}
    assert not differ, differ
    stale = sorted(set(doc) - set(MESSAGES))
    assert not stale, f"in docs/websocket.md 6, sent by nothing: {stale}"


def test_every_code_a_shard_refuses_a_client_with_is_the_gateways() -> None:
    """The gateway passes a shard's refusal on as it came: each of its codes
    is in the gateway's table (which takes their words from the shard's),
    so in the table above (``bad_request`` only ever answers a gateway's
    malformed request)."""
    assert set(SHARD_MESSAGES) - {"bad_request"} <= set(MESSAGES)


def test_every_client_frame_has_its_fields_listed() -> None:
    """Each frame type the gateway handles has its own list of fields
    (codec.FIELDS, docs/websocket.md 3): a type without one would take any
    frame's fields (bad input audit)."""
    from ttanjit.gateway import account  # noqa: F401 - registers 관전's frames (spectate.py)
    from ttanjit.gateway.codec import FIELDS
    from ttanjit.gateway.conn import HANDLERS

    assert set(FIELDS) == set(HANDLERS)
