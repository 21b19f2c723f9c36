"""NATS users of a ttanjit deployment and what each may do (README
"Install", step 2; deploy/nats/values.yaml says the same for the NATS
chart).

- ``ttanjit`` — the shards and matchmakers (and the ``ttanjit`` tools):
  everything on the account, JetStream included; they make and converge
  the streams and buckets (``common.nats.ensure_jetstream``).
- ``ttanjit-gateway`` — the gateways, the processes the internet reaches:
  what a gateway does (players' sessions, sign-ins, 관전 counts, commands and
  the lobby's frames, reading the rest), and not what a shard or a
  matchmaker does. It may not publish a game's record or result, the owners,
  the games' directory, ratings, the lobby or 내 기록, nor speak for a shard
  (heartbeats, adoptions, a game's events or public part, asks to bots), nor
  hear what a shard is asked (commands, catch-ups, adoptions, heartbeats,
  the bots' asks: a gateway's answer would have been the shard's say); of
  the JetStream API it has the reads and unnamed consumers only (nats-py's
  ordered consumers and KV watches), none on the results, and no other
  consumer's name: no stream or bucket made, changed, purged or deleted, no
  durable or named consumer made or deleted, the ratings' durable neither
  changed nor read, paused or skipped. So a gateway's bug, or one taken
  over, cannot delete or empty what JetStream keeps, nor stop the ratings.
  Not the shards' watches: an unnamed create naming an existing consumer in
  its body changes it, and a name a gateway guesses would let it blind one
  (the shards read the bucket itself before they act on a watch). It is no
  wall: a gateway holds the token secret and acts for any player; it sends
  lobby frames and 다른 곳에서 접속 kicks to any player; it may empty its own
  buckets (sessions, identity, watchers: a rollup), and make ephemeral
  consumers up to a stream's limit. And NATS checks what a user publishes,
  not where JetStream or another service sends for it — a push consumer's
  deliveries, an answer to a reply subject it names — which reach any
  subject's subscribers (checked on nats-server 2.15;
  nats-io/nats-server issue 8274): the receivers of a shard's or
  matchmaker's say drop JetStream's deliveries and status messages
  (``common.nats.relayed``). A record stores such answers (not a push
  consumer's deliveries): shards with a record key skip in a record what
  they did not sign (``shard.records``). Keeping a gateway out of the
  shards' subjects altogether takes a NATS account of its own.
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
import secrets
from typing import Any
from urllib.parse import quote

from ttanjit.common import nats as n

SERVICES = "ttanjit"
GATEWAY = "ttanjit-gateway"
BOTS = "ttanjit-bots"
BOTS_QUEUE = "bots"  # the bot workers' queue group
# who each service (``python -m ttanjit.<service>``) connects as; the others
# (shard, matchmaker) as SERVICES
SERVICE_USERS = {"gateway": GATEWAY, "bots": BOTS}


def bots_permissions(prefix: str) -> dict[str, Any]:
    """The bot workers' permissions: subscribe to the asks in their queue
    group only; publish only an answer to an ask's reply subject (one
    each)."""
    return {"subscribe": {"allow": [f"{prefix}.bots.decide {BOTS_QUEUE}"]},
            "allow_responses": {"max": 1}}


def gateway_permissions(prefix: str) -> dict[str, Any]:
    """The gateways' permissions: no publish of the module's list (NATS
    checks a JetStream API call as a publish to its subject; a KV write is a
    publish to ``$KV.<bucket>.<key>``) — of the JetStream API, only the
    reads, and consumers that are neither named nor durable (nats-py's
    ordered consumers and KV watches: ``$JS.API.CONSUMER.CREATE.<stream>``)
    — none at all on the results — and no subscription to what a shard is
    asked (commands, catch-ups, adoptions, heartbeats, the bots' asks: one
    answered by a gateway would have been its say)."""
    p = prefix
    return {"publish": {"deny": [
        f"{p}.record.*", f"{p}.result.*",  # a game's record and result
        f"{p}.shards.heartbeat", f"{p}.shard.*.adopt", f"{p}.bots.decide",  # a shard's say
        f"{p}.player.*.events", f"{p}.gw.*.games", f"{p}.game.*.public",
        *(f"$KV.{b}.>" for b in (n.OWNERS_BUCKET, n.GAMES_BUCKET, n.RATINGS_BUCKET,
                                 n.LOBBY_BUCKET, n.HISTORY_BUCKET)),
        *(f"$JS.API.STREAM.{op}.>" for op in (
            "CREATE", "UPDATE", "DELETE", "PURGE", "MSG.DELETE", "SNAPSHOT", "RESTORE",
            "PEER", "LEADER", "CANCEL_MOVE")),
        *(f"$JS.API.CONSUMER.{op}.>" for op in (
            "DELETE", "DURABLE", "LEADER", "PEER", "MSG", "PAUSE", "RESET", "UNPIN",
            "NAMES", "LIST")),  # (another's consumer is not even named to it; INFO
        # stays: nats-py's KV watch asks after its own consumer)
        "$JS.API.CONSUMER.CREATE.*.>",  # (named, durable or not: only the unnamed kind)
        # none on the results: an unnamed create naming the ratings' durable
        # in its body changed it (second review)
        f"$JS.API.CONSUMER.CREATE.{n.RESULTS_STREAM}",
        f"$JS.API.CONSUMER.INFO.{n.RESULTS_STREAM}.>",
        "$JS.API.META.>", "$JS.API.ACCOUNT.>", "$JS.API.SERVER.>",
        "$JS.ACK.>",  # (another's consumer's messages: its own consumers ack nothing)
    ]}, "subscribe": {"deny": [
        f"{p}.game.*.cmd", f"{p}.game.*.sync", f"{p}.shard.*.adopt", f"{p}.shards.heartbeat",
        f"{p}.bots.decide",
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


def made(prefix: str) -> list[dict[str, Any]]:
    """The three users (:func:`users`) with passwords made now, SERVICES
    first (a server's own address is the first user's): a local stack's or
    a benchmark's server, as a deployment's."""
    return users({u: secrets.token_hex(16) for u in (SERVICES, GATEWAY, BOTS)}, prefix)


def service_url(url: str, made_users: list[dict[str, Any]], service: str) -> str:
    """``url`` as the user ``service`` connects as (:data:`SERVICE_USERS`),
    with its password among ``made_users``."""
    user = SERVICE_USERS.get(service, SERVICES)
    (entry,) = [u for u in made_users if u["user"] == user]
    return as_user(url, user, entry["password"])
