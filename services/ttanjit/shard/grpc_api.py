"""gRPC ``ttanjit.v1.ShardService`` (proto/ttanjit/v1/shard.proto) over the
:class:`~ttanjit.shard.service.Shard`, plus ``grpc.health.v1``:

- ``""`` and ``ttanjit.v1.ShardService``: ready — SERVING until the shard
  starts to drain (gRPC ``Drain``, ``ttanjit drain``, or SIGTERM), then
  NOT_SERVING for good (a drained shard takes no game until it restarts).
  The chart's readiness probe.
- ``ttanjit.v1.ShardService.Liveness``: SERVING until the process stops,
  draining or not. The chart's liveness probe: a shard that drains (or
  stays drained) must not be restarted by Kubernetes for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import grpc
import orjson
from grpc_health.v1 import health_pb2

from ttanjit.common.grpcutil import OWNER_MD, HealthServer, aio_server
from ttanjit.shard.game import summary_seats
from ttanjit.shard.service import CreateError, IdTaken, OwnedElsewhere, Shard
from ttanjit.v1 import shard_pb2, shard_pb2_grpc

log = logging.getLogger("ttanjit.shard.grpc")

SERVICE = "ttanjit.v1.ShardService"
LIVENESS = "ttanjit.v1.ShardService.Liveness"


class ShardServicer(shard_pb2_grpc.ShardServiceServicer):
    def __init__(self, shard: Shard, on_drained: Callable[[], None],
                 on_draining: Callable[[], Awaitable[None]] | None = None) -> None:
        self.shard = shard
        self.on_drained = on_drained
        self.on_draining = on_draining  # not ready any more (health)

    async def CreateGame(self, request: shard_pb2.CreateGameRequest,  # noqa: N802
                         context: grpc.aio.ServicerContext) -> shard_pb2.CreateGameResponse:
        if self.shard.draining:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "shard is draining")
        try:
            options = orjson.loads(request.options_json) if request.options_json else {}
        except orjson.JSONDecodeError:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "options_json is not JSON")
        seats = [{"kind": s.kind or "human", "level": s.level, "player_id": s.player_id,
                  "away": s.away} for s in request.seats]
        seed = request.seed if request.HasField("seed") else None
        try:
            gid = await self.shard.create_game(request.game, options, seats, seed,
                                               request.game_id)
        except CreateError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except IdTaken as exc:
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, str(exc))
        except OwnedElsewhere as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc),
                                trailing_metadata=((OWNER_MD, exc.owner),))
        except RuntimeError as exc:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        except Exception as exc:  # NATS/JetStream trouble: place the game elsewhere
            log.exception("CreateGame failed")
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"cannot create the game: {exc!r}")
        return shard_pb2.CreateGameResponse(game_id=gid, shard_id=self.shard.id)

    async def GetGame(self, request: shard_pb2.GetGameRequest,  # noqa: N802
                      context: grpc.aio.ServicerContext) -> shard_pb2.GameSummary:
        room = self.shard.rooms.get(request.game_id)
        if room is None:
            owner = await self.shard.owner_of(request.game_id)
            where = f"; owned by {owner}" if owner else ""
            await context.abort(grpc.StatusCode.NOT_FOUND,
                                f"game {request.game_id} is not on this shard{where}")
        assert room is not None
        h = room.hosted
        seats = [shard_pb2.SeatSpec(kind=d["kind"], level=d.get("level", ""),
                                    player_id=d.get("player_id", ""))
                 for d in summary_seats(h)]
        return shard_pb2.GameSummary(
            game_id=h.game_id, game=h.setup.game, shard_id=self.shard.id,
            finished=h.finished, t=room.now_t(asyncio.get_running_loop().time()),
            seats=seats, view_json=orjson.dumps(h.engine.view(None)).decode(),
            result_json=orjson.dumps(h.result_doc()).decode() if h.finished else "")

    async def Drain(self, request: shard_pb2.DrainRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> shard_pb2.DrainResponse:
        if self.on_draining is not None:
            await self.on_draining()
        out = await self.shard.drain(request.timeout_s or None)
        # its end in the log, as a stop signal's (the log said "draining",
        # never how it ended: operator audit)
        log.info("drained", extra={**out, "by": "Drain call"})
        if request.exit:
            self.on_drained()
        return shard_pb2.DrainResponse(**out)


async def serve(shard: Shard, port: int, host: str, on_drained: Callable[[], None]
                ) -> tuple[grpc.aio.Server, HealthServer, int]:
    server, bound = aio_server(port, host)
    health = HealthServer(server, [SERVICE])

    async def not_ready() -> None:
        await health.set(False)

    shard_pb2_grpc.add_ShardServiceServicer_to_server(  # type: ignore[no-untyped-call]
        ShardServicer(shard, on_drained, not_ready), server)
    await server.start()
    await health.set(True)
    await set_live(health, True)
    return server, health, bound


async def set_live(health: HealthServer, live: bool) -> None:
    """:data:`LIVENESS` (the readiness services are ``health.set``'s)."""
    await health.servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING if live
                              else health_pb2.HealthCheckResponse.NOT_SERVING)
