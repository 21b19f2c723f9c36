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
    if not 1 <= len(nick) <= NICK_MAX or any(unicodedata.category(c)[0] == "C" for c in nick):
        raise FrameError("bad_nickname")
    # something to see: not only blanks that are not spaces (the Hangul
    # fillers, the braille blank), and no more combining marks than letters
    # (a name stacked with them runs over the names beside it)
    marks = sum(unicodedata.category(c)[0] == "M" for c in nick)
    seen = sum(not c.isspace() and c not in BLANKS and unicodedata.category(c)[0] != "M"
               for c in nick)
    if not seen or marks > seen:
        raise FrameError("bad_nickname")
    if BOT_NAME.fullmatch("".join(c for c in unicodedata.normalize("NFKC", nick)
                                  if not c.isspace() and c not in BLANKS)):
        # the tables name a bot's seat so (state.js botName): a person
        # named so could not be told from the bot (trial finding)
        raise FrameError("bot_nickname")
    return nick


@dataclass(frozen=True, slots=True)
class Identity:
    player: str
    nickname: str
    expires_ms: int


class Tokens:
    def __init__(self, secret: str) -> None:
        if not secret:  # no built-in secret: tokens anyone could mint
            raise ValueError("TTANJIT_TOKEN_SECRET is not set")
        self.key = secret.encode()

    def _sig(self, body: str) -> str:
        return _b64(hmac.new(self.key, body.encode(), hashlib.sha256).digest()[:20])

    def issue(self, player: str, nickname: str, now_ms: int) -> tuple[str, Identity]:
        ident = Identity(player, nickname, now_ms + TOKEN_TTL_MS)
        body = _b64(orjson.dumps({"p": player, "n": nickname, "e": ident.expires_ms}))
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
            ident = Identity(str(doc["p"]), str(doc["n"]), int(doc["e"]))
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            raise FrameError("bad_token") from None
        if ident.expires_ms < now_ms:
            raise FrameError("bad_token")
        return ident
