"""NATS users of a ttanjit deployment and what each may do (README
"Install", step 2; deploy/nats/values.yaml says the same for the NATS
chart).

- ``ttanjit`` — the shards and matchmakers (and the ``ttanjit`` tools):
  everything on the account, JetStream included; they make and converge
  the streams and buckets (``common.nats.ensure_jetstream``).
- ``ttanjit-gateway`` — the gateways, the processes the internet reaches:
  what a gateway does (players' sessions, sign-ins, 관전 counts, commands
  and the lobby's frames, reading the rest), and not what a shard or a
  matchmaker does. It may not write a game's record or result, the owners,
  the games' directory, ratings, the lobby or 내 기록, speak for a shard
  (heartbeats, adoptions, a game's events or public part, asks to bots),
  or make, change, purge or delete a stream, a bucket or a durable
  consumer. So a gateway taken over can still act for the players who
  sign in through it, but not rewrite a finished game, a rating or a
  shard's say, nor delete what JetStream keeps (security review).
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

from ttanjit.common import nats as n

SERVICES = "ttanjit"
GATEWAY = "ttanjit-gateway"
BOTS = "ttanjit-bots"
BOTS_QUEUE = "bots"  # the bot workers' queue group


def bots_permissions(prefix: str) -> dict[str, Any]:
    """The bot workers' permissions: subscribe to the asks in their queue
    group only; publish only an answer to an ask's reply subject (one
    each)."""
    return {"subscribe": {"allow": [f"{prefix}.bots.decide {BOTS_QUEUE}"]},
            "allow_responses": {"max": 1}}


def gateway_permissions(prefix: str) -> dict[str, Any]:
    """The gateways' permissions: everything but the publishes of the
    module's list (NATS checks a JetStream API call as a publish to its
    subject; a KV write is a publish to ``$KV.<bucket>.<key>``)."""
    p = prefix
    return {"publish": {"deny": [
        f"{p}.record.*", f"{p}.result.*",  # a game's record and result
        f"{p}.shards.heartbeat", f"{p}.shard.*.adopt", f"{p}.bots.decide",  # a shard's say
        f"{p}.player.*.events", f"{p}.gw.*.games", f"{p}.game.*.public",
        *(f"$KV.{b}.>" for b in (n.OWNERS_BUCKET, n.GAMES_BUCKET, n.RATINGS_BUCKET,
                                 n.LOBBY_BUCKET, n.HISTORY_BUCKET)),
        *(f"$JS.API.STREAM.{op}.>" for op in (
            "CREATE", "UPDATE", "DELETE", "PURGE", "MSG.DELETE", "SNAPSHOT", "RESTORE",
            "PEER", "LEADER")),
        "$JS.API.CONSUMER.DELETE.>", "$JS.API.CONSUMER.DURABLE.>",
        "$JS.API.CONSUMER.LEADER.>",
        f"$JS.API.CONSUMER.CREATE.{n.RESULTS_STREAM}", f"$JS.API.CONSUMER.CREATE.{n.RESULTS_STREAM}.>",
        "$JS.API.META.>", "$JS.API.ACCOUNT.>", "$JS.API.SERVER.>",
    ]}}


def users(passwords: dict[str, str], prefix: str) -> list[dict[str, Any]]:
    """nats-server's ``authorization.users`` for ``passwords`` by user
    (:data:`SERVICES`, :data:`GATEWAY`, :data:`BOTS`)."""
    out: list[dict[str, Any]] = []
    for user, password in passwords.items():
        entry: dict[str, Any] = {"user": user, "password": password}
        if user == BOTS:
            entry["permissions"] = bots_permissions(prefix)
        elif user == GATEWAY:
            entry["permissions"] = gateway_permissions(prefix)
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
