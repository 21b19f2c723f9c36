"""What a table offers someone who only looks: a spectator (관전) and a
replay (다시 보기) are read-only, so they get no turn controls — no hint to
pick a card, no confirm button, no countdown, no cards to press, no sound
switch — and one clear way back; and a finished 줄줄이 벌점 table keeps no
empty bottom dock over its rows. Drawn from views the real engine made."""

from __future__ import annotations

from typing import Any

import pytest
from browserkit import engine_view, new_engine, render, shot

pytestmark = pytest.mark.e2e

# what a player could press or read on their own turn at 줄줄이 벌점
TURN_CONTROLS = '.pr-action, .dock-timer, .pr-hand .card:not([disabled]), [data-act="confirm"]'


def played_out(n: int = 3, seed: int = 3) -> dict[str, Any]:
    """Seat 0's view of a one-round 줄줄이 벌점 game played to its end
    (each seat picks its first legal card and row and confirms)."""
    e = new_engine("penalty_rows", n, seed, end="rounds", rounds=1)
    t = 0
    for _ in range(500):
        if e.view(0).get("finished"):
            break
        t += 10
        moved = False
        for s in range(n):
            acts = e.legal_actions(s)
            if acts:
                act = next((a for a in acts if a["type"] != "select"), acts[0])
                moved = e.apply(t, s, act).ok or moved
        if not moved:
            t = max(t + 1, e.next_deadline() or t + 1000)
            e.apply(t)
    v = dict(e.view(0))
    assert v["finished"], v
    return v


def public_view(n: int = 3, seed: int = 3) -> dict[str, Any]:
    """What a spectator of a new 줄줄이 벌점 game sees (``view(None)``)."""
    e = new_engine("penalty_rows", n, seed)
    v = dict(e.view(None))
    assert "hand" not in v
    return v


def as_(page: Any, role: str) -> None:
    """Draw the table again with the stand-in controller as a spectator or a replay."""
    page.evaluate("role => { window.__ctl[role] = true; window.__ctl.render(); }", role)


def test_a_replay_shows_the_hand_but_offers_no_turn(new_page: Any) -> None:
    page = new_page(width=390, height=844)
    render(page, "penalty", "penalty_rows", engine_view("penalty_rows", 3))
    assert page.locator(TURN_CONTROLS).count() > 0  # a player on their turn has them
    assert page.locator('[data-act="sound"]').count() == 1
    as_(page, "replay")
    assert page.locator(".pr-hand .card").count() == 10  # the seat's hand, shown
    assert page.locator(TURN_CONTROLS).count() == 0
    assert page.locator('[data-act="sound"]').count() == 0
    assert page.locator('.game-head [data-act="leave"]').inner_text() == "내 기록으로"
    shot(page, "replay-penalty-turn")


@pytest.mark.parametrize(("file", "game", "name"), [
    ("onecard", "onecard", ".my-row .name"), ("hakka", "hakka", ".hk-seat .name"),
    ("penalty", "penalty_rows", ".pr-player .name")])
def test_a_replay_seen_from_another_seat_is_not_mine(new_page: Any, file: str, game: str,
                                                     name: str) -> None:
    """Defects (replay from another player's seat): that seat was labelled
    "(나)", and One Card offered [1장 뽑기], [카드 내기] and [원카드!]."""
    page = new_page(width=390, height=844)
    v = engine_view(game, 4 if game != "penalty_rows" else 3)
    if game == "onecard":
        v.update(turn=0, pending=0)
    render(page, file, game, v)
    assert any("(나)" in t for t in page.locator(name).all_inner_texts())  # live: my seat
    # the crafted table becomes a replay's (records.js ReplayCtl: the
    # record's events up to the step shown, none here)
    page.evaluate("() => { window.__ctl.replay = true; window.__ctl.doc = {my_seat: 2}; "
                  "window.__ctl.eventsSoFar = () => []; window.__ctl.render(); }")
    assert not any("(나)" in t for t in page.locator(name).all_inner_texts())
    assert page.locator('[data-act="draw"], [data-act="play"], [data-act="one_card"]').count() == 0
    if game == "onecard":  # no turn of its own: no hint to pick, no card to press
        assert "낼 카드를 눌러" not in page.locator("section.table").inner_text()
        assert page.locator(".oc-hand .card:not([disabled])").count() == 0
    if game == "onecard":  # its end from the winner's seat is not my win (it said "이겼어요!")
        page.evaluate("""() => { const c = window.__ctl; c.view = {...c.view, finished: true, winners: [0],
          ended_by: 'win'}; c.render(); }""")
        title = page.locator(".result-title").inner_text()
        assert title != "이겼어요!" and title.endswith("이겼어요."), title
    page.evaluate("() => { window.__ctl.doc = {my_seat: 0}; window.__ctl.render(); }")
    assert any("(나)" in t for t in page.locator(name).all_inner_texts())  # my own replay
    if game == "onecard":
        assert page.locator(".result-title").inner_text() == "이겼어요!"


def test_a_spectator_gets_no_sound_switch_and_no_second_exit(new_page: Any) -> None:
    page = new_page(width=390, height=844)
    render(page, "penalty", "penalty_rows", engine_view("penalty_rows", 3))
    as_(page, "spectator")
    assert page.locator('[data-act="sound"]').count() == 0
    assert page.locator('.game-head [data-act="leave"]').count() == 0  # the watch bar has 로비로
    # a spectator's (public) view has no hand: the bottom dock holds the countdown only
    page.evaluate("v => { window.__ctl.view = v; window.__ctl.seat = () => null;"
                  " window.__ctl.render(); }", public_view())
    assert page.locator(".pr-dock .dock-timer").count() == 1
    assert page.locator(".pr-dock .pr-hand, .pr-action").count() == 0


def test_a_finished_table_keeps_no_dock_and_a_replay_goes_back_to_the_records(
        new_page: Any) -> None:
    page = new_page(width=390, height=844)
    render(page, "penalty", "penalty_rows", played_out())
    page.wait_for_selector("section.results")
    assert page.locator(".pr-dock").count() == 0
    assert page.locator('section.results [data-act="lobby"]').inner_text() == "로비로"
    as_(page, "replay")
    assert page.locator('section.results [data-act="lobby"]').inner_text() == "내 기록으로"
    # one way back, not two alike (the header's too: left-alone item)
    assert page.get_by_role("button", name="내 기록으로").count() == 1
    shot(page, "replay-penalty-end")


@pytest.mark.parametrize(("file", "game"), [
    ("onecard", "onecard"), ("hakka", "hakka"), ("penalty", "penalty_rows")])
def test_autopilot_offers_direct_play_on_a_live_table_only(new_page: Any, file: str,
                                                           game: str) -> None:
    """RULES.md 1.9, 2.5, 3.9: [직접 하기] ends a live seat's autopilot. A
    replay and a finished table showed "시간이 세 번 지나 자동 진행
    중이에요." with its [직접 하기] (replay audit); the seat's 자동 badge
    says it there."""
    page = new_page(width=390, height=844)
    v = engine_view(game, 4 if game != "penalty_rows" else 3)
    v["seats"][0]["autopilot"] = True
    render(page, file, game, v)
    assert page.locator('.banner.autopilot [data-act="resume"]').is_visible()  # live
    page.evaluate("() => { window.__ctl.eventsSoFar = () => []; }")  # (a replay's, records.js)
    as_(page, "replay")
    assert page.locator(".banner.autopilot").count() == 0
    page.evaluate("() => { const c = window.__ctl; c.replay = false; c.view = {...c.view, "
                  "finished: true, turn: null}; c.render(); }")
    assert page.locator(".banner.autopilot").count() == 0


def test_a_replay_tells_nothing_still_to_come(new_page: Any) -> None:
    """Replay audit: a replay read like the live table — "곧 다음 판을
    시작해요" over 줄줄이 벌점's round summary, "곧 다음 판을 나눠 줘요." at
    a Hakka hand's end, and to a One Card seat out of the game "남은 게임을
    구경하거나 나가도 돼요."; the next step is what comes."""
    page = new_page(width=390, height=844)
    said = "() => document.querySelector('section.table').innerText"
    v = engine_view("penalty_rows", 3)
    v.update(phase="intermission", round=1)
    render(page, "penalty", "penalty_rows", v)
    assert "곧 다음 판" in page.evaluate(said)  # live
    page.evaluate("() => { window.__ctl.eventsSoFar = () => []; }")
    as_(page, "replay")
    assert "1판 결과" in page.evaluate(said) and "곧" not in page.evaluate(said)
    e = new_engine("hakka", 4)
    while e.view(0)["phase"] != "scoring":
        seat = e.view(0)["turn"]
        assert e.apply(100, seat, e.legal_actions(seat)[0]).ok
    render(page, "hakka", "hakka", dict(e.view(0)))
    assert "곧 다음 판" in page.evaluate(said)
    page.evaluate("() => { window.__ctl.eventsSoFar = () => []; }")
    as_(page, "replay")
    assert "판이 끝났어요." in page.evaluate(said) and "곧" not in page.evaluate(said)
    v = engine_view("onecard", 3)
    v.update(eliminated=[0], hand_counts=[0, *v["hand_counts"][1:]], hand=[])
    render(page, "onecard", "onecard", v)
    assert "구경하거나 나가도" in page.evaluate(said)
    page.evaluate("() => { window.__ctl.eventsSoFar = () => []; }")
    as_(page, "replay")
    assert "탈락했어요." in page.evaluate(said) and "구경하거나" not in page.evaluate(said)
