"""Consume-transform-produce in transactions on a three-node cluster while its brokers are
killed: every input record is in the output exactly once for ``read_committed`` readers, and
the group's committed offsets end at the input's end. The cluster is Kafka 4.2's default,
transaction version 2."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.testing import KafkaCluster

from .test_transactions import _read_all

pytestmark = pytest.mark.integration

PARTITIONS = 4
RECORDS = 2000
PER_TRANSACTION = 20
PACE_S = 0.15


class Processor:
    """The service under test: batches read ``read_committed`` from the input, each written
    upper-cased to the output in one transaction with its input offsets. A failed
    transaction is aborted and its batch read again from the committed offsets; a producer
    that can no longer go on is replaced by a new one with the same transactional id (which
    fences the old one and ends its open transaction)."""

    def __init__(self, bootstrap: str, source: str, sink: str) -> None:
        self.bootstrap, self.source, self.sink = bootstrap, source, sink
        self.group = f"g-{source}"
        self.transactional_id = f"tx-{source}"
        self.transactions = 0
        self.failures: list[str] = []
        self.versions: set[bool] = set()

    def _producer(self) -> AIOKafkaProducer:
        return AIOKafkaProducer(
            bootstrap_servers=self.bootstrap,
            transactional_id=self.transactional_id,
            request_timeout_ms=30000,
        )

    async def run(self, ends: dict[TopicPartition, int], deadline: float) -> None:
        consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
            self.source,
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            isolation_level="read_committed",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=PER_TRANSACTION,
        )
        producer = self._producer()
        await producer.start()
        await consumer.start()
        done: dict[TopicPartition, int] = {}
        try:
            while any(done.get(tp, 0) < end for tp, end in ends.items()):
                assert time.monotonic() < deadline, f"processed up to {done} of {ends}"
                batch = await consumer.getmany(timeout_ms=500)
                if not batch:
                    continue
                try:
                    await self._transaction(producer, batch)
                except Errors.KafkaError as exc:
                    self.failures.append(repr(exc))
                    if producer._txn is not None and producer._txn.is_fatal:
                        await producer.stop()
                        producer = self._producer()
                        await producer.start()
                    elif producer._txn is not None and producer._txn.can_abort:
                        await producer.abort_transaction()
                    await consumer.seek_to_committed(*batch)
                    continue
                for tp, records in batch.items():
                    done[tp] = records[-1].offset + 1
                # A service's pace (the work a record takes): the run outlasts the kills.
                await asyncio.sleep(PACE_S)
        finally:
            await consumer.stop()
            await producer.stop()

    async def _transaction(
        self,
        producer: AIOKafkaProducer,
        batch: dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]],
    ) -> None:
        async with producer.transaction():
            assert producer._txn is not None
            self.versions.add(producer._txn.v2)
            for records in batch.values():
                for record in records:
                    await producer.send(self.sink, (record.value or b"").upper(), key=record.key)
            offsets = {tp: records[-1].offset + 1 for tp, records in batch.items()}
            await producer.send_offsets_to_transaction(offsets, self.group)
        self.transactions += 1


@pytest.mark.timeout(300)  # three kills and restarts
async def test_consume_transform_produce_is_exactly_once_through_broker_kills(
    kafka_cluster: KafkaCluster,
) -> None:
    bootstrap = kafka_cluster.bootstrap_servers
    source, sink = (f"fk-ctp-{uuid.uuid4().hex[:8]}-{n}" for n in ("in", "out"))
    for topic in (source, sink):
        await kafka_cluster.acreate_topic(topic, partitions=PARTITIONS, replication_factor=3)
    values = [b"order-%d" % i for i in range(RECORDS)]
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all") as producer:
        futures = [
            await producer.send(source, v, key=b"k%d" % (i % 50)) for i, v in enumerate(values)
        ]
        placed = [await f for f in futures]
    ends: dict[TopicPartition, int] = {}
    for meta in placed:
        tp = TopicPartition(source, meta.partition)
        ends[tp] = max(ends.get(tp, 0), meta.offset + 1)

    processor = Processor(bootstrap, source, sink)
    killed: list[int] = []
    down: set[int] = set()

    async def chaos(work: asyncio.Future[None]) -> None:
        """While the processor works, kill each node in turn and start it again (one down at
        a time: min ISR 2 of 3)."""
        for node in kafka_cluster.node_ids:
            await asyncio.sleep(1.0)
            if work.done():
                return
            down.add(node)
            await asyncio.to_thread(kafka_cluster.kill, node)
            killed.append(node)
            await asyncio.sleep(3)
            await asyncio.to_thread(kafka_cluster.restart_node, node)
            down.discard(node)

    work = asyncio.ensure_future(processor.run(ends, time.monotonic() + 300))
    kills = asyncio.ensure_future(chaos(work))
    try:
        await work
        await kills
    finally:
        for task in (work, kills):
            task.cancel()
        for node in down:
            await asyncio.to_thread(kafka_cluster.restart_node, node)

    assert len(killed) >= 2, f"the work ended after {len(killed)} kill(s): make it longer"
    assert processor.versions == {True}, "the cluster's transaction version 2 was not used"
    written = await _read_all(bootstrap, sink, PARTITIONS, "read_committed")
    assert Counter(written) == Counter(v.upper() for v in values)
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=processor.group) as c:
        committed = {tp: await c.committed(tp) for tp in ends}
    assert committed == ends
    # Whatever failed was retried; the report names how the kills were felt.
    print(f"{processor.transactions} transactions; failures: {processor.failures}")
