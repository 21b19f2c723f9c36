"""Games, table sizes and room options (RULES.md 1.9, 2.4, 2.5, 3.1;
DESIGN.md 3.1 option names). Pure validation."""

from __future__ import annotations

from typing import Any

from ttanjit.matchmaker.errors import LobbyError

# game -> (min seats, max seats, default seats)
SEATS: dict[str, tuple[int, int, int]] = {
    "onecard": (2, 6, 4),
    "penalty_rows": (2, 10, 5),
    "hakka": (4, 4, 4),
}

# game -> option -> allowed values (the first is the default)
CHOICES: dict[str, dict[str, tuple[Any, ...]]] = {
    "onecard": {"turn_ms": (30000, 45000)},
    "penalty_rows": {
        "select_ms": (20000, 30000, 45000),
        "end": ("rounds", "score_66"),
        "rounds": (3, 1, 5),
    },
    "hakka": {},
}

# Quick games play the defaults of a new room (seed 002: "빠른 판수(새 방의 기본)
# ... 기본 3판"); a game may override some here.
QUICK_OVERRIDES: dict[str, dict[str, Any]] = {}

BOT_LEVELS = ("easy", "normal", "hard")

# Test-only options, accepted only when the matchmaker runs with test options
# on (TTANJIT_TEST_OPTIONS=1): the 60 s absence rule and the 10 min
# abandonment shortened (base.py), and ``seed`` (the deal's seed, passed to
# CreateGame, never an engine option) so the load tester's replays deal the
# same cards (docs/capacity.md).
TEST_OPTIONS = ("absence_ms", "abandon_ms", "seed")

# Table options that are not the engine's (every game): ``spectators`` — may
# people watch from the lobby's 관전 list (issue 15; the host turns it off).
# Absent means on. The shard keeps it out of the engine's options, in the
# record header and the game directory entry (docs/websocket.md 3.5).
TABLE_OPTIONS: dict[str, tuple[Any, ...]] = {"spectators": (True, False)}


def check_game(game: str) -> None:
    if game not in SEATS:
        raise LobbyError("unknown_game")


def check_seats(game: str, seats: int | None) -> int:
    check_game(game)
    lo, hi, default = SEATS[game]
    if seats is None or seats == 0:
        return default
    if not isinstance(seats, int) or isinstance(seats, bool) or not lo <= seats <= hi:
        raise LobbyError("bad_seats")
    return seats


def defaults(game: str, quick: bool = False) -> dict[str, Any]:
    check_game(game)
    out = {k: v[0] for k, v in CHOICES[game].items()}
    if quick:
        out.update(QUICK_OVERRIDES.get(game, {}))
    return out


def merge_options(game: str, current: dict[str, Any], changes: Any,
                  allow_test: bool = False) -> dict[str, Any]:
    """``current`` updated with ``changes``; raises ``bad_option``."""
    if changes is None:
        return dict(current)
    if not isinstance(changes, dict):
        raise LobbyError("bad_option")
    out = dict(current)
    for key, value in changes.items():
        if key in CHOICES[game]:
            allowed = CHOICES[game][key]
            if isinstance(value, float) and value.is_integer():
                value = int(value)  # protobuf Struct numbers arrive as floats
            if isinstance(value, bool) or value not in allowed:
                raise LobbyError("bad_option")
            out[key] = value
        elif key in TABLE_OPTIONS:
            if value not in TABLE_OPTIONS[key] or not isinstance(value, bool):
                raise LobbyError("bad_option")
            out[key] = value
        elif allow_test and key in TEST_OPTIONS:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            low = 0 if key == "seed" else 1000
            if not isinstance(value, int) or isinstance(value, bool) or not \
                    low <= value < 2**63:
                raise LobbyError("bad_option")
            out[key] = value
        else:
            raise LobbyError("bad_option")
    if game == "penalty_rows":  # the badge: rounds go only with the rounds mode
        if out.get("end") == "score_66":
            out.pop("rounds", None)
        else:
            out.setdefault("rounds", CHOICES[game]["rounds"][0])
    check_engine(game, {k: v for k, v in out.items()  # seed: CreateGame's
                        if k != "seed" and k not in TABLE_OPTIONS})
    return out


def check_engine(game: str, options: dict[str, Any]) -> None:
    """The engine itself accepts these options (pure, no I/O)."""
    from ttanjit.games import engine_class
    from ttanjit.games.base import SeatSpec, Setup

    n = SEATS[game][0] if game != "hakka" else 4
    try:
        engine_class(game)(Setup(game, {**options, "seats": n}, [SeatSpec()] * n, 1))
    except (ValueError, TypeError, KeyError):
        raise LobbyError("bad_option") from None


def bot_level_for(ordinal: float) -> str:
    """Backfill bots roughly as strong as the player (ordinal = mu - 3 sigma)."""
    if ordinal < 3:
        return "easy" if ordinal < -3 else "normal"
    return "hard" if ordinal > 12 else "normal"
