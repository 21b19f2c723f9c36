"""한 판 더 once it started (docs/websocket.md 3.1): a `rematch` (or
`rematch_decline`) for the old game — asked again, after a reload, late, after
the new game is over, or after a matchmaker failover — answers
`state: "started"` with the same `new_game_id`, opens no new offer and never
starts a second game. Real processes: nats-server, a shard, the bot worker,
two matchmaker replicas, two gateways.

Found by fuzzing: the started offer was deleted, so the next `rematch` for
the old game opened a fresh one (`state: "open"`, a new `until_ms`) — and
once the new game was over, both asking again started a second new game from
the old table."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from stack import Stack, stack
from test_matchmaker_replicas import leader
from test_rematch_emotes import play_to_the_end, rematch_frame, room_of_two
from wsclient import WSClient

pytestmark = pytest.mark.integration

WINDOW_MS = 4000  # TTANJIT_REMATCH_MS here: a fresh offer would start within it


@pytest.fixture(scope="module")
def st(nats_url: str) -> Iterator[Stack]:
    with stack(nats_url, shards=1, gateways=2, bots=True, matchmakers=2,
               rematch_ms=WINDOW_MS) as s:
        yield s


async def ask(c: WSClient, gid: str, kind: str = "rematch") -> dict[str, Any]:
    """Send `rematch` (or `rematch_decline`) for ``gid``; the answer: the
    next `rematch` frame of that game, or an `error`."""
    await c.send({"type": kind, "game_id": gid})
    return await c.wait_for(lambda f: f.get("type") == "error" or (
        f.get("type") == "rematch" and f["game_id"] == gid), 20)


def started_as(frame: dict[str, Any], gid: str, new: str) -> bool:
    return frame.get("type") == "rematch" and frame["game_id"] == gid \
        and frame["rematch"]["state"] == "started" and frame["rematch"].get("new_game_id") == new


async def rematch_started(st: Stack, names: tuple[str, str]
                          ) -> tuple[WSClient, WSClient, str, str]:
    """Two players finish a game and both press 한 판 더: the new game is on."""
    a, b, gid = await room_of_two(st, names)
    await play_to_the_end([a, b], gid)
    await a.send({"type": "rematch", "game_id": gid})
    await b.wait_for(rematch_frame(gid, "open"))
    await b.send({"type": "rematch", "game_id": gid})
    new = (await a.wait_for(rematch_frame(gid, "started"), 20))["rematch"]["new_game_id"]
    assert new and new != gid
    assert (await b.wait_for(rematch_frame(gid, "started"), 20))["rematch"]["new_game_id"] == new
    for c in (a, b):
        m = await c.wait_for(lambda f: f.get("type") == "matched", 20)
        assert m["game_id"] == new and m["kind"] == "rematch"
    return a, b, gid, new


async def no_other_game(clients: list[WSClient], known: set[str], wait_s: float) -> None:
    """Nobody is matched into a game other than ``known`` for ``wait_s``."""
    for c in clients:
        with pytest.raises(TimeoutError):
            await c.wait_for(lambda f: f.get("type") == "matched"
                             and f["game_id"] not in known, wait_s / len(clients))
    for c in clients:
        assert not [f for f in c.frames if f.get("type") == "matched"
                    and f["game_id"] not in known]


async def test_rematch_for_a_started_rematch_answers_started(st: Stack) -> None:
    a, b, gid, new = await rematch_started(st, ("다시해", "또해"))

    # asked again on the same connection: the state, not a fresh offer
    again = await ask(b, gid)
    assert started_as(again, gid, new), again
    # b reloads the page on the other gateway: the web client asks again
    await b.close()
    b2 = WSClient(st.http(0), b.ident)
    await b2.connect()
    assert (await b2.hello())["game_id"] == new
    again = await ask(b2, gid)
    assert started_as(again, gid, new), again
    # a late 로비로 for the old table changes nothing either
    again = await ask(a, gid, "rematch_decline")
    assert started_as(again, gid, new), again
    # someone who did not sit at the table learns nothing of it
    c = await WSClient.signed_in(st.http(1), "구경꾼")
    err = await ask(c, gid)
    assert err["type"] == "error" and err["code"] == "no_rematch", err
    await c.close()

    # the new game ends (the matchmaker has its result: a's rating changed,
    # nobody is seated in it any more) and both ask for the OLD table again,
    # as a tab back on the old result screen does: still "started", the
    # same game, and no second game starts from the old table
    await play_to_the_end([a, b2], new)

    def rated(f: dict[str, Any]) -> bool:
        return f.get("type") == "ratings" and (f.get("change") or {}).get("game_id") == new
    if not any(rated(f) for f in a.frames):  # maybe seen while playing
        await a.wait_for(rated, 20)
    for p in (a, b2):
        again = await ask(p, gid)
        assert started_as(again, gid, new), again
    await no_other_game([a, b2], {gid, new}, WINDOW_MS / 1000 + 2)
    # the new game's own 한 판 더 is untouched by all this
    await a.send({"type": "rematch", "game_id": new})
    offer = await b2.wait_for(rematch_frame(new, "open"))
    assert len(offer["rematch"]["agreed"]) == 1
    await b2.send({"type": "rematch_decline", "game_id": new})
    third = await a.wait_for(lambda f: f.get("type") == "matched" and f["game_id"] != new, 20)
    assert third["game_id"] != gid
    await a.action(third["game_id"], {"type": "leave"})
    for p in (a, b2):
        await p.close()


async def test_started_rematch_survives_a_failover(st: Stack) -> None:
    """The started offer lives in the lobby's parts as the open one does
    (docs/protocol.md 4.1): the replica that takes over after a kill -9 of
    the leader still answers "started" with the same game."""
    a, b, gid, new = await rematch_started(st, ("넘겨요", "받아요"))
    leader(st).kill()
    again = await ask(b, gid)
    assert started_as(again, gid, new), again
    again = await ask(a, gid, "rematch_decline")
    assert started_as(again, gid, new), again
    await no_other_game([a, b], {gid, new}, WINDOW_MS / 1000 + 2)
    for p in (a, b):
        await p.action(new, {"type": "leave"})
        await p.close()
