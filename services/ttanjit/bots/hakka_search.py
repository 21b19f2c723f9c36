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
from typing import Any

from ttanjit.bots import Budget, monte_carlo_choice
from ttanjit.bots.hakka import call_choice, legal, normal_play
from ttanjit.games.base import SeatSpec, Setup
from ttanjit.games.hakka import CALLING, Hakka, TablePlay
from ttanjit.games.hakka_patterns import CARDS, classify, sort_cards

JSON = dict[str, Any]
MAX_SAMPLES = 200
MIN_SAMPLES = 1
MAX_ROLLOUT = 60  # actions; a hand has at most 36 plays and 3 calls


def base_engine(view: JSON) -> Hakka:
    e = Hakka(Setup("hakka", {}, [SeatSpec("bot", "normal")] * 4, 0, dealer=view["dealer"]))
    e.round = view["round"]
    e.deal_no = view["deal"]
    e.scores = list(view["scores"])
    e.dealer = view["dealer"]
    e.dreamer = view["dreamer"]
    e.tricks = list(view["tricks"])
    e.played = list(view["played"])
    e.played_set = set(view["played"])
    e.won_cards = [[] for _ in range(4)]
    e.calls = [dict(c) for c in view["calls"]]
    e.caller = view["caller"]
    e.privileged = view["privileged"]
    e.phase = view["phase"]
    e.turn = view["turn"]
    e.leader = view["leader"]
    e.autopilot = [False] * 4
    e.next_dealer = e.dealer
    if e.caller is not None:
        e.next_dealer = e.dealer if e.caller == e.dealer else (e.dealer - 1) % 4
    e.now = 0
    e.deadline_gt = e.turn_ms
    return e


def determinise(base: Hakka, seat: int, view: JSON, rng: random.Random) -> Hakka:
    hand = view["hand"]
    known = set(hand) | set(view["played"]) | set(view["my_discards"])
    unseen = [c for c in CARDS if c not in known]
    rng.shuffle(unseen)
    e = base.clone()
    assert isinstance(e, Hakka)
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
    e.hands = hands
    e.discards = discards
    table: list[TablePlay] = []
    best = -1
    for x in view["table"]:
        s = x["seat"]
        if x["kind"] == "discard":
            cards = tuple(sort_cards(discards[s][-x["count"]:]))
            table.append(TablePlay(s, cards, None))
        else:
            table.append(TablePlay(s, tuple(x["cards"]), classify(x["cards"])))
            if s == view["best"]:
                best = len(table) - 1
    e.table = table
    e.best = best
    e.rng = random.Random(rng.getrandbits(32))
    return e


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
    base = base_engine(view)
    return monte_carlo_choice(
        cands, fallback, lambda: determinise(base, seat, view, rng),
        lambda det, a: rollout(det.clone(), seat, a),
        budget, max_samples=MAX_SAMPLES, min_samples=MIN_SAMPLES)
