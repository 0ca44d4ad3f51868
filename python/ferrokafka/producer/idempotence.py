"""The idempotent producer's identity and per-partition sequence numbers. No I/O here.

The broker keeps, per producer id and partition, the sequence of the last batch it appended; a
batch whose base sequence is not the next one is refused with OUT_OF_ORDER_SEQUENCE_NUMBER, a
re-sent batch it already has is acknowledged as a duplicate. Sequences are assigned when the
sender first takes a batch and stay with it through retries.
"""

from __future__ import annotations

from ..structs import TopicPartition

__all__ = ["ProducerIdState", "next_sequence"]

_SEQUENCE_MASK = 0x7FFFFFFF
"""Sequences are int32s from 0 that wrap past Integer.MAX_VALUE to 0: arithmetic on them is
modulo 2**31."""
_HALF_SEQUENCE_SPACE = 0x40000000
"""In that wrapping space, a sequence less than this far behind another (2**30, half of it) is
before it; the other half is after it."""


def next_sequence(sequence: int, increment: int) -> int:
    """``sequence + increment`` wrapping past Integer.MAX_VALUE to 0, as the Java client does."""
    return (sequence + increment) & _SEQUENCE_MASK


class ProducerIdState:
    """Producer id, epoch and the sequence bookkeeping of every partition written to."""

    def __init__(self) -> None:
        self.producer_id = -1
        self.producer_epoch = -1
        self._next: dict[TopicPartition, int] = {}
        self._last_acked: dict[TopicPartition, int] = {}

    @property
    def has_pid(self) -> bool:
        return self.producer_id >= 0

    def set_pid(self, producer_id: int, producer_epoch: int) -> None:
        """A new identity: every partition's sequence starts again at 0."""
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self._next.clear()
        self._last_acked.clear()

    def peek(self, tp: TopicPartition) -> int:
        """The base sequence ``assign`` would give the next batch of ``tp``, not reserved."""
        return self._next.get(tp, 0)

    def assign(self, tp: TopicPartition, record_count: int) -> int:
        """The base sequence of the next batch for ``tp`` (and reserve ``record_count``)."""
        base = self._next.get(tp, 0)
        self._next[tp] = next_sequence(base, record_count)
        return base

    def acked(self, tp: TopicPartition, base_sequence: int, record_count: int) -> None:
        self._last_acked[tp] = next_sequence(base_sequence, record_count - 1)

    def acknowledged(self, tp: TopicPartition) -> bool:
        """Whether the broker has acknowledged a batch of ``tp`` under this producer id: until
        then it holds no sequence state for it and appends a first batch whatever its
        sequence, so a later batch could land ahead of an earlier one being retried."""
        return tp in self._last_acked

    def behind_acked(self, tp: TopicPartition, base_sequence: int) -> bool:
        """Whether ``base_sequence`` is at or before the last acknowledged sequence of ``tp``:
        the broker has appended batches numbered after it, so it can never be appended under
        this producer id."""
        last = self._last_acked.get(tp)
        return last is not None and (last - base_sequence) & _SEQUENCE_MASK < _HALF_SEQUENCE_SPACE

    def is_next_expected(self, tp: TopicPartition, base_sequence: int) -> bool:
        """Whether ``base_sequence`` directly follows the last acknowledged batch: an
        out-of-order refusal of such a batch cannot be explained by a batch still in flight."""
        last = self._last_acked.get(tp)
        return base_sequence == (0 if last is None else next_sequence(last, 1))
