"""What the game directory tells a player who comes back: how a game ended,
after its shard let it go (RULES.md 4: "a player who comes back later sees
the final result"; docs/websocket.md 4), and who sits where in a game the
player was seated in while away.

A finished game answers sync on its shard for 30 s after its last event;
after that nobody does, but its ``ttanjit_games`` entry (docs/protocol.md 5)
still says ``finished`` and carries the result. :func:`frame_of` turns that
entry into the client's ``game_result`` frame (pure); :func:`final_frame`
reads the entry.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from nats.js.errors import NotFoundError
from nats.js.kv import KeyValue

log = logging.getLogger("ttanjit.gateway")

Nickname = Callable[[str], Awaitable[str | None]]


def frame_of(game_id: str, player: str, entry: Any,
             nicknames: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The ``game_result`` frame of a finished game's directory entry, or
    None when the entry is not a finished game's. Its ``players`` (as in
    ``matched``, each human by ``nicknames[player_id]`` when known) let a
    tab that never saw ``matched`` name the seats of the result."""
    if not isinstance(entry, dict) or entry.get("state") != "finished":
        return None
    frame: dict[str, Any] = {"type": "game_result", "game_id": game_id,
                             "game": str(entry.get("game") or "")}
    players = entry.get("players")
    seat = players.get(player) if isinstance(players, dict) else None
    if isinstance(seat, int) and not isinstance(seat, bool):
        frame["seat"] = seat
    seated = seat_players(entry, nicknames or {})
    if seated:
        frame["players"] = seated
    result = entry.get("result")
    if isinstance(result, dict):
        frame["info"] = result
    return frame


UNREADABLE: dict[str, Any] = {}  # read_entry's answer when JetStream cannot say


async def read_entry(games: KeyValue, game_id: str) -> dict[str, Any] | None:
    """The game's entry in ``games`` (the ``ttanjit_games`` bucket); None
    when there is none; :data:`UNREADABLE` (logged) when JetStream cannot say."""
    try:
        entry = await games.get(game_id)
    except NotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - JetStream away
        log.warning("game directory unreadable: %r", exc, extra={"game": game_id})
        return UNREADABLE
    try:
        doc = orjson.loads(entry.value or b"{}")
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


async def directory_entry(games: KeyValue, game_id: str) -> dict[str, Any] | None:
    """The game's entry; None when there is none (or JetStream cannot say)."""
    doc = await read_entry(games, game_id)
    return None if doc is UNREADABLE else doc


async def final_frame(games: KeyValue, game_id: str, player: str,
                      nickname: Nickname | None = None) -> dict[str, Any] | None:
    """The game's ``game_result`` frame from its directory entry, each
    human named by ``nickname(player_id)``; None when the game is not known
    to be finished (or JetStream cannot say)."""
    entry = await directory_entry(games, game_id)
    if entry is None or entry.get("state") != "finished":
        return None
    return frame_of(game_id, player, entry, await nicknames_of(entry, nickname))


def bot_levels(entry: dict[str, Any]) -> dict[int, str]:
    """The bot seats of a directory entry and their levels."""
    seats = entry.get("seats")
    return {i: str(spec.get("level") or "normal") for i, spec in enumerate(
        seats if isinstance(seats, list) else [])
        if isinstance(spec, dict) and spec.get("kind") == "bot"}


def seat_players(entry: dict[str, Any], nicknames: dict[str, str]) -> list[dict[str, Any]]:
    """Who sits where by the directory entry (pure), as ``matched``'s
    ``players``: each human by player id and ``nicknames[player_id]`` (a
    human without one is named by the client by seat), a bot by its level.
    Empty when the entry does not say (one written before it did)."""
    seats, players = entry.get("seats"), entry.get("players")
    if not isinstance(seats, list) or not isinstance(players, dict):
        return []
    by_seat = {s: str(p) for p, s in players.items() if isinstance(s, int)}
    bots = bot_levels(entry)
    out: list[dict[str, Any]] = []
    for i, spec in enumerate(seats):
        empty = isinstance(spec, dict) and spec.get("kind") == "empty"
        p: dict[str, Any] = {"seat": i, "kind": "bot" if i in bots else
                             "empty" if empty else "human"}
        if i in bots:
            p["level"] = bots[i]
        elif i in by_seat:
            p["player"] = by_seat[i]
            if nicknames.get(by_seat[i]):
                p["nickname"] = nicknames[by_seat[i]]
        out.append(p)
    return out


def match_of_entry(entry: Any, nicknames: dict[str, str]) -> dict[str, Any] | None:
    """A ``matched`` frame's ``game`` and ``players`` from a live game's
    directory entry (pure): for a player seated while away (a
    room its host started), who never got ``matched``. ``nicknames`` by
    player id. None when the entry does not say who sits where (one
    written before it did)."""
    if not isinstance(entry, dict) or entry.get("state") != "live":
        return None
    out = seat_players(entry, nicknames)
    if not out:
        return None
    return {"game": str(entry.get("game") or ""), "players": out}


async def nicknames_of(entry: dict[str, Any], nickname: Nickname | None) -> dict[str, str]:
    """The nicknames of the entry's players, asked for all at once (each
    lookup may wait up to its own timeout); those without one are left out."""
    players = entry.get("players")
    if nickname is None or not isinstance(players, dict) or not players:
        return {}
    pids = [str(p) for p in players]
    names = await asyncio.gather(*(nickname(p) for p in pids))
    return {p: n for p, n in zip(pids, names, strict=True) if n}


async def seated_match(games: KeyValue, game_id: str, nickname: Nickname) -> dict[str, Any] | None:
    """:func:`match_of_entry` of the game's entry, with each human's
    nickname from ``nickname(player_id)`` (None: the client names the
    seat by number)."""
    entry = await directory_entry(games, game_id)
    if entry is None:
        return None
    return match_of_entry(entry, await nicknames_of(entry, nickname))
