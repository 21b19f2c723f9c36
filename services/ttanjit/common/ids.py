"""Game ids (docs/protocol.md 5): 12 lowercase base32 characters, chosen at
random by whoever places the game (the matchmaker, once per placement, so
every try of it asks for the same game; a shard when asked for none)."""

from __future__ import annotations

import secrets

B32 = "abcdefghijklmnopqrstuvwxyz234567"
GAME_ID_LEN = 12


def new_game_id() -> str:
    return "".join(secrets.choice(B32) for _ in range(GAME_ID_LEN))


def is_game_id(v: str) -> bool:
    return len(v) == GAME_ID_LEN and all(c in B32 for c in v)
