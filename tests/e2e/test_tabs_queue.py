"""빠른 대전 across the browser's tabs (docs/websocket.md ``welcome``
``queued?``): a tab another tab takes the player from forgets its queue (a
reload of it must not queue again what the other tab cancelled), and the
player's last connection closing takes them out of the queue. So a queue
left waiting while the rules were read in a new tab ended unsaid when that
tab closed: the first tab, taking the player back, showed the lobby with no
queue (left-alone item). The closing tab hands its queue over.

A module of its own: its matchmaker fills no table with bots, so a queue
lasts as long as the test needs it."""

from __future__ import annotations

from typing import Any

from browserkit import frames, sign_in

MATCHMAKER_ENV = {"TTANJIT_BOT_WAIT_MS": "600000"}

WAITING = '.banner.queue:has-text("상대를 찾고 있어요")'
# a page in the background, then looked at (headless pages are all "visible")
HIDDEN = """() => Object.defineProperty(document, 'visibilityState',
  { get: () => 'hidden', configurable: true })"""
SEEN = """() => { delete document.visibilityState;
  document.dispatchEvent(new Event('visibilitychange')); }"""


def queue_onecard(page: Any) -> None:
    page.locator('.game-card[data-game="onecard"]').get_by_role("button", name="빠른 대전").click()
    page.wait_for_selector(WAITING)


def in_since_last_welcome(page: Any) -> set[str]:
    """The types of the frames this page got since its last welcome."""
    log = frames(page)
    last = max(i for i, f in enumerate(log) if f["type"] == "welcome")
    return {f["type"] for f in log[last:] if f["dir"] == "in"}


def queued_then_taken(new_page: Any, nickname: str) -> tuple[Any, Any]:
    """A page waiting in 원카드's queue, then a second tab of the browser
    that takes the player from it: (page, tab)."""
    page = new_page(width=390, height=844)
    sign_in(page, nickname)
    queue_onecard(page)
    tab = page.context.new_page()
    tab.goto(page.url)
    tab.wait_for_selector(WAITING)  # its welcome names the queue
    page.wait_for_selector('#net[data-state="replaced"]')
    return page, tab


def test_a_queue_the_closing_tab_still_waited_in_is_waited_in_again(new_page: Any) -> None:
    page, tab = queued_then_taken(new_page, "탭건너대기")
    page.wait_for_selector(".banner.queue", state="detached")
    # the tab that held the player closes still waiting while this one is
    # in the background; looked at, it takes the player back and waits in
    # the queue again (the close took them out)
    page.evaluate(HIDDEN)
    tab.close()
    page.wait_for_timeout(1500)  # the lobby is told the closed tab's end
    assert page.evaluate("() => window.ttanjit.net.state") == "replaced"
    page.evaluate(SEEN)
    page.wait_for_selector('#net[data-state="open"]')
    page.wait_for_selector(WAITING)
    assert page.evaluate("() => window.ttanjit.state.queue.game") == "onecard"
    # the server holds the ticket: queued again, or kept (this tab's hello
    # came before the closed one's end was told to the lobby) — 취소 finds it
    page.wait_for_timeout(500)
    page.locator(".banner.queue").get_by_role("button", name="취소").click()
    page.wait_for_selector(".banner.queue", state="detached")
    assert in_since_last_welcome(page) >= {"queue_cancelled"}, in_since_last_welcome(page)
    assert page.locator(".toast").count() == 0


def test_a_queue_cancelled_in_the_other_tab_stays_cancelled(new_page: Any) -> None:
    page, tab = queued_then_taken(new_page, "탭에서취소")
    tab.get_by_role("button", name="취소").click()
    tab.wait_for_selector(".banner.queue", state="detached")
    page.evaluate(HIDDEN)
    tab.close()
    page.wait_for_timeout(1500)
    page.evaluate(SEEN)
    page.wait_for_selector('#net[data-state="open"]')
    page.wait_for_timeout(1500)  # a re-queue would have been sent by now
    assert page.locator(".banner.queue").count() == 0
    assert page.evaluate("() => window.ttanjit.state.queue") is None
    # queued once, by the button: not again by the tab taking the player back
    assert [f["type"] for f in frames(page) if f["dir"] == "out" and f["type"] == "queue"] == ["queue"]


def test_a_queue_handed_over_long_ago_is_not_waited_in_again(new_page: Any) -> None:
    """Review finding: a tab looked at hours after the other closed queued a
    game long forgotten. As a queue kept across a reload: 10 minutes."""
    page, tab = queued_then_taken(new_page, "오래된대기")
    page.evaluate(HIDDEN)
    tab.close()
    page.wait_for_timeout(1500)
    page.evaluate("() => { const real = Date.now; Date.now = () => real() + 11 * 60_000; }")
    page.evaluate(SEEN)
    page.wait_for_selector('#net[data-state="open"]')
    page.wait_for_timeout(1500)  # a re-queue would have been sent by now
    assert page.locator(".banner.queue").count() == 0
    assert [f["type"] for f in frames(page) if f["dir"] == "out" and f["type"] == "queue"] == ["queue"]
