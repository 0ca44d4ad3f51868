"""One partition's answer to a ShareFetch, waiting to be handed out.

The records bytes are decoded when the application asks for them, in the form it asks for
(``ConsumerRecord``s or an Arrow batch), and only the records inside the acquired ranges are
handed out, each with its delivery count. Acquired offsets with no record for the application
are reported as gaps once, at the first decode; what is left when the consumer closes is
reported so that it can be released.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..records import decode_columns, decode_records
from ..structs import ConsumerRecord, TopicPartition
from .acquired import split_acquired

if TYPE_CHECKING:
    from .._native import AcquiredRecords

__all__ = ["FetchedSharePartition"]


class FetchedSharePartition:
    def __init__(
        self,
        tp: TopicPartition,
        node: int,
        records: bytes,
        acquired: list[AcquiredRecords],
        *,
        check_crcs: bool,
        key_deserializer: Callable[[bytes | None], Any] | None,
        value_deserializer: Callable[[bytes | None], Any] | None,
    ) -> None:
        self.tp = tp
        self.node = node
        self._raw = records
        self._acquired = acquired
        self._check_crcs = check_crcs
        self._key_deserializer = key_deserializer
        self._value_deserializer = value_deserializer
        self._next = min((r["first_offset"] for r in acquired), default=0)
        """Offsets below this were handed out (or reported as gaps)."""
        self._records: list[ConsumerRecord[Any, Any]] | None = None
        """The records not yet handed out, once decoded as records."""
        self._arrow: tuple[Any, list[int], list[tuple[int, int]]] | None = None
        """``(batch, row offsets, (row, delivery count) not yet handed out)``, once decoded
        as Arrow."""
        self._gaps: set[int] | None = None
        self.size = sum(max(0, r["last_offset"] - r["first_offset"] + 1) for r in acquired)
        """The acquired offsets: an upper bound of the records it holds."""

    def __bool__(self) -> bool:
        return self._next <= self._last_acquired()

    def _last_acquired(self) -> int:
        return max((r["last_offset"] for r in self._acquired), default=-1)

    def _handed(self, last_offset: int, rest: int) -> None:
        self._next = last_offset + 1 if rest else self._last_acquired() + 1

    def take_records(self, limit: int) -> tuple[list[ConsumerRecord[Any, Any]], list[int]]:
        """``(up to limit records, each with its delivery count; gap offsets newly found)``."""
        gaps: list[int] = []
        self._arrow = None
        if self._records is None:
            decoded = decode_records(
                self._raw,
                self.tp.topic,
                self.tp.partition,
                check_crcs=self._check_crcs,
                key_deserializer=self._key_deserializer,
                value_deserializer=self._value_deserializer,
            ).records
            held, gaps = split_acquired(decoded, self._acquired)
            records = []
            for record, count in held:
                if record.offset >= self._next:
                    record.delivery_count = count
                    records.append(record)
            self._records = records
            gaps = self._new_gaps(gaps)
        out = self._records[:limit]
        del self._records[:limit]
        if out or not self._records:
            self._handed(out[-1].offset if out else -1, len(self._records))
        return out, gaps

    def take_arrow(self, limit: int) -> tuple[Any, list[int]]:
        """``(an Arrow batch of up to limit rows in Spark's Kafka schema plus deliveryCount
        (int16), gap offsets newly found)``; the batch is None when nothing is left."""
        import pyarrow as pa

        gaps: list[int] = []
        self._records = None
        if self._arrow is None:
            batch = decode_columns(
                self._raw, self.tp.topic, self.tp.partition, check_crcs=self._check_crcs
            ).records.to_pyarrow()
            offsets = batch.column("offset").to_pylist()
            held, gaps = split_acquired(range(len(offsets)), self._acquired, offsets.__getitem__)
            rows = [(row, count) for row, count in held if offsets[row] >= self._next]
            self._arrow = (batch, offsets, rows)
            gaps = self._new_gaps(gaps)
        batch, offsets, rows = self._arrow
        out = rows[:limit]
        del rows[:limit]
        if out or not rows:
            self._handed(offsets[out[-1][0]] if out else -1, len(rows))
        if not out:
            return None, gaps
        picked = batch.take(pa.array([row for row, _ in out], pa.int64()))
        counts = pa.array([count for _, count in out], pa.int16())
        return picked.append_column("deliveryCount", counts), gaps

    def _new_gaps(self, gaps: list[int]) -> list[int]:
        if self._gaps is not None:
            return []
        self._gaps = set(gaps)
        return gaps

    def unhanded(self) -> list[int]:
        """The acquired offsets not handed out, gaps already reported left out."""
        gaps = self._gaps or set()
        out: list[int] = []
        for r in self._acquired:
            first = max(r["first_offset"], self._next)
            out.extend(o for o in range(first, r["last_offset"] + 1) if o not in gaps)
        return out
