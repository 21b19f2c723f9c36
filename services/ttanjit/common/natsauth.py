"""NATS users of a ttanjit deployment and what each may do (README
"Install", step 2; deploy/nats/values.yaml says the same for the NATS
chart).

- ``ttanjit`` — the gateways, shards and matchmakers (and the ``ttanjit``
  tools): everything on the account, JetStream included.
- ``ttanjit-bots`` — the bot workers: they take ``<prefix>.bots.decide`` in
  the queue group ``bots`` and answer each ask on its reply subject, and do
  nothing else. An ask carries the view of one seat the shard plays
  (docs/protocol.md 3): a bot's, or an away player's on autopilot (a bot
  plays for them meanwhile), and numbers keyed by a secret of the game, not
  its deal. So a bot worker — or whoever holds its password — sees those
  seats only: no other player's hand, no command, no record, no identity.

The integration tests run every service against a nats-server with these
users (``tests/integration/conftest.py``).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

SERVICES = "ttanjit"
BOTS = "ttanjit-bots"
BOTS_QUEUE = "bots"  # the bot workers' queue group


def bots_permissions(prefix: str) -> dict[str, Any]:
    """The bot workers' permissions: subscribe to the asks in their queue
    group only; publish only an answer to an ask's reply subject (one
    each)."""
    return {"subscribe": {"allow": [f"{prefix}.bots.decide {BOTS_QUEUE}"]},
            "allow_responses": {"max": 1}}


def users(passwords: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    """nats-server's ``authorization.users`` for ``passwords`` by user
    (:data:`SERVICES`, :data:`BOTS`)."""
    out: list[dict[str, Any]] = []
    for user, password in passwords.items():
        entry: dict[str, Any] = {"user": user, "password": password}
        if user == BOTS:
            entry["permissions"] = bots_permissions(prefix)
        elif user != SERVICES:
            raise ValueError(f"no such ttanjit NATS user: {user}")
        out.append(entry)
    return out


def server_config(users: list[dict[str, Any]]) -> str:
    """A nats-server config (``-c``) that makes ``users`` (:func:`users`)."""
    return json.dumps({"authorization": {"users": users}})


def userinfo(user: str, password: str) -> str:
    """``user:password@`` for an address, percent-encoded."""
    return f"{quote(user, safe='')}:{quote(password, safe='')}@"


def as_user(url: str, user: str, password: str) -> str:
    """``url`` (a comma-separated list of NATS addresses) with ``user`` and
    ``password`` in each address instead of any it had."""
    creds = userinfo(user, password)
    out = []
    for one in url.split(","):
        scheme, sep, rest = one.strip().partition("://")
        if not sep:
            scheme, rest = "nats", scheme
        out.append(f"{scheme}://{creds}{rest.rpartition('@')[2]}")
    return ",".join(out)
