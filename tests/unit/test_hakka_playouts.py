"""Hakka Cards: seeded random playouts with invariants on every step
(RULES.md 3 and 4): 37 cards conserved, zero-sum scores, view isolation,
refused inputs change nothing, deterministic replay, termination."""

from __future__ import annotations

import dataclasses
import json
import random
from collections import Counter

import pytest

from ttanjit.games.base import JSON, Event, SeatSpec, Setup
from ttanjit.games.hakka import Hakka
from ttanjit.games.hakka_patterns import CARDS, sort_cards
from ttanjit.games.record import Input, Record, replay
from ttanjit.games.simulate import playout

GAMES = 24
SEATS = [SeatSpec("human"), SeatSpec("bot", "normal"), SeatSpec("human"), SeatSpec("human")]


def new_game(seed: int) -> Hakka:
    return Hakka(Setup("hakka", {"seats": 4}, list(SEATS), seed))


def all_cards(g: Hakka) -> Counter[str]:
    out: Counter[str] = Counter()
    for h in g.hands:
        out.update(h)
    out.update(g.played)
    for d in g.discards:
        out.update(d)
    return out


def permute_hidden(g: Hakka, seat: int, rng: random.Random) -> Hakka:
    """A copy in which every card hidden from ``seat`` — the other hands, the
    dreamer's card, the other seats' face-down discards — is shuffled."""
    c = g.clone()
    assert isinstance(c, Hakka)
    others = [s for s in range(4) if s != seat or s == c.dreamer]
    old = [x for s in others for x in c.hands[s]]
    old += [x for s in range(4) if s != seat for x in c.discards[s]]
    new = list(old)
    rng.shuffle(new)
    m = dict(zip(old, new, strict=True))
    for s in others:
        c.hands[s] = sort_cards(m[x] for x in c.hands[s])
    for s in range(4):
        if s != seat:
            c.discards[s] = [m[x] for x in c.discards[s]]
    c.table = [dataclasses.replace(tp, cards=tuple(m[x] for x in tp.cards))
               if tp.pattern is None and tp.seat != seat else tp for tp in c.table]
    return c


def junk_actions(g: Hakka, rng: random.Random) -> list[tuple[int, JSON]]:
    """Inputs that must be refused now."""
    turn = g.turn if g.turn is not None else 0
    other = rng.choice([s for s in range(4) if s != turn])
    not_held = [c for c in CARDS if c not in g.hands[turn]]
    out: list[tuple[int, JSON]] = [
        (other, {"type": "call"}),
        (other, {"type": "play", "cards": list(g.hands[other][:1]) or ["wan"]}),
        (turn, {"type": "play", "cards": [rng.choice(not_held)]}),
        (turn, {"type": "play", "cards": []}),
        (turn, {"type": "bogus"}),
        (g.dreamer, {"type": "pass"}),
    ]
    if len(g.hands[turn]) >= 2:
        out.append((turn, {"type": "play", "cards": g.hands[turn][:2]}))  # never a pattern
    if g.phase == "playing" and not g.table:
        out.append((turn, {"type": "discard", "cards": g.hands[turn][:1]}))
    if not g.autopilot[turn]:
        out.append((turn, {"type": "resume"}))
    return out


def check_events(events: list[Event], dreamer_card: str) -> None:
    """Face-down discards reach only the discarder; the dreamer's card no one."""
    for ev in events:
        for s in (None, 0, 1, 2, 3):
            d = ev.for_seat(s)
            if ev.type == "discarded" and s != ev.data["seat"]:
                assert "cards" not in d
            d.pop("elders", None)  # public: the Elders now, wherever they are
            assert dreamer_card not in json.dumps(d), (ev, s)


def step_game(g: Hakka, rng: random.Random, inputs: list[Input], t: int) -> int:
    seats = g.actors()
    nd = g.next_deadline()
    roll = rng.random()
    if nd is not None and (not seats or roll < 0.04):
        t = max(t, nd)
        assert g.apply(t).ok
        inputs.append(Input(t))
        return t
    t += rng.randint(100, 3000)
    if roll < 0.07:  # presence now and then
        seat = rng.choice([0, 2, 3])
        kind = "reconnect" if not g.presence.connected[seat] else rng.choice(["disconnect", "leave"])
        if kind == "leave" and rng.random() < 0.7:
            kind = "disconnect"
        action: JSON = {"type": kind}
    else:
        if not seats:
            return t
        seat = rng.choice(seats)
        action = rng.choice(g.legal_actions(seat))
    deal, dreamer_card = g.deal_no, g.hands[g.dreamer][0]
    res = g.apply(t, seat, action)
    if res.ok:
        inputs.append(Input(t, seat, action))
        if g.deal_no == deal and not any(e.type == "hand_scored" for e in res.events):
            check_events(res.events, dreamer_card)
    else:
        assert action["type"] in ("disconnect", "reconnect", "leave"), (action, res.code)
    return t


@pytest.mark.parametrize("chunk", range(3))
def test_random_playouts_keep_every_invariant(chunk: int) -> None:
    """RULES.md 3 and 4: on every step 37 cards are conserved and scores are
    zero-sum; no seat's view changes when cards hidden from it are permuted;
    refused inputs change nothing; the game ends; its record replays to the
    identical state."""
    refused = 0
    for game in range(chunk * GAMES // 3, (chunk + 1) * GAMES // 3):
        rng = random.Random(game)
        g = new_game(game)
        inputs: list[Input] = []
        t = 0
        for _step in range(3000):
            if g.finished:
                break
            t = step_game(g, rng, inputs, t)
            assert all_cards(g) == Counter(CARDS)
            assert sum(g.scores) == 0
            if rng.random() < 0.3:
                for seat in range(4):
                    assert permute_hidden(g, seat, rng).view(seat) == g.view(seat)
                assert permute_hidden(g, -1, rng).view(None) == g.view(None)
            if rng.random() < 0.2:
                before = g.state()
                for seat, action in junk_actions(g, rng):
                    res = g.apply(g.now, seat, action)
                    assert not res.ok, action
                    assert res.message
                    refused += 1
                    assert g.state() == before
                # refused at a later t that fires deadlines on the way: rolled back
                nd = g.next_deadline()
                if nd is not None:
                    for action in ({"type": "bogus"}, {"type": "play", "cards": []},
                                   {"type": "play", "cards": ["sup9", "sin1"]}):
                        assert not g.apply(nd + 1, rng.randrange(4), action).ok
                    assert g.state() == before
        assert g.finished, "no end"
        engine, results, _ = replay(Record(g.setup, inputs))
        assert all(r["ok"] for r in results)
        assert engine.state() == g.state()
        assert engine.result() == g.result()
    assert refused > 50


def test_simulate_driver_plays_whole_games() -> None:
    """RULES.md 3.1: ``ttanjit simulate``'s driver plays every game to its end
    (4 counted hands, or the cap) with only legal actions."""
    rng = random.Random(1)
    outcomes: Counter[str] = Counter()
    for seed in range(30):
        g = new_game(seed)
        playout(g, rng)
        r = g.result()
        outcomes[str(r["ended_by"])] += 1
        assert sum(r["scores"]) == 0
        if r["ended_by"] == "hands":
            top = max(r["scores"])
            assert r["winners"] == [s for s in range(4) if r["scores"][s] == top]
            assert r["counters"]["hands"] == 4
    assert outcomes["hands"] >= 25


def test_clone_is_independent() -> None:
    """DESIGN.md 1 (bots search a clone): a clone plays on without touching the original."""
    g = new_game(3)
    before = g.state()
    c = g.clone()
    playout(c, random.Random(0))
    assert c.finished and g.state() == before
