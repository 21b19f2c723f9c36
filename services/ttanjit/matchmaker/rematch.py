"""한 판 더 (rematch, issue 14): after a game ends, the humans at its table
may ask to play again with the same seats, bots and options. Sans-I/O.

The table comes from the finished game's own record header (seats with the
bots' levels, options, ``players``) and its game-directory entry (finished,
who was substituted); the lobby keeps only the open offers. An offer opens
with the first ``accept`` and lasts ``window_ms``. The humans *still there*
are the table's humans whose seat was not taken over by a bot (they left or
stayed away, RULES.md 4). The new game starts as soon as every human still
there agreed, or when the window closes with at least one agreement; a human
who turned it down (로비로) or did not answer gets a bot of the table's level
in the same seat (``normal`` when the table had no bot), and goes back to the
lobby. An offer nobody agreed to when the window closes is dropped.
Once started, the offer (``started_ms``, then ``new_game_id``) is kept a
while longer: a ``rematch`` for the old game then answers with it and never
starts another game (ttanjit.matchmaker.service, ``Matchmaker.rematched``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ttanjit.matchmaker.errors import LobbyError
from ttanjit.matchmaker.rooms import Seat

WINDOW_MS = 20_000


@dataclass(slots=True)
class Rematch:
    game_id: str
    game: str
    options: dict[str, Any]
    seats: list[list[str]]  # [kind, level] by seat, as the old game had them
    humans: dict[str, int]  # player -> seat, the humans still there
    until_ms: int
    agreed: dict[str, str] = field(default_factory=dict)  # player -> nickname
    declined: list[str] = field(default_factory=list)
    new_game_id: str = ""  # the game it started (set once that game is placed)
    started_ms: int = 0  # when it was ready and its game began to be placed (0: open)
    place_id: str = ""  # the id its game is placed under (chosen when it started)

    @classmethod
    def from_game(cls, game_id: str, header: dict[str, Any], entry: dict[str, Any],
                  now_ms: int, window_ms: int = WINDOW_MS) -> Rematch:
        """The offer of a finished game (``entry``: its ``ttanjit_games``
        document; ``header``: its record header). Raises ``LobbyError``."""
        if entry.get("state") != "finished":
            raise LobbyError("game_not_finished")
        game = str(header.get("game") or entry.get("game") or "")
        seats = [[str(s.get("kind") or "human"), str(s.get("level") or "")]
                 for s in header.get("seats") or []]
        raw = entry.get("result")
        result: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if result.get("ended_by") == "abandoned":
            raise LobbyError("no_rematch")  # nobody came back: nobody is there to play again
        substituted = result.get("substituted") or []
        humans: dict[str, int] = {}
        for pid, seat in (header.get("players") or {}).items():
            seat = int(seat)
            if not (seat < len(substituted) and substituted[seat]):
                humans[str(pid)] = seat
        options = {k: v for k, v in (header.get("options") or {}).items() if k != "seats"}
        if header.get("spectators") is False:  # 관전 off stays off (a table option)
            options["spectators"] = False
        return cls(game_id, game, options, seats, humans, now_ms + window_ms)

    def answer(self, player: str, nickname: str, accept: bool) -> None:
        if player not in self.humans:
            raise LobbyError("no_rematch")
        self.agreed.pop(player, None)
        if player in self.declined:
            self.declined.remove(player)
        if accept:
            self.agreed[player] = nickname
        else:
            self.declined.append(player)

    def ready(self, now_ms: int) -> bool:
        """Time to start: every human still there agreed, or the window is
        over with someone agreed."""
        if not self.agreed:
            return False
        return set(self.agreed) == set(self.humans) or now_ms >= self.until_ms \
            or not (set(self.humans) - set(self.agreed) - set(self.declined))

    def dead(self, now_ms: int) -> bool:
        """Nobody wants it: everyone declined, or the window closed unanswered."""
        return not self.agreed and (now_ms >= self.until_ms
                                    or set(self.declined) == set(self.humans))

    def new_seats(self, free: set[str]) -> list[Seat]:
        """The new table: agreed humans (``free``: not busy elsewhere meanwhile)
        in their seats, bots everywhere else (empty seats stay empty)."""
        levels = [lvl for kind, lvl in self.seats if kind == "bot" and lvl]
        stand_in = levels[0] if levels else "normal"
        by_seat = {seat: pid for pid, seat in self.humans.items()}
        out: list[Seat] = []
        for i, (kind, level) in enumerate(self.seats):
            pid = by_seat.get(i)
            if kind == "empty":
                continue
            if pid is not None and pid in self.agreed and pid in free:
                out.append(Seat("human", pid, self.agreed[pid]))
            elif kind == "bot":
                out.append(Seat("bot", level=level or "normal"))
            else:
                out.append(Seat("bot", level=stand_in))
        return out

    def frame(self, state: str = "open") -> dict[str, Any]:
        """The ``rematch`` client frame (docs/websocket.md 3)."""
        agreed = sorted(self.humans[p] for p in self.agreed if p in self.humans)
        declined = sorted(self.humans[p] for p in self.declined if p in self.humans)
        waiting = sorted(s for p, s in self.humans.items()
                         if p not in self.agreed and p not in self.declined)
        body: dict[str, Any] = {"state": state, "agreed": agreed, "declined": declined,
                                "waiting": waiting, "until_ms": self.until_ms}
        if self.new_game_id:
            body["new_game_id"] = self.new_game_id
        return {"type": "rematch", "game_id": self.game_id, "rematch": body}

    def to_json(self) -> dict[str, Any]:
        out = {"game_id": self.game_id, "game": self.game, "options": self.options,
               "seats": self.seats, "humans": self.humans, "until_ms": self.until_ms,
               "agreed": self.agreed, "declined": self.declined}
        if self.started_ms:
            out.update(started_ms=self.started_ms, new_game_id=self.new_game_id,
                       place_id=self.place_id)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Rematch:
        return cls(str(d["game_id"]), str(d["game"]), dict(d.get("options") or {}),
                   [list(map(str, s)) for s in d.get("seats") or []],
                   {str(k): int(v) for k, v in (d.get("humans") or {}).items()},
                   int(d["until_ms"]), {str(k): str(v) for k, v in
                                        (d.get("agreed") or {}).items()},
                   [str(p) for p in d.get("declined") or []],
                   str(d.get("new_game_id") or ""), int(d.get("started_ms") or 0),
                   str(d.get("place_id") or ""))
