"""로그아웃 in the browser (docs/websocket.md 1.1): the browser forgets the
player only once the server has revoked the refresh credential, so no copy
of it works any more. When the server cannot (JetStream does not answer),
the player is told and stays signed in; pressed again, it is revoked.

A module of its own: it freezes its stack's nats-server for a moment (the
e2e stack is per module), which no other browser test should meet."""

from __future__ import annotations

import json
import signal
import urllib.error
import urllib.request
from typing import Any

from browserkit import open_room, sign_in

REFRESH = "() => JSON.parse(localStorage.getItem('ttanjit.id.refresh'))"


def refresh_with(stack: Any, cred: str) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(stack.url + "api/refresh",
                                 data=json.dumps({"refresh": cred}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_signing_out_revokes_the_credential_or_says_it_could_not(stack: Any,
                                                                 new_page: Any) -> None:
    page = new_page()
    sign_in(page, "나가볼게요")
    cred = page.evaluate(REFRESH)
    assert cred
    page.on("dialog", lambda d: d.accept())  # "이 브라우저에서 로그아웃할까요?"
    stack.nats.proc.send_signal(signal.SIGSTOP)  # JetStream does not answer
    try:
        page.locator('[data-act="signout"]').click()
        page.wait_for_selector('.toast.error:has-text("기록 서버에 잠시 연결할 수 없어요.")')
    finally:
        stack.nats.proc.send_signal(signal.SIGCONT)
    assert page.evaluate(REFRESH) == cred  # still signed in, nothing revoked
    assert page.locator(".game-card").count() > 0
    page.locator('[data-act="signout"]').click()
    page.wait_for_selector("#nickname")  # the sign-in screen
    assert page.evaluate("() => localStorage.getItem('ttanjit.id.refresh')") is None
    # which says a new start is a new account, and fills in no nickname
    # (trial: "나가볼게요" filled in, 손님으로 시작하기 made a new empty
    # account of the same name)
    assert page.locator("#nickname").input_value() == ""
    note = page.locator(".signed-out").inner_text()
    assert "새 계정" in note and "코드" in note, note
    sign_in(page, "새로왔어요")  # a new start: said no more
    assert page.evaluate("() => localStorage.getItem('ttanjit.signedout')") is None
    status, body = refresh_with(stack, cred)
    assert (status, body.get("code")) == (401, "bad_refresh"), body


def test_another_tab_follows_a_sign_out(new_page: Any) -> None:
    """Tabs audit: signed out in one tab, another tab of the browser went on
    playing as the player signed out, then, its connection lost, stayed
    "다시 연결 중…" for good (or, signed in anew meanwhile, showed the old
    account's table under the new name). It follows: the sign-in screen,
    saying so."""
    page = new_page(width=390, height=844)
    sign_in(page, "두탭로그아웃")
    # in a room: the question says its seat goes too (tabs audit: said nothing)
    open_room(page, "onecard")
    page.locator(".topbar .brand").click()
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector("#room-code")  # (the room: a new tab's welcome leads there)
    asked: list[str] = []
    page.on("dialog", lambda d: (asked.append(d.message), d.accept()))
    page.bring_to_front()
    page.locator('[data-act="signout"]').click()
    page.wait_for_selector("#nickname")
    assert "들어가 있는 방의 자리는 1분 뒤 비워져요." in asked[0], asked
    other.wait_for_selector("#nickname")
    assert "새 계정" in other.locator(".signed-out").inner_text()
    # signed in anew in one tab: the other is that player too
    # (the other tab, reloaded, connects last: this one is then replaced)
    page.fill("#nickname", "새로시작")
    page.get_by_role("button", name="손님으로 시작하기").click()
    other.wait_for_selector(".game-card")
    assert other.locator("#who").inner_text() == "새로시작"


def test_a_tab_whose_socket_the_sign_out_closed_says_so_too(new_page: Any) -> None:
    """The server closes a signed-out family's sockets with 4004
    (docs/websocket.md 4). Another tab's socket is closed before the tab
    that signed out has its answer (here held 2 s, as on a slow network):
    that tab used to sign out at once, before the 로그아웃 was said, and
    showed the sign-in without its note (CI finding). It asks again,
    finds its credential refused, and says so; the tab that signed out
    says its 로그아웃, with no word of an expiry."""
    page = new_page(width=390, height=844)
    sign_in(page, "느린로그아웃")
    other = page.context.new_page()
    other.goto(page.url)
    other.wait_for_selector('#net[data-state="open"]')
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

    def slow(route: Any) -> None:
        answer = route.fetch()  # (revoked now: the server closes both sockets)
        other.wait_for_selector("#nickname", timeout=20_000)  # the other tab followed first
        route.fulfill(response=answer)
    page.route("**/api/signout", slow)
    page.on("dialog", lambda d: d.accept())
    page.bring_to_front()
    page.locator('[data-act="signout"]').click()
    assert "새 계정" in other.locator(".signed-out").inner_text()
    page.wait_for_selector("#nickname")
    assert "새 계정" in page.locator(".signed-out").inner_text()
    toasts = page.locator("#toasts .toast").all_inner_texts()
    assert not any("만료" in t for t in toasts), toasts
