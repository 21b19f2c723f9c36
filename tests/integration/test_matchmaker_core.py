"""The matchmaker's pure parts (no I/O): quick-match grouping, rooms, room
options (RULES.md 1.9, 2.4, 2.5, 3.1), ratings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ttanjit.matchmaker.errors import LobbyError
from ttanjit.matchmaker.options import defaults, merge_options
from ttanjit.matchmaker.queue import QuickQueue, Ticket
from ttanjit.matchmaker.ratings import Rating, rate_result
from ttanjit.matchmaker.rooms import CODE_ALPHABET, Rooms


def t(player: str, rating: float, since: int = 0, game: str = "onecard", seats: int = 2
      ) -> Ticket:
    return Ticket(player, player, game, seats, rating, since)


def test_similar_ratings_meet_first() -> None:
    q = QuickQueue(bot_wait_ms=15_000, base_window=5, widen_per_s=1)
    for tk in (t("a", 0), t("b", 30), t("c", 2), t("d", 31)):
        q.add(tk)
    matches = q.take_matches(100)
    groups = sorted(sorted(x.player for x in m.tickets) for m in matches)
    assert groups == [["a", "c"], ["b", "d"]] and all(not m.bots for m in matches)


def test_window_widens_with_waiting() -> None:
    q = QuickQueue(bot_wait_ms=60_000, base_window=5, widen_per_s=1)
    q.add(t("a", 0))
    q.add(t("b", 20))
    assert q.take_matches(1_000) == []  # 20 apart, window 6
    [m] = q.take_matches(15_500)  # window 20.5 after 15.5 s
    assert {x.player for x in m.tickets} == {"a", "b"}


def test_bots_fill_after_the_wait() -> None:
    q = QuickQueue(bot_wait_ms=15_000)
    q.add(t("a", 0, seats=4))
    q.add(t("b", 1, since=5_000, seats=4))
    assert q.take_matches(14_999) == []
    [m] = q.take_matches(15_000)
    assert len(m.tickets) == 2 and m.bots == ["normal", "normal"] and not q.by_player


def test_queue_refusals() -> None:
    q = QuickQueue()
    q.add(t("a", 0))
    with pytest.raises(LobbyError, match="already_queued"):
        q.add(t("a", 0))
    with pytest.raises(LobbyError, match="bad_seats"):
        q.add(t("b", 0, game="hakka", seats=3))
    with pytest.raises(LobbyError, match="not_queued"):
        q.remove("zz")


def test_options_of_rules() -> None:
    """RULES.md 1.9 (30/45 s), 2.4 (badge, 1/3/5 rounds), 2.5 (20/30/45 s)."""
    assert defaults("onecard") == {"turn_ms": 30000}
    assert defaults("penalty_rows") == {"select_ms": 20000, "end": "rounds", "rounds": 3}
    assert defaults("penalty_rows", quick=True) == defaults("penalty_rows")  # seed 002: 3판
    assert merge_options("onecard", {}, {"turn_ms": 45000}) == {"turn_ms": 45000}
    for bad in ({"turn_ms": 40000}, {"colour": 1}, {"turn_ms": True}, {"absence_ms": 2000}):
        with pytest.raises(LobbyError, match="bad_option"):
            merge_options("onecard", defaults("onecard"), bad)
    assert merge_options("onecard", {}, {"absence_ms": 2000}, allow_test=True)
    assert merge_options("onecard", {}, {"abandon_ms": 2000}, allow_test=True)
    assert merge_options("penalty_rows", defaults("penalty_rows"),
                         {"end": "score_66"}) == {"select_ms": 20000, "end": "score_66"}
    for bad in ({"rounds": 2}, {"select_ms": 10000}, {"end": "sudden"}):
        with pytest.raises(LobbyError):
            merge_options("penalty_rows", defaults("penalty_rows"), bad)


def test_room_life() -> None:
    rooms = Rooms()
    r = rooms.create("a", "가", "onecard", 3, {"turn_ms": 45000})
    assert len(r.code) == 6 and set(r.code) <= set(CODE_ALPHABET) and r.host == "a"
    with pytest.raises(LobbyError, match="need_two_players"):
        rooms.start_seats("a")  # alone with empty seats: a bot is needed (issue 14)
    rooms.join("b", "나", r.code.lower())
    with pytest.raises(LobbyError, match="not_host"):
        rooms.add_bot("b", "easy")
    rooms.add_bot("a", "hard")
    with pytest.raises(LobbyError, match="room_full"):
        rooms.join("c", "다", r.code)
    # fewer seats than those seated: said so, not as a size the game has not
    # (it was bad_seats, "인원 수가 올바르지 않아요.": rooms audit)
    with pytest.raises(LobbyError, match="seats_taken"):
        rooms.set_options("a", 2, None)
    assert r.seats == 3
    with pytest.raises(LobbyError, match="bad_seats"):
        rooms.set_options("a", 11, None)
    with pytest.raises(LobbyError, match="no_bot"):
        rooms.remove_bot("a", 1)
    rooms.remove_bot("a", 2)
    rooms.leave("a")
    assert r.host == "b" and rooms.room_of("a") is None  # the host role passes on
    rooms.join("c", "다", r.code)
    room, seats = rooms.start_seats("b")
    assert [s.player for s in seats] == ["c", "b"]  # seat 0 was freed by a, c took it
    # starting (its game being placed): nobody leaves or joins meanwhile
    assert room.state == "starting"
    with pytest.raises(LobbyError, match="room_started"):
        rooms.leave("c")
    rooms.unstart(room)  # its game could not be placed: as it was
    rooms.leave("b")
    rooms.leave("c")
    assert r.state == "closed"
    with pytest.raises(LobbyError, match="room_not_found"):
        rooms.join("d", "라", r.code)


def test_a_started_rooms_code_says_it_started() -> None:
    """A friend typing the code after the host pressed 시작 was told "방을
    찾을 수 없어요. 코드를 확인해 주세요." (check the code), and a second 시작
    "방에 들어가 있지 않아요."; both are ``room_started`` ("이미 시작한
    방이에요.") for 10 minutes, then the code is forgotten. A new leader
    keeps them (the lobby's parts)."""
    rooms = Rooms()
    r = rooms.create("a", "가", "onecard", 2, None)
    rooms.join("b", "나", r.code)
    room, _ = rooms.start_seats("a")
    rooms.started(room, "g" * 12, 1_000)
    for call in (lambda: rooms.join("c", "다", r.code.lower()),
                 lambda: rooms.start_seats("a"), lambda: rooms.leave("b")):
        with pytest.raises(LobbyError, match="room_started"):
            call()
    with pytest.raises(LobbyError, match="not_in_room"):
        rooms.leave("c")  # never in it
    later = Rooms()  # another replica takes the lobby over
    later.restore([], rooms.started_json())
    with pytest.raises(LobbyError, match="room_started"):
        later.join("c", "다", r.code)
    # a room started 10 minutes later forgets the first code
    r2 = later.create("c", "다", "onecard", 2, None)
    assert r2.code != r.code
    later.join("d", "라", r2.code)
    later.started(later.start_seats("c")[0], "h" * 12, 1_000 + 10 * 60_000)
    with pytest.raises(LobbyError, match="room_not_found"):
        later.join("e", "마", r.code)
    with pytest.raises(LobbyError, match="not_in_room"):
        later.start_seats("a")
    with pytest.raises(LobbyError, match="room_started"):
        later.join("e", "마", r2.code)


def test_a_friend_late_for_a_started_room_is_offered_its_game_to_watch() -> None:
    """Rooms audit: the friend who opened the invite after 시작 heard only
    "이미 시작한 방이에요." — the refusal names the room's game
    (``game_id``), so the client can offer 관전, unless the host turned
    관전 off; a new leader keeps it, and a lobby stored before it was kept
    reads as one without it."""
    rooms = Rooms()
    r = rooms.create("a", "가", "onecard", 2, None)
    rooms.join("b", "나", r.code)
    rooms.started(rooms.start_seats("a")[0], "g" * 12, 1_000)
    with pytest.raises(LobbyError, match="room_started") as late:
        rooms.join("c", "다", r.code)
    assert late.value.game_id == "g" * 12
    later = Rooms()
    later.restore([], rooms.started_json())
    with pytest.raises(LobbyError, match="room_started") as late:
        later.join("c", "다", r.code)
    assert late.value.game_id == "g" * 12
    # 관전 off: nothing to offer
    shut = rooms.create("d", "라", "onecard", 2, {"spectators": False})
    rooms.join("e", "마", shut.code)
    rooms.started(rooms.start_seats("d")[0], "h" * 12, 2_000)
    with pytest.raises(LobbyError, match="room_started") as late:
        rooms.join("c", "다", shut.code)
    assert late.value.game_id == ""
    # stored by a matchmaker before this: [ms, players]
    old = Rooms()
    old.restore([], {r.code: [1_000, ["a", "b"]]})
    with pytest.raises(LobbyError, match="room_started") as late:
        old.join("c", "다", r.code)
    assert late.value.game_id == ""
    with pytest.raises(LobbyError, match="room_started"):
        old.leave("a")  # its players still known


def test_solo_tables_start_with_bots_of_any_level() -> None:
    """Issue 14: one human and bots of any level per seat start, in every
    game; Hakka fills what is left with normal bots."""
    for game, n in (("onecard", 3), ("penalty_rows", 2), ("hakka", 4)):
        rooms = Rooms()
        r = rooms.create("solo", "혼자", game, n, None)
        for level in ("easy", "hard")[: n - 1]:
            rooms.add_bot("solo", level)
        room, seats = rooms.start_seats("solo")
        assert [s.kind for s in seats] == ["human"] + ["bot"] * (n - 1)
        assert [s.level for s in seats[1:3]] == ["easy", "hard"][: min(2, n - 1)]
        if game == "hakka":
            assert seats[3].level == "normal"
        assert room is r


def test_quick_match_backfill_takes_the_chosen_level() -> None:
    """Issue 14: quick match lets the player choose the backfill bots' level."""
    q = QuickQueue(bot_wait_ms=100)
    q.add(Ticket("p", "가", "hakka", 4, 0.0, 0, bot_level="hard"))
    (m,) = q.take_matches(200)
    assert m.bots == ["hard"] * 3
    q.add(Ticket("p", "가", "hakka", 4, 0.0, 0))
    (m,) = q.take_matches(200)
    assert m.bots == ["normal"] * 3  # by rating when none was chosen
    t = Ticket.from_json(Ticket("p", "가", "onecard", 2, 0.0, 0, bot_level="easy").to_json())
    assert t.bot_level == "easy"


def test_hakka_room_fills_with_bots() -> None:
    rooms = Rooms()
    r = rooms.create("a", "가", "hakka", None, None)
    rooms.join("b", "나", r.code)
    _, seats = rooms.start_seats("a")
    assert [s.kind for s in seats] == ["human", "human", "bot", "bot"]


def test_ratings_move_with_results() -> None:
    result = {"game": "onecard", "players": {"p_a": 0, "p_b": 2}, "winners": [0],
              "seats": [{"kind": "human"}, {"kind": "bot", "level": "hard"}, {"kind": "human"}],
              "substituted": [False, False, False]}
    new = rate_result(result, {})
    assert new["p_a"].mu > 25 > new["p_b"].mu and new["p_a"].games == 1
    assert rate_result({**result, "winners": []}, {}) == {}  # time cap: no winner, no change
    # RULES.md 4 (abandonment): unrated, whatever the result says about winners
    assert rate_result({**result, "ended_by": "abandoned"}, {}) == {}
    left = rate_result({**result, "substituted": [True, False, False]}, {})
    assert left["p_a"].mu < 25  # a winner seat finished by a substitute bot counts as a loss
    again = rate_result(result, {"p_a": new["p_a"]})
    assert again["p_a"].games == 2 and again["p_a"].sigma < new["p_a"].sigma
    assert Rating().ordinal == pytest.approx(0.0, abs=1e-9)


def test_the_rest_rank_by_score_where_the_game_has_one() -> None:
    """Second of four is not rated as last: in 줄줄이 벌점 the fewest
    penalties rank first, in 하카 카드 the most points; a substituted player
    still ranks last, and One Card (no score) rates all losers alike."""
    seats = [{"kind": "bot", "level": "normal"}, {"kind": "human"}, {"kind": "human"},
             {"kind": "human"}]
    base = {"players": {"p_2nd": 1, "p_3rd": 2, "p_left": 3}, "winners": [0], "seats": seats,
            "substituted": [False, False, False, False]}
    pen = rate_result({**base, "game": "penalty_rows", "scores": [8, 20, 64, 70]}, {})
    assert pen["p_2nd"].mu > pen["p_3rd"].mu > pen["p_left"].mu
    hak = rate_result({**base, "game": "hakka", "scores": [40, 35, 12, 31]}, {})
    assert hak["p_2nd"].mu > hak["p_left"].mu > hak["p_3rd"].mu  # 35 > 31 > 12
    left = rate_result({**base, "game": "hakka", "scores": [40, 35, 12, 31],
                        "substituted": [False, False, False, True]}, {})
    assert left["p_2nd"].mu > left["p_3rd"].mu > left["p_left"].mu  # left: last, whatever it scored
    one = rate_result({**base, "game": "onecard", "scores": None}, {})
    assert one["p_2nd"].mu == pytest.approx(one["p_3rd"].mu)


PLAYERS = ["a", "b", "c", "d", "e"]
ops = st.lists(st.tuples(
    st.sampled_from(["create", "join", "leave", "options", "add_bot", "remove_bot", "start"]),
    st.sampled_from(PLAYERS),
    st.sampled_from(["onecard", "penalty_rows", "hakka", "chess"]),
    st.one_of(st.none(), st.integers(-1, 12)),
    st.one_of(st.none(), st.dictionaries(
        st.sampled_from(["turn_ms", "select_ms", "end", "rounds", "x"]),
        st.sampled_from([30000, 45000, 20000, "rounds", "score_66", 1, 3, 5, 7, None]),
        max_size=3)),
    st.sampled_from(["easy", "normal", "hard", "god"]),
), max_size=40)


@settings(max_examples=300, deadline=None)
@given(script=ops)
def test_rooms_never_break(script: list) -> None:
    """Any sequence of room operations: refusals are LobbyErrors only, and
    the rooms stay consistent (every member is indexed, the host is a human
    member, seats match the table size, options stay ones RULES.md allows)."""
    rooms = Rooms()
    codes: dict[str, str] = {}
    for op, player, game, n, options, level in script:
        try:
            if op == "create":
                codes[player] = rooms.create(player, player, game, n, options).code
            elif op == "join":
                rooms.join(player, player, next(iter(codes.values()), "NOCODE"))
            elif op == "leave":
                rooms.leave(player)
            elif op == "options":
                rooms.set_options(player, n, options)
            elif op == "add_bot":
                rooms.add_bot(player, level)
            elif op == "remove_bot":
                rooms.remove_bot(player, n if n is not None else 0)
            else:
                room, seats = rooms.start_seats(player)
                # issue 14: the host alone may start with bots; a table
                # always has its host and at least two players
                assert any(s.kind == "human" and s.player == player for s in seats)
                assert len(seats) >= 2
                rooms.started(room, "g" * 12, 0)
        except LobbyError as e:
            assert e.code and e.message
        for code, room in rooms.by_code.items():
            assert room.state == "open" and len(room.members) == room.seats
            humans = [m.player for m in room.humans()]
            assert room.host in humans and len(set(humans)) == len(humans)
            assert all(rooms.by_player[p] == code for p in humans)
            merge_options(room.game, {}, room.options)  # still valid
        assert all(p in [m.player for m in rooms.by_code[c].humans()]
                   for p, c in rooms.by_player.items())


def test_rematch_offer() -> None:
    """한 판 더 (issue 14, ttanjit.matchmaker.rematch): the humans still there
    (not substituted) answer; all agreed, or the window closed with someone
    agreed, starts the same table; the others' seats get bots."""
    from ttanjit.matchmaker.rematch import Rematch

    header = {"game": "onecard", "options": {"seats": 4, "turn_ms": 45000},
              "seats": [{"kind": "human"}, {"kind": "bot", "level": "hard"},
                        {"kind": "human"}, {"kind": "human"}],
              "players": {"a": 0, "b": 2, "c": 3}}
    entry = {"state": "finished", "result": {"ended_by": "win",
                                             "substituted": [False, False, False, True]}}
    with pytest.raises(LobbyError, match="game_not_finished"):
        Rematch.from_game("g", header, {"state": "live"}, 0)
    with pytest.raises(LobbyError, match="no_rematch"):
        Rematch.from_game("g", header, {"state": "finished",
                                        "result": {"ended_by": "abandoned"}}, 0)
    r = Rematch.from_game("g", header, entry, 1000, window_ms=5000)
    assert r.humans == {"a": 0, "b": 2} and r.options == {"turn_ms": 45000}
    with pytest.raises(LobbyError, match="no_rematch"):
        r.answer("c", "다", True)  # left during the game: not there any more
    r.answer("a", "가", True)
    assert not r.ready(2000) and r.frame()["rematch"]["waiting"] == [2]
    assert r.ready(6000)  # the window closed: those who agreed play
    seats = r.new_seats({"a"})
    assert [(s.kind, s.player or s.level) for s in seats] == [
        ("human", "a"), ("bot", "hard"), ("bot", "hard"), ("bot", "hard")]
    r.answer("b", "나", True)
    assert r.ready(2000)  # everyone still there agreed
    r2 = Rematch.from_json(r.to_json())
    assert r2.agreed == {"a": "가", "b": "나"} and r2.until_ms == 6000
    r2.answer("a", "가", False)
    r2.answer("b", "나", False)
    assert r2.dead(2000) and r2.frame()["rematch"]["declined"] == [0, 2]


def test_a_placements_game_id_is_kept_with_what_is_placed() -> None:
    """A new leader places what its predecessor left half done under the same
    game id (docs/protocol.md 4, 4.1): the quick match, the started 한 판 더
    and the room keep it in the lobby store, so the shard that made the game
    answers for it rather than a second one being made."""
    from ttanjit.common.ids import is_game_id
    from ttanjit.matchmaker.queue import QuickMatch
    from ttanjit.matchmaker.rematch import Rematch
    from ttanjit.matchmaker.rooms import Room

    q = QuickQueue(bot_wait_ms=0)
    q.add(t("a", 0))
    q.add(t("b", 1))
    [match] = q.take_matches(100)
    assert is_game_id(match.game_id)
    assert QuickMatch.from_json(match.to_json()).game_id == match.game_id
    older = {k: v for k, v in match.to_json().items() if k != "game_id"}  # a former version's
    assert is_game_id(QuickMatch.from_json(older).game_id)

    header = {"game": "onecard", "options": {"seats": 2},
              "seats": [{"kind": "human"}, {"kind": "human"}], "players": {"a": 0, "b": 1}}
    r = Rematch.from_game("g", header, {"state": "finished", "result": {"ended_by": "win"}}, 0)
    r.started_ms, r.place_id = 5, "abcdefgh2345"
    assert Rematch.from_json(r.to_json()).place_id == "abcdefgh2345"

    rooms = Rooms()
    room = rooms.create("a", "가", "onecard", 2, None)
    room.place_id = "zyxwvuts7654"
    assert Room.from_store(room.to_store()).place_id == "zyxwvuts7654"
    assert "place_id" not in room.to_json()  # not the players' business


def test_shards_unheard_of_for_ten_minutes_are_forgotten_with_their_addresses() -> None:
    """Every shard pod restart comes back under a new address: the
    matchmaker kept every address it ever heard, and a gRPC channel to each
    that went on reconnecting to a dead address (found by an audit helper).
    A shard unheard of for 10 minutes is forgotten, and the addresses no
    shard has any more are given back, for their channels to be closed."""
    from ttanjit.matchmaker.placement import GONE_MS, ShardTable

    table = ShardTable()
    hb = {"games": 0, "capacity": 10}
    table.heartbeat({"shard": "shard-0", "grpc": "10.0.0.1:7100", **hb}, 0)
    table.heartbeat({"shard": "shard-1", "grpc": "10.0.0.2:7100", **hb}, 0)
    table.heartbeat({"shard": "shard-1", "grpc": "10.0.0.3:7100", **hb}, GONE_MS)  # restarted
    assert table.forget_gone(GONE_MS) == ["10.0.0.2:7100"]  # the address shard-1 left
    assert table.forget_gone(GONE_MS) == []
    assert table.forget_gone(GONE_MS + 1) == ["10.0.0.1:7100"]
    assert set(table.shards) == {"shard-1"}
    assert table.forget_gone(2 * GONE_MS + 1) == ["10.0.0.3:7100"] and not table.shards
