"""The game record ``ttanjit.record/1`` (DESIGN.md 3.1): config + seed + the
timed input log. A game *is* its record: the shard writes it ahead, a new
owner replays it, ``ttanjit replay`` re-runs it, tests are written in it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ttanjit.games.base import JSON, RULES_REVISION, Engine, SeatSpec, Setup

FORMAT = "ttanjit.record/1"


class RecordError(ValueError):
    """A record that is not a valid ``ttanjit.record/1`` document."""


@dataclass(slots=True)
class Input:
    t: int
    seat: int | None = None
    action: JSON | None = None

    def to_json(self) -> JSON:
        out: JSON = {"t": self.t}
        if self.seat is not None:
            out["seat"] = self.seat
            out["action"] = self.action
        return out


@dataclass(slots=True)
class Record:
    setup: Setup
    inputs: list[Input] = field(default_factory=list)

    @property
    def game(self) -> str:
        return self.setup.game

    def to_json(self) -> JSON:
        s = self.setup
        out: JSON = {
            "format": FORMAT,
            "game": s.game,
            "options": s.options,
            "seats": [x.to_json() for x in s.seats],
            "seed": s.seed,
        }
        if s.decks is not None:
            out["decks"] = s.decks
        if s.first_player is not None:
            out["first_player"] = s.first_player
        if s.dealer is not None:
            out["dealer"] = s.dealer
        if s.rules != 1:
            out["rules"] = s.rules
        out["inputs"] = [i.to_json() for i in self.inputs]
        return out

    def header_json(self) -> JSON:
        out = self.to_json()
        del out["inputs"]
        return out

    def engine(self) -> Engine:
        from ttanjit.games import engine_class

        return engine_class(self.setup.game)(self.setup)


def _int(obj: Any, what: str) -> int:
    if not isinstance(obj, int) or isinstance(obj, bool):
        raise RecordError(f"{what} must be an integer")
    return obj


def setup_from_json(doc: Any) -> Setup:
    if not isinstance(doc, dict):
        raise RecordError("a record is a JSON object")
    if doc.get("format", FORMAT) != FORMAT:
        raise RecordError(f"format must be {FORMAT!r}, not {doc.get('format')!r}")
    game = doc.get("game")
    from ttanjit.games import GAMES

    if game not in GAMES:
        raise RecordError(f"game must be one of {', '.join(GAMES)}, not {game!r}")
    options = doc.get("options", {})
    if not isinstance(options, dict):
        raise RecordError("options must be an object")
    seats_raw = doc.get("seats")
    if seats_raw is None:
        n = options.get("seats", 4)
        seats_raw = [{"kind": "human"}] * _int(n, "options.seats")
    if not isinstance(seats_raw, list):
        raise RecordError("seats must be a list")
    try:
        seats = [SeatSpec.from_json(s) for s in seats_raw]
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    if "seats" in options and options["seats"] != len(seats):
        raise RecordError("options.seats and the seats list disagree")
    seed = _int(doc.get("seed", 0), "seed")
    decks = doc.get("decks")
    if decks is not None:
        if not isinstance(decks, list) or not all(
            isinstance(d, list) and all(isinstance(c, (str, int)) for c in d) for d in decks
        ):
            raise RecordError("decks must be a list of card lists")
    fp = doc.get("first_player")
    if fp is not None:
        fp = _int(fp, "first_player")
    dealer = doc.get("dealer")
    if dealer is not None:
        dealer = _int(dealer, "dealer")
    rules = _int(doc.get("rules", 1), "rules")
    if not 1 <= rules <= RULES_REVISION:
        # a newer release's record: replayed by this one's rules it could
        # refuse its own inputs (the game waits for a shard of that release)
        raise RecordError(f"rules must be 1 to {RULES_REVISION} (a newer release's record), "
                          f"not {rules}")
    return Setup(game, dict(options), seats, seed, decks, fp, dealer, rules)


def input_from_json(obj: Any, i: int = 0) -> Input:
    if not isinstance(obj, dict):
        raise RecordError(f"inputs[{i}] must be an object")
    t = _int(obj.get("t"), f"inputs[{i}].t")
    seat = obj.get("seat")
    action = obj.get("action")
    if seat is None and action is None:
        return Input(t)
    if seat is None or action is None:
        raise RecordError(f"inputs[{i}]: seat and action go together")
    return Input(t, _int(seat, f"inputs[{i}].seat"), action)


def record_from_json(doc: Any) -> Record:
    setup = setup_from_json(doc)
    raw = doc.get("inputs", [])
    if not isinstance(raw, list):
        raise RecordError("inputs must be a list")
    inputs = [input_from_json(x, i) for i, x in enumerate(raw)]
    for i in range(1, len(inputs)):
        if inputs[i].t < inputs[i - 1].t:
            raise RecordError(f"inputs[{i}].t goes back in time")
    return Record(setup, inputs)


def load(path: str) -> Record:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path} is not JSON: {exc}") from None
    return record_from_json(doc)


def replay(record: Record) -> tuple[Engine, list[JSON], list[JSON]]:
    """Run a record: (engine, results, omniscient events)."""
    try:
        engine = record.engine()
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    results: list[JSON] = []
    events: list[JSON] = []
    for inp in record.inputs:
        res = engine.apply(inp.t, inp.seat, inp.action)
        results.append(res.to_json())
        events.extend(e.omniscient() for e in res.events)
    return engine, results, events
