"""Bot policies (issue 4; RULES.md section 4): legal play at every level,
hard bots that cannot peek, deterministic timing."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from ttanjit import bots
from ttanjit.bots import ladder, timing
from ttanjit.games import engine_class
from ttanjit.games.base import Engine, SeatSpec, Setup
from ttanjit.games.hakka_patterns import sort_cards

GAMES = ["onecard", "penalty_rows", "hakka"]


@pytest.mark.parametrize("game", GAMES)
def test_easy_normal_random_play_only_legal_moves(game: str) -> None:
    """RULES.md 4: bots act through the same validation as humans — every
    action of every level is among the engine's legal actions and accepted,
    over many whole games with the levels mixed."""
    lineups = [["easy", "normal", "random", "easy"], ["normal", "normal", "easy", "random"]]
    for g in range(60):
        out = ladder.play_game(game, lineups[g % 2], seed=1000 + g, check_legal=True)
        assert out.decisions > 0
        if game == "onecard":
            assert len(out.winners) <= 1


@pytest.mark.parametrize("seats", [2, 3, 6])
def test_onecard_other_table_sizes(seats: int) -> None:
    """RULES.md 1.1: 2-6 seats; bots play every size legally."""
    levels = (["hard", "normal", "easy"] * 2)[:seats]
    for g in range(2):
        ladder.play_game("onecard", levels, seed=g, budget_ms=3, check_legal=True)


def test_penalty_rows_ten_seats_and_classic_66() -> None:
    """RULES.md 2.1/2.4: up to 10 seats; the classic 66 mode."""
    levels = ["easy", "normal", "hard", "random"] * 2 + ["normal", "easy"]
    ladder.play_game("penalty_rows", levels, seed=3, budget_ms=3, check_legal=True,
                     options={"end": "score_66"})


@pytest.mark.parametrize("game", GAMES)
def test_hard_plays_only_legal_moves(game: str) -> None:
    """RULES.md 4: the hard search proposes only legal actions (small budget)."""
    for g in range(4):
        ladder.play_game(game, ["hard", "normal", "hard", "easy"], seed=2000 + g,
                         budget_ms=3, check_legal=True)


# -- cannot peek ------------------------------------------------------------------
def _permute_hidden(game: str, e: Engine, seat: int, rng: random.Random) -> Engine:
    """A copy of ``e`` in which every card ``seat`` cannot see is reshuffled
    among the places it cannot see (other hands, draw pile / unused cards),
    keeping every count."""
    c: Any = e.clone()
    others = [s for s in range(c.n) if s != seat]
    if game == "onecard":
        pool = [x for s in others for x in c.hands[s]] + list(c.pile)
    elif game == "penalty_rows":
        pool = [x for s in others for x in c.hands[s]] + list(c.unused)
    else:
        pool = [x for s in others for x in c.hands[s]]
    rng.shuffle(pool)
    k = 0
    for s in others:
        n = len(c.hands[s])
        part = pool[k:k + n]
        k += n
        c.hands[s] = sort_cards(part) if game == "hakka" else (
            sorted(part) if game == "penalty_rows" else part)
    if game == "onecard":
        c.pile = pool[k:]
    elif game == "penalty_rows":
        c.unused = pool[k:]
    assert isinstance(c, Engine)
    return c


def _decision_points(game: str, seed: int, count: int) -> list[tuple[Engine, int]]:
    """Positions (engine, seat) where ``seat`` has at least two choices,
    reached by normal bots playing a game."""
    n = 4
    e = engine_class(game)(Setup(game, {"seats": n}, [SeatSpec("bot", "normal")] * n, seed))
    rng = random.Random(seed)
    out: list[tuple[Engine, int]] = []
    t = 0
    for _ in range(400):
        if e.finished or len(out) >= count:
            break
        seats = ladder.actors(e)
        if not seats:
            nd = e.next_deadline()
            assert nd is not None
            t = max(t, nd)
            e.apply(t)
            continue
        seat = seats[0]
        acts = [a for a in e.legal_actions(seat) if a["type"] not in ("one_card", "resume")]
        if len(acts) >= 2 and rng.random() < 0.3:
            out.append((e.clone(), seat))
        action = bots.decide(game, "normal", seat, e.view(seat), rng)
        assert action is not None
        t += 1000
        assert e.apply(t, seat, action).ok
    return out


@pytest.mark.parametrize("game", GAMES)
def test_hard_cannot_peek(game: str) -> None:
    """RULES.md 4 / DESIGN.md 1: a bot sees exactly its seat's view. Two
    engines that differ only in the cards this seat cannot see give the same
    view, and the hard bot (same rng seed) the same decision."""
    rng = random.Random(7)
    checked = differed = 0
    for seed in range(6):
        for e, seat in _decision_points(game, seed, 3):
            other = _permute_hidden(game, e, seat, rng)
            assert other.view(seat) == e.view(seat)
            differed += other.state()["hands"] != e.state()["hands"]
            a = bots.decide(game, "hard", seat, e.view(seat), 99, budget_ms=60_000, samples=6)
            b = bots.decide(game, "hard", seat, other.view(seat), 99, budget_ms=60_000,
                            samples=6)
            assert a == b
            assert a in e.legal_actions(seat) and a in other.legal_actions(seat)
            checked += 1
    assert checked >= 6 and differed >= checked // 2


def test_policy_input_is_the_view_only() -> None:
    """The decision is a function of (view, rng seed): a JSON round trip of the
    view (what travels over NATS) gives the same answer."""
    import orjson

    for game in GAMES:
        for e, seat in _decision_points(game, 11, 2):
            view = e.view(seat)
            wire = orjson.loads(orjson.dumps(view))
            for level in bots.LEVELS:
                assert bots.decide(game, level, seat, view, 5, 60_000, samples=3) == \
                    bots.decide(game, level, seat, wire, 5, 60_000, samples=3)


def test_no_decision_off_turn() -> None:
    """A seat with nothing to do gets ``None``."""
    e = engine_class("onecard")(Setup("onecard", {"seats": 3}, [SeatSpec("bot")] * 3, 1))
    off = [s for s in range(3) if s != e.state()["turn"]][0]
    for level in bots.LEVELS:
        assert bots.decide("onecard", level, off, e.view(off), 1) is None


# -- timing (RULES.md 4) -----------------------------------------------------------
def test_thinking_pause_ranges_and_determinism() -> None:
    """RULES.md 4: thinking pauses within 600-1,800 ms; same seed, same pause."""
    for level in bots.LEVELS:
        xs = [timing.thinking_ms(level, s) for s in range(500)]
        assert all(600 <= x <= 1800 for x in xs)
        assert xs == [timing.thinking_ms(level, s) for s in range(500)]
    with pytest.raises(ValueError):
        timing.thinking_ms("expert", 1)


def test_press_delays_by_level() -> None:
    """RULES.md 4 Decision: easy 1,500-2,500 ms and misses 30 %, normal
    700-1,500, hard 250-600; bots press before a 3,000 ms window closes."""
    ranges = {"easy": (1500, 2500), "normal": (700, 1500), "hard": (250, 600)}
    for level, (lo, hi) in ranges.items():
        xs = [timing.press_delay_ms(level, s) for s in range(2000)]
        pressed = [x for x in xs if x is not None]
        assert all(lo <= x <= hi for x in pressed)
        missed = 1 - len(pressed) / len(xs)
        if level == "easy":
            assert 0.25 < missed < 0.35
        else:
            assert missed == 0


def test_press_policy_follows_the_window() -> None:
    """RULES.md 1.7: bots press only while a window is open (never a false
    call); the holder and the others alike."""
    e: Any = engine_class("onecard")(Setup("onecard", {"seats": 3}, [SeatSpec("bot")] * 3, 4))
    for s in range(3):
        assert bots.press_after_ms("onecard", "hard", s, e.view(s), 1) is None
    e.window_holder, e.window_closes = 1, 3000
    for s in range(3):
        d = bots.press_after_ms("onecard", "hard", s, e.view(s), 1)
        assert d is not None and 250 <= d <= 600
    assert bots.press_after_ms("penalty_rows", "hard", 0, {}, 1) is None


# -- the ladder ---------------------------------------------------------------------
def test_ladder_cli_prints_tables_with_confidence_intervals(capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    """``ttanjit ladder``: levels against each other and random play, 95 % CIs."""
    import json

    from ttanjit.cli import main

    assert main(["ladder", "--game", "hakka", "--games", "6", "--pairs",
                 "normal:easy,easy:random", "--no-mixed", "--json"]) == 0
    tables = json.loads(capsys.readouterr().out)
    assert [t["matchup"] for t in tables] == ["normal vs 3×easy", "easy vs 3×random"]
    for t in tables:
        assert t["games"] == 6 and t["seats"] == 4
        assert 0 <= t["void_deals"] <= 1  # Hakka: the share of deals nobody called
        for lv in t["levels"]:
            assert lv["mean_ci"][0] <= lv["mean"] <= lv["mean_ci"][1]
            assert 0 <= lv["win_ci"][0] <= lv["win_rate"] <= lv["win_ci"][1] <= 1
    assert main(["ladder", "--game", "hakka", "--games", "2", "--pairs", "normal:easy", "--no-mixed"]) == 0
    assert re.search(r"void deals \d+ of \d+ \(\d+\.\d%\)", capsys.readouterr().out)
    assert main(["ladder", "--game", "penalty_rows", "--games", "2", "--seats", "3",
                 "--budget-ms", "3", "--options", "{\"rounds\": 1}"]) == 0
    assert "mixed hard/normal/easy" in capsys.readouterr().out
    assert main(["ladder", "--game", "onecard", "--games", "1", "--pairs", "best:easy"]) == 2
    assert main(["ladder", "--game", "hakka", "--games", "1", "--seats", "5"]) == 2


def test_confidence_intervals() -> None:
    lo, hi = ladder.wilson(40, 100)
    assert 0.30 < lo < 0.31 and 0.49 < hi < 0.50
    assert ladder.wilson(0, 0) == (0.0, 1.0)
    m, lo2, hi2 = ladder.mean_ci([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and lo2 < 2.5 < hi2 and abs((hi2 - m) - 1.96 * (1.29099 / 2)) < 1e-3


# -- what the bots rebuild from a view --------------------------------------------------
def _game_actions(acts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted((a for a in acts if a["type"] not in ("one_card", "resume")), key=repr)


@pytest.mark.parametrize("game", GAMES)
def test_legal_actions_from_the_view_match_the_engine(game: str) -> None:
    """The bots compute legal actions from the view alone; they must be the
    engine's own (so no level ever proposes what the engine refuses)."""
    for seed in range(4):
        for e, seat in _decision_points(game, 100 + seed, 8):
            mine = bots.module(game).legal(seat, e.view(seat))
            assert _game_actions(mine) == _game_actions(e.legal_actions(seat))


@pytest.mark.parametrize("game", ["onecard", "hakka"])
def test_determinised_engine_shows_the_same_view(game: str) -> None:
    """The hard searches rebuild an engine from the view plus sampled hidden
    cards; seen from the searching seat it must be the very same game."""
    from ttanjit.bots import hakka_search, onecard_search

    search: Any = onecard_search if game == "onecard" else hakka_search
    keys = {"onecard": ("turn", "direction", "top", "suit", "pending", "twos_only", "hand_counts",
                        "discard", "can_draw", "eliminated", "hand"),
            "hakka": ("phase", "round", "dealer", "dreamer", "privileged", "turn", "leader",
                      "hand_counts", "table", "best", "played", "discard_counts", "elders",
                      "tricks", "scores", "hand", "my_discards")}[game]
    rng = random.Random(3)
    for seed in range(4):
        for e, seat in _decision_points(game, 200 + seed, 6):
            view = e.view(seat)
            det = search.determinise(seat, view, rng)
            got = det.view(seat)
            for k in keys:
                assert got[k] == view[k], k
            assert _game_actions(det.legal_actions(seat)) == _game_actions(e.legal_actions(seat))
