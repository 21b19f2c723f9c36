"""A full gateway in the browser (docs/websocket.md 5): a player it
refuses (``server_full``, close 1013) is told so in the top bar, not in a
toast at each try, and is connected by the client itself once a socket
goes. The gateway here holds one socket."""

from __future__ import annotations

from typing import Any

from browserkit import sign_in
from playwright.sync_api import expect

from ttanjit.gateway.errors import MESSAGES

GATEWAY_ENV = {"TTANJIT_MAX_CONNECTIONS": "1"}
BUSY = "접속한 사람이 많아요 · 다시 연결 중…"


def test_a_refused_player_is_told_and_let_in_once_there_is_room(new_page: Any) -> None:
    first = new_page()
    sign_in(first, "먼저온")
    second = new_page()
    second.fill("#nickname", "나중온")
    second.get_by_role("button", name="손님으로 시작하기").click()
    net = second.locator("#net")
    expect(net).to_have_text(BUSY)
    # (tried again meanwhile: the words stay, and no toast says each refusal)
    second.wait_for_timeout(3000)
    assert net.inner_text() == BUSY
    toasts = second.locator("#toasts .toast").all_inner_texts()
    assert MESSAGES["server_full"] not in toasts, toasts
    first.context.close()  # its socket goes: room for one
    second.wait_for_selector('#net[data-state="open"]', timeout=40_000)
    assert net.inner_text() == "연결됨"
