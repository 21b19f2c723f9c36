"""The gateway's leaderboards (docs/websocket.md 1.2, ``GET
/api/leaderboard/{game}``) kept sorted as ratings change: after any
sequence of rating puts and deletes, the board (top entries, ranks shared
by equal display ratings, my rank or what I still need) is what sorting
every rated player afresh gives. Sans-I/O: the watch's entries are given
by hand."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from ttanjit.gateway.account import Board
from ttanjit.matchmaker import standings
from ttanjit.matchmaker.ratings import Rating


@dataclass
class Entry:
    key: str
    value: bytes
    operation: str | None = None


def put(board: Board, game: str, pid: str, r: Rating, loading: bool = False) -> None:
    board._rating(Entry(f"{game}.{pid}", orjson.dumps(r.to_json())), loading)


def fresh(board: Board, game: str, me: str | None, limit: int) -> dict[str, Any]:
    """The board as sorting every rated player afresh gives it."""
    ratings = board.ratings[game]
    rows = sorted(((standings.display(r.ordinal), pid) for pid, r in ratings.items()
                   if r.games >= standings.BOARD_MIN_GAMES), key=lambda x: (-x[0], x[1]))
    out: dict[str, Any] = {"game": game, "min_games": standings.BOARD_MIN_GAMES,
                           "players": len(rows), "entries": []}
    for i, (disp, pid) in enumerate(rows):
        rank = 1 + next(j for j, row in enumerate(rows) if row[0] == disp)
        if i < limit:
            out["entries"].append({"rank": rank, "player": pid, "display": disp,
                                   "games": ratings[pid].games})
        if pid == me:
            out["me"] = {"rank": rank, "display": disp, "games": ratings[pid].games}
    if me is not None and "me" not in out:
        r = ratings.get(me, Rating())
        out["me"] = {"rank": None, "display": standings.display(r.ordinal), "games": r.games,
                     "needs": max(0, standings.BOARD_MIN_GAMES - r.games)}
    return out


@pytest.mark.parametrize("seed", range(20))
def test_the_board_kept_sorted_is_the_board_sorted_afresh(seed: int) -> None:
    rng = random.Random(seed)
    board = Board()
    players = [f"p_{i:04d}" for i in range(40)]
    for pid in players[:20]:  # read at start (sorted once)
        put(board, "onecard", pid, Rating(rng.gauss(25, 4), rng.uniform(1, 8),
                                          rng.randint(0, 6)), loading=True)
    board.rows["onecard"] = sorted(k for k in map(board._row, board.ratings["onecard"].values(),
                                                  board.ratings["onecard"]) if k is not None)
    for _ in range(300):  # then followed, change by change
        pid = rng.choice(players)
        if rng.random() < 0.1:
            board._rating(Entry(f"onecard.{pid}", b"", "DEL"))
        else:
            old = board.ratings["onecard"].get(pid, Rating())
            # coarse ratings: many players share a display rating (and a rank)
            put(board, "onecard", pid, Rating(round(rng.gauss(25, 2)), 3.0,
                                              old.games + rng.choice((0, 1, 1, 2))))
        me = rng.choice(players + [None])
        limit = rng.choice((1, 3, 10, 100))
        assert board.board("onecard", me, limit) == fresh(board, "onecard", me, limit)
    assert board.rows["hakka"] == [] and board.board("hakka", None, 5)["entries"] == []
