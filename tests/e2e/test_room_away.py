"""A player away from a waiting room longer than a room seat waits (RULES.md
4's 60 s; 2 s on this module's stack) comes back to the lobby, told they
are in no room now.
A module of its own: its stack's rooms let an away player go after 2 s,
which no other browser test should meet."""

from __future__ import annotations

import signal
from typing import Any

import pytest
from browserkit import host_and_guest, sign_in

pytestmark = pytest.mark.e2e

MATCHMAKER_ENV = {"TTANJIT_ROOM_AWAY_MS": "2000"}


def test_a_player_the_room_let_go_while_away_is_back_in_the_lobby(new_page: Any) -> None:
    """Trial finding: back after 70 s offline, the room screen showed the
    room as it was (even 방장 with 시작); 시작 said "이미 시작한 방이에요."
    and 방 나가기 "방에 들어가 있지 않아요.", until a reload."""
    host, guest, code = host_and_guest(new_page, "penalty_rows", ("방지기", "잠깐손님"), (390, 844))
    guest.context.set_offline(True)
    host.wait_for_function("() => !document.body.innerText.includes('잠깐손님')", timeout=20_000)
    guest.context.set_offline(False)
    guest.wait_for_selector('.toast:has-text("이제 방에 들어가 있지 않아요.")', timeout=30_000)
    guest.wait_for_selector(".game-card")
    assert guest.locator("#room-code").count() == 0
    assert guest.evaluate("() => location.hash") == "#/"  # the lobby's address, not the room's
    assert host.locator("#room-code").inner_text() == code  # the host's room goes on


def test_the_lobbys_late_word_and_a_let_go_seat_are_said(new_page: Any) -> None:
    """The gateway asks the lobby again when it did not answer ``hello`` (a
    leader change) and says its late word (``lobby``); a seat let go while
    the lobby could not hear the player was back is said (``room_left``
    ``away``): the room screen stayed as it was, with no word, before.
    The frames are handed to the tab as they come from the gateway (the
    failover itself: tests/integration/test_matchmaker_replicas.py)."""
    page = new_page(width=390, height=844)
    sign_in(page, "늦은소식")
    page.locator('.game-card[data-game="onecard"] [data-act="create"]').click()
    code = page.locator("#room-code").inner_text()
    room = page.evaluate("() => window.ttanjit.state.room")
    give = "(f) => window.ttanjit.net.onFrame(JSON.stringify(f))"
    page.evaluate(give, {"type": "lobby"})  # in no room now
    page.wait_for_selector('.toast:has-text("이제 방에 들어가 있지 않아요.")')
    page.wait_for_selector(".game-card")
    assert page.evaluate("() => location.hash") == "#/"
    page.evaluate(give, {"type": "lobby", "room": room})  # in the room after all: back to it
    page.wait_for_selector("#room-code")
    page.evaluate(give, {"type": "room_left", "code": code, "reason": "away",
                         "message": "연결이 끊겨 있는 동안 방에서 나왔어요."})
    page.wait_for_selector('.toast:has-text("연결이 끊겨 있는 동안 방에서 나왔어요.")')
    page.wait_for_selector(".game-card")
    assert page.locator("#room-code").count() == 0
    # in the queue after all (its ticket kept while a re-queue went unanswered)
    page.evaluate(give, {"type": "lobby", "queued": {"game": "onecard", "seats": 2}})
    page.wait_for_selector('.banner.queue:has-text("상대를 찾고 있어요")')


def test_ratings_the_lobby_did_not_give_stay_shown_and_are_asked_again(new_page: Any) -> None:
    """A welcome the matchmaker did not answer (no ``lobby_known``: a leader
    change) has no ratings of its own: the lobby drew a rated player's as
    none. A ``ratings`` request it cannot answer is refused
    (``matchmaker_unavailable``), with no toast at each lobby drawing; the
    ratings are asked again when ``lobby`` says the lobby is back. The
    frames are handed to the tab as they come from the gateway."""
    page = new_page(width=390, height=844)
    sign_in(page, "레이팅그대로")
    page.wait_for_selector('#net[data-state="open"]')
    give = "(f) => window.ttanjit.net.onFrame(JSON.stringify(f))"
    shown = [{"game": "onecard", "mu": 27.0, "sigma": 5.0, "ordinal": 12.0, "games": 12,
              "display": 1612, "provisional": False}]
    welcome = page.evaluate("() => window.ttanjit.net.welcome")
    welcome.pop("lobby_known", None)
    # read as drawn (the lobby drawn again asks the real gateway, which answers)
    kept = page.evaluate("""([shown, welcome]) => { const give = (f) => window.ttanjit.net.onFrame(JSON.stringify(f));
      give({type: "ratings", ratings: shown}); give({...welcome, ratings: []});
      give({type: "error", code: "matchmaker_unavailable", ref: "ratings",
            message: "매칭 서버에 잠시 연결할 수 없어요. 잠시 후 다시 해 주세요."});
      return window.ttanjit.state.ratings; }""", [shown, welcome])
    assert kept == shown
    page.wait_for_timeout(200)
    assert page.locator('.toast:has-text("매칭 서버")').count() == 0
    page.evaluate("() => window.__frames.splice(0)")
    page.evaluate(give, {"type": "lobby"})
    page.wait_for_function("() => window.__frames.some((f) => f.dir === 'out' && f.type === 'ratings')")


def test_a_queue_the_lobby_let_go_while_away_is_said(new_page: Any) -> None:
    """A drop the lobby heard late (a leader change) may take the ticket of
    a player who is back (docs/protocol.md 4.1): the matchmaker says so
    (``queue_cancelled`` ``away``) and the tab stops waiting, saying why,
    rather than search for a match for good. The frames are handed to the
    tab as they come from the gateway."""
    page = new_page(width=390, height=844)
    sign_in(page, "늦은대기")
    give = "(f) => window.ttanjit.net.onFrame(JSON.stringify(f))"
    page.evaluate(give, {"type": "queued", "game": "onecard", "seats": 2, "ticket": "t-1"})
    page.wait_for_selector('.banner.queue:has-text("상대를 찾고 있어요")')
    page.evaluate(give, {"type": "queue_cancelled", "game": "onecard", "reason": "away",
                         "message": "연결이 끊겨 있는 동안 빠른 대전 대기가 취소됐어요."})
    page.wait_for_selector('.toast:has-text("연결이 끊겨 있는 동안 빠른 대전 대기가 취소됐어요.")')
    page.wait_for_selector(".banner.queue", state="detached")
    assert page.evaluate("() => window.ttanjit.state.queue") is None


def test_a_requeue_the_lobby_did_not_answer_is_asked_again(stack: Any, new_page: Any) -> None:
    """A tab back from a lost connection queues again for its game; with
    the matchmaker not answering (a leader change: here it is stopped), that
    ask failed with "매칭 서버에 잠시 연결할 수 없어요." and the queue was
    lost — while a lobby that kept the ticket matched the player later from
    a lobby screen that showed no queue. It is asked again until the lobby
    answers (docs/websocket.md ``welcome``)."""
    page = new_page(width=390, height=844)
    sign_in(page, "다시줄서기")
    page.evaluate("""() => sessionStorage.setItem('ttanjit.queue', JSON.stringify({
        game: 'onecard', seats: 2, level: 'easy', ms: Date.now(),
        player: JSON.parse(localStorage.getItem('ttanjit.id.player'))}))""")
    mm = next(p for p in stack.svc.procs if p.name == "matchmaker-e2e")
    unanswered = """() => (window.__frames || []).some(
        (f) => f.dir === 'in' && f.code === 'matchmaker_unavailable')"""
    mm.proc.send_signal(signal.SIGSTOP)
    try:
        page.reload()  # the page's memory gone, its queue kept for the player (main.js)
        page.wait_for_function(unanswered, timeout=30_000)
        # still shown as waiting meanwhile; a connection lost then asks again
        # (review finding: the queue was forgotten before it was asked again)
        page.wait_for_selector('.banner.queue:has-text("상대를 찾고 있어요")')
        page.evaluate("() => { window.__frames.length = 0; window.ttanjit.net.drop(); }")
        page.wait_for_function(unanswered, timeout=30_000)
    finally:
        mm.proc.send_signal(signal.SIGCONT)
    # asked again: queued, then matched with a bot (300 ms on this stack)
    page.wait_for_function("() => location.hash.startsWith('#/game/')", timeout=30_000)
    assert page.locator('.toast:has-text("매칭 서버")').count() == 0
