"""gRPC server helpers: an aio server with standard health checking
(``grpc.health.v1.Health``) so every gRPC server answers probes."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc


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
