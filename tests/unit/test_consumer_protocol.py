"""ConsumerProtocol Subscription and Assignment encoding: hand-checked bytes, round trips for every
version, Java's reading rules (newer versions read with the v3 layout, older versions give field
defaults), compatibility with aiokafka's classes, and hostile input (every truncation, random
garbage, absurd counts) raising only the typed decode error."""

from __future__ import annotations

import random
import struct

import pytest
from aiokafka.coordinator import protocol as aio
from ferrokafka.consumer.group.subscription import (
    ConsumerProtocol,
    ConsumerProtocolDecodeError,
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from ferrokafka.errors import KafkaProtocolError, ProtocolDecodeError
from ferrokafka.structs import TopicPartition


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def full_subscription(version: int) -> ConsumerProtocolMemberMetadata:
    return ConsumerProtocolMemberMetadata(
        version, ["b", "a\u00e9"], b"\x01\x02", [tp("x", 2), tp("x", 1), tp("w", 0)], 7, "rack-1"
    )


def test_subscription_v0_bytes() -> None:
    meta = ConsumerProtocolMemberMetadata(0, ["t1", "t0"], b"ud")
    assert (
        meta.encode()
        == (
            b"\x00\x00"  # version
            b"\x00\x00\x00\x02" + b"\x00\x02t0" + b"\x00\x02t1"  # topics, sorted as Java sends them
            b"\x00\x00\x00\x02ud"  # user data
        )
    )


def test_subscription_v3_bytes() -> None:
    assert (
        full_subscription(3).encode()
        == (
            b"\x00\x03"
            b"\x00\x00\x00\x02" + b"\x00\x03a\xc3\xa9" + b"\x00\x01b"
            b"\x00\x00\x00\x02\x01\x02"
            # owned partitions sorted by topic then partition, grouped per topic
            b"\x00\x00\x00\x02"
            b"\x00\x01w\x00\x00\x00\x01\x00\x00\x00\x00"
            b"\x00\x01x\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x02"
            b"\x00\x00\x00\x07"  # generation
            b"\x00\x06rack-1"
        )
    )


def test_null_user_data_and_rack() -> None:
    meta = ConsumerProtocolMemberMetadata(3, [], None, [], -1, None)
    assert meta.encode() == b"\x00\x03" + b"\x00\x00\x00\x00" + b"\xff\xff\xff\xff" + (
        b"\x00\x00\x00\x00" + b"\xff\xff\xff\xff" + b"\xff\xff"
    )
    assert ConsumerProtocolMemberMetadata.decode(meta.encode()) == meta


@pytest.mark.parametrize("version", range(4))
def test_subscription_round_trip_every_version(version: int) -> None:
    meta = full_subscription(version)
    decoded = ConsumerProtocolMemberMetadata.decode(meta.encode())
    assert decoded.version == version
    assert decoded.subscription == ["a\u00e9", "b"]
    assert decoded.user_data == b"\x01\x02"
    # Fields the version lacks are not written and come back as their defaults.
    owned = [tp("w", 0), tp("x", 1), tp("x", 2)]
    assert decoded.owned_partitions == (owned if version >= 1 else [])
    assert decoded.partitions() == decoded.owned_partitions
    assert decoded.generation_id == (7 if version >= 2 else -1)
    assert decoded.rack_id == ("rack-1" if version >= 3 else None)
    assert decoded.encode() == ConsumerProtocolMemberMetadata.decode(decoded.encode()).encode()


@pytest.mark.parametrize("version", range(4))
def test_assignment_round_trip_every_version(version: int) -> None:
    a = ConsumerProtocolMemberAssignment.from_partitions(
        [tp("t1", 3), tp("t0", 0), tp("t1", 1)], b"ud", version
    )
    # Grouped per topic in first-appearance order, partitions in the given order (Java's).
    assert a.assignment == [("t1", [3, 1]), ("t0", [0])]
    raw = a.encode()
    assert raw == (
        struct.pack(">h", version)
        + b"\x00\x00\x00\x02"
        + b"\x00\x02t1\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x01"
        + b"\x00\x02t0\x00\x00\x00\x01\x00\x00\x00\x00"
        + b"\x00\x00\x00\x02ud"
    )
    decoded = ConsumerProtocolMemberAssignment.decode(raw)
    assert decoded == a
    assert decoded.partitions() == [tp("t1", 3), tp("t1", 1), tp("t0", 0)]


def test_empty_assignment_with_null_user_data() -> None:
    a = ConsumerProtocolMemberAssignment.from_partitions([])
    assert a.encode() == b"\x00\x03\x00\x00\x00\x00\xff\xff\xff\xff"
    assert ConsumerProtocolMemberAssignment.decode(a.encode()).user_data is None


def test_newer_versions_are_read_with_the_v3_layout() -> None:
    body = full_subscription(3).encode()[2:]
    decoded = ConsumerProtocolMemberMetadata.decode(b"\x00\x09" + body + b"more fields")
    assert decoded.version == 9
    assert (decoded.generation_id, decoded.rack_id) == (7, "rack-1")
    a = ConsumerProtocolMemberAssignment.from_partitions([tp("t", 0)], None, 3).encode()
    assert ConsumerProtocolMemberAssignment.decode(b"\x00\x05" + a[2:] + b"\x00").partitions() == [
        tp("t", 0)
    ]


def test_older_reader_rules_ignore_trailing_bytes() -> None:
    # A v0 reader of v0 bytes followed by anything (e.g. a v1 writer that lied) ignores the rest.
    raw = ConsumerProtocolMemberMetadata(0, ["t"], None).encode() + b"\x00\x00\x00\x00"
    assert ConsumerProtocolMemberMetadata.decode(raw).subscription == ["t"]


def test_encode_refuses_unknown_versions() -> None:
    with pytest.raises(ValueError):
        ConsumerProtocolMemberMetadata(4, ["t"]).encode()
    with pytest.raises(ValueError):
        ConsumerProtocolMemberAssignment(-1, []).encode()


def test_aiokafka_compatibility() -> None:
    # aiokafka writes v0 with empty user data; the bytes are the same, and each side reads the
    # other's (aiokafka reads the v0 prefix of a v3 Subscription).
    theirs = aio.ConsumerProtocolMemberMetadata(0, ["a", "b"], b"").encode()
    ours = ConsumerProtocolMemberMetadata(0, ["b", "a"], b"")
    assert ours.encode() == theirs
    assert ConsumerProtocolMemberMetadata.decode(theirs) == ConsumerProtocolMemberMetadata(
        0, ["a", "b"], b""
    )
    read = aio.ConsumerProtocolMemberMetadata.decode(full_subscription(3).encode())
    assert (read.version, read.subscription, read.user_data) == (3, ["a\u00e9", "b"], b"\x01\x02")

    assignment = aio.ConsumerProtocolMemberAssignment(0, [("t", [0, 1])], b"").encode()
    decoded = ConsumerProtocolMemberAssignment.decode(assignment)
    assert decoded.partitions() == [tp("t", 0), tp("t", 1)]
    assert decoded.encode() == assignment
    back = aio.ConsumerProtocolMemberAssignment.decode(decoded.encode())
    assert back.partitions() == [tp("t", 0), tp("t", 1)]
    assert ConsumerProtocol.PROTOCOL_TYPE == aio.ConsumerProtocol.PROTOCOL_TYPE == "consumer"


# -- hostile input -------------------------------------------------------------------------------


def test_decode_error_is_a_typed_protocol_error() -> None:
    assert issubclass(ConsumerProtocolDecodeError, ProtocolDecodeError)
    assert issubclass(ConsumerProtocolDecodeError, KafkaProtocolError)


@pytest.mark.parametrize("version", range(4))
def test_every_truncation_raises_the_typed_error(version: int) -> None:
    raw = full_subscription(version).encode()
    for n in range(len(raw)):
        with pytest.raises(ConsumerProtocolDecodeError):
            ConsumerProtocolMemberMetadata.decode(raw[:n])
    a = ConsumerProtocolMemberAssignment.from_partitions(
        [tp("t1", 3), tp("t0", 0)], b"ud", version
    ).encode()
    for n in range(len(a)):
        with pytest.raises(ConsumerProtocolDecodeError):
            ConsumerProtocolMemberAssignment.decode(a[:n])


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xff",  # negative version
        b"\x00\x00\xff\xff\xff\xff",  # null topics array
        b"\x00\x00\x7f\xff\xff\xff",  # 2 billion topics in no bytes
        b"\x00\x00\x00\x00\x00\x01\xff\xfe",  # a topic of length -2
        b"\x00\x00\x00\x00\x00\x01\x00\x02\xff\xfe\xff\xff\xff\xff",  # not UTF-8
        b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xfe",  # user data of length -2
        b"\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff\x7f\xff\xff\xff",  # absurd owned count
    ],
)
def test_malformed_subscriptions(raw: bytes) -> None:
    with pytest.raises(ConsumerProtocolDecodeError):
        ConsumerProtocolMemberMetadata.decode(raw)


def test_malformed_assignments() -> None:
    for raw in (
        b"\x80\x00",
        b"\x00\x00\x00\x00\x00\x01\x00\x01t\x7f\xff\xff\xff",  # absurd partition count
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10",  # user data longer than the buffer
    ):
        with pytest.raises(ConsumerProtocolDecodeError):
            ConsumerProtocolMemberAssignment.decode(raw)


def test_random_garbage_raises_only_the_typed_error() -> None:
    seeds = [full_subscription(3).encode(), full_subscription(1).encode()]
    seeds.append(ConsumerProtocolMemberAssignment.from_partitions([tp("a", 1)], b"x").encode())
    for seed in range(3000):
        rng = random.Random(seed)
        base = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):  # flip some bytes
            base[rng.randrange(len(base))] = rng.randrange(256)
        raw = bytes(base) if rng.random() < 0.8 else rng.randbytes(rng.randint(0, 40))
        for decoder in (
            ConsumerProtocolMemberMetadata.decode,
            ConsumerProtocolMemberAssignment.decode,
        ):
            try:
                decoder(raw)
            except ConsumerProtocolDecodeError:
                pass


def test_decode_accepts_bytearray_and_memoryview() -> None:
    raw = full_subscription(2).encode()
    expected = ConsumerProtocolMemberMetadata.decode(raw)
    assert ConsumerProtocolMemberMetadata.decode(bytearray(raw)) == expected
    assert ConsumerProtocolMemberMetadata.decode(memoryview(raw)) == expected
    with pytest.raises(TypeError):
        ConsumerProtocolMemberMetadata.decode("text")  # type: ignore[arg-type]
