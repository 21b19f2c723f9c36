"""Hard Hakka bot: determinised Monte Carlo over the hidden cards.

From the seat's view only: the unseen cards are the 37 minus our hand, the
cards played face up this hand and our own face-down discards. A
*determinisation* deals them at random into the other seats' hands (the
dreamer's one card included) and their face-down discards, by the public
counts. We build a real :class:`~ttanjit.games.hakka.Hakka` in that state,
apply each candidate and play the hand out with the normal policy for every
seat; the mean change of our score decides. A calling decision is searched
the same way (a void deal is worth 0).
"""

from __future__ import annotations

import random

from ttanjit.bots import Budget, monte_carlo_choice
from ttanjit.bots.hakka_policy import call_choice, legal, normal_play
from ttanjit.games.base import JSON
from ttanjit.games.hakka import CALLING, Hakka
from ttanjit.games.hakka_patterns import CARDS, sort_cards

MAX_SAMPLES = 200
MIN_SAMPLES = 1
MAX_ROLLOUT = 60  # actions; a hand has at most 36 plays and 3 calls
# What calling is worth beside its rollouts' score. The rollouts play the
# other seats with the normal policy, which calls readily, so passing looked
# free (someone else takes the risk) — while the other seats, hard bots too,
# passed as well: with three hard bots a fifth to a half of the deals were
# void, 8 in a row, the one person at the table always the caller
# (solo-player audit).
CALL_BONUS = 1.0


def determinise(seat: int, view: JSON, rng: random.Random) -> Hakka:
    """One sample of the hidden cards: the unseen ones dealt into the other
    seats' hands and face-down discards by their public counts."""
    hand = view["hand"]
    known = set(hand) | set(view["played"]) | set(view["my_discards"])
    unseen = [c for c in CARDS if c not in known]
    rng.shuffle(unseen)
    k = 0
    hands: list[list[str]] = []
    discards: list[list[str]] = []
    for s in range(4):
        if s == seat:
            hands.append(list(hand))
            discards.append(list(view["my_discards"]))
            continue
        n = view["hand_counts"][s]
        hands.append(sort_cards(unseen[k:k + n]))
        k += n
        d = view["discard_counts"][s]
        discards.append(unseen[k:k + d])
        k += d
    return Hakka.from_view(view, hands, discards, seed=rng.getrandbits(32))


def rollout(e: Hakka, seat: int, first: JSON) -> float:
    start = e.scores[seat]
    deal = e.deal_no
    res = e.apply(e.now, seat, first)
    if not res.ok:
        raise RuntimeError(f"hakka search: candidate {first} refused: {res.code}")
    for _ in range(MAX_ROLLOUT):
        if e.finished or e.deal_no != deal or e.phase not in ("calling", "playing"):
            break
        who = e.turn
        assert who is not None
        view = e.view(who)
        acts = legal(who, view)
        if e.phase == CALLING:
            action = call_choice(who, view)
        else:
            action = acts[0] if len(acts) == 1 else normal_play(who, view, acts)
        res = e.apply(e.now, who, action)
        if not res.ok:
            raise RuntimeError(f"hakka rollout: refused {res.code}")
    return float(e.scores[seat] - start)


def search(seat: int, view: JSON, acts: list[JSON], rng: random.Random,
           budget: Budget) -> JSON:
    if view["phase"] == "calling":
        fallback = call_choice(seat, view)
    else:
        fallback = normal_play(seat, view, acts)
    cands = acts
    if len(cands) > 12:  # many discards: keep the normal choice and the best-looking others
        cands = [fallback] + [a for a in acts if a["type"] == "play"][:11]
    if budget.left_ms() < 3:
        return fallback
    return monte_carlo_choice(
        cands, fallback, lambda: determinise(seat, view, rng),
        lambda det, a: rollout(det.clone(), seat, a) + (CALL_BONUS if a["type"] == "call" else 0.0),
        budget, max_samples=MAX_SAMPLES, min_samples=MIN_SAMPLES)
