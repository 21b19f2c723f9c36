"""``ttanjit record GAME_ID``: a game's write-ahead record from JetStream as a
``ttanjit.record/1`` document, ready for ``ttanjit replay`` (DESIGN.md 3.1).

The stream's extra fields ride along: ``game_id``, ``players``, and per input
``player``/``cmd``/``by``/``ms`` (replay ignores them)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import nats
from nats.errors import NoServersError

from ttanjit.cli import writable
from ttanjit.common.config import masked_urls
from ttanjit.common.nats import Subjects, server_options
from ttanjit.shard import records
from ttanjit.shard.game import record_from_messages


async def fetch(url: str, game_id: str, prefix: str = "ttanjit.v1") -> dict[str, Any] | None:
    async def quiet(_exc: Exception) -> None:  # the failure is main()'s one line
        return None

    nc = await nats.connect(**server_options(url), connect_timeout=3, max_reconnect_attempts=1,
                            allow_reconnect=False, error_cb=quiet)
    try:
        rec = await records.read(nc.jetstream(), Subjects(prefix).record(game_id),
                                 keys=records.env_keys())
    finally:
        await nc.close()
    if rec is None:
        return None
    doc = record_from_messages(rec.header, rec.entries).to_json()
    doc["game_id"] = game_id
    doc["players"] = rec.header.get("players", {})
    doc["inputs"] = [{k: v for k, v in e.items() if v is not None} for e in rec.entries]
    return doc


def main(url: str, game_id: str, prefix: str, out: str | None) -> int:
    why = writable(out) if out else None
    if why:
        print(f"ttanjit record: cannot write {out}: {why}", file=sys.stderr)
        return 2
    shown = masked_urls(url)  # (a password in it stays off the terminal's history)
    try:
        doc = asyncio.run(fetch(url, game_id, prefix))
    except Exception as exc:  # noqa: BLE001 - a CLI reports and exits
        why = "no NATS server there" if isinstance(exc, (OSError, NoServersError)) else repr(exc)
        if "Authorization Violation" in str(exc):  # (make run's asks for a user too)
            why = "that NATS asks for a user and password (`make run` prints its address with them)"
        print(f"ttanjit record: cannot read {shown}: {why} (--nats, or TTANJIT_NATS_URL)",
              file=sys.stderr)
        return 1
    if doc is None:
        # which NATS it asked (the default reached another one than `make
        # run`'s, and "no record" read as a game that is not there: docs audit)
        print(f"ttanjit record: no record for game {game_id} at {shown} (--nats, or "
              "TTANJIT_NATS_URL: `make run` prints its NATS address)", file=sys.stderr)
        return 2
    text = json.dumps(doc, ensure_ascii=False)
    if out:
        try:
            with open(out, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        except OSError as exc:
            print(f"ttanjit record: cannot write {out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        print(text)
    return 0
