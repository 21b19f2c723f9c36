"""What every rules engine shares: events, refusals, results, the engine
interface, and the presence/clock rules of RULES.md section 4.

An engine is a deterministic state machine (DESIGN.md section 1): no I/O, no
clock, no asyncio. Every input carries ``t`` (ms since the game started); the
engine decides every deadline from those values. All randomness comes from
``self.rng``, a ``random.Random`` seeded from the record.

Contract used by the shard, the bots, the replay CLI and the tests:

- ``Engine(setup)`` builds the game from a :class:`Setup` (record header).
- ``apply(t, seat, action)`` -> :class:`Result`. ``seat``/``action`` ``None``
  is a clock-only input. A refused input changes nothing (not even the
  clock: a deadline that would fire before ``t`` does not fire).
  Malformed input is refused with code ``bad_action``.
- ``next_deadline()`` -> the ``t`` at which the engine needs a clock input,
  or ``None`` (finished). While every human is away (paused) that is the
  abandonment time (RULES.md 4, :meth:`Presence.abandon_at`).
- ``view(seat)`` -> what that seat may see (``None`` = spectator/public);
  ``view(seat) == {**public_view(), **private_view(seat)}`` and
  ``view(None) == {**public_view(), "seat": None}`` (issue 13). Every view
  of every game has the common fields of :data:`VIEW_FIELDS`, with the same
  names and meanings:

  - ``game``; ``seat`` (None for a spectator); ``n`` (number of seats);
  - ``seats``: one ``{"seat", "kind", "bot", "substituted", "autopilot",
    "connected"}`` per seat (:func:`seats_view`): ``kind`` is the record's
    seat kind (``"human"``/``"bot"``, One Card and 줄줄이 벌점 also
    ``"empty"``), ``bot`` = a bot plays the seat now (a bot seat or a
    substituted human), ``connected`` is false only while the seat's human is
    away (a bot's seat is connected); and ``"kept": true`` on a seat taken
    over once it was out of the game (rules 3: its place stands, nothing
    was left for the bot to play);
  - ``hand_counts`` (cards in each hand, by seat); ``turn`` (seat or None);
  - ``deadline`` (real ``t`` of the pending timer, None while there is none
    or the game is paused); ``paused``;
  - ``turn_key``: the turn or phase now, as the game time its deadline falls
    at (``deadline_gt``): a new one each time a turn or phase begins, the
    same across pauses, None when there is none. A game action may carry it
    (``{"type": "play", …, "turn_key": K}``): then it is applied only on
    that turn, and refused ``turn_passed`` on a later one — a move kept
    while the connection was down, sent once it is back, does not land on a
    turn the player has not seen (RULES.md 4: the clock runs while away);
  - ``finished``; ``winners`` (list of seats; empty while playing and when
    nobody won); ``ended_by`` (None while playing);
  - ``hand`` (own cards) only in a seat's view.

  The one game-over event of every game is ``game_ended`` ``{ended_by,
  winners, …}``.
- ``public_view()`` -> the fields everyone sees (no ``seat``), cheap: the
  shard builds it once per burst; ``private_view(seat)`` -> ``seat`` and
  the seat's own hidden fields, never a key ``public_view()`` also has.
- ``legal_actions(seat)`` -> game actions the seat may send now (never
  presence actions; ``one_card`` only when a press is meaningful is up to
  the game, see its docstring).
- ``state()`` -> the omniscient state (DESIGN.md 3.1 field names).
- ``clone()`` -> an independent copy: every field is copied by
  :func:`copy_state`, so no mutable object is shared (the record's
  :class:`Setup` excepted, which engines only read); a field added later is
  copied too (``tests/unit/test_engine_clone.py``).
- ``from_view(view, ...)`` (each engine) -> an engine in the position a
  seat's view shows, with the hidden cards the caller chooses (like
  python-chess's ``Board(fen)``): bots search determinised games with it.
- ``result()`` -> the finished game's outcome.
- ``finished`` -> bool.

What this module decides for every engine:

- **Deadlines** (:meth:`Engine._due`): the game-length cap, the 60 s absence
  substitutions (RULES.md 4) and the game's own timers
  (:meth:`Engine._timers`) are kept in game time; while every human is away
  the only deadline is the abandonment (real time). When several fall due at
  the same game time they fire in this order: the cap (:data:`CAP`: a game
  that is over fires nothing else), a One Card window (:data:`WINDOW`), an
  absence (:data:`ABSENCE`), the turn or phase timer (:data:`TURN`). Before
  issue 17 One Card fired its turn timer before the cap at the same ``t``;
  no recorded game reaches that tie.
- **Presence actions** (``disconnect``/``reconnect``/``leave``) are applied
  here for every game (:meth:`Engine._input`); an engine only extends
  :meth:`Engine._bot_takes_seat`.
- **Malformed vs illegal**: :class:`InvalidAction` is an input that is not an
  action of this game at all — wrong types, an action type the game does not
  have, a card code that names no card of the game (an unknown card) — code
  ``bad_action`` (an unknown action type keeps each game's recorded code,
  :attr:`Engine.UNKNOWN_ACTION`). :class:`IllegalAction` is a well-formed
  action the rules do not allow now.
- **Messages**: a refusal's Korean message is the engine's own
  (:attr:`Engine.MESSAGES`), else :data:`COMMON_MESSAGES`; one lookup,
  :func:`message_for`.

Events are seat-filtered: :meth:`Event.for_seat` merges the public part
with that seat's private part. Spectators get ``for_seat(None)``.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, TypeVar

JSON = dict[str, Any]

# RULES.md 4: presence timings. ``options.absence_ms`` may shorten it for
# tests only (not offered to rooms).
ABSENCE_MS = 60_000
# RULES.md 4 (abandonment): every human seat away this long in a row (real
# time) ends the game, no winner, unrated. ``options.abandon_ms`` may shorten
# it for tests only, like ``absence_ms``.
ABANDON_MS = 600_000
# The rules revision a game is played under (``Setup.rules``, the record's
# ``rules``): a record replays under the rules it was played by, so a game
# live across an upgrade that changed a rule replays as it was played.
# 1: a record without ``rules`` (the first rules);
# 2: One Card's eliminated players do not hold a game paused
#    (``onecard.OneCard``; RULES.md 1.8 and 4);
# 3: a seat taken over once it was out of the game (One Card's eliminated
#    player who left, or was away 60 s) keeps the place it was out at
#    (:attr:`Presence.kept`; the shard's result says ``kept``: before, the
#    rating counted it last, as a player who left a game in play —
#    RULES.md 1.8: they may watch, and going costs nothing more).
# A new field an input may carry is such a change as well when an older
# engine would ignore it (and record it as sent): 줄줄이 벌점's confirm
# with its pick — there a seat's view says the shard takes it
# (``confirm_with_pick``) and a client sends it only then, as a revision
# cannot keep an older release's shard from taking such an input. (No
# revision for it: the release that brought it wrote it under 3, and its
# shards replay it as picked, as this one does.)
RULES_REVISION = 3
ABANDONED = "abandoned"  # the result's ``ended_by``

# Deadline kinds in firing order at the same game time (module docstring).
CAP, WINDOW, ABSENCE, TURN, ABANDON = 0, 1, 2, 3, 4

PRESENCE_ACTIONS = frozenset({"disconnect", "reconnect", "leave"})
# fields any game action may have: ``type``; ``turn_key`` (module docstring);
# ``auto``, the shard's own mark (:func:`auto_flag`)
COMMON_FIELDS = frozenset({"type", "turn_key", "auto"})
NO_FIELDS: frozenset[str] = frozenset()  # an action of only those

# Common refusal codes and their Korean messages. Each engine has its own
# table (:attr:`Engine.MESSAGES`), looked up first by :func:`message_for`.
COMMON_MESSAGES: dict[str, str] = {
    "bad_action": "잘못된 요청이에요.",
    "unknown_action": "알 수 없는 동작이에요.",
    "bad_seat": "없는 자리예요.",
    "not_your_turn": "내 차례가 아니에요.",
    "game_finished": "이미 끝난 게임이에요.",
    "time_goes_back": "시간이 거꾸로 갈 수 없어요.",
    "seat_is_bot": "봇이 이어받은 자리예요. 구경만 할 수 있어요.",
    "not_human": "사람 자리가 아니에요.",
    "already_connected": "이미 연결되어 있어요.",
    "not_disconnected": "연결이 끊긴 상태가 아니에요.",
    "not_on_autopilot": "자동 진행 중이 아니에요.",
    "not_allowed_now": "지금은 할 수 없어요.",
    "turn_passed": "그 수를 고른 차례가 이미 끝나서 내지 않았어요.",
}


def message_for(code: str, messages: dict[str, str] | None = None) -> str:
    """The Korean message of a refusal code: the game's own table
    (``messages``, an engine's :attr:`Engine.MESSAGES`) first, then the
    common one."""
    if messages is not None and code in messages:
        return messages[code]
    return COMMON_MESSAGES.get(code) or COMMON_MESSAGES["not_allowed_now"]


class Refusal(Exception):
    """An input the game refuses. ``code`` is stable snake_case."""

    def __init__(self, code: str, message: str | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.explicit_message = message
        self.message = message or message_for(code)


class InvalidAction(Refusal):
    """Malformed: not an action of this game at all (python-chess's
    InvalidMoveError), an unknown card included. Code ``bad_action`` unless
    given (an unknown action type: :attr:`Engine.UNKNOWN_ACTION`)."""

    def __init__(self, detail: str = "", code: str = "bad_action") -> None:
        super().__init__(code)
        self.detail = detail


class IllegalAction(Refusal):
    """Well-formed but not allowed now (python-chess's IllegalMoveError)."""


@dataclass(slots=True)
class Event:
    """Something that happened. ``data`` is public; ``private[seat]`` is
    merged in for that seat only (e.g. the drawn card's face).

    Not frozen: a frozen dataclass's ``__init__`` costs ~3x (0.47 vs 0.17 µs),
    and every engine creates one or more per input. Treat events as values
    all the same: never change one after it left the engine."""

    type: str
    data: JSON = field(default_factory=dict)
    private: dict[int, JSON] | None = None

    def for_seat(self, seat: int | None) -> JSON:
        out: JSON = {"type": self.type, **self.data}
        if self.private is not None and seat is not None and seat in self.private:
            out.update(self.private[seat])
        return out

    def omniscient(self) -> JSON:
        out: JSON = {"type": self.type, **self.data}
        if self.private:
            out["private"] = {str(k): v for k, v in sorted(self.private.items())}
        return out


@dataclass(slots=True)
class Result:
    ok: bool
    events: list[Event] = field(default_factory=list)
    code: str | None = None
    message: str | None = None
    info: JSON | None = None  # extra reply data, e.g. the order used for a multi-card play

    def to_json(self) -> JSON:
        if self.ok:
            out: JSON = {"ok": True}
            if self.info:
                out.update(self.info)
            return out
        return {"ok": False, "code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class SeatSpec:
    kind: str = "human"  # "human" | "bot" | "empty"
    level: str | None = None  # bot level: easy | normal | hard

    @staticmethod
    def from_json(obj: Any) -> SeatSpec:
        if not isinstance(obj, dict):
            raise ValueError("seat must be an object")
        kind = obj.get("kind", "human")
        if kind not in ("human", "bot", "empty"):
            raise ValueError(f"seat kind must be human, bot or empty, not {kind!r}")
        level = obj.get("level")
        if kind == "bot":
            level = level or "normal"
            if level not in ("easy", "normal", "hard"):
                raise ValueError(f"bot level must be easy, normal or hard, not {level!r}")
        return SeatSpec(kind, level)

    def to_json(self) -> JSON:
        out: JSON = {"kind": self.kind}
        if self.level is not None:
            out["level"] = self.level
        return out


@dataclass(slots=True)
class Setup:
    """Everything a record says before its inputs (DESIGN.md 3.1)."""

    game: str
    options: JSON
    seats: list[SeatSpec]
    seed: int
    decks: list[list[str]] | None = None
    first_player: int | None = None
    dealer: int | None = None
    rules: int = RULES_REVISION  # a record without ``rules``: 1


class Presence:
    """RULES.md section 4, shared by every game.

    Tracks which human seats are connected, bot substitution after 60 s away
    or on ``leave``, and *game time*: while every human seat is
    disconnected, game clocks, absence counters and the length cap pause.
    A pause that lasts ``abandon_ms`` of real time ends the game
    (abandonment, :meth:`abandon_at`).

    Engines keep every deadline in game time (``gt``) and convert with
    :meth:`game_time` / :meth:`real_time`.
    """

    def __init__(self, seats: list[SeatSpec], absence_ms: int = ABSENCE_MS,
                 abandon_ms: int = ABANDON_MS) -> None:
        self.absence_ms = absence_ms
        self.abandon_ms = abandon_ms
        self.human = [s.kind == "human" for s in seats]
        self.connected = list(self.human)
        self.substituted = [False] * len(seats)
        # seats out of the game (One Card's eliminated, who may watch): a
        # game is not paused for them alone (nobody waits for their move)
        self.out = [False] * len(seats)
        # rules 3 on: a seat taken over once out of the game keeps its place
        self.keeps_out_place = False
        self.kept = [False] * len(seats)
        self.away_since_gt: list[int | None] = [None] * len(seats)
        self.paused_total = 0  # real ms spent paused so far
        self.paused_since: int | None = None  # real t when the pause began

    # -- time ------------------------------------------------------------
    def game_time(self, t: int) -> int:
        if self.paused_since is not None:
            return self.paused_since - self.paused_total
        return t - self.paused_total

    def real_time(self, gt: int) -> int | None:
        """Real ``t`` at which game time reaches ``gt`` (None while paused)."""
        if self.paused_since is not None:
            return None
        return gt + self.paused_total

    @property
    def paused(self) -> bool:
        return self.paused_since is not None

    def abandon_at(self) -> int | None:
        """RULES.md 4 (abandonment): the real ``t`` at which the game ends as
        abandoned — ``abandon_ms`` after every human seat went away — or
        None while a human is connected. The pause is exactly "every human
        seat (not a bot's, not a substituted one) disconnected", so a human
        who comes back ends the pause and the count starts again at the
        next one."""
        if self.paused_since is None:
            return None
        return self.paused_since + self.abandon_ms

    # -- who plays a seat --------------------------------------------------
    def is_active_human(self, seat: int) -> bool:
        return self.human[seat] and not self.substituted[seat]

    def any_human_present(self) -> bool:
        return any(
            self.is_active_human(s) and self.connected[s] for s in range(len(self.human))
        )

    def has_active_humans(self) -> bool:
        return any(self.is_active_human(s) for s in range(len(self.human)))

    def _update_pause(self, t: int) -> None:
        # every human away, and one of them still in the game to wait for
        should_pause = not self.any_human_present() and any(
            self.is_active_human(s) and not self.out[s] for s in range(len(self.human)))
        if should_pause and self.paused_since is None:
            self.paused_since = t
        elif not should_pause and self.paused_since is not None:
            self.paused_total += t - self.paused_since
            self.paused_since = None

    def next_substitution_gt(self) -> tuple[int, int] | None:
        """(game time, seat) of the earliest pending 60 s substitution."""
        away = self.away_since_gt
        if away.count(None) == len(away):  # the common case, at C speed
            return None
        best: tuple[int, int] | None = None
        for s, since in enumerate(self.away_since_gt):
            if since is not None and self.is_active_human(s):
                cand = (since + self.absence_ms, s)
                if best is None or cand < best:
                    best = cand
        return best

    # -- inputs (engines call these; they raise Refusal) ---------------------
    def disconnect(self, t: int, seat: int) -> Event:
        if not self.is_active_human(seat):
            raise IllegalAction("not_human" if not self.human[seat] else "seat_is_bot")
        if not self.connected[seat]:
            raise IllegalAction("not_allowed_now")
        gt = self.game_time(t)
        self.connected[seat] = False
        self.away_since_gt[seat] = gt
        self._update_pause(t)
        return Event("disconnected", {"seat": seat, "paused": self.paused})

    def reconnect(self, t: int, seat: int) -> Event:
        if not self.is_active_human(seat):
            raise IllegalAction("not_human" if not self.human[seat] else "seat_is_bot")
        if self.connected[seat]:
            raise IllegalAction("already_connected")
        self.connected[seat] = True
        self.away_since_gt[seat] = None
        self._update_pause(t)
        return Event("reconnected", {"seat": seat, "paused": self.paused})

    def substitute(self, t: int, seat: int, reason: str) -> Event:
        """``leave`` or 60 s away: a normal bot takes the seat for good."""
        if not self.is_active_human(seat):
            raise IllegalAction("not_human" if not self.human[seat] else "seat_is_bot")
        self.substituted[seat] = True
        self.kept[seat] = self.keeps_out_place and self.out[seat]  # nothing left to play for it
        self.connected[seat] = False
        self.away_since_gt[seat] = None
        self._update_pause(t)
        return Event("substituted", {"seat": seat, "reason": reason, "level": "normal"})

    def to_json(self) -> JSON:
        return {
            "absence_ms": self.absence_ms,
            "abandon_ms": self.abandon_ms,
            "human": list(self.human),
            "connected": list(self.connected),
            "substituted": list(self.substituted),
            "out": list(self.out),
            "keeps_out_place": self.keeps_out_place,
            "kept": list(self.kept),
            "away_since_gt": list(self.away_since_gt),
            "paused_total": self.paused_total,
            "paused_since": self.paused_since,
        }

    @classmethod
    def from_json(cls, obj: JSON) -> Presence:
        p = cls.__new__(cls)
        p.absence_ms = obj.get("absence_ms", ABSENCE_MS)
        p.abandon_ms = obj.get("abandon_ms", ABANDON_MS)
        p.human = list(obj["human"])
        p.connected = list(obj["connected"])
        p.substituted = list(obj["substituted"])
        p.out = list(obj.get("out", [False] * len(p.human)))
        p.keeps_out_place = bool(obj.get("keeps_out_place", False))
        p.kept = list(obj.get("kept", [False] * len(p.human)))
        p.away_since_gt = list(obj["away_since_gt"])
        p.paused_total = obj["paused_total"]
        p.paused_since = obj["paused_since"]
        return p


class Engine:
    """Base class of the three engines. Subclasses implement the game; this
    class holds what every game shares (module docstring): validation of
    ``t`` and seat, transactional refusal, the deadline scheduler, presence
    actions, refusal messages and copies."""

    GAME: ClassVar[str] = ""
    # The game's own code -> Korean message table: looked up first, so two
    # games may word a shared code (e.g. ``card_not_in_hand``) differently.
    MESSAGES: ClassVar[dict[str, str]] = {}
    MIN_SEATS: ClassVar[int] = 2
    MAX_SEATS: ClassVar[int] = 10
    # The game's own action types (presence actions are everyone's), each
    # with its fields beside ``type`` and :data:`COMMON_FIELDS`
    # (DESIGN.md 3.1): the shard refuses a player's action with any other
    # field (:meth:`foreign_fields`), so a record holds only these.
    ACTIONS: ClassVar[Mapping[str, frozenset[str]]] = {}
    # Code of an action type the game does not have (malformed either way;
    # the code differs by game because recorded games assert it).
    UNKNOWN_ACTION: ClassVar[str] = "unknown_action"
    CAP_MS: ClassVar[int] = 0  # the game-length cap, in game time
    # the turn or phase timer, in game time (None: none pending); its value
    # is the views' ``turn_key`` (module docstring)
    deadline_gt: int | None

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.n = len(setup.seats)
        self.rng = random.Random(setup.seed)
        timings = []
        for key, default in (("absence_ms", ABSENCE_MS), ("abandon_ms", ABANDON_MS)):
            ms = setup.options.get(key, default)
            if not isinstance(ms, int) or isinstance(ms, bool) or ms < 1000:
                raise ValueError(f"options.{key} must be an integer >= 1000")
            timings.append(ms)
        self.presence = Presence(setup.seats, *timings)
        self.now = 0  # last real t seen
        self.finished = False

    # -- to implement ----------------------------------------------------
    def _timers(self) -> Sequence[tuple[int, int]]:
        """The game's own pending timers: (game time, kind) with kind
        :data:`WINDOW` or :data:`TURN` (the cap and absences are the base's)."""
        raise NotImplementedError

    def _fire(self, kind: int, gt: int, events: list[Event]) -> None:
        """A timer of :meth:`_timers` is due at game time ``gt``."""
        raise NotImplementedError

    def _time_cap(self, gt: int, events: list[Event]) -> None:
        """The game-length cap (:attr:`CAP_MS`) is reached: end the game."""
        raise NotImplementedError

    def _end_abandoned(self, t: int, events: list[Event]) -> None:
        """End the game at real ``t`` with ``ended_by`` :data:`ABANDONED`, no
        winner (the engine's own game-over event and result)."""
        raise NotImplementedError

    def _act(self, t: int, seat: int, action: JSON, events: list[Event]) -> JSON | None:
        """Apply a game action of :attr:`ACTIONS` (clock already advanced,
        game not finished; presence actions never get here).

        Raise :class:`Refusal` *before* mutating anything: when no deadline
        fired on the way to ``t`` there is no saved copy to roll back to.
        Returns extra reply data (or None)."""
        raise NotImplementedError

    def view(self, seat: int | None) -> JSON:
        """What ``seat`` may see (``None`` or a seat the game does not have:
        a spectator's view): :meth:`public_view` plus :meth:`private_view`."""
        if seat is None or not 0 <= seat < self.n:
            return {**self.public_view(), "seat": None}
        return {**self.public_view(), **self.private_view(seat)}

    def public_view(self) -> JSON:
        """The fields every seat and spectator sees (``view(None)`` without
        ``seat``). The shard builds it once per burst and adds each seat's
        :meth:`private_view` to it (issue 13), so keep it cheap."""
        raise NotImplementedError

    def private_view(self, seat: int) -> JSON:
        """What ``view(seat)`` adds to :meth:`public_view`: ``seat`` and the
        seat's own hidden fields (``hand`` and the game's own), never a key
        :meth:`public_view` also has (``tests/unit/test_view_shape.py``)."""
        raise NotImplementedError

    def legal_actions(self, seat: int) -> list[JSON]:
        raise NotImplementedError

    def state(self) -> JSON:
        raise NotImplementedError

    def result(self) -> JSON:
        raise NotImplementedError

    # -- the deadline scheduler (module docstring) ---------------------------
    def _due(self) -> tuple[int, int, int] | None:
        """(real t, kind, seat) of what fires next, or None (finished).
        ``seat`` is the absent seat of an :data:`ABSENCE`, else -1."""
        if self.finished:
            return None
        p = self.presence
        if p.paused_since is not None:  # game time stands still
            return p.paused_since + p.abandon_ms, ABANDON, -1
        gt, kind, seat = self.CAP_MS, CAP, -1
        sub = p.next_substitution_gt()
        if sub is not None and sub[0] < gt:
            gt, kind, seat = sub[0], ABSENCE, sub[1]
        for tgt, tkind in self._timers():
            if tgt < gt or (tgt == gt and tkind < kind):
                gt, kind, seat = tgt, tkind, -1
        return gt + p.paused_total, kind, seat

    def next_deadline(self) -> int | None:
        """The real ``t`` at which the engine needs a clock input (None:
        finished); while paused, the abandonment time (RULES.md 4)."""
        due = self._due()
        return None if due is None else due[0]

    # a game played in turns names the seat whose move the turn's timer
    # waits for (its ``turn``); 줄줄이 벌점's pick waits for every seat
    TURN_HAS_A_SEAT: ClassVar[bool] = False

    def due_seat(self) -> int | None:
        """The one seat whose move the next deadline waits for (docs/
        websocket.md 3: ``deadline.seat``), else None: every seat's (줄줄이
        벌점's pick), a 원카드! window, a seat's substitution, the cap, a pause,
        a hand's intermission. The docs and the proto said it came; no frame
        had it (docs audit)."""
        if not self.TURN_HAS_A_SEAT:
            return None
        due = self._due()
        turn = getattr(self, "turn", None)
        return turn if due is not None and due[1] == TURN and isinstance(turn, int) else None

    def _advance(self, t: int, events: list[Event]) -> None:
        """Fire everything due by real ``t``, in time order, ties in the
        documented kind order."""
        while True:
            due = self._due()
            if due is None or due[0] > t:
                return
            rt, kind, seat = due
            if kind == ABANDON:
                self._end_abandoned(rt, events)
            elif kind == ABSENCE:
                events.append(self._bot_takes_seat(rt, seat, "absent"))
            elif kind == CAP:
                self._time_cap(rt - self.presence.paused_total, events)
            else:
                self._fire(kind, rt - self.presence.paused_total, events)

    def choice_made(self, seat: int) -> bool:
        """Whether ``seat``'s next move only completes a choice it made
        already (줄줄이 벌점's confirm of a standing pick): a bot takes it
        without a second thinking pause (RULES.md 4's pause is before a
        decision)."""
        return False

    @classmethod
    def foreign_fields(cls, action: JSON) -> list[str]:
        """The fields of ``action`` (a flat object) that its type does not
        have; none when it has no type the game has (the engine's own
        refusal says that: :attr:`UNKNOWN_ACTION`, ``bad_action``)."""
        kind = action.get("type")
        if not isinstance(kind, str) or (kind not in cls.ACTIONS and kind not in PRESENCE_ACTIONS):
            return []
        own = cls.ACTIONS.get(kind, NO_FIELDS)
        return sorted(k for k in action if k not in own and k not in COMMON_FIELDS)

    def _would_fire(self, t: int) -> bool:
        nd = self.next_deadline()
        return nd is not None and nd <= t

    # -- RULES.md 4, shared by every engine -------------------------------------
    def _bot_takes_seat(self, t: int, seat: int, reason: str) -> Event:
        """A normal bot takes the seat for good (``leave``, or away too long).
        Engines extend this to reset their own per-seat state."""
        return self.presence.substitute(t, seat, reason)

    def _input(self, t: int, seat: int, action: JSON, events: list[Event]) -> JSON | None:
        """A seat's input after the clock: presence actions here, game
        actions to :meth:`_act`."""
        if self.finished:
            raise IllegalAction("game_finished")
        kind = action["type"]
        if kind in PRESENCE_ACTIONS:
            if kind == "disconnect":
                events.append(self.presence.disconnect(t, seat))
            elif kind == "reconnect":
                events.append(self.presence.reconnect(t, seat))
            else:
                events.append(self._bot_takes_seat(t, seat, "left"))
            return None
        if kind not in self.ACTIONS:
            raise InvalidAction(f"unknown {self.GAME} action {kind!r}", self.UNKNOWN_ACTION)
        if "turn_key" in action:  # only on the turn it was chosen on (module docstring)
            key = action["turn_key"]
            if not isinstance(key, int) or isinstance(key, bool):
                raise InvalidAction("turn_key must be an integer")
            if key != self.deadline_gt:
                raise IllegalAction("turn_passed")
        return self._act(t, seat, action, events)

    # -- the one entry point -----------------------------------------------
    def apply(self, t: int, seat: int | None = None, action: JSON | None = None) -> Result:
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            return self._refused(InvalidAction("t must be a non-negative integer"))
        if t < self.now:
            return self._refused(IllegalAction("time_goes_back"))
        if seat is None and action is None:
            events: list[Event] = []
            self._advance(t, events)
            self.now = t
            return Result(True, events)
        if seat is None or action is None:
            return self._refused(InvalidAction("seat and action go together"))
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < self.n:
            return self._refused(IllegalAction("bad_seat"))
        if not isinstance(action, dict) or not isinstance(action.get("type"), str):
            return self._refused(InvalidAction("action must be an object with a type"))
        # Transactional: a refused input must leave no trace, including
        # deadlines fired on the way to ``t``. Copy only when something would
        # fire (rare); otherwise subclasses validate before mutating.
        saved = self._save() if self._would_fire(t) else None
        events = []
        try:
            self._advance(t, events)
            info = self._input(t, seat, action, events)
        except Refusal as exc:
            if saved is not None:
                self._load(saved)
            return self._refused(exc)
        self.now = t
        return Result(True, events, info=info)

    def _refused(self, exc: Refusal) -> Result:
        message = exc.explicit_message or message_for(exc.code, self.MESSAGES)
        return Result(False, [], code=exc.code, message=message)

    # -- copies --------------------------------------------------------------
    def _save(self) -> dict[str, Any]:
        return {k: copy_state(v) for k, v in self.__dict__.items() if k != "setup"}

    def _load(self, saved: dict[str, Any]) -> None:
        self.__dict__.update(saved)

    def clone(self) -> Self:
        """An independent copy (module docstring): nothing mutable is shared
        but the read-only :class:`Setup`."""
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self._save())
        new.setup = self.setup
        return new


# The fields every view of every game has (module docstring); ``hand`` is
# in a seat's view only.
VIEW_FIELDS = ("game", "seat", "n", "seats", "hand_counts", "turn", "deadline", "turn_key",
               "paused", "finished", "winners", "ended_by")


def seats_view(seats: list[SeatSpec], presence: Presence, bot: list[bool],
               autopilot: list[bool]) -> list[JSON]:
    """The common ``seats`` field of a view (module docstring): one object per
    seat. ``bot``: the seat is played by a bot now (bot seat or substituted)."""
    p = presence
    out = [{"seat": s, "kind": spec.kind, "bot": bot[s], "substituted": p.substituted[s],
            "autopilot": autopilot[s],
            "connected": p.connected[s] or not (p.human[s] and not p.substituted[s])}
           for s, spec in enumerate(seats)]
    if True in p.kept:  # rare (rules 3): only then a key more
        for s, d in enumerate(out):
            if p.kept[s]:
                d["kept"] = True
    return out


# Types whose values never change: shared by copies. Engines add their own
# frozen value classes with :func:`immutable`.
_SHARED: set[type] = {int, str, bool, float, bytes, type(None), frozenset}
T = TypeVar("T")



class OneDeadline(Engine):
    """An engine whose only timer of its own is one game-time deadline,
    ``deadline_gt`` (줄줄이 벌점's selection and intermission, Hakka's turn
    and intermission), and which ends through ``_finish(gt, ended_by,
    winners, events)``: the clock, the game-length cap and abandonment are
    the same for all such games and written once here."""

    def _finish(self, gt: int, ended_by: str, winners: list[int], events: list[Event]) -> None:
        raise NotImplementedError

    def _deadline_t(self) -> int | None:
        """The pending deadline in real time (None while there is none)."""
        if self.deadline_gt is None:
            return None
        return self.presence.real_time(self.deadline_gt)

    def _timers(self) -> Sequence[tuple[int, int]]:
        return () if self.deadline_gt is None else ((self.deadline_gt, TURN),)

    def _time_cap(self, gt: int, events: list[Event]) -> None:
        events.append(Event("time_cap", {"cap_ms": self.CAP_MS}))
        self._finish(gt, "time_cap", [], events)

    def _end_abandoned(self, t: int, events: list[Event]) -> None:
        """RULES.md 4 (abandonment): ended, no winner."""
        self._finish(self.presence.game_time(t), ABANDONED, [], events)


def immutable(cls: type[T]) -> type[T]:
    """Declare a class's instances values (a frozen dataclass of immutable
    fields): :func:`copy_state` shares them."""
    _SHARED.add(cls)
    return cls


def copy_state(v: Any) -> Any:
    """A copy of an engine field that shares no mutable object with ``v``:
    values of :data:`_SHARED` types are shared; lists, dicts, tuples and sets
    are copied (their items recursively); a ``random.Random`` gets its state
    copied; any other object with a ``__dict__`` is rebuilt field by field;
    anything else is ``copy.deepcopy``'d. Fast where engines need it: a
    container of immutable items is copied at C speed."""
    t = type(v)
    if t in _SHARED:
        return v
    if t is list:
        if set(map(type, v)) <= _SHARED:
            return v.copy()
        return [copy_state(x) for x in v]
    if t is dict:
        if set(map(type, v.values())) <= _SHARED:
            return v.copy()
        return {k: copy_state(x) for k, x in v.items()}
    if t is tuple:
        if set(map(type, v)) <= _SHARED:
            return v
        return tuple(copy_state(x) for x in v)
    if t is set:
        return v.copy()  # items are hashable, hence values
    if t is random.Random:
        r = random.Random()
        r.setstate(v.getstate())
        return r
    d = getattr(v, "__dict__", None)
    if type(d) is dict and not isinstance(v, type):
        new = object.__new__(t)
        new.__dict__.update({k: copy_state(x) for k, x in d.items()})
        return new
    return copy.deepcopy(v)


def auto_flag(action: JSON) -> bool:
    """The action's ``auto`` flag: set only by the shard on its own
    autopilot/bot actions (RULES.md 2.5, 3.9)."""
    auto = action.get("auto", False)
    if not isinstance(auto, bool):
        raise InvalidAction("auto must be true or false")
    return auto


# DESIGN.md 3.1's action JSON as a client may send it (the gateway and the
# shard check it before an engine or a record sees it; a 251-deep extra
# field once made a record message the encoder could not write, and the
# game stopped for good). Room options (the gateway) have the same shape.
FLAT_MAX_KEYS = 16
FLAT_MAX_ITEMS = 64  # a list's values (cards)
FLAT_MAX_TEXT = 64  # characters of a string value (card codes, action types)


def _flat_value(v: Any) -> bool:
    if isinstance(v, str):
        return len(v) <= FLAT_MAX_TEXT
    if isinstance(v, float):
        return math.isfinite(v)
    return v is None or isinstance(v, (bool, int))


def flat_object(obj: Any) -> bool:
    """An object of at most ``FLAT_MAX_KEYS`` fields whose values are
    numbers (finite), short strings, booleans, null or lists of those: an
    action or a room's options. Nothing nested, no long text."""
    if not isinstance(obj, dict) or len(obj) > FLAT_MAX_KEYS:
        return False
    for k, v in obj.items():
        if not isinstance(k, str) or len(k) > FLAT_MAX_TEXT:
            return False
        if isinstance(v, list):
            if len(v) > FLAT_MAX_ITEMS or not all(_flat_value(x) for x in v):
                return False
        elif not _flat_value(v):
            return False
    return True
