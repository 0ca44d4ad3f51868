"""Commits of explicit offsets and ``committed`` without group membership (OffsetCommit and
OffsetFetch with generation -1), against the real broker."""

from __future__ import annotations

from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka import errors as Errors

from .produce_util import produce_values
from .test_consumer import drain

pytestmark = [pytest.mark.integration, pytest.mark.core]


async def test_commit_and_committed_without_membership(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    await produce_values(bootstrap_servers, topic, 2, 20)
    a, b = TopicPartition(topic, 0), TopicPartition(topic, 1)
    group = f"g-{topic}"
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, group_id=group, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([a, b])
        assert await consumer.committed(a) is None
        await drain(consumer, 40)
        await consumer.commit({a: 7, b: (9, "meta")})
        assert await consumer.committed(a) == 7
        assert await consumer.committed(b) == 9
        await consumer.commit()  # the positions
        assert await consumer.committed(a) == 20
        with pytest.raises(Errors.IllegalStateError):
            await consumer.commit({TopicPartition(topic, 5): 1})
        with pytest.raises(ValueError):
            await consumer.commit({a: "x"})  # type: ignore[dict-item]
        await consumer.commit({a: 3})
        assert await consumer.seek_to_committed(a) == {a: 3}
        assert await consumer.position(a) == 3

    # A new consumer of the same group starts at the committed offsets.
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, group_id=group, auto_offset_reset="none"
    ) as consumer:
        consumer.assign([a, b])
        assert await consumer.position(a) == 3
        assert await consumer.position(b) == 20

    async with AIOKafkaConsumer(bootstrap_servers=bootstrap_servers) as consumer:
        consumer.assign([a])
        with pytest.raises(Errors.IllegalOperation, match="group_id"):
            await consumer.commit()
        with pytest.raises(Errors.IllegalOperation):
            await consumer.committed(a)
