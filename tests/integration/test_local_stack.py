"""The stack ``ttanjit loadtest --local`` and ``bench capacity`` start
(``ttanjit.loadtest.localstack``) runs as deployed: each service connects
as its own NATS user (``common.natsauth``: the gateway's may publish no
record, the bot workers' only answer asks) and the shards sign their
records — its figures are the product's, not a laxer copy's (the chaos
drill's stack, ``ttanjit.chaos.stack``, likewise: ``test_chaos``)."""

from __future__ import annotations

from pathlib import Path

import nats
import pytest
from conftest import REFUSED
from nats.errors import Error as NatsError

from ttanjit.common import natsauth
from ttanjit.common.nats import RECORDS_STREAM, Subjects, server_options
from ttanjit.loadtest.localstack import RECORD_KEY, LocalStack
from ttanjit.loadtest.play import play
from ttanjit.loadtest.player import PlayConfig
from ttanjit.shard import records

pytestmark = pytest.mark.integration


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().partition("=")[::2] for item in raw if b"=" in item)


def _user(url: str) -> str:
    return str(server_options(url).get("user", ""))


async def test_the_local_stack_runs_as_deployed() -> None:
    with LocalStack() as st:
        assert st.nats is not None
        env = {p.name: _environ(p.pid) for p in st.procs}
        assert {name: _user(e["TTANJIT_NATS_URL"]) for name, e in env.items()} == {
            "shard-0": natsauth.SERVICES, "bots-0": natsauth.BOTS,
            "matchmaker": natsauth.SERVICES, "gateway-0": natsauth.GATEWAY}
        # the shards alone have the record key
        assert {name: e.get("TTANJIT_RECORD_KEY", "") for name, e in env.items()} == {
            "shard-0": RECORD_KEY, "bots-0": "", "matchmaker": "", "gateway-0": ""}
        with pytest.raises(NatsError, match="Authorization Violation"):  # nobody without a user
            await nats.connect(st.nats.address, max_reconnect_attempts=0,
                               connect_timeout=2, allow_reconnect=False)

        # two players, one room, one game, as loadtest --local plays it
        cfg = PlayConfig(game="onecard", seats=2, mode="room", think_ms=(100, 250), games=1)
        report = await play(st.urls()[0], 2, cfg, duration_s=90, progress=0)
        assert report["failures"] == [] and report["games_finished"] == 1, report
        refused = [ln for p in st.procs for ln in p.log().splitlines() if REFUSED in ln]
        assert refused == [], refused[:5]  # none was refused what it does

        nc = await nats.connect(st.nats.url)  # the services' user
        try:
            js = nc.jetstream()
            subjects = Subjects()
            info = await js.stream_info(RECORDS_STREAM, subjects_filter=subjects.record("*"))
            (subject,) = info.state.subjects or {}
            rec = await records.read(js, subject, keys=records.keys_of(RECORD_KEY))
            assert rec is not None and rec.signed and rec.skipped == 0
            # the whole game, each of its messages signed by the shard
            assert rec.entries and rec.last_seq == rec.stream_last
            # and a reader with another key finds none of it its shards'
            with pytest.raises(records.NotOurKey):
                await records.read(js, subject, keys=records.keys_of("another-key-0123456789"))
        finally:
            await nc.close()

