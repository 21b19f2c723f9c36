"""What a player does in the web client, as Playwright steps: sign in, find a
game, and play each game by clicking the way a person would (the client
never highlights playable cards, so a One Card player tries a card and reads
the refusal, as the seed page says people do).

The helpers expect a page made by conftest's ``new_page``: its context has
``ttanjit.anim`` = ``fast`` in localStorage (the waits here allow for quick
animations only), :data:`FRAME_LOG` installed before the client loads
(``JS_STAMP`` and :func:`assert_update_frames_only` read ``window.__frames``),
the ko-KR locale (the texts compared are the client's Korean), and a 20 s
default timeout (most waits here give none of their own)."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

from ttanjit.games import engine_class
from ttanjit.games.base import SeatSpec, Setup
from ttanjit.games.onecard_cards import STRENGTH, refusal

ROOT = Path(__file__).resolve().parents[2]
# Screenshots of every screen the tests reach: to a scratch folder, so `make
# test` leaves the work tree as it was; `make screenshots` sets
# TTANJIT_SCREENSHOTS=docs/screenshots to refresh the README's pictures.
SHOTS = Path(os.environ.get("TTANJIT_SCREENSHOTS")
             or Path(tempfile.gettempdir()) / "ttanjit-screenshots").resolve()

# The client's own state, read only to know when the screen has caught up.
JS_VIEW = "() => window.ttanjit.game.view"
JS_STAMP = """() => { const g = window.ttanjit.game;
  const results = (window.__frames || []).filter((f) => f.dir === 'in' && f.type === 'result').length;
  return {seq: g.gameSeq, refusals: g.refusals || 0, results, n: (window.__frames || []).length,
          v: g.view ? JSON.stringify(g.view) : ''}; }"""


# Every page records the frames of its WebSocket (an init script: before the
# client's modules load): what the client sends (WebSocket.prototype.send)
# and what it gets, in the order it handles them (a listener added when the
# socket is made runs before the client's onmessage). Only type, game_id,
# game_seq, cmd_id, code, an action's type and turn_key and the time (ms)
# are kept. Issue 13: the client never asks for a `sync` after a
# game's first view but right after a reconnect (`welcome`).
FRAME_LOG = """(() => {
  const log = window.__frames = [];
  const keep = (dir, data) => {
    try { const f = JSON.parse(data); log.push({dir, type: f.type, game_id: f.game_id ?? null,
      game_seq: f.game_seq ?? null, events: Array.isArray(f.events) ? f.events.length : null,
      cmd_id: f.cmd_id ?? null, code: f.code ?? null, act: f.action?.type ?? null,
      turn_key: f.action?.turn_key ?? null, t: Date.now()}); }
    catch { log.push({dir, type: '?'}); }
  };
  const Real = window.WebSocket;
  const send = Real.prototype.send;
  Real.prototype.send = function (data) { keep('out', data); return send.call(this, data); };
  window.WebSocket = class extends Real {
    constructor(...args) { super(...args); this.addEventListener('message', (e) => keep('in', e.data)); }
  };
})();"""


def frames(page: Any) -> list[dict[str, Any]]:
    """The frames this page's client sent and got so far (``FRAME_LOG``)."""
    return list(page.evaluate("() => window.__frames || []"))


def assert_update_frames_only(page: Any, game_id: str) -> int:
    """The game's frames since this page loaded: its first view came as a
    `view` (or an `update`), then `update` frames; the client sent no `sync`
    for it after that first view but the one right after each `welcome` (a
    reconnect). Returns the number of updates seen."""
    seen_view = False
    after_welcome = False
    updates = 0
    log = frames(page)
    for i, f in enumerate(log):
        if f["dir"] == "in" and f["type"] == "welcome":
            after_welcome = True
        elif f["dir"] == "in" and f["game_id"] == game_id and f["type"] in ("view", "update"):
            seen_view = True
            updates += f["type"] == "update"
        elif f["dir"] == "in" and f["type"] == "event":
            raise AssertionError(f"an `event` frame (gone since issue 13) at {i}: {f}")
        elif f["dir"] == "out" and f["type"] == "sync":
            if seen_view and not after_welcome:
                raise AssertionError(f"sync sent after the game's first view (frame {i}): "
                                     f"{log[max(0, i - 8):i + 1]}")
            after_welcome = False  # one sync answers one reconnect
    assert seen_view, f"no view of {game_id}: {log[-10:]}"
    return updates


def shot(page: Any, name: str, full_page: bool = False) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page, animations="disabled")
    return path


def sign_in(page: Any, nickname: str) -> None:
    page.fill("#nickname", nickname)
    page.get_by_role("button", name="손님으로 시작하기").click()
    page.wait_for_selector(".game-card")
    page.wait_for_selector('#net[data-state="open"]')


def join_room(guest: Any, code: str) -> None:
    """``guest`` (signed in) types a friend's room code on the lobby and is
    in the room."""
    guest.fill('input[name="code"]', code)
    guest.get_by_role("button", name="입장").click()
    guest.wait_for_selector(f'#room-code:has-text("{code}")')


def open_room(page: Any, game: str) -> str:
    """``page`` (signed in, on the lobby) opens a room of ``game``: its code."""
    page.locator(f'.game-card[data-game="{game}"] [data-act="create"]').click()
    return str(page.locator("#room-code").inner_text())


def host_and_guest(new_page: Any, game: str, names: tuple[str, str],
                   size: tuple[int, int]) -> tuple[Any, Any, str]:
    """Two people (browser contexts of ``size``): the first opens a room of
    ``game``, the second joins it by its code; once the host sees them.
    (host, guest, the room's code)"""
    host = new_page(width=size[0], height=size[1])
    sign_in(host, names[0])
    code = open_room(host, game)
    guest = new_page(width=size[0], height=size[1])
    sign_in(guest, names[1])
    join_room(guest, code)
    host.wait_for_selector(f'.seat .name:has-text("{names[1]}")')
    return host, guest, code


def start_with_a_bot(host: Any) -> None:
    """The room's host adds one bot (the level chosen on the room screen) and starts."""
    host.get_by_role("button", name="봇 넣기").click()
    host.wait_for_function("() => document.querySelectorAll('.seat.bot').length === 1")
    host.get_by_role("button", name="시작").click()


def quick_match(page: Any, game: str, seats: int | None = None) -> str:
    card = page.locator(f'.game-card[data-game="{game}"]')
    seat_select = card.locator(f'select[name="seats-{game}"]')
    if seats is not None and seat_select.count():
        seat_select.select_option(str(seats))
    card.get_by_role("button", name="빠른 대전").click()
    page.wait_for_selector(f'section.table[data-game="{game}"]', timeout=20_000)
    return str(page.evaluate("() => window.ttanjit.game.id"))


def wait_in_history(page: Any, game: str, game_id: str, timeout_s: float = 150) -> None:
    """Until 내 기록 lists the game (it has ended, its result is in), the
    list reloaded every 2 s (a game left to the bots is played out at once,
    some eighty bot decisions: slow on a busy machine)."""
    item = f'.history-item[data-game-id="{game_id}"]'
    other = "onecard" if game != "onecard" else "penalty_rows"
    page.evaluate(f"() => {{ location.hash = '#/history/{game}'; }}")
    end = time.monotonic() + timeout_s
    while not page.locator(item).count() and time.monotonic() < end:
        page.wait_for_timeout(2_000)
        page.evaluate(f"() => {{ location.hash = '#/history/{other}'; }}")  # and back: reloads it
        page.evaluate(f"() => {{ location.hash = '#/history/{game}'; }}")
        page.wait_for_selector("section.history h1")
    page.wait_for_selector(item, timeout=10_000)


def view(page: Any) -> dict[str, Any]:
    return page.evaluate(JS_VIEW) or {}


def table_state(page: Any) -> str:
    """Where a game stood (for a failing test's message): the seat's view
    without its cards, and the last frames of the connection."""
    v = {k: val for k, val in view(page).items() if k not in ("log", "rows", "discard")}
    screen = page.evaluate("""() => ({
      picked: (window.ttanjit.game.tableState || {}).sel,
      selected: [...document.querySelectorAll('.hand .card.selected')].map((e) => e.dataset.card),
      hand: [...document.querySelectorAll('.hand .card')].map((e) => e.dataset.card),
      disabled: [...document.querySelectorAll('[data-act]')].filter((e) => e.disabled)
        .map((e) => e.dataset.act),
      refusal: document.querySelector('#refusal')?.innerText || null })""")
    return f"view {v}; screen {screen}; last frames {frames(page)[-25:]}"


def wait_change(page: Any, before: dict[str, Any], timeout: float = 10.0,
                picker: bool = False, answer: bool = False) -> dict[str, Any]:
    """Wait until the client got a refusal or a new view after an action;
    ``answer``: until the action itself was answered (a refusal or a
    `result`), whatever else changed the view meanwhile (the bot plays on);
    ``picker``: a One Card suit picker that opens meanwhile gets a suit (the
    press that opens it sends nothing yet; when it sent nothing after all
    because the turn moved on and closed the picker, this returns at once
    with ``sent`` False). A timeout says where the action stopped: not
    sent, sent and not answered, or answered."""
    deadline = time.monotonic() + timeout
    one_card = picker
    while time.monotonic() < deadline:
        if picker and page.locator(".suit-picker").count():
            page.locator(".suit-picker [data-suit]").first.click()
            picker = False
        now = page.evaluate(JS_STAMP)
        if now["refusals"] != before["refusals"] or now["results"] != before["results"] or (
                not answer and now["v"] != before["v"]):
            return dict(now)
        if one_card and not page.locator(".suit-picker").count() and not onecard_my_turn(page) \
                and not _actions_since(page, before):
            return {**now, "sent": False}
        page.wait_for_timeout(40)
    log = frames(page)[before.get("n", 0):]
    sent = {f.get("cmd_id") for f in log if f["dir"] == "out" and f["type"] == "action"}
    answered = {f.get("cmd_id") for f in log if f["dir"] == "in" and f["type"] in ("result", "error")}
    where = ("no action was sent" if not sent else "answered" if sent & answered
             else "sent and not answered")
    state = page.evaluate("""() => ({net: window.ttanjit.net.state,
        waiting: [...window.ttanjit.net.pending.keys()],
        picker: !!document.querySelector('.suit-picker'),
        turn: window.ttanjit.game.view?.turn, seat: window.ttanjit.game.view?.seat})""")
    raise TimeoutError(f"the screen did not change after the action ({where}); {state}; "
                       f"frames since {log[-20:]}")


def _actions_since(page: Any, before: dict[str, Any]) -> bool:
    return bool(page.evaluate("(n) => (window.__frames || []).slice(n).some("
                              "(f) => f.dir === 'out' && f.type === 'action')", before.get("n", 0)))


def click_float_one_card(page: Any, catch: bool = False) -> bool:
    """Press the floating [원카드!] when it is up: to declare my own last
    card, or (``catch``) to catch another player's."""
    box = page.locator("#onecard-float")
    btn = box.locator('[data-act="one_card_float"]')
    try:
        if not (btn.count() and btn.is_visible()):
            return False
        if not catch and "내가 한 장" not in box.inner_text(timeout=500):
            return False
        btn.click(timeout=1000)
        return True
    except Exception:  # it went away (3 s are over, or someone pressed first)
        return False


# -- One Card ------------------------------------------------------------------
def onecard_my_turn(page: Any) -> bool:
    v = view(page)
    me = v.get("seat")
    return bool(v) and not v.get("finished") and v.get("turn") == me and me is not None \
        and me not in (v.get("eliminated") or []) and not v.get("paused")


def _rank(code: str) -> str:
    return "X" if code in ("BJ", "CJ") else code[:-1]


def onecard_tries(hand: list[str]) -> list[list[str]]:
    """What a player would try, in order: attack cards first (the opponent
    draws), a whole same-rank group before its single cards."""
    groups: dict[str, list[str]] = {}
    for c in hand:
        groups.setdefault(_rank(c), []).append(c)
    order = sorted(groups.values(), key=lambda g: (_rank(g[0]) not in ("2", "A", "X"), -len(g)))
    tries: list[list[str]] = []
    for g in order:
        if len(g) > 1:
            tries.append(g)
        tries += [[c] for c in g]
    return tries


def onecard_play_turn(page: Any) -> str:
    """Select cards and press [카드 내기]; a refused play is explained and
    deselected, the next one is tried; with nothing playable, [공격 N장
    받기], [1장 뽑기] or [카드 없음 · 넘기기]. Returns what was done."""
    refused = False
    v = view(page)
    # the cards the seat's view says cannot go first now are not tried (a
    # refused try costs a round trip: a long game under load ran out of time)
    cannot = v.get("cannot") or {}
    tries = [t for t in onecard_tries(list(v.get("hand") or [])) if not all(c in cannot for c in t)]
    for cards in tries:
        if not onecard_my_turn(page):
            return "not_my_turn"
        for code in cards:
            page.locator(f'.oc-hand .card[data-card="{code}"]').click()
        before = page.evaluate(JS_STAMP)
        page.locator('[data-act="play"]').click()
        now = wait_change(page, before, picker=True, answer=True)
        if now.get("sent") is False:  # the turn moved on under the suit picker
            return "not_my_turn"
        if now["refusals"] != before["refusals"]:
            assert page.locator("#refusal").is_visible()
            # deselect what is still selected (an update that arrived with
            # the refusal may have redrawn the hand already), then try the next
            for code in cards:
                page.evaluate("""code => {
                    const el = document.querySelector(
                        `.oc-hand .card.selected[data-card="${code}"]`);
                    if (el) el.click();
                }""", code)
            page.wait_for_selector(".oc-hand .card.selected", state="detached")
            refused = True
            continue
        if refused:  # a refusal no longer stands once a play is accepted (it stayed 5 s)
            page.wait_for_selector("#refusal", state="hidden", timeout=2_000)
        if len(view(page).get("hand") or []) == 1:
            # my last card: say 원카드 at once, as a player would (RULES.md
            # 1.7: a bot that presses first makes me draw 2; a test slowed by
            # a busy machine lost every such race and its game went on for
            # minutes)
            try:
                page.locator('#onecard-float [data-act="one_card_float"]').wait_for(
                    state="visible", timeout=1_500)
            except Exception:  # noqa: BLE001 - no window (e.g. the card won), or it is over
                pass
            click_float_one_card(page)
        return "play " + " ".join(cards)
    for act in ("take", "draw", "pass"):
        btn = page.locator(f'.oc-actions [data-act="{act}"]')
        if btn.count() and btn.is_enabled():
            before = page.evaluate(JS_STAMP)
            btn.click()
            wait_change(page, before, answer=True)
            return act
    return "nothing"


# -- 줄줄이 벌점 ------------------------------------------------------------------
def penalty_can_pick(page: Any) -> bool:
    """The screen (not only the client's state) offers a pick: the reveal
    animation of the last turn is over and the hand is enabled."""
    return bool(page.locator('.pr [data-act="confirm"]').count()
                and page.locator(".pr-hand .card:not([disabled])").count())


def penalty_pick(page: Any, turn: int) -> str:
    """Click a hand card, then a row, read the preview, confirm with the
    [58 → 2번 줄 확정] button. Returns the button's label, or "" when the
    screen moved on meanwhile (a reveal began): the caller looks again."""
    numbers = page.eval_on_selector_all(".pr-hand .card:not([disabled])",
                                        "els => els.map(e => e.dataset.card)")
    if not numbers:
        return ""
    number = numbers[turn % len(numbers)]
    assert int(number) in [c["card"] for c in view(page)["hand"]]
    row = 1 + turn % 4
    label = f"{number} → {row}번 줄 확정"
    confirm = page.locator(f'[data-act="confirm"]:has-text("{label}")')
    try:
        page.locator(f'.pr-hand .card[data-card="{number}"]').click(timeout=3_000)
        page.locator(f'.pr-row[data-row="{row}"]').click(timeout=3_000)
        confirm.wait_for(timeout=5_000)
    except Exception as e:
        if penalty_can_pick(page):
            state = page.evaluate("""() => ({
              confirm: document.querySelector('[data-act="confirm"]')?.textContent,
              selected: [...document.querySelectorAll('.pr-hand .card.selected')].map(e => e.dataset.card),
              chosen: [...document.querySelectorAll('.pr-row.chosen')].map(e => e.dataset.row),
              hold: window.ttanjit.game.holdRender,
              ts: JSON.stringify(window.ttanjit.game.tableState),
              key: [window.ttanjit.game.view.round, window.ttanjit.game.view.turn_no]})""")
            raise AssertionError(f"pick {label!r} not offered: {state}") from e
        return ""
    assert page.locator(".preview").is_visible()
    before = page.evaluate(JS_STAMP)
    confirm.click()
    wait_change(page, before, answer=True)
    return label


# -- 하카 카드 ---------------------------------------------------------------------
def hakka_my_turn(page: Any) -> bool:
    v = view(page)
    me = v.get("seat")
    return bool(v) and not v.get("finished") and v.get("turn") == me and me is not None \
        and v.get("phase") in ("calling", "playing")


def hakka_act(page: Any) -> str:
    v = view(page)
    if v["phase"] == "calling":
        before = page.evaluate(JS_STAMP)
        page.locator('.hk-actions [data-act="call"]').click()
        wait_change(page, before, answer=True)
        return "call"
    hand = page.locator(".hk-hand .card")
    codes = [hand.nth(i).get_attribute("data-card") for i in range(hand.count())]
    if not v.get("table"):  # lead: try singles until one is accepted
        for code in codes:
            if not hakka_my_turn(page):
                return "not_my_turn"
            page.locator(f'.hk-hand .card[data-card="{code}"]').click()
            before = page.evaluate(JS_STAMP)
            page.locator('.hk-actions [data-act="play"]').click()
            now = wait_change(page, before, answer=True)
            if now["refusals"] == before["refusals"]:
                return f"lead {code}"
            page.locator(f'.hk-hand .card.selected[data-card="{code}"]').click()
        return "nothing"
    first = v["table"][0]
    n = len(first.get("cards") or []) or int(first.get("count", 1))
    for code in codes[-n:]:  # the hand is shown highest first: discard the lowest
        page.locator(f'.hk-hand .card[data-card="{code}"]').click()
    before = page.evaluate(JS_STAMP)
    page.locator('.hk-actions [data-act="discard"]').click()
    wait_change(page, before, answer=True)
    return f"discard {n}"


# -- a table drawn from a view the real engine made ---------------------------------
NAMES = ["나"] + [f"봇{i} (어려움)" for i in range(2, 11)]  # up to ten seats (줄줄이 벌점)

# Render a table module into #app with a stand-in controller (no sign-in, so
# no lobby screen re-renders over it).
RENDER = """async ({file, game, v, seat, names, humans}) => {
  const mod = await import(`./js/${file}.js`);
  const seats = await import('./js/seats.js');
  const root = document.getElementById('app');
  const ctl = {
    id: 'craft-' + game, view: v, root, tableState: {}, rematch: null, final: null, emotes: {},
    info: {game, seat, options: {}, players: names.map((n, i) => (
      {seat: i, kind: i === seat || i < humans ? 'human' : 'bot', nickname: n, level: 'hard'}))},
    seat() { return seat; },
    names() { const o = {}; names.forEach((n, i) => { o[i] = n; }); return o; },
    at(t) { return typeof t === 'number' ? Date.now() + 15000 : null; },
    async act() { return null; }, render() { mod.render(this, root); },
    leave() {}, done() {}, mySeatIsHuman() { return !seats.playedByBot(this.view, seat); }, askRematch() {},
  };
  window.__ctl = ctl; window.__mod = mod;
  ctl.render();
  return true;
}"""


def listen_said(page: Any) -> None:
    """From now on, ``window.__said`` collects each text the polite live
    region (#announce) says."""
    page.evaluate("""() => { window.__said = []; const box = document.getElementById('announce');
      new MutationObserver(() => { if (box.textContent) window.__said.push(box.textContent); })
        .observe(box, {childList: true, characterData: true, subtree: true}); }""")


def new_engine(game: str, n: int, seed: int = 3, humans: int = 1,
               **options: Any) -> Any:
    """A new game's engine with ``humans`` people (the first seats) and hard
    bots in the other seats; ``options`` beside the seat count."""
    seats = [SeatSpec()] * humans + [SeatSpec("bot", "hard")] * (n - humans)
    return engine_class(game)(Setup(game, {"seats": n, **options}, seats, seed))


def engine_view(game: str, n: int, seed: int = 3, humans: int = 1,
                leave: tuple[int, ...] = ()) -> dict[str, Any]:
    """Seat 0's view of a new game with ``humans`` people (the first seats)
    and bots; the seats in ``leave`` have left (a bot took each over). Seat
    0 gone too, the spectator's view: what the shard sends its player then."""
    e = new_engine(game, n, seed, humans)
    for s in leave:
        assert e.apply(100, s, {"type": "leave"}).ok
    return dict(e.view(None if 0 in leave else 0))


def onecard_hand(v: dict[str, Any], hand: list[str], **public: Any) -> dict[str, Any]:
    """One Card view ``v`` with ``hand`` and the public fields given (``top``,
    ``suit``, ``pending``, ``twos_only`` …), its ``attack`` and ``cannot``
    made again from them with the engine's own tables, as the server's view
    has them (a view crafted with the dealt hand's ``cannot`` left a 7 that
    could go unplayable)."""
    out = {**v, **public, "hand": hand}
    out["attack"] = {c: STRENGTH[c] for c in hand if STRENGTH[c]}
    out["cannot"] = {c: why for c in hand if (why := refusal(
        c, out["top"], out["suit"], out["pending"], bool(out.get("twos_only")))) is not None}
    return out


def render(page: Any, file: str, game: str, v: dict[str, Any], seat: int = 0,
           humans: int = 1, names: list[str] | None = None) -> None:
    page.evaluate(RENDER, {"file": file, "game": game, "v": v, "seat": seat,
                           "names": (names or NAMES)[: v["n"]], "humans": humans})
