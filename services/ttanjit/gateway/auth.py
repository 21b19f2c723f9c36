"""Guest sign-in (docs/websocket.md 1): player ids and HMAC-SHA256 signed
tokens. Every gateway sharing ``TTANJIT_TOKEN_SECRET`` accepts every
other's tokens. Sans-I/O: the clock is a parameter."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import unicodedata
from dataclasses import dataclass

import orjson

from ttanjit.gateway.errors import FrameError

TOKEN_TTL_MS = 3600 * 1000  # short-lived; the lasting credential is identity.py's refresh
NICK_MAX = 16
# characters that show nothing but are not Unicode spaces (not stripped)
BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # Hangul fillers, braille blank

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): drawn
# as nothing. Those not refused as control characters or blanks already
# are mostly combining marks (U+034F, U+17B4, variation selectors): "봇2
# (보통)" with one of them looked the bot's name exactly (identity audit).
_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
              (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
              (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
              (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
              (0xE0000, 0xE0FFF))
EMOJI_STYLE = frozenset("\ufe0e\ufe0f")  # text/emoji presentation: ❤️ from a phone's keyboard
ZWJ = "\u200d"  # joins two emoji into one (👨‍💻, ❤️‍🔥): refused anywhere else


def _emoji_side(c: str) -> bool:
    """A character a ZWJ may join: a symbol (👨, 💻, ❤, 🏳), a skin tone
    (🏽), or the presentation selector that follows a symbol (❤️)."""
    return c in EMOJI_STYLE or unicodedata.category(c) in ("So", "Sk")


def _styled(nick: str, i: int) -> bool:
    """``nick[i]`` is an emoji's presentation selector right after the
    symbol or digit it styles (❤️, 1️⃣), not after a letter (딴\ufe0f짓), a
    mark or another selector (❤️️️ would look ❤️)."""
    prev = nick[i - 1] if i else ""
    return (nick[i] in EMOJI_STYLE and prev != "" and unicodedata.category(prev)[0] not in "LM"
            and not ignorable(prev))


def _joined_emoji(nick: str, i: int) -> bool:
    """``nick[i]`` is a ZWJ between two emoji parts, not between letters
    (민\u200d수 would look 민수 exactly)."""
    return (0 < i < len(nick) - 1 and nick[i] == ZWJ and _emoji_side(nick[i - 1])
            and unicodedata.category(nick[i + 1]) == "So")


def ignorable(c: str) -> bool:
    o = ord(c)
    return any(lo <= o <= hi for lo, hi in _IGNORABLE)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def new_player_id() -> str:
    return "p_" + secrets.token_hex(8)


# a bot seat's name on every table: 봇2 (보통) (read with spaces and blanks
# left out, full-width forms as their plain ones: 봇２（보통）)
BOT_NAME = re.compile(r"봇\d+\((쉬움|보통|어려움)\)")


def clean_nickname(raw: object) -> str:
    if not isinstance(raw, str):
        raise FrameError("bad_nickname")
    nick = unicodedata.normalize("NFC", raw).strip()
    # (format characters drawn as nothing, the joiner among them, are the
    # next check's)
    if not 1 <= len(nick) <= NICK_MAX or any(
            unicodedata.category(c)[0] == "C" and not ignorable(c) for c in nick):
        raise FrameError("bad_nickname")
    # nothing drawn as nothing, but an emoji's presentation right after it
    # and the joiner inside one emoji (👨‍💻: refused as a control character,
    # the message said 1~16자)
    if any(ignorable(c) and c not in BLANKS and not _styled(nick, i) and not _joined_emoji(nick, i)
           for i, c in enumerate(nick)):
        raise FrameError("bad_nickname")
    # something to see: not only blanks that are not spaces (the Hangul
    # fillers, the braille blank), and no more combining marks than letters
    # (a name stacked with them runs over the names beside it; a keycap's
    # selector is part of its emoji: 1️⃣)
    marks = sum(unicodedata.category(c)[0] == "M" and not _styled(nick, i)
                for i, c in enumerate(nick))
    seen = sum(not c.isspace() and c not in BLANKS and unicodedata.category(c)[0] != "M"
               and not ignorable(c) for c in nick)  # (an emoji's joiner is seen as nothing)
    if not seen or marks > seen:
        raise FrameError("bad_nickname")
    if BOT_NAME.fullmatch("".join(c for c in unicodedata.normalize("NFKC", nick)
                                  if not c.isspace() and c not in BLANKS and not ignorable(c))):
        # the tables name a bot's seat so (state.js botName): a person
        # named so could not be told from the bot (trial finding)
        raise FrameError("bot_nickname")
    return nick


@dataclass(frozen=True, slots=True)
class Identity:
    player: str
    nickname: str
    expires_ms: int
    # the refresh family the token came from ("" for one issued before
    # tokens named it): a route that makes something lasting — a code for
    # another device, a new nickname — asks that the family still stands
    family: str = ""


class Tokens:
    def __init__(self, secret: str) -> None:
        if not secret:  # no built-in secret: tokens anyone could mint
            raise ValueError("TTANJIT_TOKEN_SECRET is not set")
        self.key = secret.encode()

    def _sig(self, body: str) -> str:
        return _b64(hmac.new(self.key, body.encode(), hashlib.sha256).digest()[:20])

    def issue(self, player: str, nickname: str, now_ms: int,
              family: str = "", until_ms: int | None = None) -> tuple[str, Identity]:
        """``until_ms``: expire no later (a token that names no family
        gives none a longer life)."""
        expires = now_ms + TOKEN_TTL_MS if until_ms is None else min(now_ms + TOKEN_TTL_MS, until_ms)
        ident = Identity(player, nickname, expires, family)
        doc: dict[str, object] = {"p": player, "n": nickname, "e": ident.expires_ms}
        if family:
            doc["f"] = family
        body = _b64(orjson.dumps(doc))
        return f"{body}.{self._sig(body)}", ident

    def verify(self, token: object, now_ms: int) -> Identity:
        """The identity in a valid, unexpired token; else ``bad_token``."""
        if not isinstance(token, str) or token.count(".") != 1 or len(token) > 512 \
                or not token.isascii():  # (compare_digest takes ASCII text only)
            raise FrameError("bad_token")
        body, sig = token.split(".")
        if not hmac.compare_digest(sig, self._sig(body)):
            raise FrameError("bad_token")
        try:
            doc = orjson.loads(_unb64(body))
            ident = Identity(str(doc["p"]), str(doc["n"]), int(doc["e"]), str(doc.get("f") or ""))
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            raise FrameError("bad_token") from None
        if ident.expires_ms < now_ms:
            raise FrameError("bad_token")
        return ident
