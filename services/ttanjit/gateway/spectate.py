"""관전: watching a live game from the lobby (issue 15; docs/websocket.md 3.5).

A connection may watch one game at a time. ``spectate {game_id}`` asks the
owner shard's sync as a spectator (``{"spectator": true}``: the view of
``engine.view(None)``, the public view: never a hand, never a face-down
card) and subscribes to the game's public subject
(``ttanjit.v1.game.<id>.public``, where the shard publishes
the public part of every burst, docs/protocol.md 2). Frames: ``spectate_view``
(``game_id, game_seq, view, players?, deadline?``: ``players`` says who sits
where, by nickname or bot level) and ``spectate_update``
(``game_id, game_seq, events, view, deadline?``: one per burst, the public
events and the public view after them); a gap in ``game_seq`` or
another ``spectate`` re-sends the view. ``spectate_stop`` (or a new
``spectate``, or closing) ends it. A player cannot watch a game they sit in
(``in_game``: their own seat's view is theirs; one who left it may), nor a game whose host turned
관전 off (``no_spectating``: the directory entry's ``spectators: false``; the
shard refuses a spectator sync of it too).

The spectator count (``spectators`` frames, to the table's players and to
spectators) is kept across gateways by :mod:`ttanjit.gateway.watchers`.

The handlers join the connection's table of handlers here (imported by
``account``); ``Connection.finish`` calls :func:`stop` (``conn.ON_FINISH``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from ttanjit.common.nats import relayed
from ttanjit.gateway import codec, finals, watchers
from ttanjit.gateway import conn as conn_mod
from ttanjit.gateway.conn import Connection, _deadline, burst_parts
from ttanjit.gateway.errors import FrameError
from ttanjit.gateway.limits import EMOTES

log = logging.getLogger("ttanjit.gateway")

_watching: dict[str, dict[str, Any]] = {}  # connection id -> {game_id, sub, seq}


# the waits before asking a live game's view again while no shard answers
RETRIES = (0.1, 0.3, 0.6)


async def _sync(c: Connection, gid: str, retries: tuple[float, ...] = RETRIES) -> dict[str, Any] | None:
    """The game's public view from the shard serving it, asked again while
    none answers (a game between shards: once more after each of
    ``retries``' sleeps); None when there is none."""
    data = orjson.dumps({"spectator": True, "last_seq": -1})
    for delay in (0.0, *retries):
        if delay:
            await asyncio.sleep(delay)
        try:
            msg = await c.gw.replies.request(c.gw.subjects.sync(gid), data, 2.0)
        except (NoRespondersError, NatsTimeout):
            continue
        reply: dict[str, Any] = orjson.loads(msg.data)
        if reply.get("code") == "no_spectating":
            raise FrameError("no_spectating")
        return None if reply.get("ok") is False else reply
    return None


async def _send_view(c: Connection, gid: str, w: dict[str, Any]) -> bool:
    reply = await _sync(c, gid, w["retries"])
    if reply is None:
        return False
    w["seq"] = int(reply.get("seq", 0))
    frame: dict[str, Any] = {"type": "spectate_view", "game_id": gid, "game_seq": w["seq"],
                             "view": reply.get("view") or {}}
    if w.get("players"):
        frame["players"] = w["players"]
    if reply.get("deadline"):
        frame["deadline"] = _deadline(reply["deadline"])
    await c.send(frame)
    return True


async def _seating(c: Connection, gid: str) -> tuple[list[dict[str, Any]], bool]:
    """Who sits where by the game directory — each seat's kind, a human's
    nickname, a bot's level, no player ids — for the spectator's names (a
    watch page opened from a link named every seat 봇N), and whether a
    shard may be between owners (a live game, or the directory unreadable:
    its sync is asked again); ``no_spectating`` when the host turned 관전
    off, ``unknown_game`` at once when the directory has no such game (a
    shard writes it before the game plays: a flood of spectates of made-up
    ids held the connection a second each, its client gone meanwhile and
    counted present for minutes: fuzz finding)."""
    doc = await finals.read_entry(c.gw.games, gid)
    if doc is finals.UNREADABLE:
        return [], True
    if doc is None:
        raise FrameError("unknown_game")
    if doc.get("spectators") is False:
        raise FrameError("no_spectating")
    seats = finals.seat_players(doc, await finals.nicknames_of(doc, c.gw.nickname))
    return [{k: v for k, v in p.items() if k != "player"} for p in seats], doc.get("state") != "finished"


async def stop(c: Connection) -> None:
    w = _watching.pop(c.id, None)
    for sub in (w or {}).get("subs", []):
        try:
            await sub.unsubscribe()
        except Exception:  # noqa: BLE001 - NATS gone
            pass
    wt = watchers.of(c.gw)
    if w and w.get("counted"):
        await wt.change(w["game_id"], -1)
    await wt.unfollow(c, None if c.closed else "watch")


async def h_spectate(c: Connection, f: dict[str, Any]) -> None:
    gid = f.get("game_id")
    if not isinstance(gid, str) or not gid:
        raise FrameError("missing_field")
    if not codec.is_game_id(gid):  # never a wildcard subject, never a bad KV key
        raise FrameError("unknown_game")
    s = c.session
    assert s is not None
    # its seat's view is the player's own; one whose seat a bot has (나가기,
    # or 60 s away: refused, they could not get back to it from the lobby:
    # review finding) may watch it go on (RULES.md 4), as anyone
    if s.game_id == gid and not c.finished_game and s.left != gid and not s.substituted:
        raise FrameError("in_game")
    w = _watching.get(c.id)
    if w is None or w["game_id"] != gid:
        players, live = await _seating(c, gid)
        await stop(c)
        w = {"game_id": gid, "subs": [], "seq": 0, "lock": asyncio.Lock(), "counted": False,
             "players": players, "retries": RETRIES if live else ()}
        _watching[c.id] = w

        async def on_msg(msg: Any) -> None:
            if c.closed:
                await stop(c)
                return
            if relayed(msg, c.gw.subjects.public(gid)):  # (not a shard's)
                return
            try:  # the public part of a burst (docs/protocol.md 2)
                (_, (_, first, last, _, body)), = burst_parts(msg.data)
                part = orjson.loads(b"{" + body + b"}")
            except (ValueError, KeyError, IndexError, TypeError):
                return
            if first > last:
                return
            async with w["lock"]:
                if last <= w["seq"]:
                    return
                if first > w["seq"] + 1:  # missed one: the whole view again
                    await _send_view(c, gid, w)
                    if last <= w["seq"]:
                        return
                held = w["seq"]
                w["seq"] = last
                part["events"] = [e for e in part.get("events", [])
                                  if int(e.get("game_seq", 0)) > held]
                part["type"] = "spectate_update"
                if part.get("deadline"):
                    part["deadline"] = _deadline(part["deadline"])
                await c.send(part)

        async def on_emote(msg: Any) -> None:
            if c.closed:
                await stop(c)
                return
            try:  # the frame the players got (a gateway made it: conn.h_emote)
                frame = orjson.loads(msg.data)
            except orjson.JSONDecodeError:
                return
            if (isinstance(frame, dict) and frame.get("game_id") == gid
                    and type(frame.get("seat")) is int and frame.get("emote") in EMOTES):
                await c.send({"type": "emote", "game_id": gid, "seat": frame["seat"],
                              "emote": frame["emote"]})

        w["subs"] = [await c.gw.nc.subscribe(c.gw.subjects.public(gid), cb=on_msg),
                     await c.gw.nc.subscribe(c.gw.subjects.emotes(gid), cb=on_emote)]
    async with w["lock"]:
        try:
            ok = await _send_view(c, gid, w)
        except FrameError:
            await stop(c)
            raise
        if not ok:  # a live game no shard serves now (between owners): later, not never
            await stop(c)
            raise FrameError("game_unavailable" if w["retries"] else "unknown_game")
    if not w["counted"] and _watching.get(c.id) is w:
        w["counted"] = True
        wt = watchers.of(c.gw)
        await wt.change(gid, +1)
        await wt.follow(c, gid, "watch")


async def h_spectate_stop(c: Connection, f: dict[str, Any]) -> None:
    await stop(c)
    await c.send({"type": "spectate_stopped"})


_player_sync = conn_mod.HANDLERS["sync"]


async def h_sync(c: Connection, f: dict[str, Any]) -> None:
    """A player's ``sync`` (the table screen opened or caught up); the
    table's spectator count follows that game from then on."""
    await _player_sync(c, f)
    s = c.session
    if s is not None and s.game_id:
        await watchers.of(c.gw).follow(c, s.game_id, "own")


async def follow_own(c: Connection, gid: str) -> None:
    """A player's game: its spectator count follows (no client ``sync``
    needed since views are pushed, issue 13)."""
    await watchers.of(c.gw).follow(c, gid, "own")


conn_mod.HANDLERS["spectate"] = h_spectate
conn_mod.HANDLERS["spectate_stop"] = h_spectate_stop
conn_mod.HANDLERS["sync"] = h_sync
conn_mod.ON_FINISH.append(stop)
conn_mod.ON_GAME.append(follow_own)
