"""줄줄이 벌점 room options, timings and refusal messages (DESIGN.md 3.1,
RULES.md 2.4-2.5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ttanjit.games.base import JSON

SELECT_MS_CHOICES = (20_000, 30_000, 45_000)
END_MODES = ("rounds", "score_66")
ROUNDS_CHOICES = (1, 3, 5)
TARGET = 66  # classic mode ends after a round in which anyone reached it
INTERMISSION_MS = 5_000  # RULES.md 2.4 Decision
CAP_MS = 45 * 60_000  # RULES.md 2.5: game-length cap (game time)
AUTOPILOT_AFTER = 3  # consecutive timeouts
OPTION_KEYS = {"seats", "select_ms", "end", "rounds", "absence_ms", "abandon_ms"}

MESSAGES: dict[str, str] = (
    {
        "card_not_in_hand": "그 카드는 손패에 없어요.",
        "bad_row": "줄은 1~4번 중에서 골라요.",
        "nothing_selected": "먼저 카드와 줄을 골라요.",
        "already_confirmed": "이미 확정했어요. 바꾸거나 취소할 수 없어요.",
        "already_selected": "이미 그 카드와 줄을 골랐어요.",
        "not_selecting": "지금은 카드를 고르는 시간이 아니에요.",
        "empty_seat": "빈자리예요.",
    }
)


def _choice(raw: JSON, key: str, default: Any, choices: tuple[Any, ...]) -> Any:
    value = raw.get(key, default)
    if type(value) is not type(default) or value not in choices:
        raise ValueError(f"penalty_rows: {key} must be one of {', '.join(map(str, choices))}")
    return value


@dataclass(frozen=True, slots=True)
class Options:
    select_ms: int = 20_000
    end: str = "rounds"
    rounds: int | None = 3  # None in classic 66

    @classmethod
    def from_json(cls, raw: JSON, seats: int) -> Options:
        """Raises ValueError on anything but the documented values."""
        unknown = set(raw) - OPTION_KEYS
        if unknown:
            raise ValueError(f"penalty_rows: unknown options {sorted(unknown)}")
        if not 2 <= seats <= 10:
            raise ValueError("penalty_rows: 2 to 10 seats")
        select_ms: int = _choice(raw, "select_ms", 20_000, SELECT_MS_CHOICES)
        end: str = _choice(raw, "end", "rounds", END_MODES)
        if end == "rounds":
            return cls(select_ms, end, _choice(raw, "rounds", 3, ROUNDS_CHOICES))
        if "rounds" in raw:
            raise ValueError("penalty_rows: rounds goes only with end=rounds")
        return cls(select_ms, end, None)
