"""The load tester's replay keeps moves in causal order by counting the game
events a player had received when it moved (ttanjit.loadtest.replay.Progress).
Presence events do not count: where a drop's ``disconnected`` and
``reconnected`` fall among the moves depends on timing, and counting them let
a replayed move go before the move it answered (seen once in CI as a
``not_your_turn`` divergence)."""

from __future__ import annotations

from typing import Any

from ttanjit.loadtest.replay import Progress, copy_turn_key

G = "abcdefghijkl"


def update(*events: tuple[int, str]) -> dict[str, Any]:
    return {"type": "update", "game_id": G, "game_seq": events[-1][0],
            "events": [{"game_seq": n, "t": 0, "event": {"type": kind, "seat": 0}}
                       for n, kind in events], "view": {}}


def test_presence_events_do_not_count_wherever_they_fall() -> None:
    # captured: A plays (1), A drops and comes back (2, 3), A plays again (4);
    # B moved after all four: it had seen two moves
    captured = Progress()
    for f in (update((1, "played")), update((2, "disconnected")), update((3, "reconnected")),
              update((4, "played"))):
        captured.see(G, f)
    assert captured.at(G) == 2
    # replayed: the drop comes sooner and twice (a late goodbye, then the
    # gateway's second reconnect): four events already, but one move only,
    # so B must still wait for A's second play
    replayed = Progress()
    for f in (update((1, "disconnected"), (2, "reconnected")), update((3, "played")),
              update((4, "disconnected")), update((5, "reconnected"))):
        replayed.see(G, f)
    assert replayed.at(G) == 1 < captured.at(G)
    replayed.see(G, update((6, "played")))
    assert replayed.at(G) == 2


def test_events_replayed_after_a_resume_count_once() -> None:
    p = Progress()
    p.see(G, update((1, "played"), (2, "disconnected")))
    p.see(G, {**update((1, "played"), (2, "disconnected"), (3, "reconnected")), "replayed": True})
    p.see(G, {"type": "result", "game_id": G, "game_seq": 3, "cmd_id": "c"})
    assert p.at(G) == 1


def test_a_whole_view_counts_what_it_skipped_as_moves() -> None:
    p = Progress()
    p.see(G, update((1, "played"), (2, "reconnected")))
    p.see(G, {"type": "view", "game_id": G, "game_seq": 7, "view": {}, "resync": True})
    assert p.at(G) == 6
    p.see(G, {"type": "event", "game_id": G, "game_seq": 8, "t": 0,  # before issue 13
              "event": {"type": "disconnected", "seat": 1}})
    assert p.at(G) == 6


def test_a_turn_key_is_the_copys_not_the_captures() -> None:
    """An action's ``turn_key`` is a game time of the captured game: a copy
    sends one the capture's game refused ``turn_passed`` (a double tap, a
    move kept while offline) with a key no turn has, so it is refused
    again; any other without its key, on the turn the causal order gives."""
    act = {"type": "action", "game_id": G, "cmd_id": "c1",
           "action": {"type": "play", "cards": ["KS"], "turn_key": 32704}}
    passed = copy_turn_key(act, {"type": "error", "cmd_id": "c1", "code": "turn_passed"})
    assert passed["action"] == {"type": "play", "cards": ["KS"], "turn_key": -1}
    for answer in ({"type": "result", "cmd_id": "c1"}, {"type": "error", "code": "not_your_turn"},
                   None):
        assert copy_turn_key(act, answer)["action"] == {"type": "play", "cards": ["KS"]}
    assert act["action"]["turn_key"] == 32704  # the capture's frame is left as it was
    sync = {"type": "sync", "game_id": G}
    assert copy_turn_key(sync, None) is sync
