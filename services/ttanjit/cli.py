"""``ttanjit`` command line: replay, simulate, ladder, record, drain and
loadtest (``ttanjit COMMAND --help`` for each)."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from ttanjit.games import GAMES
from ttanjit.games.record import RecordError


class Parser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr like the commands' own errors
    (``ttanjit COMMAND: …``), exit 2, without the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (--help for usage)\n")


def at_least(lo: int) -> Callable[[str], int]:
    """An argparse type: a whole number ``>= lo`` (else a one-line usage error, exit 2)."""
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {raw!r}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be at least {lo}, not {value}")
        return value
    return parse


def number(raw: str) -> float:
    """An argparse type: a finite number."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {raw!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {raw!r}")
    return value


def positive(raw: str) -> float:
    """An argparse type: a finite number above 0."""
    value = number(raw)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above 0, not {raw}")
    return value


def json_object(what: str, raw: str | None) -> dict[str, Any]:
    """``--options``: a JSON object (ValueError with the reason otherwise)."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        raise ValueError(f"{what} is not JSON: {raw!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object like '{{\"turn_ms\": 45000}}', "
                         f"not {raw!r}")
    return value


def writable(path: str) -> str | None:
    """Why ``path`` cannot be written, before any work is done (None: it can).
    An existing file is left as it is; a file created to find out is removed."""
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    if not existed:
        os.remove(path)
    return None


def _replay(args: argparse.Namespace) -> int:
    from ttanjit.games.record import load, replay

    try:
        record = load(args.file)
        engine, results, events = replay(record)
    except RecordError as exc:
        print(f"ttanjit replay: {exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError:
        print(f"ttanjit replay: {args.file} is not a record: not UTF-8 text", file=sys.stderr)
        return 2
    doc = {"results": results, "events": events, "state": engine.state()}
    json.dump(doc, sys.stdout, ensure_ascii=False, indent=args.indent)
    sys.stdout.write("\n")
    # A malformed action (not an action of this game at all) means a broken
    # record: the document is still printed, but the exit says so.
    bad = [i for i, r in enumerate(results) if r.get("code") == "bad_action"]
    if bad:
        print(f"ttanjit replay: malformed action in input(s) {', '.join(map(str, bad))} "
              f"(code bad_action)", file=sys.stderr)
        return 1
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from ttanjit.games.simulate import simulate

    if args.write_record:  # before the games run, not after
        why = writable(args.write_record)
        if why:
            print(f"ttanjit simulate: cannot write {args.write_record}: {why}", file=sys.stderr)
            return 2
    try:
        options = json_object("--options", args.options)
        summary, record = simulate(args.game, args.games, args.seats, args.seed, options,
                                   keep_record=bool(args.write_record))
    except (ValueError, RecordError) as exc:
        print(f"ttanjit simulate: {exc}", file=sys.stderr)
        return 2
    if record is not None and args.write_record:
        try:
            with open(args.write_record, "w", encoding="utf-8") as f:
                json.dump(record.to_json(), f, ensure_ascii=False)
        except OSError as exc:
            print(f"ttanjit simulate: cannot write {args.write_record}: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            return 2
    print(json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    return 0


# the handover budget of a shard whose own is not known here (drained from
# another host without --timeout): a shard's is 25 s, 45 in the chart, 100
# in its production example
UNKNOWN_BUDGET_S = 300.0


def drain_deadline(timeout_s: float, env: dict[str, str]) -> float:
    """How long ``ttanjit drain`` waits for the shard's answer: its budget
    (``--timeout``, else the shard's ``TTANJIT_DRAIN_TIMEOUT_S`` when this
    is its host, else :data:`UNKNOWN_BUDGET_S`) and 10 s. It waited 70 s
    whatever the shard's budget was: a 100 s drain said exit 1, "cannot be
    reached", while it went on (operator audit)."""
    budget = timeout_s
    if not budget:
        try:
            budget = float(env.get("TTANJIT_DRAIN_TIMEOUT_S") or 0)
        except ValueError:
            budget = 0
    return (budget if budget > 0 else UNKNOWN_BUDGET_S) + 10


def _drain(args: argparse.Namespace) -> int:
    """gRPC Drain on a shard (the Kubernetes preStop hook runs this on localhost)."""
    import grpc

    from ttanjit.v1 import shard_pb2, shard_pb2_grpc

    request = shard_pb2.DrainRequest(timeout_s=args.timeout, exit=args.exit)
    deadline = drain_deadline(args.timeout, dict(os.environ))
    try:
        with grpc.insecure_channel(args.addr) as channel:
            reply = shard_pb2_grpc.ShardServiceStub(channel).Drain(request, timeout=deadline)
    except grpc.RpcError as exc:
        late = " (the shard may still be draining)" if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED else ""
        print(f"ttanjit drain: {args.addr}: {exc.code().name}: {exc.details()}{late}", file=sys.stderr)
        return 1
    print(json.dumps({"handed_over": reply.handed_over, "finished": reply.finished,
                      "left": reply.left}))
    if reply.left:  # exit 3 (README "Command line"): nobody took these games
        print(f"ttanjit drain: {args.addr}: {reply.left} live game(s) left, not handed over "
              "(no other shard took them in time): the shard serves them while it runs; "
              "when it stops, their leases expire and the next shard that takes games "
              "claims them from their records", file=sys.stderr)
        return 3
    return 0


class LadderProgress:
    """``games done / total`` on stderr every ``every_s`` seconds while the
    ladder runs (a matchup of hard bots takes minutes before its table)."""

    def __init__(self, total: int, every_s: float = 10.0) -> None:
        self.total, self.every_s = total, every_s
        self.done = 0
        self.t0 = time.monotonic()
        self._stop = threading.Event()

    def game_done(self) -> None:
        self.done += 1

    def line(self) -> str:
        return (f"ttanjit ladder: {self.done}/{self.total} games "
                f"({time.monotonic() - self.t0:.0f} s)")

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            print(self.line(), file=sys.stderr, flush=True)

    @contextmanager
    def running(self) -> Iterator[LadderProgress]:
        thread = threading.Thread(target=self._loop, name="ladder-progress", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()


def _ladder(args: argparse.Namespace) -> int:
    from ttanjit.bots.ladder import parse_pairs, run_ladder

    try:
        options = json_object("--options", args.options)
        matchups = len(parse_pairs(args.pairs, args.game)) + (0 if args.no_mixed else 1)
        progress = LadderProgress(matchups * args.games, args.progress_s)
        with progress.running():
            tables = run_ladder(args.game, args.games, args.seats, args.pairs,
                                not args.no_mixed, args.budget_ms, args.seed, options,
                                echo=not args.json, on_game=progress.game_done)
    except ValueError as exc:
        print(f"ttanjit ladder: {exc}", file=sys.stderr)
        return 2
    print(progress.line(), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(tables, ensure_ascii=False, indent=2))
    return 0


def _record(args: argparse.Namespace) -> int:
    from ttanjit.shard.export import main as export

    return export(args.nats, args.game_id, args.prefix, args.out)


def build_parser() -> argparse.ArgumentParser:
    # (the module's docstring is reStructuredText: its ``ttanjit`` showed as such)
    p = Parser(prog="ttanjit", description="ttanjit's command line: replay, simulate, ladder, "
                                           "record, drain and loadtest (ttanjit COMMAND --help for each).")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("replay", help="re-run a game record and print results, events and state")
    r.add_argument("file", help="a game record (JSON: from `ttanjit record` or `simulate --write-record`)")
    r.add_argument("--indent", type=at_least(0), default=None,
                   help="indent the JSON printed by this many spaces (default: one line)")
    r.set_defaults(func=_replay)

    s = sub.add_parser("simulate", help="play random legal games as fast as possible")
    s.add_argument("--game", required=True, choices=list(GAMES), help="the game: %(choices)s")
    s.add_argument("--games", type=at_least(1), default=100, help="games to play (default 100)")
    s.add_argument("--seats", type=int, default=4, help="seats at each table (default 4)")
    s.add_argument("--seed", type=int, default=0, help="the first game's deal (default 0)")
    s.add_argument("--options", help="room options as a JSON object, e.g. '{\"turn_ms\": 45000}'")
    s.add_argument("--write-record", metavar="FILE", help="write the last game's record")
    s.set_defaults(func=_simulate)

    lad = sub.add_parser("ladder", help="bot levels against each other (and random play), "
                                        "with 95 %% confidence intervals")
    lad.add_argument("--game", required=True, choices=list(GAMES), help="the game: %(choices)s")
    lad.add_argument("--games", type=at_least(1), default=100, help="games per matchup")
    lad.add_argument("--seats", type=at_least(2), default=None, help="default 4")
    lad.add_argument("--pairs", help="focus:field levels, e.g. 'hard:normal,normal:easy' "
                                     "(levels: random easy normal hard)")
    lad.add_argument("--no-mixed", action="store_true", help="skip the all-levels table")
    lad.add_argument("--budget-ms", type=positive, default=None,
                     help="hard bots' search budget per decision (default 200)")
    lad.add_argument("--seed", type=int, default=0, help="the first game's deal (default 0)")
    lad.add_argument("--options", help="room options as a JSON object")
    lad.add_argument("--json", action="store_true", help="print the tables as JSON")
    lad.add_argument("--progress-s", type=positive, default=10.0,
                     help="seconds between progress lines on stderr (default 10)")
    lad.set_defaults(func=_ladder)

    d = sub.add_parser("drain", help="drain a game shard: no new games, live games handed over",
                       epilog="exit 0: every live game handed over; 3: games left (no other shard "
                              "took them); 1: the shard cannot be reached or did not answer in time")
    d.add_argument("--addr", default=f"127.0.0.1:{os.environ.get('TTANJIT_GRPC_PORT') or 7100}",
                   help="the shard's gRPC address (default: this host, $TTANJIT_GRPC_PORT)")
    d.add_argument("--timeout", type=at_least(0), default=0,
                   help="seconds to wait for the handover (0 = the shard's TTANJIT_DRAIN_TIMEOUT_S)")
    d.add_argument("--exit", action="store_true", help="the shard exits once drained")
    d.set_defaults(func=_drain)

    rec = sub.add_parser("record", help="a game's record from JetStream, for `ttanjit replay`")
    rec.add_argument("game_id", help="the game's id (12 characters: the table's address, #/game/ID)")
    rec.add_argument("--nats", default=os.environ.get("TTANJIT_NATS_URL", "nats://127.0.0.1:4222"),
                     help="NATS URL (default: $TTANJIT_NATS_URL, else nats://127.0.0.1:4222)")
    rec.add_argument("--prefix", default=os.environ.get("TTANJIT_NATS_PREFIX", "ttanjit.v1"),
                     help="subject prefix (default: $TTANJIT_NATS_PREFIX, else ttanjit.v1)")
    rec.add_argument("-o", "--out", help="write to this file (default: stdout)")
    rec.set_defaults(func=_record)

    from ttanjit.loadtest.cli import add_parser as add_loadtest

    add_loadtest(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "loadtest_command", None):
        from ttanjit.loadtest.cli import run

        return run(args)
    try:
        rc: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader stopped (`ttanjit replay f.json | head`): no traceback
        # (operator audit); the status a tool stopped by SIGPIPE has
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return rc
