"""While ``on_partitions_revoked`` runs (here: an async listener that takes a second), the
application's concurrent polls hand out no record of the partitions being given up: a record
handed out after the revocation's commit would be processed again by the next owner."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from ferrokafka.testing import KafkaBroker

pytestmark = pytest.mark.integration


class SlowRevocation(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.windows: list[tuple[float, float, set[TopicPartition]]] = []

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        if not revoked:
            return
        began = time.monotonic()
        await asyncio.sleep(1.0)  # the application's own work: a flush, a commit elsewhere
        self.windows.append((began, time.monotonic(), set(revoked)))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        pass


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
async def test_no_record_of_a_partition_being_revoked_is_handed_out(
    kafka_broker: KafkaBroker, make_topic: object, group_protocol: str
) -> None:
    topic = make_topic(partitions=4)  # type: ignore[operator]
    bootstrap = kafka_broker.bootstrap_servers
    group = f"g-{uuid.uuid4().hex[:8]}"
    options = {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "group_protocol": group_protocol,
        "auto_offset_reset": "earliest",
    }
    listener = SlowRevocation()
    first = AIOKafkaConsumer(**options)
    first.subscribe([topic], listener=listener)
    handed: list[tuple[float, TopicPartition]] = []
    stop = asyncio.Event()

    async def produce(producer: AIOKafkaProducer) -> None:
        i = 0
        while not stop.is_set():
            await producer.send(topic, f"v{i}".encode(), partition=i % 4)
            i += 1
            await asyncio.sleep(0.002)

    async def poll() -> None:
        while not stop.is_set():
            batch = await first.getmany(timeout_ms=50)
            now = time.monotonic()
            handed.extend((now, tp) for tp, records in batch.items() if records)

    second = AIOKafkaConsumer(**options)
    second.subscribe([topic])
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=1) as producer:
        await first.start()
        tasks = [asyncio.create_task(produce(producer)), asyncio.create_task(poll())]
        try:
            await asyncio.sleep(2)
            await second.start()  # the group rebalances: the first member gives partitions up
            deadline = time.monotonic() + 30
            while not listener.windows and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            await asyncio.sleep(1)
        finally:
            stop.set()
            await asyncio.gather(*tasks)
            await second.stop()
            await first.stop()
    assert listener.windows, "no revocation happened"
    assert handed, "nothing was consumed"
    for began, ended, revoked in listener.windows:
        during = [tp for at, tp in handed if began <= at <= ended and tp in revoked]
        assert not during, f"records of revoked partitions handed out during revocation: {during}"
