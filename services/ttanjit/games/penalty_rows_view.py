"""What a seat (or a spectator) may see of a 줄줄이 벌점 game, and the
omniscient state for the record.

Public: rows with each card's penalty, who has confirmed (never what), hand
sizes, the taken piles (face up, seed: "받은 카드는 엎어 두지 않고"), scores,
the shared deadline, the last reveal, the end-mode badge. A seat adds its own
hand and its own current selection with a placement preview against the rows
as they are now ("how it would land"); nothing says which row is best.

``view(seat)`` = ``{**public_view(), **private_view(seat)}``; ``view(None)``
is the public part with ``seat`` None.

- The common fields of every game (:mod:`ttanjit.games.base`): ``game``,
  ``seat``, ``n``, ``seats`` (``{seat, kind, bot, substituted, autopilot,
  connected}`` by seat), ``hand_counts``, ``turn`` (always None: every
  seat chooses at once; the turn of the round is ``turn_no``), ``deadline``
  (real ``t``), ``turn_key``, ``paused``, ``finished``, ``winners``, ``ended_by``.
- 줄줄이 벌점's own public fields: ``phase``, ``round``, ``rounds``,
  ``turn_no`` (the turn of the round now chosen, 1–10, as the events' and
  the state's ``turn``), ``turns_per_round``, ``badge``, ``select_ms``, ``rows`` (``{row, cards:
  [{card, penalty}], count, end, penalty}``), ``confirmed`` by seat,
  ``remaining_ms``, ``penalties``, ``round_penalties``, ``taken``,
  ``last_reveal`` (the last turn's placements, as its ``placed`` events,
  each with ``timeout``: the game picked it at the deadline).
- Private (:func:`private_view`): ``seat``, ``hand`` (``[{card,
  penalty}]``), ``selection`` (``{card, row, confirmed, label, preview}`` or
  None), ``timeouts`` (the seat's timeouts in a row).
- Events (RULES.md 2; a client author read One Card's only: docs audit):
  ``round_started`` {round, rows (the four rows' cards)} with the seat's
  own ``hand`` in ``private[seat]``; ``turn_started`` {round, turn,
  deadline (real ``t``), select_ms}; ``confirmed`` {seat} — the seat's own
  adds {card, row} (``private[seat]``: nobody else learns the pick before
  the reveal); ``timed_out`` {seats} (the game picked for them, 2.5);
  ``revealed`` {round, turn, picks: [{seat, card, row, timeout}]} in
  placing order (lowest card first); then one ``placed`` per pick {seat,
  card, row, outcome (``append`` | ``sixth_card`` | ``row_end_higher``),
  position, cards (how many taken, 0 for ``append``), taken?, penalty,
  row_cards (the row after it), total (the seat's game penalty now)};
  ``round_ended`` {round, round_penalties, penalties, last, next_round_at};
  ``autopilot`` {seat, on, reason (``timeouts`` | ``resume``)};
  ``game_ended`` {ended_by (``rounds`` | ``score_66`` | ``time_cap`` |
  ``abandoned``), winners, penalties} — every game's game-over event;
  ``time_cap`` {cap_ms} before it when the game ran too long; presence
  ``disconnected``/``reconnected``/``substituted`` (base).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ttanjit.games.base import JSON, seats_view
from ttanjit.games.penalty_rows_cards import HAND, PENALTY, placement, row_penalty

if TYPE_CHECKING:
    from ttanjit.games.penalty_rows import PenaltyRows


def _cards(cards: list[int]) -> list[JSON]:
    return [{"card": c, "penalty": PENALTY[c]} for c in cards]


def badge(e: PenaltyRows) -> JSON:
    """RULES.md 2.4: the end mode, shown as a badge on the room."""
    if e.end == "rounds":
        return {"end": "rounds", "rounds": e.rounds, "label": f"빠른 판수 · {e.rounds}판"}
    return {"end": "score_66", "target": 66, "label": "기본 66점"}


def public_view(e: PenaltyRows) -> JSON:
    p = e.presence
    gt = p.game_time(e.now)
    deadline = None if e.deadline_gt is None else p.real_time(e.deadline_gt)
    remaining = None if e.deadline_gt is None else max(0, e.deadline_gt - gt)
    return {
        "game": e.GAME,
        "n": e.n,
        "seats": seats_view(e.setup.seats, p, e.bot_seats(), e.autopilot),
        "phase": e.phase,
        "round": e.round,
        "rounds": e.rounds,
        "turn": None,  # whose turn: nobody's, every seat chooses at once
        "turn_no": e.turn,
        "turns_per_round": HAND,
        "badge": badge(e),
        "select_ms": e.select_ms,
        "rows": [
            {"row": i + 1, "cards": _cards(r), "count": len(r), "end": r[-1],
             "penalty": row_penalty(r)}
            for i, r in enumerate(e.rows)
        ],
        "confirmed": list(e.confirmed),
        "hand_counts": [len(h) for h in e.hands],
        "deadline": deadline,
        "turn_key": e.deadline_gt,
        "remaining_ms": remaining,
        "paused": p.paused,
        "penalties": list(e.penalties),
        "round_penalties": list(e.round_penalties),
        "taken": [list(x) for x in e.taken],
        "last_reveal": [dict(x) for x in e.last_reveal],
        "finished": e.finished,
        "winners": list(e.winners),
        "ended_by": e.ended_by,
    }


def selection_view(e: PenaltyRows, seat: int) -> JSON | None:
    sel = e.selection[seat]
    if sel is None:
        return None
    card, row = sel
    return {
        "card": card,
        "row": row,
        "confirmed": e.confirmed[seat],
        "label": f"{card} → {row}번 줄 확정",
        "preview": placement(e.rows[row - 1], card).to_json(),
    }


def private_view(e: PenaltyRows, seat: int) -> JSON:
    """What a seat's view adds to :func:`public_view`: its hand, its own
    selection with the placement preview, its timeout count, and that a
    ``confirm`` may carry the pick (``confirm_with_pick``: a shard of an
    older release confirmed the selection it held and ignored the pick — a
    client sends the pick with a 확정 only where the view says so)."""
    return {
        "seat": seat,
        "hand": _cards(e.hands[seat]),
        "selection": selection_view(e, seat),
        "timeouts": e.timeouts[seat],
        "confirm_with_pick": True,
    }


def omniscient_state(e: PenaltyRows) -> JSON:
    """The whole truth (DESIGN.md 3.1 field names) — for replay and tests only."""
    p = e.presence
    return {
        "game": e.GAME,
        "phase": e.phase,
        "round": e.round,
        "turn": e.turn,
        "rows": [list(r) for r in e.rows],
        "hands": [list(h) for h in e.hands],
        "taken": [list(x) for x in e.taken],
        "unused": list(e.unused),
        "penalties": list(e.penalties),
        "round_penalties": list(e.round_penalties),
        "selections": [None if x is None else {"card": x[0], "row": x[1]} for x in e.selection],
        "confirmed": list(e.confirmed),
        "timeouts": list(e.timeouts),
        "deadline": None if e.deadline_gt is None else p.real_time(e.deadline_gt),
        "deadline_gt": e.deadline_gt,
        "game_time": p.game_time(e.now),
        "finished": e.finished,
        "winners": list(e.winners),
        "ended_by": e.ended_by,
        "bot": e.bot_seats(),
        "autopilot": list(e.autopilot),
        "options": {"select_ms": e.select_ms, "end": e.end, "rounds": e.rounds},
        "presence": p.to_json(),
        "last_reveal": [dict(x) for x in e.last_reveal],
    }
