"""The admin client's transaction calls against the real broker, with a transactional producer
holding a transaction open: what the partition leader (describe_producers), the coordinator
(describe_transactions) and every broker (list_transactions) say of it must agree; a fenced
producer's epoch moves on and its transaction cannot commit; an abort marker written by the
admin client ends a transaction for read_committed readers."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from ferrokafka import AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    AbortTransactionSpec,
    AIOKafkaAdminClient,
    OffsetSpec,
    ProducerState,
    TransactionListing,
    TransactionState,
)
from ferrokafka.structs import TopicPartition

from ..conftest import TopicFactory
from .produce_util import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.core]


def _txn_id() -> str:
    return f"fk-admin-txn-{uuid.uuid4().hex[:10]}"


async def _latest(admin: AIOKafkaAdminClient, tp: TopicPartition, isolation: str) -> int:
    return (await admin.list_offsets({tp: OffsetSpec.latest()}, isolation))[tp].offset


async def test_an_open_transaction_seen_by_leader_coordinator_and_every_broker(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    tp = TopicPartition(make_topic(partitions=1), 0)
    tid = _txn_id()
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=tid, transaction_timeout_ms=45000
    ) as producer:
        await produce_values(bootstrap_servers, tp.topic, 1, 1)  # offset 0, no transaction
        await producer.begin_transaction()
        await producer.send_and_wait(tp.topic, b"in", partition=0)  # offset 1, the txn's first
        await producer.send_and_wait(tp.topic, b"in", partition=0)

        [state] = (await admin.describe_producers([tp]))[tp]
        described = (await admin.describe_transactions([tid]))[tid]
        listed = await admin.list_transactions()
        ongoing = await admin.list_transactions(states=[TransactionState.ONGOING])
        by_producer = await admin.list_transactions(producer_ids=[state.producer_id])
        long_open = await admin.list_transactions(duration_ms=600_000)

        assert state.current_transaction_start_offset == 1
        assert state.last_sequence >= 1
        assert described.state is TransactionState.ONGOING
        assert (described.producer_id, described.producer_epoch) == (
            state.producer_id,
            state.producer_epoch,
        )
        assert described.topic_partitions == {tp}
        assert described.transaction_timeout_ms == 45000
        assert described.transaction_start_time_ms is not None
        assert described.coordinator_id == await admin.find_coordinator(tid, 1)
        mine = TransactionListing(tid, state.producer_id, TransactionState.ONGOING)
        assert mine in listed and mine in ongoing
        assert by_producer == [mine]
        assert mine not in long_open

        await producer.commit_transaction()

    # The coordinator writes the commit marker after EndTxn's answer.
    for _ in range(50):
        [after] = (await admin.describe_producers([tp]))[tp]
        if after.current_transaction_start_offset is None:
            break
        await asyncio.sleep(0.1)
    assert after.current_transaction_start_offset is None
    # The coordinator records the commit complete once every marker is written: PrepareCommit
    # until then, even after the leader has the marker.
    for _ in range(50):
        done = (await admin.describe_transactions([tid]))[tid]
        if done.state is not TransactionState.PREPARE_COMMIT:
            break
        await asyncio.sleep(0.1)
    assert done.state in (TransactionState.COMPLETE_COMMIT, TransactionState.EMPTY)
    assert done.topic_partitions == frozenset()
    assert TransactionListing(tid, state.producer_id, done.state) in await admin.list_transactions()


async def test_fence_producers_bumps_the_epoch_and_aborts(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    tp = TopicPartition(make_topic(partitions=1), 0)
    tid = _txn_id()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, transactional_id=tid)
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send_and_wait(tp.topic, b"zombie", partition=0)
        before = (await admin.describe_transactions([tid]))[tid]

        fenced = await admin.fence_producers([tid])

        assert fenced[tid].producer_id == before.producer_id
        assert fenced[tid].epoch > before.producer_epoch
        after = (await admin.describe_transactions([tid]))[tid]
        assert after.producer_epoch == fenced[tid].epoch
        # The coordinator aborted the open transaction (fence_producers waits that out).
        assert after.state in (TransactionState.COMPLETE_ABORT, TransactionState.EMPTY)
        assert after.topic_partitions == frozenset()
        with pytest.raises(Errors.KafkaError):
            await producer.commit_transaction()
    finally:
        await producer.stop()
    # The fenced transaction was aborted: read_committed readers may read to the end.
    assert await _latest(admin, tp, "read_committed") == await _latest(
        admin, tp, "read_uncommitted"
    )


async def test_abort_transaction_ends_it_for_read_committed_readers(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory, bootstrap_servers: str
) -> None:
    tp = TopicPartition(make_topic(partitions=1), 0)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=_txn_id()
    ) as producer:
        await producer.begin_transaction()
        for _ in range(3):
            await producer.send_and_wait(tp.topic, b"hanging", partition=0)
        assert await _latest(admin, tp, "read_committed") == 0
        [state] = (await admin.describe_producers([tp]))[tp]

        await admin.abort_transaction(AbortTransactionSpec.from_producer_state(tp, state))

        [after] = (await admin.describe_producers([tp]))[tp]
        assert after.current_transaction_start_offset is None
        # The three records and the abort marker: the last stable offset is the end.
        assert await _latest(admin, tp, "read_committed") == 4
        assert await _latest(admin, tp, "read_uncommitted") == 4


async def test_transaction_calls_reject_bad_input(
    admin: AIOKafkaAdminClient, make_topic: TopicFactory
) -> None:
    missing = _txn_id()
    with pytest.raises(Errors.TransactionalIdNotFoundError, match=missing):
        await admin.describe_transactions([missing])
    topic = make_topic(partitions=1)
    started = time.monotonic()
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=f"{topic}.*partition 3"):
        await admin.describe_producers([TopicPartition(topic, 3)], timeout_ms=2000)
    assert time.monotonic() - started < 20, "timeout_ms did not bound the retries"
    assert await admin.describe_producers([TopicPartition(topic, 0)]) == {
        TopicPartition(topic, 0): []
    }
    idle = ProducerState(7, 0, 3, 1_700_000_000_000, None, None)
    with pytest.raises(ValueError, match="no open transaction"):
        AbortTransactionSpec.from_producer_state(TopicPartition(topic, 0), idle)
    assert await admin.describe_producers([]) == {}
