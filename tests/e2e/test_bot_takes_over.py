"""A bot takes a person's seat (RULES.md 4: the person left, or stayed away
a minute): every table says so the same way, from the common `seats` field
of the view (issue 13) — "봇이 대신함" at that seat, and on the person's own
screen a banner and no cards to play. First drawn from views the real
engines made, then live: the player leaves each game (the `leave` action)
and stays on the table screen, which follows the bot playing the seat
through `update` frames without asking for a `sync`."""

from __future__ import annotations

from typing import Any

import pytest
from browserkit import (
    assert_update_frames_only,
    engine_view,
    quick_match,
    render,
    shot,
    sign_in,
    view,
)

pytestmark = pytest.mark.e2e

# game -> (module, seats, how a seat is found on the table, my seat's element)
TABLES = {
    "onecard": ("onecard", 3, '.opp[data-seat="{s}"]', ".my-row"),
    "penalty_rows": ("penalty", 3, '.pr-player[data-seat="{s}"]', '.pr-player[data-seat="{s}"]'),
    "hakka": ("hakka", 4, '.hk-seat[data-seat="{s}"]', '.hk-seat[data-seat="{s}"]'),
}
# what the player could press on their own turn at each table
MY_CONTROLS = '.oc-actions button:not([disabled]), [data-act="one_card"], .pr-hand .card:not([disabled]), ' \
    '.hk-actions button, [data-act="resume"]'


@pytest.mark.parametrize("game", list(TABLES))
def test_takeover_badge_from_the_engines_view(new_page: Any, game: str) -> None:
    """Two people and bots: when the other person leaves, their seat shows
    봇이 대신함 (the bots' own seats do not); when I leave, my seat shows it,
    with the banner, and the table offers me nothing to press."""
    file, n, seat_sel, mine_sel = TABLES[game]
    page = new_page(width=1000, height=860)
    v = engine_view(game, n, seed=1, humans=2, leave=(1,))
    assert v["seats"][1]["substituted"] and v["seats"][1]["bot"] and v["n"] == n
    render(page, file, game, v, humans=2)
    assert page.locator(seat_sel.format(s=1) + " .badge.bot").inner_text() == "봇이 대신함"
    assert page.locator(".badge.bot").count() == 1  # the bots' seats are bots, not taken over
    assert page.locator(".banner.taken-over").count() == 0

    v = engine_view(game, n, seed=1, humans=2, leave=(0,))
    assert v["seat"] is None and "hand" not in v  # the shard sends a spectator's view then
    render(page, file, game, v, humans=2)
    assert page.locator(mine_sel.format(s=0) + " .badge.bot").count() == 1
    assert "봇이 내 자리를 이어받았어요" in page.locator(".banner.taken-over").inner_text()
    assert page.locator(MY_CONTROLS).count() == 0
    assert page.locator(".hand .card").count() == 0  # the bot's cards are not mine to see
    if game == "hakka":  # nor an empty hand of mine
        assert page.locator('[aria-label="내 손패"]').count() == 0
    if game == "onecard":  # nor greyed-out 1장 뽑기 / 카드 내기 (trial nitpick)
        assert page.locator(".oc-actions").count() == 0
    if game == "penalty_rows":  # the bot's 확정 is not said to be mine (trial nitpick)
        v["confirmed"][0] = True
        render(page, file, game, v, humans=2)
        said = page.locator('[data-state="confirmed"]').inner_text()
        assert said == "봇이 내 자리에서 확정했어요. 다른 사람을 기다리고 있어요…", said
    if game == "onecard":  # my row counts the cards the bot holds for me
        assert page.locator(".my-row .name").inner_text().endswith(f" · {v['hand_counts'][0]}장")
    assert page.evaluate("() => window.__ctl.mySeatIsHuman()") is False
    shot(page, f"taken-over-{game}")


# Whether the table ever drew the banner (a bot-only game is played out at
# once: it may be over before the test looks).
WATCH_BANNER = """() => { window.__banner = false;
  const see = () => { if (document.querySelector('.banner.taken-over')) window.__banner = true; };
  new MutationObserver(see).observe(document.getElementById('app'), {childList: true, subtree: true});
  see(); }"""


@pytest.mark.parametrize("game", list(TABLES))
def test_leaving_hands_my_seat_to_a_bot(new_page: Any, game: str) -> None:
    """Live, in each game: I leave but keep the table open. My seat shows
    봇이 대신함 and the banner, the alert of my turn is off, the bot plays my
    seat (bots alone play the game out at once; the table follows it to its
    end without asking for a sync) and 나가기 asks nothing."""
    _, n, _, mine_sel = TABLES[game]
    page = new_page(width=1000, height=860)
    sign_in(page, "떠나는이")
    gid = quick_match(page, game, seats=None if game == "hakka" else n)
    page.wait_for_function("() => window.ttanjit.game.view && window.ttanjit.game.view.hand")
    me = view(page)["seat"]
    assert page.evaluate("() => window.ttanjit.game.mySeatIsHuman()") is True
    page.evaluate(WATCH_BANNER)
    ok = page.evaluate("id => window.ttanjit.net.action(id, {type: 'leave'}).then(f => f.type)", gid)
    assert ok == "result"
    page.locator(mine_sel.format(s=me) + " .badge.bot").wait_for(timeout=10_000)
    assert page.evaluate("() => window.__banner") is True
    v = view(page)
    assert v["seats"][me]["substituted"] and v["seats"][me]["bot"]
    assert page.evaluate("() => window.ttanjit.game.mySeatIsHuman()") is False
    assert not page.evaluate("() => document.title.includes('내 차례')")
    # the bots play on in my place to the end: the table follows
    page.wait_for_function("() => window.ttanjit.game.view.finished", timeout=60_000)
    page.locator("section.results").wait_for(timeout=10_000)
    assert page.locator(mine_sel.format(s=me) + " .badge.bot").count() == 1
    assert page.locator('[data-act="rematch"]').count() == 0  # my seat is a bot's: no 한 판 더
    assert assert_update_frames_only(page, gid) > 0
    page.get_by_role("button", name="로비로").click()
    page.wait_for_selector(".game-card")
