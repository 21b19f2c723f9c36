"""Session checkpoints (docs/protocol.md, ``ttanjit_sessions``): a changed
session is saved within ``CHECKPOINT_S`` seconds, once per cycle, and the
saves of many sessions are spread over the seconds of the cycle instead of
all falling on one (a burst of one KV write per player every half minute,
competing with the moves' appends)."""

from __future__ import annotations

from collections import Counter

from ttanjit.gateway.session import CHECKPOINT_S, Session, due_checkpoints, new_session_id


def sessions(n: int) -> list[Session]:
    return [Session(new_session_id(), f"p{i}", f"n{i}") for i in range(n)]


def test_each_changed_session_once_per_cycle_and_the_rest_never() -> None:
    ss = sessions(600)
    for i, s in enumerate(ss):
        s.seq = 5
        s.saved_seq = 5 if i % 3 == 0 else 2  # a third unchanged since their last save
    changed = {s.id for s in ss if s.seq != s.saved_seq}
    for start in (0, 1, 17):  # any CHECKPOINT_S consecutive seconds
        got = Counter(s.id for t in range(start, start + CHECKPOINT_S)
                      for s in due_checkpoints(ss, t))
        assert set(got) == changed and set(got.values()) == {1}


def test_saves_are_spread_over_the_cycle() -> None:
    ss = sessions(3000)
    for s in ss:
        s.seq = 1  # all changed (saved_seq starts at -1)
    per_second = [len(due_checkpoints(ss, t)) for t in range(CHECKPOINT_S)]
    assert sum(per_second) == 3000
    # about 100 a second; never a burst of them on one second
    assert max(per_second) <= 2 * 3000 // CHECKPOINT_S
    assert min(per_second) >= 3000 // CHECKPOINT_S // 2


def test_a_saved_session_waits_until_it_changes_again() -> None:
    [s] = sessions(1)
    s.seq = 3
    t = next(t for t in range(CHECKPOINT_S) if due_checkpoints([s], t))
    s.saved_seq = s.seq  # what Gateway.save does
    assert not any(due_checkpoints([s], t + k) for k in range(2 * CHECKPOINT_S))
    s.seq += 1
    assert due_checkpoints([s], t + CHECKPOINT_S) == [s]
    assert not any(due_checkpoints([s], t + k) for k in range(1, CHECKPOINT_S))
