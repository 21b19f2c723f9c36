"""``ttanjit`` command line: replay, simulate (more subcommands join as the
services land: ladder, loadtest)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from ttanjit.games import GAMES
from ttanjit.games.record import RecordError


def _replay(args: argparse.Namespace) -> int:
    from ttanjit.games.record import load, replay

    try:
        record = load(args.file)
        engine, results, events = replay(record)
    except RecordError as exc:
        print(f"ttanjit replay: {exc}", file=sys.stderr)
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

    try:
        options = json.loads(args.options) if args.options else {}
        summary, record = simulate(args.game, args.games, args.seats, args.seed, options,
                                   keep_record=bool(args.write_record))
    except (ValueError, RecordError) as exc:
        print(f"ttanjit simulate: {exc}", file=sys.stderr)
        return 2
    if record is not None and args.write_record:
        with open(args.write_record, "w", encoding="utf-8") as f:
            json.dump(record.to_json(), f, ensure_ascii=False)
    print(json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    return 0


def _drain(args: argparse.Namespace) -> int:
    """gRPC Drain on a shard (the Kubernetes preStop hook runs this on localhost)."""
    import grpc

    from ttanjit.v1 import shard_pb2, shard_pb2_grpc

    request = shard_pb2.DrainRequest(timeout_s=args.timeout, exit=args.exit)
    deadline = (args.timeout or 60) + 10
    try:
        with grpc.insecure_channel(args.addr) as channel:
            reply = shard_pb2_grpc.ShardServiceStub(channel).Drain(request, timeout=deadline)
    except grpc.RpcError as exc:
        print(f"ttanjit drain: {args.addr}: {exc.code().name}: {exc.details()}", file=sys.stderr)
        return 1
    print(json.dumps({"handed_over": reply.handed_over, "finished": reply.finished,
                      "left": reply.left}))
    return 0


def _ladder(args: argparse.Namespace) -> int:
    from ttanjit.bots.ladder import run_ladder

    try:
        options = json.loads(args.options) if args.options else {}
        tables = run_ladder(args.game, args.games, args.seats, args.pairs, not args.no_mixed,
                            args.budget_ms, args.seed, options, echo=not args.json)
    except ValueError as exc:
        print(f"ttanjit ladder: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(tables, ensure_ascii=False, indent=2))
    return 0


def _record(args: argparse.Namespace) -> int:
    from ttanjit.shard.export import main as export

    return export(args.nats, args.game_id, args.prefix, args.out)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ttanjit", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("replay", help="re-run a game record and print results, events and state")
    r.add_argument("file")
    r.add_argument("--indent", type=int, default=None)
    r.set_defaults(func=_replay)

    s = sub.add_parser("simulate", help="play random legal games as fast as possible")
    s.add_argument("--game", required=True, choices=list(GAMES))
    s.add_argument("--games", type=int, default=100)
    s.add_argument("--seats", type=int, default=4)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--options", help="room options as JSON, e.g. '{\"turn_ms\": 45000}'")
    s.add_argument("--write-record", metavar="FILE", help="write the last game's record")
    s.set_defaults(func=_simulate)

    lad = sub.add_parser("ladder", help="bot levels against each other (and random play), "
                                        "with 95 %% confidence intervals")
    lad.add_argument("--game", required=True, choices=list(GAMES))
    lad.add_argument("--games", type=int, default=100, help="games per matchup")
    lad.add_argument("--seats", type=int, default=None, help="default 4")
    lad.add_argument("--pairs", help="focus:field levels, e.g. 'hard:normal,normal:easy' "
                                     "(levels: random easy normal hard)")
    lad.add_argument("--no-mixed", action="store_true", help="skip the all-levels table")
    lad.add_argument("--budget-ms", type=float, default=None,
                     help="hard bots' search budget per decision (default 200)")
    lad.add_argument("--seed", type=int, default=0)
    lad.add_argument("--options", help="room options as JSON")
    lad.add_argument("--json", action="store_true", help="print the tables as JSON")
    lad.set_defaults(func=_ladder)

    d = sub.add_parser("drain", help="drain a game shard: no new games, live games handed over")
    d.add_argument("--addr", default=f"127.0.0.1:{os.environ.get('TTANJIT_GRPC_PORT') or 7100}",
                   help="the shard's gRPC address (default: this host, $TTANJIT_GRPC_PORT)")
    d.add_argument("--timeout", type=int, default=0,
                   help="seconds to wait for the handover (0 = the shard's default)")
    d.add_argument("--exit", action="store_true", help="the shard exits once drained")
    d.set_defaults(func=_drain)

    rec = sub.add_parser("record", help="a game's record from JetStream, for `ttanjit replay`")
    rec.add_argument("game_id")
    rec.add_argument("--nats", default=os.environ.get("TTANJIT_NATS_URL", "nats://127.0.0.1:4222"))
    rec.add_argument("--prefix", default=os.environ.get("TTANJIT_NATS_PREFIX", "ttanjit.v1"))
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
    rc: int = args.func(args)
    return rc
