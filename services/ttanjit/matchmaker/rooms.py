"""Private rooms (issue 6, RULES.md seats and options): a short code, a host
(방장) who sets options and bots, members who join and leave. Sans-I/O."""

from __future__ import annotations

import secrets
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from typing import Any

from ttanjit.matchmaker.errors import LobbyError
from ttanjit.matchmaker.options import (
    BOT_LEVELS,
    check_seats,
    defaults,
    merge_options,
)
from ttanjit.matchmaker.standings import display
from ttanjit.matchmaker.store import Parted

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I
CODE_LEN = 6
# A started room's code answers ``room_started`` (not ``room_not_found``:
# "check the code") this long after the start.
STARTED_KEEP_MS = 10 * 60_000


@dataclass(slots=True)
class Seat:
    kind: str  # human | bot
    player: str = ""
    nickname: str = ""
    level: str = ""


@dataclass(slots=True)
class Room:
    code: str
    game: str
    seats: int
    options: dict[str, Any]
    host: str
    members: list[Seat | None]
    # open | starting (its game being placed: nobody joins, leaves or changes
    # it meanwhile) | started | closed
    state: str = "open"
    game_id: str = ""
    ratings: dict[str, float] = field(default_factory=dict)
    place_id: str = ""  # the id its game is placed under (chosen at the first start)

    def humans(self) -> list[Seat]:
        return [s for s in self.members if s is not None and s.kind == "human"]

    def seat_of(self, player: str) -> int | None:
        for i, s in enumerate(self.members):
            if s is not None and s.kind == "human" and s.player == player:
                return i
        return None

    def to_json(self, away: Container[str] = ()) -> dict[str, Any]:
        """The room as its members see it (docs/websocket.md 2 ``room``);
        ``away``: the players whose connection is gone (the lobby's)."""
        members: list[dict[str, Any]] = []
        for i, s in enumerate(self.members):
            if s is None:
                members.append({"seat": i, "kind": "empty"})
            elif s.kind == "bot":
                members.append({"seat": i, "kind": "bot", "level": s.level})
            else:
                m: dict[str, Any] = {"seat": i, "kind": "human", "player": s.player,
                                     "nickname": s.nickname}
                if s.player in self.ratings:
                    m["rating"] = round(self.ratings[s.player], 2)
                    m["display"] = display(self.ratings[s.player])
                if s.player in away:
                    m["away"] = True
                members.append(m)
        return {"code": self.code, "game": self.game, "seats": self.seats,
                "options": dict(self.options), "host": self.host, "members": members,
                "state": self.state}

    def to_store(self) -> dict[str, Any]:
        """The room as the lobby store keeps it (docs/protocol.md 4.1)."""
        members: list[Any] = [None if s is None else [s.kind, s.player, s.nickname, s.level]
                              for s in self.members]
        return {"code": self.code, "game": self.game, "seats": self.seats,
                "options": self.options, "host": self.host, "members": members,
                "state": self.state, "game_id": self.game_id, "place_id": self.place_id}

    @classmethod
    def from_store(cls, d: dict[str, Any]) -> Room:
        members: list[Seat | None] = [None if m is None else Seat(*m) for m in d["members"]]
        return cls(str(d["code"]), str(d["game"]), int(d["seats"]), dict(d["options"]),
                   str(d["host"]), members, str(d.get("state", "open")),
                   str(d.get("game_id", "")), place_id=str(d.get("place_id", "")))


class Rooms:
    def __init__(self, allow_test_options: bool = False) -> None:
        # the open rooms (in the lobby's parts, docs/protocol.md 4.1: a room
        # changed in place is touched)
        self.by_code: Parted[Room] = Parted()
        self.by_player: dict[str, str] = {}
        # code -> (started ms, its human players, its game's id when it may
        # be watched, else ""), for STARTED_KEEP_MS (in the lobby's parts,
        # docs/protocol.md 4.1)
        self.started_codes: Parted[tuple[int, list[str], str]] = Parted()
        self.allow_test = allow_test_options

    def restore(self, stored: Iterable[Room], started: dict[str, Any] | None = None) -> None:
        """The open rooms of a stored lobby, and the codes of rooms started
        lately (a new leader takes over)."""
        self.by_player.clear()
        codes = []
        for code, v in (started or {}).items():
            try:
                # (a lobby stored before the game's id was kept has none)
                codes.append((str(code), (int(v[0]), [str(p) for p in v[1]],
                                          str(v[2]) if len(v) > 2 else "")))
            except (TypeError, ValueError, IndexError):
                continue
        self.started_codes = Parted(codes)
        kept: list[tuple[str, Room]] = []
        for room in stored:
            if room.state == "starting":  # its start was cut off with the old leader: the
                room.state = "open"  # host starts it again (the same game: place_id)
            if room.state != "open":
                continue
            kept.append((room.code, room))
            for s in room.humans():
                self.by_player[s.player] = room.code
        self.by_code = Parted(kept)

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LEN))
            if code not in self.by_code and code not in self.started_codes:
                return code

    def room_of(self, player: str) -> Room | None:
        code = self.by_player.get(player)
        return self.by_code.get(code) if code else None

    def get(self, code: str) -> Room:
        code = code.strip().upper()
        room = self.by_code.get(code)
        if room is None or room.state == "closed":
            if code in self.started_codes:  # a friend who came late: 관전, if the room allows it
                raise LobbyError("room_started", self.started_codes[code][2])
            raise LobbyError("room_not_found")
        return room

    def create(self, player: str, nickname: str, game: str, seats: int | None,
               options: Any) -> Room:
        if player in self.by_player:
            raise LobbyError("in_room")
        n = check_seats(game, seats)
        opts = merge_options(game, defaults(game), options, self.allow_test)
        members: list[Seat | None] = [None] * n
        members[0] = Seat("human", player, nickname)
        room = Room(self._new_code(), game, n, opts, player, members)
        self.by_code[room.code] = room
        self.by_player[player] = room.code
        return room

    def join(self, player: str, nickname: str, code: str) -> Room:
        if player in self.by_player:
            raise LobbyError("in_room")
        room = self.get(code)
        if room.state != "open":
            raise LobbyError("room_started")
        for i, s in enumerate(room.members):
            if s is None:
                room.members[i] = Seat("human", player, nickname)
                self.by_player[player] = room.code
                self.by_code.touch(room.code)
                return room
        raise LobbyError("room_full")

    def leave(self, player: str) -> Room:
        room = self._member_room(player)
        if room.state == "starting":  # seated in the game being made
            raise LobbyError("room_started")
        seat = room.seat_of(player)
        if seat is not None:
            room.members[seat] = None
        del self.by_player[player]
        self.by_code.touch(room.code)
        if not room.humans():
            room.state = "closed"
            self.by_code.pop(room.code, None)
        elif room.host == player:
            room.host = room.humans()[0].player  # the next human by seat
        return room

    def _member_room(self, player: str) -> Room:
        room = self.room_of(player)
        if room is None:
            # e.g. 시작 pressed twice: the first press started the room
            if any(player in players for _, players, _ in self.started_codes.values()):
                raise LobbyError("room_started")
            raise LobbyError("not_in_room")
        return room

    def _host_room(self, player: str) -> Room:
        room = self._member_room(player)
        if room.host != player:
            raise LobbyError("not_host")
        if room.state != "open":
            raise LobbyError("room_started")
        return room

    def set_options(self, player: str, seats: int | None, options: Any) -> Room:
        room = self._host_room(player)
        opts = merge_options(room.game, room.options, options, self.allow_test)
        if seats:
            n = check_seats(room.game, seats)
            taken = [s for s in room.members if s is not None]
            if len(taken) > n:  # (it said bad_seats, as for a size the game has not: rooms audit)
                raise LobbyError("seats_taken")
            members: list[Seat | None] = list(taken) + [None] * (n - len(taken))
            room.members, room.seats = members, n
        room.options = opts
        self.by_code.touch(room.code)
        return room

    def add_bot(self, player: str, level: str) -> Room:
        room = self._host_room(player)
        if level not in BOT_LEVELS:
            raise LobbyError("bad_level")
        for i, s in enumerate(room.members):
            if s is None:
                room.members[i] = Seat("bot", level=level)
                self.by_code.touch(room.code)
                return room
        raise LobbyError("no_empty_seat")

    def remove_bot(self, player: str, seat: int) -> Room:
        room = self._host_room(player)
        if not 0 <= seat < room.seats or room.members[seat] is None \
                or room.members[seat].kind != "bot":  # type: ignore[union-attr]
            raise LobbyError("no_bot")
        room.members[seat] = None
        self.by_code.touch(room.code)
        return room

    def start_seats(self, player: str) -> tuple[Room, list[Seat]]:
        """Check the host may start now (the host alone is enough: bots of
        any level fill the table, issue 14); the seats of the game (empty
        seats are not dealt in; Hakka fills them with bots)."""
        room = self._host_room(player)
        # issue 14: one human may start with bots (a solo or practice table)
        if room.game != "hakka" and sum(s is not None for s in room.members) < 2:
            raise LobbyError("need_two_players")
        if room.game == "hakka":
            seats = [s if s is not None else Seat("bot", level="normal") for s in room.members]
        else:
            seats = [s for s in room.members if s is not None]
        room.state = "starting"  # until started() or unstart()
        self.by_code.touch(room.code)
        return room, seats

    def unstart(self, room: Room) -> None:
        """Its game could not be placed: the room is as it was."""
        if room.state == "starting":
            room.state = "open"
            self.by_code.touch(room.code)

    def started(self, room: Room, game_id: str, now_ms: int) -> None:
        """The room became a game: it closes; members are free again. Its
        code says so for a while (those of rooms started before that are
        forgotten now)."""
        room.state = "started"
        room.game_id = game_id
        for s in room.humans():
            self.by_player.pop(s.player, None)
        self.by_code.pop(room.code, None)
        for code, (ms, *_) in list(self.started_codes.items()):
            if now_ms - ms >= STARTED_KEEP_MS:
                del self.started_codes[code]
        watchable = room.options.get("spectators", True) is not False  # the host's 관전 off
        self.started_codes[room.code] = (now_ms, [s.player for s in room.humans()],
                                         game_id if watchable else "")

    def started_json(self) -> dict[str, Any]:
        return {code: list(v) for code, v in self.started_codes.items()}
