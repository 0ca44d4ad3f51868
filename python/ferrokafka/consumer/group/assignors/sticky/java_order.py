"""``java.util.HashMap`` iteration order, which Java's sticky assignor's tie-breaking depends on
(which member keeps a full quota; which of several moved partitions moves back)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .....structs import TopicPartition

__all__ = ["JavaHashOrder", "java_hashmap_order", "java_string_hash", "java_tp_hash"]


def java_string_hash(s: str) -> int:
    h = 0
    raw = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(raw), 2):
        h = (31 * h + ((raw[i] << 8) | raw[i + 1])) & 0xFFFFFFFF
    return h


def java_tp_hash(tp: TopicPartition) -> int:
    return (31 * (31 + tp.partition) + java_string_hash(tp.topic)) & 0xFFFFFFFF


class JavaHashOrder:
    """The iteration order of a ``java.util.HashMap``/``HashSet`` created with the default
    capacity: by bucket (``(h ^ h >>> 16) & (capacity - 1)``), then by insertion within a bucket.
    The table doubles when the size exceeds 3/4 of it, or when a bucket reaches 9 entries while
    the table is below 64; it never shrinks. (Buckets Java would turn into trees, 9+ colliding
    entries in a table of 64+, are ordered by insertion here.)"""

    __slots__ = ("_capacity", "_entries", "_seq")

    def __init__(self) -> None:
        self._capacity = 16
        self._entries: dict[Any, tuple[int, int]] = {}  # key -> (spread hash, insertion seq)
        self._seq = 0

    def _bucket(self, spread: int) -> int:
        return spread & (self._capacity - 1)

    def add(self, key: Any, h: int) -> None:
        if key in self._entries:
            return
        spread = h ^ (h >> 16)
        bucket = self._bucket(spread)
        in_bucket = sum(1 for s, _ in self._entries.values() if self._bucket(s) == bucket)
        self._entries[key] = (spread, self._seq)
        self._seq += 1
        if in_bucket >= 8 and self._capacity < 64:
            self._capacity *= 2  # treeifyBin on a small table resizes instead
        if len(self._entries) > self._capacity * 3 // 4:
            self._capacity *= 2

    def discard(self, key: Any) -> None:
        self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def ordered(self) -> list[Any]:
        return sorted(
            self._entries, key=lambda k: (self._bucket(self._entries[k][0]), self._entries[k][1])
        )

    def first(self) -> Any:
        return min(
            self._entries, key=lambda k: (self._bucket(self._entries[k][0]), self._entries[k][1])
        )


def java_hashmap_order(keys: Iterable[str]) -> list[str]:
    """String keys in the order a new ``HashMap`` iterates them after inserting ``keys``."""
    order = JavaHashOrder()
    for k in keys:
        order.add(k, java_string_hash(k))
    return order.ordered()
