"""Hakka Cards: what one seat (or a spectator) may see (RULES.md 3, 4).

Public: phase, round, dealer/dreamer/privileged marks, calls, whose turn and
its deadline, hand counts, the table (patterns played face up; face-down
discards as counts only), the cards played face up this hand, the Elder
cards now (public information only), tricks, scores, presence, and after
the scoring reveal the last hand's result with the dreamer's card.
A seat adds its own hand and its own face-down discards. The dreamer's card
is face down for everyone until the reveal, the dreamer included.
:func:`omniscient_state` is the whole truth, for replay and tests only.

``view(seat)`` = ``{**public_view(), **private_view(seat)}``; ``view(None)``
is the public part with ``seat`` None.

- The common fields of every game (:mod:`ttanjit.games.base`): ``game``,
  ``seat``, ``n``, ``seats`` (``{seat, kind, bot, substituted, autopilot,
  connected}`` by seat), ``hand_counts``, ``turn``, ``deadline`` (real
  ``t``), ``turn_key``, ``paused``, ``finished``, ``winners``, ``ended_by``.
- Hakka's own public fields: ``phase``, ``round``, ``hands_total``,
  ``deal``, ``dealer``, ``dreamer``, ``privileged``, ``caller``, ``calls``,
  ``leader``, ``turn_ms``, ``table`` (face-up patterns ``{seat, cards,
  kind}``, face-down discards ``{seat, kind: "discard", count}``), ``best``,
  ``last_trick``, ``played``, ``discard_counts``, ``elders``, ``tricks``,
  ``scores``, ``last_hand``.
- Private (:func:`private_view`): ``seat``, ``hand`` (empty for the
  dreamer), ``my_discards``.
- Events (RULES.md 3; a client author read One Card's only: docs audit):
  ``dealt`` {round, deal, dealer, dreamer, hand_counts} with the seat's
  own ``hand`` in ``private[seat]`` (none for the dreamer: its card stays
  face down); ``turn`` {seat, phase (``calling`` | ``playing``), deadline
  (real ``t``)}; ``called`` / ``passed`` {seat}; ``calling_ended``
  {caller, privileged}; ``void_deal`` {dealer, next_dealer} (three passes,
  3.3: dealt again); ``played`` {seat, cards, kind (``single`` | ``run`` |
  ``set``), lead, elders? (the Elder cards now, when the play changed
  them, 3.4)}; ``discarded`` {seat, count}, the seat's own adding its
  ``cards`` (``private[seat]``); ``trick_won`` {seat, cards, tricks,
  total}; ``hand_won`` {seat, how (``claim`` | ``five_tigers``), tricks,
  won?, shown (the cards shown to claim)}; ``hand_scored`` {round, dealer,
  dreamer, privileged, winner (or None: a hand nobody won), how, tricks,
  winning_cards, dreamer_card, dreamer_tricks, deltas, scores, elders};
  ``timeout`` {seat}; ``autopilot`` {seat, on, reason};
  ``game_ended`` {ended_by (``hands`` | ``time_cap`` | ``abandoned``),
  winners, scores} — every game's game-over event; ``time_cap`` {cap_ms}
  before it when the game ran too long; presence
  ``disconnected``/``reconnected``/``substituted`` (base).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ttanjit.games.base import JSON, seats_view
from ttanjit.games.hakka_patterns import sort_cards

if TYPE_CHECKING:
    from ttanjit.games.hakka import Hakka


def public_view(g: Hakka) -> JSON:
    p = g.presence
    return {
        "game": g.GAME,
        "n": g.n,
        "seats": seats_view(g.setup.seats, p, g.bot_seats(), g.autopilot),
        "phase": g.phase,
        "round": g.round,
        "hands_total": 4,
        "deal": g.deal_no,
        "dealer": g.dealer,
        "dreamer": g.dreamer,
        "privileged": g.privileged,
        "caller": g.caller,
        "calls": [dict(c) for c in g.calls],
        "turn": g.turn,
        "leader": g.leader,
        "deadline": g._deadline_t(),
        "turn_key": g.deadline_gt,
        "turn_ms": g.turn_ms,
        "hand_counts": [len(h) for h in g.hands],
        "table": [
            {"seat": x.seat, "cards": list(x.cards), "kind": x.pattern.kind}
            if x.pattern is not None else {"seat": x.seat, "kind": "discard", "count": len(x.cards)}
            for x in g.table
        ],
        "best": g.table[g.best].seat if g.table else None,
        "last_trick": g.last_trick,
        "played": list(g.played),
        "discard_counts": [len(d) for d in g.discards],
        "elders": sort_cards(g.elder_set()),
        "tricks": list(g.tricks),
        "scores": list(g.scores),
        "last_hand": g.last_hand,
        "paused": p.paused,
        "finished": g.finished,
        "winners": list(g.winners),
        "ended_by": g.ended_by,
    }


def private_view(g: Hakka, seat: int) -> JSON:
    """What a seat's view adds to :func:`public_view`: its hand (empty for
    the dreamer, whose card stays face down) and its face-down discards."""
    return {
        "seat": seat,
        "hand": [] if seat == g.dreamer else list(g.hands[seat]),
        "my_discards": list(g.discards[seat]),
    }


def omniscient_state(g: Hakka) -> JSON:
    """The whole truth (DESIGN.md 3.1 field names): for replay and tests, never for a seat."""
    p = g.presence
    return {
        "game": g.GAME,
        "phase": g.phase,
        "round": g.round,
        "deal": g.deal_no,
        "dealer": g.dealer,
        "dreamer": g.dreamer,
        "next_dealer": g.next_dealer,
        "calls": [dict(c) for c in g.calls],
        "caller": g.caller,
        "privileged": g.privileged,
        "turn": g.turn,
        "leader": g.leader,
        "deadline": g._deadline_t(),
        "deadline_gt": g.deadline_gt,
        "game_time": p.game_time(g.now),
        "hands": [list(h) for h in g.hands],
        "tricks": list(g.tricks),
        "scores": list(g.scores),
        "trick": [{"seat": x.seat, "cards": list(x.cards),
                   "kind": x.pattern.kind if x.pattern is not None else "discard"}
                  for x in g.table],
        "best": g.table[g.best].seat if g.table else None,
        "last_trick": g.last_trick,
        "played": list(g.played),
        "discards": [list(d) for d in g.discards],
        "won_cards": [list(w) for w in g.won_cards],
        "elders": sort_cards(g.elder_set()),
        "last_hand": g.last_hand,
        "timeouts": list(g.timeouts),
        "bot": g.bot_seats(),
        "autopilot": list(g.autopilot),
        "presence": p.to_json(),
        "options": {"turn_ms": g.turn_ms},
        "finished": g.finished,
        "winners": list(g.winners),
        "ended_by": g.ended_by,
    }
