"""Seeded random playouts of 줄줄이 벌점 with invariants checked on every step
(STYLE.md "Tests"): the 104 cards are conserved (hands + rows + taken piles +
unused), penalties equal the taken piles' values, refused inputs change
nothing, no seat's view changes when other seats' hidden cards and picks are
permuted, the record replays to the identical state, every game ends.

Inputs mix legal actions, malformed and illegal ones, presence actions
(disconnect, reconnect, leave) and clock jumps to the next deadline."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from ttanjit.games.base import JSON, SeatSpec, Setup
from ttanjit.games.penalty_rows import PenaltyRows
from ttanjit.games.penalty_rows_cards import PENALTY
from ttanjit.games.record import Input, Record, record_from_json, replay

CASES = [
    # (seats, options, seed)
    (["human", "human"], {}, 1),
    (["human", "bot", "human", "empty", "human"], {"select_ms": 30000}, 2),
    (["human"] * 10, {"rounds": 1}, 3),
    (["human", "human", "bot"], {"end": "score_66"}, 4),
    (["human"] * 4, {"rounds": 5, "select_ms": 45000}, 5),
    (["bot", "human", "human", "human", "human", "human"], {"end": "score_66"}, 6),
]


def check_invariants(e: PenaltyRows) -> None:
    st = e.state()
    everything = (sum(st["hands"], []) + sum(st["rows"], []) + sum(st["taken"], [])
                  + st["unused"])
    assert sorted(everything) == list(range(1, 105)), "RULES.md 2.1: 104 cards conserved"
    sizes = {len(st["hands"][s]) for s in e.players}
    assert len(sizes) == 1 and all(not st["hands"][s] for s in range(e.n) if not e.active[s])
    if st["phase"] == "select":
        assert sizes == {11 - st["turn"]}, "RULES.md 2.3: one card per turn"
    else:
        assert sizes == {0} and st["turn"] == 10
    assert all(1 <= len(r) <= 5 for r in st["rows"]), "RULES.md 2.3: rows hold 1..5 cards"
    for s in range(e.n):
        assert st["round_penalties"][s] == sum(PENALTY[c] for c in st["taken"][s])
        assert st["penalties"][s] >= st["round_penalties"][s]
        sel = st["selections"][s]
        if sel is not None:
            assert sel["card"] in st["hands"][s]
        if st["confirmed"][s]:
            assert sel is not None
    if e.finished:
        assert st["ended_by"] in ("rounds", "score_66", "time_cap", "abandoned")
        assert st["deadline"] is None and e.next_deadline() is None


def bad_inputs(e: PenaltyRows, rng: random.Random) -> list[tuple[int, JSON]]:
    seat = rng.randrange(e.n)
    not_held = [c for c in range(1, 105) if c not in e.hands[seat]]
    hand = e.hands[seat] or [1]
    return [
        (seat, {"type": "select", "card": rng.choice(not_held), "row": 1}),
        (seat, {"type": "select", "card": rng.choice(hand), "row": rng.choice([0, 5, -1])}),
        (seat, {"type": "select", "card": "7", "row": 1}),
        (seat, {"type": "select", "card": rng.choice(hand), "row": 1, "auto": "yes"}),
        (seat, {"type": "confirm"} if e.selection[seat] is None or e.confirmed[seat]
         else {"type": "pass"}),
        (seat, {"type": "resume"} if not e.autopilot[seat] else {"type": "select"}),
        (seat, {"type": "reconnect"} if e.presence.connected[seat] else {"type": "nope"}),
        (seat, {"cards": [1]}),
    ]


def permute_hidden(e: PenaltyRows, seat: int, rng: random.Random) -> PenaltyRows:
    """A clone in which every card ``seat`` cannot see (others' hands, unused)
    is shuffled among its places, others' selections following their slot."""
    c = e.clone()
    assert isinstance(c, PenaltyRows)
    others = [s for s in range(c.n) if s != seat]
    slots: list[tuple[int, int]] = [(s, i) for s in others for i in range(len(c.hands[s]))]
    pool = [c.hands[s][i] for s, i in slots] + c.unused
    rng.shuffle(pool)
    index = {s: [c.hands[s].index(x[0]) if x else -1] for s in others
             for x in [c.selection[s]]}
    new_hands: dict[int, list[int]] = {s: [] for s in others}
    for (s, _), card in zip(slots, pool, strict=False):
        new_hands[s].append(card)
    c.unused = pool[len(slots):]
    for s in others:
        c.hands[s] = new_hands[s]
        sel = c.selection[s]
        if sel is not None:
            c.selection[s] = (new_hands[s][index[s][0]], rng.randint(1, 4))
        c.hands[s].sort()
    return c


def play(e: PenaltyRows, rng: random.Random, record: list[Input],
         check: Callable[[PenaltyRows], None] = check_invariants) -> None:
    """Random play to the end, ``check`` (the invariants) before every input."""
    t = 0
    for step in range(20_000):
        if e.finished:
            return
        check(e)
        r = rng.random()
        if r < 0.08:  # something refused: nothing may change
            seat, action = rng.choice(bad_inputs(e, rng))
            before, nd = json.dumps(e.state(), sort_keys=True), e.next_deadline()
            res = e.apply(t + rng.randint(0, 3000), seat, action)
            assert not res.ok and res.code, (action, res)
            assert json.dumps(e.state(), sort_keys=True) == before and e.next_deadline() == nd
            continue
        if r < 0.12:  # presence
            seat = rng.randrange(e.n)
            kind = rng.choice(["disconnect", "reconnect", "reconnect", "leave"])
            if kind == "leave" and rng.random() < 0.7:
                kind = "disconnect"
            t += rng.randint(0, 5000)
            res = e.apply(t, seat, {"type": kind})
            if res.ok:
                record.append(Input(t, seat, {"type": kind}))
            continue
        if step % 25 == 0:  # view isolation
            seat = rng.randrange(e.n)
            assert permute_hidden(e, seat, rng).view(seat) == e.view(seat)
        actors = e.actors()
        nd = e.next_deadline()
        if e.presence.paused and (not actors or r > 0.97) and rng.random() < 0.9:
            # RULES.md 4: paused while every human is away; someone comes back
            # (else the clock input below: 10 minutes later, abandoned)
            away = [s for s in range(e.n) if e.presence.is_active_human(s)]
            seat = rng.choice(away)
            t += rng.randint(0, 100_000)
            assert e.apply(t, seat, {"type": "reconnect"}).ok
            record.append(Input(t, seat, {"type": "reconnect"}))
            continue
        if not actors or r > 0.97:
            assert nd is not None
            t = max(t, nd)
            assert e.apply(t).ok
            record.append(Input(t))
            continue
        t += rng.randint(50, 4000)
        if nd is not None and t >= nd:  # the deadline comes first
            assert e.apply(t).ok
            record.append(Input(t))
            continue
        seat = rng.choice(actors)
        legal = e.legal_actions(seat)
        confirm = [a for a in legal if a["type"] == "confirm"]
        # confirm often enough that most turns end by everyone confirming
        action: dict[str, Any] = dict(confirm[0] if confirm and rng.random() < 0.3
                                      else rng.choice(legal))
        if e.autopilot[seat] and rng.random() < 0.5:
            action["auto"] = True
        res = e.apply(t, seat, action)
        assert res.ok, (action, res.code)
        record.append(Input(t, seat, action))
    raise AssertionError("no end")


@pytest.mark.parametrize(("kinds", "options", "seed"), CASES)
def test_random_playouts_keep_invariants_and_replay(kinds: list[str], options: JSON,
                                                    seed: int) -> None:
    """RULES.md 2 and 4 under random play: invariants on every step, the record
    replays to the identical state and events' outcome, the game ends."""
    setup = Setup("penalty_rows", {"seats": len(kinds), **options},
                  [SeatSpec(k) for k in kinds], seed)
    e = PenaltyRows(setup)
    inputs: list[Input] = []
    play(e, random.Random(seed), inputs)
    check_invariants(e)
    assert e.finished
    res = e.result()
    if res["ended_by"] not in ("time_cap", "abandoned"):
        low = min(res["penalties"][s] for s in e.players)
        assert res["winners"] == [s for s in e.players if res["penalties"][s] == low]
    doc = json.loads(json.dumps(Record(setup, inputs).to_json()))
    again, results, _ = replay(record_from_json(doc))
    assert all(r["ok"] for r in results)
    assert again.state() == e.state() and again.result() == e.result()
