"""Issue 14 in a real browser: a table people come back to. Solo Hakka
against three hard bots to the end, 한 판 더 and quick reactions between two
players, the your-turn alert, the final result of an abandoned game, and a
test per playtest defect at the screen size it was seen at.

Defects that depend on a particular deal (an attack pending, a claim with
Elders) render the table's own module with a view made by the real engine
and then shaped to the case, so they are caught every time."""

from __future__ import annotations

import json
import re
import time
import urllib.request
from typing import Any

import pytest
from browserkit import (
    JS_STAMP,
    NAMES,
    assert_update_frames_only,
    engine_view,
    frames,
    hakka_act,
    hakka_my_turn,
    host_and_guest,
    join_room,
    new_engine,
    onecard_hand,
    onecard_my_turn,
    onecard_play_turn,
    penalty_can_pick,
    penalty_pick,
    quick_match,
    render,
    shot,
    sign_in,
    start_with_a_bot,
    view,
    wait_change,
    wait_in_history,
)

pytestmark = pytest.mark.e2e

def no_horizontal_scroll(page: Any) -> bool:
    return bool(page.evaluate(
        "() => document.documentElement.scrollWidth <= window.innerWidth + 1"))


def boxes_overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def in_viewport(page: Any, selector: str) -> bool:
    return bool(page.evaluate("""sel => { const el = document.querySelector(sel);
      if (!el) return false; const r = el.getBoundingClientRect();
      return r.height > 0 && r.top >= -1 && r.bottom <= window.innerHeight + 1; }""", selector))


# The lines a seat's 벌점 box shows, as rendered: its characters grouped by
# the top of their boxes (soft wraps included, which innerText leaves out).
PEN_LINES = """() => [...document.querySelectorAll('.pr-player .pen')].map((pen) => {
  const lines = []; let top = null;
  const walk = document.createTreeWalker(pen, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    for (let i = 0; i < t.length; i++) {
      const r = document.createRange(); r.setStart(t, i); r.setEnd(t, i + 1);
      const box = r.getBoundingClientRect();
      if (!box.width) continue;
      if (top === null || box.top > top + 4) { lines.push(""); top = box.top; }
      lines[lines.length - 1] += t.data[i];
    }
  }
  return lines.map((l) => l.replace(/\\s+/g, " ").trim());
})"""


# -- the defects ----------------------------------------------------------------
def test_empty_nickname_is_answered_in_korean(new_page: Any) -> None:
    """Defect: an empty nickname got the browser's English "Please fill out
    this field."; now the form says it in the client's words."""
    page = new_page(width=360, height=740)
    page.fill("#nickname", "")
    page.get_by_role("button", name="손님으로 시작하기").click()
    page.wait_for_selector('.form-error:has-text("닉네임을 입력해 주세요")')
    assert page.evaluate("() => document.querySelector('#nickname').validationMessage") == ""
    assert page.locator(".game-card").count() == 0


def test_a_nickname_of_emoji_is_typed_whole_and_a_long_one_is_said(new_page: Any) -> None:
    """Defect: the box's maxlength counted UTF-16 units, so typing 10 emoji
    (of the 16 characters the server allows) stopped at 8, cut without a
    word. Now the box takes what the server does, and a name over 16
    characters is said by the form, not sent."""
    page = new_page(width=360, height=740)
    box = page.locator("#nickname")
    box.fill("")
    box.press_sequentially("a" * 17)  # (typed: the browser holds it to maxlength)
    page.get_by_role("button", name="손님으로 시작하기").click()
    page.wait_for_selector('.form-error:has-text("닉네임은 16자까지예요.")')
    assert page.locator(".game-card").count() == 0
    box.fill("")
    box.press_sequentially("🃏" * 10)
    assert box.input_value() == "🃏" * 10
    page.get_by_role("button", name="손님으로 시작하기").click()
    page.wait_for_selector(".game-card")
    assert page.locator("#who").inner_text() == "🃏" * 10


def test_onecard_attacker_has_no_take_button(new_page: Any) -> None:
    """Defect (One Card, 2 players): after I attacked, my own bar showed a
    red, disabled "공격 3장 받기" — the opponent's to press, not mine."""
    page = new_page(width=1000, height=800)
    v = engine_view("onecard", 2)
    v.update(pending=3, turn=1)
    render(page, "onecard", "onecard", v)
    assert page.locator('.oc-actions [data-act="take"]').count() == 0
    assert page.locator('.oc-actions [data-act="draw"]').is_disabled()
    v.update(turn=0)  # and when it is mine to take, it is there
    render(page, "onecard", "onecard", v)
    assert page.locator('.oc-actions [data-act="take"]').inner_text() == "공격 3장 받기"


@pytest.mark.parametrize("eliminated", [True, False])
def test_an_eliminated_player_goes_without_being_told_it_costs(new_page: Any, eliminated: bool) -> None:
    """RULES.md 1.8 (an eliminated player may watch) and rules revision 3:
    going once out keeps the place (the result's ``kept``), so 나가기 asks
    nothing (it said "레이팅은 내가 꼴찌인 것으로 계산해요."); still in
    the game, it asks. The table's line says it may go."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 4, humans=3)
    if eliminated:  # seat 2 was out before me, its connection gone (not 연결 끊김: it is out)
        v.update(eliminated=[2, 0], hand=[], hand_counts=[0, 9, 0, 9], turn=1)
        v["seats"][2] = {**v["seats"][2], "connected": False}
    render(page, "onecard", "onecard", v, humans=3)
    if eliminated:
        assert page.locator(".oc-status").inner_text() == "탈락했어요. 남은 게임을 구경하거나 나가도 돼요."
        assert page.locator(".badge.away").count() == 0  # nor "연결 끊김" on a seat that is out
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    sent = page.evaluate("""async (v) => { const g = (await import('./js/game.js')).game;
      const { net } = await import('./js/net.js');
      const sent = []; net.action = (id, a) => { sent.push(a.type); return Promise.resolve({}); };
      g.id = 'out-game'; g.view = v; g.info = { game: 'onecard', seat: 0, players: [], options: {} };
      g.leave(); return sent; }""", v)
    if eliminated:
        assert asked == [] and sent == ["leave"]
    else:
        assert len(asked) == 1 and "꼴찌" in asked[0] and sent == []  # dismissed: stays


@pytest.mark.parametrize("width", [390, 1100])
def test_an_empty_draw_pile_is_an_empty_place(new_page: Any, width: int) -> None:
    """Trial nitpick: at "뽑기 더미 0장" the pile was still a full card back."""
    page = new_page(width=width, height=844)
    v = engine_view("onecard", 3)
    render(page, "onecard", "onecard", v)
    assert page.locator(".pile .card.back").count() == 1
    back = page.locator(".pile .card.back").bounding_box()
    v.update(draw_pile=0)
    page.evaluate("v => { window.__ctl.view = v; window.__ctl.render(); }", v)
    assert page.locator(".pile .card.back").count() == 0
    assert page.locator(".pile-count").inner_text() == "뽑기 더미 0장"
    empty = page.locator(".pile .empty-pile").bounding_box()
    assert back and empty and (round(empty["width"]), round(empty["height"])) == (round(back["width"]), round(back["height"]))


def test_onecard_elimination_toast_and_phone_toasts(new_page: Any) -> None:
    """Defects: the elimination toast said "20장이 넘어" (RULES.md 1.8: at 20
    or more) and stayed after 로비로; on a phone a toast covered the suit
    picker's 취소 and the [원카드!] button."""
    page = new_page(width=360, height=740)
    v = engine_view("onecard", 3)
    v = onecard_hand(v, ["7H", "5S", "9C", "KD"], turn=0, pending=0, hand_counts=[4, 7, 7],
                     top="9H", suit="H")  # (a 7 that can go: its suit is asked)
    render(page, "onecard", "onecard", v)
    page.evaluate("""() => { window.__mod.onEvent(window.__ctl, {type: 'eliminated', seat: 0, cards: 20});
      window.__mod.onEvent(window.__ctl, {type: 'false_call', seat: 1}); }""")
    toast = page.locator('.toast:has-text("탈락")')
    assert "20장 이상" in toast.inner_text() and "넘어" not in toast.inner_text()
    assert "남은 게임을 구경해요" in toast.inner_text()  # two still play
    # out of two, the game is over: nothing is left to watch (trial finding);
    # the result says why I am out, under no toast (the toast covered its
    # heading: UX audit)
    two = new_page(width=360, height=740)
    v2 = engine_view("onecard", 2)
    render(two, "onecard", "onecard", v2)
    two.evaluate("() => window.__mod.onEvent(window.__ctl, {type: 'eliminated', seat: 0, cards: 20})")
    assert two.locator(".toast").count() == 0
    v2.update(finished=True, winners=[1], eliminated=[0], turn=None)
    render(two, "onecard", "onecard", v2)
    assert "카드가 20장 이상이 되어 탈락했어요." in two.locator("section.results").inner_text()
    page.locator('.oc-hand .card[data-card="7H"]').click()
    page.locator('[data-act="play"]').click()
    page.wait_for_selector(".suit-picker")
    for target in ('[data-act="picker_cancel"]', '.my-row [data-act="one_card"]'):
        page.locator(target).scroll_into_view_if_needed()
        box = page.locator(target).bounding_box()
        for i in range(page.locator(".toast").count()):
            assert not boxes_overlap(box, page.locator(".toast").nth(i).bounding_box()), target
    shot(page, "onecard-picker-360")
    page.evaluate("() => { location.hash = '#/rules/onecard'; }")  # leaving the table
    page.wait_for_selector(".rules")
    assert page.locator(".toast").count() == 0


def test_a_refused_7_closes_the_suit_picker(new_page: Any) -> None:
    """Defect: after a 7 (or joker) and its suit were refused, the picker
    stayed open and pressing a suit again sent the same play."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 2)
    # (a 7 that can go, as far as the table can tell: one that cannot is
    # sent for its refusal with no suit asked)
    v = onecard_hand(v, ["7D", "5S"], turn=0, pending=0, hand_counts=[2, 7], top="9D", suit="D")
    render(page, "onecard", "onecard", v)
    page.evaluate("() => { window.__sent = 0; window.__ctl.act = async () => "
                  "{ window.__sent += 1; return null; }; }")  # refused, as the table's act says
    page.locator('.oc-hand .card[data-card="7D"]').click()
    page.locator('[data-act="play"]').click()
    page.locator('.suit-picker [data-suit="S"]').click()
    page.wait_for_selector(".suit-picker", state="detached", timeout=2_000)
    assert page.evaluate("() => window.__sent") == 1


def test_penalty_rows_phone_dock(new_page: Any) -> None:
    """Defect (줄줄이 벌점 at 360×740): picking meant scrolling down to the
    hand, up to the rows and down again, and the countdown scrolled away.
    With the rows in view, the hand, the confirm button and the countdown
    are on screen too."""
    page = new_page(width=360, height=740)
    v = engine_view("penalty_rows", 5)
    render(page, "penalty", "penalty_rows", v)
    card = v["hand"][3]["card"]
    page.locator('.pr-row[data-row="4"]').scroll_into_view_if_needed()
    assert in_viewport(page, '.pr-row[data-row="4"]')
    assert in_viewport(page, f'.pr-hand .card[data-card="{card}"]') or \
        page.locator(f'.pr-hand .card[data-card="{card}"]').is_visible()
    assert in_viewport(page, ".pr-dock .timer")
    assert in_viewport(page, '[data-act="confirm"]')
    # one countdown on a phone: the dock's (the header's said it again: trial nitpick)
    assert page.locator(".game-head .timer").is_hidden()
    page.locator('.pr-row[data-row="1"]').scroll_into_view_if_needed()
    assert in_viewport(page, ".pr-dock .timer") and in_viewport(page, '[data-act="confirm"]')
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    # all ten cards of the hand in view at once (defect: the hand scrolled
    # sideways, the cards past the edge out of sight)
    assert page.locator(".pr-hand .card").count() == 10
    assert page.evaluate("""() => { const hand = document.querySelector('.pr-hand');
      return hand.scrollWidth <= hand.clientWidth + 1 && [...hand.querySelectorAll('.card')].every((c) => {
        const r = c.getBoundingClientRect();
        return r.left >= 0 && r.right <= window.innerWidth && r.bottom <= window.innerHeight; }); }""")
    # a picked card of the hand's second row stays in its row (lifted, it
    # covered the card above it: trial nitpick)
    last = page.locator(".pr-hand .card").last
    last.click()
    page.wait_for_selector(".pr-hand .card.selected")
    picked = page.locator(".pr-hand .card.selected").bounding_box()
    others = page.locator(".pr-hand .card:not(.selected)")
    assert picked and not any(boxes_overlap(picked, others.nth(i).bounding_box()) for i in range(others.count()))
    shot(page, "penalty-rows-360")


def test_penalty_rows_reveal_clears_the_pick_from_the_dock(new_page: Any) -> None:
    """Trial nitpick: when my 확정 was the last one, the reveal began at once
    and the dock went on saying where my card would go ("… 뒤 2번째 자리에
    놓여요.") over a dead button until every card was placed. The reveal
    says what happens instead."""
    page = new_page(width=390, height=844)
    v = engine_view("penalty_rows", 4)
    card = v["hand"][9]["card"]
    v["selection"] = {"card": card, "row": 1}
    render(page, "penalty", "penalty_rows", v)
    assert page.locator(".pr-dock .preview").count() == 1
    page.evaluate("""(card) => { const c = window.__ctl;
      c.holdRender = 0; c.hold = () => { c.holdRender += 1; };
      c.release = () => { c.holdRender -= 1; if (!c.holdRender) c.render(); };
      window.__mod.onEvent(c, {type: 'revealed', round: c.view.round, turn: c.view.turn_no,
        picks: [{seat: 0, card, row: 1}, {seat: 1, card: 104, row: 2}]}); }""", card)
    dock = page.locator(".pr-dock").inner_text()
    assert "놓여" not in dock and "모두의 카드를 공개해요" in dock, dock
    assert page.locator('.pr-dock [data-act="confirm"]').count() == 0
    assert page.locator(".pr-dock .timer").count() == 0  # nor a countdown of a turn that is over


@pytest.mark.parametrize("n", [2, 3, 4, 5, 10])
@pytest.mark.parametrize("width,height", [(390, 844), (360, 740), (360, 640)])
def test_penalty_rows_every_row_above_the_dock_on_a_phone(new_page: Any, n: int, width: int, height: int) -> None:
    """Trial findings (390×844): with four at the table the fourth row
    started behind the dock, out of sight until a scroll, and again once
    seats had taken rows; with five (quick match's table) three lines of
    seats hid 4번 줄 again. A phone's row is one card high, its name and
    장/벌점 beside the cards, a seat's cards taken ride on its 벌점 line, and
    five or more seats are one strip swiped sideways, mine first: all four
    rows, the hand and the confirm button show at once. At 360×740 (last
    session's note: 4번 줄 32–56 px behind the dock, with four seats 3번 줄)
    four seats are a strip too and 남은 시간 sits beside the button."""
    page = new_page(width=width, height=height)
    v = engine_view("penalty_rows", n, seed=4)
    # later in a round (trial finding: a line "가져간 카드 N장" per seat
    # that took a row pushed 4번 줄 17–45 px under the dock): every seat has
    # taken cards, with two- and three-digit penalties, the hand still 9 cards
    taken = [[3, 13, 27, 45], [5, 8], [66, 70, 91], [11] * 10]
    v.update(hand=v["hand"][:9], taken=[taken[i % 4] for i in range(n)],
             round_penalties=[[23, 5, 17, 31][i % 4] for i in range(n)],
             penalties=[[88, 45, 61, 120][i % 4] for i in range(n)])
    # and a row of four cards worth 18 (a two-digit 벌점 pushed its row's cards right)
    row = v["rows"][3]
    row.update(cards=[{"card": c, "penalty": p} for c, p in ((18, 1), (33, 5), (55, 7), (66, 5))],
               count=4, end=66, penalty=18)
    render(page, "penalty", "penalty_rows", v, seat=n - 1)  # the last seat: mine shows first
    me = page.locator(".pr-player.me").bounding_box()
    assert me is not None and me["x"] >= 0 and me["x"] + me["width"] <= width, me
    if n > 4:  # the strip stays where it was swiped to when the table redraws (it went back to the start)
        at = page.evaluate("() => { const s = document.querySelector('.pr-players'); s.scrollLeft = 200;"
                           " return s.scrollLeft; }")  # where the snap leaves it
        page.evaluate("() => window.__ctl.render()")
        assert at > 0 and page.evaluate("() => document.querySelector('.pr-players').scrollLeft") == at
    assert page.evaluate("() => window.scrollY") == 0
    assert page.evaluate("""() => [...document.querySelectorAll('.pr-player .pen')].every(
      (e) => e.scrollWidth <= e.clientWidth + 1)"""), page.locator(".pr-player").all_inner_texts()
    if n > 3:
        assert "(10장)" in page.locator('.pr-player[data-seat="3"]').inner_text()
    # a seat's 벌점 box wraps between its two parts only (trial finding at
    # 360 px: "이번 판 14 (9장) ·" / "누적 14")
    for lines in page.evaluate(PEN_LINES):
        assert all(ln and ln[0] != "·" and ln[-1] != "·" for ln in lines), lines
        assert len(lines) in (1, 2) and lines[0].startswith("이번 판") and "누적" in lines[-1], lines
        assert len(lines) == 1 or lines[1].startswith("누적"), lines
    assert page.locator(".pr-player").count() == n
    # before a pick, and with one whose preview is two lines long (the dock
    # grows: at 360×740 4번 줄 went under it from 461 px: trial finding)
    low = min(c["card"] for c in v["hand"])
    ends = [(r["cards"][-1] if isinstance(r["cards"][-1], int) else r["cards"][-1]["card"]) for r in v["rows"]]
    high = max(range(4), key=lambda i: ends[i]) + 1  # the lowest card on the highest end: a take
    for pick in (None, {"card": low, "row": high}):
        if pick:
            page.evaluate("(p) => { window.__ctl.view.selection = p; window.__ctl.tableState = {}; window.__ctl.render(); }", pick)
            assert "가져가요" in page.locator(".pr-dock .preview").inner_text()
        dock = page.evaluate("() => document.querySelector('.pr-dock').getBoundingClientRect().top")
        for row in range(1, 5):
            box = page.locator(f'.pr-row[data-row="{row}"]').bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= dock, (pick, row, box, dock)
            info = page.locator(f'.pr-row[data-row="{row}"] .row-info').bounding_box()
            assert info is not None and info["height"] < 20, info  # "1장 · 벌점 2" on one line
        # every row's cards start in one column (a two-digit 벌점 pushed its row's right)
        lefts = page.eval_on_selector_all(".pr-row .row-cards", "els => els.map((e) => Math.round(e.getBoundingClientRect().left))")
        assert len(set(lefts)) == 1, lefts
    assert in_viewport(page, '[data-act="confirm"]')
    timer, confirm = (page.locator(sel).bounding_box() for sel in (".pr-dock .dock-timer", '[data-act="confirm"]'))
    assert timer and confirm and abs((timer["y"] + timer["height"] / 2) - (confirm["y"] + confirm["height"] / 2)) < 4
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    shot(page, f"penalty-rows-{width}-{n}")


@pytest.mark.parametrize("game,file", [("onecard", "onecard"), ("hakka", "hakka"),
                                       ("penalty_rows", "penalty")])
def test_table_header_controls_wrap_together(new_page: Any, game: str, file: str) -> None:
    """Watched by three (관전 3명) on a 390-pixel phone: 소리, 규칙 and 나가기
    stay on one line together, in view (defect: 나가기 wrapped onto a line
    of its own under the others in 원카드 and 하카 카드)."""
    page = new_page(width=390, height=844)
    render(page, file, game, engine_view(game, 4))
    page.evaluate("() => { window.__ctl.watchers = 3; window.__ctl.render(); }")
    assert page.locator(".game-head .watchers").inner_text() == "관전 3명"
    mids = page.eval_on_selector_all(
        '.game-head [data-act="sound"], .game-head .rules-link, .game-head [data-act="leave"]',
        "els => els.map((e) => { const r = e.getBoundingClientRect(); return Math.round(r.top + r.height / 2); })")
    assert len(mids) == 3 and max(mids) - min(mids) <= 4, mids
    assert in_viewport(page, '.game-head [data-act="leave"]')
    shot(page, f"{game}-390-watched")


def test_hakka_claim_explained_and_call_hint(new_page: Any) -> None:
    """Defects (Hakka): the seat said "트릭 4" and the result "6트릭" with no
    word on the Elders counted at the claim (RULES.md 3.7); 콜/패스 gave no
    hint of what calling means (RULES.md 3.3)."""
    page = new_page(width=360, height=740)
    v = engine_view("hakka", 4, seed=1)
    assert v["dealer"] == 0 and v["turn"] == 0 and v["phase"] == "calling"
    render(page, "hakka", "hakka", v)
    hint = page.locator('[data-hint="call"]').inner_text()
    assert "콜" in hint and "패스" in hint and "딜러" in hint
    # a seat's numbers break only at " · " ("점수" ended a line, its "0" alone on the next: trial nitpick)
    stats = page.locator(".hk-seat .stats").all_text_contents()
    assert stats and all("점수\u00a0" in t and "손패 " not in t for t in stats), stats
    v.update(phase="scoring", turn=None, tricks=[0, 4, 0, 0], last_hand={
        "round": v["round"], "dealer": 0, "dreamer": 2, "privileged": None, "winner": 1,
        "how": "claim", "tricks": 6, "winning_cards": ["sup7", "zok7", "sin7", "gon9", "sup9", "wan"],
        "dreamer_card": "gon7", "dreamer_tricks": 8, "deltas": [-5, 5, 4, -4], "scores": [-5, 5, 4, -4]})
    render(page, "hakka", "hakka", v)
    note = page.locator(".trick-note").inner_text()
    assert "딴 트릭 4" in note and "상위 카드 2장" in note and "6트릭" in note
    assert "트릭\u00a04" in page.locator('.hk-seat[data-seat="1"]').inner_text()


def test_hakka_single_card_preview_says_it_once(new_page: Any) -> None:
    """Defect: one card selected read "섭 6 — 한 장 1장"."""
    page = new_page(width=390, height=844)
    v = engine_view("hakka", 4, seed=1)
    v.update(phase="playing", turn=0)
    render(page, "hakka", "hakka", v)
    page.locator(".hk-hand .card").first.click()
    preview = page.locator("p.effect").inner_text()
    assert preview.endswith("— 단일 카드"), preview


def test_numbers_and_their_headers_align(new_page: Any) -> None:
    """Defect: rating and result tables had left-aligned headers over
    right-aligned numbers."""
    page = new_page(width=1000, height=800)
    v = engine_view("penalty_rows", 3)
    v.update(finished=True, winners=[0], phase="finished", penalties=[3, 9, 12])
    render(page, "penalty", "penalty_rows", v)
    aligned = page.evaluate("""() => [...document.querySelectorAll('table.scores')].map(t => {
      const heads = [...t.querySelectorAll('thead th')];
      const cells = [...t.querySelectorAll('tbody tr:first-child td')];
      return cells.map((td, i) => td.classList.contains('num')
        ? getComputedStyle(heads[i]).textAlign === getComputedStyle(td).textAlign : true);
    }).flat()""")
    assert aligned and all(aligned)
    page.reload()
    sign_in(page, "정렬")
    page.wait_for_selector(".ratings table")
    # every number column's header sits over its numbers (the last column,
    # the 순위 · 내 기록 links, is text)
    assert page.evaluate("""() => {
      const heads = [...document.querySelectorAll('.ratings thead th')];
      const cells = [...document.querySelectorAll('.ratings tbody tr:first-child td')];
      const nums = cells.map((td, i) => [td, heads[i]]).filter(([td]) => td.classList.contains('num'));
      return nums.length >= 2 && nums.every(([td, th]) =>
        getComputedStyle(th).textAlign === 'right' && getComputedStyle(td).textAlign === 'right');
    }""")


def test_abandoned_game_result_screen(new_page: Any) -> None:
    """A player back after an abandoned game's shard let it go gets a
    `game_result` frame (docs/websocket.md 4): the client shows the final
    result in the seeds' words (RULES.md 4: no winner, unrated)."""
    page = new_page(width=360, height=740)
    sign_in(page, "돌아온이")
    page.evaluate("""() => window.ttanjit.net.onFrame(JSON.stringify({type: 'game_result',
      seq: 0, game_id: 'abcdefgh2345', game: 'onecard', seat: 0,
      info: {ended_by: 'abandoned', winners: [], scores: null, substituted: [false, false],
             length_ms: 754000}}))""")
    page.wait_for_selector('.result-title:has-text("아무도 돌아오지 않아 게임이 끝났어요")')
    assert page.locator('[data-act="rematch"]').count() == 0  # nobody to play again with
    shot(page, "abandoned-360")
    page.get_by_role("button", name="로비로").click()
    page.wait_for_selector(".game-card")
    # on a screen the player chose, such a result does not take the screen away
    page.evaluate("() => { location.hash = '#/rules/onecard'; }")
    page.wait_for_selector(".rules")
    page.evaluate("""() => window.ttanjit.net.onFrame(JSON.stringify({type: 'game_result',
      seq: 0, game_id: 'bcdefgh23456', game: 'onecard', seat: 1,
      info: {ended_by: 'win', winners: [0], scores: null}}))""")
    page.wait_for_timeout(500)
    assert page.evaluate("() => location.hash") == "#/rules/onecard"


def to_lobby(page: Any) -> None:
    """The lobby, drawn (the top bar's 딴짓)."""
    page.evaluate("() => { location.hash = '#/'; }")
    page.wait_for_selector(".game-card")


def directory_result(page: Any, game: str, players: list[dict[str, Any]],
                     info: dict[str, Any], game_id: str = "23456789") -> None:
    """The `game_result` a gateway sends from the game directory (the game
    left its shard), for seat 0 of a game this tab never saw."""
    page.evaluate("f => window.ttanjit.net.onFrame(JSON.stringify(f))", {
        "type": "game_result", "seq": 0, "game_id": f"{game[:4]}{game_id}", "game": game,
        "seat": 0, "players": players, "info": info})


def test_a_result_from_the_directory_names_seats_and_scores(new_page: Any) -> None:
    """A player back in a new tab after the game's shard let it go (no
    `matched` ever seen there): the result names every seat — humans by
    nickname, bots by level — with its 벌점, fewest first, and marks the
    seat a bot took over. Defect: it said "우승: 3번" and nothing else."""
    page = new_page(width=390, height=844)
    sign_in(page, "돌아온이")
    directory_result(page, "penalty_rows", [
        {"seat": 0, "kind": "human", "player": "p_me", "nickname": "돌아온이"},
        {"seat": 1, "kind": "human", "player": "p_x", "nickname": "철수"},
        {"seat": 2, "kind": "bot", "level": "hard"}],
        {"ended_by": "rounds", "winners": [2], "scores": [71, 30, 12],
         "substituted": [False, True, False], "length_ms": 900000})
    page.wait_for_selector(".final-scores")
    assert page.locator(".result-title").inner_text() == "우승: " + page.locator(
        '.final-scores tr[data-seat="2"] td').first.inner_text()
    rows = page.locator(".final-scores tr").all_inner_texts()
    assert [r.split("\t")[-1].strip() for r in rows] == ["벌점 12", "벌점 30", "벌점 71"], rows
    assert "돌아온이 (나)" in rows[2] and "철수" in rows[1] and "봇이 대신함" in rows[1], rows
    assert "번" not in " ".join(rows), rows  # every seat named, none by number
    assert page.locator(".end-why").count() == 0  # 10 rounds played out
    shot(page, "final-result-390")
    # 기본 66점 (RULES.md 2.4): who crossed 66 ended it, said as the live
    # result says it (only the table was shown: UX audit)
    to_lobby(page)
    directory_result(page, "penalty_rows", [
        {"seat": 0, "kind": "human", "player": "p_me", "nickname": "돌아온이"},
        {"seat": 1, "kind": "human", "player": "p_x", "nickname": "철수"},
        {"seat": 2, "kind": "bot", "level": "hard"}],
        {"ended_by": "score_66", "winners": [2], "scores": [71, 30, 12],
         "substituted": [False, False, False], "length_ms": 900000}, game_id="34567890")
    page.wait_for_selector(".end-why")
    assert page.locator(".end-why").inner_text() == \
        "돌아온이 (나) 벌점 71: 벌점이 66점 이상이 되어 게임이 끝났어요."


def test_a_one_card_result_from_the_directory_says_where_each_seat_stood(new_page: Any) -> None:
    """RULES.md 1.8 and 4, a player back after the shard let a One Card game
    go: the rebuilt result says it as the live one does — "철수가
    이겼어요.", then 승리, 탈락 or N장 남음 by seat. Defect: "우승: 철수"
    and an empty cell beside everyone but the winner."""
    page = new_page(width=390, height=844)
    sign_in(page, "원카드끝")
    directory_result(page, "onecard", [
        {"seat": 0, "kind": "human", "player": "p_me", "nickname": "원카드끝"},
        {"seat": 1, "kind": "human", "player": "p_x", "nickname": "철수"},
        {"seat": 2, "kind": "bot", "level": "easy"}, {"seat": 3, "kind": "empty"}],
        {"ended_by": "win", "winners": [1], "scores": None, "substituted": [False] * 4,
         "length_ms": 300000, "hand_counts": [3, 0, 0, 0], "eliminated": [2],
         "dealt": [True, True, True, False]})
    page.wait_for_selector(".final-scores")
    assert page.locator(".result-title").inner_text() == "철수가 이겼어요."
    rows = [r.split("\t") for r in page.locator(".final-scores tr").all_inner_texts()]
    # in the live results' order, the winner first, my row marked (it was
    # seat order, unmarked: trial nitpick, "results from the directory look
    # unlike the live ones")
    assert [(a.strip(), b.strip()) for a, b in rows] == [
        ("철수", "승리"), ("원카드끝 (나)", "3장 남음"), ("봇3 (쉬움)", "탈락")], rows
    assert page.locator(".final-scores tr.me").inner_text().startswith("원카드끝 (나)")
    # a winner's seat a bot finished is said as live: "철수 자리의 봇이 이겼어요."
    to_lobby(page)
    directory_result(page, "onecard", [
        {"seat": 0, "kind": "human", "player": "p_me", "nickname": "원카드끝"},
        {"seat": 1, "kind": "human", "player": "p_x", "nickname": "철수"}],
        {"ended_by": "win", "winners": [1], "scores": None, "substituted": [False, True],
         "length_ms": 300000, "hand_counts": [2, 0], "eliminated": [], "dealt": [True, True]},
        game_id="34567890")
    page.wait_for_selector(".final-scores")
    assert page.locator(".result-title").inner_text() == "철수 자리의 봇이 이겼어요."
    # out of the game before going (kept, rules revision 3): 탈락 only, no
    # bot played the seat ("봇이 대신함" said otherwise: trial finding)
    to_lobby(page)
    directory_result(page, "onecard", [
        {"seat": 0, "kind": "human", "player": "p_me", "nickname": "원카드끝"},
        {"seat": 1, "kind": "human", "player": "p_x", "nickname": "철수"},
        {"seat": 2, "kind": "bot", "level": "easy"}],
        {"ended_by": "win", "winners": [1], "scores": None, "substituted": [True, False, False],
         "kept": [True, False, False], "length_ms": 300000, "hand_counts": [0, 0, 4],
         "eliminated": [0], "dealt": [True, True, True]}, game_id="45678901")
    page.wait_for_selector(".final-scores")
    mine = page.locator(".final-scores tr.me").inner_text()
    assert "탈락" in mine and "봇이 대신함" not in mine, mine
    # and why, as the live result says it (RULES.md 1.8; UX audit)
    assert "카드가 20장 이상이 되어 탈락했어요." in page.locator(".results").inner_text()


def test_a_welcome_for_a_game_that_is_over_leaves_my_screen(new_page: Any) -> None:
    """Defect (new-user trial): back within 30 s of a game's end, the
    welcome that named the game pulled the player off 내 기록 onto the
    finished table. A welcome saying `finished` (docs/websocket.md) opens
    the game only from the lobby. A live game's too (tabs audit: a tab
    opened on 내 기록 or a replay during a game showed the table instead),
    saying the game is on; from the lobby it opens the table."""
    page = new_page(width=390, height=844)
    sign_in(page, "기록보기")
    page.evaluate("() => { location.hash = '#/history/onecard'; }")
    page.wait_for_selector("section.history h1")
    page.evaluate("() => { window.__w0 = window.ttanjit.net.welcome; }")  # the real one
    welcome = """(extra) => { const w = window.__w0;
      window.ttanjit.net.onFrame(JSON.stringify({...w, seq: window.ttanjit.net.lastSeq,
        resumed: true, game_id: 'defgh2345678', seat: 0, game: 'onecard', ...extra})); }"""
    page.evaluate(welcome, {"finished": True})
    page.wait_for_timeout(700)
    assert page.evaluate("() => location.hash") == "#/history/onecard"
    to_lobby(page)
    page.evaluate(welcome, {"finished": True})  # from the lobby it shows the end
    page.wait_for_function("() => location.hash === '#/game/defgh2345678'")
    page.evaluate("() => { location.hash = '#/history/onecard'; }")
    page.wait_for_selector("section.history h1")
    page.evaluate(welcome, {"game_id": "efgh23456789"})  # a live game: said
    page.wait_for_selector('#toasts .toast:has-text("게임이 진행 중이에요. 로비에서 게임으로 돌아갈 수 있어요.")')
    assert page.evaluate("() => location.hash") == "#/history/onecard"
    to_lobby(page)
    page.evaluate(welcome, {"game_id": "efgh23456789"})  # from the lobby: the table
    page.wait_for_function("() => location.hash === '#/game/efgh23456789'")


def test_a_lost_connection_while_queued_queues_again(new_page: Any) -> None:
    """Defect: waiting for a quick match, a dropped connection took the
    player out of the queue (the matchmaker does not match a player who is
    away) while the lobby went on saying "상대를 찾고 있어요…" for ever. Back
    online, the client queues again for the same game, and is matched."""
    page = new_page(width=390, height=844)
    sign_in(page, "다시줄서기")
    page.wait_for_selector(".game-card")
    # waiting for 원카드 2인 (this stack fills with bots after 0.3 s, so the
    # wait is set up by hand: the matchmaker holds no ticket for it, as after
    # a lost connection)
    page.evaluate("""() => window.ttanjit.net.onFrame(JSON.stringify({type: 'queued',
      seq: window.ttanjit.net.lastSeq, game: 'onecard', seats: 2, ticket: 't1'}))""")
    page.wait_for_selector('.banner.queue:has-text("원카드 2인 게임 상대를 찾고 있어요")')
    page.evaluate("() => window.ttanjit.net.drop()")
    page.wait_for_function("() => location.hash.startsWith('#/game/')", timeout=20_000)
    assert page.evaluate("() => window.ttanjit.game.info.game") == "onecard"
    assert page.evaluate("() => window.ttanjit.state.queue") is None


def test_a_reload_while_queued_queues_again(new_page: Any) -> None:
    """Trial finding: waiting for a quick match, a reload (a phone's
    browser reloads a tab it put away) landed in the lobby with 빠른 대전
    again: the page forgot the queue, and the closed socket had taken the
    player out of it. The tab keeps its queue and queues again, with the
    bot level it chose, and is matched."""
    page = new_page(width=390, height=844)
    sign_in(page, "새로고침줄")
    page.wait_for_selector(".game-card")
    # waiting for 원카드 2인 with hard bots (set up by hand: this stack
    # fills with bots after 0.3 s)
    page.evaluate("""() => { window.ttanjit.state.queueLevel = 'hard';
      window.ttanjit.net.onFrame(JSON.stringify({type: 'queued',
      seq: window.ttanjit.net.lastSeq, game: 'onecard', seats: 2, ticket: 't1'})); }""")
    page.wait_for_selector('.banner.queue:has-text("원카드 2인 게임 상대를 찾고 있어요")')
    page.reload()
    page.wait_for_function("() => location.hash.startsWith('#/game/')", timeout=20_000)
    assert page.evaluate("() => window.ttanjit.game.info.game") == "onecard"
    assert page.evaluate("() => window.ttanjit.state.queue") is None
    assert page.evaluate("() => sessionStorage.getItem('ttanjit.queue')") is None
    players = page.evaluate("() => window.ttanjit.game.info.players")
    assert [p.get("level") for p in players if p["kind"] == "bot"] == ["hard"], players


def test_a_queue_kept_for_a_reload_is_only_the_players_own_and_recent(new_page: Any) -> None:
    """Audit finding on the queue kept across a reload: a queue saved by
    another player (who signed out; this one signed in since), one saved
    long ago, or one a tab was replaced in (another tab took the player,
    and may have cancelled it) is not queued again: the reloaded lobby
    offers 빠른 대전 and no game starts."""
    page = new_page(width=390, height=844)
    sign_in(page, "남의줄")
    page.wait_for_selector(".game-card")
    me = page.evaluate("() => window.ttanjit.state.player")
    for saved in ({"player": "p_someoneelse00", "ms": "now"}, {"player": me, "ms": 0}):
        page.evaluate("""(s) => sessionStorage.setItem('ttanjit.queue', JSON.stringify({game: 'onecard',
          seats: 2, level: '', player: s.player, ms: s.ms === 'now' ? Date.now() : s.ms}))""", saved)
        page.reload()
        page.wait_for_selector('#net[data-state="open"]')
        page.wait_for_timeout(1_500)  # (a queue asked for would be matched with bots by now)
        assert page.evaluate("() => location.hash") in ("", "#/"), saved
        assert page.locator(".banner.queue").count() == 0
        assert page.evaluate("() => sessionStorage.getItem('ttanjit.queue')") is None
    # queued, then another tab takes the player over: this tab forgets it
    page.evaluate("""() => window.ttanjit.net.onFrame(JSON.stringify({type: 'queued',
      seq: window.ttanjit.net.lastSeq, game: 'onecard', seats: 2, ticket: 't1'}))""")
    page.wait_for_selector(".banner.queue")
    assert page.evaluate("() => JSON.parse(sessionStorage.getItem('ttanjit.queue')).player") == me
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector('#net[data-state="open"]')
    page.wait_for_selector('#net[data-state="replaced"]')
    assert page.evaluate("() => sessionStorage.getItem('ttanjit.queue')") is None
    other.close()


def game_goes_on(page: Any) -> None:
    """The One Card game moves on from where it was (the page plays its turns)."""
    seq = page.evaluate("() => window.ttanjit.game.gameSeq")
    deadline = time.monotonic() + 60
    while page.evaluate("() => window.ttanjit.game.gameSeq") <= seq:
        assert time.monotonic() < deadline, "the game did not move after reconnecting"
        if onecard_my_turn(page):
            onecard_play_turn(page)
        page.wait_for_timeout(100)


def test_a_silent_network_is_noticed_and_the_game_goes_on(new_page: Any) -> None:
    """Trial finding: a phone off its network (Chromium's offline mode keeps
    the socket "open") said 연결됨 for 75 s over a frozen table. The
    device's offline event drops the connection at once (다시 연결 중…), its
    online event connects again; and with no such event, a ping nobody
    answers does the same."""
    page = new_page(width=390, height=844)
    sign_in(page, "끊긴폰")
    gid = quick_match(page, "onecard", seats=2)
    page.wait_for_selector('#net[data-state="open"]')
    page.context.set_offline(True)
    page.wait_for_selector('#net[data-state="closed"]', timeout=3_000)
    assert page.locator("#net").inner_text() == "다시 연결 중…"
    # its countdown is dimmed: the server may have paused the clock meanwhile
    assert page.evaluate("() => [...document.querySelectorAll('section.table .timer')].every((t) => getComputedStyle(t).opacity === '0.4')")
    page.wait_for_timeout(1_500)  # reconnecting fails meanwhile, and says so
    assert page.evaluate("() => window.ttanjit.net.state") in ("closed", "connecting")
    page.context.set_offline(False)
    page.wait_for_selector('#net[data-state="open"]', timeout=8_000)
    assert page.evaluate("() => window.ttanjit.game.id") == gid
    # no offline event, only silence: frames stop arriving (as on a network
    # that dropped without telling), pings every 0.4 s, 0.6 s to answer
    page.evaluate("""() => { const n = window.ttanjit.net; n.pingMs = 400; n.pongWaitMs = 600;
      n.startPings(); n.onFrame = () => {}; }""")
    page.wait_for_selector('#net[data-state="closed"]', timeout=5_000)
    page.evaluate("() => { const n = window.ttanjit.net; delete n.onFrame; n.pingMs = 10000; n.pongWaitMs = 5000; }")
    page.wait_for_selector('#net[data-state="open"]', timeout=8_000)
    game_goes_on(page)


def test_a_reconnect_whose_handshake_is_swallowed_is_tried_again(new_page: Any) -> None:
    """Network audit: a reconnect begun in a dead zone (a half-open NAT, a
    captive Wi-Fi: the socket opens, nothing answers its hello) left the
    page 다시 연결 중… for good, and a bot took the seat while the network
    was back. A connection with no welcome after a while (here 2 s) is
    dropped and tried again; the game goes on."""
    page = new_page(width=390, height=844)
    sign_in(page, "먹힌연결")
    gid = quick_match(page, "onecard", seats=2)
    page.wait_for_selector('#net[data-state="open"]')
    tries: list[Any] = []

    def route(ws: Any) -> None:
        tries.append(ws)
        if len(tries) > 1:  # the first try is swallowed, the next ones go through
            ws.connect_to_server()

    page.route_web_socket(re.compile(r".*/ws$"), route)
    page.evaluate("() => { const n = window.ttanjit.net; n.handshakeMs = 2000; n.drop(); }")
    page.wait_for_selector('#net[data-state="open"]', timeout=15_000)
    assert len(tries) >= 2
    assert page.evaluate("() => window.ttanjit.game.id") == gid
    game_goes_on(page)


def test_a_new_screen_and_a_new_result_open_at_their_top(new_page: Any) -> None:
    """Trial findings at 360×740: the room opened scrolled by the lobby's
    offset (its code under the top bar), and "게임 결과" (or Hakka's scoring)
    came up under the top bar while the page was scrolled down to the hand."""
    page = new_page(width=360, height=740)
    sign_in(page, "맨위로")
    page.wait_for_selector(".game-card")
    card = page.locator('.game-card[data-game="hakka"]')
    card.scroll_into_view_if_needed()
    assert page.evaluate("() => window.scrollY") > 0
    card.locator('[data-act="create"]').click()
    page.wait_for_selector("#room-code")
    assert page.evaluate("() => window.scrollY") == 0
    page.get_by_role("button", name="방 나가기").click()
    page.wait_for_selector(".game-card")
    quick_match(page, "penalty_rows", seats=5)
    page.wait_for_selector(".pr-hand .card")
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    assert page.evaluate("() => window.scrollY") > 0
    # the round ends, then the game (the views as the last updates would leave
    # them); the live game's own frames are older than what the tab holds
    # from here, so they change nothing (a bot's pick landing between two
    # steps took the result away: CI; a reveal's events would hold renders)
    page.evaluate("() => { window.ttanjit.game.gameSeq = 1e9; }")
    for change, panel in (("phase: 'intermission'", "section.round-summary"),
                          ("finished: true, winners: [0], ended_by: 'rounds'", "section.results")):
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        page.evaluate(f"() => {{ const g = window.ttanjit.game; g.view = {{...g.view, {change}}}; g.render(); }}")
        top = page.evaluate(f"() => document.querySelector('{panel}').getBoundingClientRect().top")
        bar = page.evaluate("() => document.querySelector('.topbar').getBoundingClientRect().bottom")
        # its top in view below the bar (at the page's top it sits under the game's header)
        assert bar <= top <= bar + 120, (panel, bar, top)
    # and it stays where the player scrolls it while it is redrawn
    page.evaluate("() => window.scrollTo(0, 120)")
    page.evaluate("() => window.ttanjit.game.render()")
    assert page.evaluate("() => window.scrollY") == 120
    # another game's result is a new panel, even straight after this one's
    page.evaluate("""() => { const g = window.ttanjit.game; window.scrollTo(0, document.body.scrollHeight);
      g.id = g.id + 'next'; history.replaceState(null, '', '#/game/' + g.id); g.render(); }""")
    top = page.evaluate("() => document.querySelector('section.results').getBoundingClientRect().top")
    assert 0 < top <= 200, top


def test_the_lobby_leads_back_to_the_game_under_way(new_page: Any) -> None:
    """Trial finding: 딴짓 in the top bar mid-game showed the lobby with no
    way back to the game but a reload (빠른 대전 said only "이미 게임 중이에요.")."""
    page = new_page(width=390, height=844)
    sign_in(page, "돌아가기")
    gid = quick_match(page, "onecard", seats=2)
    page.wait_for_selector('section.table[data-game="onecard"]')
    page.locator(".topbar .brand").click()
    page.wait_for_selector(".game-card")
    banner = page.locator(".banner.playing")
    assert banner.inner_text().startswith("원카드 게임이 진행 중이에요.")
    # and no other table is offered meanwhile (빠른 대전 stayed pressable,
    # answered only "이미 게임 중이에요.": trial nitpick)
    starts = page.locator('.game-card [data-act="quick"], .game-card [data-act="create"], form.join button')
    assert starts.count() == 7 and all(b.is_disabled() for b in starts.all())
    # the 관전 list's row of it leads back too (its 관전 said only "이미 게임
    # 중이에요.": trial nitpick)
    # (scrolled to, as a player does: the list is refreshed while in sight)
    page.locator("section.live").scroll_into_view_if_needed()
    row = page.locator(f'.live tr[data-game-id="{gid}"]')
    row.wait_for(timeout=15_000)
    page.evaluate("() => window.scrollTo(0, 0)")
    assert row.locator('[data-act="watch"]').count() == 0
    assert row.locator('[data-act="back-to-game"]').inner_text() == "돌아가기"
    # another tab takes the player over: this one says so in its top bar
    # and above the lobby, and nothing covers that note or the banner (an
    # 8-second toast saying it again did, on a phone: trial finding)
    tab = page.context.new_page()
    tab.goto(page.url)
    page.wait_for_selector('#net[data-state="replaced"]')
    page.wait_for_timeout(300)
    assert page.locator("#net").get_attribute("role") == "status"
    assert "이 창에서 계속하기" in page.evaluate("() => getComputedStyle(document.getElementById('app'), '::before').content")
    box = banner.bounding_box()  # with the note above it (a toast covered the note, or the banner at 360 px)
    top = page.evaluate("() => document.getElementById('app').getBoundingClientRect().top")
    box = {**box, "y": top, "height": box["y"] + box["height"] - top}
    for toast in page.locator(".toast").all():
        assert not boxes_overlap(box, toast.bounding_box()), toast.inner_text()
    # the tab that took it closed: this one takes the player back on its own,
    # and goes on with the game (it waited for 이 창에서 계속하기, the game
    # going on with nobody at it: tabs audit)
    tab.close()
    page.wait_for_selector('#net[data-state="open"]')
    page.wait_for_selector('section.table[data-game="onecard"]')
    page.locator(".topbar .brand").click()
    page.wait_for_selector(".game-card")
    banner.locator('[data-act="back-to-game"]').click()
    page.wait_for_selector('section.table[data-game="onecard"] .oc-hand .card')
    assert page.evaluate("() => location.hash") == f"#/game/{gid}"
    # once left for good (나가기: a bot takes the seat) the lobby offers no way back
    page.once("dialog", lambda d: d.accept())
    page.locator('.game-head [data-act="leave"]').click()
    page.wait_for_selector(".game-card")
    assert page.locator(".banner.playing").count() == 0
    assert not any(b.is_disabled() for b in starts.all())


def test_the_lobby_offers_games_again_once_the_one_under_way_ends(new_page: Any) -> None:
    """A game that ends (or whose seat a bot takes) while its player looks
    at the lobby gives the lobby back: its banner goes and 빠른 대전 is
    pressable again, without a reload."""
    page = new_page(width=390, height=844)
    sign_in(page, "끝나면")
    quick_match(page, "onecard", seats=2)
    page.wait_for_selector('section.table[data-game="onecard"] .oc-hand .card')
    page.locator(".topbar .brand").click()
    page.wait_for_selector(".banner.playing")
    quick = page.locator('.game-card[data-game="hakka"] [data-act="quick"]')
    assert quick.is_disabled()
    # the table's news stays on the table (autopilot's 원카드! came over the lobby: trial nitpick)
    page.evaluate("""async () => { const m = await import('./js/onecard.js');
      m.onEvent(window.ttanjit.game, {type: 'one_card', seat: 1, game_seq: 999}); }""")
    assert page.locator(".toast.big").count() == 0
    # the game's end reaches the tab as a view, as it does from the shard
    # (the last: the live game's frames after it are older, and change
    # nothing — a bot's move landing between two steps undid the end)
    page.evaluate("""() => { const g = window.ttanjit.game;
      g.takeView({ game_id: g.id, game_seq: 1e9, view: { ...g.view, finished: true } }); }""")
    page.wait_for_selector(".banner.playing", state="detached")
    assert quick.is_enabled()
    # and says it ended, with the way to its result (it ended silently: trial nitpick)
    ended = page.locator(".banner.ended")
    assert ended.inner_text().startswith("원카드 게임이 끝났어요.")
    assert ended.locator('[data-act="see-result"]').inner_text() == "결과 보기"
    # a game the server says is not the player's any more (a sync refused
    # not_in_game: left on another device) gives them back too (review:
    # they stayed disabled until a reload)
    page.evaluate("() => { const g = window.ttanjit.game; g.takeView({ game_id: g.id, view: { ...g.view, finished: false } }); }")
    page.wait_for_selector(".banner.playing")
    assert quick.is_disabled()
    say = """(gid) => window.ttanjit.net.onFrame(JSON.stringify({type: 'error', seq: 0, code: 'not_in_game',
      message: '참여 중인 게임이 아니에요.', ref: 'sync', game_id: gid}))"""
    page.evaluate(say, "another1game")  # the answer to a sync of another game (one held before): not this one
    page.wait_for_timeout(200)
    assert quick.is_disabled()
    page.evaluate(say, page.evaluate("() => window.ttanjit.game.id"))
    page.wait_for_selector(".banner.playing", state="detached")
    assert quick.is_enabled()


def test_my_reaction_leaves_the_one_card_button_readable(new_page: Any) -> None:
    """Trial nitpick (360 px): my own reaction's bubble sat over the 원카드!
    button at the end of my row. It shows over my name instead."""
    page = new_page(width=360, height=740)
    sign_in(page, "반응폰")
    quick_match(page, "onecard", seats=2)
    page.locator('.emote-bar [data-emote="thumbs"]').click()
    bubble = page.locator(".my-row .emote-bubble")
    bubble.wait_for()
    button = page.locator('.my-row [data-act="one_card"]').bounding_box()
    assert button is not None and not boxes_overlap(bubble.bounding_box(), button), (bubble.bounding_box(), button)


def test_an_older_games_address_shows_its_end_or_says_why_not(new_page: Any) -> None:
    """Defect (new-user trial): an older game's address (a bookmarked
    result, once a newer game had started) showed "참여 중인 게임이
    아니에요." and "게임을 불러오는 중…" for good. It shows that game's end
    now; someone else's game says it cannot open it, with the way out."""
    page = new_page(width=390, height=844)
    sign_in(page, "옛게임")
    level = 'select[name="level-onecard"]'
    page.locator(level).select_option("easy")
    old = quick_match(page, "onecard", seats=2)
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.get_by_role("button", name="나가기").click()  # a bot plays it out at once
    # what leaving costs is said before (trial: −57 to −142, no word why)
    assert asked == ["게임을 나가면 봇이 내 자리를 이어받고, 레이팅은 내가 꼴찌인 것으로 계산해요. "
                     "나갈까요?"], asked
    page.wait_for_selector(".game-card")
    # the lobby keeps the 인원 last chosen, as it keeps the level (trial: it
    # went back to 4명 after every game)
    assert page.locator('select[name="seats-onecard"]').input_value() == "2"
    page.locator(level).select_option("hard")
    new = quick_match(page, "onecard", seats=2)  # a newer game: the session's own now
    assert new != old
    wait_in_history(page, "onecard", old)  # the old one has ended
    # its row says who won, how long it took, and why the rating moved so
    # (trial: "패 +26" alone; Hakka's "−6점 −142" read as two scores)
    row = page.locator(f'.history-item[data-game-id="{old}"]').inner_text()
    assert "우승: " in row and "게임 시간 " in row and "레이팅 " in row, row
    # a winner a bot stood in for is marked (review: my seat's bot's win read
    # "우승: 옛게임"): my seat is the bot's since I left
    entry = page.evaluate(f"""async () => (await (await fetch('api/history/onecard?offset=0&limit=10',
      {{headers: {{authorization: 'Bearer ' + JSON.parse(localStorage.getItem('ttanjit.id.token'))}}}}))
      .json()).games.find((g) => g.game_id === '{old}')""")
    assert entry["substituted"][entry["seat"]], entry
    detail = page.locator(f'.history-item[data-game-id="{old}"] .detail').inner_text()
    assert ("봇이 대신함" in detail) == any(entry["substituted"][w] for w in entry["winners"]), detail
    assert "꼴찌" in page.locator(f'.history-item[data-game-id="{old}"] .why').inner_text()
    page.evaluate(f"() => {{ location.hash = '#/game/{old}'; }}")
    page.wait_for_selector("section.results", timeout=30_000)
    said = page.locator("section.results").inner_text()
    assert "봇이 대신함" in said
    # left, so no 한 판 더 for me (as on the live table once a bot took my seat)
    assert page.locator('section.results [data-act="rematch"]').count() == 0
    # its own seats' names, not those of the game this tab played since
    # (confirm trial: "우승: 봇2 (어려움)" for a game against 봇2 (쉬움))
    assert "봇2 (쉬움)" in said and "어려움" not in said, said
    # where each seat stood, from the shard's directory entry (it said 승리 only)
    assert "승리" in said and ("장 남음" in said or "탈락" in said), said
    assert page.locator(".page.unavailable").count() == 0
    page.evaluate("() => { location.hash = '#/game/zzzzzzzzzzzz'; }")  # not mine
    page.wait_for_selector('.page.unavailable[data-code="not_in_game"]', timeout=20_000)
    assert "참여 중인 게임이 아니에요" in page.locator(".page.unavailable").inner_text()
    page.locator('.page.unavailable [data-act="lobby"]').click()
    page.wait_for_selector(".game-card")


def test_a_new_tab_shows_the_games_last_moves_in_its_log(new_page: Any) -> None:
    """A One Card table opened in a new tab showed an empty log, then (a
    mend) only "… 이 창에서는 지금부터 진행을 보여요.": the moves before it
    were not there. The whole view brings the seat's last events
    (``recent``), so the new tab's log has the moves the first tab logged,
    and nothing is said to be skipped while the game is young enough."""
    page = new_page(width=390, height=844)
    sign_in(page, "새탭로그")
    gid = quick_match(page, "onecard", seats=2)
    deadline = time.monotonic() + 60
    while True:  # a few moves by both, then my turn (the key press below needs a live button)
        assert time.monotonic() < deadline, "the game did not move"
        mine = onecard_my_turn(page)
        if mine and page.evaluate("() => window.ttanjit.game.gameSeq") >= 4:
            break
        if mine:
            onecard_play_turn(page)
        page.wait_for_timeout(100)
    # the moves (a note on my own move, "고른 순서로는 낼 수 없어 …", is that
    # tab's own: it came with the move's result, not with the game's events)
    read = (f"() => JSON.parse(sessionStorage.getItem('ttanjit.log.{gid}') || '[]')"
            ".filter((l) => l.kind !== 'info').map((l) => l.text)")
    first = page.evaluate(read)
    assert len(first) >= 2, first
    tab = page.context.new_page()  # the same player, a tab of its own: takes the table over
    tab.goto(page.url.split("#")[0] + f"#/game/{gid}")
    tab.wait_for_selector('section.table[data-game="onecard"] .oc-log li', timeout=20_000)
    log = tab.evaluate(read)
    assert log[:len(first)] == first, (log, first)  # what the first tab saw, then what came since
    assert not any(t.startswith("…") for t in log), log
    # the first tab, replaced, is inert until taken back, and its top bar
    # stays one line on a phone (its table still offered moves, the bar wrapped)
    page.wait_for_selector('#net[data-state="replaced"]')
    assert page.evaluate("() => getComputedStyle(document.querySelector('section.table')).pointerEvents") == "none"
    page.locator(".hand .card").first.click(force=True)  # a tap lands on nothing that acts
    assert page.locator(".hand .card.selected, .hand .card[aria-pressed='true']").count() == 0
    assert page.locator("#use-here").is_visible()
    # its countdowns are not shown: they ran to 0초 while the game went on
    timers = "() => [...document.querySelectorAll('.timer')].map((t) => getComputedStyle(t).visibility)"
    assert page.locator("section.table .timer[data-deadline]").count() >= 1
    assert set(page.evaluate(timers)) == {"hidden"}, page.evaluate(timers)
    bar = page.locator(".topbar").bounding_box()
    assert bar is not None and bar["height"] <= 50, bar
    # nor does a key press act: it is refused here and not kept to send once
    # the tab takes the player back (Enter on 1장 뽑기 queued a draw: trial finding)
    sent = "() => (window.__frames || []).filter((f) => f.dir === 'out' && f.type === 'action').length"
    before = page.evaluate(sent)
    assert page.locator(".oc-actions button").first.is_enabled()  # my turn, as this tab last saw it
    page.locator(".oc-actions button").first.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector('#refusal[data-code="replaced"]:not([hidden])')
    assert "이 창에서 계속하기" in page.locator("#refusal").inner_text()
    # the page says why, over what it shows (the same words as the refusal)
    note = page.evaluate("() => getComputedStyle(document.getElementById('app'), '::before').content")
    assert "이 창에서 계속하기" in note, note
    page.evaluate("() => document.querySelectorAll('.toast').forEach((t) => t.remove())")
    shot(page, "replaced-tab")
    page.locator("#use-here").click()
    page.wait_for_selector('#net[data-state="open"]')
    page.wait_for_timeout(500)
    assert page.evaluate(sent) == before
    tab.close()


def test_a_game_my_seats_bot_won_is_not_my_win(new_page: Any) -> None:
    """Defect: after 나가기 the bot in my seat won and the result said
    "이겼어요!" beside my rating's loss."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 2, leave=(0,))
    v.update(finished=True, winners=[0], ended_by="win", hand_counts=[0, 5])
    render(page, "onecard", "onecard", v)
    title = page.locator(".result-title").inner_text()
    assert title == "내 자리를 이어받은 봇이 이겼어요.", title
    # nor does my row say a plain "승리" (the new-user trial: green 승리 beside −70)
    rows = page.locator("section.results tr").all_inner_texts()
    assert any("봇이 대신함" in r and "승리" in r for r in rows), rows


def test_one_card_results_mark_a_seat_a_bot_finished_whatever_its_end(new_page: Any) -> None:
    """Trial finding: One Card's results marked a bot-finished seat only when
    it won ("승리 (봇이 대신함)"); the seat of a player who left and lost read
    "14장 남음" with no mark, where 줄줄이 벌점's and Hakka's mark it."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 3, humans=2, leave=(0,))
    v.update(finished=True, winners=[1], ended_by="last_player", hand_counts=[5, 0, 3],
             eliminated=[])
    render(page, "onecard", "onecard", v, seat=1, humans=2)
    rows = page.locator("table.scores tbody tr").all_inner_texts()
    # the winner first, then by cards left (in seat order the winner could be last: trial)
    assert "승리" in rows[0] and "3장 남음" in rows[1], rows
    assert "봇이 대신함" in rows[2] and "5장 남음" in rows[2], rows
    assert not [r for r in rows[:2] if "봇이 대신함" in r], rows
    # another's seat a bot finished, won: said (trial nitpick: "나가 이겼어요.")
    render(page, "onecard", "onecard", {**v, "winners": [0], "hand_counts": [0, 5, 3]}, seat=1,
           humans=2)
    assert page.locator(".result-title").inner_text() == "나 자리의 봇이 이겼어요."
    render(page, "onecard", "onecard", v, seat=1, humans=2)
    # a rating change of ±0 is neither green nor red (a loss read green: trial nitpick)
    page.evaluate("""() => sessionStorage.setItem('ttanjit.change.craft-onecard', JSON.stringify(
      {game_id: 'craft-onecard', game: 'onecard', delta: 0, before: 1500, after: 1500}))""")
    page.evaluate("() => window.__ctl.render()")
    delta = page.locator("#rating-change .delta")
    assert delta.inner_text().startswith("원카드 레이팅 ±0"), delta.inner_text()
    assert delta.get_attribute("class") == "delta"
    # of the eliminated, the one out later stands higher
    v = engine_view("onecard", 4, humans=2)
    v.update(finished=True, winners=[3], ended_by="last_player", hand_counts=[20, 20, 2, 0],
             eliminated=[0, 1])  # seat 0 out first
    render(page, "onecard", "onecard", v, seat=1, humans=2)
    rows = page.locator("table.scores tbody tr").all_inner_texts()
    assert ["승리" in rows[0], "2장 남음" in rows[1], rows[2].startswith("봇2"), rows[3].startswith("나"),
            "탈락" in rows[3]] == [True] * 5, rows


def test_a_hakka_replay_offers_no_moves(new_page: Any) -> None:
    """Trial finding: a 하카 카드 replay at a step where it was the seat's
    turn showed live 패스/콜 (or 엎어서 버리기/꺾기) buttons and pickable
    cards, and said what to do; pressing one said only "다시 보기에서는 카드를
    낼 수 없어요." One Card's and 줄줄이 벌점's replays are read-only."""
    page = new_page(width=390, height=844)
    v = engine_view("hakka", 4, seed=1)  # my turn to call
    assert v["turn"] == 0 and v["phase"] == "calling"
    render(page, "hakka", "hakka", v)
    assert page.locator('.hk-actions [data-act="call"]').count() == 1  # live: my call
    page.evaluate("() => { window.__ctl.replay = true; window.__ctl.render(); }")
    assert page.locator(".hk-actions button").count() == 0
    assert page.locator(".hk-hand .card:not([disabled])").count() == 0
    assert "골라요" not in page.locator(".oc-status").inner_text()


@pytest.mark.parametrize(("file", "game", "n"), [("onecard", "onecard", 2),
                                                 ("penalty", "penalty_rows", 3),
                                                 ("hakka", "hakka", 4)])
def test_an_abandoned_games_end_says_why_on_the_table(new_page: Any, file: str, game: str,
                                                      n: int) -> None:
    """Trial finding: back to a game that ended abandoned (RULES.md 4: every
    person away 10 minutes), the table said only "게임이 끝났어요.", the
    player's own seat "연결 끊김", and offered 한 판 더, then refused it."""
    page = new_page(width=390, height=844)
    v = engine_view(game, n)
    v.update(finished=True, winners=[], ended_by="abandoned")
    for s in v["seats"]:
        if s.get("kind") == "human":
            s["connected"] = False
    render(page, file, game, v)
    said = page.locator("section.results").inner_text()
    assert "모두 10분 넘게 연결이 끊겨 승자 없이 끝났고, 레이팅은 바뀌지 않아요." in said, said
    # its title says so too (줄줄이 벌점's and Hakka's said "게임 결과" twice: review)
    assert page.locator(".result-title").inner_text() == "아무도 돌아오지 않아 게임이 끝났어요."
    assert page.locator('section.results [data-act="rematch"]').count() == 0
    assert page.locator(".badge.away").count() == 0


# -- the your-turn alert and the log across a reload -----------------------------
HIDDEN = """Object.defineProperty(document, 'hidden', {configurable: true, get: () => window.__hidden === true});
Object.defineProperty(document, 'visibilityState', {configurable: true,
  get: () => window.__hidden === true ? 'hidden' : 'visible'});"""


def test_turn_alert_and_log_survive(new_page: Any) -> None:
    """Issue 14.4: with the tab hidden, my turn puts "내 차례" in the tab title
    and a badge on the favicon, back to normal when I look; the sound toggle
    is remembered. Defect: after a reload the One Card log kept only the
    connection lines — it keeps the game's moves now."""
    page = new_page(width=1000, height=860)
    page.context.add_init_script(HIDDEN)
    page.reload()
    sign_in(page, "딴짓중")
    page.locator('.game-card[data-game="onecard"] select[name="seats-onecard"]').select_option("2")
    page.locator('.game-card[data-game="onecard"] [data-act="quick"]').click()
    page.wait_for_selector('section.table[data-game="onecard"]')
    page.evaluate("() => { window.__hidden = true; document.dispatchEvent(new Event('visibilitychange')); }")
    page.wait_for_function("() => document.title.includes('내 차례')", timeout=60_000)
    assert "favicon-turn" in page.locator("#favicon").get_attribute("href")
    page.evaluate("() => { window.__hidden = false; document.dispatchEvent(new Event('visibilitychange')); }")
    page.wait_for_function("() => !document.title.includes('내 차례')")
    page.locator('[data-act="sound"]').click()
    assert page.evaluate("() => localStorage.getItem('ttanjit.sound')") == "off"
    # my move in the turn the alert said, whichever it is: each is a line of
    # the log (waiting for a card played let the bot win first now and
    # then, and the test skipped)
    played = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not played.startswith(("play", "take", "draw", "pass")):
        if onecard_my_turn(page):
            played = onecard_play_turn(page)
        else:
            page.wait_for_timeout(80)
    assert played.startswith(("play", "take", "draw", "pass")), played
    page.wait_for_selector(".oc-log li")
    before = page.locator(".oc-log").inner_text()
    page.reload()
    page.wait_for_selector('section.table[data-game="onecard"]')
    page.wait_for_selector(".oc-log li")
    after = page.locator(".oc-log").inner_text()
    # the log shows its last 4 lines: what was there is still there (or
    # pushed up by newer moves), and my own reconnection is not one of them
    lines = after.splitlines()
    assert set(before.splitlines()) & set(lines) or len(lines) == 4, (before, after)
    assert not [x for x in lines if x.startswith("딴짓중:") and "연결" in x]
    assert page.locator('[data-act="sound"]').inner_text() == "소리 끔"  # remembered
    page.on("dialog", lambda d: d.accept())
    page.get_by_role("button", name="나가기").click()
    page.wait_for_selector(".game-card")


# -- two players: reactions and 한 판 더 -------------------------------------------
def two_in_a_room(new_page: Any) -> tuple[Any, Any]:
    a = new_page(width=1000, height=860)
    sign_in(a, "반가워")
    card = a.locator('.game-card[data-game="penalty_rows"]')
    card.locator('select[name="seats-penalty_rows"]').select_option("2")
    card.get_by_role("button", name="방 만들기").click()
    code = a.locator("#room-code").inner_text()
    a.locator('select[name="rounds"]').select_option("1")
    a.wait_for_selector('.badge.end:has-text("1판")')
    b = new_page(width=360, height=740)
    sign_in(b, "나도요")
    join_room(b, code)
    a.wait_for_selector('.seat .name:has-text("나도요")')
    a.get_by_role("button", name="시작").click()
    for p in (a, b):
        p.wait_for_selector('section.table[data-game="penalty_rows"]')
    return a, b


def play_penalty_to_the_end(pages: list[Any], limit_s: float = 150) -> None:
    deadline = time.monotonic() + limit_s
    turns = [0] * len(pages)
    while time.monotonic() < deadline:
        if all(p.locator("section.results").count() for p in pages):
            return
        acted = False
        for i, p in enumerate(pages):
            if penalty_can_pick(p) and penalty_pick(p, turns[i]):
                turns[i] += 1
                acted = True
        if not acted:
            pages[0].wait_for_timeout(60)
    raise AssertionError(f"the game did not end: {turns}")


def test_two_players_react_and_play_again(new_page: Any) -> None:
    """Issue 14.5 and 14.3 between two browser contexts: a reaction shows at
    the sender's seat on the other screen, the gateway's rate limit answers a
    burst, a muted player's reactions stay hidden; at the result screen both
    press 한 판 더 and land at the same new table."""
    a, b = two_in_a_room(new_page)
    seat_a = view(a)["seat"]
    a.locator('.emote-bar [data-emote="thumbs"]').click()
    b.wait_for_selector(f'.pr-player[data-seat="{seat_a}"] .emote-bubble:has-text("최고")')
    shot(b, "emote-360")
    for _ in range(6):  # 3 at once, then one every 2 s
        a.locator('.emote-bar [data-emote="laugh"]').click()
    a.wait_for_selector('.toast:has-text("반응은 잠시 후에")')
    # the refusals say it once, not one toast each (four covered the table: trial finding)
    a.wait_for_timeout(500)
    assert a.locator('.toast:has-text("반응은 잠시 후에")').count() == 1
    b.locator(".emote-bar details.mute summary").click()
    b.locator(f'.emote-bar details.mute input[data-seat="{seat_a}"]').check()
    b.wait_for_timeout(2600)  # the earlier bubbles are gone
    a.wait_for_timeout(2000)
    a.locator('.emote-bar [data-emote="wow"]').click()
    a.wait_for_selector(f'.pr-player[data-seat="{seat_a}"] .emote-bubble:has-text("헉")')
    b.wait_for_timeout(500)
    assert b.locator(".emote-bubble").count() == 0  # muted

    old = a.evaluate("() => window.ttanjit.game.id")
    play_penalty_to_the_end([a, b])
    for p in (a, b):  # a whole game of two people, no sync asked (issue 13)
        assert assert_update_frames_only(p, old) > 0
    a.locator('[data-act="rematch"]').click()
    b.wait_for_selector('#rematch:has-text("한 판 더: 반가워")')
    shot(b, "rematch-360")
    # pressed, the button says so (it looked the same pressed or not: trial
    # finding); a reload too, from the offer; the other's is not pressed
    pressed = 'section.results [data-act="rematch"][aria-pressed="true"]:has-text("✓ 한 판 더")'
    a.wait_for_selector(pressed)
    assert b.locator('[data-act="rematch"]').get_attribute("aria-pressed") == "false"
    a.reload()
    a.wait_for_selector(pressed)
    b.reload()  # a reload keeps the offer
    b.wait_for_selector('[data-act="rematch"][aria-pressed="false"]')
    # and shows it, with its seconds, to one who has not answered (it showed
    # none until the offer changed: trial finding)
    b.wait_for_selector('#rematch:has-text("한 판 더: 반가워") .timer')
    b.locator('[data-act="rematch"]').click()
    for p in (a, b):
        p.wait_for_function(f"() => window.ttanjit.game.id && window.ttanjit.game.id !== '{old}'")
        p.wait_for_selector('section.table[data-game="penalty_rows"] .pr-hand .card')
    assert a.evaluate("() => window.ttanjit.game.id") == b.evaluate("() => window.ttanjit.game.id")
    for p in (a, b):
        p.on("dialog", lambda d: d.accept())
        p.get_by_role("button", name="나가기").click()


# -- a person alone: Hakka against three hard bots, then 한 판 더 ------------------
def test_solo_hakka_against_three_hard_bots(new_page: Any) -> None:
    """Issue 14.1 and 14.2: alone in a room with three hard bots (seat by
    seat), Hakka is played to its end by clicking — the player calls, leads
    and discards (the deal's seed makes the player the first dealer; RULES.md
    3.2 with the engine's everyone-plays decision) — and 한 판 더 starts the
    same table again at once."""
    page = new_page(width=1000, height=900)
    sign_in(page, "혼자하카")
    page.locator('.game-card[data-game="hakka"] [data-act="create"]').click()
    page.wait_for_selector("#room-code")
    for _ in range(3):
        n = page.locator(".seat.bot").count()
        page.locator('select[name="bot-level"]').select_option("hard")
        page.get_by_role("button", name="봇 넣기").click()
        page.wait_for_function(f"() => document.querySelectorAll('.seat.bot').length === {n + 1}")
    assert page.locator('.seat.bot:has-text("어려움")').count() == 3
    page.evaluate("() => window.ttanjit.net.send({type: 'room_options', options: {seed: 1}})")
    page.wait_for_timeout(300)
    shot(page, "room-solo")
    page.get_by_role("button", name="시작").click()
    page.wait_for_selector('section.table[data-game="hakka"]')
    done: set[str] = set()
    deadline = time.monotonic() + 480
    while time.monotonic() < deadline:
        if page.locator("section.results").count():
            break
        if not hakka_my_turn(page):
            page.wait_for_timeout(100)
            continue
        v = view(page)
        if v.get("phase") == "playing" and v.get("table") and "hakka-table" not in done:
            shot(page, "hakka-table")
            done.add("hakka-table")
        what = hakka_act(page)
        done.add(what.split()[0])
    page.wait_for_selector("section.results", timeout=20_000)
    assert {"call", "lead", "discard"} <= done, done
    v = view(page)
    assert v["finished"] and v["round"] == 4
    shot(page, "hakka-results", full_page=True)
    old = page.evaluate("() => window.ttanjit.game.id")
    assert assert_update_frames_only(page, old) > 0
    before = page.evaluate(JS_STAMP)
    page.locator('[data-act="rematch"]').click()  # alone: it starts at once
    page.wait_for_function(f"() => window.ttanjit.game.id !== '{old}'")
    wait_change(page, before, timeout=20)
    page.wait_for_selector('section.table[data-game="hakka"] .hk-seat')
    players = page.evaluate("() => window.ttanjit.game.info.players")
    assert [p.get("level") for p in players if p["kind"] == "bot"] == ["hard"] * 3
    page.on("dialog", lambda d: d.accept())
    page.get_by_role("button", name="나가기").click()


@pytest.mark.parametrize(("file", "game", "n"), [("onecard", "onecard", 3),
                                                 ("penalty", "penalty_rows", 3),
                                                 ("hakka", "hakka", 4)])
def test_a_paused_game_says_so_to_its_players_and_spectators(new_page: Any, file: str,
                                                             game: str, n: int) -> None:
    """Audit finding: only One Card's table said "모두 연결이 끊겨 멈춤"
    (RULES.md 4: every player away, the clocks stand still); a 관전 of a
    줄줄이 벌점 or Hakka game the lobby listed as 멈춤 showed a table whose
    timer had gone, with no word why. The table's header says it in all
    three games, to the players (a tab left open) and to spectators."""
    page = new_page(width=390, height=844)
    e = new_engine(game, n)
    assert e.apply(100, 0, {"type": "disconnect"}).ok  # the only human: paused
    v = dict(e.view(0))
    assert v["paused"] is True
    render(page, file, game, v)
    badge = page.locator(".game-head .paused")
    assert badge.inner_text() == "모두 연결이 끊겨 멈춤"
    assert page.locator(".game-head .paused").count() == 1
    page.evaluate("""v => { const c = window.__ctl; c.spectator = true; c.seat = () => null;
      c.view = v; c.render(); }""", dict(e.view(None)))
    assert badge.inner_text() == "모두 연결이 끊겨 멈춤"
    assert e.apply(200, 0, {"type": "reconnect"}).ok
    page.evaluate("v => { window.__ctl.view = v; window.__ctl.render(); }", dict(e.view(None)))
    assert badge.count() == 0


def test_a_one_card_window_held_open_by_a_pause_comes_back_with_its_time(new_page: Any) -> None:
    """Audit finding: a pause (every player away, RULES.md 4) holds a
    [원카드!] window open and moves its close time on by the pause's
    length, which only the view says (the resume's event is
    `reconnected`). The tab kept the close time of the window's event: a
    player back after the 3 s got no [원카드!] prompt, while the bots
    pressed (RULES.md 1.7: the holder draws 2)."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 2)
    v.update(turn=1, pending=0, hand=["5S"], hand_counts=[1, 5], window=None)
    render(page, "onecard", "onecard", v)
    now = page.evaluate("""() => { window.__ctl.at = (t) => t;  // game t = server ms here
      return Date.now(); }""")
    # (looked at as it is drawn: a 400 ms window was over before a loaded
    # machine's browser was looked at again, once in a full run)
    assert page.evaluate("""([now]) => { window.__mod.onEvent(window.__ctl,
      {type: 'one_card_window', holder: 0, closes_at: now + 1500}, {game_seq: 5});
      return !document.getElementById('onecard-float').hidden; }""", [now])
    # everyone away: the window is held open; the tab's time runs out
    page.wait_for_selector("#onecard-float", state="hidden", timeout=5_000)
    # a player is back: the view's window closes 2.6 s from now
    # (looked at as it is drawn: a loaded machine's browser, looked at
    # again later, could find the window's 2.6 s gone)
    shown = page.evaluate("""([v, now]) => { const c = window.__ctl;
      window.__mod.onEvent(c, {type: 'reconnected', seat: 0, paused: false}, {game_seq: 6});
      c.view = {...v, window: {holder: 0, closes_at: Date.now() + 2600}}; c.render();
      const f = document.querySelector('#onecard-float:not([hidden])');
      return f && f.querySelector('[data-act="one_card_float"]') ? f.innerText : null; }""", [v, now])
    assert shown and "내가 한 장 남았어요" in shown, shown


def test_a_reload_that_missed_nothing_shows_the_last_play_whole(new_page: Any) -> None:
    """Trial finding: a play of ♣2 ♦2 showed on the pile as both cards,
    numbered; after a reload only ♦2 (a new tab showed both). The whole
    view's last events bring the last play back whether or not the tab's
    log missed anything."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 2)
    v.update(top="2D", suit="D", discard=[*v["discard"], "2C", "2D"])
    render(page, "onecard", "onecard", v)
    played = {"type": "played", "seat": 1, "cards": ["2C", "2D"]}
    page.evaluate("""([v, ev]) => { const c = window.__ctl;
      window.__mod.onEvent(c, ev, {game_seq: 7}); c.render(); }""", [v, played])
    assert page.locator(".top-cards .card").count() == 2
    page.evaluate("""([v, ev]) => { const c = window.__ctl;
      c.tableState = {};  // the reload: what the tab kept is in sessionStorage
      window.__mod.onWholeView(c, {view: v, game_seq: 7, resync: true,
        recent: [{game_seq: 7, t: 7000, event: ev}]});
      c.render(); }""", [v, played])
    assert page.locator(".top-cards .card").count() == 2
    # a reshuffle keeps only the top card on the pile (RULES.md 1.8): ♣2
    # went into the draw pile and is no longer shown (replay audit)
    page.evaluate("""() => { const c = window.__ctl;
      c.view = {...c.view, discard: ['2D']}; c.render(); }""")
    assert page.locator(".top-cards .card").count() == 1


def test_on_a_phone_the_seat_whose_turn_it_is_is_in_view(new_page: Any) -> None:
    """Trial finding: at 390 px a One Card table of 6 showed three
    opponents; the strip scrolls sideways, but "봇6 (어려움)의 차례예요."
    named a seat off-screen, its 차례 badge and timer with it. The strip
    scrolls to the seat whose turn it is, at every turn."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 6)
    for turn in (5, 1, 4):
        v.update(turn=turn)
        if turn == 5:
            render(page, "onecard", "onecard", v)
        else:
            page.evaluate("v => { window.__ctl.view = v; window.__ctl.render(); }", v)
        box = page.locator(f'.oc-opponents .opp.turn[data-seat="{turn}"]').bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, (turn, box)
    assert no_horizontal_scroll(page)


@pytest.mark.parametrize("width", [360, 390])
def test_on_a_phone_three_opponents_fit_the_strip(new_page: Any, width: int) -> None:
    """Trial nitpick: at 390 px a One Card table of 4 scrolled its strip
    of opponents sideways, the first name cut at the screen's edge. Three
    share the strip's width, the one whose turn it is no taller (its
    seconds beside its count; its 차례 said to screen readers)."""
    page = new_page(width=width, height=844)
    v = engine_view("onecard", 4)
    v.update(turn=3, hand_counts=[7, 12, 15, 13])
    render(page, "onecard", "onecard", v)
    strip = page.locator(".oc-opponents")
    assert strip.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
    boxes = [page.locator(f'.oc-opponents .opp[data-seat="{s}"]').bounding_box() for s in (1, 2, 3)]
    assert all(b and b["x"] >= 0 and b["x"] + b["width"] <= width for b in boxes), boxes
    assert len({round(b["height"]) for b in boxes if b}) == 1, boxes
    timer = page.locator('.oc-opponents .opp.turn .timer').bounding_box()
    count = page.locator('.oc-opponents .opp.turn .count').bounding_box()
    assert timer and count and abs(timer["y"] - count["y"]) < count["height"], (timer, count)
    assert page.locator(".oc-opponents .opp.turn .badge.turn").inner_text() == "차례"


@pytest.mark.parametrize("n", [3, 10])
def test_two_digit_penalties_stay_inside_their_seat_box(new_page: Any, n: int) -> None:
    """Trial finding: on a desktop, once penalties reached two digits,
    "이번 판 13 (7장) 누적 13" ran past its seat box, under the next box
    ("누적 11" read as "누적 1"). The two parts go on two lines when one
    is too narrow."""
    for width, height in ((1280, 800), (390, 844)):
        page = new_page(width=width, height=height)
        v = engine_view("penalty_rows", n, seed=4)
        v.update(round_penalties=[13] * n, penalties=[113] * n, taken=[list(range(1, 8))] * n)
        render(page, "penalty", "penalty_rows", v)
        for i in range(n):
            seat = page.locator(".pr-player").nth(i)
            box, pen = seat.bounding_box(), seat.locator(".pen").bounding_box()
            assert box and pen and pen["x"] + pen["width"] <= box["x"] + box["width"] + 0.5, (width, i, box, pen)
            for part in (".round-pen", ".total-pen"):
                b = seat.locator(part).bounding_box()
                assert b and b["x"] + b["width"] <= box["x"] + box["width"] + 0.5, (width, i, part, box, b)


@pytest.mark.parametrize(("file", "game", "n"), [("penalty", "penalty_rows", 3), ("hakka", "hakka", 4)])
def test_the_results_mark_a_seat_a_bot_finished(new_page: Any, file: str, game: str, n: int) -> None:
    """Trial finding, RULES.md 4 ("results mark the seat as bot
    substituted"): a 줄줄이 벌점 or Hakka game a person left, won by the
    bot that took their seat, ended "우승: 민지" with nothing on her row;
    only One Card's results said 봇이 대신함."""
    page = new_page(width=390, height=844)
    e = new_engine(game, n, humans=2)
    assert e.apply(100, 0, {"type": "leave"}).ok  # a bot takes seat 0 (RULES.md 4)
    v = dict(e.view(1))
    v.update(finished=True, winners=[0], ended_by="rounds" if game == "penalty_rows" else "hands")
    render(page, file, game, v, seat=1, humans=2)
    title = page.locator(".result-title").inner_text()
    assert title.startswith("우승: ") and title.endswith("(봇이 대신함)"), title
    rows = page.locator("table.scores tbody tr")
    marked = [i for i in range(rows.count()) if "봇이 대신함" in rows.nth(i).inner_text()]
    assert len(marked) == 1 and "봇이 대신함" not in page.locator("table.scores tr.me").inner_text()


@pytest.mark.parametrize(("file", "game", "n", "strip"), [("onecard", "onecard", 3, ".oc-opponents"),
                                                          ("penalty", "penalty_rows", 6, ".pr-players")])
def test_an_emote_over_a_phones_seat_strip_is_whole(new_page: Any, file: str, game: str, n: int,
                                                    strip: str) -> None:
    """Trial finding: on a phone the opponents are a strip that scrolls
    sideways, which clips what sticks out of it: a seat's "ㅋㅋㅋ" showed
    only its lower half."""
    page = new_page(width=390, height=844)
    render(page, file, game, engine_view(game, n))
    page.evaluate("""async () => { const g = await import('./js/game.js'); const c = window.__ctl;
      c.emotes = {1: {emote: 'laugh', until: Date.now() + 60000}}; g.showEmotes(c); }""")
    bubble = page.locator(f'{strip} [data-seat="1"] .emote-bubble')
    b, box = bubble.bounding_box(), page.locator(strip).bounding_box()
    assert b and box and b["y"] >= box["y"] and b["y"] + b["height"] <= box["y"] + box["height"], (b, box)


def test_a_rematch_that_started_without_me_takes_its_button_away(new_page: Any) -> None:
    """Trial finding: 서연 was still on the results when "민지가 한 판 더
    시작했어요." came; her 한 판 더 stayed, and pressing it did nothing.
    Once the table's 한 판 더 started without the player, the button goes;
    while it waits for them, or after it expired (asking again opens a new
    offer: review), it stays."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 3, humans=3)
    v.update(finished=True, winners=[1], ended_by="win")
    render(page, "onecard", "onecard", v, humans=3)
    assert page.locator('[data-act="rematch"]').count() == 1
    for rematch, button in (({"state": "open", "agreed": [1], "waiting": [0, 2]}, 1),
                            ({"state": "started", "agreed": [1, 2]}, 0),
                            ({"state": "expired"}, 1)):
        page.evaluate("r => { window.__ctl.rematch = r; window.__ctl.render(); }", rematch)
        assert page.locator('[data-act="rematch"]').count() == button, rematch
    page.evaluate("r => { window.__ctl.rematch = r; window.__ctl.render(); }",
                  {"state": "started", "agreed": [1, 2]})
    assert "한 판 더 시작했어요" in page.locator("#rematch").inner_text()


def test_a_rematch_without_a_friend_says_who_a_bot_stands_in_for(new_page: Any) -> None:
    """docs/websocket.md 3.1: 한 판 더 starts once someone agreed and the
    others turned it down or let its 20 s go; their seats get a bot. The
    one who agreed landed at a table of bots, nothing said (rooms audit).
    The line says who, my own name marked "(나)" as at the table."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 3, humans=3)
    v.update(finished=True, winners=[1], ended_by="win")
    render(page, "onecard", "onecard", v, humans=3)
    page.evaluate("r => { window.__ctl.rematch = r; window.__ctl.render(); }",
                  {"state": "open", "agreed": [0], "declined": [2], "waiting": [1]})
    assert "한 판 더: 나 (나)" in page.locator("#rematch").inner_text()
    page.evaluate("""() => { document.getElementById("toasts").replaceChildren();
      window.ttanjit.game.onRematch.call(window.__ctl, {game_id: window.__ctl.id,
        rematch: {state: "started", agreed: [0, 1], declined: [2], new_game_id: "x"}}); }""")
    said = f"{NAMES[2]} 없이 시작해요. 그 자리는 봇이 맡아요."
    assert page.locator("#toasts .toast").inner_text() == said
    assert page.locator("#rematch").inner_text() == f"새 게임을 시작해요… {said}"
    # everyone came along: nothing more said
    page.evaluate("""() => { document.getElementById("toasts").replaceChildren(); const c = window.__ctl;
      c.rematch = null; window.ttanjit.game.onRematch.call(c, {game_id: c.id,
        rematch: {state: "started", agreed: [0, 1, 2], new_game_id: "x"}}); }""")
    assert page.locator("#toasts .toast").count() == 0
    assert page.locator("#rematch").inner_text() == "새 게임을 시작해요…"


def test_a_block_right_after_a_reload_is_said(new_page: Any) -> None:
    """RULES.md 1.5: 3s block an attack of 2s; the log says "공격 N장을
    막았어요" from the attack it saw. Right after a reload it had seen none,
    and the block read as a plain ♣3 (review): the whole view's attack counts."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 2)
    v.update(top="2C", suit="C", pending=4, twos_only=True)
    render(page, "onecard", "onecard", v)
    said = page.evaluate("""v => { const c = window.__ctl; c.tableState = {};
      window.__mod.onWholeView(c, {view: v, game_seq: 9, resync: true});
      window.__mod.onEvent(c, {type: 'played', seat: 1, cards: ['3C'], suit: 'C', pending: 0, left: 4},
        {game_seq: 10});
      return JSON.parse(sessionStorage.getItem('ttanjit.log.craft-onecard')).map((l) => l.text).pop(); }""", v)
    assert said.endswith("♣3 · 공격 4장을 막았어요"), said


def test_a_reload_that_missed_nothing_adds_no_gap_to_the_log(new_page: Any) -> None:
    """Trial finding: after any reload the One Card log said "… 이 창에서
    보지 못한 진행은 건너뛰었어요." though nothing had been missed. The tab
    keeps how far its log goes (the last event's game_seq): a whole view at
    that point adds nothing; one past it still says what was skipped."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 2)
    render(page, "onecard", "onecard", v)
    texts = "() => JSON.parse(sessionStorage.getItem('ttanjit.log.craft-onecard') || '[]').map((l) => l.text)"
    page.evaluate("""v => { window.__mod.onEvent(window.__ctl, {type: 'passed', seat: 1}, {game_seq: 7});
      window.__ctl.tableState = {};  // the reload: what the tab kept is in sessionStorage
      window.__mod.onWholeView(window.__ctl, {view: v, game_seq: 7, resync: true}); }""", v)
    assert page.evaluate(texts) == ["봇2 (어려움): 카드가 없어 넘겼어요."]
    page.evaluate("""v => { window.__ctl.tableState = {};
      window.__mod.onWholeView(window.__ctl, {view: v, game_seq: 9, resync: true}); }""", v)
    assert page.evaluate(texts)[-1] == "… 이 창에서 보지 못한 진행은 건너뛰었어요."
    # a whole view brings the seat's last events (`recent`): those it had
    # not logged are added; a gap line only where they do not reach back
    page.evaluate("""v => { window.__ctl.tableState = {};
      const ev = (s, type) => ({game_seq: s, t: s * 1000, event: {type, seat: 1}});
      window.__mod.onWholeView(window.__ctl, {view: v, game_seq: 11, resync: true,
        recent: [ev(8, 'passed'), ev(9, 'passed'), ev(10, 'passed'), ev(11, 'passed')]}); }""", v)
    assert page.evaluate(texts)[-3:] == ["… 이 창에서 보지 못한 진행은 건너뛰었어요."] + [
        "봇2 (어려움): 카드가 없어 넘겼어요."] * 2  # 10 and 11, once each, no second gap line
    before = page.evaluate(texts)
    page.evaluate("""v => { window.__ctl.tableState = {};
      window.__mod.onWholeView(window.__ctl, {view: v, game_seq: 12, resync: true,
        recent: [{game_seq: 12, t: 1, event: {type: 'passed', seat: 1}}]}); }""", v)
    assert page.evaluate(texts) == before + ["봇2 (어려움): 카드가 없어 넘겼어요."]  # reaches back: no gap


def test_a_finished_games_away_badge_is_on_the_others_seats_only(new_page: Any) -> None:
    """Review finding: once a game is over, a person away is still worth
    saying (a 한 판 더 waits on them), but not of my own seat (a player back
    at a finished game read "연결 끊김" on themselves)."""
    page = new_page(width=390, height=844)
    v = engine_view("onecard", 3, humans=2)
    v.update(finished=True, winners=[0], ended_by="win", hand_counts=[0, 5, 3])
    for s in v["seats"]:
        if s.get("kind") == "human":
            s["connected"] = False
    render(page, "onecard", "onecard", v, humans=2)
    away = page.locator(".badge.away")
    assert away.count() == 1
    assert page.locator('[data-seat="1"] .badge.away').count() == 1


def test_results_left_by_the_top_bar_do_not_come_back(stack: Any, new_page: Any) -> None:
    """Trial finding (seen twice, One Card and 줄줄이 벌점): results left by
    the top bar's 딴짓 instead of 로비로 came back on every reload, even of
    the bare address. Leaving them any way is done with them (as 로비로:
    their 한 판 더 declined)."""
    page = new_page(width=1000, height=860)
    sign_in(page, "결과봤음")
    page.locator('.game-card[data-game="onecard"] [data-act="create"]').click()
    page.wait_for_selector("#room-code")
    # a game whose people are all away this long ends (RULES.md 4, shortened)
    page.evaluate("() => window.ttanjit.net.send({type: 'room_options', options: {abandon_ms: 1500}})")
    page.wait_for_function("() => window.ttanjit.state.room.options.abandon_ms === 1500")
    start_with_a_bot(page)
    page.wait_for_selector('section.table[data-game="onecard"] .oc-hand .card')
    gid = page.evaluate("() => window.ttanjit.game.id")
    token = page.evaluate("() => JSON.parse(localStorage.getItem('ttanjit.id.token'))")
    page.context.set_offline(True)
    # offline until the server has ended it (a fixed 4 s offline left 2.5 s
    # for the socket's close and the abandon timer: a loaded machine's game
    # could go on once the page was back)
    ask = urllib.request.Request(f"{stack.url.rstrip('/')}/api/history/onecard?offset=0&limit=10",
                                 headers={"authorization": f"Bearer {token}"})
    deadline = time.monotonic() + 30
    while True:
        with urllib.request.urlopen(ask, timeout=5) as r:
            if any(g["game_id"] == gid for g in json.loads(r.read())["games"]):
                break
        assert time.monotonic() < deadline, "the game not ended in 30 s with its player away"
        time.sleep(0.2)
    page.context.set_offline(False)
    page.wait_for_selector("section.results", timeout=30_000)
    assert page.evaluate("() => location.hash") == f"#/game/{gid}"
    page.locator(".topbar .brand").click()
    page.wait_for_selector(".game-card")
    for _ in range(2):
        page.reload()
        page.wait_for_function("() => window.ttanjit.net.welcome")
        page.wait_for_selector(".game-card")
        page.wait_for_timeout(1000)  # the welcome's screen, if any
        assert page.evaluate("() => location.hash") in ("", "#/")
        assert page.locator("section.results").count() == 0


def test_leaving_results_declines_again_after_another_yes(new_page: Any) -> None:
    """Review finding: 한 판 더 pressed, then 내 기록 (declined, done with),
    then back to the results: the stored yes was sent again, and 로비로 then
    declined nothing — the player was pulled from the lobby into the next
    game. Done with a game forgets its yes; a new yes is declined again when
    the results are left."""
    page = new_page(width=1000, height=860)
    sign_in(page, "한판더")
    page.evaluate("""() => { const g = window.ttanjit.game; g.id = 'zzzzzzzzzzzz';
        g.view = {game: 'onecard', finished: true, seat: 0, winners: [1]}; }""")
    outs = """() => (window.__frames || []).filter((f) => f.dir === 'out'
        && (f.type === 'rematch' || f.type === 'rematch_decline')).map((f) => f.type)"""
    page.evaluate("() => { window.__frames.length = 0; window.ttanjit.game.askRematch(); }")
    page.evaluate("() => window.ttanjit.game.doneWith()")  # 내 기록, say
    assert page.evaluate(outs) == ["rematch", "rematch_decline"]
    assert page.evaluate("() => sessionStorage.getItem('ttanjit.rematch.zzzzzzzzzzzz')") is None
    page.evaluate("() => window.ttanjit.game.askRematch()")  # back, and yes again
    page.evaluate("() => window.ttanjit.game.doneWith()")  # 로비로
    assert page.evaluate(outs) == ["rematch", "rematch_decline", "rematch", "rematch_decline"]


def test_a_pick_kept_offline_past_its_turn_is_not_made_on_the_next(new_page: Any) -> None:
    """RULES.md 4: a disconnected player's clock keeps running (another
    player is connected), and at the deadline the game picks for them
    (RULES.md 2.5). A pick made offline is kept and sent once the
    connection is back — by then its turn is over and the next one has
    begun: it went onto the next turn, chosen against rows the player never
    saw, and was confirmed there (review finding, left alone twice). It
    carries the turn it was chosen on now (docs/websocket.md 3) and is
    refused, and the player is told."""
    host, guest, _ = host_and_guest(new_page, "penalty_rows", ("켜둔사람", "끊긴사람"), (390, 844))
    host.get_by_role("button", name="시작").click()
    for p in (host, guest):
        p.wait_for_selector('section.table[data-game="penalty_rows"]', timeout=20_000)
    guest.wait_for_function("""() => { const v = window.ttanjit.game.view;
      return v && v.phase === 'select' && v.turn_no === 1; }""", timeout=20_000)
    guest.wait_for_function("() => document.querySelector('.pr-hand .card:not([disabled])')",
                            timeout=20_000)
    key = view(guest)["turn_key"]
    guest.context.set_offline(True)
    guest.evaluate("() => window.ttanjit.net.drop()")  # the socket's end, as a phone notices it
    guest.wait_for_function("() => window.ttanjit.net.state !== 'open'")
    number = guest.eval_on_selector(".pr-hand .card:not([disabled])", "e => e.dataset.card")
    guest.locator(f'.pr-hand .card[data-card="{number}"]').click()
    guest.locator('.pr-row[data-row="2"]').click()
    guest.locator(f'[data-act="confirm"]:has-text("{number} → 2번 줄 확정")').click()
    guest.wait_for_selector('.toast:has-text("연결이 끊겨 있어요. 다시 연결되면 보내요.")')
    # the host stays: the 20 s run out, the game picks for both, turn 2 begins
    host.wait_for_function("() => window.ttanjit.game.view.turn_no === 2", timeout=40_000)
    guest.context.set_offline(False)
    guest.wait_for_selector('#refusal:not([hidden])[data-code="turn_passed"]', timeout=20_000)
    assert "그 수를 고른 차례가 이미 끝나서 내지 않았어요." in guest.locator("#refusal").inner_text()
    sent = [f for f in frames(guest) if f["dir"] == "out" and f["type"] == "action"]
    # the kept pick and its 확정 (which carries the pick), both of that turn
    assert sent and {f["act"] for f in sent} <= {"select", "confirm"}, sent
    assert {f["turn_key"] for f in sent} == {key}
    for s in sent:
        answers = [f for f in frames(guest) if f["dir"] == "in" and f["cmd_id"] == s["cmd_id"]]
        assert [(f["type"], f["code"]) for f in answers] == [("error", "turn_passed")], s
    # turn 2 is the player's to choose: nothing picked, nothing confirmed for them
    guest.wait_for_function("() => window.ttanjit.game.view.turn_no === 2")
    v = view(guest)
    assert v["selection"] is None and not v["confirmed"][v["seat"]], v
    guest.wait_for_function("""() => document.querySelector('.pr [data-act="confirm"]')
      && document.querySelector('.pr-hand .card:not([disabled])')""", timeout=15_000)
    assert not guest.locator(".pr-hand .card.selected").count()  # turn 2's hand: nothing chosen
