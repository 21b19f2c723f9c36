"""Quick match (issue 6): tickets per (game, table size), grouped by rating.

Sans-I/O: the service calls :meth:`QuickQueue.take_matches` with the time
every tick. A ticket's acceptable rating window starts at ``base_window``
(openskill ordinal points) and widens by ``widen_per_s`` per second of
waiting; two tickets may meet when their distance fits the wider of their two
windows. When the oldest ticket has waited ``bot_wait_ms``, it starts with
whoever fits and bots in the empty seats, so nobody waits forever. The bots
are of the level the oldest ticket chose (issue 14), or as strong as the
players' mean rating when it chose none.
"""

from __future__ import annotations

import heapq
import math
import secrets
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ttanjit.common.ids import new_game_id
from ttanjit.matchmaker.errors import LobbyError
from ttanjit.matchmaker.options import bot_level_for, check_seats
from ttanjit.matchmaker.store import Parted


@dataclass(slots=True)
class Ticket:
    player: str
    nickname: str
    game: str
    seats: int
    rating: float  # openskill ordinal
    since_ms: int
    id: str = field(default_factory=lambda: "t_" + secrets.token_hex(6))
    bot_level: str = ""  # the player's choice for the backfill bots ("" = by rating)

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):  # (never from openskill; a damaged lobby)
            self.rating = 0.0

    def window(self, now_ms: int, base: float, widen: float) -> float:
        return base + widen * max(0, now_ms - self.since_ms) / 1000

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "nickname": self.nickname, "game": self.game,
                "seats": self.seats, "rating": self.rating, "since_ms": self.since_ms,
                "id": self.id, "bot_level": self.bot_level}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Ticket:
        return cls(str(d["player"]), str(d.get("nickname", "")), str(d["game"]),
                   int(d["seats"]), float(d.get("rating", 0.0)), int(d["since_ms"]),
                   str(d.get("id") or "t_" + secrets.token_hex(6)),
                   str(d.get("bot_level") or ""))


def _by_rating(ratings: list[float], lo: int, hi: int) -> list[range]:
    """``ratings[lo:hi]`` (sorted) cut into runs of one rating each."""
    runs = []
    while lo < hi:
        end = bisect_right(ratings, ratings[lo], lo, hi)
        runs.append(range(lo, end))
        lo = end
    return runs


@dataclass(slots=True)
class QuickMatch:
    game: str
    seats: int
    tickets: list[Ticket]
    bots: list[str]  # levels of the bots filling the remaining seats

    id: str = field(default_factory=lambda: "m_" + secrets.token_hex(6))
    # the game's id, chosen with the match: every try of its placement (a new
    # leader's too) asks for this one game
    game_id: str = field(default_factory=new_game_id)

    @property
    def backfilled(self) -> bool:
        return bool(self.bots)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "game": self.game, "seats": self.seats, "bots": self.bots,
                "tickets": [t.to_json() for t in self.tickets], "game_id": self.game_id}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> QuickMatch:
        return cls(str(d["game"]), int(d["seats"]),
                   [Ticket.from_json(t) for t in d.get("tickets", [])],
                   [str(b) for b in d.get("bots", [])], str(d.get("id") or ""),
                   str(d.get("game_id") or "") or new_game_id())


class QuickQueue:
    def __init__(self, bot_wait_ms: int = 15_000, base_window: float = 5.0,
                 widen_per_s: float = 1.0) -> None:
        self.bot_wait_ms = bot_wait_ms
        self.base_window = base_window
        self.widen_per_s = widen_per_s
        self.by_player: dict[str, Ticket] = {}  # waiting in the queue
        # what the lobby keeps (docs/protocol.md 4.1): the tickets waiting
        # and those of the matches being placed, until their game is placed
        # (:meth:`placed`) — so a match formed writes its own part alone,
        # and no commit cut off half way loses a ticket
        self.held: Parted[Ticket] = Parted()

    def restore(self, tickets: Iterable[Ticket], placing: Iterable[QuickMatch]) -> None:
        """The tickets a new leader read: those of a match being placed are
        in it, the rest wait."""
        self.held = Parted((t.player, t) for t in tickets)
        taken = set()
        for mt in placing:
            for t in mt.tickets:
                taken.add(t.player)
                if t.player not in self.held:  # (a lobby from before the parts)
                    self.held[t.player] = t
        self.by_player = {p: t for p, t in self.held.items() if p not in taken}

    def add(self, ticket: Ticket) -> Ticket:
        check_seats(ticket.game, ticket.seats)
        if ticket.player in self.by_player:
            raise LobbyError("already_queued")
        self.by_player[ticket.player] = self.held[ticket.player] = ticket
        return ticket

    def remove(self, player: str) -> Ticket:
        ticket = self.by_player.pop(player, None)
        if ticket is None:
            raise LobbyError("not_queued")
        del self.held[player]
        return ticket

    def drop(self, player: str) -> bool:
        """The player's ticket, if one waits, is gone (they went away)."""
        if player not in self.by_player:
            return False
        self.remove(player)
        return True

    def _holds(self, t: Ticket) -> bool:
        """The lobby keeps this ticket (a copy of it read back: by its id)."""
        return getattr(self.held.get(t.player), "id", None) == t.id

    def placed(self, match: QuickMatch) -> None:
        """The match's game is placed: its tickets are done."""
        for t in match.tickets:
            if self._holds(t):
                del self.held[t.player]

    def waiting(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.by_player.values():
            out[t.game] = out.get(t.game, 0) + 1
        return out

    def take_matches(self, now_ms: int) -> list[QuickMatch]:
        """Form every match possible now and remove its tickets.

        Per kind of table, oldest ticket first: the ones within its window
        (or theirs, the wider) join it, nearest in rating first, then the
        longest waiting; a table not filled waits, unless its oldest has
        waited ``bot_wait_ms`` (bots fill it), and the oldest is then left
        out of the rest of this tick. The tickets are kept sorted by rating
        and a table's candidates taken outward from the oldest's rating, so
        a tick costs about n log n, not n² (a queue that grew while no
        shard took games: 20,000 tickets that do not meet took 6.7 s a
        tick, now 44 ms; BENCHMARKS.md "Lobby")."""
        buckets: dict[tuple[str, int], list[Ticket]] = {}
        for t in self.by_player.values():
            buckets.setdefault((t.game, t.seats), []).append(t)
        matches: list[QuickMatch] = []
        for (game, seats), pending in buckets.items():
            pending.sort(key=lambda t: t.since_ms)
            matches += self._bucket(game, seats, pending, now_ms)
        return matches

    def _window(self, t: Ticket, now_ms: int) -> float:
        return t.window(now_ms, self.base_window, self.widen_per_s)

    def _bucket(self, game: str, seats: int, pending: list[Ticket],
                now_ms: int) -> list[QuickMatch]:
        # by rating, then as in ``pending`` (time, then queue order): keys
        # and the tickets in the same order
        keys = sorted((t.rating, i) for i, t in enumerate(pending))
        ratings = [k[0] for k in keys]
        order = [k[1] for k in keys]
        widest = max((self._window(t, now_ms) for t in pending), default=0.0)
        gone: set[int] = set()
        matches: list[QuickMatch] = []

        def drop(i: int) -> None:
            at = bisect_left(keys, (pending[i].rating, i))
            del keys[at], ratings[at], order[at]
            gone.add(i)

        for i, oldest in enumerate(pending):
            if i in gone:
                continue
            drop(i)
            r, w_old = oldest.rating, self._window(oldest, now_ms)
            fits = self._nearest(pending, ratings, order, bisect_left(keys, (r, i)), r,
                                 w_old, widest, seats - 1, now_ms)
            group = [oldest, *(pending[j] for j in fits)]
            waited = now_ms - oldest.since_ms
            if len(group) < seats and waited < self.bot_wait_ms:
                continue  # the oldest waits; younger ones may still meet
            mean = sum(t.rating for t in group) / len(group)
            # the oldest player's chosen level, else as strong as the table
            bots = [oldest.bot_level or bot_level_for(mean)] * (seats - len(group))
            matches.append(QuickMatch(game, seats, group, bots))
            self.by_player.pop(oldest.player, None)
            for j in fits:
                drop(j)
                self.by_player.pop(pending[j].player, None)
        return matches

    def _nearest(self, pending: list[Ticket], ratings: list[float], order: list[int],
                 at: int, r: float, w_old: float, widest: float, need: int,
                 now_ms: int) -> list[int]:
        """Up to ``need`` tickets that fit a table with the oldest (rating
        ``r``, window ``w_old``; ``at``: where it would be in ``ratings``):
        those within the wider of the two windows, nearest in rating first,
        ties as in ``pending``. Taken outward from ``at``, one distance at
        a time: on each side the ratings at that distance are a run (the
        distance grows monotonically away from ``r``, and two ratings may
        round to one distance), each rating's tickets in ``pending``'s
        order, merged; none farther than the widest window in the bucket."""
        out: list[int] = []
        n = len(ratings)
        left, right = at - 1, at
        while len(out) < need and (left >= 0 or right < n):
            d_left = abs(ratings[left] - r) if left >= 0 else math.inf
            d_right = abs(ratings[right] - r) if right < n else math.inf
            d = min(d_left, d_right)
            if d > widest:
                break
            runs: list[range] = []  # index ranges of one rating each, at distance d
            if d_left == d:
                start = bisect_left(ratings, -d, 0, left + 1, key=lambda x: -abs(x - r))
                runs += _by_rating(ratings, start, left + 1)
                left = start - 1
            if d_right == d:
                end = bisect_right(ratings, d, right, n, key=lambda x: abs(x - r))
                runs += _by_rating(ratings, right, end)
                right = end
            layer = runs[0] if len(runs) == 1 else heapq.merge(*runs, key=order.__getitem__)
            for k in layer:
                if len(out) == need:
                    break
                j = order[k]
                if d <= max(w_old, self._window(pending[j], now_ms)):
                    out.append(j)
        return out

    def put_back(self, match: QuickMatch) -> None:
        """A match that could not be placed: its tickets wait again (same age)."""
        for t in match.tickets:
            if self.by_player.setdefault(t.player, t) is t and not self._holds(t):
                self.held[t.player] = t
