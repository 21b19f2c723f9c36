"""The streams and buckets the shards and matchmakers make at start and the
gateways find (docs/protocol.md 5; ``common.nats.ensure_jetstream``,
``find_jetstream``), on a NATS server of the test's own."""

from __future__ import annotations

import nats
import pytest

from ttanjit.common.nats import (
    RECORDS_STREAM,
    RESULTS_STREAM,
    NatsTaken,
    Subjects,
    ensure_jetstream,
    find_jetstream,
)
from ttanjit.common.natsserver import NatsServer

pytestmark = pytest.mark.integration


async def test_a_second_release_on_the_same_nats_account_takes_nothing_from_the_first() -> None:
    """Operator audit: the chart said ``nats.prefix`` was how two releases
    share one NATS, but the stream and bucket names do not change with it,
    and the second release's start moved the first one's record stream onto
    its own subjects (``update_stream``): every append of the first had no
    stream since, no move accepted. The second now refuses to start and
    says why; the first keeps its streams. A release started again (its own
    prefix) converges as before."""
    with NatsServer() as server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        try:
            await ensure_jetstream(js, Subjects("ttanjit.v1"))
            with pytest.raises(NatsTaken, match="NATS account of its own"):
                await ensure_jetstream(js, Subjects("staging.v1"))
            with pytest.raises(NatsTaken, match="NATS account of its own"):  # (its gateways)
                await find_jetstream(js, Subjects("staging.v1"))
            assert (await js.stream_info(RECORDS_STREAM)).config.subjects == ["ttanjit.v1.record.*"]
            assert (await js.stream_info(RESULTS_STREAM)).config.subjects == ["ttanjit.v1.result.*"]
            await js.publish("ttanjit.v1.record.g1", b"{}")  # the first release's appends go on
            await ensure_jetstream(js, Subjects("ttanjit.v1"), 1)
            assert (await js.stream_info(RECORDS_STREAM)).state.messages == 1
        finally:
            await nc.close()
