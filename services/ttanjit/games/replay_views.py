"""A finished game's record as the steps of a replay viewer (issue 15):
the record is re-run through its engine exactly as ``ttanjit replay`` does
(:func:`ttanjit.games.record.replay`: ``record.engine()`` then
``engine.apply`` of every input, in order) and after each input that changed
something the seat's own view is kept. No second rules engine: the web
client draws these views with the live table screens.

What a replay reveals: a seat's view is what that seat saw live. The
viewer of a finished game may switch to any seat's view (every hand, each as
its owner saw it); nothing beyond the seats' views is shown — cards no seat
ever saw (the rest of the draw pile, a card dealt face down to nobody) stay
hidden, in the spirit of the seed pages. A game still in play replays from
its record so far, from the player's own seat only (the gateway's route
refuses another seat until the end), with no result — and when a bot has
taken that seat for good (the player left, or was away 60 s: RULES.md 4),
only up to then: the bot's hand and draws stay hidden from the player until
the game is over, as they are live (the shard sends such a player the
spectator's share).
"""

from __future__ import annotations

from typing import Any

from ttanjit.games.base import JSON
from ttanjit.games.record import Record, RecordError

MARK_KEYS = ("round", "deal")  # a new value starts a round/hand (penalty rows, Hakka)


def seat_steps(record: Record, seat: int) -> JSON:
    """``{"game", "seat", "seats", "steps": [{"i", "t", "kinds", "events", "view", "mark"?}],
    "marks": [step index…], "result", "finished"}``. ``i`` is the input's
    index in the record (-1: the deal before any input); ``events`` are the
    input's events as the seat got them live (``Event.for_seat``), ``kinds``
    their types. The record of a game still in play gives its steps so far,
    ``finished`` false and ``result`` None."""
    if not 0 <= seat < len(record.setup.seats):
        raise RecordError(f"no seat {seat}")
    try:
        engine = record.engine()
    except ValueError as exc:
        raise RecordError(str(exc)) from None
    steps: list[JSON] = [{"i": -1, "t": 0, "kinds": ["dealt"], "events": [], "view": engine.view(seat)}]
    marks: list[int] = [0]
    last_mark = _mark(steps[0]["view"])
    gone = None  # steps up to the one where a bot took the seat for good
    for n, inp in enumerate(record.inputs):
        res = engine.apply(inp.t, inp.seat, inp.action)
        if not res.events:
            continue
        view = engine.view(seat)
        events = [e.for_seat(seat) for e in res.events]
        step: JSON = {"i": n, "t": inp.t, "view": view, "events": events,
                      "kinds": [str(e.get("type")) for e in events]}
        mark = _mark(view)
        if mark != last_mark:
            step["mark"] = mark
            marks.append(len(steps))
            last_mark = mark
        steps.append(step)
        if gone is None and engine.presence.substituted[seat]:
            gone = len(steps)
    # A live game (its record so far, e.g. the caller's own game still in
    # play): the steps up to now, ``finished: false`` and no result — an
    # engine's ``result()`` is the finished game's outcome (One Card's
    # refuses a live game; the others' would tell its counters early).
    finished = bool(engine.finished)
    if not finished and gone is not None:  # module docstring: not the bot's cards
        steps = steps[:gone]
        marks = [m for m in marks if m < gone]
    return {"game": record.game, "seat": seat, "seats": [s.to_json() for s in record.setup.seats],
            "steps": steps, "marks": marks, "result": engine.result() if finished else None,
            "finished": finished}


def _mark(view: dict[str, Any]) -> Any:
    for k in MARK_KEYS:
        if k in view:
            return view[k]
    return None
