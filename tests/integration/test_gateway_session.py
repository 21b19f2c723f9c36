"""The gateway's session arithmetic (sans-I/O, docs/websocket.md 4): which
game event a client has when it says the last frame it processed."""

from __future__ import annotations

from ttanjit.gateway.session import RECENT, Session, match_of


def session_with(frames: list[tuple[str, int]]) -> Session:
    """frames: ("event", game_seq) | ("view", game_seq) | ("other", 0), sent in order."""
    s = Session("s_x", "p_x", "x")
    s.new_game("g", 0)
    for kind, g in frames:
        seq = s.next_seq()
        if kind == "event":
            s.event_sent(seq, g)
        elif kind == "view":
            s.view_sent(seq, g)
    return s


def test_game_seq_at_each_frame() -> None:
    s = session_with([("other", 0), ("view", 0), ("event", 1), ("other", 0), ("event", 2),
                      ("event", 3), ("other", 0)])
    assert [s.game_seq_at(n) for n in range(2, 8)] == [0, 1, 1, 2, 3, 3]
    assert s.game_seq_at(1) is None  # it missed the view: resync
    assert s.game_seq_at(99) == 3


def test_events_since_the_game_began() -> None:
    s = session_with([("other", 0), ("event", 1), ("event", 2)])
    assert s.game_seq_at(1) == 0 and s.game_seq_at(2) == 1


def test_forgotten_history_means_resync() -> None:
    s = session_with([("other", 0)] + [("event", g) for g in range(5, 5 + RECENT + 10)])
    assert s.game_seq_at(1) is None
    assert s.game_seq_at(s.seq - 1) == 5 + RECENT + 8


def test_rewind_and_round_trip_through_json() -> None:
    s = session_with([("view", 0), ("event", 1), ("event", 2), ("event", 3)])
    s.rewind(2, s.game_seq_at(2))
    assert (s.seq, s.game_seq, list(s.recent)) == (2, 1, [(1, -1), (2, 1)])  # -1: view at 0
    again = Session.from_json(s.to_json())
    assert again.to_json() == s.to_json() and again.game_seq_at(2) == 1


def test_the_match_lasts_with_its_game() -> None:
    """A session keeps its game's `matched` fields for `welcome`
    (docs/websocket.md): through JSON (the KV save), not past the game."""
    players = [{"seat": 0, "kind": "human", "player": "p_x", "nickname": "가"},
               {"seat": 1, "kind": "bot", "level": "easy"}]
    matched = {"type": "matched", "game_id": "g1", "game": "onecard", "seat": 0,
               "kind": "quick", "players": players, "options": {}, "seq": 4}
    s = Session("s_x", "p_x", "가")
    s.new_game("g1", 0, match_of(matched))
    assert s.match == {"game": "onecard", "kind": "quick", "players": players, "options": {}}
    assert Session.from_json(s.to_json()).match == s.match
    s.new_game("g1", 0)  # the same game again (a burst before its matched): kept
    assert s.match is not None
    s.new_game("g2", 1)  # another game: not its players
    assert s.match is None
    s.new_game("g2", 1, match_of({**matched, "game_id": "g2", "game": "hakka"}))
    s.left_game()
    assert (s.game_id, s.seat, s.match) == ("", None, None)
