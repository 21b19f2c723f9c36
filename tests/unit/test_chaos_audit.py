"""The chaos drill's verdict (ttanjit.chaos.audit.judge): lost commands and
stalls, read from game records."""

from __future__ import annotations

from ttanjit.chaos.audit import judge
from ttanjit.shard.records import StoredRecord


def rec(*ms: int, cmds: tuple[str, ...] = ()) -> StoredRecord:
    entries = [{"t": m, "ms": m, "seat": 0, "action": {"type": "x"}, "player": "p",
                "cmd": cmds[i] if i < len(cmds) else ""} for i, m in enumerate(ms)]
    return StoredRecord(header={}, entries=entries)


def test_a_gap_across_the_fault_counts_from_the_fault() -> None:
    # last input 1.2 s before the fault, the next 1.9 s after it: the game
    # was 3.1 s without an input, 1.9 s of them the fault's making
    v = judge({"g": rec(9_000, 10_000, 18_800, 21_900, 22_500)}, [],
              since_ms=19_000, until_ms=25_000, finished={"g"}, fault_ms=20_000)
    assert v.stalls == {} and round(v.longest_gap_s, 2) == 3.1
    assert round(v.recovery_s, 2) == 1.9


def test_a_slow_recovery_or_a_later_gap_is_a_stall() -> None:
    slow = judge({"g": rec(18_800, 23_100)}, [], since_ms=19_000, until_ms=25_000,
                 finished={"g"}, fault_ms=20_000)
    assert slow.stalls == {"g": 3.1}
    later = judge({"g": rec(18_800, 20_500, 24_000)}, [], since_ms=19_000,
                  until_ms=25_000, finished={"g"}, fault_ms=20_000)
    assert later.stalls == {"g": 3.5}
    # with no fault instant every gap counts whole; a live game's silence too
    whole = judge({"g": rec(18_800, 21_900)}, [], since_ms=18_000, until_ms=22_000)
    assert whole.stalls == {"g": 3.1}


def test_an_accepted_command_missing_from_the_record_is_lost() -> None:
    v = judge({"g": rec(1_000, 2_000, cmds=("c1", "c2"))},
              [("g", "p", "c1"), ("g", "p", "c3")], since_ms=0, until_ms=3_000,
              finished={"g"})
    assert v.lost == [("g", "p", "c3")] and v.accepted == 2 and not v.ok


def test_a_lost_command_is_named_in_the_drills_table() -> None:
    # a CI run once printed only "whole run: 1 lost": which command, when it
    # was accepted and how far the record reached must be in the table
    from ttanjit.chaos.drill import Ledger, Row, lost_detail, table

    ledger = Ledger(games={"g"}, accepted=[("g", "p", "c1", 19_500), ("g", "p", "c3", 20_400)])
    recs = {"g": rec(19_500, cmds=("c1",))}
    v = judge(recs, [(g, p, c) for g, p, c, _ in ledger.accepted], since_ms=19_000,
              until_ms=25_000, finished={"g"}, fault_ms=20_000)
    lines = lost_detail(v.lost, ledger, recs, 20_000)
    assert lines == ["game g player p cmd c3: accepted +400 ms, record has 1 inputs, its last -500 ms"]
    out = table([Row("kill -9 shard", 1.0, 1, 0, 1.0, 1, "shard-0", lost_cmds=lines)])
    assert "lost in 'kill -9 shard': game g player p cmd c3: accepted +400 ms" in out
