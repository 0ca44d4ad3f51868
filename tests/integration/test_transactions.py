"""The transactional producer against the real broker: what ``read_committed`` consumers see of
committed and aborted transactions, offsets committed with a transaction, fencing by a newer
producer with the same transactional id, and a failed record making the transaction
abort-only."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.structs import OffsetAndMetadata, TopicPartition

from ..conftest import TopicFactory

pytestmark = [pytest.mark.integration, pytest.mark.core]


def _txn_id() -> str:
    return f"fk-txn-{uuid.uuid4().hex[:10]}"


async def _read_all(
    bootstrap: str, topic: str, partitions: int, isolation_level: str
) -> list[bytes]:
    """Every value in ``topic`` as ``isolation_level`` sees it, read up to the high watermarks
    (a transaction's last offset is its marker, which the broker writes just after EndTxn
    returns: a ``read_committed`` reader gets there once the marker is in)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap) as probe:
        ends = await probe.end_offsets(tps)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level=isolation_level,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        consumer.assign(tps)
        values: list[bytes] = []
        deadline = asyncio.get_running_loop().time() + 20
        while any([await consumer.position(tp) < ends[tp] for tp in tps]):
            assert asyncio.get_running_loop().time() < deadline, "reading took too long"
            got = await consumer.getmany(timeout_ms=500)
            for records in got.values():
                values.extend(r.value for r in records)
        return sorted(values)
    finally:
        await consumer.stop()


async def test_committed_records_are_seen_and_aborted_ones_are_not(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, transactional_id=_txn_id())
    await producer.start()
    try:
        await producer.begin_transaction()
        for i in range(10):
            await producer.send(topic, f"commit-{i}".encode(), partition=i % 2)
        await producer.commit_transaction()

        await producer.begin_transaction()
        futures = [
            await producer.send(topic, f"abort-{i}".encode(), partition=i % 2) for i in range(6)
        ]
        await producer.abort_transaction()
        # The aborted records were written (and acknowledged), then marked aborted.
        assert all(f.done() and f.exception() is None for f in futures)

        async with producer.transaction():
            await producer.send(topic, b"context-commit", partition=0)
        with pytest.raises(RuntimeError, match="boom"):
            async with producer.transaction():
                await producer.send(topic, b"context-abort", partition=1)
                await producer.flush()
                raise RuntimeError("boom")
    finally:
        await producer.stop()

    committed = sorted([f"commit-{i}".encode() for i in range(10)] + [b"context-commit"])
    assert await _read_all(bootstrap_servers, topic, 2, "read_committed") == committed
    everything = await _read_all(bootstrap_servers, topic, 2, "read_uncommitted")
    aborted = [f"abort-{i}".encode() for i in range(6)] + [b"context-abort"]
    assert everything == sorted(committed + aborted)


async def test_send_outside_a_transaction_and_wrong_calls_raise(
    bootstrap_servers: str, topic: str
) -> None:
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=_txn_id()
    ) as producer:
        with pytest.raises(Errors.IllegalOperation, match="begin_transaction"):
            await producer.send(topic, b"x")
        with pytest.raises(Errors.IllegalOperation, match="commit_transaction"):
            await producer.commit_transaction()
        with pytest.raises(Errors.IllegalOperation, match="Not in the middle"):
            await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 1}, "g")
        await producer.begin_transaction()
        with pytest.raises(Errors.IllegalOperation, match="begin_transaction"):
            await producer.begin_transaction()
        with pytest.raises(ValueError, match="offset for"):
            await producer.send_offsets_to_transaction({TopicPartition(topic, 0): -1}, "g")
        # An empty transaction commits without asking the broker anything.
        await producer.commit_transaction()
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as plain:
        with pytest.raises(Errors.IllegalOperation, match="transaction_id"):
            await plain.begin_transaction()


async def test_offsets_sent_to_a_transaction_count_only_if_it_commits(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    source = make_topic(partitions=1)
    sink = make_topic(partitions=1)
    group = f"fk-txn-group-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(source, 0)
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers)
    await admin.start()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, transactional_id=_txn_id())
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send(sink, b"aborted")
        await producer.send_offsets_to_transaction({tp: 5}, group)
        await producer.abort_transaction()
        offsets = await admin.list_consumer_group_offsets(group, partitions=[tp])
        assert offsets[tp].offset == -1

        await producer.begin_transaction()
        await producer.send(sink, b"committed")
        await producer.send_offsets_to_transaction({tp: OffsetAndMetadata(7, "meta")}, group)
        await producer.commit_transaction()
        for _ in range(100):  # the commit marker lands just after EndTxn returns
            offsets = await admin.list_consumer_group_offsets(group, partitions=[tp])
            if offsets[tp].offset != -1:
                break
            await asyncio.sleep(0.1)
        assert offsets[tp] == OffsetAndMetadata(7, "meta")
    finally:
        await producer.stop()
        await admin.close()
    assert await _read_all(bootstrap_servers, sink, 1, "read_committed") == [b"committed"]


async def test_a_newer_producer_with_the_same_id_fences_the_older_one(
    bootstrap_servers: str, topic: str
) -> None:
    txn_id = _txn_id()
    old = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, transactional_id=txn_id)
    await old.start()
    new = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, transactional_id=txn_id)
    try:
        await old.begin_transaction()
        await old.send(topic, b"from the old producer")
        await new.start()  # fences the old one, and aborts its open transaction
        with pytest.raises(Errors.ProducerFenced):
            await old.send_and_wait(topic, b"after the fence")
            await old.commit_transaction()
        # Fatal: the old producer cannot do anything transactional any more.
        with pytest.raises(Errors.ProducerFenced):
            await old.begin_transaction()
        async with new.transaction():
            await new.send(topic, b"from the new producer")
    finally:
        await old.stop()
        await new.stop()
    assert await _read_all(bootstrap_servers, topic, 1, "read_committed") == [
        b"from the new producer"
    ]


async def test_a_failed_record_makes_the_transaction_abort_only(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=1, configs={"max.message.bytes": "2000"})
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, transactional_id=_txn_id())
    await producer.start()
    try:
        await producer.begin_transaction()
        small = await producer.send(topic, b"small")
        big = await producer.send(topic, b"x" * 5000)  # the broker refuses the batch
        with pytest.raises(Errors.MessageSizeTooLargeError):
            await producer.commit_transaction()
        with pytest.raises(Errors.MessageSizeTooLargeError):
            await big
        await asyncio.gather(small, return_exceptions=True)  # in big's batch, or not
        with pytest.raises(Errors.MessageSizeTooLargeError):
            await producer.commit_transaction()  # still abort-only
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send(topic, b"next")
    finally:
        await producer.stop()
    assert await _read_all(bootstrap_servers, topic, 1, "read_committed") == [b"next"]


async def test_stop_aborts_an_open_transaction(bootstrap_servers: str, topic: str) -> None:
    """Without the abort, the transaction would hold back ``read_committed`` readers until
    the broker times it out (``transaction_timeout_ms``, here longer than the read's 20 s)."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers,
        transactional_id=_txn_id(),
        transaction_timeout_ms=120000,
    )
    await producer.start()
    await producer.begin_transaction()
    await producer.send_and_wait(topic, b"never committed")
    await producer.stop()
    assert await _read_all(bootstrap_servers, topic, 1, "read_committed") == []
    assert await _read_all(bootstrap_servers, topic, 1, "read_uncommitted") == [b"never committed"]
