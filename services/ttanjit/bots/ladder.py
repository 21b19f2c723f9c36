"""The ladder: bot levels against each other (and against random legal play)
through the engines directly — no NATS, no real pauses.

Every decision goes through the same path as in a live game: the seat's
``engine.view(seat)`` -> policy -> ``engine.apply``; a refused action is a bug
and stops the ladder. Time is virtual: a bot's action comes its thinking pause
(:mod:`ttanjit.bots.timing`) after the previous input, so One Card's
``[원카드!]`` presses race with the reaction delays the bots would have live.

A *matchup* is one level in the focal seat against a field of another level
(e.g. one hard against three normals), with the focal seat rotating; the
``mixed`` matchup seats several levels together, rotating their places.
Figures come with 95 % confidence intervals (Wilson for rates, normal
approximation for means).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ttanjit import bots
from ttanjit.bots import timing
from ttanjit.games import engine_class
from ttanjit.games.base import JSON, Engine, SeatSpec, Setup

DEFAULT_PAIRS: dict[str, list[tuple[str, str]]] = {
    g: [("hard", "normal"), ("normal", "easy"), ("easy", "random"), ("hard", "easy")]
    for g in bots.GAMES
}
MIXED = ("hard", "normal", "easy", "random")
MAX_INPUTS = 20_000


# -- statistics ---------------------------------------------------------------
def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def mean_ci(xs: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    n = len(xs)
    if n == 0:
        return (0.0, 0.0, 0.0)
    m = sum(xs) / n
    if n < 2:
        return (m, m, m)
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    h = z * math.sqrt(var / n)
    return (m, m - h, m + h)


# -- one game -------------------------------------------------------------------
@dataclass
class GameOutcome:
    levels: list[str]
    winners: list[int]
    values: list[float]  # per seat: 1/0 win (onecard), penalty, or score
    decisions: int
    decide_s: dict[str, list[float]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)  # the engine's (deals, void deals, …)


def _seat_spec(level: str) -> SeatSpec:
    return SeatSpec("bot", level if level in bots.LEVELS else "normal")


def _values(game: str, engine: Engine) -> tuple[list[int], list[float]]:
    st = engine.state()
    res = engine.result()
    winners = [int(w) for w in res.get("winners", [])]
    if game == "onecard":
        return winners, [1.0 if s in winners else 0.0 for s in range(engine.n)]
    if game == "penalty_rows":
        return winners, [float(x) for x in st["penalties"]]
    return winners, [float(x) for x in st["scores"]]


PRESENCE_ONLY = frozenset({"one_card", "resume"})


def actors(engine: Engine) -> list[int]:
    """Seats with a game decision to make now (a ``[원카드!]`` press or
    ``resume`` alone is not one)."""
    return [s for s in range(engine.n)
            if any(a["type"] not in PRESENCE_ONLY for a in engine.legal_actions(s))]


class _Presses:
    """One Card ``[원카드!]`` presses scheduled by the host (here, the ladder)."""

    def __init__(self) -> None:
        self.window: Any = None
        self.due: list[tuple[int, int]] = []  # (t, seat)

    def update(self, engine: Engine, levels: list[str], t: int, rng: random.Random) -> None:
        mod = bots.module("onecard")
        key = mod.window_key(engine.view(None))
        if key == self.window:
            return
        self.window = key
        self.due = []
        if key is None:
            return
        for seat, level in enumerate(levels):
            if level == "random":
                continue
            delay = bots.press_after_ms("onecard", level, seat, engine.view(seat), rng)
            if delay is not None:
                self.due.append((t + delay, seat))
        self.due.sort()

    def fire(self, engine: Engine, until: int) -> int:
        """Press every scheduled press due by ``until`` while its window is open."""
        mod = bots.module("onecard")
        fired = 0
        while self.due and self.due[0][0] <= until:
            tp, seat = self.due.pop(0)
            if mod.window_key(engine.view(None)) != self.window:
                self.due = []
                break
            if {"type": "one_card"} not in engine.legal_actions(seat):
                continue  # eliminated meanwhile
            res = engine.apply(max(tp, engine.now), seat, {"type": "one_card"})
            if not res.ok:
                raise RuntimeError(f"onecard: press refused: {res.code}")
            fired += 1
        return fired


def play_game(game: str, levels: list[str], seed: int, options: JSON | None = None,
              budget_ms: float | None = None, timed: bool = True,
              check_legal: bool = False) -> GameOutcome:
    """Play one bot-only game; ``levels[seat]`` plays each seat.

    ``check_legal``: also require every action to be one of the engine's
    ``legal_actions(seat)`` (not only accepted by ``apply``)."""
    opts = dict(options or {})
    opts["seats"] = len(levels)
    engine = engine_class(game)(Setup(game, opts, [_seat_spec(lv) for lv in levels], seed))
    rng = random.Random(seed ^ 0x5EED)
    presses = _Presses() if game == "onecard" else None
    decide_s: dict[str, list[float]] = {}
    t = 0
    decisions = 0
    for _ in range(MAX_INPUTS):
        if engine.finished:
            break
        acted = False
        for seat in actors(engine):
            if engine.finished:
                break
            level = levels[seat]
            if timed:
                t = max(t, engine.now) + timing.thinking_ms(
                    level if level in bots.LEVELS else "normal", rng)
            nd = engine.next_deadline()
            if nd is not None and nd <= t:
                t = max(nd - 1, engine.now)
            if presses is not None and presses.fire(engine, t):
                acted = True
                break  # a press changed hands: re-read who acts and what they see
            view = engine.view(seat)
            t0 = time.perf_counter()
            action = bots.decide(game, level, seat, view, rng, budget_ms)
            decide_s.setdefault(level, []).append(time.perf_counter() - t0)
            if action is None:
                continue
            if check_legal and action not in engine.legal_actions(seat):
                raise RuntimeError(f"{game}: {level} bot's action {action} is not among the "
                                   f"legal actions (seat {seat}, view {view})")
            res = engine.apply(max(t, engine.now), seat, action)
            if not res.ok:
                raise RuntimeError(f"{game}: {level} bot's action {action} refused: "
                                   f"{res.code} (seat {seat}, view {view})")
            decisions += 1
            acted = True
            if presses is not None:
                presses.update(engine, levels, engine.now, rng)
                break  # the turn moved on: re-read who acts
        if not acted and not engine.finished:
            if presses is not None and presses.due:
                presses.fire(engine, presses.due[-1][0])
                continue
            nd = engine.next_deadline()
            if nd is None:
                raise RuntimeError(f"{game}: stuck — no bot acts and no deadline")
            t = max(t, nd)
            engine.apply(t)
            if presses is not None:
                presses.update(engine, levels, engine.now, rng)
    else:
        raise RuntimeError(f"{game}: no end after {MAX_INPUTS} inputs")
    winners, values = _values(game, engine)
    return GameOutcome(levels, winners, values, decisions, decide_s,
                       dict(getattr(engine, "counters", {}) or {}))


# -- matchups ---------------------------------------------------------------------
@dataclass
class LevelStats:
    level: str
    games: int = 0
    wins: int = 0
    values: list[float] = field(default_factory=list)

    def to_json(self) -> JSON:
        lo, hi = wilson(self.wins, self.games)
        m, mlo, mhi = mean_ci(self.values)
        return {"level": self.level, "seats": self.games, "win_rate": _r(self.wins / max(1, self.games)),
                "win_ci": [_r(lo), _r(hi)], "mean": _r(m), "mean_ci": [_r(mlo), _r(mhi)]}


def _r(x: float) -> float:
    return round(x, 3)


@dataclass
class Matchup:
    game: str
    name: str
    seats: int
    games: int = 0
    stats: dict[str, LevelStats] = field(default_factory=dict)
    decide_s: dict[str, list[float]] = field(default_factory=dict)
    seconds: float = 0.0
    counters: dict[str, int] = field(default_factory=dict)  # summed over the games

    def add(self, out: GameOutcome) -> None:
        self.games += 1
        for k, v in out.counters.items():
            if isinstance(v, int):
                self.counters[k] = self.counters.get(k, 0) + v
        for seat, level in enumerate(out.levels):
            st = self.stats.setdefault(level, LevelStats(level))
            st.games += 1
            st.wins += seat in out.winners
            st.values.append(out.values[seat])
        for level, xs in out.decide_s.items():
            self.decide_s.setdefault(level, []).extend(xs)

    def to_json(self) -> JSON:
        return {"game": self.game, "matchup": self.name, "seats": self.seats,
                "games": self.games, "seconds": round(self.seconds, 1),
                "levels": [s.to_json() for s in self.stats.values()],
                "latency_ms": {lv: latency(xs) for lv, xs in self.decide_s.items()},
                **({"void_deals": self.void_share()} if "void_deals" in self.counters else {})}

    def void_share(self) -> float:
        """Hakka: the share of deals nobody called (RULES.md 3.3: dealt again)."""
        return _r(self.counters.get("void_deals", 0) / max(1, self.counters.get("deals", 0)))


def latency(xs: Sequence[float]) -> JSON:
    if not xs:
        return {}
    s = sorted(xs)

    def q(p: float) -> float:
        return round(s[min(len(s) - 1, int(p * len(s)))] * 1000, 2)

    return {"n": len(s), "p50": q(0.50), "p99": q(0.99), "max": round(s[-1] * 1000, 2)}


def run_matchup(game: str, lineup: Sequence[str], games: int, seed: int = 0,
                options: JSON | None = None, budget_ms: float | None = None,
                name: str | None = None, check_legal: bool = False,
                on_game: Callable[[], None] | None = None) -> Matchup:
    """Play ``games`` games of ``lineup`` (one level per seat), rotating seats;
    ``on_game`` is called after each."""
    k = len(lineup)
    m = Matchup(game, name or " ".join(lineup), k)
    start = time.perf_counter()
    for g in range(games):
        r = g % k
        levels = list(lineup[-r:]) + list(lineup[:-r]) if r else list(lineup)
        m.add(play_game(game, levels, seed * 1_000_003 + g, options, budget_ms,
                        check_legal=check_legal))
        if on_game is not None:
            on_game()
    m.seconds = time.perf_counter() - start
    return m


def focal(focus: str, field_level: str, seats: int) -> list[str]:
    return [focus] + [field_level] * (seats - 1)


def default_seats(game: str) -> int:
    return 4


def format_matchup(m: Matchup) -> str:
    unit = {"onecard": "win rate", "penalty_rows": "mean penalty", "hakka": "mean score"}[m.game]
    lines = [f"{m.game} · {m.name} · {m.games} games, {m.seats} seats ({m.seconds:.1f}s)"]
    for st in m.stats.values():
        d = st.to_json()
        per_seat = st.games
        if m.game == "onecard":
            fig = f"win {d['win_rate']:.3f} [{d['win_ci'][0]:.3f}, {d['win_ci'][1]:.3f}]"
            fig += f"  (even {1 / m.seats:.3f})"
        else:
            fig = (f"{unit} {d['mean']:.2f} [{d['mean_ci'][0]:.2f}, {d['mean_ci'][1]:.2f}]"
                   f"  win {d['win_rate']:.3f}")
        lines.append(f"  {st.level:<7} ({per_seat:>5} seat-games)  {fig}")
    if "void_deals" in m.counters:  # a deal everyone passed is dealt again: dull in a row
        lines.append(f"  void deals {m.counters['void_deals']} of {m.counters.get('deals', 0)}"
                     f" ({m.void_share():.1%})")
    lat = m.to_json()["latency_ms"]
    lines.append("  decision ms: " + "  ".join(
        f"{lv} p50 {v['p50']} p99 {v['p99']}" for lv, v in lat.items() if v))
    return "\n".join(lines)


# -- command line (``ttanjit ladder``) ------------------------------------------------
def parse_pairs(raw: str | None, game: str) -> list[tuple[str, str]]:
    """``"hard:normal,normal:easy"`` -> [(focus, field), ...]."""
    if not raw:
        return DEFAULT_PAIRS[game]
    out = []
    for part in raw.split(","):
        focus, _, field_level = part.partition(":")
        for lv in (focus, field_level):
            if lv not in bots.ALL_LEVELS:
                raise ValueError(f"unknown level {lv!r}; known: {', '.join(bots.ALL_LEVELS)}")
        out.append((focus, field_level))
    return out


def run_ladder(game: str, games: int, seats: int | None = None, pairs: str | None = None,
               mixed: bool = True, budget_ms: float | None = None, seed: int = 0,
               options: JSON | None = None, echo: bool = True,
               on_game: Callable[[], None] | None = None) -> list[JSON]:
    """Every matchup of the ladder for one game; prints the tables as it goes
    (``on_game``: called after each game, for a progress line)."""
    k = seats or default_seats(game)
    out = []
    lineups = [(f"{f} vs {k - 1}×{g}", focal(f, g, k)) for f, g in parse_pairs(pairs, game)]
    if mixed:
        lineup = [MIXED[i % len(MIXED)] for i in range(k)]
        lineups.append(("mixed " + "/".join(lineup), lineup))
    for name, lineup in lineups:
        m = run_matchup(game, lineup, games, seed, options, budget_ms, name, on_game=on_game)
        if echo:
            print(format_matchup(m), flush=True)
        out.append(m.to_json())
    return out
