"""``list_offsets`` and ``delete_consumer_group_offsets`` against the real broker, each read
back through another path (the consumer's own offset lookups, OffsetFetch)."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from ferrokafka import AIOKafkaConsumer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient, ListOffsetsResultInfo, OffsetSpec
from ferrokafka.structs import OffsetAndMetadata, TopicPartition

from .produce_util import produce_values

pytestmark = [pytest.mark.integration, pytest.mark.core]

BASE_TS = 1_700_000_000_000
"""``produce_values`` stamps record i of each partition ``BASE_TS + i``."""


async def test_list_offsets_answers_every_spec_for_many_partitions(
    admin: AIOKafkaAdminClient, make_topic: object, bootstrap_servers: str
) -> None:
    topic = make_topic(partitions=3)  # type: ignore[operator]
    await produce_values(bootstrap_servers, topic, 3, 10, timestamp=BASE_TS)
    tps = [TopicPartition(topic, p) for p in range(3)]

    earliest = await admin.list_offsets({tp: OffsetSpec.earliest() for tp in tps})
    latest = await admin.list_offsets({tp: OffsetSpec.latest() for tp in tps})
    newest = await admin.list_offsets({tp: OffsetSpec.max_timestamp() for tp in tps})
    by_time = await admin.list_offsets(
        {tps[0]: OffsetSpec.for_timestamp(BASE_TS + 4), tps[1]: OffsetSpec.for_timestamp(0)}
    )
    after_last = await admin.list_offsets({tps[2]: OffsetSpec.for_timestamp(BASE_TS + 99)})

    assert {tp: i.offset for tp, i in earliest.items()} == dict.fromkeys(tps, 0)
    assert {tp: i.offset for tp, i in latest.items()} == dict.fromkeys(tps, 10)
    assert all(i.leader_epoch is not None and i.leader_epoch >= 0 for i in latest.values())
    assert {tp: (i.offset, i.timestamp) for tp, i in newest.items()} == dict.fromkeys(
        tps, (9, BASE_TS + 9)
    )
    assert by_time[tps[0]][:2] == (4, BASE_TS + 4)
    assert by_time[tps[1]][:2] == (0, BASE_TS)
    assert after_last[tps[2]].offset == -1

    # The consumer's own lookups (ListOffsets through its fetcher) agree.
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap_servers) as consumer:
        assert await consumer.beginning_offsets(tps) == {tp: earliest[tp].offset for tp in tps}
        assert await consumer.end_offsets(tps) == {tp: latest[tp].offset for tp in tps}
        found = await consumer.offsets_for_times({tps[0]: BASE_TS + 4})
        assert found[tps[0]] is not None and found[tps[0]].offset == by_time[tps[0]].offset
    assert isinstance(latest[tps[0]], ListOffsetsResultInfo)


async def test_list_offsets_read_committed_stops_at_an_open_transaction(
    admin: AIOKafkaAdminClient, make_topic: object, bootstrap_servers: str
) -> None:
    from ferrokafka import AIOKafkaProducer

    topic = make_topic(partitions=1)  # type: ignore[operator]
    tp = TopicPartition(topic, 0)
    await produce_values(bootstrap_servers, topic, 1, 3)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=f"fk-lo-{uuid.uuid4().hex}"
    ) as producer:
        await producer.begin_transaction()
        await producer.send_and_wait(topic, b"open", partition=0)
        uncommitted = await admin.list_offsets({tp: OffsetSpec.latest()})
        committed = await admin.list_offsets(
            {tp: OffsetSpec.latest()}, isolation_level="read_committed"
        )
        await producer.abort_transaction()
    assert (uncommitted[tp].offset, committed[tp].offset) == (4, 3)


async def test_list_offsets_rejects_bad_input(
    admin: AIOKafkaAdminClient, make_topic: object
) -> None:
    topic = make_topic(partitions=1)  # type: ignore[operator]
    missing = f"fk-missing-{uuid.uuid4().hex[:10]}"
    # An unknown topic or partition is retried (it may be being created) for up to the call's
    # timeout_ms in all, the metadata lookups included, then raised naming it.
    started = time.monotonic()
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=missing):
        await admin.list_offsets({TopicPartition(missing, 0): OffsetSpec.latest()}, timeout_ms=2000)
    with pytest.raises(Errors.UnknownTopicOrPartitionError, match=f"{topic}.*partition 7"):
        await admin.list_offsets({TopicPartition(topic, 7): OffsetSpec.latest()}, timeout_ms=2000)
    assert time.monotonic() - started < 20, "timeout_ms did not bound the retries"
    with pytest.raises(ValueError, match="timestamp_ms"):
        OffsetSpec.for_timestamp(-5)
    with pytest.raises(ValueError, match="isolation_level"):
        await admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.latest()}, "dirty")
    assert await admin.list_offsets({}) == {}


async def test_delete_consumer_group_offsets(
    admin: AIOKafkaAdminClient, make_topic: object, bootstrap_servers: str
) -> None:
    subscribed = make_topic(partitions=2)  # type: ignore[operator]
    other = make_topic(partitions=1)  # type: ignore[operator]
    group = f"fk-offdel-{uuid.uuid4().hex[:10]}"
    s0, s1, o0 = (
        TopicPartition(subscribed, 0),
        TopicPartition(subscribed, 1),
        TopicPartition(other, 0),
    )
    await admin.alter_consumer_group_offsets(group, {s0: 1, s1: 2, o0: 3})

    # Without members every partition's offset may go.
    await admin.delete_consumer_group_offsets(group, [s1])
    assert await admin.list_consumer_group_offsets(group) == {
        s0: OffsetAndMetadata(1, ""),
        o0: OffsetAndMetadata(3, ""),
    }

    async with AIOKafkaConsumer(
        subscribed, bootstrap_servers=bootstrap_servers, group_id=group, enable_auto_commit=False
    ) as member:
        for _ in range(150):
            if member.assignment():
                break
            await asyncio.sleep(0.1)
        assert member.assignment(), "never assigned"
        # A topic the live group consumes keeps its offsets; another topic's go.
        with pytest.raises(Errors.GroupSubscribedToTopicError, match=f"{group}.*{subscribed}"):
            await admin.delete_consumer_group_offsets(group, [s0])
        await admin.delete_consumer_group_offsets(group, [o0])
        remaining = await admin.list_consumer_group_offsets(group)
    assert o0 not in remaining and remaining[s0] == OffsetAndMetadata(1, "")

    unknown = f"fk-nogroup-{uuid.uuid4().hex[:10]}"
    with pytest.raises(Errors.GroupIdNotFound, match=unknown):
        await admin.delete_consumer_group_offsets(unknown, [o0])
