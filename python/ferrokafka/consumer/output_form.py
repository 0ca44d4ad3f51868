"""What a poll hands out: ``ConsumerRecord`` lists (``getmany``, ``getone``, ``async for``) or
Arrow record batches (``getmany_arrow``). The fetch buffer keeps each fetched response as raw
bytes and decodes it into one of these forms only when it is taken; everything that differs
between the two (decoding, counting, slicing, joining two chunks) is here, typed by what it
gives."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from .. import _native

if TYPE_CHECKING:
    import pyarrow

    from ..structs import ConsumerRecord, TopicPartition

__all__ = ["ARROW", "RECORDS", "ArrowForm", "OutputForm", "RecordsForm"]

T = TypeVar("T")

Deserializers = Mapping[str, Any]
"""``key_deserializer`` and ``value_deserializer``, as keyword arguments of the record decoder."""


class OutputForm(abc.ABC, Generic[T]):
    """How one partition's taken records are given to the application (a chunk of type T)."""

    one_at_a_time: bool = False
    """Whether the rest of a response can be handed out record by record (``getone``)."""

    @abc.abstractmethod
    def decode(
        self, raw: Any, tp: TopicPartition, common: dict[str, Any], deserializers: Deserializers
    ) -> tuple[_native.DecodedPartition[Any], T]:
        """Decode a fetched response: the decoder's summary and the whole response as T.
        ``common``: the decoder's options for every form; ``deserializers``: the consumer's
        ``key_deserializer`` and ``value_deserializer``, by those names."""

    @abc.abstractmethod
    def count(self, items: T) -> int: ...

    @abc.abstractmethod
    def chunk(self, items: T, start: int, n: int) -> T:
        """``n`` records from ``start`` (a new list for records: the application may change
        what it is given)."""

    @abc.abstractmethod
    def last_offset(self, chunk: T) -> int | None:
        """The offset of the chunk's last record (None when it is empty)."""

    @abc.abstractmethod
    def concat(self, first: T, then: T) -> T: ...


class RecordsForm(OutputForm["list[ConsumerRecord[Any, Any]]"]):
    one_at_a_time = True

    def decode(
        self, raw: Any, tp: TopicPartition, common: dict[str, Any], deserializers: Deserializers
    ) -> tuple[_native.DecodedPartition[Any], list[ConsumerRecord[Any, Any]]]:
        part = _native.decode_records(raw, tp.topic, tp.partition, **deserializers, **common)
        return part, part.records

    def count(self, items: list[ConsumerRecord[Any, Any]]) -> int:
        return len(items)

    def chunk(
        self, items: list[ConsumerRecord[Any, Any]], start: int, n: int
    ) -> list[ConsumerRecord[Any, Any]]:
        return items[start : start + n]

    def last_offset(self, chunk: list[ConsumerRecord[Any, Any]]) -> int | None:
        return chunk[-1].offset if chunk else None

    def concat(
        self, first: list[ConsumerRecord[Any, Any]], then: list[ConsumerRecord[Any, Any]]
    ) -> list[ConsumerRecord[Any, Any]]:
        return first + then


class ArrowForm(OutputForm["pyarrow.RecordBatch"]):
    def decode(
        self, raw: Any, tp: TopicPartition, common: dict[str, Any], deserializers: Deserializers
    ) -> tuple[_native.DecodedPartition[Any], pyarrow.RecordBatch]:
        # Arrow columns hold the bytes as fetched: deserializers are for records.
        part = _native.decode_columns(raw, tp.topic, tp.partition, **common)
        batch: pyarrow.RecordBatch = part.records.to_pyarrow()
        return part, batch

    def count(self, items: pyarrow.RecordBatch) -> int:
        return int(items.num_rows)

    def chunk(self, items: pyarrow.RecordBatch, start: int, n: int) -> pyarrow.RecordBatch:
        return items.slice(start, n)

    def last_offset(self, chunk: pyarrow.RecordBatch) -> int | None:
        if not chunk.num_rows:
            return None
        last: int = chunk.column("offset")[chunk.num_rows - 1].as_py()
        return last

    def concat(self, first: pyarrow.RecordBatch, then: pyarrow.RecordBatch) -> pyarrow.RecordBatch:
        import pyarrow

        return pyarrow.concat_batches([first, then])


RECORDS = RecordsForm()
ARROW = ArrowForm()
