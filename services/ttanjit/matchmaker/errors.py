"""Stable refusal codes of the lobby (docs/websocket.md 6) with the Korean
message players see."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "unknown_game": "없는 게임이에요.",
    "bad_seats": "인원 수가 올바르지 않아요.",
    "seats_taken": "앉은 사람과 봇이 그 인원보다 많아서 줄일 수 없어요. 봇을 빼거나 친구가 나간 뒤에 바꿔 주세요.",
    "bad_option": "방 설정 값이 올바르지 않아요.",
    "bad_level": "봇 난이도는 쉬움·보통·어려움 중에서 골라 주세요.",
    "already_queued": "이미 매칭을 기다리고 있어요.",
    "not_queued": "매칭을 기다리고 있지 않아요.",
    "match_found": "상대를 찾았어요. 곧 게임이 시작돼요.",
    "in_room": "이미 방에 들어가 있어요.",
    "in_game": "이미 게임 중이에요.",
    "room_not_found": "방을 찾을 수 없어요. 코드를 확인해 주세요.",
    "room_full": "방이 가득 찼어요.",
    "room_started": "이미 시작한 방이에요.",
    "not_in_room": "방에 들어가 있지 않아요.",
    "not_host": "방장만 할 수 있어요.",
    "no_empty_seat": "빈자리가 없어요.",
    "no_bot": "그 자리에는 봇이 없어요.",
    "need_two_players": "두 자리 이상 차야 시작할 수 있어요. 봇을 넣거나 친구를 기다려 주세요.",
    "game_not_finished": "아직 끝나지 않은 게임이에요.",
    "no_rematch": "이 게임은 한 판 더 할 수 없어요.",
    "no_shard": "게임 서버가 준비되지 않았어요. 잠시 후 다시 해 주세요.",
    "bad_request": "잘못된 요청이에요.",
}


class LobbyError(Exception):
    """``game_id``: ``room_started``'s game, when it may be watched (the
    friend who came late is offered 관전)."""

    def __init__(self, code: str, game_id: str = "") -> None:
        super().__init__(code)
        self.code = code
        self.message = MESSAGES.get(code, MESSAGES["bad_request"])
        self.game_id = game_id
