"""Ratings people understand, and what each player played (issue 15).

- **Display rating**: ``1500 + 40 × ordinal`` (openskill's ordinal is
  ``mu − 3·sigma``, 0 for a new player), rounded; *provisional* until
  ``PROVISIONAL_GAMES`` rated games. Per game.
- **Rating change** of a game (the ``change`` of the ``ratings`` frame,
  docs/websocket.md 3.4): before/after display ratings and a one-line Korean
  explanation.
- **History**: the JetStream KV bucket ``ttanjit_history``, key
  ``<game>.<player_id>``: ``{"games": [entry…]}``, newest first, at most
  ``HISTORY_MAX``; written by the matchmaker leader for every finished game
  it reads from ``TTANJIT_RESULTS`` (rated or not), so it outlives the game's
  shard. An entry: ``{game_id, game, ended_ms, seat, seats, winners, scores,
  ended_by, outcome, length_ms, before?, after?, delta?}``.

Sans-I/O except :func:`add_history` (the bucket is ``ttanjit_history``,
created with the others by ``common.nats.ensure_jetstream``).
"""

from __future__ import annotations

import time
from typing import Any

import orjson
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from ttanjit.matchmaker.ratings import SCORED, left_in_play

HISTORY_MAX = 50
BASE = 1500
SCALE = 40
PROVISIONAL_GAMES = 10
BOARD_MIN_GAMES = 3  # leaderboards list players with at least this many rated games


def display(ordinal: float) -> int:
    return int(round(BASE + SCALE * ordinal))


def decorate(entry: dict[str, Any]) -> dict[str, Any]:
    """A ratings entry ``{game, mu, sigma, ordinal, games}`` with
    ``display`` and ``provisional`` added."""
    out = dict(entry)
    out["display"] = display(float(entry.get("ordinal") or 0.0))
    out["provisional"] = int(entry.get("games") or 0) < PROVISIONAL_GAMES
    return out


def outcome(result: dict[str, Any], seat: int) -> str:
    """``win`` / ``loss`` / ``left`` (a bot took the seat while it was in
    the game) / ``none`` (no winner: abandoned or the time cap)."""
    winners = result.get("winners") or []
    if left_in_play(result, seat):
        return "left"
    if not winners:
        return "none"
    return "win" if seat in winners else "loss"


def signed(n: int) -> str:
    """+12, −7 (a real minus sign, as the client's label), ±0."""
    return f"+{n}" if n > 0 else f"−{-n}" if n < 0 else "±0"


# a rise after a loss or a leave, in a new player's first games
PROVISIONAL_RISE = "처음 몇 게임은 실력을 재는 중이라 져도 오를 수 있어요."


# a loss where those who did not win place by score (ratings.place)
LOSS_BY_SCORE = "게임 순위가 낮을수록, 상대가 약할수록 더 내려가요."
# a loss at a table of three or more with no score (One Card: everybody
# but the winner shares 2nd place, ratings.place): −3 losing to three 보통
# bots beside −32 losing to one 어려움 bot, both under "상대가 약할수록 더
# 내려가고, 강할수록 덜 내려가요." (trial nitpick)
LOSS_SHARED = "우승자 말고는 모두 공동 2위로 계산해서, 여럿이 하는 게임은 대개 1대1보다 덜 " \
    "내려가요. 상대가 약할수록 더 내려가요."
# a loss that moved nothing: what held it
LEVEL_SHARED = "우승자 말고는 모두 공동 2위로 계산해서, 함께 2위인 상대가 나보다 강하면 " \
    "거의 내려가지 않아요."
LEVEL_BY_SCORE = "우승은 못 했어도 게임 순위가 나보다 낮은 상대가 있으면 그만큼 덜 내려가요."
LEVEL_PROVISIONAL = "처음 몇 게임은 실력을 재는 중이라 진 만큼 내려가지 않았어요."
# a loss that rose where those who did not win place by score: "점수로 앞선
# 상대" alone read as a rival ahead of me, the opposite (trial finding)
RISE_BY_SCORE = "우승은 못 했어도 게임 순위가 나보다 낮은 상대가 있으면 그 순위만큼 올라요."
# One Card's losers place by the cards they keep (ratings.place): the same
# three lines in its words
LOSS_BY_CARDS = "남은 카드가 많을수록(탈락은 꼴찌), 상대가 약할수록 더 내려가요."
LEVEL_BY_CARDS = "우승은 못 했어도 나보다 카드가 많이 남은 상대가 있으면 그만큼 덜 내려가요."
RISE_BY_CARDS = "우승은 못 했어도 나보다 카드가 많이 남은 상대가 있으면 그 순위만큼 올라요."
# a loss that rose with another seat's player gone (counted last)
RISE_LEFT = "자리를 비운 사람은 점수와 관계없이 꼴찌로 계산해서, 졌어도 그보다 앞선 순위예요."
# ... and up: sharing it with stronger seats (not only in a new player's
# first games, as PROVISIONAL_RISE said: review finding)
RISE_SHARED = "우승자 말고는 모두 공동 2위로 계산해서, 나보다 강한 상대와 같은 순위면 " \
    "졌어도 오를 수 있어요."


# a win against bots alone held at their level (ratings.BOT_CAP_MARGIN)
CAPPED = "봇만 상대한 게임으로는 가장 강한 봇의 레이팅보다 크게 오르지 않아요. 사람과 하면 더 오를 수 있어요."


def explain(kind: str, delta: int, games: int, by_score: bool = False,
            others_left: bool = False, bots: bool = True, seats: int = 2,
            by_cards: bool = False, capped: bool = False) -> str:
    """The one line under a rating change (Korean, the result screen).
    ``by_score``: the game places those who did not win by score (ratings);
    ``others_left``: another seat's player left (a bot took it), and counts
    last whatever its score; ``bots``: the game had bot seats (a win over
    people alone said how bots are rated: trial nitpick); ``seats``: the
    table's seats; ``by_cards``: One Card's losers placed by the cards they
    keep (``by_score`` in its words)."""
    prov = games < PROVISIONAL_GAMES
    by_score = by_score or by_cards
    loss_by, level_by, rise_by = (LOSS_BY_CARDS, LEVEL_BY_CARDS, RISE_BY_CARDS) if by_cards \
        else (LOSS_BY_SCORE, LEVEL_BY_SCORE, RISE_BY_SCORE)
    # (at a table of two the loser is 2nd whatever the scores)
    shared, placed = seats > 2 and not by_score, seats > 2 and by_score
    if kind == "win":
        head = f"이겨서 레이팅 {signed(delta)}."
        why = CAPPED if capped else \
            "강한 상대(봇은 난이도별 고정 레이팅)를 이길수록 더 올라요." if bots else \
            "강한 상대를 이길수록 더 올라요."
    elif kind == "left":
        # up although counted last (a new player's first games: the
        # conservative rating rises as its uncertainty shrinks): said why,
        # as for a loss ("나감 +32" read as a reward for leaving: trial)
        head = f"자리를 비워 봇이 대신해서 꼴찌로 계산했어요 (레이팅 {signed(delta)})." if delta <= 0 else \
            f"자리를 비워 봇이 대신해서 꼴찌로 계산했지만 레이팅 {signed(delta)}."
        why = "" if delta <= 0 else PROVISIONAL_RISE
    elif delta == 0:
        # not "져서 ±0점. … 상대가 약할수록 더 내려가요.": it did not go down
        # at all, and the line read as wrong (UX audit); what kept it
        head = "졌지만 레이팅은 그대로예요."
        # (in the first games, mostly the shrinking uncertainty: review)
        why = LEVEL_PROVISIONAL if prov else LEVEL_SHARED if shared else \
            level_by if placed else "나보다 훨씬 강한 상대에게 지면 거의 내려가지 않아요."
    else:
        head = f"져서 레이팅 {signed(delta)}." if delta <= 0 else f"졌지만 레이팅 {signed(delta)}."
        # not "약한 상대에게 질수록 더 내려가요." alone: two new players of
        # equal rating read it as "my opponent was weak" (trial nitpick); a
        # loss that moved nothing is one that did not rise (review finding:
        # "±0점 … 오를 수 있어요")
        why = loss_by if delta <= 0 and placed else \
            LOSS_SHARED if delta <= 0 and shared else \
            "상대가 약할수록 더 내려가고, 강할수록 덜 내려가요." if delta <= 0 else \
            rise_by if placed else \
            RISE_SHARED if shared else \
            PROVISIONAL_RISE
    # 5th of 5 by score and still up: the seat that left ranked below
    # (nothing on the screen said so: trial nitpick)
    left = "자리를 비운 사람은 점수와 관계없이 꼴찌로 계산해요." if others_left and kind != "left" else ""
    if left and kind == "loss" and delta > 0:
        # that is the rise's reason (by score, maybe not the only one): said
        # first, not after "처음 몇 게임은 …" (a room whose other person left:
        # trial finding), nor after a place by score that was last (trial)
        why, left = f"{RISE_LEFT} {rise_by}" if placed else RISE_LEFT, ""
    tail = f" {games}/{PROVISIONAL_GAMES}게임 — 10게임을 채울 때까지는 잠정 레이팅이라 크게 움직여요." if prov else ""
    return " ".join(x for x in (head, why, left) if x) + tail


def change(game_id: str, game: str, kind: str, before_ordinal: float, after_ordinal: float,
           games: int, others_left: bool = False, bots: bool = True,
           seats: int = 2, placed: bool | None = None, capped: bool = False) -> dict[str, Any]:
    """``placed``: the result placed those who did not win (ratings.placed;
    by default, the games with scores); ``capped``: held at the bots' level
    (ratings.BOT_CAP_MARGIN)."""
    before, after = display(before_ordinal), display(after_ordinal)
    placed = game in SCORED if placed is None else placed
    return {"game_id": game_id, "game": game, "outcome": kind, "before": before, "after": after,
            "delta": after - before, "games": games, "provisional": games < PROVISIONAL_GAMES,
            "why": explain(kind, after - before, games, placed and game in SCORED, others_left,
                           bots, seats, by_cards=placed and game not in SCORED, capped=capped)}


def table_seats(result: dict[str, Any]) -> int:
    """The seats of the game's table (people and bots; a room's empty seat
    is none, as ratings.rate_result counts)."""
    return sum(isinstance(s, dict) and s.get("kind") != "empty"
               for s in result.get("seats") or [])


def others_left(result: dict[str, Any], seat: int) -> bool:
    """Whether a player of another seat left the game (a bot took it over
    while the seat was in it)."""
    return any(left_in_play(result, s) for s in range(len(result.get("substituted") or [])) if s != seat)


def history_entry(result: dict[str, Any], seat: int, rated: dict[str, Any] | None,
                  now_ms: int) -> dict[str, Any]:
    seats = []
    players = {s: p for p, s in (result.get("players") or {}).items() if isinstance(s, int)}
    for i, spec in enumerate(result.get("seats") or []):
        d = {"kind": (spec or {}).get("kind", "human")}
        if (spec or {}).get("level"):
            d["level"] = spec["level"]
        if i in players:
            d["player"] = players[i]
        seats.append(d)
    out = {"game_id": result.get("game_id"), "game": result.get("game"), "ended_ms": now_ms,
           "seat": seat, "seats": seats, "winners": result.get("winners") or [],
           "scores": result.get("scores"), "ended_by": result.get("ended_by"),
           "length_ms": result.get("length_ms"), "outcome": outcome(result, seat),
           # the seats a bot finished (내 기록 marks a winner a bot stood in for)
           "substituted": list(result.get("substituted") or [])}
    if rated:  # the rating change, as the result screen shows it (a tab that missed `ratings`)
        out.update({k: rated[k] for k in ("before", "after", "delta", "provisional", "why")
                    if k in rated})
    return out


async def add_history(kv: KeyValue, game: str, player: str, entry: dict[str, Any]) -> None:
    """Put ``entry`` first in the player's list (once per game id)."""
    key = f"{game}.{player}"
    for _ in range(5):
        try:
            cur = await kv.get(key)
            doc, rev = orjson.loads(cur.value or b"{}") or {}, cur.revision
        except KeyNotFoundError:
            doc, rev = {}, None
        games = [g for g in doc.get("games", []) if g.get("game_id") != entry["game_id"]]
        games.insert(0, entry)
        data = orjson.dumps({"games": games[:HISTORY_MAX]})
        try:
            if rev is None:
                await kv.create(key, data)
            else:
                await kv.update(key, data, last=rev)
            return
        except KeyWrongLastSequenceError:
            continue


async def read_history(kv: KeyValue, game: str, player: str) -> list[dict[str, Any]]:
    try:
        cur = await kv.get(f"{game}.{player}")
    except KeyNotFoundError:
        return []
    return list((orjson.loads(cur.value or b"{}") or {}).get("games", []))


def now_ms() -> int:
    return int(time.time() * 1000)
