"""Guest nicknames (docs/websocket.md 1): 1–16 characters after trimming,
no control characters — and something to see (found by an audit: a name of
Hangul fillers looked blank everywhere it was shown, and one stacked with
combining marks ran over the names beside it)."""

from __future__ import annotations

import pytest

from ttanjit.gateway.auth import clean_nickname
from ttanjit.gateway.errors import FrameError


@pytest.mark.parametrize("raw", ["딴짓왕", "  딴짓왕 ", "Kim Ji-woo", "ㅋㅋㅋ", "é", "e\u0301",
                                 "1", "★별★", "ㅤ딴짓", "하트\u2764\ufe0f", "\u263a\ufe0e웃음"])
def test_names_people_choose_are_taken(raw: str) -> None:
    assert clean_nickname(raw) == raw.strip().replace("e\u0301", "é")


@pytest.mark.parametrize("raw", ["", "   ", "\u3164", "\u3164\u3164", "\u115f\u1160", "\uffa0",
                                 "\u2800\u2800", " \u3164 ", "a" + "\u0301" * 15,
                                 "\u0301\u0301", "a\u0000b", "x" * 17, 5, None])
def test_blank_looking_overlong_or_malformed_names_are_refused(raw: object) -> None:
    with pytest.raises(FrameError) as err:
        clean_nickname(raw)
    assert err.value.code == "bad_nickname"


@pytest.mark.parametrize("raw", ["봇2 (보통)", "봇1 (쉬움)", "봇10(어려움)", " 봇 3 (보통) "])
def test_a_bot_seats_name_is_refused(raw: str) -> None:
    """Trial finding: a person named "봇2 (보통)" could not be told from the
    bot of that seat at a table or in 내 기록 (the tables name a bot's seat
    so, state.js botName)."""
    with pytest.raises(FrameError) as err:
        clean_nickname(raw)
    assert err.value.code == "bot_nickname" and "봇의 이름" in err.value.message


@pytest.mark.parametrize("raw", ["봇", "봇2", "봇2 (최강)", "로봇2 (보통)", "봇짱 (보통)"])
def test_names_near_a_bots_are_taken(raw: str) -> None:
    assert clean_nickname(raw) == raw


@pytest.mark.parametrize("raw", ["봇2\u00a0(보통)", "봇2\u3000(보통)", "봇2\u3164(보통)", "봇2（보통）",
                                 "봇２ (보통)"])
def test_a_bot_seats_name_in_other_spaces_or_full_width_is_refused(raw: str) -> None:
    """Review finding: a no-break or ideographic space, a Hangul filler or
    full-width brackets made a name that looked the bot's exactly."""
    with pytest.raises(FrameError) as err:
        clean_nickname(raw)
    assert err.value.code == "bot_nickname"


@pytest.mark.parametrize("raw", ["👨\u200d💻개발자", "\u2764\ufe0f\u200d\U0001f525", "\U0001f3f3\ufe0f\u200d\U0001f308",
                                 "\U0001f469\U0001f3fd\u200d\U0001f4bb", "1\ufe0f\u20e3", "#\ufe0f\u20e3번"])
def test_emoji_joined_or_keycapped_are_taken(raw: str) -> None:
    """Emoji of several code points a phone's keyboard gives: joined by
    U+200D (👨‍💻, ❤️‍🔥, 🏳️‍🌈, 👩🏽‍💻) or a keycap (1️⃣). The joiner was
    refused as a control character and the keycap's selector counted as
    a combining mark; the message said 닉네임은 1~16자."""
    assert clean_nickname(raw) == raw


@pytest.mark.parametrize("raw", ["민\u200d수", "a\u200d", "\u200d👨", "👨\u200d", "👨\u200d\u200d💻",
                                 "👨\u200da", "봇2 (보통)\u200d", "\u2764\ufe0f\ufe0f", "\ufe0f",
                                 "👨\u200d💻\u0301\u0301\u0301"])
def test_a_joiner_or_selector_outside_an_emoji_is_refused(raw: str) -> None:
    """A joiner between letters (민\u200d수 looks 민수 exactly), at an end
    or doubled, and a second presentation selector (❤️️ looks ❤️), are
    refused, saying the name must be of characters one sees."""
    with pytest.raises(FrameError) as err:
        clean_nickname(raw)
    assert err.value.code in ("bad_nickname", "bot_nickname")
    assert "보이는 글자" in err.value.message or err.value.code == "bot_nickname"


@pytest.mark.parametrize("raw", ["봇2 (보통)\u034f", "봇2 (보\u034f통)", "봇2 (보통)\ufe00", "봇2 (보통)\u180b",
                                 "봇2 (보통)\u17b4", "봇2 (보통)\U000e0100", "봇2 (보통)\ufe0f",
                                 "이기는사람\u034f", "딴\ufe0f짓", "\u2764\ufe0f\u180b"])
def test_characters_drawn_as_nothing_are_refused(raw: str) -> None:
    """Identity audit: Unicode's default-ignorable characters that are not
    control characters (U+034F, U+17B4, variation selectors, tags) passed,
    and "봇2 (보통)" with one looked the bot's name exactly (the bot-name
    check read them as letters). An emoji's presentation selector right
    after a symbol (❤️) is taken; anywhere else it is refused."""
    with pytest.raises(FrameError) as err:
        clean_nickname(raw)
    assert err.value.code in ("bad_nickname", "bot_nickname")
