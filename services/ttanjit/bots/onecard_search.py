"""Hard One Card bot: determinised Monte Carlo over the hidden cards.

From the seat's view only: the unseen cards are the deck minus our hand minus
the discard pile (every card played since the last reshuffle is public).
A *determinisation* deals them at random into the other live hands by their
public counts, the rest becoming the draw pile in random order. We build a
real :class:`~ttanjit.games.onecard.OneCard` with that state (so every rule is
the engine's), apply each candidate, and play on with a fast normal-style
rollout policy for a bounded number of actions. The outcome is 1 for our win,
0 for another's, or — when the rollout stops first — a soft estimate from the
hand sizes. The same determinisations are shared by every candidate (common
random numbers); sampling continues until the budget runs out.
"""

from __future__ import annotations

import math
import random

from ttanjit.bots import Budget, monte_carlo_choice
from ttanjit.bots.onecard_policy import GAME_ACTIONS, best_suit, next_seat, normal_choice, score
from ttanjit.games.base import JSON
from ttanjit.games.onecard import OneCard
from ttanjit.games.onecard_cards import DECK

ROLLOUT_ACTIONS = 24  # actions per rollout before the hand-size estimate
SOFTNESS = 0.45  # hand-size estimate: win chance ∝ exp(-SOFTNESS * cards)
MAX_SAMPLES = 300
MAX_CANDIDATES = 8
MIN_SAMPLES = 1


def candidates(seat: int, view: JSON, acts: list[JSON]) -> list[JSON]:
    """Legal actions with one suit per card set (the best-held suit, and the
    next player's... not known: we keep the best two by our hand)."""
    out: list[JSON] = []
    seen: set[tuple[str, ...]] = set()
    hand = view["hand"]
    for a in acts:
        if a["type"] == "play" and "suit" in a:
            key = tuple(a["cards"])
            if key in seen:
                continue
            seen.add(key)
            out.append({**a, "suit": best_suit(hand, a["cards"])})
        else:
            out.append(a)
    return out


def determinise(seat: int, view: JSON, rng: random.Random) -> OneCard:
    """One sample of the hidden cards: the unseen ones dealt into the other
    live hands by their public counts, the rest the draw pile."""
    hand = view["hand"]
    known = set(hand) | set(view["discard"])
    unseen = [c for c in DECK if c not in known]
    rng.shuffle(unseen)
    k = 0
    hands: list[list[str]] = []
    for s, cnt in enumerate(view["hand_counts"]):
        if s == seat:
            hands.append(list(hand))
        elif view["dealt"][s] and s not in view["eliminated"]:
            hands.append(unseen[k:k + cnt])
            k += cnt
        else:
            hands.append([])
    return OneCard.from_view(view, hands, unseen[k:], seed=rng.getrandbits(32))


def rollout_action(e: OneCard, seat: int) -> JSON:
    hand = e.hands[seat]
    acts = [a for a in e.legal_actions(seat) if a["type"] in GAME_ACTIONS]
    if len(acts) == 1:
        return acts[0]
    s, d, n = seat, e.direction, e.n
    while True:
        s = (s + d) % n
        if e.alive[s]:
            break
    nxt = len(e.hands[s])
    best = acts[-1]
    best_s = -1e9
    for a in acts:
        if "suit" in a and a["suit"] != "S":
            continue
        sc = score(a, hand, e.pending, nxt)
        if sc > best_s:
            best, best_s = a, sc
    if "suit" in best:
        best = {**best, "suit": best_suit(hand, best["cards"])}
    return best


def evaluate(e: OneCard, seat: int) -> float:
    if e.finished:
        return 1.0 if e.winner == seat else 0.0
    if not e.alive[seat]:
        return 0.0
    w = [math.exp(-SOFTNESS * len(e.hands[s])) if e.alive[s] else 0.0 for s in range(e.n)]
    return w[seat] / sum(w)


def rollout(e: OneCard, seat: int, first: JSON) -> float:
    res = e.apply(e.now, seat, first)
    if not res.ok:
        raise RuntimeError(f"onecard search: candidate {first} refused: {res.code}")
    for _ in range(ROLLOUT_ACTIONS):
        if e.finished or e.turn is None:
            break
        who = e.turn
        res = e.apply(e.now, who, rollout_action(e, who))
        if not res.ok:
            raise RuntimeError(f"onecard rollout: refused {res.code}")
    return evaluate(e, seat)


def search(seat: int, view: JSON, acts: list[JSON], rng: random.Random,
           budget: Budget) -> JSON:
    cands = candidates(seat, view, acts)
    if len(cands) == 1:
        return cands[0]
    fallback = normal_choice(seat, view, acts)
    if len(cands) > MAX_CANDIDATES:  # big hands: the normal policy's favourites
        nxt = view["hand_counts"][next_seat(view, seat)]
        cands.sort(key=lambda a: -score(a, view["hand"], view["pending"], nxt))
        cands = cands[:MAX_CANDIDATES]
    if budget.left_ms() < 2:
        return fallback
    return monte_carlo_choice(
        cands, fallback, lambda: determinise(seat, view, rng),
        lambda det, a: rollout(det.clone(), seat, a),
        budget, max_samples=MAX_SAMPLES, min_samples=MIN_SAMPLES, same=_same)


def _same(a: JSON, b: JSON) -> bool:
    return a["type"] == b["type"] and a.get("cards") == b.get("cards")

