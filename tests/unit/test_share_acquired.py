"""The records of a share fetch that are this member's (the Rust core's split): those inside
its acquired ranges, each given the range's delivery count; the acquired offsets without a
record are gap runs to acknowledge; bad input is a typed error, never a crash."""

from __future__ import annotations

from typing import Any

import pytest
from ferrokafka.records import decode_records, encode_batch, split_acquired
from ferrokafka.share.fetched import split_acquired_offsets


def records(*offsets: int) -> list[Any]:
    """Decoded records at these offsets (ascending)."""
    out: list[Any] = []
    for offset in offsets:
        raw = encode_batch([(1, None, b"v%d" % offset, [])], base_offset=offset)
        out += decode_records(raw, "t", 0).records
    return out


def test_only_records_in_acquired_ranges_are_held_with_their_counts() -> None:
    rs = records(0, 1, 2, 3, 4, 5, 6, 7, 8)
    held, runs, gaps = split_acquired(rs, [(6, 7, 3), (2, 4, 1)])
    assert [(r.offset, r.delivery_count) for r in held] == [
        (2, 1),
        (3, 1),
        (4, 1),
        (6, 3),
        (7, 3),
    ]
    assert runs == [(2, 4), (6, 7)] and gaps == []
    assert rs[0].delivery_count is None  # not held: untouched


def test_when_every_record_is_held_the_list_itself_comes_back() -> None:
    rs = records(3, 4, 5, 6)
    held, runs, gaps = split_acquired(rs, [(5, 9, 2), (3, 4, 1)])
    assert held is rs  # the usual case: no second list of the same records
    assert [(r.offset, r.delivery_count) for r in held] == [(3, 1), (4, 1), (5, 2), (6, 2)]
    assert runs == [(3, 6)] and gaps == [(7, 9)]
    partly = records(3, 4, 5)
    held, _, _ = split_acquired(partly, [(4, 5, 1)])
    assert held is not partly and [r.offset for r in held] == [4, 5]
    assert [r.offset for r in partly] == [3, 4, 5]  # the caller's list is left as it was


def test_acquired_offsets_without_records_are_gap_runs() -> None:
    rs = records(2, 3, 8)  # 0-1 and 4-7 hold no record (control batch, aborted data)
    held, runs, gaps = split_acquired(rs, [(0, 5, 2), (7, 9, 1)])
    assert [(r.offset, r.delivery_count) for r in held] == [(2, 2), (3, 2), (8, 1)]
    assert runs == [(2, 3), (8, 8)]
    assert gaps == [(0, 1), (4, 5), (7, 7), (9, 9)]


def test_nothing_acquired_or_nothing_decoded() -> None:
    assert split_acquired(records(0, 1), []) == ([], [], [])
    assert split_acquired([], [(10, 12, 1)]) == ([], [], [(10, 12)])
    assert split_acquired(records(5), [(6, 5, 1)]) == ([], [], [])  # an empty range


def test_a_hostile_range_is_a_run_not_an_offset_each() -> None:
    held, _, gaps = split_acquired(records(5), [(0, 2**63 - 1, 1)])
    assert [r.offset for r in held] == [5]
    assert gaps == [(0, 4), (6, 2**63 - 1)]


def test_bad_input_is_a_typed_error() -> None:
    with pytest.raises(TypeError, match="ConsumerRecord"):
        split_acquired([object()], [(0, 1, 1)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least 1"):
        split_acquired(records(0), [(0, 0, 0)])  # a delivery count of 0
    with pytest.raises(OverflowError):
        split_acquired(records(0), [(0, 0, -1)])


def test_bare_offsets_give_row_spans() -> None:
    spans, runs, gaps = split_acquired_offsets([10, 11, 12, 14], [(11, 15, 2)])
    assert spans == [(1, 4, 2)]
    assert runs == [(11, 12), (14, 14)] and gaps == [(13, 13), (15, 15)]
