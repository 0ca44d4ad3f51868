"""structs.py mirrors aiokafka's structs: names, field names and order, behaviour."""

from __future__ import annotations

import dataclasses

import aiokafka.structs as aio
import pytest
from ferrokafka import structs

TUPLES = ["TopicPartition", "BrokerMetadata", "PartitionMetadata", "OffsetAndMetadata",
          "RecordMetadata", "OffsetAndTimestamp"]  # fmt: skip


@pytest.mark.parametrize("name", TUPLES)
def test_named_tuple_fields_match(name: str) -> None:
    assert getattr(structs, name)._fields == getattr(aio, name)._fields


def test_consumer_record_fields_match() -> None:
    ours = [f.name for f in dataclasses.fields(structs.ConsumerRecord)]
    theirs = [f.name for f in dataclasses.fields(aio.ConsumerRecord)]
    assert ours == theirs


def test_topic_partition_behaves_like_a_tuple_key() -> None:
    tp = structs.TopicPartition("t", 1)
    assert tp == ("t", 1) == aio.TopicPartition("t", 1)
    assert {tp: 1}[structs.TopicPartition("t", 1)] == 1
    assert sorted([structs.TopicPartition("t", 2), tp]) == [tp, structs.TopicPartition("t", 2)]
    assert structs.ConsumerRecord[bytes, bytes] is not None  # generic like aiokafka's
