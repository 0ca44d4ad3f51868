"""The records of a share fetch that are this member's: those inside its acquired ranges, with
the range's delivery count; the acquired offsets without a record are gaps to acknowledge."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ferrokafka.share.acquired import split_acquired


def records(*offsets: int) -> list[Any]:
    return [SimpleNamespace(offset=o) for o in offsets]


def rng(first: int, last: int, count: int) -> Any:
    return {"first_offset": first, "last_offset": last, "delivery_count": count}


def test_only_records_in_acquired_ranges_are_held_with_their_counts() -> None:
    rs = records(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
    held, gaps = split_acquired(rs, [rng(6, 7, 3), rng(2, 4, 1)])
    assert [(r.offset, c) for r, c in held] == [(2, 1), (3, 1), (4, 1), (6, 3), (7, 3)]
    assert gaps == []


def test_acquired_offsets_without_records_are_gaps() -> None:
    # 3 is a control record the decoder dropped; 8-9 past the batch's records (aborted data).
    rs = records(1, 2, 4, 5, 7)
    held, gaps = split_acquired(rs, [rng(1, 5, 2), rng(7, 9, 1)])
    assert [(r.offset, c) for r, c in held] == [(1, 2), (2, 2), (4, 2), (5, 2), (7, 1)]
    assert gaps == [3, 8, 9]


def test_nothing_acquired_or_nothing_decoded() -> None:
    assert split_acquired(records(0, 1), []) == ([], [])
    held, gaps = split_acquired([], [rng(10, 12, 1)])
    assert held == [] and gaps == [10, 11, 12]
    # A malformed (empty) range is ignored rather than trusted.
    assert split_acquired(records(5), [rng(6, 5, 1)]) == ([], [])


def test_offsets_from_a_function() -> None:
    held, gaps = split_acquired([10, 12], [rng(10, 12, 4)], offset_of=lambda o: o)
    assert held == [(10, 4), (12, 4)] and gaps == [11]
