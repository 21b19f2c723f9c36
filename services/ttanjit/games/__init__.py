"""Pure rules engines (DESIGN.md section 1) and the one game registry.

:data:`GAMES` lists every game once: its id, Korean label, engine class and
bot-policy module. Services, CLIs, metrics and the bots read it (iterate it
or test ``game in GAMES``); ``engine_class(id)`` imports an engine."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ttanjit.games.base import Engine


@dataclass(frozen=True, slots=True)
class Game:
    id: str
    label: str  # the Korean name players see
    engine: str  # "module:Class"
    bots: str  # the module of its bot policies (ttanjit.bots.decide)


GAMES: dict[str, Game] = {g.id: g for g in (
    Game("onecard", "원카드", "ttanjit.games.onecard:OneCard", "ttanjit.bots.onecard"),
    Game("penalty_rows", "줄줄이 벌점", "ttanjit.games.penalty_rows:PenaltyRows",
         "ttanjit.bots.penalty_rows"),
    Game("hakka", "하카 카드", "ttanjit.games.hakka:Hakka", "ttanjit.bots.hakka"),
)}
GAME_IDS: tuple[str, ...] = tuple(GAMES)


def game(game_id: str) -> Game:
    try:
        return GAMES[game_id]
    except KeyError:
        raise ValueError(f"unknown game {game_id!r}; known: {', '.join(GAMES)}") from None


def engine_class(game_id: str) -> type[Engine]:
    module, _, name = game(game_id).engine.partition(":")
    cls: type[Engine] = getattr(importlib.import_module(module), name)
    return cls
