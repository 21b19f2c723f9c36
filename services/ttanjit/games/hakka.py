"""Hakka Cards (하카 카드) — game id ``hakka``. RULES.md sections 3 and 4; seed
page ``seeds/004_445aa6cdbe2b6868.txt``.

Four seats; turn order is counter-clockwise (decreasing seat number). A game
is 4 counted hands (판). Each deal: the dealer and the three others get cards
one at a time from the dealer counter-clockwise; the seat opposite the dealer
(the *dreamer*) gets one card face down and sits the hand out (3.2). Phases:
``calling`` (call/pass, 3.3) → ``playing`` (tricks, 3.5–3.7) → ``scoring``
(a short intermission showing the result, 3.8) → next deal, or ``finished``.

Cards, Elders, patterns and the meaning of **lowest** are in
:mod:`ttanjit.games.hakka_patterns`; payments in
:mod:`ttanjit.games.hakka_scoring`; views in :mod:`ttanjit.games.hakka_view`.

``legal_actions(seat)`` offers: ``call``/``pass`` to the speaker; to the
leader every legal single (3.6), every run and every set in hand; to a
follower every pattern in hand that beats the best so far, plus the
representative discards of ``hakka_patterns.discard_options`` (the lowest
n - 1 cards plus any one other card; any n cards are accepted); ``resume``
to a seat on autopilot.

Decisions taken here (beyond RULES.md):
- After a counted hand the result is shown for 5,000 ms (phase ``scoring``,
  as penalty rows' intermission) before the next deal; a void deal is
  redealt at once.
- The dreamer's card is face down for everyone, the dreamer included, until
  the scoring reveal (``hand_scored`` event, ``last_hand`` in views). A
  seat's own face-down discards are shown to that seat only.
- For Five Tigers the *winning cards* (for the dreamer's tricks) are the four
  1s and ``wan``; the dreamer can then hold no card of that number.
- Autopilot seats are played by the ``normal`` bot through the shard; the
  shard marks those actions ``"auto": true`` so they do not reset the
  consecutive-timeout count. Only ``resume`` ([직접 하기]) ends autopilot.
- Seats of kind ``empty`` are played by bots (3.1: bots fill empty seats).

Everyone plays (issue 14; RULES.md 3.2 and 3.3 read together). **Decision**:
in a game with fewer than four humans (seats of kind ``human`` at the start),
- hand 1's dealer is drawn at random among the seats whose opposite seat
  (the dreamer's) is not a human's, so no human sits out the first hand;
- a dealer who called keeps the deal for the next hand only when the seat
  opposite is not a human's (seed 004 says the dealer *may* continue,
  "계속 딜러를 할 수 있습니다"); when it is, the deal passes counter-clockwise
  as after a pass. So a bot that keeps calling never benches the human
  opposite for the rest of the game: a human does not sit out the first
  deal, and sits out two hands in a row only after void deals (which pass
  the deal on as before).
With four humans (or four bots) nothing changes: any seat may deal first
and a calling dealer always keeps the deal.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from ttanjit.games import hakka_view as views
from ttanjit.games.base import (
    ABANDONED,
    JSON,
    NO_FIELDS,
    Event,
    IllegalAction,
    InvalidAction,
    OneDeadline,
    SeatSpec,
    Setup,
    auto_flag,
    immutable,
)
from ttanjit.games.hakka_patterns import (
    ALWAYS_ELDER,
    CARD_SET,
    CARDS,
    FIVE_TIGERS,
    SINGLE,
    Pattern,
    classify,
    elders,
    lead_singles,
    low_key,
    lowest,
    play_actions,
    refusal_to_beat,
    sort_cards,
)
from ttanjit.games.hakka_scoring import (
    CLAIM_AT,
    FIVE_TIGERS_TRICKS,
    MAX_TRICKS,
    dreamer_tricks,
    settle,
)
from ttanjit.games.hakka_view import omniscient_state

SEATS = 4
HANDS = 4  # counted hands per game (3.1)
HAND_SIZE = 12
TURN_MS = 30_000  # 3.9
CAP_MS = 45 * 60_000  # 3.9: game-length cap (game time)
INTERMISSION_MS = 5_000  # module docstring
AUTOPILOT_AFTER = 3  # consecutive timeouts (3.9)
OPTION_KEYS = {"seats", "turn_ms", "absence_ms", "abandon_ms"}

CALLING, PLAYING, SCORING, FINISHED = "calling", "playing", "scoring", "finished"

MESSAGES: dict[str, str] = (
    {
        "not_calling": "지금은 콜하기 단계가 아니에요.",
        "not_playing": "지금은 카드를 낼 때가 아니에요.",
        "dreamer_sits_out": "드리머는 이번 판의 콜하기와 플레이에 참여하지 않아요.",
        "duplicate_cards": "같은 카드를 두 번 낼 수 없어요.",
        "card_not_in_hand": "그 카드는 손패에 없어요.",
        "bad_pattern": "단일 카드, 런(같은 모양 연속 3~9장), 세트(같은 숫자 3장 이상)만 낼 수 있어요.",
        "must_lead_highest_suit": "단일 카드는 상위 카드가 아닌 카드 중 가장 높은 모양(섭 > 곤 > 족 > 신)의 카드로 리드해야 해요.",
        "must_lead_non_elder": "상위 카드가 아닌 카드가 있으면 상위 카드를 단일 카드로 리드할 수 없어요.",
        "wrong_kind": "테이블의 패턴과 같은 종류(단일 카드·런·세트)로만 꺾을 수 있어요.",
        "wrong_size": "테이블의 패턴과 같은 장수여야 해요.",
        "cannot_beat": "테이블에서 가장 높은 패턴보다 높지 않아요. 꺾을 수 없으면 같은 장수를 엎어서 버려요.",
        "other_suit": "단일 카드는 같은 모양의 더 높은 카드로만 꺾을 수 있어요.",
        "elder_one_single": "섭 1, 신 1, 완신은 다른 단일 카드를 꺾을 수 없어요. 단일 카드로 리드할 때만 그 트릭을 가져가요.",
        "led_elder_one": "단일 카드로 시작한 섭 1, 신 1, 완신은 꺾을 수 없어요.",
        "cannot_discard_lead": "리드할 때는 카드를 버릴 수 없어요.",
    }
)


def ccw(seat: int) -> int:
    """The next seat counter-clockwise (decreasing seat number)."""
    return (seat - 1) % SEATS


@immutable
@dataclass(frozen=True, slots=True)
class TablePlay:
    seat: int
    cards: tuple[str, ...]
    pattern: Pattern | None  # None: discarded face down


def _options(raw: JSON) -> int:
    turn_ms = raw.get("turn_ms", TURN_MS)
    if not isinstance(turn_ms, int) or isinstance(turn_ms, bool) or not 1_000 <= turn_ms <= 600_000:
        raise ValueError("options.turn_ms must be an integer of milliseconds (default 30000)")
    unknown = set(raw) - OPTION_KEYS
    if unknown:
        raise ValueError(f"unknown hakka options: {', '.join(sorted(unknown))}")
    return turn_ms


class Hakka(OneDeadline):
    GAME: ClassVar[str] = "hakka"
    MESSAGES: ClassVar[dict[str, str]] = MESSAGES
    MIN_SEATS: ClassVar[int] = SEATS
    MAX_SEATS: ClassVar[int] = SEATS
    TURN_HAS_A_SEAT: ClassVar[bool] = True
    ACTIONS: ClassVar[Mapping[str, frozenset[str]]] = {
        "call": NO_FIELDS, "pass": NO_FIELDS, "play": frozenset({"cards"}),
        "discard": frozenset({"cards"}), "resume": NO_FIELDS}
    CAP_MS: ClassVar[int] = CAP_MS

    def __init__(self, setup: Setup) -> None:
        if len(setup.seats) != SEATS:
            raise ValueError("hakka is played by exactly 4 seats")
        super().__init__(setup)
        self.turn_ms = _options(setup.options)
        for i, deck in enumerate(setup.decks or []):
            if sorted(map(str, deck)) != sorted(CARDS) or len(deck) != len(CARDS):
                raise ValueError(f"decks[{i}] must hold each of the 37 hakka cards once")
        if setup.dealer is not None and not 0 <= setup.dealer < SEATS:
            raise ValueError("dealer must be a seat 0..3")
        self.bot_kind = [s.kind != "human" for s in setup.seats]
        self.phase = CALLING
        self.round = 1
        self.deal_no = 0  # deals so far, void ones included
        self.scores = [0] * SEATS
        self.timeouts = [0] * SEATS
        self.autopilot = [False] * SEATS
        self.winners: list[int] = []
        self.ended_by: str | None = None
        self.end_gt: int | None = None  # game time at the end: paused time excluded
        self.last_hand: JSON | None = None
        self.counters = {"hands": 0, "deals": 0, "void_deals": 0, "claims": 0,
                         "five_tigers": 0, "no_winner_hands": 0, "dreamer_paid": 0,
                         "tricks": 0, "timeouts": 0, "autopilot": 0}
        self.human_seat = [s.kind == "human" for s in setup.seats]
        self.dealer = setup.dealer if setup.dealer is not None else self._first_dealer()
        self.next_dealer = self.dealer
        self._deal(0, [])

    @classmethod
    def from_view(cls, view: JSON, hands: list[list[str]], discards: list[list[str]], *,
                  seed: int = 0) -> Hakka:
        """The position a seat's ``view`` shows, with the hidden cards chosen
        by the caller (python-chess's ``Board(fen)``): ``hands`` and
        face-down ``discards`` by seat (the viewer's own included; the
        dreamer's one card is its hand). Round, dealer, calls, tricks, scores,
        Elders and the table (a face-down play is the last cards of that
        seat's ``discards``) come from the view; four normal bots, the turn's
        timer starting at ``t`` 0, nobody on autopilot; ``seed`` drives later
        deals. Bots search determinised games with it."""
        e = cls(Setup("hakka", {}, [SeatSpec("bot", "normal")] * SEATS, 0,
                      dealer=view["dealer"]))
        e.round = view["round"]
        e.deal_no = view["deal"]
        e.scores = list(view["scores"])
        e.dealer = view["dealer"]
        e.dreamer = view["dreamer"]
        e.tricks = list(view["tricks"])
        e.played = list(view["played"])
        e.played_set = set(view["played"])
        e.won_cards = [[] for _ in range(SEATS)]
        e.calls = [dict(c) for c in view["calls"]]
        e.caller = view["caller"]
        e.privileged = view["privileged"]
        e.phase = view["phase"]
        e.turn = view["turn"]
        e.leader = view["leader"]
        e.autopilot = [False] * SEATS
        e.next_dealer = e.dealer
        if e.caller is not None:
            e.next_dealer = e.dealer if e.caller == e.dealer else ccw(e.dealer)
        e.deadline_gt = e.turn_ms
        e.hands = [list(h) for h in hands]
        e.discards = [list(d) for d in discards]
        table: list[TablePlay] = []
        best = -1
        for x in view["table"]:
            s = x["seat"]
            if x["kind"] == "discard":
                table.append(TablePlay(s, tuple(sort_cards(e.discards[s][-x["count"]:])), None))
            else:
                table.append(TablePlay(s, tuple(x["cards"]), classify(x["cards"])))
                if s == view["best"]:
                    best = len(table) - 1
        e.table = table
        e.best = best
        e.rng = random.Random(seed)
        return e

    # -- the hand ------------------------------------------------------------
    def _benches_human(self, dealer: int) -> bool:
        """Whether ``dealer`` dealing makes a human the dreamer in a game with
        a bot seat (module docstring: everyone plays)."""
        return not all(self.human_seat) and self.human_seat[(dealer + 2) % SEATS]

    def _first_dealer(self) -> int:
        """Hand 1's dealer: at random among the seats that bench no human."""
        cands = [d for d in range(SEATS) if not self._benches_human(d)]
        return cands[self.rng.randrange(len(cands))]

    def _next(self, seat: int) -> int:
        """The next active seat counter-clockwise (skips the dreamer)."""
        seat = ccw(seat)
        return ccw(seat) if seat == self.dreamer else seat

    @property
    def active(self) -> list[int]:
        """The three active seats in turn order from the dealer."""
        d = self.dealer
        return [d, ccw(d), ccw(ccw(ccw(d)))]

    def _deal(self, gt: int, events: list[Event]) -> None:
        """3.2: one card each from the dealer counter-clockwise (the dreamer's
        only card among them), then the three active seats until 12 each."""
        decks = self.setup.decks or []
        if self.deal_no < len(decks):
            deck = [str(c) for c in decks[self.deal_no]]
        else:
            deck = list(CARDS)
            self.rng.shuffle(deck)
        self.deal_no += 1
        self.counters["deals"] += 1
        d = self.dealer
        self.dreamer = (d + 2) % SEATS
        hands: list[list[str]] = [[] for _ in range(SEATS)]
        for i in range(SEATS):
            hands[(d - i) % SEATS].append(deck[i])
        active = self.active
        for i, card in enumerate(deck[SEATS:]):
            hands[active[i % 3]].append(card)
        self.hands = [sort_cards(h) for h in hands]
        self.tricks = [0] * SEATS
        self.played: list[str] = []  # face up, in order, this hand
        self.played_set: set[str] = set()
        self.discards: list[list[str]] = [[] for _ in range(SEATS)]
        self.won_cards: list[list[str]] = [[] for _ in range(SEATS)]
        self.table: list[TablePlay] = []
        self.best = -1  # index in table of the best pattern so far
        self.last_trick: JSON | None = None
        self.leader: int | None = None
        self.calls: list[JSON] = []
        self.caller: int | None = None
        self.privileged: int | None = None
        self.phase = CALLING
        self.turn: int | None = d
        self.deadline_gt: int | None = gt + self.turn_ms
        events.append(Event(
            "dealt",
            {"round": self.round, "deal": self.deal_no, "dealer": d, "dreamer": self.dreamer,
             "hand_counts": [len(h) for h in self.hands]},
            {s: {"hand": list(self.hands[s])} for s in active},
        ))
        events.append(Event("turn", {"seat": d, "phase": CALLING,
                                     "deadline": self._deadline_t()}))

    def elder_set(self) -> frozenset[str]:
        return elders(self.played_set)

    def _set_turn(self, gt: int, seat: int, events: list[Event]) -> None:
        self.turn = seat
        self.deadline_gt = gt + self.turn_ms
        events.append(Event("turn", {"seat": seat, "phase": self.phase,
                                     "deadline": self._deadline_t()}))

    # -- calling (3.3) -------------------------------------------------------
    def _speak(self, gt: int, seat: int, call: bool, events: list[Event]) -> None:
        self.calls.append({"seat": seat, "call": call})
        events.append(Event("called" if call else "passed", {"seat": seat}))
        if call:
            self.caller = seat
            self.privileged = seat if seat != self.dealer else None
            keeps = seat == self.dealer and not self._benches_human(self.dealer)
            self.next_dealer = self.dealer if keeps else ccw(self.dealer)
            events.append(Event("calling_ended", {"caller": seat, "privileged": self.privileged}))
            self._start_play(gt, events)
        elif len(self.calls) == 3:
            self.counters["void_deals"] += 1
            events.append(Event("void_deal", {"dealer": self.dealer,
                                              "next_dealer": ccw(self.dealer)}))
            self.dealer = ccw(self.dealer)
            self._deal(gt, events)
        else:
            self._set_turn(gt, self._next(seat), events)

    def _start_play(self, gt: int, events: list[Event]) -> None:
        for s in self.active:
            if FIVE_TIGERS <= set(self.hands[s]):
                self.counters["five_tigers"] += 1
                events.append(Event("hand_won", {"seat": s, "how": "five_tigers",
                                                 "tricks": FIVE_TIGERS_TRICKS,
                                                 "shown": sort_cards(FIVE_TIGERS)}))
                self._end_hand(gt, s, FIVE_TIGERS_TRICKS, "five_tigers",
                               sort_cards(FIVE_TIGERS), events)
                return
        if self._claim(gt, self.dealer, events):
            return
        self.phase = PLAYING
        self.leader = self.dealer
        self._set_turn(gt, self.dealer, events)

    # -- play (3.5, 3.6) -----------------------------------------------------
    def _check_play(self, seat: int, cards: list[str]) -> Pattern:
        pattern = classify(cards)
        if pattern is None:
            raise IllegalAction("bad_pattern")
        if not self.table:
            if pattern.kind == SINGLE:
                el = self.elder_set()
                if cards[0] not in lead_singles(self.hands[seat], el, seat == self.privileged):
                    raise IllegalAction("must_lead_non_elder" if cards[0] in el
                                        else "must_lead_highest_suit")
            return pattern
        why = refusal_to_beat(pattern, self._best_pattern(), self.best == 0)
        if why is not None:
            raise IllegalAction(why)
        return pattern

    def _best_pattern(self) -> Pattern:
        p = self.table[self.best].pattern
        assert p is not None
        return p

    def _put(self, gt: int, seat: int, cards: list[str], pattern: Pattern | None,
             events: list[Event]) -> None:
        hand = self.hands[seat]
        for c in cards:
            hand.remove(c)
        if pattern is not None:
            before = self.elder_set()
            self.played.extend(pattern.cards)
            self.played_set.update(pattern.cards)
            self.best = len(self.table)
            self.table.append(TablePlay(seat, pattern.cards, pattern))
            data: JSON = {"seat": seat, "cards": list(pattern.cards), "kind": pattern.kind,
                          "lead": self.best == 0}
            after = self.elder_set()
            if after != before:
                data["elders"] = sort_cards(after)
            events.append(Event("played", data))
        else:
            self.discards[seat].extend(cards)
            self.table.append(TablePlay(seat, tuple(sort_cards(cards)), None))
            events.append(Event("discarded", {"seat": seat, "count": len(cards)},
                                {seat: {"cards": sort_cards(cards)}}))
        if len(self.table) == 3:
            self._finish_trick(gt, events)
        else:
            self._set_turn(gt, self._next(seat), events)

    def _finish_trick(self, gt: int, events: list[Event]) -> None:
        win = self.table[self.best]
        w = win.seat
        self.tricks[w] += len(win.cards)
        self.won_cards[w].extend(win.cards)
        self.counters["tricks"] += 1
        self.last_trick = {
            "winner": w,
            "plays": [{"seat": p.seat, "cards": list(p.cards)} if p.pattern is not None
                      else {"seat": p.seat, "discarded": len(p.cards)} for p in self.table],
        }
        events.append(Event("trick_won", {"seat": w, "cards": list(win.cards),
                                          "tricks": len(win.cards), "total": self.tricks[w]}))
        self.table = []
        self.best = -1
        if self._claim(gt, w, events):
            return
        if not any(self.hands[s] for s in self.active):
            self._end_hand(gt, None, 0, "no_winner", [], events)
            return
        self.leader = w
        self._set_turn(gt, w, events)

    # -- claim and scoring (3.7, 3.8) ----------------------------------------
    def _claim(self, gt: int, first: int, events: list[Event]) -> bool:
        """The automatic claim, in turn order from ``first``."""
        el = self.elder_set()
        s = first
        for _ in range(3):
            held = [c for c in self.hands[s] if c in el]
            if self.tricks[s] + len(held) >= CLAIM_AT:
                count = min(MAX_TRICKS, self.tricks[s] + len(held))
                self.counters["claims"] += 1
                events.append(Event("hand_won", {"seat": s, "how": "claim", "tricks": count,
                                                 "won": self.tricks[s], "shown": held}))
                self._end_hand(gt, s, count, "claim", [*self.won_cards[s], *held], events)
                return True
            s = self._next(s)
        return False

    def _end_hand(self, gt: int, winner: int | None, count: int, how: str,
                  winning: list[str], events: list[Event]) -> None:
        card = self.hands[self.dreamer][0]
        el = self.elder_set()
        if winner is None:
            dt, deltas = 0, [0] * SEATS
            self.counters["no_winner_hands"] += 1
        else:
            dt = dreamer_tricks(card, winning)
            deltas = settle(winner, count, self.dreamer, dt, self.active, self.privileged)
            if dt >= CLAIM_AT:
                self.counters["dreamer_paid"] += 1
        self.scores = [a + b for a, b in zip(self.scores, deltas, strict=True)]
        self.counters["hands"] += 1
        self.last_hand = {
            "round": self.round, "dealer": self.dealer, "dreamer": self.dreamer,
            "privileged": self.privileged, "winner": winner, "how": how, "tricks": count,
            "winning_cards": list(winning), "dreamer_card": card, "dreamer_tricks": dt,
            "deltas": deltas, "scores": list(self.scores),
            # which of them are Elders (shown starred, as in the hand: the
            # result showed 섭 1 with no ★, trial finding): the held ones
            # counted at a claim, and 섭 1, 신 1, 완신 always
            "elders": [c for c in winning if c in ALWAYS_ELDER or c in el],
        }
        events.append(Event("hand_scored", dict(self.last_hand)))
        self.turn = None
        if self.round >= HANDS:
            top = max(self.scores)
            self._finish(gt, "hands", [s for s in range(SEATS) if self.scores[s] == top], events)
        else:
            self.phase = SCORING
            self.deadline_gt = gt + INTERMISSION_MS

    def _next_hand(self, gt: int, events: list[Event]) -> None:
        self.round += 1
        self.dealer = self.next_dealer
        self._deal(gt, events)

    def _finish(self, gt: int, ended_by: str, winners: list[int], events: list[Event]) -> None:
        self.phase = FINISHED
        self.finished = True
        self.turn = None
        self.deadline_gt = None
        self.ended_by = ended_by
        self.winners = winners
        self.end_gt = gt
        events.append(Event("game_ended", {"ended_by": ended_by, "winners": list(winners),
                                           "scores": list(self.scores)}))

    # -- the clock (3.9, 4) --------------------------------------------------
    def _fire(self, kind: int, gt: int, events: list[Event]) -> None:
        if self.phase == SCORING:
            self._next_hand(gt, events)
        else:
            self._timeout(gt, events)

    def _timeout(self, gt: int, events: list[Event]) -> None:
        """3.9: pass when calling; lead the lowest legal single; discard the
        lowest cards when following."""
        seat = self.turn
        assert seat is not None
        self.timeouts[seat] += 1
        self.counters["timeouts"] += 1
        events.append(Event("timeout", {"seat": seat}))
        if (self.timeouts[seat] >= AUTOPILOT_AFTER and not self.autopilot[seat]
                and not self.bot_seats()[seat]):
            self.autopilot[seat] = True
            self.counters["autopilot"] += 1
            events.append(Event("autopilot", {"seat": seat, "on": True, "reason": "timeouts"}))
        if self.phase == CALLING:
            self._speak(gt, seat, False, events)
            return
        el = self.elder_set()
        if not self.table:
            singles = lead_singles(self.hands[seat], el, seat == self.privileged)
            card = min(singles, key=lambda c: low_key(c, el))
            self._put(gt, seat, [card], classify([card]), events)
        else:
            n = len(self.table[0].cards)
            self._put(gt, seat, lowest(self.hands[seat], el, n), None, events)

    def _end_abandoned(self, t: int, events: list[Event]) -> None:
        """RULES.md 4 (abandonment): ended, no winner."""
        self._finish(self.presence.game_time(t), ABANDONED, [], events)

    def _bot_takes_seat(self, t: int, seat: int, reason: str) -> Event:
        ev = super()._bot_takes_seat(t, seat, reason)
        self.autopilot[seat] = False
        self.timeouts[seat] = 0
        return ev

    # -- inputs --------------------------------------------------------------
    def _act(self, t: int, seat: int, action: JSON, events: list[Event]) -> JSON | None:
        kind = action["type"]
        auto = auto_flag(action)
        if kind == "resume":
            if not self.autopilot[seat]:
                raise IllegalAction("not_on_autopilot")
            self.autopilot[seat] = False
            self.timeouts[seat] = 0
            events.append(Event("autopilot", {"seat": seat, "on": False, "reason": "resume"}))
            return None
        gt = self.presence.game_time(t)
        if kind in ("call", "pass"):
            self._check_turn(seat, CALLING, "not_calling")
            if not auto:
                self.timeouts[seat] = 0
            self._speak(gt, seat, kind == "call", events)
            return None
        cards = _parse_cards(action.get("cards"))
        self._check_turn(seat, PLAYING, "not_playing")
        hand = self.hands[seat]
        if any(c not in hand for c in cards):
            raise IllegalAction("card_not_in_hand")
        pattern: Pattern | None = None
        if kind == "play":
            pattern = self._check_play(seat, cards)
        elif not self.table:
            raise IllegalAction("cannot_discard_lead")
        elif len(cards) != len(self.table[0].cards):
            raise IllegalAction("wrong_size")
        if not auto:
            self.timeouts[seat] = 0
        self._put(gt, seat, cards, pattern, events)
        return None

    def _check_turn(self, seat: int, phase: str, code: str) -> None:
        if seat == self.dreamer:
            raise IllegalAction("dreamer_sits_out")
        if self.phase != phase:
            raise IllegalAction(code)
        if seat != self.turn:
            raise IllegalAction("not_your_turn")

    # -- what seats may do and see ---------------------------------------------
    def legal_actions(self, seat: int) -> list[JSON]:
        out: list[JSON] = []
        if self.finished or not 0 <= seat < SEATS:
            return out
        if seat == self.turn and self.phase == CALLING:
            out = [{"type": "call"}, {"type": "pass"}]
        elif seat == self.turn and self.phase == PLAYING:
            out = self._play_actions(seat)
        if self.autopilot[seat]:
            out.append({"type": "resume"})
        return out

    def _play_actions(self, seat: int) -> list[JSON]:
        best = self._best_pattern() if self.table else None
        lead_size = len(self.table[0].cards) if self.table else 0
        return play_actions(self.hands[seat], self.elder_set(), seat == self.privileged,
                            best, self.best == 0, lead_size)

    def actors(self) -> list[int]:
        """Seats with a game action now (cheaper than ``legal_actions``)."""
        if self.finished:
            return []
        out = {s for s in range(SEATS) if self.autopilot[s]}
        if self.turn is not None and self.phase in (CALLING, PLAYING):
            out.add(self.turn)
        return sorted(out)

    def public_view(self) -> JSON:
        return views.public_view(self)

    def private_view(self, seat: int) -> JSON:
        if not 0 <= seat < SEATS:
            return {"seat": None}
        return views.private_view(self, seat)

    def bot_seats(self) -> list[bool]:
        return [self.bot_kind[s] or self.presence.substituted[s] for s in range(SEATS)]

    def state(self) -> JSON:
        return omniscient_state(self)

    def result(self) -> JSON:
        return {
            "winners": list(self.winners),
            "ended_by": self.ended_by,
            "scores": list(self.scores),
            "substituted": list(self.presence.substituted),
            "length_ms": self.end_gt if self.end_gt is not None
            else self.presence.game_time(self.now),
            "counters": dict(self.counters),
        }


def _parse_cards(raw: object) -> list[str]:
    if not isinstance(raw, list) or not raw or len(raw) > HAND_SIZE:
        raise InvalidAction("cards must be a list of 1 to 12 card codes")
    if not all(isinstance(c, str) for c in raw):
        raise InvalidAction("card codes are strings")
    if any(c not in CARD_SET for c in raw):
        raise InvalidAction("unknown card")  # malformed (games.base)
    if len(set(raw)) != len(raw):
        raise IllegalAction("duplicate_cards")
    return list(raw)
