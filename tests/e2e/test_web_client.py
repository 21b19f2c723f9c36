"""The web client in a real browser against the real stack (issue 7).

Each game is played by clicking, as a person does; screenshots of every
table are saved (to docs/screenshots/ for the README with `make screenshots`).
"""

from __future__ import annotations

import re
import signal
import time
from typing import Any

import pytest
from browserkit import (
    assert_update_frames_only,
    click_float_one_card,
    frames,
    hakka_act,
    hakka_my_turn,
    host_and_guest,
    join_room,
    onecard_my_turn,
    onecard_play_turn,
    open_room,
    penalty_can_pick,
    penalty_pick,
    quick_match,
    shot,
    sign_in,
    start_with_a_bot,
    table_state,
    view,
    wait_in_history,
)

pytestmark = pytest.mark.e2e


def no_horizontal_scroll(page: Any) -> bool:
    return bool(page.evaluate(
        "() => document.documentElement.scrollWidth <= window.innerWidth + 1"))


def test_lobby_rules_and_360px_layout(new_page: Any) -> None:
    """A phone-sized screen: sign-in, lobby, the three rules pages (the seed
    texts), in Korean with the self-hosted font, and nothing wider than 360 px."""
    page = new_page(width=360, height=740)
    assert page.evaluate("() => document.characterSet") == "UTF-8"
    page.fill("#nickname", "   ")
    page.get_by_role("button", name="손님으로 시작하기").click()
    # the browser's own check or the gateway's Korean message: nothing happens
    assert page.locator(".game-card").count() == 0
    sign_in(page, "폰유저")
    # what the player is filling in survives the lobby redrawing itself (a
    # `ratings` frame came meanwhile: seen under load, a room code typed
    # into the old box was lost)
    page.fill('input[name="code"]', "ABC123")
    page.locator('select[name="seats-penalty_rows"]').select_option("2")
    page.evaluate("() => window.ttanjit.net.send({type: 'ratings'})")
    page.wait_for_function("() => window.ttanjit.state.ratings !== undefined")
    page.wait_for_timeout(300)
    assert page.input_value('input[name="code"]') == "ABC123"
    assert page.input_value('select[name="seats-penalty_rows"]') == "2"
    page.fill('input[name="code"]', "")
    # 입장 with no code says what is missing (it did nothing: trial finding)
    page.get_by_role("button", name="입장").click()
    page.wait_for_selector('.toast:has-text("방 코드를 넣어 주세요")')
    assert page.locator(".game-card").count() > 0  # still the lobby
    assert page.evaluate("() => document.fonts.check('16px \"Noto Sans KR\"', '원카드')")
    assert no_horizontal_scroll(page)
    # each game card's choices two by two: 빠른 대전 and 방 만들기 side by side
    # (방 만들기 wrapped alone onto a line of its own: trial nitpick)
    for g in ("onecard", "penalty_rows", "hakka"):
        quick, create = (page.locator(f'.game-card[data-game="{g}"] [data-act="{a}"]').bounding_box()
                         for a in ("quick", "create"))
        assert quick and create and abs(quick["y"] - create["y"]) < 2 and quick["x"] < create["x"], (g, quick, create)
    shot(page, "lobby-360", full_page=True)
    for game, heading, phrase in (
        ("onecard", "원카드 규칙", "[카드 내기]"),
        ("penalty_rows", "줄줄이 벌점 규칙", "[58 → 2번 줄 확정]"),
        ("hakka", "하카 카드 규칙", "드리머"),
    ):
        page.goto(page.url.split("#")[0] + f"#/rules/{game}")
        page.wait_for_selector(f'.rules h2:has-text("{heading}")')
        assert phrase in page.locator(".rules").inner_text()
        assert no_horizontal_scroll(page)
        if game == "onecard":
            shot(page, "rules-onecard-360")


def test_the_one_card_rules_have_their_attack_table_and_lead_to_the_lobby(new_page: Any) -> None:
    """Trial findings: the One Card rules say "아래 표의 카드로 공격을 다음
    사람에게 넘기거나" and no table followed (the seed's table is missing:
    RULES.md 1.5 settles it); and "← 로비로" went back in the browser's
    history, out of the app when the page was opened from elsewhere."""
    page = new_page(width=390, height=844)
    sign_in(page, "규칙읽기")
    base = page.url.split("#")[0]
    page.goto(base + "healthz")  # another page first, as a link from elsewhere
    page.goto(base + "#/rules/onecard")
    page.wait_for_selector(".rules h2")  # the text fetched and laid out
    rows = page.locator(".rules li").all_inner_texts()
    table = {r.split(" — ")[0]: r for r in rows if " — " in r and "장 · " in r}
    assert list(table) == ["2", "A(♠A 말고)", "♠A", "흑백 조커", "컬러 조커"], rows
    assert table["♠A"].startswith("♠A — 5장 · 흑백 조커, 컬러 조커로만")
    assert "넘길 수 있는 카드가 없어요" in table["컬러 조커"]
    assert no_horizontal_scroll(page)
    page.get_by_role("button", name="← 로비로").click()
    page.wait_for_selector(".game-card")
    assert page.url.startswith(base)


def test_the_rules_from_a_room_lead_back_to_it(new_page: Any) -> None:
    """Review finding: the room screen's rules link opens in the same tab,
    and "← 로비로" left a player waiting in a room in the lobby, which shows
    no room (빠른 대전 then said "이미 방에 들어가 있어요."). From a room it
    is "← 방으로"."""
    page = new_page(width=390, height=844)
    sign_in(page, "방규칙")
    page.locator('.game-card[data-game="penalty_rows"] [data-act="create"]').click()
    code = page.locator("#room-code").inner_text()
    page.locator("a.rules-link").click()
    page.wait_for_selector(".rules h2")
    assert page.get_by_role("button", name="← 로비로").count() == 0
    page.get_by_role("button", name="← 방으로").click()
    assert page.locator("#room-code").inner_text() == code


def test_the_rules_from_a_table_open_here_and_lead_back_to_it(new_page: Any) -> None:
    """Tabs audit: the table's 규칙 opened a new tab, whose connection took
    the game from this one ("다른 곳에서 접속함"), and which showed the
    table, not the rules. They open in this tab, the game going on, and
    lead back to the table."""
    page = new_page(width=390, height=844)
    sign_in(page, "규칙보며")
    gid = quick_match(page, "onecard", 2)
    pages = len(page.context.pages)
    page.locator(".game-head a.rules-link").click()
    page.wait_for_selector(".rules h2")
    assert len(page.context.pages) == pages and page.evaluate("() => location.hash") == "#/rules/onecard"
    page.locator('nav.tabs a[href="#/rules/hakka"]').click()  # another game's rules on the way
    page.wait_for_selector('nav.tabs a.active[href="#/rules/hakka"]')
    page.get_by_role("button", name="← 게임으로").click()
    page.wait_for_selector('section.table[data-game="onecard"]')
    assert page.evaluate("() => location.hash") == f"#/game/{gid}"
    assert page.locator("#net").get_attribute("data-state") == "open"


def test_the_lobby_leads_back_to_the_room_i_am_in(new_page: Any) -> None:
    """Rooms audit: a guest in a room who tapped 딴짓 (the top bar) found a
    lobby with no way back — 빠른 대전, 방 만들기 and 입장 each answered
    "이미 방에 들어가 있어요.", only the browser's back button led to the
    room. The lobby says which room, offers the way back, and starts
    nothing else meanwhile."""
    page = new_page(width=360, height=640)
    sign_in(page, "방돌아가기")
    code = open_room(page, "onecard")
    page.locator(".topbar .brand").click()
    page.wait_for_selector(".game-card")
    assert page.locator(".banner.in-room").inner_text().startswith(f"원카드 방(코드 {code})에 들어가 있어요.")
    assert page.locator('[data-act="quick"]:not([disabled]), [data-act="create"]:not([disabled])').count() == 0
    page.locator('[data-act="back-to-room"]').click()
    assert page.locator("#room-code").inner_text() == code
    # a new nickname meanwhile: the room keeps the one it was joined with,
    # said, and the words outlive the reconnect's move to the room (tabs audit)
    page.locator(".topbar .brand").click()
    page.fill('input[name="new-nickname"]', "방에서새이름")
    page.locator('[data-act="rename"]').click()
    page.wait_for_selector("#room-code")
    page.wait_for_selector('#toasts .toast:has-text("이제 방에서새이름으로 보여요. 지금 방이나 게임에는 다음 판부터 보여요.")')
    page.get_by_role("button", name="방 나가기").click()
    page.wait_for_selector(".game-card")
    assert page.locator(".banner.in-room").count() == 0
    assert page.locator('[data-act="quick"]:not([disabled])').count() == 3


def test_a_refused_seat_count_leaves_the_room_as_it_was(new_page: Any) -> None:
    """Rooms audit: the host of a room with three seated picked 2명; the
    refusal said "인원 수가 올바르지 않아요." (a size the game has not) and
    the list stayed on 2명 over the three seats. It says why, and the list
    shows the room's count again."""
    page = new_page(width=390, height=844)
    sign_in(page, "인원바꾸기")
    card = page.locator('.game-card[data-game="onecard"]')
    card.locator('select[name="seats-onecard"]').select_option("3")
    card.locator('[data-act="create"]').click()
    page.wait_for_selector("#room-code")
    for i in range(2):
        page.locator('[data-act="add-bot"]').click()
        page.wait_for_selector(f".seat.bot >> nth={i}")
    page.locator('select[name="seats"]').select_option("2")
    page.wait_for_selector('#toasts .toast:has-text("그 인원보다 많아서 줄일 수 없어요")')
    page.wait_for_function("() => document.querySelector('select[name=seats]').value === '3'")
    assert page.locator(".seat").count() == 3


def test_copy_works_where_the_page_has_no_clipboard(new_page: Any) -> None:
    """Rooms audit: opened at a LAN address over http (no secure context,
    so no navigator.clipboard), 복사 did nothing at all. The code is copied
    the old way or left selected for the phone's own copy, and it says so."""
    page = new_page(width=390, height=844)
    page.context.add_init_script(
        "Object.defineProperty(Navigator.prototype, 'clipboard', {configurable: true, get: () => undefined});"
        # what the old way's copy takes: a text box's selection, else the page's
        "const ex = Document.prototype.execCommand; Document.prototype.execCommand = function (c, ...a) {"
        " if (c === 'copy') { const t = document.querySelector('textarea');"
        "  window.__copied = t ? t.value.slice(t.selectionStart, t.selectionEnd) : getSelection().toString(); }"
        " return ex.call(this, c, ...a); };")
    page.reload()
    assert page.evaluate("() => navigator.clipboard") is None
    sign_in(page, "코드복사")
    code = open_room(page, "onecard")
    page.get_by_role("button", name="복사").click()
    page.wait_for_selector("#toasts .toast")
    said = page.locator("#toasts .toast").inner_text()
    if said == "복사했어요.":  # the old way (a hidden text box, execCommand)
        assert page.evaluate("() => window.__copied") == code
    else:
        assert said == "코드를 선택해 두었어요. 길게 눌러 복사해 주세요."
        assert page.evaluate("() => getSelection().toString()") == code


def test_the_room_says_who_came_who_went_and_who_is_host_now(new_page: Any) -> None:
    """Rooms audit: the seats changed unsaid — the host heard nothing of a
    friend coming in, and when the host left the guest became 방장 with no
    word (the seat just turned 빈자리)."""
    host, guest, _ = host_and_guest(new_page, "onecard", ("하늘방장", "준호손님"), (390, 844))
    host.wait_for_selector('#toasts .toast:has-text("준호손님이 들어왔어요.")')
    host.get_by_role("button", name="방 나가기").click()
    guest.wait_for_selector('#toasts .toast:has-text("하늘방장이 나갔어요.")')
    guest.wait_for_selector('#toasts .toast:has-text("이제 내가 방장이에요.")')
    assert guest.locator('.seat .badge:has-text("방장")').count() == 1


def test_an_invite_link_brings_a_friend_straight_into_the_room(new_page: Any) -> None:
    """Rooms audit: on a phone the friend had to find 친구 방에 들어가기, a
    screen and a half below the games, and type the code. The room's 초대
    링크 (#/join/CODE) brings them in: signed in at once, or after the
    sign-in it asks for first."""
    host = new_page(width=390, height=844)
    sign_in(host, "초대한방장")
    code = open_room(host, "onecard")
    host.locator('[data-act="invite"]').click()
    host.wait_for_selector('#toasts .toast:has-text("초대 링크")')
    link = host.evaluate("() => location.origin + location.pathname") + f"#/join/{code}"
    new = new_page(width=390, height=844)  # nobody yet in this browser
    new.goto(link)
    sign_in_form = new.locator("#nickname")
    sign_in_form.fill("링크로온친구")
    new.get_by_role("button", name="손님으로 시작하기").click()
    new.wait_for_selector(f'#room-code:has-text("{code}")')
    host.wait_for_selector('.seat .name:has-text("링크로온친구")')
    known = new_page(width=390, height=844)
    sign_in(known, "원래있던친구")
    known.goto(link)
    known.wait_for_selector(f'#room-code:has-text("{code}")')
    host.wait_for_selector('.seat .name:has-text("원래있던친구")')
    # the link of a room that is gone says so on the lobby
    late = new_page(width=390, height=844)
    sign_in(late, "늦은친구")
    late.goto(link.replace(code, "ZZZZZZ"))
    late.wait_for_selector('.toast.error:has-text("방을 찾을 수 없어요")')
    assert late.locator(".game-card").count() == 3
    # opened during a game of one's own: the game stays, and it is said
    # (review: it went to the lobby, its toast wiped by the move)
    gid = quick_match(late, "onecard", 2)
    late.goto(link)
    late.wait_for_selector('.toast.error:has-text("게임이 진행 중이라 초대받은 방에 들어가지 않았어요.")')
    assert late.evaluate("() => location.hash") == f"#/game/{gid}"


def test_a_friend_late_for_the_room_is_offered_its_game_to_watch(new_page: Any) -> None:
    """Rooms audit: the friend who opened the invite link after 시작 heard
    only "이미 시작한 방이에요." The lobby offers the friends' game to
    watch (관전하기), by the link or the code typed; not when the host
    turned 관전 off."""
    host = new_page(width=390, height=844)
    sign_in(host, "먼저시작한방장")
    code = open_room(host, "onecard")
    start_with_a_bot(host)
    host.wait_for_selector('section.table[data-game="onecard"]', timeout=20_000)
    gid = host.evaluate("() => window.ttanjit.game.id")
    link = host.evaluate("() => location.origin + location.pathname") + f"#/join/{code}"
    late = new_page(width=390, height=844)
    sign_in(late, "늦게온친구")
    late.goto(link)
    late.wait_for_selector('.toast.error:has-text("이미 시작한 방이에요.")')
    offer = late.locator(".join .late-room")
    assert offer.inner_text().startswith(f"{code} 방은 이미 게임을 시작했어요."), offer.inner_text()
    # in view on a phone, its button under the keyboard (the join box is a
    # screen and a half down: only the toast was seen, new-user trial), and
    # kept there by the lobby's redraws
    late.wait_for_timeout(1_000)
    box = offer.bounding_box()
    assert box and 0 <= box["y"] and box["y"] + box["height"] <= 844, box
    assert late.evaluate("() => document.activeElement.dataset.act") == "watch-late"
    offer.get_by_role("button", name="관전하기").click()
    late.wait_for_selector(f'section.page.watch[data-game-id="{gid}"] section.table', timeout=20_000)
    assert late.locator(".page.watch .oc-hand .card").count() == 0  # a spectator's view
    # typed on the lobby's 입장, the same; another try takes the offer away
    late.locator('.watch-bar [data-act="lobby"]').click()
    late.wait_for_selector(".game-card")
    assert late.locator(".join .late-room").count() == 0
    late.fill('input[name="code"]', code.lower())
    late.get_by_role("button", name="입장").click()
    late.wait_for_selector(f'.join .late-room[data-game-id="{gid}"]')
    late.fill('input[name="code"]', "ZZZZZZ")
    late.get_by_role("button", name="입장").click()
    late.wait_for_selector('.toast.error:has-text("방을 찾을 수 없어요")')
    assert late.locator(".join .late-room").count() == 0
    # 관전 off: the refusal alone
    shut = new_page(width=390, height=844)
    sign_in(shut, "관전끈방장")
    shut_code = open_room(shut, "onecard")
    shut.locator('input[name="spectators"]').uncheck()
    shut.wait_for_function("() => window.ttanjit.state.room.options.spectators === false")
    start_with_a_bot(shut)
    shut.wait_for_selector('section.table[data-game="onecard"]', timeout=20_000)
    late.fill('input[name="code"]', shut_code)
    late.get_by_role("button", name="입장").click()
    late.wait_for_selector('.toast.error:has-text("이미 시작한 방이에요.")')
    late.wait_for_timeout(300)
    assert late.locator(".join .late-room").count() == 0


def test_the_room_shows_a_friend_whose_connection_went(new_page: Any) -> None:
    """RULES.md 4: a room seat waits 60 s for a player whose connection
    went. The others saw them as still there, until the seat let them go
    (rooms audit): the seat says 연결 끊김, and so does a toast."""
    host, guest, code = host_and_guest(new_page, "onecard", ("기다리는방장", "창닫는손님"), (390, 844))
    guest.close()
    host.wait_for_selector('.seat:has-text("창닫는손님") .badge.away')
    host.wait_for_selector('#toasts .toast:has-text("창닫는손님의 연결이 끊겼어요.")')
    # and 시작 says what starting now means for them (RULES.md 4)
    # a change in the room takes the host off no other screen (review: a
    # friend's phone going to sleep pulled them off the rules)
    host.locator("a.rules-link").click()
    host.wait_for_selector(".rules h2")
    third = new_page(width=390, height=844)
    sign_in(third, "세번째손님")
    join_room(third, code)
    host.wait_for_function("() => window.ttanjit.state.room.members.filter((m) => m.kind === 'human').length === 3")
    assert host.evaluate("() => location.hash").startswith("#/rules/")
    host.get_by_role("button", name="← 방으로").click()
    assert host.locator("#start-note").inner_text() == (
        "창닫는손님의 연결이 끊겨 있어요. 시작한 뒤 1분 안에 돌아오지 않으면 봇이 그 자리를 이어받아요. "
        "지금 시작하면 빈자리 1개는 빼고 3명이 해요.")


def signed(n: int) -> str:
    """A score change as the client writes it (state.js ``signed``)."""
    return f"+{n}" if n > 0 else f"\u2212{-n}" if n < 0 else "\u00b10"


def blocked(console: list[str]) -> list[str]:
    """What the browser said when it blocked sound or vibration."""
    return [t for t in console if "vibrate" in t or "AudioContext" in t]


@pytest.mark.timeout(420)  # the game may take 300 s (below)
def test_onecard_full_game_with_reload_and_drop(new_page: Any) -> None:
    """A whole One Card game against a bot, to the results, by clicking; a
    page reload and a dropped connection in the middle lose nothing. The
    table follows `update` frames: the client asks for no `sync` after the
    game's first view (issue 13), nor after a reconnect that brings the game
    back."""
    page = new_page(width=1000, height=860)
    sign_in(page, "원카드왕")
    game_id = quick_match(page, "onecard", seats=2)
    # typically 20-70 s against the bot; a long game (the pile cycles, the
    # hands grow) took over 200 s under load
    deadline = time.monotonic() + 300
    turns = 0
    reloaded = dropped = False
    said: list[str] = []  # the browser's console after the reload
    while time.monotonic() < deadline:
        if page.locator("section.results").count():
            if reloaded and dropped:
                break
            # over before my second turn (a bot can play out its hand in one
            # chain of K, J and Q: it did, once): another game for the reload
            page.get_by_role("button", name="로비로").click()
            page.wait_for_selector(".game-card")
            game_id, turns = quick_match(page, "onecard", seats=2), 0
            continue
        click_float_one_card(page)
        if not onecard_my_turn(page):
            page.wait_for_timeout(80)
            continue
        if turns == 1 and not reloaded:
            shot(page, "onecard-table")
            hand = sorted(view(page)["hand"])
            assert assert_update_frames_only(page, game_id) > 0
            page.on("console", lambda m: said.append(m.text))
            page.reload()
            page.wait_for_selector('section.table[data-game="onecard"]')
            page.wait_for_function("() => window.ttanjit.game.view && window.ttanjit.game.view.hand")
            page.wait_for_selector("section.table .oc-hand .card")
            # reloaded on my turn: the page has not been tapped yet, so no
            # beep or vibration is tried (the browser blocks and logs both)
            page.wait_for_timeout(1000)  # console messages reach the test a little later
            assert not blocked(said), said
            assert page.evaluate("() => window.ttanjit.game.id") == game_id
            assert sorted(view(page)["hand"]) == hand
            reloaded = True
            # and a dropped connection: the session resumes on its own
            page.evaluate("() => window.ttanjit.net.drop()")
            page.wait_for_selector('#net[data-state="open"]')
            dropped = True
            continue
        try:
            onecard_play_turn(page)
        except Exception as exc:  # say where the game stood, not only which click failed
            raise AssertionError(table_state(page)) from exc
        turns += 1
    if not page.locator("section.results").count():
        raise AssertionError("no results within 300 s: " + table_state(page))
    assert reloaded and dropped, (turns, view(page).get("ended_by"), view(page).get("hand_counts"))
    # since the reload: a sync for the view the reload lost, none after the
    # dropped connection's welcome (the gateway sends what was missed)
    assert assert_update_frames_only(page, game_id) > 0
    welcomes = [f for f in frames(page) if f["type"] == "welcome"]
    syncs = [f for f in frames(page) if f["dir"] == "out" and f["type"] == "sync"]
    assert len(welcomes) == 2 and len(syncs) <= 1, frames(page)
    shot(page, "onecard-results")
    v = view(page)
    assert v["finished"] and v["ended_by"] in ("win", "last_player")
    page.get_by_role("button", name="로비로").click()
    page.wait_for_selector(".game-card")


def test_onecard_table_at_360px(new_page: Any) -> None:
    """The One Card table on a phone: [1장 뽑기] left of [카드 내기], the
    [원카드!] button, no sideways scrolling; a refused card is explained."""
    page = new_page(width=360, height=760)
    sign_in(page, "폰원카드")
    quick_match(page, "onecard", seats=3)
    page.wait_for_function("() => { const v = window.ttanjit.game.view; return v && v.turn === v.seat; }",
                           timeout=30_000)
    left = page.locator(".oc-actions button").first  # [1장 뽑기], or [공격 N장 받기] under attack
    assert re.fullmatch(r"1장 뽑기|공격 \d+장 받기|카드 없음 · 넘기기", left.inner_text())
    draw = left.bounding_box()
    play = page.locator('[data-act="play"]').bounding_box()
    assert draw and play and draw["x"] < play["x"]
    assert page.locator('[data-act="one_card"]').is_visible()
    assert no_horizontal_scroll(page)
    shot(page, "onecard-360")
    # nobody holds one card: pressing [원카드!] is a false call (헛원카드),
    # announced to everyone, and the presser draws one card
    cards = len(view(page)["hand"])
    page.locator('[data-act="one_card"]').click()
    page.wait_for_selector('.toast:has-text("헛원카드")')
    page.wait_for_function(f"() => window.ttanjit.game.view.hand.length === {cards + 1}")
    # the particle fits the name ("폰원카드" ends without 받침: 가, not "이(가)")
    assert "폰원카드가 1장을 받아요" in page.locator('.toast:has-text("헛원카드")').first.inner_text()
    # a card that cannot go: selecting it says what it does, not that it
    # cannot go (the seed: "낼 수 있는 카드는 화면이 알려 주지 않으니 직접
    # 찾아요"); [카드 내기] is refused, in the table's words (RULES.md 1.2)
    deadline = time.monotonic() + 90
    while True:
        assert time.monotonic() < deadline, table_state(page)
        if onecard_my_turn(page) and page.locator(".suit-picker").count() == 0:
            cannot = view(page).get("cannot") or {}
            if cannot:
                break
            onecard_play_turn(page)  # everything can go: a turn, then the next
        page.wait_for_timeout(150)
    card = sorted(cannot)[0]
    hand = sorted(view(page)["hand"])
    page.locator(f'.oc-hand .card[data-card="{card}"]').click()
    assert "낼 수 없어요" not in page.locator(".effect").inner_text()
    page.locator('[data-act="play"]').click()
    page.wait_for_selector("#refusal:not([hidden])")
    assert page.locator(".suit-picker").count() == 0
    assert ": 낼 수 없어요 — " in page.locator("#refusal").inner_text()
    assert page.locator("#refusal").get_attribute("data-code") == cannot[card]
    assert sorted(view(page)["hand"]) == hand


def test_a_double_tap_makes_one_move_and_no_refusal(new_page: Any) -> None:
    """Trial finding: a double tap on [1장 뽑기] drew once (right) but its
    second tap, answered after the turn had moved on, put "내 차례가
    아니에요." on the table for 5 s, under "내 차례예요" once the turn came
    back. A tap while the one before it is on its way is not sent (network
    audit: a second press on a slow network came back refused for a move
    that was played), and one answered after the first is not said refused
    (nor "그 수를 고른 차례가 이미 끝나서…": it carries the first's turn)."""
    page = new_page(width=390, height=844)
    sign_in(page, "두번탭")
    game_id = quick_match(page, "onecard", seats=2)
    page.wait_for_function("() => { const v = window.ttanjit.game.view; return v && v.turn === v.seat; }",
                           timeout=30_000)
    cards = len(view(page)["hand"])
    pending = view(page).get("pending") or 0
    page.locator(".oc-actions button").first.dblclick()  # [1장 뽑기] (or 공격 받기, 넘기기)
    # every move sent answered (one, or two when the second tap came after
    # the first's answer)
    page.wait_for_function("""() => { const fs = window.__frames;
      const sent = fs.filter((f) => f.dir === 'out' && f.type === 'action').map((f) => f.cmd_id);
      const answered = new Set(fs.filter((f) => f.dir === 'in' && f.cmd_id
        && (f.type === 'result' || f.type === 'error')).map((f) => f.cmd_id));
      return sent.length && sent.every((id) => answered.has(id)); }""", timeout=10_000)
    page.wait_for_timeout(500)
    page.wait_for_function("""() => { const fs = window.__frames;
      const answered = new Set(fs.filter((f) => f.dir === 'in' && f.cmd_id).map((f) => f.cmd_id));
      return fs.filter((f) => f.dir === 'out' && f.type === 'action').every((f) => answered.has(f.cmd_id)); }""",
                           timeout=10_000)
    sent = [f for f in frames(page) if f["dir"] == "out" and f["type"] == "action"]
    answers = {f["cmd_id"]: f for f in frames(page) if f["dir"] == "in" and f["cmd_id"]}
    # the second tap not sent while the first was on its way; or, answered
    # already, sent: chosen on the first's turn (its turn_key), or once the
    # view moved on — and the server made one move
    kinds = sorted((answers[f["cmd_id"]]["type"], answers[f["cmd_id"]]["code"]) for f in sent)
    assert kinds in ([("result", None)], [("error", "turn_passed"), ("result", None)],
                     [("error", "not_your_turn"), ("result", None)]), kinds
    assert not page.locator(".toast").filter(has_text="보내는 중").count()  # a double tap: unsaid
    assert page.locator("#refusal:not([hidden])").count() == 0, page.locator("#refusal").inner_text()
    assert not page.locator('.toast.error:has-text("내 차례가 아니에요")').count()
    assert page.evaluate("() => window.ttanjit.game.id") == game_id
    if not pending:  # one card drawn (or none, passing), not two
        assert len(view(page)["hand"]) in (cards, cards + 1)


def test_a_move_pressed_offline_is_said_to_go_once_connected(new_page: Any) -> None:
    """Trial finding: offline on my turn, [1장 뽑기] did nothing to see; about
    10 s later, connected again, the card was drawn. The tab says the move
    is kept until the connection is back, and sends it then."""
    page = new_page(width=390, height=844)
    sign_in(page, "끊긴손")
    quick_match(page, "onecard", seats=2)
    page.wait_for_function("() => { const v = window.ttanjit.game.view; return v && v.turn === v.seat; }",
                           timeout=30_000)
    page.context.set_offline(True)
    page.evaluate("() => window.ttanjit.net.drop()")  # the socket's end, as a phone notices it
    page.wait_for_function("() => window.ttanjit.net.state !== 'open'")
    page.locator(".oc-actions button").first.click()  # [1장 뽑기] (or 공격 받기, 넘기기)
    page.wait_for_selector('.toast:has-text("연결이 끊겨 있어요. 다시 연결되면 보내요.")')
    # the top bar says a move waits to be sent (nothing on the page did: trial)
    page.wait_for_selector('#net:has-text("보낼 동작 1개")')
    # in sight whole on a small phone, beside a long nickname (cut off: review)
    page.set_viewport_size({"width": 360, "height": 640})
    page.evaluate("() => { document.getElementById('who').textContent = '열여섯글자닉네임열여섯글자닉네'; }")
    net = page.locator("#net").bounding_box()
    assert net and net["x"] + net["width"] <= 360 - 8, net
    page.set_viewport_size({"width": 390, "height": 844})
    # 원카드! is not kept: its 3 s would be over, a false call (review finding)
    page.locator('.my-row [data-act="one_card"]').click()
    page.wait_for_selector('.toast:has-text("연결이 끊겨 있어 원카드!를 보내지 못했어요.")')
    # said once: not again at every try to reconnect (it covered the top
    # bar's buttons for most of a minute: trial finding)
    page.evaluate("""() => { window.__held = 0; new MutationObserver((ms) => { for (const m of ms)
      for (const n of m.addedNodes) if (n.textContent?.includes('다시 연결되면 보내요')) window.__held += 1; })
      .observe(document.body, {childList: true, subtree: true}); }""")
    page.evaluate("""() => { window.__labels = new Set(); const n = document.getElementById('net');
      new MutationObserver(() => window.__labels.add(n.textContent)).observe(n, {childList: true, subtree: true}); }""")
    page.wait_for_timeout(6_000)  # tries at about 0.5, 1, 2 and 4 s
    assert page.evaluate("() => window.ttanjit.net.state") != "open"
    # one wording for the whole time (it switched with each try: trial nitpick)
    # (nor is it written again unchanged: a11y audit, role=status)
    labels = page.evaluate("() => [...window.__labels]")
    assert set(labels) <= {"다시 연결 중… · 보낼 동작 1개"}, labels
    assert page.locator("#net").inner_text() == "다시 연결 중… · 보낼 동작 1개"
    assert page.evaluate("() => window.__held") == 0
    page.context.set_offline(False)
    page.wait_for_function("""() => window.__frames.some((f) => f.dir === 'in' && f.cmd_id
      && (f.type === 'result' || f.type === 'error'))""", timeout=30_000)
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.ttanjit.net.pending.size") == 0
    assert page.locator("#net").inner_text() == "연결됨"
    sent = [f for f in frames(page) if f["dir"] == "out" and f["type"] == "action"]
    assert len(sent) == 1, sent  # the move, not 원카드!


def test_a_move_pressed_offline_survives_a_reload(new_page: Any) -> None:
    """Network audit: a move pressed offline said "다시 연결되면 보내요"; the
    player reloaded (the browser's offline page), then again once online —
    and the move was gone, unsaid (kept in memory only). It is kept in the
    tab's storage and sent once connected, with its command id (the shard
    deduplicates: once, even if it had arrived)."""
    page = new_page(width=390, height=844)
    sign_in(page, "새로고침손")
    quick_match(page, "onecard", seats=2)
    page.wait_for_function("() => { const v = window.ttanjit.game.view; return v && v.turn === v.seat; }",
                           timeout=30_000)
    # the game's connection goes nowhere (as offline; the page itself reloads)
    through = {"on": False}
    page.route_web_socket(re.compile(r".*/ws$"),
                          lambda ws: ws.connect_to_server() if through["on"] else None)
    page.evaluate("() => window.ttanjit.net.drop()")
    page.wait_for_function("() => window.ttanjit.net.state !== 'open'")
    page.locator(".oc-actions button").first.click()  # [1장 뽑기] (or 공격 받기, 넘기기)
    page.wait_for_selector('#net:has-text("보낼 동작 1개")')
    held = page.evaluate("() => [...window.ttanjit.net.pending.keys()]")
    assert len(held) == 1
    through["on"] = True
    page.reload()
    page.wait_for_function("""(id) => window.__frames && window.__frames.some((f) => f.dir === 'in'
      && f.cmd_id === id && (f.type === 'result' || f.type === 'error'))""", arg=held[0], timeout=30_000)
    sent = [f for f in frames(page) if f["dir"] == "out" and f["type"] == "action"]
    assert [f["cmd_id"] for f in sent] == held, sent
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.ttanjit.net.pending.size") == 0


def test_a_move_on_a_connection_gone_quiet_is_said_and_sent_once_back(stack: Any,
                                                                     new_page: Any) -> None:
    """Review finding: a phone off its network keeps its socket "open" (no
    `offline` event), so a move pressed then waited up to 15 s (the next
    ping and its 5 s), unsaid. A move unanswered for 1.5 s has the
    connection checked at once; found lost, the tab says the move is kept,
    and sends it once connected again: one move, not two. (Here the gateway
    is stopped: the socket stays open and silent.)"""
    page = new_page(width=390, height=844)
    sign_in(page, "조용한선")
    quick_match(page, "onecard", seats=2)
    page.wait_for_function("() => { const v = window.ttanjit.game.view; return v && v.turn === v.seat; }",
                           timeout=30_000)
    cards, pending = len(view(page)["hand"]), view(page).get("pending") or 0
    # the pings of the connection's start (at 0, 0.3 and 1.2 s) sent, and
    # the ones every 10 s put off: only the move's own check may ping now
    # (the start's last ping came 0.2 s after the move once, and the test
    # held without the check)
    page.wait_for_function("""() => { const f = window.__frames;
      const start = f.map((x) => x.type).lastIndexOf('hello');
      return f.slice(start).filter((x) => x.dir === 'out' && x.type === 'ping').length >= 3; }""",
                           timeout=10_000)
    page.evaluate("""() => { const n = window.ttanjit.net; clearInterval(n.pingTimer);
      n.pingTimer = setInterval(() => n.ping(), 600_000); }""")
    gw = next(p for p in stack.svc.procs if p.name == "gateway-e2e")
    gw.proc.send_signal(signal.SIGSTOP)
    try:
        page.locator(".oc-actions button").first.click()  # [1장 뽑기] (or 공격 받기, 넘기기)
        page.wait_for_selector('.toast:has-text("연결이 끊겨 있어요. 다시 연결되면 보내요.")',
                               timeout=15_000)
        out = [f for f in frames(page) if f["dir"] == "out"]  # (before it is sent again)
    finally:
        gw.proc.send_signal(signal.SIGCONT)
    # the connection was checked 1.5 s after the move went unanswered (then
    # said after the ping's 5 s), in the page's own times (timed from here,
    # a loaded machine's Playwright round trips ate the margin)
    moved = next(f["t"] for f in reversed(out) if f["type"] == "action")
    checked = [f["t"] - moved for f in out if f["type"] == "ping" and f["t"] >= moved]
    # (none before its 1.5 s; an upper bound far under the 10 s of the
    # pings put off, in the page's time)
    assert len(checked) == 1 and 1_400 <= checked[0] <= 5_000, checked
    page.wait_for_function("""() => window.__frames.some((f) => f.dir === 'in' && f.cmd_id
      && (f.type === 'result' || f.type === 'error'))""", timeout=30_000)
    page.wait_for_function("() => window.ttanjit.net.pending.size === 0", timeout=10_000)
    if not pending:  # one card drawn (or none, passing), not two
        page.wait_for_timeout(500)
        assert len(view(page)["hand"]) in (cards, cards + 1)


def test_an_action_the_rate_limit_drops_is_said_and_later_refusals_too(new_page: Any) -> None:
    """An action the gateway's rate limit dropped was never answered: the
    tab kept it to send again on its next reconnect, where a stale move
    could land on a later turn; it is answered now (docs/websocket.md 5),
    and the player told. Review finding on the double-tap fix: a count of
    actions awaiting answers stayed up for good after such an action: every
    later "내 차례가 아니에요." was silent, in that game and the next. Only the
    same action again within a moment is taken for a double tap."""
    page = new_page(width=390, height=844)
    sign_in(page, "연타")
    quick_match(page, "onecard", seats=3)
    page.wait_for_function("() => window.ttanjit.game.view && window.ttanjit.game.view.hand")
    # 60 frames at once: the rate limit (20/s, a burst of 40) refuses the
    # action, unless the gateway paused 50 ms right before it (a token came
    # back, on a busy machine): then the flood again, the bucket full first
    for _ in range(3):
        page.evaluate("() => window.__frames.splice(0)")
        page.evaluate("""() => { for (let i = 0; i < 60; i++) window.ttanjit.net.send({type: 'ping', client_ms: i});
          window.ttanjit.game.act({type: 'take'}); }""")
        page.wait_for_function("""() => window.__frames.some((f) => f.dir === 'in' && f.cmd_id
          && (f.type === 'result' || f.type === 'error'))""", timeout=10_000)
        if any(f["dir"] == "in" and f.get("cmd_id") and f.get("code") == "rate_limited" for f in frames(page)):
            break
        page.wait_for_timeout(3000)
    else:
        raise AssertionError("the action was never dropped")
    page.wait_for_selector('#refusal:not([hidden])[data-code="rate_limited"]', timeout=10_000)
    assert page.evaluate("() => window.ttanjit.net.pending.size") == 0  # nothing kept to resend
    page.wait_for_timeout(3000)  # the limit's bucket fills again
    for _ in range(5):  # off my turn, a pass is "not your turn" (on it, another refusal)
        page.evaluate("""() => { const g = window.ttanjit.game, v = g.view;  // my turn: end it
          if (v.turn === v.seat) g.act({type: v.pending ? 'take' : 'draw'}); }""")
        page.wait_for_function("() => { const v = window.ttanjit.game.view; return v.turn !== v.seat; }",
                               timeout=30_000)
        page.evaluate("() => window.ttanjit.game.act({type: 'pass'})")
        page.wait_for_function("() => window.__frames.filter((f) => f.dir === 'in' && f.type === 'error'"
                               " && f.cmd_id).length > 0", timeout=10_000)
        got = [f for f in frames(page) if f["dir"] == "in" and f["type"] == "error" and f["cmd_id"]]
        if got[-1]["code"] == "not_your_turn":
            break
        page.evaluate("() => window.__frames.splice(0)")
    else:
        raise AssertionError("never off my turn")
    page.wait_for_selector('#refusal:not([hidden])[data-code="not_your_turn"]', timeout=2_000)


def test_penalty_rows_round(new_page: Any) -> None:
    """A 줄줄이 벌점 round (10 turns) of a quick game: pick a card and a row,
    read the preview, confirm, watch the reveal; then the round summary with
    round and total penalties, and leave (a bot takes the seat)."""
    page = new_page(width=1000, height=900)
    sign_in(page, "벌점왕")
    game_id = quick_match(page, "penalty_rows", seats=3)
    deadline = time.monotonic() + 150
    picks = 0
    revealed = False
    while time.monotonic() < deadline:
        if page.locator(".round-summary, section.results").count():
            break
        if not penalty_can_pick(page):
            page.wait_for_timeout(60)
            continue
        if picks == 2:
            page.locator(".pr-hand .card:not([disabled])").first.click()
            page.locator('.pr-row[data-row="2"]').click()
            page.wait_for_selector(".preview")
            shot(page, "penalty-rows-table")
        if picks >= 3 and not revealed:  # watch a reveal at the players' pace
            page.evaluate("() => localStorage.setItem('ttanjit.anim', 'normal')")
        if not penalty_pick(page, picks):
            continue
        picks += 1
        if picks >= 4 and not revealed:
            try:
                page.wait_for_selector(".reveal .outcome", timeout=8_000)
            except Exception:  # the turn's view came before its events: next turn
                continue
            shot(page, "penalty-rows-reveal", full_page=True)
            revealed = True
            page.evaluate("() => localStorage.setItem('ttanjit.anim', 'fast')")
    # what the round's summary shows, read in one go while it is up (the
    # next round starts 5 s after it, and takes it away)
    snap = page.wait_for_function("""() => {
      const s = document.querySelector('.round-summary, section.results');
      if (!s) return null;
      const v = window.ttanjit.game.view;
      return {text: s.innerText, mine: [...s.querySelectorAll('tr.me')].map((r) => r.innerText),
              penalties: v.penalties, seat: v.seat,
              badge: document.querySelector('.badge.end')?.innerText || ''}; }""",
                                  timeout=10_000).json_value()
    assert picks == 10 and revealed, (picks, revealed)
    me = snap["seat"]
    assert f"{snap['penalties'][me]}" in snap["text"], snap
    # my row stands out, "(나)" by my name (trial nitpick)
    assert len(snap["mine"]) == 1 and "(나)" in snap["mine"][0], snap
    assert snap["badge"].startswith("빠른"), snap
    assert assert_update_frames_only(page, game_id) >= 10  # no sync: not after a pick, not after a reveal
    shot(page, "penalty-rows-round", full_page=True)
    page.on("dialog", lambda d: d.accept())
    page.get_by_role("button", name="나가기").click()
    page.wait_for_selector(".game-card")
    # no human left: the bots play it out at once (RULES.md 4), and 내 기록
    # lists it
    wait_in_history(page, "penalty_rows", game_id)
    # back to the table by its address: the table as it is now, finished,
    # a bot in my seat — not the table as I left it (defect: it stood
    # frozen at that moment until a reload)
    page.evaluate(f"() => {{ location.hash = '#/game/{game_id}'; }}")
    page.wait_for_function(f"() => window.ttanjit.game.view?.seats[{me}].substituted === true"
                           " && window.ttanjit.game.view.finished", timeout=15_000)
    page.wait_for_selector("section.results")


def test_a_confirm_carries_its_pick_only_where_the_view_says_so(new_page: Any) -> None:
    """Version-skew audit: a 확정 carrying its pick reached shards of the
    release before (an upgrade under way), which confirmed the selection
    they held — another card, its select still on the way — and wrote the
    pick in the record: the next release's shard replayed it as picked,
    refused the game's next input and never took the game. A seat's view
    says ``confirm_with_pick``; without it the 확정 waits for its select's
    answer and carries nothing."""
    page = new_page(width=1000, height=900)
    sign_in(page, "예전샤드")
    quick_match(page, "penalty_rows", seats=2)
    page.wait_for_function("() => window.ttanjit.game.view?.confirm_with_pick === true")
    page.evaluate("""() => { const ws = window.ttanjit.net.ws; const send = ws.send.bind(ws);
      window.__raw = []; ws.send = (d) => { window.__raw.push(JSON.parse(d)); return send(d); };
      // while __older, the shard's frames say what an older release's do
      const net = window.ttanjit.net; const take = net.onFrame.bind(net);
      net.onFrame = (data) => take(window.__older && typeof data === 'string'
        ? data.replaceAll('"confirm_with_pick":true', '"confirm_with_pick":false') : data); }""")
    confirms: list[dict[str, Any]] = []
    for older in (True, False):
        page.wait_for_function(
            "() => document.querySelector('.pr-hand .card:not([disabled])')"
            " && document.querySelector('.pr [data-act=\"confirm\"]')", timeout=30_000)
        card = page.eval_on_selector(".pr-hand .card:not([disabled])", "e => e.dataset.card")
        page.locator(f'.pr-hand .card[data-card="{card}"]').click()
        page.locator('.pr-row[data-row="1"]').click()
        confirm = page.locator(f'[data-act="confirm"]:has-text("{card} → 1번 줄 확정")')
        confirm.wait_for()
        # (the view as the shard says it from now on: its frames are rewritten)
        flag = str(not older).lower()
        page.evaluate(f"""() => {{ window.__older = {str(older).lower()};
          window.ttanjit.game.view.confirm_with_pick = {flag}; }}""")
        confirm.click()
        page.wait_for_function(f"""() => window.__raw.some((f) => f.action?.type === 'confirm'
          && {len(confirms)} === window.__raw.filter((g) => g.action?.type === 'confirm').length - 1)""")
        page.wait_for_function("() => window.ttanjit.game.view.selection?.confirmed === true"
                               " || window.ttanjit.game.view.turn_no > 1 || window.ttanjit.game.view.round > 1")
        confirms.append([f for f in page.evaluate("() => window.__raw")
                         if f.get("action", {}).get("type") == "confirm"][-1]["action"])
        if older:  # what was picked was revealed
            page.wait_for_function("() => window.ttanjit.game.view.turn_no > 1")
            v = view(page)
            mine = [p for p in v["last_reveal"] if p.get("seat") == v["seat"]]
            assert [p["card"] for p in mine] == [int(card)], v["last_reveal"]
    assert "card" not in confirms[0] and "row" not in confirms[0], confirms
    assert {"card", "row"} <= confirms[1].keys(), confirms


def test_hakka_hand(new_page: Any) -> None:
    """A Hakka hand against three bots: call, lead, beat or discard face down,
    until the hand is claimed and scored with the dreamer's reveal."""
    page = new_page(width=1000, height=900)
    sign_in(page, "하카왕")
    game_id = quick_match(page, "hakka")
    deadline = time.monotonic() + 150
    shot_taken = False
    while time.monotonic() < deadline:
        if page.locator(".hand-result").count():
            break
        v = view(page)
        if v.get("phase") == "playing" and v.get("table") and not shot_taken:
            shot(page, "hakka-table")  # the dreamer's screen only if nothing better comes
            shot_taken = v.get("seat") != v.get("dreamer")
        if not hakka_my_turn(page):
            page.wait_for_timeout(80)
            continue
        hakka_act(page)
    page.wait_for_selector(".hand-result", timeout=10_000)
    assert "드리머" in page.locator(".dreamer-reveal").inner_text()
    shot(page, "hakka-scoring", full_page=True)
    v = view(page)
    assert v["last_hand"]["dreamer_card"]
    # this hand's change per seat reads as 내 기록 writes it: +3, −1, ±0 (a zero read "0")
    deltas = page.locator(".hand-result table.scores tbody td:nth-child(2)").all_inner_texts()
    assert deltas == [signed(d) for d in v["last_hand"]["deltas"]], (deltas, v["last_hand"]["deltas"])
    assert assert_update_frames_only(page, game_id) > 0


def test_private_room_with_a_friend_in_another_tab(new_page: Any) -> None:
    """Host opens a room, a friend joins by its code from another tab, the
    host adds a bot and sets the options (the end-mode badge follows), and
    the start takes both players to the same table."""
    host = new_page(width=1000, height=800)
    sign_in(host, "방장")
    card = host.locator('.game-card[data-game="penalty_rows"]')
    card.locator('select[name="seats-penalty_rows"]').select_option("3")
    card.get_by_role("button", name="방 만들기").click()
    code = host.locator("#room-code").inner_text()
    assert code
    host.locator('select[name="rounds"]').select_option("1")
    host.wait_for_selector('.badge.end:has-text("1판")')

    friend = new_page(width=360, height=740)
    sign_in(friend, "친구")
    friend.fill('input[name="code"]', code)
    for attempt in range(3):  # a busy machine may time a matchmaker call out: click again
        friend.get_by_role("button", name="입장").click()
        try:
            friend.wait_for_selector(f'#room-code:has-text("{code}")', timeout=7_000)
            break
        except Exception:
            if attempt == 2:
                raise
    host.wait_for_selector('.seat .name:has-text("친구")')
    # ratings on the scale players see everywhere (1,500 to start), not the internal one
    assert host.locator(".seat .rating").all_inner_texts() == ["레이팅 1,500"] * 2
    host.locator('select[name="bot-level"]').select_option("hard")
    host.get_by_role("button", name="봇 넣기").click()
    host.wait_for_selector('.seat.bot:has-text("어려움")')
    # the level stays chosen through the room's redraw (it went back to 보통)
    assert host.locator('select[name="bot-level"]').input_value() == "hard"
    assert friend.locator('select[name="rounds"]').is_disabled()  # only the host sets options
    # and only the host is told they may fill the room with bots (trial nitpick)
    assert "혼자서도 봇을 넣어" in host.locator("section.room").inner_text()
    assert "혼자서도 봇을 넣어" not in friend.locator("section.room").inner_text()
    assert "봇은 방장이 넣어요." in friend.locator("section.room").inner_text()
    shot(host, "room")
    host.get_by_role("button", name="시작").click()
    for page in (host, friend):
        page.wait_for_selector('section.table[data-game="penalty_rows"]')
        page.wait_for_selector('.badge.end:has-text("1판")')
    assert host.evaluate("() => window.ttanjit.game.id") == friend.evaluate(
        "() => window.ttanjit.game.id")
    host.on("dialog", lambda d: d.accept())
    host.get_by_role("button", name="나가기").click()
    host.wait_for_selector(".game-card")
    # the friend sees a bot take the host's seat
    friend.wait_for_selector('.badge.bot:has-text("봇이 대신함")')


def test_client_previews_follow_the_rules(new_page: Any) -> None:
    """The previews the tables compute in the browser agree with the rules:
    RULES.md 2.2 (penalties total 171) and 2.3's worked example (35 appends as
    the 5th card, 36 takes 7, 40 takes 46 for 1), 1.4/1.5 (two 2s attack for
    4, both jokers for 12) and 3.5 (a set of 7s, a run, not a pattern)."""
    page = new_page(width=800, height=600)
    out = page.evaluate("""async () => {
      const pr = await import('./js/penalty.js');
      const cards = await import('./js/cards.js');
      const oc = await import('./js/onecard.js');
      const hk = await import('./js/hakka.js');
      let total = 0;
      for (let n = 1; n <= 104; n++) total += cards.prPenalty(n);
      return {
        total,
        append: pr.preview([25, 29, 31, 34], 35),
        sixth: pr.preview([25, 29, 31, 34, 35], 36),
        higher: pr.preview([46], 40),
        higherText: pr.previewText(40, 2, pr.preview([46], 40), 46),
        appendText: pr.previewText(35, 2, pr.preview([25, 29, 31, 34], 35), 34),
        higherTwo: pr.previewText(40, 2, pr.preview([39, 46], 40), 46),
        twos: oc.effectText(['2H', '2C'], {hand: ['2H', '2C', '5S'], pending: 0,
                                           attack: {'2H': 2, '2C': 2}}),
        jokers: oc.effectText(['BJ', 'CJ'], {hand: ['BJ', 'CJ', '5S'], pending: 0,
                                             attack: {BJ: 5, CJ: 7}}),
        set: hk.classify(['sup7', 'zok7', 'sin7']),
        run: hk.classify(['gon3', 'gon4', 'gon5']),
        none: hk.classify(['sup3', 'gon4', 'sup5']),
      };
    }""")
    assert out["total"] == 171
    assert out["append"] == {"outcome": "append", "position": 5, "penalty": 0, "cards": 0}
    # the card's place in the row ("끝(34) 뒤 5번째 자리에" read as the 5th place after 34: copy audit)
    assert out["appendText"] == "35는 2번 줄 끝(34) 뒤에 놓여 5번째 카드가 돼요."
    assert out["sixth"]["outcome"] == "sixth_card" and out["sixth"]["penalty"] == 7
    assert out["higher"]["outcome"] == "row_end_higher" and out["higher"]["penalty"] == 1
    # one card is taken, not "1장을 모두" (trial nitpick); two are taken "모두"
    # (벌점 1) not broken across lines (a no-break space: 줄줄이 audit)
    assert out["higherText"] == "2번 줄 끝(46)이 40보다 커서 2번 줄 1장을 가져가요 (벌점\u00a01)."
    assert "2번 줄 2장을 모두 가져가요" in out["higherTwo"]
    assert "공격 4장" in out["twos"] and "공격 12장" in out["jokers"]
    assert (out["set"], out["run"], out["none"]) == ("set", "run", None)


def reload_until_it_runs(page: Any) -> list[str]:
    """``page`` reloaded until the client runs (the sign-in screen): the
    addresses its main frame loaded meanwhile."""
    loads: list[str] = []
    page.on("framenavigated", lambda f: loads.append(f.url) if f == page.main_frame else None)
    page.reload()
    page.wait_for_selector("#nickname")
    return loads


def test_a_page_whose_code_did_not_load_loads_again_once(new_page: Any) -> None:
    """A module of the client lost on the way (the network changed under
    the page: Chromium fails every request under way when a network
    interface comes or goes) left the page on "불러오는 중…" for good. It
    loads again once by itself and runs."""
    page = new_page(width=390, height=844)
    lost: list[str] = []

    def once(route: Any) -> None:
        if lost:
            route.continue_()
        else:
            lost.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/js/lobby.js", once)
    loads = reload_until_it_runs(page)
    assert len(lost) == 1 and page.evaluate("() => !!window.ttanjit")
    assert len(loads) == 2, loads  # this test's reload, and the page's own
    sign_in(page, "다시불러옴")


def test_a_page_whose_modules_do_not_link_loads_again_once(new_page: Any) -> None:
    """Version-skew audit: during an upgrade a page's modules came from two
    releases (asked of two gateways, or one kept from before): the newer
    game.js imports ``seatNames``, which the older state.js does not
    export, and the page stayed on "불러오는 중…" for good — a module that
    does not link fires no error at its script element. It loads again
    once by itself and runs."""
    page = new_page(width=390, height=844)
    new_page.expected.append("does not provide an export named 'seatNames'")
    older: list[str] = []

    def older_once(route: Any) -> None:
        if older:
            route.continue_()
            return
        body = route.fetch().text()
        assert "export function seatNames" in body
        older.append(route.request.url)
        route.fulfill(body=body.replace("export function seatNames", "function seatNames"),
                      content_type="text/javascript")

    page.route("**/js/state.js", older_once)
    loads = reload_until_it_runs(page)
    assert len(older) == 1 and page.evaluate("() => !!window.ttanjit")
    assert len(loads) == 2, loads  # this test's reload, and the page's own


def test_a_page_whose_code_cannot_load_says_so(new_page: Any) -> None:
    """Lost again on the second load: the page says so, with a button,
    instead of "불러오는 중…" for good (and does not reload over and over)."""
    page = new_page(width=390, height=844)
    tries: list[str] = []
    page.route("**/js/lobby.js", lambda route: (tries.append(route.request.url),
                                                route.abort("internetdisconnected")))
    page.reload()
    page.wait_for_selector('#app [role="alert"]:has-text("화면을 불러오지 못했어요.")')
    again = page.locator('#app [data-act="reload"]')
    assert again.inner_text() == "다시 불러오기"
    page.wait_for_timeout(1_500)  # no third load by itself
    assert len(tries) == 2, tries
    page.unroute("**/js/lobby.js")
    again.click()  # the network is back: the button loads it
    page.wait_for_selector("#nickname")


def test_a_nickname_being_typed_keeps_its_caret_and_syllable_when_the_lobby_is_drawn_again(
        new_page: Any) -> None:
    """IME audit: the lobby drawn anew (a friend joining my room, a
    `ratings` frame, a reconnect) while a new nickname was being typed put
    the caret at the box's start — 김 then 철수 became 철수김 — and split the
    Hangul syllable being composed. The box and its caret stay, and a
    redraw waits for the syllable."""
    page = new_page(width=390, height=844)
    sign_in(page, "이름바꾸기")
    box = page.locator('input[name="new-nickname"]')
    box.fill("")
    box.focus()
    page.keyboard.insert_text("김")
    page.evaluate("() => window.ttanjit.state.emit('ratings')")  # drawn again
    page.keyboard.insert_text("철수")
    assert box.input_value() == "김철수"
    # a redraw while a syllable is being composed (Chromium's IME, by CDP)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.imeSetComposition", {"text": "ㅇ", "selectionStart": 1, "selectionEnd": 1})
    cdp.send("Input.imeSetComposition", {"text": "영", "selectionStart": 1, "selectionEnd": 1})
    page.evaluate("() => { window.__old = document.querySelector('.lobby'); window.ttanjit.state.emit('ratings'); }")
    assert page.evaluate("() => window.__old.isConnected")  # the redraw waits for the syllable
    cdp.send("Input.imeSetComposition", {"text": "영ㅎ", "selectionStart": 2, "selectionEnd": 2})
    cdp.send("Input.imeSetComposition", {"text": "영희", "selectionStart": 2, "selectionEnd": 2})
    cdp.send("Input.insertText", {"text": "영희"})  # the syllable committed
    assert box.input_value() == "김철수영희"
    assert page.evaluate("() => document.activeElement.name") == "new-nickname"
    # the redraw that waited came once the syllable was done (review: the
    # test read a lobby that is always there)
    page.wait_for_function("() => !window.__old.isConnected && document.querySelector('.lobby')")
    page.get_by_role("button", name="닉네임 바꾸기").click()
    page.wait_for_selector('.toast:has-text("김철수영희")')


def test_a_room_code_being_typed_stays_when_the_lobby_is_drawn_again(new_page: Any) -> None:
    """The lobby drawn anew (a connection's welcome; after sign-in, the
    address set) came up with an empty code box: what was typed was gone,
    and 입장 then said to type a code (a full run's room test, once)."""
    page = new_page(width=390, height=844)
    sign_in(page, "코드치는중")
    page.fill('input[name="code"]', "ZZZZZZ")
    page.evaluate("() => window.ttanjit.net.drop()")  # back with a new welcome: the lobby again
    page.wait_for_selector('#net[data-state="open"]')
    page.wait_for_function("() => window.__frames.filter((f) => f.type === 'welcome').length === 2")
    assert page.input_value('input[name="code"]') == "ZZZZZZ"
    page.get_by_role("button", name="입장").click()
    page.wait_for_selector('.toast.error:has-text("방을 찾을 수 없어요")')  # asked with the code
    # a try's words replace the last's, and a code as a chat may carry it
    # is read (rooms audit: "ab-cd", an O for a 0, and an empty try's words
    # beside the next try's said nothing useful)
    page.fill('input[name="code"]', "")
    page.get_by_role("button", name="입장").click()
    page.wait_for_selector('.toast.error:has-text("방 코드를 넣어 주세요")')
    page.fill('input[name="code"]', "o0o0o0")
    page.get_by_role("button", name="입장").click()
    page.wait_for_selector('.toast.error:has-text("0·O·1·I가 없어요")')
    assert page.locator("#toasts .toast.error").count() == 1
    page.fill('input[name="code"]', " zz-zz zz ")
    page.get_by_role("button", name="입장").click()
    page.wait_for_function("""() => window.__frames.filter((f) => f.dir === 'out' && f.type === 'room_join')
      .length === 2""")
    assert [f["code"] for f in frames(page) if f["dir"] == "out" and f["type"] == "room_join"] == \
        ["ZZZZZZ", "ZZZZZZ"]


def test_a_quick_match_waiting_over_a_minute_says_so(new_page: Any) -> None:
    """Overload audit: with every shard full the queue waits (no match is
    formed), and the banner spun on as if all were well. A quick match is a
    table within ~15 s (bots fill it); one waiting a minute says it takes
    longer than usual, and that it may wait on or cancel — when the minute
    passes, with nothing else drawing the lobby."""
    page = new_page(width=390, height=844)
    sign_in(page, "오래기다림")
    page.evaluate("""() => { const s = window.ttanjit.state;
      s.queue = {game: 'onecard', seats: 4, ms: Date.now() - 5000}; s.emit('queue'); }""")
    page.wait_for_selector(".banner.queue")
    assert page.locator(".banner.queue .long-wait").count() == 0
    page.evaluate("""() => { const s = window.ttanjit.state;
      s.queue = {...s.queue, ms: Date.now() - 59_500}; s.emit('queue'); }""")
    assert page.locator(".banner.queue .long-wait").count() == 0
    page.wait_for_selector('.banner.queue .long-wait:has-text("평소보다 오래 걸리고 있어요")', timeout=5000)
    assert page.locator(".banner.queue button").inner_text() == "취소"
    # and said to a screen reader (the banner's changed words are not read)
    page.wait_for_function("() => document.getElementById('announce').textContent.includes('평소보다 오래')")
