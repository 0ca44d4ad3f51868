"""Choosing a partition for a record, as the Java client does.

Keyed records go to ``toPositive(murmur2(key)) % partition_count`` (Kafka's
``Utils.murmur2``, seed ``0x9747b28c``), so a key lands on the same partition whichever client
wrote it. ``DefaultPartitioner`` keeps aiokafka's call signature
``partitioner(key_bytes, all_partitions, available_partitions)``; for unkeyed records that
signature gives it no topic, so it picks at random, as aiokafka's does.

The producer itself does better for unkeyed records when the default partitioner is in use:
``StickyPartitions`` keeps one partition per topic while the batch being filled for it is
open (KIP-480). When it is complete (full or sent) the next record moves to another available
partition if a batch's worth of bytes went to this one (KIP-794, as the Java client does) or
if one of its batches is still on its way (moving then sends in parallel what would otherwise
queue behind it). That fills batches instead of spreading single records over every
partition, and keeps small bursts whose batches were answered (records each awaited, a
transaction of a few records) on one partition instead of a new one each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import _native
from ._rng import rng

__all__ = ["DefaultPartitioner", "StickyPartitions", "murmur2", "partition_for_key"]


def murmur2(data: bytes) -> int:
    """MurmurHash2 of ``data`` as Kafka's Java client computes it, as a signed 32-bit int
    (computed in the native module)."""
    return _native.murmur2(data)


_SIGN_CLEARED = 0x7FFFFFFF
"""The murmur2 hash with its sign bit cleared, as the Java client's ``Utils.toPositive``."""


def partition_for_key(key: bytes, partition_count: int) -> int:
    """The partition the Java client's default partitioner picks for ``key``."""
    return (murmur2(key) & _SIGN_CLEARED) % partition_count


class DefaultPartitioner:
    """aiokafka's default partitioner: murmur2 of the key (Java-compatible), random among the
    available partitions for records without a key.

    ``all_partitions`` must be the topic's partition ids in ascending order (the producer
    passes them so), which makes the index the partition number as in Java.
    """

    def __call__(
        self,
        key: bytes | None,
        all_partitions: Sequence[int],
        available: Sequence[int],
    ) -> int:
        if key is None:
            return rng.choice(available or all_partitions)
        return all_partitions[partition_for_key(key, len(all_partitions))]


class StickyPartitions:
    """The sticky choice for unkeyed records, one partition per topic (KIP-480, with KIP-794's
    switch).

    ``current`` gives the topic's partition, choosing one on first use; ``switch`` is called
    when that partition's batch was completed (full or sent). With ``produced`` (the bytes
    appended to a topic partition so far), ``busy`` (whether a batch of it is still on its
    way) and ``batch_size``, it stays on an idle partition until ``batch_size`` bytes went to
    it since it was chosen; without them it moves at every completed batch. A new choice is
    random among the available partitions other than the previous, or among all partitions
    when none is available. The choices are kept in ``open_batches`` (the producer's table of
    open batches, whose shortcut sends unkeyed records to the chosen partition), or in a table
    of this object's own.
    """

    def __init__(
        self,
        open_batches: _native.OpenBatches | None = None,
        *,
        produced: Callable[[str, int], int] | None = None,
        busy: Callable[[str, int], bool] | None = None,
        batch_size: int = 0,
    ) -> None:
        self._table = open_batches if open_batches is not None else _native.OpenBatches(0)
        self._produced = produced
        self._busy = busy
        self._batch_size = batch_size
        self._since: dict[str, int] = {}
        """Per topic, what ``produced`` said of the sticky partition when it was chosen."""

    def current(self, topic: str, all_partitions: Sequence[int], available: Sequence[int]) -> int:
        partition = self._table.sticky(topic)
        if partition is None or partition not in all_partitions:
            partition = self._choose(all_partitions, available, None)
            self._stick(topic, partition)
        return partition

    def switch(
        self, topic: str, previous: int, all_partitions: Sequence[int], available: Sequence[int]
    ) -> int:
        """Move off ``previous`` (unless another caller already moved, or it is idle and less
        than a batch's worth went to it), return the choice."""
        partition = self._table.sticky(topic)
        if partition is None or partition == previous:
            produced, busy = self._produced, self._busy
            if (
                produced is not None
                and busy is not None
                and partition is not None
                and partition in all_partitions
                and (partition in available or not available)
                and not busy(topic, partition)
                and produced(topic, partition) - self._since.get(topic, 0) < self._batch_size
            ):
                return partition
            partition = self._choose(all_partitions, available, previous)
            self._stick(topic, partition)
        return partition

    def _stick(self, topic: str, partition: int) -> None:
        self._table.stick(topic, partition)
        if self._produced is not None:
            self._since[topic] = self._produced(topic, partition)

    @staticmethod
    def _choose(
        all_partitions: Sequence[int], available: Sequence[int], previous: int | None
    ) -> int:
        if len(available) == 1:
            return available[0]
        if not available:
            return rng.choice(all_partitions)
        choices = [p for p in available if p != previous]
        return rng.choice(choices or available)
