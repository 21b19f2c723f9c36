"""Guest nicknames (docs/websocket.md 1): 1–16 characters after trimming,
no control characters — and something to see (found by an audit: a name of
Hangul fillers looked blank everywhere it was shown, and one stacked with
combining marks ran over the names beside it)."""

from __future__ import annotations

import pytest

from ttanjit.gateway.auth import clean_nickname
from ttanjit.gateway.errors import FrameError


@pytest.mark.parametrize("raw", ["딴짓왕", "  딴짓왕 ", "Kim Ji-woo", "ㅋㅋㅋ", "é", "e\u0301",
                                 "1", "★별★", "ㅤ딴짓"])
def test_names_people_choose_are_taken(raw: str) -> None:
    assert clean_nickname(raw) == raw.strip().replace("e\u0301", "é")


@pytest.mark.parametrize("raw", ["", "   ", "\u3164", "\u3164\u3164", "\u115f\u1160", "\uffa0",
                                 "\u2800\u2800", " \u3164 ", "a" + "\u0301" * 15,
                                 "\u0301\u0301", "a\u0000b", "x" * 17, 5, None])
def test_blank_looking_overlong_or_malformed_names_are_refused(raw: object) -> None:
    with pytest.raises(FrameError) as err:
        clean_nickname(raw)
    assert err.value.code == "bad_nickname"
