"""줄줄이 벌점 (penalty rows) — game id ``penalty_rows``. RULES.md sections 2
and 4; seed page ``seeds/002_83e43fefb11789c1.txt``.

A game is rounds (판) of 10 simultaneous turns (회차). In each turn every
seat secretly selects a card and a row (``select``, changeable), then
``confirm``s (final). When every seat has confirmed, or at the shared
deadline, all picks are revealed and placed one at a time in increasing card
order (``penalty_rows_cards``). After a round: a 5,000 ms intermission, or
the end (quick rounds / classic 66). Phases: ``select``, ``intermission``,
``finished``.

Decisions taken here (beyond RULES.md):
- **A selection that was not confirmed by the deadline does not stand**: the
  timeout pick of 2.5 replaces it and the turn counts as a timeout. The seed
  says "시간 안에 확정하지 않으면 … 대신 골라요. 이미 확정한 카드와 줄은
  바꾸지 않아요" — only confirmed picks are kept — and RULES.md says the
  game picks "for each unconfirmed player".
- Autopilot seats are played by the ``normal`` bot through the shard. The
  shard marks the actions it sends for a seat on autopilot with
  ``"auto": true``; a ``confirm`` *without* that mark is the player's own
  and releases autopilot (2.5: "or a manual confirmation"), as ``resume``
  does. A bot that fails to answer leaves the seat to the timeout pick.
- The reveal and its placements happen at the instant of the last
  confirmation (or the deadline); the next turn's deadline starts then.
  Clients animate the ``revealed``/``placed`` events meanwhile.
- ``select`` of exactly the current selection is refused
  (``already_selected``); it is not among the legal actions.
- ``confirm`` may carry the pick (``card`` and ``row``, checked as a
  ``select``'s): it is selected and confirmed in one input, so a 확정 near
  the deadline needs one round trip, not a select's answer first (a slow
  network: the web client's 확정 took two round trips, 4.8 s at 1.2 s each
  way; network audit). A seat's view says so (``confirm_with_pick``):
  shards of the releases before confirmed the selection they held and
  wrote the pick in the record as sent, which this engine replays as
  picked (version-skew audit) — so a client sends it only where the view
  says it.
- Only seats of kind ``empty`` sit out (not dealt, never win); every other
  seat, connected or not, must confirm or be picked for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from ttanjit.games import penalty_rows_view as views
from ttanjit.games.base import (
    JSON,
    NO_FIELDS,
    Event,
    IllegalAction,
    InvalidAction,
    OneDeadline,
    Setup,
    auto_flag,
)
from ttanjit.games.penalty_rows_cards import (
    APPEND,
    CARDS,
    HAND,
    ROWS,
    SIXTH_CARD,
    is_card,
    parse_deck,
    place,
    timeout_pick,
)
from ttanjit.games.penalty_rows_options import (
    AUTOPILOT_AFTER,
    CAP_MS,
    INTERMISSION_MS,
    MESSAGES,
    TARGET,
    Options,
)
from ttanjit.games.penalty_rows_view import omniscient_state, selection_view

SELECT, INTERMISSION, FINISHED = "select", "intermission", "finished"


class PenaltyRows(OneDeadline):
    GAME: ClassVar[str] = "penalty_rows"
    MESSAGES: ClassVar[dict[str, str]] = MESSAGES
    MIN_SEATS: ClassVar[int] = 2
    MAX_SEATS: ClassVar[int] = 10
    ACTIONS: ClassVar[Mapping[str, frozenset[str]]] = {
        "select": frozenset({"card", "row"}), "confirm": frozenset({"card", "row"}),
        "resume": NO_FIELDS}
    CAP_MS: ClassVar[int] = CAP_MS

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.options = Options.from_json(setup.options, self.n)
        self.select_ms, self.end, self.rounds = (
            self.options.select_ms, self.options.end, self.options.rounds)
        self.active = [s.kind != "empty" for s in setup.seats]
        self.players = [s for s in range(self.n) if self.active[s]]
        if len(self.players) < 2:
            raise ValueError("penalty_rows: at least 2 seats must be filled")
        self.decks = [parse_deck(d) for d in (setup.decks or [])]
        for d in self.decks:
            if len(d) < HAND * len(self.players) + ROWS:
                raise ValueError(
                    f"penalty_rows deck: {HAND} cards per seat + {ROWS} needs "
                    f"{HAND * len(self.players) + ROWS} cards, got {len(d)}"
                )
        self.bot_kind = [s.kind == "bot" for s in setup.seats]
        self.round = 0
        self.turn = 1
        self.phase = SELECT
        self.rows: list[list[int]] = [[] for _ in range(ROWS)]
        self.hands: list[list[int]] = [[] for _ in range(self.n)]
        self.taken: list[list[int]] = [[] for _ in range(self.n)]  # this round's piles
        self.unused: list[int] = []
        self.penalties = [0] * self.n
        self.round_penalties = [0] * self.n
        self.selection: list[tuple[int, int] | None] = [None] * self.n
        self.confirmed = [False] * self.n
        self.timeouts = [0] * self.n  # consecutive
        self.autopilot = [False] * self.n
        self.deadline_gt: int | None = None
        self.winners: list[int] = []
        self.ended_by: str | None = None
        self.length_ms: int | None = None
        self.last_reveal: list[JSON] = []
        self.counters = {"turns": 0, "rounds": 0, "timeout_picks": 0, "autopilot": 0,
                         "appends": 0, "sixth_cards": 0, "row_end_higher": 0}
        self._start_round(0, [])

    # -- rounds and turns ------------------------------------------------------
    def _start_round(self, gt: int, events: list[Event]) -> None:
        """RULES.md 2.1: reshuffle all 104, deal 10 each round-robin from seat
        0 (empty seats skipped), then rows 1-4; the rest is unused."""
        self.round += 1
        self.counters["rounds"] += 1
        if self.round <= len(self.decks):
            deck = list(self.decks[self.round - 1])
            given = set(deck)
            deck += [c for c in CARDS if c not in given]  # a short deck: the rest unused
        else:
            deck = list(CARDS)
            self.rng.shuffle(deck)
        self.hands = [[] for _ in range(self.n)]
        k = 0
        for _ in range(HAND):
            for s in self.players:
                self.hands[s].append(deck[k])
                k += 1
        for h in self.hands:
            h.sort()
        self.rows = [[deck[k + r]] for r in range(ROWS)]
        self.unused = deck[k + ROWS:]
        self.taken = [[] for _ in range(self.n)]
        self.round_penalties = [0] * self.n
        self.turn = 1
        events.append(Event(
            "round_started",
            {"round": self.round, "rows": [list(r) for r in self.rows]},
            {s: {"hand": list(self.hands[s])} for s in self.players},
        ))
        self._start_turn(gt, events)

    def _start_turn(self, gt: int, events: list[Event]) -> None:
        self.phase = SELECT
        self.selection = [None] * self.n
        self.confirmed = [False] * self.n
        self.deadline_gt = gt + self.select_ms
        events.append(Event("turn_started", {
            "round": self.round, "turn": self.turn, "deadline": self._deadline_t(),
            "select_ms": self.select_ms,
        }))

    def _reveal(self, gt: int, events: list[Event]) -> None:
        """RULES.md 2.5 then 2.3 steps 2-3: timeout picks for unconfirmed
        seats, the reveal, placements in increasing card order."""
        picks: list[tuple[int, int, int, bool]] = []  # card, row, seat, timed out
        timed_out: list[int] = []
        for s in self.players:
            sel = self.selection[s]
            if self.confirmed[s] and sel is not None:
                picks.append((sel[0], sel[1], s, False))
                continue
            card, row = timeout_pick(self.hands[s], self.rows)
            picks.append((card, row, s, True))
            timed_out.append(s)
            self.counters["timeout_picks"] += 1
            if self.presence.is_active_human(s) and not self.autopilot[s]:
                self.timeouts[s] += 1
        if timed_out:
            events.append(Event("timed_out", {"seats": timed_out}))
        picks.sort()
        reveal = [{"seat": s, "card": c, "row": r, "timeout": to} for c, r, s, to in picks]
        events.append(Event("revealed", {"round": self.round, "turn": self.turn,
                                         "picks": reveal}))
        placements: list[JSON] = []
        for card, row, s, _ in picks:
            self.hands[s].remove(card)
            how = place(self.rows, card, row)
            self.taken[s].extend(how.taken)
            self.penalties[s] += how.penalty
            self.round_penalties[s] += how.penalty
            self.counters[{APPEND: "appends", SIXTH_CARD: "sixth_cards"}.get(
                how.outcome, "row_end_higher")] += 1
            placed = {"seat": s, "card": card, "row": row, **how.to_json(),
                      "row_cards": list(self.rows[row - 1]), "total": self.penalties[s]}
            placements.append(placed)
            events.append(Event("placed", placed))
        # the round summary marks a pick the game made (시간 초과), as the reveal does
        self.last_reveal = [{**p, "timeout": to} for p, (_, _, _, to) in zip(placements, picks,
                                                                              strict=True)]
        self.counters["turns"] += 1
        for s in timed_out:
            if self.timeouts[s] >= AUTOPILOT_AFTER and not self.autopilot[s]:
                self.autopilot[s] = True
                self.counters["autopilot"] += 1
                events.append(Event("autopilot", {"seat": s, "on": True,
                                                  "reason": "timeouts"}))
        if self.turn < HAND:
            self.turn += 1
            self._start_turn(gt, events)
        else:
            self._end_round(gt, events)

    def _end_round(self, gt: int, events: list[Event]) -> None:
        """RULES.md 2.4: the two end modes; otherwise the intermission."""
        last = (self.end == "rounds" and self.round == self.rounds) or (
            self.end == "score_66" and max(self.penalties) >= TARGET)
        self.selection = [None] * self.n
        self.confirmed = [False] * self.n
        if not last:
            self.phase = INTERMISSION
            self.deadline_gt = gt + INTERMISSION_MS
        events.append(Event("round_ended", {
            "round": self.round, "round_penalties": list(self.round_penalties),
            "penalties": list(self.penalties), "last": last,
            "next_round_at": None if last else self._deadline_t(),
        }))
        if last:
            low = min(self.penalties[s] for s in self.players)
            self._finish(gt, self.end, [s for s in self.players if self.penalties[s] == low],
                         events)

    def _finish(self, gt: int, ended_by: str, winners: list[int], events: list[Event]) -> None:
        self.phase = FINISHED
        self.finished = True
        self.deadline_gt = None
        self.ended_by = ended_by
        self.winners = winners
        self.length_ms = gt  # game time: paused time excluded
        events.append(Event("game_ended", {"ended_by": ended_by, "winners": list(winners),
                                           "penalties": list(self.penalties)}))

    # -- the clock -----------------------------------------------------------
    def _fire(self, kind: int, gt: int, events: list[Event]) -> None:
        if self.phase == SELECT:
            self._reveal(gt, events)
        else:
            self._start_round(gt, events)

    def _bot_takes_seat(self, t: int, seat: int, reason: str) -> Event:
        ev = super()._bot_takes_seat(t, seat, reason)
        self.autopilot[seat] = False
        self.timeouts[seat] = 0
        return ev

    # -- inputs --------------------------------------------------------------
    def choice_made(self, seat: int) -> bool:
        """A pick stands and waits for its 확정 (:meth:`Engine.choice_made`)."""
        return self.selection[seat] is not None and not self.confirmed[seat]

    def _act(self, t: int, seat: int, action: JSON, events: list[Event]) -> JSON | None:
        kind = action["type"]
        if not self.active[seat]:
            raise IllegalAction("empty_seat")
        auto = auto_flag(action)
        if kind == "resume":
            if not self.autopilot[seat]:
                raise IllegalAction("not_on_autopilot")
            self._release(seat, "resume", events)
            return None
        if self.phase != SELECT:
            raise IllegalAction("not_selecting")
        if self.confirmed[seat]:
            raise IllegalAction("already_confirmed")
        if kind == "select":
            return self._select(seat, action)
        if "card" in action or "row" in action:  # the pick rides on the 확정 (module docstring)
            self._select(seat, action, again=True)
        return self._confirm(t, seat, auto, events)

    def _select(self, seat: int, action: JSON, again: bool = False) -> JSON:
        """``again``: the current selection may be chosen again (a confirm's)."""
        card, row = action.get("card"), action.get("row")
        if not is_card(card):
            raise InvalidAction("card must be an integer 1..104")
        if not isinstance(row, int) or isinstance(row, bool):
            raise InvalidAction("row must be an integer")
        if not 1 <= row <= ROWS:
            raise IllegalAction("bad_row")
        if card not in self.hands[seat]:
            raise IllegalAction("card_not_in_hand")
        if self.selection[seat] == (card, row) and not again:
            raise IllegalAction("already_selected")
        self.selection[seat] = (card, row)
        return {"selection": selection_view(self, seat)}

    def _confirm(self, t: int, seat: int, auto: bool, events: list[Event]) -> JSON:
        sel = self.selection[seat]
        if sel is None:
            raise IllegalAction("nothing_selected")
        self.confirmed[seat] = True
        if not auto:
            self.timeouts[seat] = 0
            if self.autopilot[seat]:
                self._release(seat, "confirm", events)
        events.append(Event("confirmed", {"seat": seat},
                            {seat: {"card": sel[0], "row": sel[1]}}))
        if all(self.confirmed[s] for s in self.players):
            self._reveal(self.presence.game_time(t), events)
        return {"confirmed": {"card": sel[0], "row": sel[1]}}

    def _release(self, seat: int, how: str, events: list[Event]) -> None:
        self.autopilot[seat] = False
        self.timeouts[seat] = 0
        events.append(Event("autopilot", {"seat": seat, "on": False, "reason": how}))

    # -- what seats may do and see ---------------------------------------------
    def legal_actions(self, seat: int) -> list[JSON]:
        if self.finished or not self.active[seat]:
            return []
        out: list[JSON] = []
        if self.phase == SELECT and not self.confirmed[seat]:
            sel = self.selection[seat]
            out = [{"type": "select", "card": c, "row": r}
                   for c in self.hands[seat] for r in (1, 2, 3, 4) if (c, r) != sel]
            if sel is not None:
                out.append({"type": "confirm"})
        if self.autopilot[seat]:
            out.append({"type": "resume"})
        return out

    def actors(self) -> list[int]:
        """Seats with a game action now (cheaper than ``legal_actions``)."""
        if self.finished:
            return []
        selecting = self.phase == SELECT
        return [s for s in self.players
                if (selecting and not self.confirmed[s]) or self.autopilot[s]]

    def public_view(self) -> JSON:
        return views.public_view(self)

    def private_view(self, seat: int) -> JSON:
        if not 0 <= seat < self.n:
            return {"seat": None}
        return views.private_view(self, seat)

    def state(self) -> JSON:
        return omniscient_state(self)

    def bot_seats(self) -> list[bool]:
        return [self.bot_kind[s] or self.presence.substituted[s] for s in range(self.n)]

    def result(self) -> JSON:
        return {
            "winners": list(self.winners),
            "ended_by": self.ended_by,
            "penalties": list(self.penalties),
            "substituted": list(self.presence.substituted),
            "length_ms": self.length_ms,
            "counters": dict(self.counters),
        }


__all__ = ["MESSAGES", "PenaltyRows"]
