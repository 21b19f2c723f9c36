"""The logs' two formats carry the same facts: the JSON line's extra fields
(a game id, a reason) are in the text line too, as ``key=value`` after the
message (``make run`` logs text: its lines said "claimed game" without the
game or why)."""

from __future__ import annotations

import logging

import orjson

from ttanjit.common.log import JsonFormatter, TextFormatter


def record(msg: str, exc: bool = False, **extra: object) -> logging.LogRecord:
    r = logging.LogRecord("ttanjit.shard", logging.INFO, __file__, 1, msg, (), None)
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            import sys

            r.exc_info = sys.exc_info()
    r.__dict__.update(extra)
    return r


def test_text_lines_carry_the_extra_fields() -> None:
    r = record("claimed game", game="g1a2", reason="failover")
    text = TextFormatter("shard").format(r)
    assert text.endswith(" shard INFO claimed game  game=g1a2 reason=failover")
    doc = orjson.loads(JsonFormatter("shard").format(r))
    assert doc["game"] == "g1a2" and doc["reason"] == "failover"
    assert TextFormatter("shard").format(record("ready")).endswith(" shard INFO ready")


def test_a_traceback_stays_below_the_line() -> None:
    text = TextFormatter("shard").format(record("engine error", exc=True, game="g9"))
    first, _, rest = text.partition("\n")
    assert first.endswith("engine error  game=g9")
    assert rest.startswith("Traceback") and "ValueError: boom" in rest
