"""Random One Card playouts with invariants checked on every step (RULES.md 1
and 4; DESIGN.md 1: a game is its record, hidden cards leave only through a
seat's view, refused inputs change nothing)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from ttanjit.games.base import SeatSpec, Setup
from ttanjit.games.onecard import OneCard
from ttanjit.games.onecard_cards import DECK
from ttanjit.games.record import Input, Record, record_from_json, replay

FULL_DECK = Counter(DECK)


def new_game(seed: int, seats: int, kinds: list[str] | None = None, **options: Any) -> OneCard:
    specs = [SeatSpec(k) for k in (kinds or ["human"] * seats)]
    return OneCard(Setup("onecard", {"seats": seats, **options}, specs, seed))


def cards_in_play(g: OneCard) -> Counter[str]:
    c: Counter[str] = Counter(g.pile)
    c.update(g.discard)
    for h in g.hands:
        c.update(h)
    return c


def random_input(g: OneCard, rng: random.Random, t: int) -> tuple[int, int | None, Any]:
    """A random, usually illegal, input: wrong seats, cards not held, junk."""
    seat = rng.randrange(g.n)
    r = rng.random()
    if r < 0.35:
        cards = rng.sample(DECK, rng.randint(1, 3))
        action: Any = {"type": "play", "cards": cards}
        if rng.random() < 0.5:
            action["suit"] = rng.choice(["S", "H", "D", "C", "X", 3, ["S"], None])
    elif r < 0.45 and g.hands[seat]:
        action = {"type": "play", "cards": rng.sample(g.hands[seat], min(2, len(g.hands[seat])))}
    elif r < 0.75:
        action = {"type": rng.choice(["draw", "take", "pass", "resume", "reconnect", "dance"])}
    elif r < 0.85:
        action = rng.choice([{"type": "play", "cards": "5H"}, {"type": "play"}, {"type": 3}, [], "draw",
                             {"type": "play", "cards": [["5H"]]}, {"type": "play", "cards": [None]}])
    else:
        return rng.choice([-1, t - 1, t]), rng.choice([None, 99, -1, "0", True]), {"type": "draw"}
    return t + rng.choice([0, 0, 0, 50_000]), seat, action


def snapshot(g: OneCard) -> tuple[Any, ...]:
    return g.state(), g.now, g.rng.getstate()


def hidden_permuted(g: OneCard, seat: int, rng: random.Random) -> OneCard:
    """A clone where every card hidden from ``seat`` (others' hands, the
    pile) is shuffled among the same places, counts kept."""
    c = g.clone()
    assert isinstance(c, OneCard)
    others = [s for s in range(c.n) if s != seat]
    pool = list(c.pile) + [x for s in others for x in c.hands[s]]
    rng.shuffle(pool)
    c.pile[:] = pool[: len(c.pile)]
    pos = len(c.pile)
    for s in others:
        k = len(c.hands[s])
        c.hands[s][:] = pool[pos:pos + k]
        pos += k
    return c


def _mine(event: dict[str, Any], seat: int) -> dict[str, Any]:
    """A seat's own drawn cards come from the (shuffled) pile: drop them."""
    if event["type"] == "drew" and event["seat"] == seat:
        event.pop("cards", None)
    return event


def drive(g: OneCard, rng: random.Random, check: Any, max_steps: int = 20_000,
          presence: float = 0.0) -> list[Input]:
    """Random legal play (like ``simulate.playout``) calling ``check`` after
    every input; with ``presence`` > 0 humans also disconnect, come back and
    leave (RULES 4). Returns the record's inputs."""
    inputs: list[Input] = []
    t = 0
    for _ in range(max_steps):
        if g.finished:
            return inputs
        p = g.presence  # a refused input that fired deadlines restores a copy
        seats = g.actors()
        if rng.random() < 0.2:
            assert seats == [s for s in range(g.n) if g.legal_actions(s)]
        nd = g.next_deadline()
        t = max(t, g.now) + rng.randint(100, 2500)
        away = [s for s in range(g.n) if p.is_active_human(s) and not p.connected[s]]
        if nd is None or (p.paused and rng.random() < 0.9):
            # paused: every human is away; one comes back (else the clock
            # input below: 10 minutes later the game is abandoned, RULES 4)
            assert p.paused and away and not seats, "stuck: nobody can act and no deadline"
            inp = Input(t, rng.choice(away), {"type": "reconnect"})
        elif presence and rng.random() < presence:
            kind = rng.choice(["disconnect", "disconnect", "reconnect", "leave"])
            inp = Input(t, rng.randrange(g.n), {"type": kind})
            if nd <= t or not g.apply(inp.t, inp.seat, inp.action).ok:
                continue
            inputs.append(inp)
            check(g, inp, inputs)
            continue
        elif not seats or rng.random() < 0.03 or t >= nd:
            inp = Input(max(t, nd) if rng.random() < 0.5 else t)
        else:
            seat = rng.choice(seats)
            inp = Input(t, seat, rng.choice(g.legal_actions(seat)))
        res = g.apply(inp.t, inp.seat, inp.action)
        assert res.ok, (inp, res)
        inputs.append(inp)
        check(g, inp, inputs)
    raise AssertionError("game did not terminate")


@pytest.mark.parametrize("seats", [2, 3, 4, 6])
def test_conservation_replay_and_refusals(seats: int) -> None:
    """Every step: 54 cards (1.1); a lockstep replay of the record agrees;
    random refused inputs change nothing; the game ends (1.8)."""
    rng = random.Random(seats)
    for n in range(40 if seats == 6 else 80):
        g = new_game(1000 * seats + n, seats)
        twin = new_game(1000 * seats + n, seats)

        def check(g: OneCard, inp: Input, inputs: list[Input], twin: OneCard = twin) -> None:
            assert cards_in_play(g) == FULL_DECK
            for s in range(g.n):
                if not g.alive[s]:
                    assert not g.hands[s]
            res = twin.apply(inp.t, inp.seat, inp.action)
            assert res.ok
            if g.finished or rng.random() < 0.2:
                assert twin.state() == g.state()
            if not g.finished and rng.random() < 0.2:
                t, seat, action = random_input(g, rng, g.now)
                before = snapshot(g)
                res = g.apply(t, seat, action)
                if res.ok:  # a random input that happened to be legal: keep both in step
                    inputs.append(Input(t, seat, action))
                    assert twin.apply(t, seat, action).ok
                else:
                    assert res.code and res.message
                    assert snapshot(g) == before, (t, seat, action, res.code)

        inputs = drive(g, rng, check, presence=0.02 if n % 2 else 0.0)
        assert g.finished and g.result()["ended_by"] in ("win", "last_player", "time_cap",
                                                          "abandoned")
        doc = json.loads(json.dumps(Record(g.setup, inputs).to_json()))
        again, results, _ = replay(record_from_json(doc))
        assert all(r["ok"] for r in results)
        assert again.state() == g.state()


def test_views_ignore_hidden_cards() -> None:
    """A seat's view (and its events) do not change when the cards hidden
    from it are shuffled (DESIGN.md 1: hidden information only via views)."""
    rng = random.Random(7)
    for n in range(200):
        seats = 2 + n % 5
        g = new_game(n, seats)

        def check(g: OneCard, inp: Input, inputs: list[Input]) -> None:
            if rng.random() < 0.85:
                return
            seat = rng.randrange(g.n)
            c = hidden_permuted(g, seat, rng)
            assert c.view(seat) == g.view(seat)
            assert c.view(None) == g.view(None)
            assert "hand" not in g.view(None)
            if g.finished or c.finished:
                return
            # the same next input yields the same events as that seat sees them
            acts = g.legal_actions(g.turn) if g.turn is not None else []
            if acts:
                a = rng.choice(acts)
                if a["type"] == "play" and seat != g.turn:
                    return  # the clone's turn player holds other cards
                e1 = [_mine(e.for_seat(seat), seat) for e in g.clone().apply(g.now, g.turn, a).events]
                e2 = [_mine(e.for_seat(seat), seat) for e in c.apply(g.now, g.turn, a).events]
                assert e1 == e2

        drive(g, rng, check)


def test_bot_and_empty_seats_and_45s() -> None:
    """Bots and empty seats (1.1, 4) and the 45 s option (1.9) in playouts."""
    rng = random.Random(3)
    for n in range(40):
        kinds = [rng.choice(["human", "bot", "empty"]) for _ in range(6)]
        kinds[0], kinds[3] = "human", "bot"
        g = new_game(n, 6, kinds, turn_ms=45000)
        assert g.state()["bot"] == [k == "bot" for k in kinds]

        def check(g: OneCard, inp: Input, inputs: list[Input], kinds: list[str] = kinds) -> None:
            assert cards_in_play(g) == FULL_DECK
            for s, k in enumerate(kinds):
                if k == "empty":
                    assert not g.hands[s] and g.turn != s and not g.legal_actions(s)

        drive(g, rng, check)
