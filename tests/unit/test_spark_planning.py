"""Splitting offset ranges into Spark tasks, and the streaming rate limit, by Spark's rules."""

from __future__ import annotations

import itertools

import pytest
from ferrokafka.spark.planning import OffsetRange, split_ranges
from ferrokafka.spark.streaming import backlog, fill_new, from_json, rate_limit, to_json
from ferrokafka.structs import TopicPartition


def r(partition: int, start: int, end: int, topic: str = "t") -> OffsetRange:
    return OffsetRange(topic, partition, start, end)


def test_one_task_per_partition_by_default_and_empty_ranges_dropped() -> None:
    ranges = [r(0, 0, 10), r(1, 5, 5), r(2, 3, 4)]
    assert split_ranges(ranges, None, None) == [r(0, 0, 10), r(2, 3, 4)]
    assert split_ranges(ranges, 2, None) == [r(0, 0, 10), r(2, 3, 4)]


def test_min_partitions_splits_large_ranges_in_proportion() -> None:
    # Spark: 4 ranges of 1000 + 1 of 10, minPartitions 9: the small one stays whole and the
    # large ones share the other 8 tasks (2 each).
    ranges = [r(p, 0, 1000) for p in range(4)] + [r(4, 0, 10)]
    out = split_ranges(ranges, 9, None)
    assert out.count(r(4, 0, 10)) == 1
    for p in range(4):
        assert [x for x in out if x.partition == p] == [r(p, 0, 500), r(p, 500, 1000)]
    assert len(out) == 9


def test_min_partitions_pieces_cover_the_range_exactly() -> None:
    out = split_ranges([r(0, 7, 107)], 3, None)
    assert out == [r(0, 7, 40), r(0, 40, 73), r(0, 73, 107)]
    assert sum(x.size for x in out) == 100


def test_max_records_per_partition_caps_every_task() -> None:
    out = split_ranges([r(0, 0, 25), r(1, 0, 9)], None, 10)
    assert out == [r(0, 0, 8), r(0, 8, 16), r(0, 16, 25), r(1, 0, 9)]
    # Both: maxRecordsPerPartition first, then minPartitions on what it made.
    both = split_ranges([r(0, 0, 20)], 4, 10)
    assert len(both) == 4 and sum(x.size for x in both) == 20


@pytest.mark.parametrize("size", [1, 2, 3, 17, 1000, 12345])
@pytest.mark.parametrize("parts", [1, 2, 5, 64])
def test_splits_are_contiguous(size: int, parts: int) -> None:
    out = split_ranges([r(0, 100, 100 + size), r(1, 0, 1)], parts, None)
    zero = [x for x in out if x.partition == 0]
    assert zero[0].from_offset == 100 and zero[-1].until_offset == 100 + size
    assert all(a.until_offset == b.from_offset for a, b in itertools.pairwise(zero))
    assert all(x.size > 0 for x in out)


def test_rate_limit_shares_in_proportion_to_backlog() -> None:
    a, b, c = (TopicPartition("t", p) for p in range(3))
    start = {a: 0, b: 100, c: 50}
    latest = {a: 900, b: 200, c: 50}
    out = rate_limit(start, latest, 100)
    assert out == {a: 90, b: 110, c: 50}
    assert backlog(start, out) <= 100
    # A partition whose share is below one offset still moves by one.
    tiny = rate_limit({a: 0, b: 0}, {a: 10_000, b: 1}, 100)
    assert tiny == {a: 99, b: 1}
    # Under the limit: everything.
    assert rate_limit(start, latest, 10_000) == latest


def test_checkpoint_offsets_round_trip_in_sparks_form() -> None:
    offsets = {TopicPartition("a", 1): 5, TopicPartition("a", 0): 3, TopicPartition("b", 0): 0}
    as_json = to_json(offsets)
    assert as_json == {"a": {"0": 3, "1": 5}, "b": {"0": 0}}
    assert from_json(as_json) == offsets
    new = TopicPartition("c", 0)
    assert fill_new(offsets, {new: 7, TopicPartition("a", 0): 0})[new] == 7
    assert fill_new(offsets, {TopicPartition("a", 0): 0})[TopicPartition("a", 0)] == 3
