"""``ttanjit loadtest play``: N simulated players ramped up over ``ramp_s``,
playing for ``duration_s`` (or until each played ``games`` games), with a
live progress line; returns the report (:mod:`ttanjit.loadtest.stats`).
``record`` is the same run with a capture of chosen players."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from ttanjit.gateway.capture import CaptureWriter
from ttanjit.loadtest.player import PlayConfig, Player, RoomGroup
from ttanjit.loadtest.report import message
from ttanjit.loadtest.stats import Stats


@contextmanager
def ctrl_c_ends_run(end: Callable[[], None]) -> Iterator[None]:
    """Within it, a first Ctrl-C calls ``end`` (the run stops early and still
    reports what it did); a second one interrupts as usual."""
    loop = asyncio.get_running_loop()

    def first() -> None:
        print("\nstopping: the report follows (Ctrl-C again to abandon it)",
              file=sys.stderr, flush=True)
        loop.remove_signal_handler(signal.SIGINT)
        end()

    try:
        loop.add_signal_handler(signal.SIGINT, first)
    except (RuntimeError, NotImplementedError, ValueError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def chosen(spec: str, n: int) -> set[int]:
    """``all``, ``none`` or ``0,2-3`` -> player numbers."""
    if spec in ("all", "*"):
        return set(range(n))
    out: set[int] = set()
    for part in filter(None, spec.split(",")):
        if part == "none":
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return {i for i in out if 0 <= i < n}


async def play(base: str, players: int, cfg: PlayConfig, *, ramp_s: float = 0.0,
               duration_s: float = 60.0, capture: str | None = None, record: str = "all",
               progress: float = 1.0, stats: Stats | None = None,
               first: int = 0) -> dict[str, Any]:
    stats = stats or Stats()
    writer = CaptureWriter(capture, "loadtest", url=base, game=cfg.game) if capture else None
    recorded = chosen(record, players) if writer else set()
    finished: set[str] = set()
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    stop = asyncio.Event()
    failures: list[str] = []
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:
        roster: list[Player] = []
        group: RoomGroup | None = None
        for i in range(players):
            if cfg.mode == "room" and (group is None or len(group.members) == group.size):
                group = RoomGroup(cfg.seats)
            p = Player(first + i, base, cfg, stats, http,
                       writer if i in recorded else None,
                       group if cfg.mode == "room" else None, finished)
            if group is not None and cfg.mode == "room":
                group.members.append(p)
            roster.append(p)

        async def one(i: int, p: Player) -> None:
            if ramp_s and players > 1:
                await asyncio.sleep(ramp_s * i / players)
            try:
                await p.start()
                await p.run(stop)
            except Exception as exc:  # noqa: BLE001 - counted and reported, the run goes on
                stats.count["player_failures"] += 1
                if len(failures) < 20:
                    failures.append(f"p{p.n}: {message(exc)}")

        t0 = time.monotonic()
        tasks = [asyncio.create_task(one(i, p)) for i, p in enumerate(roster)]
        everyone = asyncio.ensure_future(asyncio.gather(*tasks))
        # a second Ctrl-C abandons the run while it stops: its outcome is
        # not awaited then, and asyncio printed a 40-line traceback of it at
        # exit (load tester audit)
        everyone.add_done_callback(lambda f: f.cancelled() or f.exception())
        tty = sys.stderr.isatty()
        peak = 0
        def end() -> None:  # Ctrl-C: the players stop, the report is of what they did
            stats.count["interrupted"] = 1
            stop.set()

        with ctrl_c_ends_run(end):
            while not stop.is_set():
                left = duration_s - (time.monotonic() - t0)
                if left <= 0 or everyone.done():
                    break
                stopped = asyncio.ensure_future(stop.wait())
                await asyncio.wait({everyone, stopped}, timeout=min(progress or left, left),
                                   return_when=asyncio.FIRST_COMPLETED)
                stopped.cancel()
                peak = max(peak, stats.in_game)
                if progress:
                    line = stats.progress_line()
                    print(("\r" + line) if tty else line, end="" if tty else "\n",
                          file=sys.stderr, flush=True)
        if tty and progress:
            print(file=sys.stderr)
        stop.set()
        await asyncio.wait({everyone}, timeout=5)
        # players a full gateway kept out to the end (refused_full): no
        # failure of theirs, a finding of the run's
        stats.count["not_admitted"] = sum(1 for p in roster if p.refused and not p.admitted)
        for p in roster:
            await p.stop()
        everyone.cancel()
        await asyncio.gather(everyone, return_exceptions=True)
    if writer is not None:
        writer.close()
    return stats.report(run={"url": base, "game": cfg.game, "seats": cfg.seats, "mode": cfg.mode,
                             "think_ms": list(cfg.think_ms), "ramp_s": ramp_s,
                             "duration_s": duration_s},
                        players=players, games_finished=stats.count["games_finished"],
                        peak_in_game=peak, failures=failures,
                        games_played=sum(p.games_played for p in roster),
                        **({"capture": capture} if capture else {}))
