"""Ratings per game with openskill (Plackett-Luce, multiplayer). Sans-I/O:
:func:`rate_result` turns a finished game (docs/protocol.md 5,
``TTANJIT_RESULTS``) and the players' current ratings into new ones.

Bots take part with a fixed rating per level (never stored), so a player
who plays bots alone still moves — up to the level of the bots beaten
(``BOT_CAP_MARGIN``). Winners share rank 1; the others rank by
the game's score where it has one (하카 카드: most points first, 줄줄이 벌점:
fewest penalties first; equal scores share a rank), so second of five is
not rated as last — in One Card, which has no score, by the cards left
(fewest first; a seat eliminated (탈락) after every seat that was not,
the later out before the earlier). Every loser shared rank 2 there, so a
loss to stronger bots, 탈락 too, raised the rating ("졌지만 +23점";
solo-player audit); a result from before the shard sent the cards left
still does. A player whose seat was substituted by a bot (left, or away
60 s) ranks last, whatever the seat did afterwards — unless the seat was
out of the game already (the result's ``kept``: One Card's eliminated, rules
revision 3), which keeps its place; a game with no winner
(time cap) changes nothing, and neither does an abandoned one (RULES.md 4:
every human away 10 min; unrated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from ttanjit.games.base import ABANDONED

MODEL = PlackettLuce()
UNRATED = (ABANDONED,)  # ``ended_by`` values that never change ratings (RULES.md 4)
BOT_MU = {"easy": 18.0, "normal": 25.0, "hard": 32.0}
BOT_SIGMA = 4.0
# A game of one person and bots raises the rating at most to the strongest
# bot's (its ordinal, display 1,740 / 2,020 / 2,300) plus this (display
# +80): winning again and again against 쉬움 bots took it to 3,006 in 30
# games, and the leaderboards could be climbed with bots alone (solo-player
# audit). A rating above that from games with people is kept, not lowered.
BOT_CAP_MARGIN = 2.0


@dataclass(slots=True)
class Rating:
    """A player's rating in one game. ``last``: the game id of the last
    result applied to it, and ``change``: what that result changed (the
    ``ratings`` frame's ``change``), so a result delivered again (the
    matchmaker failed half-way through it) is not applied twice."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0
    last: str = ""
    change: dict[str, Any] | None = None
    # the bucket's revision it was read or written at (0: none stored), for a
    # write that must not land on a newer one (not stored in the entry)
    rev: int = field(default=0, compare=False)
    # (rate_result) held at the bots' level (BOT_CAP_MARGIN): not stored
    capped: bool = field(default=False, compare=False)

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mu": self.mu, "sigma": self.sigma, "games": self.games}
        if self.last:
            out["last"] = self.last
        if self.change is not None:
            out["change"] = self.change
        return out

    @staticmethod
    def from_json(obj: dict[str, Any]) -> Rating:
        change = obj.get("change")
        return Rating(float(obj["mu"]), float(obj["sigma"]), int(obj.get("games", 0)),
                      str(obj.get("last") or ""), change if isinstance(change, dict) else None)


def seat_players(result: dict[str, Any]) -> dict[int, str]:
    """seat -> player id of the human seats of a result."""
    players = result.get("players") or {}
    out: dict[int, str] = {}
    if isinstance(players, dict):
        for pid, seat in players.items():
            if isinstance(seat, int):
                out[seat] = pid
    elif isinstance(players, list):
        for seat, pid in enumerate(players):
            if isinstance(pid, str) and pid:
                out[seat] = pid
            elif isinstance(pid, dict) and pid.get("player"):
                out[seat] = pid["player"]
    return out


LAST = -1  # a substituted player's rank: after every seat


def left_in_play(result: dict[str, Any], seat: int) -> bool:
    """A bot took the seat while it was still in the game (its player left,
    or was away 60 s): not one taken once out of it (``kept``, rules 3)."""
    subst = result.get("substituted") or []
    kept = result.get("kept") or []
    return seat < len(subst) and bool(subst[seat]) and not (seat < len(kept) and kept[seat])
SCORED = frozenset({"hakka", "penalty_rows"})  # games whose results carry scores to place by
LOW_WINS = frozenset({"penalty_rows"})  # the fewest penalties win


def _cards_left(result: dict[str, Any]) -> tuple[list[int], list[int], list[bool]] | None:
    """One Card's standing: the cards left by seat, the seats eliminated in
    the order they went and the seats dealt in (a room's empty seat is
    not); None when the result does not carry them."""
    counts, out = result.get("hand_counts"), result.get("eliminated")
    if result.get("game") != "onecard" or not isinstance(counts, list) or not isinstance(out, list) \
            or not all(type(x) is int for x in counts) or not all(type(x) is int for x in out):
        return None
    dealt = result.get("dealt")
    if not isinstance(dealt, list) or len(dealt) != len(counts):
        dealt = [True] * len(counts)
    return counts, out, [bool(d) for d in dealt]


def _scores(result: dict[str, Any]) -> list[float] | None:
    """The scores to place by (None: the game has none, or not for every seat)."""
    scores = result.get("scores")
    if result.get("game") not in SCORED or not isinstance(scores, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in scores):
        return None
    return scores


def placed(result: dict[str, Any]) -> bool:
    """Whether those who did not win place apart (by score, or by cards left)."""
    return _cards_left(result) is not None or _scores(result) is not None


def place(result: dict[str, Any], seat: int) -> int:
    """The rank of a seat that did not win: 2 plus the other seats that did
    not win either and did strictly better — scored better, or in One Card
    kept fewer cards (or went out later); 2 when the result says neither."""
    winners = set(result.get("winners") or [])
    standing = _cards_left(result)
    if standing is not None and seat < len(standing[0]):
        counts, out, dealt = standing

        def key(s: int) -> tuple[int, int]:  # smaller is better
            return (1, -out.index(s)) if s in out else (0, counts[s])
        mine = key(seat)
        return 2 + sum(1 for s in range(len(counts))
                       if dealt[s] and s not in winners and key(s) < mine)
    scores = _scores(result)
    if scores is None or seat >= len(scores):
        return 2
    low = result.get("game") in LOW_WINS
    mine = scores[seat]
    better = sum(1 for i, x in enumerate(scores)
                 if i not in winners and (x < mine if low else x > mine))
    return 2 + better


def rate_result(result: dict[str, Any], current: dict[str, Rating]) -> dict[str, Rating]:
    """New ratings of the human players of ``result`` (player id -> Rating)."""
    humans = seat_players(result)
    winners = set(result.get("winners") or [])
    if not humans or not winners or result.get("ended_by") in UNRATED:
        return {}
    seats = result.get("seats") or []
    n = max(len(seats), max(humans) + 1)
    teams: list[list[Any]] = []
    ranks: list[float] = []
    who: list[str | None] = []
    for seat in range(n):
        pid = humans.get(seat)
        if pid is not None:
            r = current.get(pid, Rating())
            teams.append([MODEL.rating(mu=r.mu, sigma=r.sigma)])
        else:
            spec = seats[seat] if seat < len(seats) and isinstance(seats[seat], dict) else {}
            if spec.get("kind") == "empty":
                continue
            teams.append([MODEL.rating(mu=BOT_MU.get(spec.get("level") or "normal", 25.0),
                                       sigma=BOT_SIGMA)])
        left = pid is not None and left_in_play(result, seat)
        ranks.append(LAST if left else 1 if seat in winners else place(result, seat))
        who.append(pid)
    if len(teams) < 2:
        return {}
    ranks = [len(ranks) + 1 if r == LAST else r for r in ranks]
    if len(set(ranks)) == 1 and all(left_in_play(result, seat) for seat in humans):
        # every person left and nobody placed above anybody (a game with no
        # bot seat: all counted last): no result to rate. As a draw it
        # raised every conservative rating (uncertainty shrinks): two
        # friends leaving a 2-seat room at once gained ~30 each, every
        # game ("나감 +32": trial finding). A real tie is still rated.
        return {}
    rated = MODEL.rate(teams, ranks=ranks)
    out: dict[str, Rating] = {}
    bot_levels = [(s or {}).get("level") or "normal" for i, s in enumerate(seats)
                  if i not in humans and isinstance(s, dict) and s.get("kind") == "bot"]
    # one person and bots: what the win proves is bounded by the bots beaten
    # (a person who left counts as none: a second account leaving at once
    # turned the cap off — review finding)
    stayed = [seat for seat in humans if not left_in_play(result, seat)]
    cap = max(bot_ordinal(lv) for lv in bot_levels) + BOT_CAP_MARGIN \
        if len(stayed) == 1 and bot_levels else None
    for pid, team in zip(who, rated, strict=True):
        if pid is not None:
            old = current.get(pid, Rating())
            new = Rating(team[0].mu, team[0].sigma, old.games + 1)
            if cap is not None and new.ordinal > max(old.ordinal, cap):
                new.mu = max(old.ordinal, cap) + 3 * new.sigma
                new.capped = True
            out[pid] = new
    return out


def bot_ordinal(level: str) -> float:
    return BOT_MU.get(level, BOT_MU["normal"]) - 3 * BOT_SIGMA
