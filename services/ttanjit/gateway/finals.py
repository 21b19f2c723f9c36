"""How a game ended, for a player who comes back after its shard let it go
(RULES.md 4: "a player who comes back later sees the final result";
docs/websocket.md 4).

A finished game answers sync on its shard for 30 s after its last event;
after that nobody does, but its ``ttanjit_games`` entry (docs/protocol.md 5)
still says ``finished`` and carries the result. :func:`frame_of` turns that
entry into the client's ``game_result`` frame (pure); :func:`final_frame`
reads the entry.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson
from nats.aio.client import Client
from nats.js.errors import NotFoundError

from ttanjit.common.nats import GAMES_BUCKET

log = logging.getLogger("ttanjit.gateway")


def frame_of(game_id: str, player: str, entry: Any) -> dict[str, Any] | None:
    """The ``game_result`` frame of a finished game's directory entry, or
    None when the entry is not a finished game's."""
    if not isinstance(entry, dict) or entry.get("state") != "finished":
        return None
    frame: dict[str, Any] = {"type": "game_result", "game_id": game_id,
                             "game": str(entry.get("game") or "")}
    players = entry.get("players")
    seat = players.get(player) if isinstance(players, dict) else None
    if isinstance(seat, int) and not isinstance(seat, bool):
        frame["seat"] = seat
    result = entry.get("result")
    if isinstance(result, dict):
        frame["info"] = result
    return frame


async def final_frame(nc: Client, game_id: str, player: str) -> dict[str, Any] | None:
    """The game's ``game_result`` frame from its directory entry; None when
    the game is not known to be finished (or JetStream cannot say)."""
    try:
        kv = await nc.jetstream().key_value(GAMES_BUCKET)
        entry = await kv.get(game_id)
        doc = orjson.loads(entry.value or b"{}")
    except NotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - JetStream away: the game is just gone
        log.warning("game directory unreadable: %r", exc, extra={"game": game_id})
        return None
    return frame_of(game_id, player, doc)
