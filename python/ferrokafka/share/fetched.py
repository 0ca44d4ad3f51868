"""One partition's answer to a ShareFetch, waiting to be handed out.

The records bytes are decoded when the application asks for them, in the form it asks for
(``ConsumerRecord``s or an Arrow batch), and only the records inside the acquired ranges are
handed out, each with its delivery count (records are made in Rust for those only). What was
handed out, the acquired offsets without a record (reported once, to be acknowledged as gaps)
and what is left when the consumer closes (to be released) come out as runs of offsets. A
record its deserializer refuses stops the decode: the records before it are handed out, then
the poll that comes to it raises (``ShareFetcher`` releases it), and the decode goes on after
it.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._native import batch_last_offsets, decode_held_records, split_acquired_offsets
from ..records import decode_columns
from ..structs import ConsumerRecord, TopicPartition
from .ledger import Runs

if TYPE_CHECKING:
    from .._native import AcquiredRecords, SharedBytes

__all__ = ["FetchedSharePartition"]


class FetchedSharePartition:
    def __init__(
        self,
        tp: TopicPartition,
        node: int,
        records: bytes | SharedBytes,
        acquired: list[AcquiredRecords],
        decoding: Mapping[str, Any],
    ) -> None:
        """``decoding``: the record decoder's keyword arguments, the consumer's
        ``check_crcs``, ``key_deserializer`` and ``value_deserializer``."""
        self.tp = tp
        self.node = node
        self._raw = records
        self._acquired = [
            (r["first_offset"], r["last_offset"], r["delivery_count"])
            for r in acquired
            if r["last_offset"] >= r["first_offset"]
        ]
        self._decoding = decoding
        self._next = min((first for first, _, _ in self._acquired), default=0)
        """Offsets below this were handed out (or are gaps)."""
        self._last = max((last for _, last, _ in self._acquired), default=-1)
        self._records: list[ConsumerRecord[Any, Any]] | None = None
        """The held records, once decoded as records; those from ``_at`` on not handed out."""
        self._at = 0
        self._arrow: tuple[Any, memoryview, list[tuple[int, int, int]]] | None = None
        """``(batch, row offsets, row spans (start, end, delivery count) not yet handed
        out)``, once decoded as Arrow."""
        self._held: Runs | None = None
        self._batch_ends: list[int] | None = None
        self._gaps_to = self._next
        """Gaps below this offset were reported."""
        self._refused: tuple[int, Exception] | None = None
        """A deserializer refused the record at this offset: the records before it are
        handed out first; then the poll that comes to it raises the error (``refused``)."""
        self.acquired_count = sum(last - first + 1 for first, last, _ in self._acquired)
        self.fetched_at = 0.0
        """When the response came (``time.monotonic()``; set by the fetcher)."""
        self.lock_s = 0.0
        self.expires_at = float("inf")
        """After this the records' locks may have run out: they are not handed out."""

    def __bool__(self) -> bool:
        return self._next <= self._last

    def remaining(self) -> int:
        """The acquired offsets not handed out yet (gaps included: a bound of the records)."""
        return max(0, self._last - self._next + 1)

    def _handed(self, last_offset: int | None, rest: int) -> None:
        if rest and last_offset is not None:
            self._next = last_offset + 1
        else:
            self._next = self._last + 1 if self._refused is None else self._refused[0]

    def _taken(self, first: int, last: int) -> Runs:
        """The held runs within ``first..=last``."""
        out: Runs = []
        for lo, hi in self._held or ():
            if hi >= first and lo <= last:
                out.append((max(lo, first), min(hi, last)))
        return out

    def _batch_end(self, offset: int) -> int:
        """The last offset of the record batch ``offset`` is in (``offset`` itself when no
        whole batch holds it)."""
        if self._batch_ends is None:
            self._batch_ends = batch_last_offsets(self._raw)
        at = bisect_left(self._batch_ends, offset)
        return self._batch_ends[at] if at < len(self._batch_ends) else offset

    def _split(self, held: Runs, gaps: Runs, through: int) -> Runs:
        """Keep a decode's held runs; its gap runs not reported yet (the decode covered the
        offsets below ``through``)."""
        self._held = held
        start = self._gaps_to
        self._gaps_to = max(start, through)
        return [(max(lo, start), hi) for lo, hi in gaps if hi >= start]

    def take_records(
        self, limit: int, whole_batch: bool = False
    ) -> tuple[list[ConsumerRecord[Any, Any]], Runs, Runs]:
        """``(up to limit records, each with its delivery count; their offsets as runs; gap
        runs newly found)``. With ``whole_batch``, past ``limit`` to the end of the record batch
        the limit falls in (Java's share consumer hands out records so: acknowledgements then
        come in whole batches)."""
        gaps: Runs = []
        self._arrow = None
        if self._records is None:
            held, held_runs, gap_runs, refused = decode_held_records(
                self._raw,
                self.tp.topic,
                self.tp.partition,
                self._acquired,
                start_offset=self._next,
                **self._decoding,
            )
            self._refused = refused
            through = self._last + 1 if refused is None else refused[0]
            gaps = self._split(held_runs, gap_runs, through)
            self._records = held
            self._at = 0
        records, at = self._records, self._at
        end = at + limit
        if whole_batch and at < end < len(records):
            last = self._batch_end(records[end - 1].offset)
            end = bisect_right(records, last, end, key=_offset)
        out = records[at:end]
        self._at = at = at + len(out)
        if not out:
            self._handed(None, 0)
            return out, [], gaps
        runs = self._taken(out[0].offset, out[-1].offset)
        self._handed(out[-1].offset, len(records) - at)
        return out, runs, gaps

    def take_one(self) -> ConsumerRecord[Any, Any] | None:
        """The next record, when it is decoded already (``getone``'s fast path); None
        otherwise (``take_records`` then does what is needed)."""
        records, at = self._records, self._at
        if records is None or at >= len(records):
            return None
        record = records[at]
        self._at = at + 1
        self._handed(record.offset, len(records) - at - 1)
        return record

    def take_arrow(self, limit: int, whole_batch: bool = False) -> tuple[Any, Runs, Runs]:
        """``(an Arrow batch of up to limit rows in Spark's Kafka schema plus deliveryCount
        (int16), its offsets as runs, gap runs newly found)``; the batch is None when nothing
        is left. ``whole_batch`` as for ``take_records``."""
        import pyarrow as pa

        gaps: Runs = []
        self._records = None
        self._refused = None  # deserializers do not run on Arrow: it is handed out as it is
        if self._arrow is None:
            batch = decode_columns(
                self._raw, self.tp.topic, self.tp.partition, check_crcs=self._decoding["check_crcs"]
            ).records.to_pyarrow()
            offsets = _int64_view(batch.column("offset"))
            spans, held_runs, gap_runs = _spans(offsets, self._acquired)
            gaps = self._split(held_runs, gap_runs, self._last + 1)
            self._arrow = (batch, offsets, _from_row(spans, bisect_left(offsets, self._next)))
        batch, offsets, spans = self._arrow
        if whole_batch:
            limit = self._through_batch_end(offsets, spans, limit)
        pieces = []
        counts = []
        left = limit
        while spans and left > 0:
            s, e, c = spans[0]
            n = min(e - s, left)
            pieces.append(batch.slice(s, n))
            counts.append(_int16s(c, n))
            left -= n
            if s + n == e:
                spans.pop(0)
            else:
                spans[0] = (s + n, e, c)
        if not pieces:
            self._handed(None, 0)
            return None, [], gaps

        out = pieces[0] if len(pieces) == 1 else pa.concat_batches(pieces)
        column = counts[0] if len(counts) == 1 else pa.concat_arrays(counts)
        first = out.column("offset")[0].as_py()
        last = out.column("offset")[-1].as_py()
        self._handed(last, len(spans))
        return out.append_column("deliveryCount", column), self._taken(first, last), gaps

    def _through_batch_end(
        self, offsets: memoryview, spans: list[tuple[int, int, int]], limit: int
    ) -> int:
        """``limit`` rows of ``spans``, and those after them in the record batch the last of
        them is in."""
        seen = 0
        for i, (s, e, _) in enumerate(spans):
            if seen + e - s < limit:
                seen += e - s
                continue
            row = s + limit - seen - 1
            end_row = bisect_right(offsets, self._batch_end(offsets[row]), row + 1)
            for s2, e2, _ in spans[i:]:
                if s2 >= end_row:
                    break
                limit += min(e2, end_row) - max(s2, row + 1)
            break
        return limit

    def give_back(self, offset: int) -> None:
        """The rows of the last ``take_arrow`` from ``offset`` on were not handed out after
        all (a payload format stopped before them): the next take starts there again."""
        self._next = offset
        self._records = None
        if self._arrow is not None:
            batch, offsets, _ = self._arrow
            spans = _spans(offsets, self._acquired)[0]
            self._arrow = (batch, offsets, _from_row(spans, bisect_left(offsets, offset)))

    def refused(self) -> tuple[int, Exception] | None:
        """``(offset, the deserializer's exception)`` when the next record to hand out is one
        a deserializer refused."""
        refused = self._refused
        return refused if refused is not None and self._next >= refused[0] else None

    def skip_refused(self) -> None:
        """Go past the refused record (released by the caller): the records after it are
        decoded from there."""
        if self._refused is not None:
            self._next = self._refused[0] + 1
            self._refused = None
            self._records = None

    def unhanded(self) -> Runs:
        """The acquired offsets not handed out, as runs (gaps left out once reported)."""
        if self._held is None:
            return self._acquired_from(self._next)
        runs = self._taken(self._next, self._last)
        if self._refused is not None:  # not decoded past the refused record
            runs += self._acquired_from(max(self._next, self._refused[0]))
        return runs

    def _acquired_from(self, offset: int) -> Runs:
        return [(max(lo, offset), hi) for lo, hi, _ in self._acquired if hi >= offset]


def _int64_view(column: Any) -> memoryview:
    """An int64 Arrow array's values without a copy (the offset column has no nulls)."""
    data = memoryview(column.buffers()[1]).cast("q")
    return data[column.offset : column.offset + len(column)]


def _spans(
    offsets: memoryview, acquired: list[tuple[int, int, int]]
) -> tuple[list[tuple[int, int, int]], Runs, Runs]:
    """``split_acquired_offsets`` for ascending row offsets: a range whose rows are all
    there (the usual case) is found by two binary searches; the others are split in Rust."""
    spans: list[tuple[int, int, int]] = []
    held: Runs = []
    gaps: Runs = []
    for first, last, count in sorted(acquired):
        lo = bisect_left(offsets, first)
        hi = bisect_left(offsets, last + 1, lo)
        if hi - lo == last - first + 1:
            if hi > lo:
                spans.append((lo, hi, count))
                if held and held[-1][1] + 1 == first:
                    held[-1] = (held[-1][0], last)
                else:
                    held.append((first, last))
            continue
        part, part_held, part_gaps = split_acquired_offsets(
            list(offsets[lo:hi]), [(first, last, count)]
        )
        spans += [(lo + s, lo + e, c) for s, e, c in part]
        held += part_held
        gaps += part_gaps
    return spans, held, gaps


def _from_row(spans: list[tuple[int, int, int]], start: int) -> list[tuple[int, int, int]]:
    """``spans`` without the rows before ``start`` (handed out already)."""
    return [(max(s, start), e, c) for s, e, c in spans if e > start]


def _int16s(value: int, n: int) -> Any:
    """An int16 Arrow array of ``n`` times ``value``."""
    import pyarrow as pa

    return pa.Array.from_buffers(pa.int16(), n, [None, pa.py_buffer(struct.pack("<h", value) * n)])


def _offset(record: ConsumerRecord[Any, Any]) -> int:
    offset: int = record.offset
    return offset
