"""What leaves a One Card engine: per-seat views, the omniscient state and
the result (DESIGN.md 1 and 3.1). Nothing else reaches a client.

Contract for consumers (shard, gateway, bots, web client):
- ``view(seat)`` = ``{**public_view(), **private_view(seat)}``. The common
  fields of every game (:mod:`ttanjit.games.base`): ``game``, ``seat``,
  ``n``, ``seats`` (``{seat, kind, bot, substituted, autopilot,
  connected}`` by seat), ``hand_counts``, ``turn``, ``deadline`` (real
  ``t``; None while paused), ``turn_key``, ``paused``, ``finished``, ``winners`` (``[]`` or
  the one winner), ``ended_by``. One Card's own public fields: ``top``,
  ``suit`` (current suit), ``direction``, ``pending`` (attack total),
  ``twos_only`` (a 3 may defend), ``draw_pile`` (count), ``discard``
  (face-up pile, top last), ``can_draw``, ``window`` (``{"holder",
  "closes_at"}`` or None), ``dealt``/``eliminated``/``resume_pending`` by
  seat, ``turn_ms``, ``t``. The private part (:func:`private`, a seat's
  view only): ``seat``, ``hand`` (own cards), ``attack``: ``{card:
  strength}`` for the attack cards in the hand (2 → 2, A → 3, A♠ and the
  black joker → 5, the colour joker → 7; RULES 1.5), so a client shows a
  play's attack without its own table; ``cannot``: ``{card: refusal code}``
  for the cards of the hand that may not go first now (RULES 1.2, 1.5:
  ``named_suit``, ``under_attack``, ``weaker_attack``, …), so a client says
  a card cannot go before it is sent (no rules of its own); and
  ``false_call_used``.
  ``view(None)`` is the public part with ``seat`` None. Bots compute their
  plays from a view with :func:`ttanjit.games.onecard_cards.legal_plays`.
- Events: ``played`` {seat, cards (order used), reordered, suit, pending,
  left, turn}; ``drew`` {seat, count, reason (draw | take |
  one_card_penalty | false_call), left, [pending, turn]} with the faces in
  ``private[seat]["cards"]``; ``passed``; ``timeout`` {seat, action};
  ``reshuffled`` {cards}; ``one_card_window`` {holder, closes_at};
  ``one_card_window_closed``; ``one_card`` {seat, holder, penalty};
  ``false_call``; ``eliminated`` {seat, cards}; ``autopilot``; ``resume``;
  ``game_ended`` {ended_by, winners, winner} (the game-over event of every
  game; ``game_over`` before issue 13); presence ``disconnected``/
  ``reconnected``/``substituted``.
- ``state()`` adds to the public fields ``winner`` (seat or None), ``bot``
  and ``autopilot`` by seat (DESIGN.md 3.1), ``connected`` by seat, the
  hands, the pile and the clocks.
- Reply ``info`` of a play: ``{"order": [...], "reordered": bool}``; of an
  ignored press: ``{"ignored": "late_press" | "false_call_limit"}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ttanjit.games.base import JSON, seats_view
from ttanjit.games.onecard_cards import NOT_LAST, RANK, STRENGTH, refusal

if TYPE_CHECKING:
    from ttanjit.games.onecard import OneCard


def public(g: OneCard) -> JSON:
    """The public table: what every seat and spectator may see
    (``public_view()``, built once per burst: keep it cheap)."""
    p = g.presence
    pt = p.paused_total
    return {
        "game": "onecard",
        "t": g.now,
        "n": g.n,
        "seats": seats_view(g.setup.seats, p, g.bot, g.autopilot),
        "turn_ms": g.turn_ms,
        "turn": g.turn,
        "deadline": None if g.deadline_gt is None or p.paused else g.deadline_gt + pt,
        "turn_key": g.deadline_gt,
        "direction": g.direction,
        "top": g.discard[-1],
        "suit": g.suit,
        "pending": g.pending,
        "twos_only": g.twos_only,
        "hand_counts": [len(h) for h in g.hands],
        "draw_pile": len(g.pile),
        "discard": list(g.discard),
        "can_draw": g.can_draw(),
        "window": None if g.window_holder is None else {
            "holder": g.window_holder, "closes_at": g.window_closes + pt},
        "dealt": list(g.dealt),
        "eliminated": list(g.eliminated),
        "resume_pending": list(g.resume_pending),
        "paused": p.paused,
        "finished": g.finished,
        "winners": [] if g.winner is None else [g.winner],
        "ended_by": g.ended_by,
    }


def private(g: OneCard, seat: int) -> JSON:
    """What a seat's view adds to :func:`public`: its hand, the attack
    strengths of its attack cards, whether it used its false call this turn."""
    hand = g.hands[seat]
    return {
        "seat": seat,
        "hand": list(hand),
        "attack": {c: STRENGTH[c] for c in hand if STRENGTH[c]},
        # a lone 2, A or joker cannot be the last card (RULES.md 1.6), whatever
        # the pile says: the engine refuses it first (it was not flagged: 원카드 audit)
        "cannot": {c: why for c in hand if (why := "last_card_forbidden"
                                            if len(hand) == 1 and RANK[c] in NOT_LAST else refusal(
            c, g.discard[-1], g.suit, g.pending, g.twos_only)) is not None},
        "false_call_used": g.false_call_turn[seat] == g.turn_no,
    }


def state(g: OneCard) -> JSON:
    """The omniscient state (DESIGN.md 3.1 field names, and more)."""
    p = g.presence
    return {
        **public(g),
        "winner": g.winner,
        "bot": list(g.bot),
        "autopilot": list(g.autopilot),
        "connected": [p.connected[s] or not p.is_active_human(s) for s in range(g.n)],
        "hands": [list(h) for h in g.hands],
        "draw_pile": len(g.pile),
        "pile": g.pile[::-1],
        "game_time": p.game_time(g.now),
        "turn_no": g.turn_no,
        "deadline_gt": g.deadline_gt,
        "grace_until": g.grace_until,
        "false_called": [x == g.turn_no for x in g.false_call_turn],
        "timeouts": list(g.timeouts),
        "counters": dict(g.counters),
        "presence": p.to_json(),
    }


def result(g: OneCard) -> JSON:
    """A finished game's outcome (``ttanjit simulate`` sums the counters)."""
    if not g.finished:
        raise ValueError("the game is not finished")
    return {
        "winners": [] if g.winner is None else [g.winner],
        "ended_by": g.ended_by,
        "substituted": [s for s in range(g.n) if g.presence.substituted[s]],
        "length_ms": g.end_gt,
        "counters": dict(g.counters),
    }
