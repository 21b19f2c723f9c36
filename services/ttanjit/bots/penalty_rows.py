"""줄줄이 벌점 bots (RULES.md 2 and 4), from the seat's view only.

The seat's view gives the hand, the four rows, the taken piles (face up) and
the other seats' hand sizes; every card not in those is *unseen* (in another
hand or unused this round).

- normal: for every (card, row) pair, the penalty it takes now, or for an
  append the risk that other players cut in between the row end and the card
  and make it the sixth card (estimated from how many unseen cards lie in the
  gap); the cheapest pair, smaller gap first.
- easy: looks only at what a pick takes now (no risk), and one pick in three
  is a hunch: a random card on the row it fits best.
- hard: determinised Monte Carlo. Each sample deals the unseen cards into the
  other hands, predicts their picks with the normal heuristic (so it knows how
  a sound player reacts to the same rows; one pick in four the quick
  least-penalty pick instead, a hedge against less careful players — it
  measured better against normals and mixed tables alike), then plays each of
  the normal
  heuristic's best candidates against those picks and plays the rest of the
  round on (the others with the quick least-penalty pick, us with the normal
  heuristic), scoring everything we take. Samples run until the budget; the
  candidate with the lowest mean wins.

A seat with a selection confirms it; otherwise it selects (the next decision
confirms). ``random`` play uses :func:`legal`.
"""

from __future__ import annotations

import math
import random

from ttanjit.bots import Budget
from ttanjit.games.base import JSON
from ttanjit.games.penalty_rows_cards import PENALTY, ROW_MAX

Rows = list[list[int]]
CUT_CHANCE = 0.6  # share of the gap's cards that go to this row (the row fits them best)
MAX_SAMPLES = 400
MEAN_CUT_PENALTY = 1.7  # penalty of a card that cut in (average over the deck)
NEXT_WEIGHT = 0.5  # hard without rollouts: weight of the next pick's estimated cost
ROLLOUT_TURNS = 9  # hard: turns played on after the one chosen
CANDIDATES = 8  # hard: the normal heuristic's best picks searched
OPP_NOISE = 0.25  # hard: share of predicted opponent picks made the quick way (hedge)


# -- reading the view -----------------------------------------------------------
def _hand(view: JSON) -> list[int]:
    return [c["card"] if isinstance(c, dict) else int(c) for c in view.get("hand", [])]


def _rows(view: JSON) -> Rows:
    return [[c["card"] if isinstance(c, dict) else int(c) for c in r["cards"]]
            for r in view["rows"]]


def _my_turn(seat: int, view: JSON) -> bool:
    if view.get("finished") or view.get("phase") != "select":
        return False
    confirmed = view.get("confirmed", [])
    return seat < len(confirmed) and not confirmed[seat] and bool(_hand(view))


def unseen(view: JSON) -> list[int]:
    seen = set(_hand(view))
    for r in _rows(view):
        seen.update(r)
    for pile in view.get("taken", []):
        seen.update(pile)
    return [c for c in range(1, 105) if c not in seen]


def opponents(seat: int, view: JSON) -> list[int]:
    counts = view.get("hand_counts", [])
    return [s for s, k in enumerate(counts) if s != seat and k > 0]


def legal(seat: int, view: JSON) -> list[JSON]:
    """The seat's legal game actions, from the view (same set as the engine's)."""
    if not _my_turn(seat, view):
        return []
    sel = view.get("selection")
    cur = (sel["card"], sel["row"]) if sel else None
    out: list[JSON] = [{"type": "select", "card": c, "row": r}
                       for c in _hand(view) for r in (1, 2, 3, 4) if (c, r) != cur]
    if sel:
        out.append({"type": "confirm"})
    return out


def random_action(seat: int, view: JSON, rng: random.Random) -> JSON | None:
    """Random legal play as a player would do it: a random pick, then confirm."""
    if not _my_turn(seat, view):
        return None
    if view.get("selection"):
        return {"type": "confirm"}
    return {"type": "select", "card": rng.choice(_hand(view)), "row": rng.randint(1, 4)}


# -- the heuristic ----------------------------------------------------------------
def row_pen(row: list[int]) -> int:
    return sum(PENALTY[c] for c in row)


def pick_cost(card: int, r: int, rows: Rows, below: list[int], others: int,
              pool: int, risk: bool = True) -> float:
    """Estimated penalty of putting ``card`` on row index ``r`` now.

    ``below[c]`` = unseen cards lower than ``c``; ``others`` players pick at
    the same time from ``pool`` unseen cards."""
    row = rows[r]
    end = row[-1]
    if end > card or len(row) >= ROW_MAX:
        return float(row_pen(row))
    if not risk or others == 0 or pool == 0:
        return 0.0
    gap = below[card] - below[end]
    lam = others * gap / pool * CUT_CHANCE
    need = ROW_MAX - len(row)  # cut-ins that make our card the sixth
    # P(Poisson(lam) >= need)
    term = math.exp(-lam)
    cdf = 0.0
    for k in range(need):
        cdf += term
        term *= lam / (k + 1)
    p = max(0.0, 1.0 - cdf)
    return p * (row_pen(row) + MEAN_CUT_PENALTY * need)


def _below_table(pool: list[int]) -> list[int]:
    below = [0] * 106
    s = set(pool)
    acc = 0
    for c in range(1, 106):
        below[c] = acc
        if c in s:
            acc += 1
    return below


def ranked(hand: list[int], rows: Rows, below: list[int], others: int, pool: int,
           risk: bool = True) -> list[tuple[float, int, int]]:
    """(cost, card, row index) for every pick, best first."""
    out = []
    for card in hand:
        for r in range(4):
            cost = pick_cost(card, r, rows, below, others, pool, risk)
            end = rows[r][-1]
            gap = card - end if end < card else 200 + card
            out.append((cost + gap * 1e-4, card, r))
    out.sort()
    return out


def best_pick(hand: list[int], rows: Rows, below: list[int], others: int, pool: int) -> tuple[int, int]:
    _, card, r = min(ranked(hand, rows, below, others, pool))
    return card, r


# -- playing a turn out ---------------------------------------------------------------
def resolve(rows: Rows, picks: list[tuple[int, int, int]]) -> tuple[Rows, dict[int, int]]:
    """Place (card, row index, who) picks in card order (RULES.md 2.3);
    returns the new rows and the penalty each ``who`` took."""
    rows = [list(r) for r in rows]
    taken: dict[int, int] = {}
    for card, r, who in sorted(picks):
        row = rows[r]
        if row[-1] > card or len(row) >= ROW_MAX:
            taken[who] = taken.get(who, 0) + row_pen(row)
            rows[r] = [card]
        else:
            row.append(card)
    return rows, taken


# -- levels ---------------------------------------------------------------------------
def _select_or_confirm(view: JSON, card: int, r: int) -> JSON:
    sel = view.get("selection")
    if sel:
        return {"type": "confirm"}
    return {"type": "select", "card": card, "row": r + 1}


def decide(level: str, seat: int, view: JSON, rng: random.Random, budget: Budget) -> JSON | None:
    if not _my_turn(seat, view):
        return None
    if view.get("selection"):
        return {"type": "confirm"}  # a selection stands (ours, or the player's own)
    hand = _hand(view)
    rows = _rows(view)
    pool = unseen(view)
    below = _below_table(pool)
    others = len(opponents(seat, view))
    if level == "easy":
        if rng.random() < 1 / 3:
            card = rng.choice(hand)
            _, _, r = min(ranked([card], rows, below, others, len(pool), risk=False))
        else:
            _, card, r = min(ranked(hand, rows, below, others, len(pool), risk=False))
        return _select_or_confirm(view, card, r)
    if level == "normal" or len(hand) == 1:
        card, r = best_pick(hand, rows, below, others, len(pool))
        return _select_or_confirm(view, card, r)
    card, r = search(seat, view, hand, rows, pool, rng, budget)
    return _select_or_confirm(view, card, r)


def quick_pick(hand: list[int], rows: Rows) -> tuple[int, int]:
    """Rollout policy: least penalty now, then the smallest gap (the timeout
    pick's order, RULES.md 2.5) — cheap and sound enough to look ahead with."""
    best: tuple[int, int, int, int] | None = None
    for card in hand:
        for r in range(4):
            row = rows[r]
            end = row[-1]
            if end < card and len(row) < ROW_MAX:
                key = (0, card - end, card, r)
            else:
                key = (row_pen(row), 0, card, r)
            if best is None or key < best:
                best = key
    assert best is not None
    return best[2], best[3]


def rollout(seat: int, rows: Rows, hands: dict[int, list[int]], below: list[int],
            others: int, pool: int, turns: int) -> float:
    """Our penalty over the next ``turns`` turns, everyone playing on."""
    total = 0.0
    for _ in range(turns):
        if not hands[seat]:
            break
        picks = []
        for s, h in hands.items():
            if s == seat:
                _, c, r = min(ranked(h, rows, below, others, pool))
            else:
                c, r = quick_pick(h, rows)
            h.remove(c)
            picks.append((c, r, s))
        rows, taken = resolve(rows, picks)
        total += taken.get(seat, 0)
    return total


def search(seat: int, view: JSON, hand: list[int], rows: Rows, pool: list[int],
           rng: random.Random, budget: Budget, min_samples: int = 2) -> tuple[int, int]:
    """Hard: determinised Monte Carlo over the other hands (see module doc)."""
    opp = opponents(seat, view)
    counts = view.get("hand_counts", [])
    base = ranked(hand, rows, _below_table(pool), len(opp), len(pool))
    if not opp or budget.expired():
        return base[0][1], base[0][2]
    cands = [(c, r) for _, c, r in base[:CANDIDATES]]
    totals = [0.0] * len(cands)
    rest_hand = {c: [x for x in hand if x != c] for c, _ in cands}
    cap = MAX_SAMPLES if budget.samples is None else budget.samples
    n = 0
    while n < cap and (n < min_samples or not budget.expired()):
        deal = list(pool)
        rng.shuffle(deal)
        picks: list[tuple[int, int, int]] = []
        held: dict[int, list[int]] = {}
        k = 0
        for s in opp:
            h = deal[k:k + counts[s]]
            k += counts[s]
            # what they see as unseen: everything but their hand and the table
            their_pool = [c for c in pool if c not in h] + hand
            below = _below_table(their_pool)
            if OPP_NOISE and rng.random() < OPP_NOISE:
                c, r = quick_pick(h, rows)  # a less careful player
            else:
                c, r = best_pick(h, rows, below, len(opp), len(their_pool))
            picks.append((c, r, s))
            held[s] = [x for x in h if x != c]
        played = {p[0] for p in picks}
        later_pool = [x for x in pool if x not in played]
        later_below = _below_table(later_pool)
        for i, (c, r) in enumerate(cands):
            after, taken = resolve(rows, picks + [(c, r, seat)])
            cost = float(taken.get(seat, 0))
            rest = rest_hand[c]
            if rest and ROLLOUT_TURNS:
                hands = {s: list(h) for s, h in held.items()}
                hands[seat] = list(rest)
                cost += rollout(seat, after, hands, later_below, len(opp), len(later_pool),
                                ROLLOUT_TURNS)
            elif rest:
                cost += NEXT_WEIGHT * min(ranked(rest, after, later_below, len(opp),
                                                 len(later_pool)))[0]
            totals[i] += cost
        n += 1
    i = min(range(len(cands)), key=lambda j: (totals[j], j))
    return cands[i]
