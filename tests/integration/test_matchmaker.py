"""The matchmaker process over real gRPC and a real NATS/JetStream: health,
placement on the least-loaded live shard with retry elsewhere when a shard
is dead, lobby notifications on NATS, ratings from the results stream
persisted in JetStream KV."""

from __future__ import annotations

import asyncio
import secrets
import urllib.request

import grpc
import orjson
import pytest
from conftest import Services
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ttanjit.common.natsserver import free_port
from ttanjit.v1 import matchmaker_pb2, matchmaker_pb2_grpc

pytestmark = pytest.mark.integration


def pid() -> str:
    return "p_" + secrets.token_hex(8)


async def test_matchmaker_places_retries_and_rates(services: Services, nc: object) -> None:
    shard = services.start("shard", name="shard-real")
    mm = services.start("matchmaker", env={"TTANJIT_BOT_WAIT_MS": "200"})
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{mm.ports['grpc']}")
    stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    rep = await health.Check(health_pb2.HealthCheckRequest(service="ttanjit.v1.Matchmaker"))
    assert rep.status == health_pb2.HealthCheckResponse.SERVING

    # a shard that died after its last heartbeat, advertising no load at all
    ghost = {"shard": "aaa-ghost", "grpc": f"127.0.0.1:{free_port()}", "games": 0,
             "players": 0, "draining": False, "capacity": 2000, "ts": 0}
    draining = dict(ghost, shard="aab-draining", grpc=f"127.0.0.1:{shard.ports['grpc']}",
                    draining=True)
    beats = await nc.subscribe("ttanjit.v1.shards.heartbeat")  # type: ignore[attr-defined]
    while orjson.loads((await beats.next_msg(timeout=10)).data)["shard"] != "shard-real":
        pass  # the matchmaker has seen the real shard too
    await beats.unsubscribe()
    for hb in (ghost, draining):
        await nc.publish("ttanjit.v1.shards.heartbeat", orjson.dumps(hb))  # type: ignore[attr-defined]
    await nc.flush()  # type: ignore[attr-defined]
    await asyncio.sleep(0.3)

    player = pid()
    lobby = await nc.subscribe(f"ttanjit.v1.player.{player}.lobby")  # type: ignore[attr-defined]
    r = await stub.Enqueue(matchmaker_pb2.EnqueueRequest(
        player=matchmaker_pb2.PlayerRef(player=player, nickname="혼자"), game="onecard",
        seats=3))
    assert r.ticket and not r.error_code
    msg = await lobby.next_msg(timeout=10)
    matched = orjson.loads(msg.data)
    assert matched["type"] == "matched" and matched["kind"] == "quick"
    assert [p["kind"] for p in matched["players"]] == ["human", "bot", "bot"]
    assert matched["options"] == {"turn_ms": 30000}

    metrics = urllib.request.urlopen(
        f"http://127.0.0.1:{mm.ports['metrics']}/metrics", timeout=5).read().decode()
    # the ghost (a failed CreateGame), then the real one; the draining one is not tried
    assert 'ttanjit_mm_placement_failures_total{reason="error"} 1.0' in metrics
    assert 'ttanjit_mm_placement_failures_total{reason="draining"} 0.0' in metrics
    assert 'ttanjit_mm_bot_backfills_total{game="onecard"} 1.0' in metrics
    assert 'ttanjit_mm_matches_total{game="onecard",kind="quick"} 1.0' in metrics
    for name in ("ttanjit_mm_tickets_waiting", "ttanjit_mm_match_wait_seconds",
                 "ttanjit_mm_rooms_open"):
        assert name in metrics

    # ratings from the results stream, persisted in KV
    winner, loser = pid(), pid()
    js = nc.jetstream()  # type: ignore[attr-defined]
    await js.publish("ttanjit.v1.result.penalty_rows", orjson.dumps({
        "game_id": "abcdefghijkl", "game": "penalty_rows", "players": {winner: 0, loser: 1},
        "seats": [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "level": "easy"}],
        "winners": [0], "scores": [3, 20, 9], "substituted": [False, False, False],
        "length_ms": 1000, "ended_by": "rounds"}))
    kv = await js.key_value("ttanjit_ratings")
    for _ in range(100):
        try:
            entry = await kv.get(f"penalty_rows.{winner}")
            break
        except Exception:
            await asyncio.sleep(0.1)
    stored = orjson.loads(entry.value)
    assert stored["games"] == 1 and stored["mu"] > 25
    # the loser's rating is written after the winner's (a loaded machine's
    # GetPlayer came between the two once): asked until it is there
    for _ in range(100):
        state = await stub.GetPlayer(matchmaker_pb2.PlayerRequest(player=loser))
        pr = next(r for r in state.ratings if r.game == "penalty_rows")
        if pr.games:
            break
        await asyncio.sleep(0.1)
    assert pr.games == 1 and pr.mu < 25

    room = await stub.JoinRoom(matchmaker_pb2.JoinRoomRequest(
        player=matchmaker_pb2.PlayerRef(player=pid(), nickname="길손"), code="ABCDEF"))
    assert room.error_code == "room_not_found"
    await channel.close()


async def test_a_queue_asked_again_is_the_same_and_another_is_refused(
        services: Services) -> None:
    """A player's quick match asked for again (another tab shown the queue)
    is the same ticket; another queue meanwhile is refused. On a
    matchmaker whose bots never fill in: nothing timed between the asks
    (bots filling after 200 ms came between them on a loaded machine)."""
    mm = services.start("matchmaker", env={"TTANJIT_BOT_WAIT_MS": "600000"})
    async with grpc.aio.insecure_channel(f"127.0.0.1:{mm.ports['grpc']}") as channel:
        stub = matchmaker_pb2_grpc.MatchmakerStub(channel)
        me = matchmaker_pb2.PlayerRef(player=pid(), nickname="혼자")
        r = await stub.Enqueue(matchmaker_pb2.EnqueueRequest(player=me, game="onecard", seats=3))
        assert r.ticket and not r.error_code
        again = await stub.Enqueue(matchmaker_pb2.EnqueueRequest(
            player=me, game="onecard", seats=3,
            bot_level="hard"))  # (a tab shown another tab's queue knows no level)
        assert (again.ticket, again.error_code) == (r.ticket, "")  # the same queue: as it is
        other = await stub.Enqueue(matchmaker_pb2.EnqueueRequest(player=me, game="onecard",
                                                                 seats=4))
        assert other.error_code == "already_queued" and other.error_message
        gone = await stub.Cancel(matchmaker_pb2.CancelRequest(player=me.player))
        assert gone.game == "onecard" and not gone.error_code


async def test_rematch_waits_for_a_game_that_is_finishing(nc: object) -> None:
    """A game's players see it end (its last update) a moment before its
    shard writes ``finished`` to the directory (Room.finalize); a 한 판 더
    pressed at once reads the entry until it says so (seen in CI: the offer
    was refused with game_not_finished and never reached the other player),
    a live game is still told apart after the wait, and a game with no entry
    at all is refused at once."""
    from nats.js.errors import KeyNotFoundError

    from ttanjit.matchmaker.service import finished_entry

    js = nc.jetstream()  # type: ignore[attr-defined]
    bucket = f"finishing_{secrets.token_hex(4)}"
    kv = await js.create_key_value(bucket=bucket)
    await kv.put("g1", orjson.dumps({"state": "live"}))

    async def finish_soon() -> None:
        await asyncio.sleep(0.3)
        await kv.put("g1", orjson.dumps({"state": "finished", "result": {"winners": [0]}}))

    loop = asyncio.get_running_loop()
    t0 = loop.time()
    task = asyncio.create_task(finish_soon())
    entry = await finished_entry(kv, "g1", 5.0)
    await task
    assert entry["state"] == "finished" and entry["result"] == {"winners": [0]}
    assert 0.25 <= loop.time() - t0 < 2.0

    await kv.put("g2", orjson.dumps({"state": "live"}))
    t0 = loop.time()
    assert (await finished_entry(kv, "g2", 0.4))["state"] == "live"
    assert loop.time() - t0 >= 0.4

    t0 = loop.time()
    with pytest.raises(KeyNotFoundError):
        await finished_entry(kv, "no-such-game", 5.0)
    assert loop.time() - t0 < 1.0
    await js.delete_key_value(bucket)
