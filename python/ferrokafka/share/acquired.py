"""Which records of a ShareFetch response are this member's (KIP-932).

A share fetch answers each partition with record batches and, separately, the offset ranges
the member has just acquired, each with its delivery count. The batches may hold records
outside those ranges (another member holds them, or they were acknowledged already): those
are not handed out. Offsets inside an acquired range that hold no record for the application
(control batches, aborted transactional data, compacted-away offsets) must still be answered
for: they are acknowledged as gaps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .._native import AcquiredRecords

__all__ = ["split_acquired"]

R = TypeVar("R")


def split_acquired(
    records: Sequence[R],
    acquired: Sequence[AcquiredRecords],
    offset_of: Callable[[R], int] | None = None,
) -> tuple[list[tuple[R, int]], list[int]]:
    """``(records held, each with its delivery count; offsets to acknowledge as gaps)``, both
    by ascending offset. ``records`` are one partition's decoded records in offset order;
    ``offset_of(record)`` gives an offset (default: ``record.offset``)."""
    get: Callable[[Any], int] = offset_of if offset_of is not None else _offset
    ranges = sorted(
        (r["first_offset"], r["last_offset"], r["delivery_count"])
        for r in acquired
        if r["last_offset"] >= r["first_offset"]
    )
    held: list[tuple[R, int]] = []
    gaps: list[int] = []
    i = 0
    for first, last, count in ranges:
        # Records before this range are not ours; those inside it are, in order.
        while i < len(records) and get(records[i]) < first:
            i += 1
        expected = first
        while i < len(records) and get(records[i]) <= last:
            offset = get(records[i])
            gaps.extend(range(expected, offset))
            held.append((records[i], count))
            expected = offset + 1
            i += 1
        gaps.extend(range(expected, last + 1))
    return held, gaps


def _offset(record: Any) -> int:
    offset: int = record.offset
    return offset
