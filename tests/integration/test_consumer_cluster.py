"""The consumer's fetcher where the cluster moves under it: a leader moving while consuming,
incremental fetch sessions over many partitions, and fetching from the closest replica
(``client_rack``, KIP-392)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka.client import AIOKafkaClient
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, KafkaCluster

from ..needs import CLUSTER_START_S
from .produce_util import produce_values, value_of
from .test_consumer import drain

pytestmark = [pytest.mark.integration, pytest.mark.core]


async def leader_of(bootstrap: str, tp: TopicPartition) -> int:
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(tp.topic)
        await client.refresh_metadata()
        leader = client.cluster.leader_for_partition(tp)
        assert leader is not None and leader >= 0
        return leader


@pytest.mark.cluster
async def test_leader_moves_while_consuming(kafka_cluster: Any) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    topic = f"fk-leader-move-{time.monotonic_ns()}"
    await kafka_cluster.acreate_topic(topic, partitions=1, replication_factor=3)
    tp = TopicPartition(topic, 0)
    try:
        await produce_values(bootstrap, topic, 1, 3000)
        async with AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=16 * 1024,  # many small fetches
            metadata_max_age_ms=60000,
        ) as consumer:
            consumer.assign([tp])
            records = await drain(consumer, 1000)
            old_leader = await leader_of(bootstrap, tp)
            await asyncio.to_thread(kafka_cluster.stop_node, old_leader)
            try:
                new_leader = await leader_of(bootstrap, tp)
                assert new_leader != old_leader
                # More data, written to the new leader, while the consumer keeps going.
                writer = asyncio.ensure_future(
                    produce_values(bootstrap, topic, 1, 2000, timestamp=1_750_000_000_000)
                )
                records += await drain(consumer, 5000 - len(records), timeout=90)
                await writer
            finally:
                await asyncio.to_thread(kafka_cluster.restart_node, old_leader)
        offsets = [r.offset for r in records]
        assert offsets == list(range(5000)), "lost or duplicated records"
        assert [r.value for r in records[:3000]] == [value_of(0, i) for i in range(3000)]
        assert [r.value for r in records[3000:]] == [value_of(0, i) for i in range(2000)]
    finally:
        await kafka_cluster.adelete_topic(topic)


async def test_many_partitions_use_an_incremental_fetch_session(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=60)
    await produce_values(bootstrap_servers, topic, 60, 20)
    tps = [TopicPartition(topic, p) for p in range(60)]
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait_ms=100
    ) as consumer:
        consumer.assign(tps)
        records = await drain(consumer, 1200)
        assert sorted((r.partition, r.offset) for r in records) == [
            (p, i) for p in range(60) for i in range(20)
        ]
        # Idle partitions keep being fetched through the session without being resent.
        await asyncio.sleep(0.5)
        fetcher: Any = consumer._fetcher
        sessions = [n.session for n in fetcher._nodes.values()]
        assert len(sessions) == 1
        assert sessions[0].session_id != 0, "the broker created no fetch session"
        assert sessions[0].epoch > 1, "no incremental fetch happened"
        # New data in one partition arrives through the incremental session.
        await produce_values(bootstrap_servers, topic, 1, 5)
        more = await drain(consumer, 5)
        assert [(r.partition, r.offset) for r in more] == [(0, i) for i in range(20, 25)]


@pytest.fixture(scope="module")
def racked_cluster() -> Iterator[KafkaCluster]:
    """Three nodes in racks r1, r2, r3 whose brokers pick the closest replica for a fetch."""
    cluster = KafkaCluster(
        3,
        config={
            "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
            "log.retention.ms": "-1",
        },
        node_configs={n: {"broker.rack": f"r{n}"} for n in (1, 2, 3)},
        jvm_options=QUICK_START_JVM_OPTIONS,
        start_timeout=CLUSTER_START_S,
    )
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.mark.cluster
async def test_client_rack_fetches_from_the_closest_replica(racked_cluster: KafkaCluster) -> None:
    bootstrap = racked_cluster.bootstrap_servers
    topic = f"fk-rack-{time.monotonic_ns()}"
    await racked_cluster.acreate_topic(topic, partitions=1, replication_factor=3)
    tp = TopicPartition(topic, 0)
    await produce_values(bootstrap, topic, 1, 500)
    leader = await leader_of(bootstrap, tp)
    follower = next(n for n in (1, 2, 3) if n != leader)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", client_rack=f"r{follower}"
    ) as consumer:
        consumer.assign([tp])
        records = await drain(consumer, 500)
        assert [r.offset for r in records] == list(range(500))
        state = consumer._subscription.state(tp)
        assert state.preferred_read_replica == follower
        # Later data comes from the follower's connection.
        await produce_values(bootstrap, topic, 1, 10, timestamp=1_750_000_000_000)
        more = await drain(consumer, 10)
        assert [r.offset for r in more] == list(range(500, 510))
        assert follower in consumer._client.connections
