"""The Arrow bulk path: records to produce as Arrow columns in Spark's Kafka-sink names.

``_native.plan_arrow_records`` checks the columns once and every row before anything is queued,
then splits the rows into per-partition chunks of at most ``max_batch_size`` bytes; each chunk
becomes one ``ArrowBatch`` in the accumulator, which the sender encodes (in Rust, from the Arrow
buffers, with the producer id, epoch and sequence of the moment) like any other batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import _native
from ..structs import RecordMetadata
from .batch import BatchBuilder, now_ms

__all__ = ["ArrowBatch", "ArrowBatchResult", "record_batches"]


class ArrowBatchResult(NamedTuple):
    """Where one batch of an Arrow send landed."""

    topic: str
    partition: int
    base_offset: int
    """The offset of the batch's first record (-1 with ``acks=0``)."""
    record_count: int


class ArrowBatch(BatchBuilder):
    """A closed batch whose records are rows of an Arrow record batch, for one partition."""

    def __init__(
        self, chunk: _native.ArrowRecordChunk, compression: str | None, *, transactional: bool
    ) -> None:
        super().__init__(chunk.size, compression, is_transactional=transactional)
        self._chunk = chunk
        self._size = chunk.size
        self._closed = True

    def record_count(self) -> int:
        return self._chunk.record_count

    def _build(self, producer_id: int, producer_epoch: int, base_sequence: int) -> bytes:
        self._buffer = self._chunk.encode(
            now_ms(),
            compression=self._compression,
            transactional=self._transactional,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
        )
        return self._buffer


def record_batches(data: Any) -> list[Any]:
    """The record batches of a pyarrow ``Table`` (or anything with ``to_batches``), or
    ``[data]`` for a single batch exporting ``__arrow_c_array__``."""
    if hasattr(data, "__arrow_c_array__"):
        return [data]
    to_batches = getattr(data, "to_batches", None)
    if to_batches is not None:
        return list(to_batches())
    raise TypeError(
        "send_arrow: expected a pyarrow RecordBatch or Table (or an object exporting "
        f"__arrow_c_array__), got {type(data).__name__}"
    )


async def results(
    topic: str,
    chunks: Sequence[_native.ArrowRecordChunk],
    futures: Sequence[asyncio.Future[RecordMetadata | None]],
) -> list[ArrowBatchResult]:
    """Each batch's ``ArrowBatchResult`` once the broker has them all."""
    metadata = await asyncio.gather(*futures)
    return [
        ArrowBatchResult(
            topic, chunk.partition, -1 if md is None else md.offset, chunk.record_count
        )
        for chunk, md in zip(chunks, metadata, strict=True)
    ]
