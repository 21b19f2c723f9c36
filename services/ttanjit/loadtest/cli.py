"""``ttanjit loadtest play|record|replay|report`` (also ``python -m
ttanjit.loadtest``). Every subcommand works against any deployment's URL
(``--url http://host:port``) or a local stack it starts itself (``--local``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from contextlib import ExitStack
from typing import Any

from ttanjit.cli import at_least, number, positive
from ttanjit.games import GAMES
from ttanjit.loadtest.report import collapse, http_why
from ttanjit.loadtest.stats import push, table


def _run(coro: Any) -> Any:
    """The event loop: uvloop when installed (less CPU per frame)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


# -- argparse types: input out of range is a one-line usage error, exit 2 ---------
def _seconds(raw: str) -> float:
    """A duration that may be 0."""
    value = number(raw)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds, not {raw}")
    return value


def _chance(raw: str) -> float:
    value = number(raw)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be a chance from 0 to 1, not {raw}")
    return value


def _think(raw: str) -> tuple[int, int]:
    """``MS`` or ``MS-MS``, 0 <= the first <= the second."""
    lo, _, hi = raw.partition("-")
    try:
        a, b = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not MS or MS-MS (e.g. 1000-3000): {raw!r}") from None
    if not 0 <= a <= b:
        raise argparse.ArgumentTypeError(f"not MS-MS from low to high (e.g. 1000-3000): {raw!r}")
    return a, b


def _which(raw: str) -> str:
    """``--record``: all, none, or player numbers like 0,2-3."""
    for part in filter(None, raw.split(",")):
        if part in ("all", "*", "none"):
            continue
        a, dash, b = part.partition("-")
        if not (a.isdigit() and (not dash or b.isdigit())) or (dash and int(a) > int(b)):
            raise argparse.ArgumentTypeError(
                f"not all, none or player numbers like 0,2-3: {raw!r}")
    return raw


DEFAULT_URL = "http://127.0.0.1:8080"


def _base_url(raw: str) -> str:
    if not re.fullmatch(r"https?://[^/\s]+(/\S*)?", raw):
        raise argparse.ArgumentTypeError(f"not an http:// or https:// URL: {raw!r}")
    return raw.rstrip("/")


def _options(raw: str) -> dict[str, Any]:
    try:
        opts = json.loads(raw) if raw else {}
    except ValueError:
        raise argparse.ArgumentTypeError(f"not JSON: {raw!r}") from None
    if not isinstance(opts, dict):
        raise argparse.ArgumentTypeError(f"not a JSON object: {raw!r}")
    return opts


class CliError(Exception):
    """Input the command cannot use (a file that cannot be read, a push
    that failed): its message is printed, without a traceback, exit 2."""


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", type=_base_url, default=None,
                   help=f"the gateway's base URL (default {DEFAULT_URL})")
    p.add_argument("--local", action="store_true",
                   help="start a whole local stack for the run and use its gateway")
    p.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    p.add_argument("--push", metavar="URL", help="push the report to this Pushgateway")
    p.add_argument("--run-label", default="", help="the run label on pushed metrics")
    p.add_argument("--quiet", action="store_true", help="no live progress line")


def _players(p: argparse.ArgumentParser) -> None:
    p.add_argument("-n", "--players", type=at_least(1), default=8)
    p.add_argument("--game", default="onecard", choices=list(GAMES))
    p.add_argument("--seats", type=at_least(0), default=4,
                   help="table size (quick match: 0 = the game's default)")
    p.add_argument("--mode", default="quick", choices=["quick", "room"],
                   help="quick match, or private rooms of --seats players")
    p.add_argument("--ramp", type=_seconds, default=5.0, help="seconds to bring all players in")
    p.add_argument("--duration", type=positive, default=60.0, help="seconds the run lasts")
    p.add_argument("--games", type=at_least(0), default=0,
                   help="stop a player after this many games (0: until the run ends)")
    p.add_argument("--level", default="normal", choices=["random", "easy", "normal"],
                   help="the policy simulated players play with")
    p.add_argument("--think", type=_think, default=(1000, 3000), metavar="MS-MS",
                   help="a player's pause before each move (default 1000-3000)")
    p.add_argument("--mistakes", type=_chance, default=0.0,
                   help="chance a move is sent twice (the copy is refused)")
    p.add_argument("--resume-rate", type=_chance, default=0.0,
                   help="chance per game a player loses its connection and resumes")
    p.add_argument("--seed", type=int, default=None,
                   help="room games: deal with this seed (the server must run with "
                        "TTANJIT_TEST_OPTIONS=1, as --local does)")
    p.add_argument("--options", type=_options, default={},
                   help="room games: room options as a JSON object")
    p.add_argument("--proto", action="store_true", help="binary protobuf frames")


def _cfg(args: argparse.Namespace) -> Any:
    from ttanjit.loadtest.player import PlayConfig

    return PlayConfig(game=args.game, seats=args.seats, mode=args.mode, level=args.level,
                      think_ms=args.think, mistake_rate=args.mistakes,
                      resume_rate=args.resume_rate, seed=args.seed, games=args.games,
                      proto=args.proto,
                      options=args.options)


# WebSocket close codes a replayed connection may meet (docs/websocket.md)
CLOSES = {
    1001: "the gateway stopped",
    1006: "dropped: the gateway went away, or the network or a proxy cut it",
    1009: "a frame over the gateway's hard cap",
    1011: "the gateway failed",
    1012: "the gateway asked for a reconnect",
    4001: "replaced: the same player connected again",
    4002: "idle_timeout: nothing sent for the gateway's idle time (welcome's limits.idle_ms)",
    4003: "hello_timeout",
}


def _finish(args: argparse.Namespace, report: dict[str, Any]) -> int:
    counts = report.get("counts") or {}
    if report.get("failures"):  # Python reprs (``Refused('…')``) as their messages; the
        # first 20 are kept: how many in all
        report["failures"] = collapse(list(report["failures"]),
                                      total=int(counts.get("player_failures") or 0) or None)
    print(table(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, ensure_ascii=False, indent=2)
    if args.push:
        import httpx

        try:
            code = push(args.push, report, run=args.run_label)
        except httpx.HTTPError as exc:
            raise CliError(f"could not push the report to {args.push}: {http_why(exc)}") from None
        if not 200 <= code < 300:
            raise CliError(f"the Pushgateway at {args.push} refused the report: HTTP {code}")
        print(f"pushed to {args.push}: HTTP {code}", file=sys.stderr)
    failed = int(counts.get("player_failures") or 0)
    cut = int(counts.get("reconnect_failures") or 0) + int(counts.get("connections_lost") or 0)
    if failed:  # a run whose players could not play is not a result: say why, exit 1
        print(f"{failed} player(s) failed:", file=sys.stderr)
        for line in report.get("failures") or []:
            print(f"  {line}", file=sys.stderr)
    kept_out = int(counts.get("not_admitted") or 0)
    if kept_out:  # a finding, not a failure: the gateways held their most players
        print(f"{kept_out} player(s) never let in: the gateways were full (server_full "
              f"{counts.get('refused_full', 0)} time(s); their TTANJIT_MAX_CONNECTIONS)",
              file=sys.stderr)
    if cut:  # the gateway went away under them, or closed them: neither
        parts = [f"{k} {counts[k]}" + (" (no gateway took the resume)"
                                       if k == "reconnect_failures" else "")
                 for k in ("reconnect_failures", "connections_lost") if counts.get(k)]
        print(f"{cut} connection(s) lost for good: {', '.join(parts)}", file=sys.stderr)
        for code, n in (report.get("connections_lost_by_code") or {}).items():
            why = CLOSES.get(int(code), "see docs/websocket.md") if str(code).isdigit() else "?"
            print(f"  closed with {code} ({why}): {n}", file=sys.stderr)
    # a server bug, not a refusal a real player gets too (not_your_turn after
    # a double tap, a race with the turn timer): the run fails
    bugs = int((report.get("errors") or {}).get("internal_error") or 0)
    if bugs:
        print(f"{bugs} frame(s) answered with internal_error: a server bug "
              "(the gateway's and shards' logs say which)", file=sys.stderr)
    interrupted = bool(counts.get("interrupted"))
    idle = not (failed or cut or interrupted) and _nobody_played(report)
    if idle:
        print(f"no player got into a game in the run's {report.get('elapsed_s')} s: "
              "it measured no play", file=sys.stderr)
    if interrupted:
        print("interrupted (Ctrl-C): the report is of the run until then", file=sys.stderr)
        return 130
    return 1 if failed or cut or bugs or idle else 0


def _nobody_played(report: dict[str, Any]) -> bool:
    """A ``play``/``record`` report (it has ``games_played``) of players who
    never sat in a game: none finished one, none was seen in one, none moved."""
    if "games_played" not in report or not report.get("players"):
        return False
    rtt = report.get("rtt") or {}
    return not (report.get("games_played") or report.get("peak_in_game")
                or (rtt.get("action") or {}).get("count"))


def _check_gateway(url: str) -> None:
    """One look at the gateway before any player starts: a wrong ``--url``
    is one line (exit 2), not one failure per player."""
    import httpx

    end = time.monotonic() + 10
    while True:
        try:
            r = httpx.get(f"{url}/readyz", timeout=max(1.0, end - time.monotonic()))
        except httpx.HTTPError as exc:
            raise CliError(f"no gateway answers at {url}: {http_why(exc)} "
                           "(--url, or --local)") from None
        try:
            body = r.json()
        except ValueError:
            body = None
        if body is None and r.status_code >= 500 and time.monotonic() < end:
            time.sleep(0.5)  # a proxy with no ready gateway behind it yet (a rollout)
            continue
        if not isinstance(body, dict) or "connections" not in body:
            # e.g. the gateway's metrics port (its /healthz answers too), or
            # the WebSocket's address
            hint = ("drop /ws: --url is the gateway's HTTP address" if url.endswith("/ws")
                    else "--url is the gateway's HTTP address, the web client's, not its "
                    "metrics port; or --local")
            raise CliError(f"{url} is not a ttanjit gateway: GET /readyz answered "
                           f"HTTP {r.status_code} ({hint})")
        if r.status_code == 200:
            return
        if time.monotonic() >= end:  # starting, or without NATS
            raise CliError(f"the gateway at {url} is not ready after 10 s: /readyz says "
                           f"{body.get('status')!r} (it has no NATS yet? its log says why)")
        time.sleep(0.5)


def _check_push(url: str) -> None:
    """A ``--push`` address where no Pushgateway answers is said before the
    run, not after it (ops trial: found after a 33 s run, exit 2)."""
    import httpx

    try:
        r = httpx.get(f"{url.rstrip('/')}/-/ready", timeout=5)
    except httpx.HTTPError as exc:
        raise CliError(f"no Pushgateway answers at {url}: {http_why(exc)} (--push)") from None
    if r.status_code != 200:
        raise CliError(f"{url} is not a Pushgateway's base address: GET /-/ready answered "
                       f"HTTP {r.status_code} (--push)")


def _writable(path: str | None, what: str, truncate: bool = False) -> None:
    """A file the run writes, tried before any player starts: one line and
    exit 2, not a traceback after the whole run (--json to a missing folder
    ran for the run's length first: load tester audit)."""
    if not path:
        return
    try:
        open(path, "w" if truncate else "a").close()  # noqa: SIM115 - only tried
    except OSError as exc:
        raise CliError(f"cannot write {what} {path}: {exc.strerror or exc}") from None


def _url(args: argparse.Namespace, stack: ExitStack) -> str:
    _writable(getattr(args, "json", None), "the report")
    if getattr(args, "push", None):
        _check_push(args.push)
    if args.local and args.url is not None:  # it was ignored (load tester audit)
        raise CliError("--local starts its own stack and plays against its gateway: "
                       "give --url or --local, not both")
    if not args.local:
        url = str(args.url or DEFAULT_URL).rstrip("/")
        _check_gateway(url)
        return url
    from ttanjit.loadtest.localstack import LocalStack

    local = stack.enter_context(LocalStack())
    return local.urls()[0]


def _play(args: argparse.Namespace) -> int:
    from ttanjit.loadtest.play import chosen, play

    if args.mode == "quick" and (args.seed is not None or args.options):
        given = " and ".join(name for name, on in (("--seed", args.seed is not None),
                                                   ("--options", bool(args.options))) if on)
        raise CliError(f"{given}: only for private rooms (--mode room); a quick match "
                       "deals at random, with the server's options")
    if args.mode == "room" and args.seats < 2:
        raise CliError(f"--mode room needs --seats of at least 2, not {args.seats}")
    if args.ramp > args.duration and args.players > 1:
        # (players still waiting to start were reported as players, and the
        # rates divided by a longer run: load tester audit)
        raise CliError(f"--ramp {args.ramp:g} s is longer than --duration {args.duration:g} s: "
                       "players still to start when the run ends would play nothing")
    out = getattr(args, "out", None)
    _writable(out, "the capture", truncate=True)
    record = getattr(args, "record", "all")
    if out and record not in ("none", "") and not chosen(record, args.players):
        # (the numbers past -n were dropped: the capture held nobody, and
        # replayed "successfully": load tester audit)
        raise CliError(f"--record {record}: no such player among -n {args.players} "
                       f"(0–{args.players - 1})")
    with ExitStack() as stack:
        url = _url(args, stack)
        report = _run(play(url, args.players, _cfg(args), ramp_s=args.ramp,
                                  duration_s=args.duration,
                                  capture=getattr(args, "out", None),
                                  record=getattr(args, "record", "all"),
                                  progress=0.0 if args.quiet else 1.0))
    return _finish(args, report)


def _replay(args: argparse.Namespace) -> int:
    from ttanjit.gateway.capture import CaptureError, load
    from ttanjit.loadtest.replay import replay

    try:
        capture = load(args.capture)  # before any stack starts
    except CaptureError as exc:
        raise CliError(str(exc)) from None
    if not capture.players():  # (it "replayed" nobody, exit 0, --strict too: load tester audit)
        raise CliError(f"{args.capture} holds no player's frames: nothing to replay")
    with ExitStack() as stack:
        url = _url(args, stack)
        report = _run(replay(url, args.capture, loaded=capture, speed=args.speed,
                                    fanout=args.fanout, ramp_s=args.ramp,
                                    progress=0.0 if args.quiet else 1.0,
                                    proto=args.proto, timeout_s=args.timeout))
    rc = _finish(args, report)
    for d in report["divergences"][:20]:
        print("divergence:", json.dumps(d, ensure_ascii=False))
    return 1 if report["divergences"] and args.strict else rc


def _report(args: argparse.Namespace) -> int:
    try:
        with open(args.file, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as exc:
        raise CliError(f"{args.file}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CliError(f"{args.file}: not a JSON report ({exc})") from None
    keys = ("elapsed_s", "throughput", "rtt", "counts", "errors", "disconnects", "resumes")
    if not isinstance(report, dict) or any(k not in report for k in keys):
        raise CliError(f"{args.file}: not a report of `loadtest play` or `replay`")
    return _finish(args, report)


def add_parser(sub: Any) -> None:
    """The ``loadtest`` subcommand of the ``ttanjit`` command line."""
    lt = sub.add_parser("loadtest", help="simulated players, capture, replay, reports")
    _fill(lt)


def _fill(lt: argparse.ArgumentParser) -> None:
    ls = lt.add_subparsers(dest="loadtest_command", required=True)

    p = ls.add_parser("play", help="N simulated players play real games over WebSockets")
    _common(p)
    _players(p)
    p.set_defaults(func=_play)

    r = ls.add_parser("record", help="like play, writing every frame of chosen players "
                                     "to a capture file")
    _common(r)
    _players(r)
    r.add_argument("-o", "--out", required=True, help="the capture file (JSON lines)")
    r.add_argument("--record", type=_which, default="all",
                   help="which players to capture: all, or numbers like 0,2-3")
    r.set_defaults(func=_play)

    rp = ls.add_parser("replay", help="replay a capture (faster with --speed, "
                                      "multiplied with --fanout)")
    _common(rp)
    rp.add_argument("capture")
    rp.add_argument("--speed", type=positive, default=1.0,
                    help="1 = as recorded, 10 = 10x faster")
    rp.add_argument("--fanout", type=at_least(1), default=1, help="copies of the captured players")
    rp.add_argument("--ramp", type=_seconds, default=0.0, help="seconds to start all copies")
    rp.add_argument("--timeout", type=positive, default=60.0,
                    help="seconds to wait for an answer the capture had")
    rp.add_argument("--proto", action="store_true", help="binary protobuf frames")
    rp.add_argument("--strict", action="store_true", help="exit 1 on any divergence")
    rp.set_defaults(func=_replay)

    rr = ls.add_parser("report", help="print a saved JSON report (and push it)")
    rr.add_argument("file")
    rr.add_argument("--json", help=argparse.SUPPRESS)
    rr.add_argument("--push", metavar="URL")
    rr.add_argument("--run-label", default="")
    rr.set_defaults(func=_report)


def main(argv: list[str] | None = None) -> int:
    from ttanjit.cli import Parser

    p = Parser(prog="python -m ttanjit.loadtest", description=__doc__)
    _fill(p)
    args = p.parse_args(argv)
    return run(args)


def run(args: argparse.Namespace) -> int:
    """A parsed ``loadtest`` command; a :class:`CliError` is its message on
    stderr and exit 2."""
    try:
        rc: int = args.func(args)
    except CliError as exc:
        print(f"ttanjit loadtest {args.loadtest_command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the second Ctrl-C (the first ends the run with its report)
        print(f"ttanjit loadtest {args.loadtest_command}: interrupted", file=sys.stderr)
        return 130
    return rc
