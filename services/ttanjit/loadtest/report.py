"""The failures of a ``ttanjit loadtest`` run as plain messages, identical
ones once (a saved report of an older version holds Python reprs)."""

from __future__ import annotations

import ast
import re


def message(exc: BaseException) -> str:
    """An exception as a failure line says it: its message, else its name."""
    return str(exc) or type(exc).__name__


def hello_refused(frame: dict[str, object]) -> str:
    """A refused ``hello`` (its ``error`` frame) as a failure says it: its
    code and message, not the frame (whose ``server_ms`` made each player's
    line differ, none collapsed: load tester audit), and what a token
    refusal usually means."""
    code = frame.get("code") or frame.get("type") or "no answer"
    why = f"hello refused: {code}"
    if frame.get("message"):
        why += f" ({frame['message']})"
    if code in ("bad_token", "unauthenticated"):
        why += ("; the gateway does not take the token the sign-in gave: do all gateways "
                "behind --url share TTANJIT_TOKEN_SECRET?")
    return why


def http_why(exc: BaseException) -> str:
    """An HTTP failure in words (``Connection refused``, ``timed out``):
    its message without the ``[Errno N]`` in front."""
    return re.sub(r"^\[Errno -?\d+\] ", "", str(exc)) or type(exc).__name__


# "p3: Refused('queue refused: bad_seats (…)')": a failure kept as its repr
_REPR = re.compile(r"(?P<cls>[A-Za-z_][\w.]*)\((?P<arg>'.*'|\".*\")?\)", re.S)


def plain(line: str) -> str:
    """A failure line ``LABEL: WHY`` with ``WHY`` as its message, not a
    Python repr (``p3: Refused('x')`` -> ``p3: x``; ``p1: TimeoutError()``
    -> ``p1: TimeoutError``)."""
    label, sep, why = line.partition(": ")
    if not sep:
        label, why = "", line
    m = _REPR.fullmatch(why)
    if m is None:
        return line
    msg = m["cls"]
    if m["arg"] is not None:
        try:
            arg = ast.literal_eval(m["arg"])
        except (ValueError, SyntaxError):
            return line
        if isinstance(arg, str) and arg:
            msg = arg
    return f"{label}: {msg}" if label else msg


def collapse(lines: list[str], total: int | None = None) -> list[str]:
    """Failure lines ``LABEL: WHY``, one line per distinct ``WHY`` naming the
    players it befell (the first three, and how many more); ``total``: how
    many failed in all when ``lines`` lists only the first ones."""
    groups: dict[str, list[str]] = {}
    for line in map(plain, lines):
        label, sep, why = line.partition(": ")
        if not sep:
            label, why = "", line
        groups.setdefault(why, []).append(label)
    out = []
    for why, labels in groups.items():
        named = [x for x in labels if x]
        who = ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")
        out.append(f"{who}: {why}" if who else why)
    if total is not None and total > len(lines):
        out.append(f"(the first {len(lines)} of {total} listed)")
    return out
