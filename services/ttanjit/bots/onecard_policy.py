"""The One Card bots' reading of a view and their normal/easy
policies (:mod:`ttanjit.bots.onecard` picks a level; the hard search,
:mod:`ttanjit.bots.onecard_search`, plays on with these)."""

from __future__ import annotations

import random
from typing import Any

from ttanjit.games.base import JSON
from ttanjit.games.onecard_cards import NOT_LAST, RANK, STRENGTH, SUIT, SUITS, legal_plays

GAME_ACTIONS = ("play", "draw", "take", "pass")


# -- reading the view -------------------------------------------------------------
def my_turn(seat: int, view: JSON) -> bool:
    return (not view.get("finished") and view.get("turn") == seat and not view.get("paused")
            and bool(view.get("hand")))


def legal(seat: int, view: JSON) -> list[JSON]:
    """The seat's legal game actions from its view (no presses, no resume)."""
    if not my_turn(seat, view):
        return []
    out = legal_plays(view["hand"], view["top"], view["suit"], view["pending"],
                      view["twos_only"])
    if view["pending"]:
        out.append({"type": "take"})
    elif view.get("can_draw", True):
        out.append({"type": "draw"})
    else:
        out.append({"type": "pass"})
    return out


def window_key(view: JSON) -> Any:
    """Identity of the open One Card window (None = none open)."""
    w = view.get("window")
    return None if w is None else (w["holder"], w["closes_at"])


def next_seat(view: JSON, seat: int, steps: int = 1) -> int:
    n = view["n"]
    d = view["direction"]
    alive = [view["dealt"][s] and s not in view["eliminated"] for s in range(n)]
    s = seat
    while steps:
        s = (s + d) % n
        if alive[s]:
            steps -= 1
    return s


# -- the normal heuristic -------------------------------------------------------------
def best_suit(hand: list[str], played: list[str]) -> str:
    left = list(hand)
    for c in played:
        left.remove(c)
    counts = {s: 0 for s in SUITS}
    for c in left:
        if SUIT[c] and RANK[c] not in ("7",):
            counts[SUIT[c]] += 1 + (STRENGTH[c] == 0)
    return max(SUITS, key=lambda s: (counts[s], -SUITS.index(s)))


def score(action: JSON, hand: list[str], pending: int, next_count: int) -> float:
    """Higher is better (the normal policy's judgement of one legal action)."""
    kind = action["type"]
    if kind == "take":
        return -50.0 - 3 * pending
    if kind in ("draw", "pass"):
        return -40.0
    cards = action["cards"]
    k = len(cards)
    if k == len(hand):
        return 1000.0
    rank = RANK[cards[0]]
    s = 10.0 * k
    left = [c for c in hand if c not in cards]
    if pending:
        # transfer (cheapest) or block with 3s: always better than taking
        s += 100 - sum(STRENGTH[c] for c in cards)
    else:
        threat = next_count <= 2
        if STRENGTH[cards[0]]:
            s += 8 * k if threat else -6 * k
            if rank == "X":
                s -= 0 if threat else 10
        elif rank == "K":
            s += 4
        elif rank in ("J", "Q"):
            s += 6 if threat else 1
        elif rank == "7":
            s -= 3
    if left and all(RANK[c] in NOT_LAST for c in left):
        s -= 12 + 4 * (len(left) == 1)
    # keep a card that can finish: a lone last card of a common suit is good
    return s


def normal_choice(seat: int, view: JSON, acts: list[JSON]) -> JSON:
    hand = view["hand"]
    nxt = view["hand_counts"][next_seat(view, seat)]
    best: JSON | None = None
    best_s = -1e9
    for a in acts:
        if a["type"] == "play" and "suit" in a:
            continue  # suits: chosen below, once per card set
        s = score(a, hand, view["pending"], nxt)
        if s > best_s:
            best, best_s = a, s
    for a in acts:  # card sets that name a suit
        if a["type"] == "play" and "suit" in a and a["suit"] == SUITS[0]:
            s = score(a, hand, view["pending"], nxt)
            if s > best_s:
                best, best_s = a, s
    assert best is not None
    if best["type"] == "play" and "suit" in best:
        best = {**best, "suit": best_suit(hand, best["cards"])}
    return best


def easy_choice(view: JSON, acts: list[JSON], rng: random.Random) -> JSON:
    plays = [a for a in acts if a["type"] == "play"]
    other = [a for a in acts if a["type"] != "play"]
    if view["pending"]:
        if plays and rng.random() < 0.7:
            return rng.choice(plays)
        return other[0]
    if not plays or (other and other[0]["type"] == "draw" and rng.random() < 0.12):
        return other[0]
    choice = rng.choice(plays)
    if "suit" in choice and rng.random() < 0.5:
        choice = {**choice, "suit": best_suit(view["hand"], choice["cards"])}
    return choice
