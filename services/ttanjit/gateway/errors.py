"""Gateway refusal codes and their Korean messages (docs/websocket.md 6),
for WebSocket frames and HTTP requests alike.
Lobby codes come from the matchmaker, game codes from the shard."""

from __future__ import annotations

from ttanjit.games.base import COMMON_MESSAGES
from ttanjit.matchmaker.errors import MESSAGES as LOBBY_MESSAGES
from ttanjit.shard.game import SHARD_MESSAGES

MESSAGES: dict[str, str] = {
    "bad_frame": "잘못된 형식의 메시지예요.",
    "unknown_type": "알 수 없는 메시지 종류예요.",
    "frame_too_large": "메시지가 너무 커요.",
    "rate_limited": "너무 빨리 보내고 있어요. 잠시 후 다시 해 주세요.",
    "unauthenticated": "로그인 정보가 없어요. 먼저 시작해 주세요.",
    "bad_token": "로그인 정보가 올바르지 않아요. 다시 시작해 주세요.",
    "already_hello": "이미 연결되어 있어요.",
    "server_full": "지금 접속한 사람이 많아요. 잠시 후 저절로 다시 연결할게요.",
    "missing_field": "필요한 값이 빠졌어요.",
    "bad_cmd_id": "명령 번호가 올바르지 않아요.",
    "bad_action": COMMON_MESSAGES["bad_action"],  # the shard's own refusal, said the same
    "game_finished": COMMON_MESSAGES["game_finished"],  # (a game its shard released)
    "not_in_game": "참여 중인 게임이 아니에요.",
    "not_your_seat": "내 자리가 아니에요. 내 자리의 카드만 낼 수 있어요.",
    "not_seated": SHARD_MESSAGES["not_seated"],  # the shard's: a seat it has no player for
    "reserved_action": "연결 상태는 서버가 알려요. 보낼 수 없는 동작이에요.",
    "game_unavailable": SHARD_MESSAGES["game_unavailable"],  # said alike by both
    "matchmaker_unavailable": "매칭 서버에 잠시 연결할 수 없어요. 잠시 후 다시 해 주세요.",
    "bad_nickname": "닉네임은 1~16자, 보이는 글자로 정해 주세요.",
    "bot_nickname": "봇의 이름(봇2 (보통) 같은)처럼 보이는 닉네임은 쓸 수 없어요.",
    "internal_error": SHARD_MESSAGES["internal_error"],
    "seat_is_bot": "봇이 이어받은 자리예요. 구경만 할 수 있어요.",
    "bad_emote": "보낼 수 없는 반응이에요.",
    "too_many_emotes": "반응은 잠시 후에 다시 보낼 수 있어요.",
    # issue 15: lasting identity, history, replays, spectating
    "bad_refresh": "로그인이 만료됐어요. 다시 시작해 주세요.",
    "bad_code": "코드가 맞지 않거나 시간이 지났어요. 새 코드를 받아 주세요.",
    "malformed_code": "코드는 영문과 숫자 8자리예요 (예: ABCD-EFGH). 받은 코드를 다시 확인해 주세요.",
    "too_many_attempts": "코드를 너무 많이 잘못 넣었어요. 잠시 후 다시 해 주세요.",
    "too_many_renames": "닉네임을 너무 자주 바꿨어요. 잠시 후 다시 해 주세요.",
    "too_many_codes": "코드를 너무 자주 받았어요. 잠시 후 다시 해 주세요.",
    "not_your_game": "내가 참여한 게임만 다시 볼 수 있어요.",
    "no_record": "게임 기록을 찾을 수 없어요.",
    "no_spectating": SHARD_MESSAGES["no_spectating"],
    "store_unavailable": "기록 서버에 잠시 연결할 수 없어요. 잠시 후 다시 해 주세요.",
    # HTTP requests the API cannot take (gateway/httperrors.py)
    "bad_json": "요청 내용이 올바른 JSON 객체가 아니에요.",
    "bad_field": "보낸 값의 형식이나 범위가 올바르지 않아요.",
    "not_found": "없는 주소예요.",
    "method_not_allowed": "이 주소에서는 쓸 수 없는 요청 방식이에요.",
    "body_too_large": "요청 내용이 너무 커요.",
    "too_many_signups": "이 네트워크에서 새 손님 계정을 너무 많이 만들었어요. 잠시 후 다시 해 주세요.",
    **LOBBY_MESSAGES,
}


class FrameError(Exception):
    """A client frame refused by the gateway: ``code`` is stable snake_case.
    ``ref`` and ``cmd_id``: the frame's type and command id, when the
    refusal comes before the frame reached its handler (``bad_frame``) but
    the frame said them (docs/websocket.md 3). ``game_id``: the game the
    refusal is about, when the client may act on it (``room_started``: the
    room's game, to watch)."""

    def __init__(self, code: str, ref: str | None = None, cmd_id: str | None = None,
                 game_id: str | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.message = MESSAGES.get(code, MESSAGES["bad_frame"])
        self.ref = ref
        self.cmd_id = cmd_id
        self.game_id = game_id
