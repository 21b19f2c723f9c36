"""One Card (원카드, "딴짓 기본 규칙"): RULES.md section 1, presence rules of
section 4.

The state is the whole truth; :meth:`OneCard.view` projects what one seat may
see and every event keeps a drawn card's face in ``private`` for the drawer.
Cards and matching live in :mod:`ttanjit.games.onecard_cards`.

Time: every deadline (turn timer, One Card window, 60 s absence, 30 min cap)
is kept in *game time* (``gt``: real ``t`` minus paused time, section 4) and
fires through the base scheduler (:meth:`Engine._due`, whose tie order is
documented in :mod:`ttanjit.games.base`) when an input's ``t`` reaches it;
while paused the only deadline is the abandonment (section 4, real time).

Decisions beyond RULES.md (documented here, tested in the scenarios):
- A One Card window stays open until the first press or expiry even if its
  holder's hand changes meanwhile (RULES 1.7 names only those two ends).
- A player eliminated by a penalty draw during their own turn (a false call
  under attack) ends that attack; the turn passes to the next player.
- Game actions from a disconnected human seat are refused (``not_connected``:
  the gateway reconnects first); while the game is paused (every human away)
  game actions are refused with ``game_paused``.
- A late press (within 1,000 ms of a window closing) and a second false call
  in one turn are accepted and ignored: reply ``{"ignored": reason}``.
- ``resume`` takes effect when the seat's next turn starts (K turns count).
- A ``suit`` sent with a play that names none (no 7 or joker, or a 7 that
  empties the hand) is ignored.
- An eliminated human who watches still counts as a connected human seat
  (RULES 4 speaks of human seats): while they watch, the game is not
  paused and its bots keep a person's pace. But a game is not paused for
  them alone: when every human is away and none of them is still in the
  game, it plays on to its end (it was paused and, 10 minutes later,
  abandoned unrated: a player who closed the tab once eliminated made
  their loss vanish). Rules revision 2 (``games.base.RULES_REVISION``): a
  record without ``rules`` replays with the pause of revision 1.
- An eliminated human who goes (``leave``, or away 60 s) is replaced by a
  bot as anyone (RULES 4), with nothing left to play, and keeps the place
  they were eliminated at (``presence.kept``, the result's ``kept``): before
  rules revision 3, as one who left a game in play, the rating counted them
  last, below the players still at the table, so an eliminated player
  could not go without losing more (RULES 1.8: their cards went into the
  pile; they may watch). A record of revision 1 or 2 has no ``kept``.

Views, events and replies: :mod:`ttanjit.games.onecard_view`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ttanjit.games import onecard_view
from ttanjit.games.base import (
    ABANDONED,
    JSON,
    NO_FIELDS,
    TURN,
    WINDOW,
    Engine,
    Event,
    IllegalAction,
    InvalidAction,
    Refusal,
    Result,
    SeatSpec,
    Setup,
)
from ttanjit.games.onecard_cards import (
    FITS,
    NOT_LAST,
    RANK,
    STRENGTH,
    SUIT,
    SUIT_NAMING,
    SUITS,
    check_group,
    find_order,
    legal_plays,
    refusal,
)
from ttanjit.games.onecard_setup import check_options, deal, deck_for

WINDOW_MS = 3_000  # RULES 1.7
LATE_MS = 1_000  # RULES 1.7, late press grace
ELIMINATE_AT = 20  # RULES 1.8
CAP_MS = 30 * 60_000  # RULES 1.8
AUTOPILOT_AFTER = 3  # RULES 1.9

MESSAGES: dict[str, str] = {
    "card_not_in_hand": "손에 없는 카드예요.",
    "does_not_match": "맨 위 카드와 무늬나 숫자가 맞지 않아요.",
    "named_suit": "무늬가 바뀌었어요. 바뀐 무늬나 맨 위 카드와 같은 숫자만 낼 수 있어요.",
    "joker_named_suit": "조커 위에는 조커가 정한 무늬의 카드나 조커만 낼 수 있어요.",
    "weaker_attack": "지금 공격보다 약한 카드로는 넘길 수 없어요.",
    # (under attack nothing is drawn: the attack is taken, RULES.md 1.6; it
    # said "1장 뽑아요", and a draw was refused: 원카드 audit)
    "last_card_forbidden": "마지막 카드로는 2·A·조커를 낼 수 없어요. 1장 뽑거나, 공격받는 중이면 쌓인 카드를 받아요.",
    "under_attack": "공격을 받는 중이에요. 공격 카드로 넘기거나 받아야 해요.",
    "cannot_defend": "3으로는 2만 이어진 공격만 막을 수 있어요.",
    "mixed_ranks": "같은 숫자 카드만 함께 낼 수 있어요(조커 두 장은 함께).",
    "too_many_cards": "한 번에 최대 4장까지 낼 수 있어요.",
    "suit_required": "다음 무늬를 골라요.",
    "cannot_draw_now": "뽑을 카드가 없어요. [카드 없음 · 넘기기]를 눌러요.",
    "cannot_pass": "뽑을 카드가 있으면 넘길 수 없어요.",
    "not_under_attack": "받을 공격이 없어요.",
    "no_cards": "낼 카드를 골라요.",
    "not_dealt": "게임에 참여하지 않은 자리예요.",  # (not the gateway's not_in_game)
    "eliminated": "탈락해서 구경만 할 수 있어요.",
    "not_connected": "연결이 끊긴 자리예요. 다시 연결해요.",
    "game_paused": "모두 연결이 끊겨 게임이 멈췄어요.",
    "already_resuming": "다음 내 차례부터 직접 해요.",
}


class OneCard(Engine):
    GAME: ClassVar[str] = "onecard"
    MESSAGES: ClassVar[dict[str, str]] = MESSAGES
    MIN_SEATS: ClassVar[int] = 2
    MAX_SEATS: ClassVar[int] = 6
    TURN_HAS_A_SEAT: ClassVar[bool] = True
    ACTIONS: ClassVar[Mapping[str, frozenset[str]]] = {
        "play": frozenset({"cards", "suit"}), "draw": NO_FIELDS, "take": NO_FIELDS,
        "pass": NO_FIELDS, "one_card": NO_FIELDS, "resume": NO_FIELDS}
    UNKNOWN_ACTION: ClassVar[str] = "bad_action"  # recorded games assert it
    CAP_MS: ClassVar[int] = CAP_MS

    def __init__(self, setup: Setup) -> None:
        self.turn_ms = check_options(setup)
        super().__init__(setup)
        n = self.n
        deck = deck_for(setup, self.rng)
        self.dealt = [s.kind != "empty" for s in setup.seats]
        self.alive = list(self.dealt)
        # rules 2 on: an eliminated player does not hold the game paused
        self.out_counts = setup.rules >= 2
        self.presence.out = [self.out_counts and not a for a in self.alive]
        # rules 3 on: an eliminated player who goes keeps their place
        self.presence.keeps_out_place = setup.rules >= 3
        self.bot = [s.kind == "bot" for s in setup.seats]
        players = [s for s in range(n) if self.dealt[s]]
        self.hands, self.pile, top = deal(deck, players, n)
        self.discard = [top]  # top card last
        self.suit = SUIT[top]
        self.pending = 0
        self.twos_only = False  # every attack card of the current chain is a 2
        self.direction = 1
        fp = setup.first_player
        if fp is None:
            fp = self.rng.choice(players)
        elif not (isinstance(fp, int) and 0 <= fp < n and self.dealt[fp]):
            raise ValueError("first_player must be a seat that is dealt in")
        self.turn: int | None = fp
        self.turn_no = 0
        self.deadline_gt: int | None = None
        self.window_holder: int | None = None
        self.window_closes = 0
        self.grace_until = -1
        self.false_call_turn = [-1] * n  # turn_no of each seat's last false call (1.7)
        self.timeouts = [0] * n
        self.autopilot = [False] * n
        self.resume_pending = [False] * n
        self.eliminated: list[int] = []
        self.winner: int | None = None
        self.ended_by: str | None = None
        self.end_gt: int | None = None
        self.counters = {"eliminations": 0, "one_card_penalties": 0, "false_calls": 0}
        self._start_turn(fp, 0)

    @classmethod
    def from_view(cls, view: JSON, hands: list[list[str]], pile: list[str], *,
                  seed: int | random.Random = 0, seats: list[SeatSpec] | None = None,
                  options: JSON | None = None) -> OneCard:
        """The position a seat's (or the public) ``view`` shows, with the
        hidden cards chosen by the caller (python-chess's ``Board(fen)``):
        ``hands`` by seat (the viewer's own included) and the draw ``pile``
        (drawn from the end). Discards, suit, attack, direction, turn and
        eliminations come from the view; the turn's timer starts at ``t`` 0,
        no window is open, nobody is on autopilot. ``seats`` default to
        normal bots; ``seed`` (or a ``random.Random`` whose state is copied)
        drives the reshuffles. Bots search determinised games with it."""
        n = view["n"]
        setup = Setup("onecard", options if options is not None else {"seats": n},
                      seats if seats is not None else [SeatSpec("bot", "normal")] * n, 0)
        e = cls(setup)
        e.dealt = list(view["dealt"])
        e.alive = [view["dealt"][s] and s not in view["eliminated"] for s in range(n)]
        e.eliminated = list(view["eliminated"])
        e.presence.out = [e.out_counts and not a for a in e.alive]
        e.discard = list(view["discard"])
        e.suit = view["suit"]
        e.pending = view["pending"]
        e.twos_only = view["twos_only"]
        e.direction = view["direction"]
        e.turn = view["turn"]
        e.hands = [list(h) for h in hands]
        e.pile = list(pile)
        e.window_holder = None
        e.autopilot = [False] * n
        e.resume_pending = [False] * n
        e.deadline_gt = e.turn_ms
        if isinstance(seed, random.Random):
            e.rng = random.Random()
            e.rng.setstate(seed.getstate())
        else:
            e.rng = random.Random(seed)
        return e

    # -- deadlines (the base scheduler fires them) ------------------------------
    def _timers(self) -> Sequence[tuple[int, int]]:
        dl = self.deadline_gt
        turn = () if dl is None else ((dl, TURN),)
        if self.window_holder is None:
            return turn
        return ((self.window_closes, WINDOW), *turn)

    def _fire(self, kind: int, gt: int, events: list[Event]) -> None:
        if kind == WINDOW:
            events.append(Event("one_card_window_closed",
                                {"holder": self.window_holder, "pressed": False}))
            self.window_holder = None
            self.grace_until = gt + LATE_MS
        else:
            self._timeout(gt, events)

    def _time_cap(self, gt: int, events: list[Event]) -> None:
        self._finish(None, "time_cap", gt, events)

    def _end_abandoned(self, t: int, events: list[Event]) -> None:
        """RULES.md 4 (abandonment): ended, no winner."""
        self._finish(None, ABANDONED, self.presence.game_time(t), events)

    def _timeout(self, gt: int, events: list[Event]) -> None:
        """RULES 1.9: take under attack, else draw 1 (or pass)."""
        seat = self.turn
        assert seat is not None
        if self.pending:
            how = "take"
        elif self.can_draw():
            how = "draw"
        else:
            how = "pass"
        events.append(Event("timeout", {"seat": seat, "action": how}))
        if self.presence.is_active_human(seat):
            self.timeouts[seat] += 1
            if self.timeouts[seat] >= AUTOPILOT_AFTER and not self.autopilot[seat]:
                self.autopilot[seat] = True
                self.resume_pending[seat] = False
                events.append(Event("autopilot", {"seat": seat, "on": True}))
        if how == "take":
            self._take(seat, gt, events)
        elif how == "draw":
            self._draw_turn(seat, gt, events)
        else:
            self._pass(seat, gt, events)

    # -- the input ------------------------------------------------------------
    def apply(self, t: int, seat: int | None = None, action: JSON | None = None) -> Result:
        """:meth:`Engine.apply`, with a fast path for the common input: a
        well-formed action when no deadline falls due by ``t`` (then nothing
        fires and nothing needs saving; :meth:`Engine._input` and ``_act``
        validate before they mutate). Everything else takes the base path."""
        if (type(t) is int and type(seat) is int and type(action) is dict
                and t >= self.now and 0 <= seat < self.n
                and type(action.get("type")) is str):
            nd = self.next_deadline()
            if nd is None or nd > t:
                events: list[Event] = []
                try:
                    info = self._input(t, seat, action, events)
                except Refusal as exc:
                    return self._refused(exc)
                self.now = t
                return Result(True, events, None, None, info)
        return super().apply(t, seat, action)

    # -- game actions ------------------------------------------------------------
    def _refusal_to_act(self, seat: int) -> str | None:
        """Why ``seat`` may not send a game action now (None: it may)."""
        if self.finished:
            return "game_finished"
        if not self.alive[seat]:
            return "eliminated" if self.dealt[seat] else "not_dealt"
        p = self.presence
        if p.paused_since is not None:
            return "game_paused"
        if not p.connected[seat] and p.human[seat] and not p.substituted[seat]:
            return "not_connected"
        return None

    def _act(self, t: int, seat: int, action: JSON, events: list[Event]) -> JSON | None:
        why = self._refusal_to_act(seat)
        if why is not None:
            raise IllegalAction(why)
        handler = _HANDLERS[action["type"]]
        info: JSON | None = handler(self, seat, t - self.presence.paused_total, action, events)
        return info

    def _bot_takes_seat(self, t: int, seat: int, reason: str) -> Event:
        ev = super()._bot_takes_seat(t, seat, reason)
        self.bot[seat] = True
        self.autopilot[seat] = False
        self.resume_pending[seat] = False
        return ev

    def _play(self, seat: int, gt: int, action: JSON, events: list[Event]) -> JSON:
        if seat != self.turn:
            raise IllegalAction("not_your_turn")
        cards = action.get("cards")
        if type(cards) is not list:
            raise InvalidAction("cards must be a list of card codes")
        if not cards:
            raise IllegalAction("no_cards")
        for c in cards:
            if type(c) is not str or c not in RANK:
                raise InvalidAction(f"unknown card {c!r}")
        chosen = tuple(cards)
        hand = self.hands[seat]
        for c in chosen:
            if c not in hand:
                raise IllegalAction("card_not_in_hand")
        if len(chosen) > 1:
            if len(set(chosen)) != len(chosen):
                raise InvalidAction("a card is named twice")
            why = check_group(chosen)
            if why:
                raise IllegalAction(why)
        rank = RANK[chosen[0]]
        emptying = len(chosen) == len(hand)
        if emptying and rank in NOT_LAST:
            raise IllegalAction("last_card_forbidden")
        order: tuple[str, ...]
        if len(chosen) == 1:  # the common case, without the permutation search
            if self.pending or chosen[0] not in FITS[self.suit][RANK[self.discard[-1]]]:
                why = refusal(chosen[0], self.discard[-1], self.suit, self.pending,
                              self.twos_only)
                if why:
                    raise IllegalAction(why)
            order = chosen
        else:
            found = find_order(chosen, self.discard[-1], self.suit, self.pending, self.twos_only)
            if isinstance(found, str):
                raise IllegalAction(found)
            order = found
        named = action.get("suit")
        if rank in SUIT_NAMING and not emptying:
            if named is None:
                raise IllegalAction("suit_required")
            if not isinstance(named, str) or named not in _SUIT_SET:
                raise InvalidAction("suit must be one of S, H, D, C")
        else:
            named = SUIT[order[-1]]
        # -- valid: apply ----------------------------------------------------
        self.timeouts[seat] = 0
        for c in order:
            hand.remove(c)
        self.discard.extend(order)
        self.suit = named
        k = len(order)
        steps = 1
        again = False
        strength = STRENGTH[order[0]]
        if strength:
            self.twos_only = rank == "2" and (self.pending == 0 or self.twos_only)
            self.pending += sum(STRENGTH[c] for c in order)
        elif self.pending:  # RULES 1.5: 3s cancel a chain of 2s
            self.pending = 0
            self.twos_only = False
        elif rank == "J":
            steps += k
        elif rank == "Q":
            if k % 2:
                self.direction = -self.direction
        elif rank == "K":
            again = True
        played = list(order)
        reordered = played != cards
        ev: JSON = {"seat": seat, "cards": played, "reordered": reordered,
                    "suit": named, "pending": self.pending, "left": len(hand)}
        events.append(Event("played", ev))
        if not hand:
            self._finish(seat, "win", gt, events)
        else:
            if len(hand) == 1:  # RULES 1.7: a window opens (and replaces any other)
                self.window_holder = seat
                self.window_closes = gt + WINDOW_MS
                events.append(Event("one_card_window", {
                    "holder": seat, "closes_at": self.window_closes + self.presence.paused_total}))
            self._next(seat, 0 if again else steps, gt)
            ev["turn"] = self.turn
        return {"order": played, "reordered": reordered}

    def _draw(self, seat: int, gt: int, action: JSON, events: list[Event]) -> None:
        if seat != self.turn:
            raise IllegalAction("not_your_turn")
        if self.pending:
            raise IllegalAction("under_attack")
        if not self.can_draw():
            raise IllegalAction("cannot_draw_now")
        self.timeouts[seat] = 0
        self._draw_turn(seat, gt, events)

    def _draw_turn(self, seat: int, gt: int, events: list[Event]) -> None:
        ev = self._deal(seat, 1, "draw", events)
        if not self._check_eliminated(seat, gt, events):
            self._next(seat, 1, gt)
        ev["turn"] = self.turn

    def _take_action(self, seat: int, gt: int, action: JSON, events: list[Event]) -> None:
        if seat != self.turn:
            raise IllegalAction("not_your_turn")
        if not self.pending:
            raise IllegalAction("not_under_attack")
        self.timeouts[seat] = 0
        self._take(seat, gt, events)

    def _take(self, seat: int, gt: int, events: list[Event]) -> None:
        """RULES 1.5/1.8: draw the pending total (what there is); attack ends."""
        n = self.pending
        self.pending = 0
        self.twos_only = False
        ev = self._deal(seat, n, "take", events)
        ev["pending"] = n
        if not self._check_eliminated(seat, gt, events):
            self._next(seat, 1, gt)
        ev["turn"] = self.turn

    def _pass_action(self, seat: int, gt: int, action: JSON, events: list[Event]) -> None:
        if seat != self.turn:
            raise IllegalAction("not_your_turn")
        if self.pending or self.can_draw():
            raise IllegalAction("cannot_pass")
        self.timeouts[seat] = 0
        self._pass(seat, gt, events)

    def _pass(self, seat: int, gt: int, events: list[Event]) -> None:
        self._next(seat, 1, gt)
        events.append(Event("passed", {"seat": seat, "turn": self.turn}))

    def _one_card(self, seat: int, gt: int, action: JSON, events: list[Event]) -> JSON | None:
        """RULES 1.7: the first press decides; late presses and repeated false
        calls are ignored; otherwise a press with no window is a false call."""
        holder = self.window_holder
        if holder is not None:
            self.window_holder = None
            self.grace_until = gt + LATE_MS
            penalty = 0 if seat == holder else 2
            events.append(Event("one_card", {"seat": seat, "holder": holder, "penalty": penalty}))
            if penalty:
                self.counters["one_card_penalties"] += 1
                self._deal(holder, penalty, "one_card_penalty", events)
                self._check_eliminated(holder, gt, events)
            return None
        if gt < self.grace_until:
            return {"ignored": "late_press"}
        if self.false_call_turn[seat] == self.turn_no:
            return {"ignored": "false_call_limit"}
        self.false_call_turn[seat] = self.turn_no
        self.counters["false_calls"] += 1
        events.append(Event("false_call", {"seat": seat}))
        self._deal(seat, 1, "false_call", events)
        self._check_eliminated(seat, gt, events)
        return None

    def _resume(self, seat: int, gt: int, action: JSON, events: list[Event]) -> None:
        if not self.autopilot[seat]:
            raise IllegalAction("not_on_autopilot")
        if self.resume_pending[seat]:
            raise IllegalAction("already_resuming")
        self.resume_pending[seat] = True
        events.append(Event("resume", {"seat": seat}))

    # -- helpers ---------------------------------------------------------------
    def can_draw(self) -> bool:
        """RULES 1.2/1.8: a card can be drawn (pile, or discards to reshuffle)."""
        return bool(self.pile) or len(self.discard) > 1

    def _deal(self, seat: int, n: int, reason: str, events: list[Event]) -> JSON:
        """Draw up to ``n`` cards for ``seat``, reshuffling the discards under
        the top card when the pile runs out (RULES 1.8). Returns the public
        data of the ``drew`` event (callers add to it)."""
        pile = self.pile
        if n == 1 and pile:  # the common draw
            c = pile.pop()
            hand = self.hands[seat]
            hand.append(c)
            data: JSON = {"seat": seat, "count": 1, "reason": reason, "left": len(hand)}
            events.append(Event("drew", data, {seat: {"cards": [c]}}))
            return data
        got: list[str] = []
        for _ in range(n):
            if not pile:
                if len(self.discard) <= 1:
                    break
                rest = self.discard[:-1]
                del self.discard[:-1]
                self.rng.shuffle(rest)
                pile.extend(rest)
                events.append(Event("reshuffled", {"cards": len(rest)}))
            got.append(pile.pop())
        hand = self.hands[seat]
        hand.extend(got)
        data = {"seat": seat, "count": len(got), "reason": reason, "left": len(hand)}
        events.append(Event("drew", data, {seat: {"cards": got}}))
        return data

    def _check_eliminated(self, seat: int, gt: int, events: list[Event]) -> bool:
        """RULES 1.8: 20 or more cards eliminates; True if the game moved on
        (the turn already passed or the game ended)."""
        hand = self.hands[seat]
        if len(hand) < ELIMINATE_AT:
            return False
        self.alive[seat] = False
        # may watch; the game no longer waits for them (RULES 4; rules 2 on)
        self.presence.out[seat] = self.out_counts
        self.eliminated.append(seat)
        self.counters["eliminations"] += 1
        self.pile.extend(hand)
        self.rng.shuffle(self.pile)
        events.append(Event("eliminated", {"seat": seat, "cards": len(hand)}))
        hand.clear()
        if self.window_holder == seat:
            self.window_holder = None
        left = [s for s in range(self.n) if self.alive[s]]
        if len(left) == 1:
            self._finish(left[0], "last_player", gt, events)
            return True
        if self.turn == seat:
            self.pending = 0
            self.twos_only = False
            self._next(seat, 1, gt)
            return True
        return False

    def _next(self, seat: int, steps: int, gt: int) -> None:
        """RULES 1.3: among seats still in the game, ``steps`` in the current
        direction (0 = the same player again)."""
        s, d, n, alive = seat, self.direction, self.n, self.alive
        while steps:
            s = (s + d) % n
            if alive[s]:
                steps -= 1
        self._start_turn(s, gt)

    def _start_turn(self, seat: int, gt: int) -> None:
        self.turn = seat
        self.turn_no += 1
        self.deadline_gt = gt + self.turn_ms
        if self.resume_pending[seat]:
            self.resume_pending[seat] = False
            self.autopilot[seat] = False
            self.timeouts[seat] = 0

    def _finish(self, winner: int | None, how: str, gt: int, events: list[Event]) -> None:
        self.finished = True
        self.winner = winner
        self.ended_by = how
        self.end_gt = gt
        self.turn = None
        self.deadline_gt = None
        self.window_holder = None
        events.append(Event("game_ended", {"ended_by": how,
                                           "winners": [] if winner is None else [winner],
                                           "winner": winner}))

    # -- what may be sent now -----------------------------------------------------
    def _may_act(self, seat: int) -> bool:
        return self._refusal_to_act(seat) is None

    def actors(self) -> list[int]:
        """Seats with a game action now (fast path of :meth:`legal_actions`)."""
        if self.finished:
            return []
        if self.window_holder is None and True not in self.autopilot:
            turn = self.turn
            return [turn] if turn is not None and self._may_act(turn) else []
        return [s for s in range(self.n) if self.legal_actions(s)]

    def legal_actions(self, seat: int) -> list[JSON]:
        """Game actions ``seat`` may send now: every distinct legal play,
        draw/take/pass, ``one_card`` only while a window is open (a false call
        is never suggested), ``resume`` on autopilot. Bots use these; the
        player's screen never shows them (seed page). Play actions are
        shared precomputed dicts: read-only (copy before changing one)."""
        if not 0 <= seat < self.n or self._refusal_to_act(seat) is not None:
            return []
        out: list[JSON] = []
        if seat == self.turn:
            out = legal_plays(self.hands[seat], self.discard[-1], self.suit, self.pending,
                              self.twos_only)
            if self.pending:
                out.append({"type": "take"})
            elif self.can_draw():
                out.append({"type": "draw"})
            else:
                out.append({"type": "pass"})
        if self.window_holder is not None:
            out.append({"type": "one_card"})
        if self.autopilot[seat] and not self.resume_pending[seat]:
            out.append({"type": "resume"})
        return out

    # -- projections (onecard_view) ----------------------------------------------------
    def public_view(self) -> JSON:
        return onecard_view.public(self)

    def private_view(self, seat: int) -> JSON:
        if not 0 <= seat < self.n:
            return {"seat": None}
        return onecard_view.private(self, seat)

    def state(self) -> JSON:
        return onecard_view.state(self)

    def result(self) -> JSON:
        return onecard_view.result(self)

_SUIT_SET = frozenset(SUITS)
_HANDLERS: dict[str, Any] = {
    "play": OneCard._play,
    "draw": OneCard._draw,
    "take": OneCard._take_action,
    "pass": OneCard._pass_action,
    "one_card": OneCard._one_card,
    "resume": OneCard._resume,
}
