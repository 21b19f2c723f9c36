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

