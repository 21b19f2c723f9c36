"""Quick match (issue 6, docs/protocol.md 4): the queue's tick forms the
same matches as the rule says it — per kind of table, oldest ticket first,
those within the wider of the two windows join it nearest in rating first,
then the longest waiting; a table not filled waits (and its oldest is left
out of the rest of the tick) unless its oldest waited ``bot_wait_ms``.

``take_matches`` finds the candidates outward from the oldest's rating in
a rating-sorted list (about n log n a tick); this checks it against the
rule written out directly (n² a tick), on queues with many equal ratings
and times. (What a tick costs: ``python -m ttanjit.bench lobby``.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ttanjit.matchmaker.options import bot_level_for
from ttanjit.matchmaker.queue import QuickMatch, QuickQueue, Ticket


def by_the_rule(q: QuickQueue, now_ms: int) -> list[QuickMatch]:
    """The rule, written out directly (as take_matches was until it was
    sped up)."""
    buckets: dict[tuple[str, int], list[Ticket]] = {}
    for t in q.by_player.values():
        buckets.setdefault((t.game, t.seats), []).append(t)
    matches: list[QuickMatch] = []
    for (game, seats), pending in buckets.items():
        pending.sort(key=lambda t: t.since_ms)
        while pending:
            oldest = pending[0]
            w_old = oldest.window(now_ms, q.base_window, q.widen_per_s)
            fits = [t for t in pending[1:] if abs(t.rating - oldest.rating)
                    <= max(w_old, t.window(now_ms, q.base_window, q.widen_per_s))]
            fits.sort(key=lambda t: (abs(t.rating - oldest.rating), t.since_ms))
            group = [oldest, *fits[: seats - 1]]
            if len(group) < seats and now_ms - oldest.since_ms < q.bot_wait_ms:
                pending.pop(0)
                continue
            mean = sum(t.rating for t in group) / len(group)
            bots = [oldest.bot_level or bot_level_for(mean)] * (seats - len(group))
            matches.append(QuickMatch(game, seats, group, bots))
            for t in group:
                pending.remove(t)
                q.by_player.pop(t.player, None)
    return matches


def shape(matches: list[QuickMatch]) -> list[tuple[str, int, list[str], list[str]]]:
    return [(m.game, m.seats, [t.player for t in m.tickets], m.bots) for m in matches]


tickets = st.lists(st.tuples(
    st.sampled_from([("onecard", 2), ("onecard", 4), ("penalty_rows", 3)]),
    st.sampled_from([0.0, 1.5, 3.0, 4.5, 6.0, 10.0, 25.0, -7.25]),  # ties on both sides
    st.integers(0, 12).map(lambda s: s * 1000),  # equal times too
    st.sampled_from(["", "hard"]),
), max_size=60)


@settings(max_examples=400, deadline=None)
@given(tickets=tickets, now_s=st.integers(0, 30), base=st.sampled_from([0.0, 1.5, 5.0]),
       widen=st.sampled_from([0.0, 0.5, 1.0]), bot_wait_s=st.sampled_from([0, 10, 15, 1000]))
def test_take_matches_forms_the_matches_of_the_rule(tickets: list, now_s: int, base: float,
                                                    widen: float, bot_wait_s: int) -> None:
    queues = [QuickQueue(bot_wait_ms=bot_wait_s * 1000, base_window=base, widen_per_s=widen)
              for _ in range(2)]
    for k, ((game, seats), rating, since, level) in enumerate(tickets):
        for q in queues:
            q.add(Ticket(f"p{k}", "닉", game, seats, rating, since, f"t{k}", level))
    fast, direct = queues
    got, want = fast.take_matches(now_s * 1000), by_the_rule(direct, now_s * 1000)
    assert shape(got) == shape(want)
    assert set(fast.by_player) == set(direct.by_player)  # the same tickets left waiting



@settings(max_examples=300, deadline=None)
@given(ratings=st.lists(st.floats(-60, 60, allow_nan=False), min_size=1, max_size=30),
       seats=st.integers(2, 5), now_s=st.integers(0, 20))
def test_any_ratings_form_the_matches_of_the_rule(ratings: list[float], seats: int,
                                                  now_s: int) -> None:
    """Any ratings, even two that lie at one rounded distance from a third
    on the same side (25.123456789 and 25.123456789000002 from −7.3)."""
    queues = [QuickQueue(bot_wait_ms=15_000, base_window=40.0, widen_per_s=1.0)
              for _ in range(2)]
    for k, rating in enumerate(ratings):
        for q in queues:
            q.add(Ticket(f"p{k}", "닉", "onecard", seats, rating, (k * 7919) % 3 * 1000, f"t{k}"))
    fast, direct = queues
    assert shape(fast.take_matches(now_s * 1000)) == shape(by_the_rule(direct, now_s * 1000))
    assert set(fast.by_player) == set(direct.by_player)


def test_two_ratings_at_one_rounded_distance_go_by_their_wait() -> None:
    """−7.3 is the oldest; 25.123456789 and 25.123456789000002 lie at the
    same distance from it once rounded: the one that waited longer joins."""
    q = QuickQueue(bot_wait_ms=15_000, base_window=40.0)
    for i, (rating, since) in enumerate([(-7.3, 0), (25.123456789, 2000),
                                         (25.123456789000002, 1000)]):
        q.add(Ticket(f"p{i}", "닉", "onecard", 2, rating, since, f"t{i}"))
    (m,) = q.take_matches(3000)
    assert [t.player for t in m.tickets] == ["p0", "p2"]
