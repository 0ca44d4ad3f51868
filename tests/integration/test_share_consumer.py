"""``AIOKafkaShareConsumer`` against the real 4.2 broker: members of one share group split a
topic's records (more members than partitions, each record accepted once), RELEASE
redelivers with a higher delivery count, REJECT archives, the delivery count limit archives,
RENEW keeps a lock past its duration, an acknowledgement after the lock ran out is refused
per partition, explicit mode refuses a poll with records unanswered, Arrow batches carry the
delivery count, a record its deserializer refuses is released and raised (the others handed
out once), and every codec decodes."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import pytest
from ferrokafka import AcknowledgeType, AIOKafkaShareConsumer
from ferrokafka import errors as Errors
from ferrokafka.share import AcknowledgementCommitFailedError
from ferrokafka.structs import TopicPartition

from .cancel_util import STOP_WITHIN, Canceller
from .produce_util import produce, value_of
from .share_util import configure_share_group, poll_until, produce_current, quiet_for

pytestmark = pytest.mark.integration

ACCEPT, RELEASE, REJECT, RENEW = (
    AcknowledgeType.ACCEPT,
    AcknowledgeType.RELEASE,
    AcknowledgeType.REJECT,
    AcknowledgeType.RENEW,
)


async def _group(bootstrap_servers: str, topic: str, **configs: str) -> str:
    group = f"share-{topic}"
    await configure_share_group(
        bootstrap_servers, group, share_auto_offset_reset="earliest", **configs
    )
    return group


async def test_more_members_than_partitions_accept_each_record_once(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    per_partition = 100_000
    group = await _group(bootstrap_servers, topic)
    await produce_current(bootstrap_servers, topic, 2, per_partition)
    members = [
        AIOKafkaShareConsumer(topic, bootstrap_servers=bootstrap_servers, group_id=group)
        for _ in range(8)
    ]
    seen: Counter[tuple[int, int]] = Counter()
    by_member = [0] * len(members)
    counts: Counter[int] = Counter()
    total = 2 * per_partition

    async def work(i: int, member: AIOKafkaShareConsumer[Any, Any]) -> None:
        while sum(seen.values()) < total:
            data = await member.getmany(timeout_ms=200, max_records=100)
            for tp, records in data.items():
                for r in records:
                    assert r.value == value_of(tp.partition, r.offset)
                    seen[(tp.partition, r.offset)] += 1
                    counts[r.delivery_count] += 1
                    by_member[i] += 1
            await asyncio.sleep(0.001 * len(data))  # some work per poll, so all get a turn

    try:
        await asyncio.gather(*(m.start() for m in members))
        await asyncio.wait_for(asyncio.gather(*(work(i, m) for i, m in enumerate(members))), 120)
    finally:
        await asyncio.gather(*(m.stop() for m in members))
    assert len(seen) == total, "every record was handed out"
    assert set(seen.values()) == {1}, [k for k, v in seen.items() if v > 1][:10]
    assert counts == {1: total}
    assert all(by_member), by_member  # the work spread over every member
    # Everything was accepted (stop() accepts the last poll's records): a new member of the
    # group gets nothing.
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group
    ) as late:
        assert await quiet_for(late, 3) == []


async def test_release_redelivers_reject_archives_and_the_count_limit_archives(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic)
    await produce_current(bootstrap_servers, topic, 1, 10)
    answered: list[tuple[dict[TopicPartition, set[int]], Any]] = []
    async with AIOKafkaShareConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        share_acknowledgement_mode="explicit",
        acknowledgement_commit_callback=lambda offsets, exc: answered.append((offsets, exc)),
    ) as consumer:
        first = await poll_until(consumer, lambda got: len(got) >= 10)
        assert sorted((r.offset, r.delivery_count) for r in first) == [(o, 1) for o in range(10)]
        # A poll with records unanswered is refused in explicit mode.
        with pytest.raises(Errors.IllegalStateError, match="not acknowledged"):
            await consumer.getmany()
        for r in first:
            consumer.acknowledge(
                r, RELEASE if r.offset == 0 else REJECT if r.offset == 1 else ACCEPT
            )
        with pytest.raises(Errors.IllegalStateError, match="not held"):
            consumer.acknowledge(first[5])  # answered for already
        committed = await consumer.commit()
        assert committed == {TopicPartition(topic, 0): set(range(10))}
        assert answered[-1] == (committed, None)

        # Offset 0 comes back, one delivery more each time it is released, until the
        # broker's delivery count limit (5) archives it; offset 1 (rejected) never returns.
        deliveries = []
        for _ in range(4):
            again = await poll_until(
                consumer,
                lambda got: len(got) >= 1,
                on_record=lambda r: consumer.acknowledge(r, RELEASE),
            )
            assert [r.offset for r in again] == [0], again
            deliveries.append(again[0].delivery_count)
        assert await quiet_for(consumer, 3) == []
        assert deliveries == [2, 3, 4, 5]


async def test_renew_keeps_a_lock_and_a_late_accept_is_refused(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic, share_record_lock_duration_ms="15000")
    await produce_current(bootstrap_servers, topic, 1, 2)
    explicit = {"share_acknowledgement_mode": "explicit", "max_poll_records": 1}
    async with (
        AIOKafkaShareConsumer(
            topic, bootstrap_servers=bootstrap_servers, group_id=group, **explicit
        ) as slow,
        AIOKafkaShareConsumer(topic, bootstrap_servers=bootstrap_servers, group_id=group) as other,
    ):
        # (Explicit mode answers for a record before the next poll: RENEW counts. The two
        # records are one batch, which one poll hands out whole.)
        renew = {"on_record": lambda r: slow.acknowledge(r, RENEW)}
        held = await poll_until(slow, lambda got: len(got) >= 2, **renew)
        renewed, forgotten = held
        assert slow.acquisition_lock_timeout_ms == 15000
        # For 20 s (past the 15 s lock) the slow member renews one record's lock and lets the
        # other's run out.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            slow.acknowledge(renewed, RENEW)
            await asyncio.sleep(4)
        # The record left alone went back to the group: the other member gets it, delivered
        # a second time, and never the renewed one.
        again = await poll_until(other, lambda got: len(got) >= 1)
        assert [(r.offset, r.delivery_count) for r in again] == [(forgotten.offset, 2)]
        # Now the other member holds it: the slow member's late accept is refused, naming the
        # group and the partition.
        slow.acknowledge(forgotten, ACCEPT)
        with pytest.raises(AcknowledgementCommitFailedError) as failed:
            await slow.commit()
        assert isinstance(
            failed.value.errors[TopicPartition(topic, 0)], Errors.InvalidRecordStateError
        )
        assert group in str(failed.value)
        # The renewed record is still the slow member's.
        slow.acknowledge(renewed, ACCEPT)
        assert await slow.commit() == {TopicPartition(topic, 0): {renewed.offset}}
        assert await quiet_for(other, 2) == []


async def test_arrow_batches_carry_delivery_counts_and_are_acknowledged_whole(
    bootstrap_servers: str, make_topic: Any
) -> None:
    pytest.importorskip("pyarrow")
    topic = make_topic(partitions=2)
    group = await _group(bootstrap_servers, topic)
    await produce_current(bootstrap_servers, topic, 2, 50)
    async with AIOKafkaShareConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        share_acknowledgement_mode="explicit",
    ) as consumer:
        # The first batch of partition 0 is released whole: its records come back with
        # delivery count 2 (perhaps in a batch beside partition 0's later records, which
        # arrive for the first time); every other row is delivered once and accepted.
        first: dict[int, set[int]] = {0: set(), 1: set()}
        released: set[int] = set()
        again: set[int] = set()
        deadline = time.monotonic() + 30
        while any(first[p] != set(range(50)) for p in first) or again != released:
            assert time.monotonic() < deadline
            for tp, batch in (await consumer.getmany_arrow(timeout_ms=200)).items():
                assert batch.schema.names[-1] == "deliveryCount"
                offsets = batch.column("offset").to_pylist()
                assert batch.column("value").to_pylist()[0] == value_of(tp.partition, offsets[0])
                for offset, count in zip(
                    offsets, batch.column("deliveryCount").to_pylist(), strict=True
                ):
                    if tp.partition == 0 and offset in released:
                        assert (offset, count) == (offset, 2) and offset not in again
                        again.add(offset)
                    else:
                        assert (offset, count) == (offset, 1) and offset not in first[tp.partition]
                        first[tp.partition].add(offset)
                if tp.partition == 0 and not released:
                    released = set(offsets)
                    consumer.acknowledge_batch(batch, RELEASE)
                else:
                    consumer.acknowledge_batch(batch, ACCEPT)
        assert released
        await consumer.commit()
        assert await quiet_for(consumer, 2) == []


@pytest.mark.parametrize("compression", ["gzip", "snappy", "lz4", "zstd"])
async def test_every_codec(bootstrap_servers: str, make_topic: Any, compression: str) -> None:
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic)
    await produce_current(bootstrap_servers, topic, 1, 300, compression=compression)
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group
    ) as consumer:
        got = await poll_until(consumer, lambda got: len(got) >= 300)
    assert [(r.offset, r.value) for r in got] == [(i, value_of(0, i)) for i in range(300)]


async def test_read_committed_skips_aborted_records_and_control_batches(
    bootstrap_servers: str, make_topic: Any
) -> None:
    from ferrokafka import AIOKafkaProducer

    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic, share_isolation_level="read_committed")
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=f"tx-{topic}"
    ) as producer:
        for n, commit in enumerate([True, False, True]):
            await producer.begin_transaction()
            for i in range(5):
                await producer.send_and_wait(topic, b"t%d-%d" % (n, i), partition=0)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group
    ) as consumer:
        got = await poll_until(consumer, lambda got: len(got) >= 10)
        assert await quiet_for(consumer, 2) == []
    assert sorted(r.value for r in got) == sorted(
        b"t%d-%d" % (n, i) for n in (0, 2) for i in range(5)
    )


async def test_implicit_mode_refuses_acknowledge_and_stop_ends_a_waiting_poll(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic)
    await produce(bootstrap_servers, topic, 0, [(int(time.time() * 1000), None, b"only", [])])
    consumer = AIOKafkaShareConsumer(topic, bootstrap_servers=bootstrap_servers, group_id=group)
    await consumer.start()
    try:
        record = await asyncio.wait_for(consumer.getone(), 30)
        assert (record.value, record.delivery_count) == (b"only", 1)
        with pytest.raises(Errors.IllegalStateError, match="explicit"):
            consumer.acknowledge(record)
        waiting = asyncio.create_task(consumer.getone())
        await asyncio.sleep(0.5)
        assert not waiting.done()
    finally:
        await consumer.stop()
    with pytest.raises(Errors.ConsumerStoppedError):
        await waiting
    # stop() accepted the record.
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group
    ) as late:
        assert await quiet_for(late, 2) == []


async def test_a_cancelled_poll_takes_nothing_and_a_cancelled_commit_still_lands(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic)
    answered: list[tuple[dict[TopicPartition, set[int]], Any]] = []
    async with AIOKafkaShareConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        share_acknowledgement_mode="explicit",
        acknowledgement_commit_callback=lambda offsets, exc: answered.append((offsets, exc)),
    ) as consumer:
        # A poll cancelled while it waits: then the records arrive, and none is lost.
        waiting = asyncio.create_task(consumer.getmany(timeout_ms=10_000))
        await asyncio.sleep(0.3)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await produce_current(bootstrap_servers, topic, 1, 20)
        got = await poll_until(consumer, lambda got: len(got) >= 20)
        assert sorted(r.offset for r in got) == list(range(20))
        await asyncio.sleep(1)  # the fetch the last poll started has ended (nothing more)
        for r in got:
            consumer.acknowledge(r)
        # A commit cancelled while it waits: its acknowledgements still reach the broker.
        commit = asyncio.create_task(consumer.commit())
        await asyncio.sleep(0)
        commit.cancel()
        with pytest.raises(asyncio.CancelledError):
            await commit
        deadline = time.monotonic() + 10
        while not answered:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        assert answered == [({TopicPartition(topic, 0): set(range(20))}, None)]
        assert await quiet_for(consumer, 1) == []


async def test_a_record_its_deserializer_refuses_is_released_and_raised_and_none_is_lost(
    bootstrap_servers: str, make_topic: Any
) -> None:
    # As Java's share consumer: the records before the refused one are handed out; the poll
    # that comes to it first raises the deserializer's error and releases the record (it comes
    # again, one delivery more, until the delivery count limit archives it); the records after
    # it are handed out by the next polls, each once.
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic)
    await produce_current(bootstrap_servers, topic, 1, 10)
    bad = value_of(0, 4)

    def value_deserializer(value: bytes) -> bytes:
        if value == bad:
            raise ValueError("unreadable")
        return value

    got: list[tuple[int, int]] = []
    refused: list[tuple[int, int]] = []
    async with AIOKafkaShareConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        value_deserializer=value_deserializer,
    ) as consumer:
        deadline = time.monotonic() + 30
        while len(got) < 9 or len(refused) < 5:
            assert time.monotonic() < deadline, (got, refused)
            try:
                data = await consumer.getmany(timeout_ms=200)
            except ValueError as exc:
                refused.append((exc.partition, exc.offset))  # type: ignore[attr-defined]
                continue
            got += [(r.offset, r.delivery_count) for rs in data.values() for r in rs]
        assert await quiet_for(consumer, 2) == []
    assert sorted(got) == [(o, 1) for o in range(10) if o != 4]
    assert refused == [(0, 4)] * 5  # the broker's delivery count limit (5) archives it


async def test_a_poll_hands_out_whole_record_batches_and_max_records_bounds_it(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """As Java's share consumer: a poll returns ``max_poll_records`` records and the rest of
    the record batch the last of them is in; ``max_records`` given to a poll is a bound."""
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic)
    now = int(time.time() * 1000)
    values = [(now, None, b"v%d" % i, []) for i in range(20)]
    assert await produce(bootstrap_servers, topic, 0, values, batch_size=10) == [0, 10]
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group, max_poll_records=3
    ) as consumer:
        polls: list[list[int]] = []
        deadline = time.monotonic() + 30
        while sum(map(len, polls)) < 20:
            assert time.monotonic() < deadline, polls
            bound = 3 if not polls else None
            data = await consumer.getmany(timeout_ms=200, max_records=bound)
            offsets = [r.offset for records in data.values() for r in records]
            if offsets:
                polls.append(offsets)
        assert polls == [[0, 1, 2], list(range(3, 10)), list(range(10, 20))]
        assert await quiet_for(consumer, 1) == []


async def test_record_limit_acquires_no_more_than_a_poll_and_commit_async(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """``share_acquire_mode="record_limit"`` (KIP-1206): a member acquires at most
    ``max_poll_records`` even from one big batch, so a second member takes the rest at once;
    ``commit_async()`` is a task whose outcome also reaches the callback."""
    topic = make_topic(partitions=1)
    group = await _group(bootstrap_servers, topic)
    now = int(time.time() * 1000)  # a current timestamp: see produce_current
    await produce(bootstrap_servers, topic, 0, [(now, None, b"v%d" % i, []) for i in range(20)])
    answered: list[Any] = []
    async with (
        AIOKafkaShareConsumer(
            topic,
            bootstrap_servers=bootstrap_servers,
            group_id=group,
            share_acknowledgement_mode="explicit",
            share_acquire_mode="record_limit",
            max_poll_records=3,
            acknowledgement_commit_callback=lambda offsets, exc: answered.append((offsets, exc)),
        ) as small,
        AIOKafkaShareConsumer(topic, bootstrap_servers=bootstrap_servers, group_id=group) as other,
    ):
        first = await poll_until(small, lambda got: len(got) >= 1)
        assert 1 <= len(first) <= 3
        rest = await poll_until(other, lambda got: len(got) >= 20 - len(first), timeout=10)
        assert sorted(r.offset for r in first + rest) == list(range(20))
        for r in first:
            small.acknowledge(r)
        task = small.commit_async()
        assert isinstance(task, asyncio.Task)
        assert await task == {TopicPartition(topic, 0): {r.offset for r in first}}
        assert answered[-1] == ({TopicPartition(topic, 0): {r.offset for r in first}}, None)


async def test_calls_cancelled_at_random_points_cost_only_themselves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    """getmany, getmany_arrow, getone and commit of an explicit-mode member, each cancelled
    at a random point (as the other clients' calls are in test_cancellation.py): a cancelled
    poll takes no record, so every record is handed out once and accepted once; afterwards
    the group holds nothing more, and stop() returns at once."""
    topic = make_topic(partitions=2)
    per_partition = 1000
    group = await _group(bootstrap_servers, topic)
    await produce_current(bootstrap_servers, topic, 2, per_partition)
    cancel = Canceller()
    rng = cancel.rng
    handed_out: Counter[tuple[int, int]] = Counter()
    consumer: AIOKafkaShareConsumer[Any, Any] = AIOKafkaShareConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=group,
        share_acknowledgement_mode="explicit",
        max_poll_records=50,
    )
    await consumer.start()

    async def getmany() -> None:
        batch = await cancel.run(consumer.getmany(timeout_ms=rng.randrange(0, 50)), 0.02)
        if isinstance(batch, dict):
            for records in batch.values():
                for record in records:
                    handed_out[record.partition, record.offset] += 1
                    consumer.acknowledge(record, ACCEPT)

    async def getmany_arrow() -> None:
        batch = await cancel.run(consumer.getmany_arrow(timeout_ms=rng.randrange(0, 50)), 0.02)
        if isinstance(batch, dict):
            for tp, rows in batch.items():
                for offset in rows.column("offset").to_pylist():
                    handed_out[tp.partition, offset] += 1
                consumer.acknowledge_batch(rows, ACCEPT)

    async def getone() -> None:
        record = await cancel.run(consumer.getone(), 0.02)
        if not isinstance(record, asyncio.CancelledError):
            handed_out[record.partition, record.offset] += 1
            consumer.acknowledge(record, ACCEPT)

    async def commit() -> None:
        await cancel.run(consumer.commit(), 0.005)

    everything = {(p, o) for p in range(2) for o in range(per_partition)}
    try:
        await cancel.exercise([getmany, getmany_arrow, getone, commit], rounds=300, least=40)
        deadline = time.monotonic() + 30
        while set(handed_out) != everything:
            assert time.monotonic() < deadline, f"{len(handed_out)} records handed out"
            await getmany()
        await asyncio.wait_for(consumer.commit(), 10)
    finally:
        await asyncio.wait_for(consumer.stop(), STOP_WITHIN)
    repeated = [key for key, times in handed_out.items() if times > 1]
    assert not repeated, repeated[:10]
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group
    ) as late:
        assert await quiet_for(late, 2) == []
