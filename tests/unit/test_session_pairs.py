"""A session's last (seq, game_seq) pairs (gateway/session.py ``Pairs``):
what resume reads (docs/websocket.md: gap-free resume) kept as a
``deque(maxlen=256)`` of them would keep it, at an eighth of the memory
(overload audit: ~33 KiB per player in a game, 330 MB of a gateway's
10,000 players in games, over the chart's 512Mi with the rest)."""

from __future__ import annotations

import tracemalloc
from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from ttanjit.gateway.session import RECENT, Pairs, Session

OPS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.integers(-2**40, 2**40), st.integers(-2**40, 2**40)),
    st.tuples(st.just("pop"), st.just(0), st.just(0)),
    st.tuples(st.just("clear"), st.just(0), st.just(0)),
    st.tuples(st.just("bulk"), st.integers(0, 600), st.integers(0, 5)),
), max_size=60)


@given(OPS)
@settings(max_examples=300, deadline=None)
def test_pairs_keep_what_a_bounded_deque_keeps(ops: list[tuple[str, int, int]]) -> None:
    ours, theirs = Pairs(), deque[tuple[int, int]](maxlen=RECENT)
    for op, a, b in ops:
        if op == "append":
            ours.append((a, b))
            theirs.append((a, b))
        elif op == "pop" and theirs:
            assert ours.pop() == theirs.pop()
        elif op == "clear":
            ours.clear()
            theirs.clear()
        elif op == "bulk":  # past the ring's end, many times round
            for i in range(a):
                ours.append((i, -i - b))
                theirs.append((i, -i - b))
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        assert bool(ours) == bool(theirs)
        if theirs:
            assert ours[0] == theirs[0] and ours[-1] == theirs[-1]


def test_a_session_in_a_long_game_keeps_its_pairs_in_a_few_kib() -> None:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        sessions = []
        for k in range(200):
            s = Session(f"s_{k}", f"p_{k}", "닉", seq=100_000 + k)  # big numbers: no small-int cache
            for i in range(1, 400):
                s.event_sent(s.next_seq(), 5_000 + i)
            sessions.append(s)
        per = (tracemalloc.get_traced_memory()[0] - before) / len(sessions)
    finally:
        tracemalloc.stop()
    assert per < 6 * 1024, per  # the deque of tuples: ~33 KiB
    # and a checkpoint carries the same pairs back
    s = sessions[0]
    back = Session.from_json(s.to_json())
    assert list(back.recent) == list(s.recent) and len(back.recent) == RECENT
    assert back.game_seq_at(s.seq - 3) == s.game_seq_at(s.seq - 3) == s.game_seq - 3
