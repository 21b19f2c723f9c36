"""Listing a bucket's keys (``common.nats.kv_keys``) on a real nats-server.
nats-py's ``KeyValue.keys()`` leaves its consumer on the server for 5
minutes, and a stream takes 1,000 consumers: 1,000 listings within 5
minutes (the 관전 list lists the owners bucket, up to every 2 s per gateway)
and the stream refused every new consumer — a shard starting its owners
watch among them ("maximum consumers limit reached", seen here at the
1,000th call). ``kv_keys`` lists the same keys and its consumer goes 2 s
after the listing. And nats-py's listing could end before its entries (its
"all in" marker raced the server's deliveries): on a cluster about one
listing in 100 came back empty (audit)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest_asyncio
from nats.js.api import KeyValueConfig

from ttanjit.common.nats import kv_keys
from ttanjit.common.natscluster import NatsCluster
from ttanjit.common.natsserver import NatsServer


@pytest_asyncio.fixture
async def kv() -> AsyncIterator[Any]:
    with NatsServer() as server:
        nc = await nats.connect(server.url)
        try:
            yield await nc.jetstream().create_key_value(bucket="listing")
        finally:
            await nc.close()


async def test_the_keys_are_listed_without_the_removed_ones_in_write_order(kv: Any) -> None:
    assert await kv_keys(kv) == []
    for k in ("a", "b", "c", "d"):
        await kv.put(k, b"1")
    await kv.delete("b")
    await kv.purge("c")
    await kv.put("a", b"2")  # written last now
    assert await kv_keys(kv) == ["d", "a"]


async def test_a_listing_leaves_no_consumer_behind(kv: Any) -> None:
    await kv.put("k", b"1")
    js = kv._js
    for _ in range(30):
        assert await kv_keys(kv) == ["k"]
    # each listing's consumer goes 2 s after it (keys(): 30 left for 5 min)
    for _ in range(100):
        if (await js.stream_info("KV_listing")).state.consumer_count == 0:
            break
        await asyncio.sleep(0.1)
    assert (await js.stream_info("KV_listing")).state.consumer_count == 0


async def put_once_led(kv: Any, key: str) -> None:
    """A put to a bucket just made on a cluster: its stream's replicas may
    still be electing a leader (no responders), for a few seconds on a
    busy machine (it failed a CI run so)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while True:
        try:
            await kv.put(key, b"1")
            return
        except (nats.js.errors.NoStreamResponseError, nats.errors.TimeoutError):
            if loop.time() >= end:
                raise
            await asyncio.sleep(0.2)


async def test_a_listing_on_a_cluster_never_comes_back_short(tmp_path: Any) -> None:
    cluster = NatsCluster(3, base_dir=str(tmp_path / "nats")).start()
    try:
        await asyncio.to_thread(cluster.wait_healthy, 60)
        nc = await nats.connect(cluster.urls[2])
        try:
            kv = await nc.jetstream().create_key_value(
                KeyValueConfig(bucket="listing3", replicas=3, history=1))
            for i in range(20):
                await put_once_led(kv, f"k{i}")
            lengths = [len(await kv_keys(kv)) for _ in range(300)]
            assert set(lengths) == {20}, sorted(set(lengths))
        finally:
            await nc.close()
    finally:
        cluster.stop()
