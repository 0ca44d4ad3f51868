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


def test_consumer_record_fields_match_in_order() -> None:
    names = [f.name for f in dataclasses.fields(aio.ConsumerRecord)]
    values = ["t", 1, 2, 3, 0, b"k", b"v", 4, 1, 1, (("h", b"x"),)]
    positional = structs.ConsumerRecord(*values)
    keywords = structs.ConsumerRecord(**dict(zip(names, values, strict=True)))
    for name, value in zip(names, values, strict=True):
        assert getattr(positional, name) == value, name
    assert positional == keywords
    assert positional != structs.ConsumerRecord(*values[:2], 99, *values[3:])
    assert repr(positional).startswith("ConsumerRecord(topic='t', partition=1, offset=2,")
    positional.value = b"changed"  # mutable, like aiokafka's dataclass
    assert positional.value == b"changed"


def test_consumer_record_fields_are_members_that_own_their_values() -> None:
    """Fields are CPython member descriptors over the native struct: writes replace the old
    object (and release it), ints stay ints, deletes behave as on a dataclass."""
    import sys

    record = structs.ConsumerRecord("t", 1, 2, 3, 0, b"k", b"v", None, 1, 1, ())
    payload = object()
    before = sys.getrefcount(payload)
    record.value = payload
    assert record.value is payload
    assert sys.getrefcount(payload) == before + 1
    record.value = b"other"
    assert sys.getrefcount(payload) == before  # the record let go of it
    record.offset = 2**62
    record.partition = -1
    assert (record.offset, record.partition) == (2**62, -1)
    with pytest.raises(TypeError):
        record.offset = "not an int"  # type: ignore[assignment]
    with pytest.raises(OverflowError):
        record.partition = 2**70
    del record.key
    with pytest.raises(AttributeError):
        _ = record.key
    del record  # a record with a deleted field is freed without trouble


def test_topic_partition_behaves_like_a_tuple_key() -> None:
    tp = structs.TopicPartition("t", 1)
    assert tp == ("t", 1) == aio.TopicPartition("t", 1)
    assert {tp: 1}[structs.TopicPartition("t", 1)] == 1
    assert sorted([structs.TopicPartition("t", 2), tp]) == [tp, structs.TopicPartition("t", 2)]
    assert structs.ConsumerRecord[bytes, bytes] is not None  # generic like aiokafka's
