"""The partitioner: Java-compatible murmur2 for keys, KIP-480/KIP-794 stickiness for unkeyed
records."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from ferrokafka.partitioner import DefaultPartitioner, StickyPartitions, murmur2, partition_for_key

# Apache Kafka's own vectors (clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java,
# testMurmur2), as signed 32-bit ints.
KAFKA_UTILS_TEST_VECTORS = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]

# Computed with the Java client (kafka-clients 4.2.0): Utils.murmur2(key) and
# BuiltInPartitioner.partitionForKey(key, n) for n = 3, 7 and 12, keys as UTF-8.
JAVA_PARTITIONS = [
    (b"", 275646681, 0, 2, 9),
    (b"a", -1563381124, 1, 5, 4),
    (b"ab", 316155434, 2, 0, 2),
    (b"abc", 479470107, 0, 4, 3),
    (b"abcd", -1323649548, 2, 5, 8),
    (b"key-0", 29210041, 1, 0, 1),
    (b"key-1", 193331640, 0, 5, 0),
    (b"key-7", 713419675, 1, 3, 7),
    (b"key-42", -187086521, 0, 3, 3),
    (b"user-1234", -1663159204, 1, 2, 4),
    ("été".encode(), -2101193575, 1, 4, 1),
    (b"ferrokafka", 114580487, 2, 0, 11),
]
JAVA_BINARY_KEY = (bytes([0xFF, 0x00, 0x80, 0x7F, 0x01, 0xFE, 0x02]), -1218544377, 1)  # n = 7


@pytest.mark.parametrize(("data", "expected"), KAFKA_UTILS_TEST_VECTORS)
def test_murmur2_matches_kafka_utils_test(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


@pytest.mark.parametrize(("key", "hashed", "p3", "p7", "p12"), JAVA_PARTITIONS)
def test_keyed_partition_matches_the_java_client(
    key: bytes, hashed: int, p3: int, p7: int, p12: int
) -> None:
    assert murmur2(key) == hashed
    assert [partition_for_key(key, n) for n in (3, 7, 12)] == [p3, p7, p12]
    partitioner = DefaultPartitioner()
    for n, want in ((3, p3), (7, p7), (12, p12)):
        assert partitioner(key, list(range(n)), list(range(n))) == want
        # Unavailable partitions do not move a key (Java hashes over all partitions).
        assert partitioner(key, list(range(n)), [0]) == want


def test_binary_key_with_high_bytes() -> None:
    key, hashed, p7 = JAVA_BINARY_KEY
    assert murmur2(key) == hashed
    assert partition_for_key(key, 7) == p7


def test_unkeyed_default_partitioner_prefers_available_partitions() -> None:
    partitioner = DefaultPartitioner()
    assert {partitioner(None, [0, 1, 2, 3], [2]) for _ in range(50)} == {2}
    assert {partitioner(None, [0, 1, 2, 3], []) for _ in range(200)} == {0, 1, 2, 3}


def test_sticky_partition_holds_until_switched() -> None:
    sticky = StickyPartitions()
    first = sticky.current("t", [0, 1, 2, 3], [0, 1, 2, 3])
    assert all(sticky.current("t", [0, 1, 2, 3], [0, 1, 2, 3]) == first for _ in range(20))
    second = sticky.switch("t", first, [0, 1, 2, 3], [0, 1, 2, 3])
    assert second != first
    assert sticky.current("t", [0, 1, 2, 3], [0, 1, 2, 3]) == second
    # A stale switch (someone already moved on) keeps the current choice.
    assert sticky.switch("t", first, [0, 1, 2, 3], [0, 1, 2, 3]) == second
    # Topics are independent.
    assert sticky.current("u", [0], [0]) == 0


def test_sticky_switch_spreads_over_available_partitions() -> None:
    sticky = StickyPartitions()
    current = sticky.current("t", [0, 1, 2, 3], [1, 2, 3])
    seen = Counter()
    for _ in range(300):
        new = sticky.switch("t", current, [0, 1, 2, 3], [1, 2, 3])
        assert new != current and new in (1, 2, 3)
        seen[new] += 1
        current = new
    assert set(seen) == {1, 2, 3}
    assert sticky.switch("t", current, [0, 1], [1]) == 1, "one available partition: that one"
    assert sticky.switch("t", 1, [0, 1], []) in (0, 1), "none available: any partition"


def test_sticky_switch_waits_for_a_batchs_worth_of_bytes() -> None:
    """KIP-794: a completed batch of an idle partition moves the choice on only once
    ``batch_size`` bytes went to the partition since it was chosen (records each sent alone,
    a small transaction at a time, stay on one partition); a busy partition is left."""
    produced: Counter[tuple[str, int]] = Counter()
    busy: set[tuple[str, int]] = set()
    sticky = StickyPartitions(
        produced=lambda t, p: produced[t, p], busy=lambda t, p: (t, p) in busy, batch_size=1000
    )
    parts = [0, 1, 2, 3]
    first = sticky.current("t", parts, parts)
    for _ in range(9):
        produced["t", first] += 100
        assert sticky.switch("t", first, parts, parts) == first
    produced["t", first] += 100
    # Bytes that went to a partition before it was chosen do not count for it.
    for p in parts:
        produced["t", p] += 0 if p == first else 5000
    second = sticky.switch("t", first, parts, parts)
    assert second != first
    produced["u", second] += 5000  # another topic's
    assert sticky.current("t", parts, parts) == second
    produced["t", second] += 999
    assert sticky.switch("t", second, parts, parts) == second
    produced["t", second] += 1
    third = sticky.switch("t", second, parts, parts)
    assert third != second
    # A partition with a batch still on its way is left at once: the next batch goes in
    # parallel instead of queueing behind it.
    busy.add(("t", third))
    fourth = sticky.switch("t", third, parts, parts)
    assert fourth != third
    # A partition that lost its leader (not available) is left too.
    others = [p for p in parts if p != fourth]
    assert sticky.switch("t", fourth, parts, others) in others


def test_random_choices_leave_the_random_modules_shared_state_alone() -> None:
    """An application that seeds ``random`` gets the same sequence with ferrokafka drawing its
    own random choices (partitions, backoff jitter) in between."""
    from ferrokafka.client import _Backoff

    random.seed(36)
    before = random.getstate()
    partitioner, sticky, backoff = DefaultPartitioner(), StickyPartitions(), _Backoff(100, 1000)
    picked = {partitioner(None, [0, 1, 2, 3], [0, 1, 2, 3]) for _ in range(50)}
    sticky.switch("t", sticky.current("t", [0, 1, 2], [0, 1, 2]), [0, 1, 2], [0, 1, 2])
    backoff.failed(1)
    assert len(picked) > 1, "the partitioner chose at random"
    assert random.getstate() == before
