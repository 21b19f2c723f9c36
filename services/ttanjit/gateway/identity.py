"""A lasting guest identity (issue 15; docs/websocket.md 1.1).

The access token (``auth.Tokens``) stays signed and short-lived (1 h). What
lasts is a **refresh credential** the browser keeps in local storage:
``<family>.<secret>``. The server keeps only a hash of the secret, in the
JetStream KV bucket ``ttanjit_identity``:

- ``r.<family>``: ``{"player", "hash", "prev", "rotated_ms", "expires_ms",
  "created_ms"}``. Every use (``POST /api/refresh``) rotates the secret
  (a revision-checked update, so of two concurrent uses one wins). The
  secret just replaced (``prev``) is still accepted for ``GRACE_MS`` without
  rotating again, and answered with the same replacement again (another tab
  of the same browser raced us, or the first answer was lost — a tab
  reloaded or a phone changing networks while it came: the browser still
  holds only ``prev``, and a replaced secret used after the grace revoked
  the family, the guest's account lost; identity audit): the replacement is
  derived from the gateway's key, ``prev`` and the rotation's time
  (:meth:`Identities._successor`), so any gateway can say it again without
  storing it. (So within the grace a copy of the replaced secret gets the
  live one, as another tab would; the family is split then, and whichever
  holder uses a replaced secret after the next grace revokes it.) Later, a
  replaced secret is a stolen copy and the whole family is revoked.
  ``POST /api/signout`` revokes the family; a family unused for 180 days
  expires.
- ``n.<player>``: ``{"nickname", "changed_ms"}``, the player's current
  nickname (sign-in, ``POST /api/nickname``); leaderboards and histories
  show it.
- ``c.<CODE>``: ``{"player", "expires_ms"}``, a one-time code for
  "다른 기기에서 계속하기" (10 minutes; removed with a revision check when
  used, so it works once): the other device gets its own refresh family of
  the same player.

Nothing outlives its use: every family and code is written with a
per-message TTL (180 days, renewed by each rotation; 10 minutes), so
JetStream itself removes a family nobody uses any more and a code nobody
claimed, and a revoked family or a used code is removed by a purge marker
that lives 1 s instead of a delete marker (which a KV keeps for ever)
(``common.nats.Expiring``). On a server without per-message TTLs
(nats-server < 2.11) the writes are as before, without them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass

import orjson
from nats.js.client import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from ttanjit.common.nats import IDENTITY_BUCKET, Expiring, passing
from ttanjit.gateway.errors import FrameError

log = logging.getLogger("ttanjit.gateway")

REFRESH_TTL_MS = 180 * 24 * 3600 * 1000
GRACE_MS = 60_000
CODE_TTL_MS = 10 * 60 * 1000
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LEN = 8
GONE_S = 1  # how long the marker of a revoked family or a used code stays


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def normalize_code(raw: object) -> str:
    if not isinstance(raw, str):
        return ""
    return "".join(c for c in raw.upper() if c in CODE_ALPHABET)[:CODE_LEN * 2]


@dataclass(frozen=True, slots=True)
class Refreshed:
    player: str
    nickname: str
    # None: rotated a moment ago by a gateway without the key, or before
    # replacements were derived (keep the one in local storage)
    refresh: str | None
    family: str = ""


class Identities:
    def __init__(self, kv: KeyValue, js: JetStreamContext, key: bytes = b"") -> None:
        """``key``: the gateways' shared secret (``TTANJIT_TOKEN_SECRET``);
        without it replacements are random and a lost answer is not said
        again."""
        self.kv = kv
        self.expiring = Expiring(js, kv, IDENTITY_BUCKET)
        self.key = hmac.new(key, b"ttanjit refresh rotation", hashlib.sha256).digest() if key else b""

    def _successor(self, family: str, prev_hash: str, rotated_ms: int) -> str:
        """The secret that replaces the one hashed ``prev_hash`` at
        ``rotated_ms`` (module docstring); random without a key."""
        if not self.key:
            return secrets.token_urlsafe(24)
        mac = hmac.new(self.key, f"{family}.{prev_hash}.{rotated_ms}".encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()[:24]).decode()

    @property
    def msg_ttl(self) -> bool:
        """Whether families and codes expire here (a server with per-message TTLs)."""
        return self.expiring.msg_ttl

    # -- nicknames -----------------------------------------------------------------
    async def set_nickname(self, player: str, nickname: str, now: int) -> None:
        await self.kv.put(f"n.{player}", orjson.dumps({"nickname": nickname, "changed_ms": now}))

    async def nickname(self, player: str) -> str | None:
        try:
            entry = await self.kv.get(f"n.{player}")
        except KeyNotFoundError:
            return None
        nick = orjson.loads(entry.value or b"{}").get("nickname")
        return str(nick) if nick else None

    # -- refresh families ----------------------------------------------------------
    async def create(self, player: str, now: int) -> str:
        family = secrets.token_hex(9)
        secret = secrets.token_urlsafe(24)
        await self.expiring.put(f"r.{family}", orjson.dumps({
            "player": player, "hash": _hash(secret), "prev": "", "rotated_ms": now,
            "created_ms": now, "expires_ms": now + REFRESH_TTL_MS}), REFRESH_TTL_MS // 1000, last=0)
        return f"{family}.{secret}"

    async def _family(self, cred: object) -> tuple[str, str, dict[str, object], int]:
        if not isinstance(cred, str) or cred.count(".") != 1 or len(cred) > 200:
            raise FrameError("bad_refresh")
        family, secret = cred.split(".")
        # (a KV key takes ASCII only, and a secret is hashed as ASCII)
        if not (family.isascii() and family.isalnum() and secret.isascii()):
            raise FrameError("bad_refresh")
        try:
            entry = await self.kv.get(f"r.{family}")
        except KeyNotFoundError:
            raise FrameError("bad_refresh") from None
        doc = orjson.loads(entry.value or b"{}")
        if not doc:
            raise FrameError("bad_refresh")
        return family, secret, doc, int(entry.revision or 0)

    async def refresh(self, cred: object, now: int) -> Refreshed:
        """Use a refresh credential: the player, with the credential's
        replacement (rotation). ``bad_refresh`` if unknown, revoked, expired
        or a replaced secret used after the grace period (then the family is
        revoked: someone else holds a copy)."""
        for _ in range(3):
            family, secret, doc, rev = await self._family(cred)
            player = str(doc["player"])
            if int(doc.get("expires_ms", 0)) < now:  # type: ignore[call-overload]
                await self._drop(family, "expired")
                raise FrameError("bad_refresh")
            h = _hash(secret)
            if hmac.compare_digest(h, str(doc.get("prev") or "")):
                rotated = int(doc.get("rotated_ms", 0))  # type: ignore[call-overload]
                if now - rotated <= GRACE_MS:  # the same replacement again
                    again = self._successor(family, h, rotated) if self.key else ""
                    said = again and hmac.compare_digest(_hash(again), str(doc.get("hash") or ""))
                    return Refreshed(player, await self._nick(player),
                                     f"{family}.{again}" if said else None, family)
                await self._drop(family, "replaced secret used")  # revoke it
                raise FrameError("bad_refresh")
            if not hmac.compare_digest(h, str(doc.get("hash") or "")):
                raise FrameError("bad_refresh")
            # everything the answer needs before the rotation: once it is
            # written, the only copy of the new secret is the answer (a
            # failure after it left the client the replaced secret, which
            # revokes the family when used after the grace period)
            nick = await self._nick(player)
            new_secret = self._successor(family, h, now)
            doc.update(hash=_hash(new_secret), prev=h, rotated_ms=now,
                       expires_ms=now + REFRESH_TTL_MS)
            try:
                await self.expiring.put(f"r.{family}", orjson.dumps(doc), REFRESH_TTL_MS // 1000,
                                        last=rev)
            except KeyWrongLastSequenceError:
                continue  # a concurrent use: look again (it is now ``prev``)
            except Exception as exc:
                # the write may have landed with its answer lost (NATS away):
                # then this answer must carry its secret
                if not passing(exc) or not await self._rotated_to(family, new_secret):
                    raise
            return Refreshed(player, nick, f"{family}.{new_secret}", family)
        raise FrameError("store_unavailable")  # used at once by others, again and again

    async def _rotated_to(self, family: str, secret: str) -> bool:
        entry = await self.kv.get(f"r.{family}")
        return bool(hmac.compare_digest(
            str(orjson.loads(entry.value or b"{}").get("hash") or ""), _hash(secret)))

    async def _nick(self, player: str) -> str:
        return await self.nickname(player) or "손님"

    async def _delete(self, family: str) -> None:
        """Remove a family (revoked, or expired); raises when JetStream does
        not take the removal (a family already gone takes it)."""
        await self.expiring.remove(f"r.{family}", GONE_S)

    async def _drop(self, family: str, why: str) -> None:
        """Remove a family that must not work (refused anyway); a removal
        JetStream does not take is logged, and the next use tries again."""
        try:
            await self._delete(family)
        except Exception as exc:  # noqa: BLE001 - logged: the refusal is the answer
            log.warning("cannot remove a refresh family: %r", exc,
                        extra={"family": family, "why": why})

    async def stands(self, family: str, player: str, now: int) -> bool:
        """Whether the refresh family ``family`` of ``player`` is still
        there (not signed out of, revoked or expired)."""
        if not (family.isascii() and family.isalnum()):
            return False
        try:
            entry = await self.kv.get(f"r.{family}")
        except KeyNotFoundError:
            return False
        doc = orjson.loads(entry.value or b"{}")
        return bool(doc) and doc.get("player") == player and int(doc.get("expires_ms", 0)) >= now

    async def revoke(self, cred: object) -> bool:
        try:
            family, secret, doc, _ = await self._family(cred)
        except FrameError:
            return False
        h = _hash(secret)
        if h in (doc.get("hash"), doc.get("prev")):
            await self._delete(family)
            return True
        return False

    # -- moving to another device --------------------------------------------------
    async def new_code(self, player: str, now: int) -> tuple[str, int]:
        expires = now + CODE_TTL_MS
        for _ in range(5):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LEN))
            try:
                await self.expiring.put(f"c.{code}", orjson.dumps({"player": player,
                                                                  "expires_ms": expires}),
                                        CODE_TTL_MS // 1000, last=0)
            except KeyWrongLastSequenceError:
                continue
            return code, expires
        raise RuntimeError("no free transfer code")

    async def use_code(self, raw: object, now: int) -> tuple[str, str, str]:
        """(player, nickname, a new refresh credential) for a valid unused
        code; ``bad_code`` otherwise. The code is gone afterwards."""
        code = normalize_code(raw)
        if len(code) != CODE_LEN:
            # not a guess at any code (empty, Hangul typed with the keyboard
            # in 한글 mode, cut short): said as such, and it costs no
            # attempt (IME audit: 11 empty tries locked the address out)
            raise FrameError("malformed_code")
        try:
            entry = await self.kv.get(f"c.{code}")
        except KeyNotFoundError:
            raise FrameError("bad_code") from None
        doc = orjson.loads(entry.value or b"{}")
        if not doc or int(doc.get("expires_ms", 0)) < now:
            raise FrameError("bad_code")
        player = str(doc["player"])
        # everything the answer needs before the code is spent: a code whose
        # claim failed half-way (JetStream away) still works, once
        nick = await self._nick(player)
        cred = await self.create(player, now)
        try:
            await self.expiring.remove(f"c.{code}", GONE_S, last=entry.revision)  # works once
        except BaseException as exc:
            # not spent by us: the new family goes (another claim won the
            # code, or the removal cannot be written: the code is tried again)
            await self._drop(cred.split(".")[0], "code not spent")
            if isinstance(exc, KeyWrongLastSequenceError):
                raise FrameError("bad_code") from None
            raise
        return player, nick, cred
