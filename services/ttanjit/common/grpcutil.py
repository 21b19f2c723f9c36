"""gRPC server helpers: an aio server with standard health checking
(``grpc.health.v1.Health``) so every gRPC server answers probes."""

from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

# CreateGame's FAILED_PRECONDITION (trailing metadata): the shard that owns
# the game id asked for (docs/protocol.md 4)
OWNER_MD = "ttanjit-owner"


class HealthServer:
    """The health service; ``set(serving)`` flips both the overall status
    ("") and the named services."""

    def __init__(self, server: grpc.aio.Server, services: list[str]) -> None:
        self.servicer = health.aio.HealthServicer()
        self.services = ["", *services]
        health_pb2_grpc.add_HealthServicer_to_server(self.servicer, server)

    async def set(self, serving: bool) -> None:
        status = (health_pb2.HealthCheckResponse.SERVING if serving
                  else health_pb2.HealthCheckResponse.NOT_SERVING)
        for name in self.services:
            await self.servicer.set(name, status)


def aio_server(port: int, host: str = "0.0.0.0") -> tuple[grpc.aio.Server, int]:
    """A grpc.aio server bound to host:port (0 = any free port); returns the port."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot bind gRPC to {host}:{port}")
    return server, bound


# Calls to a replicated service (the matchmaker, docs/protocol.md 4.1): spread
# over every address the target resolves to (``dns:///svc:7200`` of a headless
# Service, or ``ipv4:127.0.0.1:7200,127.0.0.1:7201``) by round robin. Retries
# are :class:`Retrying`'s alone: a replica that is gone (UNAVAILABLE) or
# frozen (no answer in time: keepalive pings did not find a SIGSTOPped one,
# measured) costs one attempt, not an error.
_REPLICATED_CONFIG = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})


def replicated_channel(target: str) -> grpc.aio.Channel:
    """A client channel to every replica behind ``target`` (round robin); use
    its stubs through :class:`Retrying`."""
    return grpc.aio.insecure_channel(target, options=[
        ("grpc.service_config", _REPLICATED_CONFIG),
        ("grpc.initial_reconnect_backoff_ms", 200),
        ("grpc.max_reconnect_backoff_ms", 2000),
        ("grpc.dns_min_time_between_resolutions_ms", 1000),
    ])


# Every attempt of one Retrying call carries the same request id: the
# matchmaker carries a call out once per id and answers its attempts alike
# (docs/protocol.md 4.1)
REQUEST_MD = "ttanjit-request"


class Retrying:
    """A stub whose calls try another replica when one does not answer in
    ``attempt_s`` (a frozen or partitioned replica holds a call without
    failing it, or a slow one has not finished) or is gone, until
    ``timeout`` runs out. Every attempt carries the call's request id
    (:data:`REQUEST_MD`), so a retried call is carried out once: the
    leader answers an attempt with the outcome of the first one."""

    def __init__(self, stub: object, attempt_s: float = 2.5) -> None:
        self._stub = stub
        self._attempt_s = attempt_s

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._stub, name)

        async def call(request: Any, timeout: float = 10.0, **kw: Any) -> Any:
            loop = asyncio.get_running_loop()
            end = loop.time() + timeout
            metadata = (*kw.pop("metadata", ()), (REQUEST_MD, secrets.token_hex(8)))
            while True:
                left = end - loop.time()
                try:
                    return await method(request, timeout=max(0.05, min(self._attempt_s, left)),
                                        metadata=metadata, **kw)
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (grpc.StatusCode.UNAVAILABLE,
                                          grpc.StatusCode.DEADLINE_EXCEEDED) \
                            or end - loop.time() <= 0.05:
                        raise
                await asyncio.sleep(0.05)

        return call
