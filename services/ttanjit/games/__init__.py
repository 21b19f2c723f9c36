"""Pure rules engines (DESIGN.md section 1). ``engine_class(name)`` finds one."""

from __future__ import annotations

import importlib

from ttanjit.games.base import Engine

GAMES: dict[str, str] = {
    "onecard": "ttanjit.games.onecard:OneCard",
    "penalty_rows": "ttanjit.games.penalty_rows:PenaltyRows",
    "hakka": "ttanjit.games.hakka:Hakka",
}


def engine_class(game: str) -> type[Engine]:
    try:
        target = GAMES[game]
    except KeyError:
        raise ValueError(f"unknown game {game!r}; known: {', '.join(GAMES)}") from None
    module, _, name = target.partition(":")
    cls: type[Engine] = getattr(importlib.import_module(module), name)
    return cls
