"""A player's session (docs/websocket.md 4), sans-I/O.

Two counters meet here:
- ``seq``: the gateway's frame sequence of the session, on every server frame;
- ``game_seq``: the shard's per-(game, player) event sequence
  (docs/protocol.md 2).

``recent`` remembers, for the last event frames sent, which ``seq`` carried
which ``game_seq``. On resume the client says the last ``seq`` it processed;
:meth:`Session.game_seq_at` turns that into the last ``game_seq`` it has, and
the new gateway asks the shard's sync for every event after it. Frames the
client never received are renumbered from ``last_seq + 1``, so the client's
``seq`` stays gapless.

The session is saved (JetStream KV ``ttanjit_sessions``) when it closes, when
a newer connection takes over, when a game starts, and at most
``CHECKPOINT_S`` after it changed (so even a crashed gateway's sessions
resume, at worst with the events of those seconds sent again and marked
``replayed``). Those checkpoints are spread over the seconds of the cycle by
session id (:func:`due_checkpoints`), not written all at once.
"""

from __future__ import annotations

import secrets
import zlib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

RESUME_MS = 60_000
# How far past the session as last saved a resuming client may be: a
# gateway that crashed saved it up to a checkpoint cycle (30 s) earlier.
RESUME_AHEAD = 100_000
RECENT = 256
# the longest a changed session waits for its checkpoint, in seconds; each
# a JetStream write, so rare (issue 13)
CHECKPOINT_S = 30


def new_session_id() -> str:
    return "s_" + secrets.token_hex(10)


@dataclass(slots=True)
class Session:
    id: str
    player: str
    nickname: str
    seq: int = 0  # last frame seq sent
    game_id: str = ""  # the game the player is seated in ("" = none)
    seat: int | None = None
    game_seq: int = 0  # last game event seq sent
    recent: deque[tuple[int, int]] = field(default_factory=lambda: deque(maxlen=RECENT))
    closed_ms: int | None = None
    saved_seq: int = -1  # seq at the last save (dirty check)
    substituted: bool = False  # a bot took the seat for good (RULES.md 4): watch only
    # the game's `matched` fields (game, kind, players, options): `welcome`
    # repeats them, so a new tab or device names the seats (docs/websocket.md)
    match: dict[str, Any] | None = None
    # the game the player left by choice (나가기, RULES.md 4: a bot plays on;
    # or 로비로 from its results): the connection that left may watch it to
    # the end, but a later hello (another tab or device) does not take it up
    # again, and the player is free to queue or open a room
    left: str = ""

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def event_sent(self, seq: int, game_seq: int) -> None:
        self.game_seq = game_seq
        self.recent.append((seq, game_seq))

    def view_sent(self, seq: int, game_seq: int) -> None:
        """A whole view at ``game_seq``: a client that missed it needs another."""
        self.game_seq = game_seq
        self.recent.clear()
        self.recent.append((seq, -game_seq - 1))  # negative: a view at -(g + 1)

    def new_game(self, game_id: str, seat: int | None,
                 match: dict[str, Any] | None = None) -> None:
        if game_id != self.game_id:
            self.game_id, self.seat, self.game_seq = game_id, seat, 0
            self.substituted = False
            self.recent.clear()
            self.match = match
        else:
            if seat is not None:
                self.seat = seat
            if match is not None:
                self.match = match

    def left_game(self) -> None:
        self.game_id, self.seat, self.match = "", None, None

    def walked_out(self) -> None:
        """The player left the game by choice: its ``leave`` was accepted,
        or, once it was over, the player declined 한 판 더 (로비로)."""
        self.left = self.game_id

    def game_seq_at(self, last_seq: int) -> int | None:
        """The last game event seq the client has when it processed frame
        ``last_seq``; ``None`` when that is no longer known (resync)."""
        if last_seq >= self.seq:
            return self.game_seq
        best: int | None = None
        for s, g in self.recent:
            if s > last_seq:
                break
            best = g if g >= 0 else -g - 1
        if best is not None:
            return best
        if not self.recent:  # nothing sent in this game yet
            return 0 if self.game_seq == 0 else None
        first_g = self.recent[0][1]
        if first_g < 0:  # it missed a whole view
            return None
        return first_g - 1 if first_g == 1 or len(self.recent) < RECENT else None

    def rewind(self, last_seq: int, game_seq: int | None) -> None:
        """Continue after frame ``last_seq``, the client having the game's
        events up to ``game_seq`` (``None``: unknown, a view will follow)."""
        self.seq = last_seq
        while self.recent and self.recent[-1][0] > last_seq:
            self.recent.pop()
        if game_seq is not None:
            self.game_seq = game_seq

    def resumable(self, now_ms: int) -> bool:
        return self.closed_ms is None or now_ms - self.closed_ms <= RESUME_MS

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "player": self.player, "nickname": self.nickname,
                "seq": self.seq, "game_id": self.game_id, "seat": self.seat,
                "game_seq": self.game_seq, "recent": list(self.recent),
                "closed_ms": self.closed_ms, "substituted": self.substituted,
                "match": self.match, "left": self.left}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Session:
        s = cls(str(obj["id"]), str(obj["player"]), str(obj.get("nickname", "")),
                int(obj.get("seq", 0)), str(obj.get("game_id") or ""), obj.get("seat"),
                int(obj.get("game_seq", 0)))
        s.recent.extend((int(a), int(b)) for a, b in obj.get("recent", []))
        s.closed_ms = obj.get("closed_ms")
        s.substituted = bool(obj.get("substituted"))
        match = obj.get("match")
        s.match = match if isinstance(match, dict) and s.game_id else None
        s.left = str(obj.get("left") or "")
        return s


MATCH_FIELDS = ("game", "kind", "players", "options")


def match_of(matched: dict[str, Any]) -> dict[str, Any]:
    """What a session keeps of a ``matched`` frame for ``welcome``."""
    return {k: matched[k] for k in MATCH_FIELDS if k in matched}


def checkpoint_second(session_id: str, cycle: int = CHECKPOINT_S) -> int:
    """The second of the checkpoint cycle on which this session is saved
    (stable for the session: from its id)."""
    return zlib.crc32(session_id.encode()) % cycle


def due_checkpoints(sessions: Iterable[Session], tick: int,
                    cycle: int = CHECKPOINT_S) -> list[Session]:
    """The sessions to checkpoint on second ``tick`` (counted up by one a
    second): those of this second of the cycle that changed since their last
    save. Over any ``cycle`` consecutive seconds each changed session comes
    once, and a gateway of N players writes about N / ``cycle`` a second
    instead of N in one burst every ``cycle`` seconds (a burst that competed
    with the moves' own appends in nats-server and put a spike into the
    command tail every half minute)."""
    k = tick % cycle
    return [s for s in sessions if s.seq != s.saved_seq and checkpoint_second(s.id, cycle) == k]
