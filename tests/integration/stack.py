"""A whole ttanjit stack for the gateway/matchmaker integration tests, module
scoped (starting processes costs seconds): real nats-server (the session's),
shards, a bot worker, the matchmaker and gateways as subprocesses."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import Proc, Services

SECRET = "test-secret"


class Stack:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.shards: list[Proc] = []
        self.gateways: list[Proc] = []
        self.matchmaker: Proc | None = None
        self.matchmakers: list[Proc] = []  # replicas (docs/protocol.md 4.1)
        self.bots: Proc | None = None

    def start(self, shards: int = 1, gateways: int = 1, bots: bool = True,
              bot_wait_ms: int = 300, absence_ms: int = 0, matchmakers: int = 1,
              rematch_ms: int = 20_000, room_away_ms: int = 3000) -> Stack:
        s = self.services
        for i in range(shards):
            env = {"TTANJIT_ABSENCE_MS": str(absence_ms)} if absence_ms else {}
            self.shards.append(s.start("shard", name=f"shard-{i}", wait=False, env=env))
        if bots:
            self.bots = s.start("bots", name="bots", wait=False)
        for i in range(matchmakers):
            self.matchmakers.append(s.start("matchmaker", name=f"matchmaker-{i}", env={
                "TTANJIT_BOT_WAIT_MS": str(bot_wait_ms), "TTANJIT_TEST_OPTIONS": "1",
                "TTANJIT_ROOM_AWAY_MS": str(room_away_ms),
                "TTANJIT_REMATCH_MS": str(rematch_ms)}))
        self.matchmaker = self.matchmakers[0]
        for _ in range(gateways):
            self.add_gateway()
        for p in self.shards:
            p.wait_log('"msg":"ready"')
        if self.bots is not None:
            self.bots.wait_log("ready")
        return self

    def add_gateway(self, **env: str) -> Proc:
        assert self.matchmaker is not None
        g = self.services.start("gateway", name=f"gateway-{len(self.gateways)}", env={
            "TTANJIT_MATCHMAKER_ADDR": self.matchmaker_addr(),
            "TTANJIT_TOKEN_SECRET": SECRET, **env})
        self.gateways.append(g)
        return g

    def matchmaker_addr(self) -> str:
        """Every matchmaker replica, for the gateways' channels (one each)."""
        return "ipv4:" + ",".join(f"127.0.0.1:{p.ports['grpc']}" for p in self.matchmakers)

    def http(self, i: int = 0) -> str:
        return f"http://127.0.0.1:{self.gateways[i].ports['http']}"

    def metrics(self, i: int = 0) -> str:
        """The gateway's metrics port (``/metrics`` is not on its HTTP port)."""
        return f"http://127.0.0.1:{self.gateways[i].ports['metrics']}"


@contextmanager
def stack(nats_url: str, **kw: int | bool) -> Iterator[Stack]:
    with tempfile.TemporaryDirectory(prefix="ttanjit-stack-") as tmp:
        services = Services(nats_url, Path(tmp))
        st = Stack(services)
        try:
            yield st.start(**kw)  # type: ignore[arg-type]
        except BaseException:
            for p in services.procs:
                print(f"\n===== {p.name} log =====\n{p.log()[-5000:]}")
            raise
        finally:
            for p in st.gateways:  # gateways first: their sessions' goodbyes reach the shards
                p.stop()
            for p in st.shards:  # no drain/handover wait: the test is over
                p.kill()
            services.stop_all()
