"""``max_poll_interval_ms`` exceeded because the application's code blocked the event loop: the
member leaves the group, nothing is committed for the records it held, and the next poll
revokes, joins again and gets those records once more (at least once)."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.testing import KafkaBroker

pytestmark = pytest.mark.integration

RECORDS = 10


class Recorder(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        if revoked:
            self.events.append("revoked")

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        if assigned:
            self.events.append("assigned")


async def _committed(admin: AIOKafkaAdminClient, group: str, tp: TopicPartition) -> int:
    offsets = await admin.list_consumer_group_offsets(group)
    meta = offsets.get(tp)
    return -1 if meta is None else meta.offset


@pytest.mark.parametrize("group_protocol", ["classic", "consumer"])
async def test_a_blocked_loop_past_max_poll_interval_commits_nothing_it_held(
    kafka_broker: KafkaBroker, make_topic: object, group_protocol: str
) -> None:
    topic = make_topic(partitions=1)  # type: ignore[operator]
    tp = TopicPartition(topic, 0)
    bootstrap = kafka_broker.bootstrap_servers
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(RECORDS):
            await producer.send_and_wait(topic, f"r{i}".encode(), partition=0)

    group = f"g-{uuid.uuid4().hex[:8]}"
    recorder = Recorder()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        group_protocol=group_protocol,
        auto_offset_reset="earliest",
        enable_auto_commit=True,
        auto_commit_interval_ms=200,
        max_poll_interval_ms=2000,
    )
    consumer.subscribe([topic], listener=recorder)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    await consumer.start()
    try:
        held: list[bytes] = []
        before_last_poll = 0
        while len(held) < RECORDS:
            before_last_poll = await consumer.position(tp) if held else 0
            batch = await consumer.getmany(timeout_ms=10_000)
            held += [r.value for r in batch.get(tp, []) if r.value is not None]
        # The application's processing of the last batch blocks the event loop past
        # max_poll_interval_ms, then goes on asynchronously while the background runs.
        time.sleep(3)  # noqa: ASYNC251 - the blocking application code under test
        await asyncio.sleep(2)

        committed = await _committed(admin, group, tp)
        assert committed <= before_last_poll, (committed, before_last_poll)

        # The next poll joins again and, nothing of that batch being committed, hands out its
        # records again.
        start = max(committed, 0)
        again: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(again) < RECORDS - start and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=1000)
            again += [r.value for r in batch.get(tp, []) if r.value is not None]
        assert again == held[start:]
        # The partitions were given up before they came back (classic: at the rejoin, as
        # aiokafka and the Java client do; KIP-848: when the member left).
        assert recorder.events == ["assigned", "revoked", "assigned"], recorder.events
    finally:
        await consumer.stop()
        await admin.close()
