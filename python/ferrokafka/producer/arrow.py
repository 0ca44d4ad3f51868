"""The Arrow bulk path: records to produce as Arrow columns in Spark's Kafka-sink names.

``_native.plan_arrow_records`` checks the columns once and every row before anything is queued,
then splits the rows into per-partition chunks of at most ``batch_size`` bytes; each chunk
becomes one ``ArrowBatch`` in the accumulator, which the sender encodes (in Rust, from the Arrow
buffers, with the producer id, epoch and sequence of the moment) like any other batch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, NamedTuple

from .. import _native
from ..structs import RecordMetadata
from .batch import BatchBuilder, BatchHeader

__all__ = ["BATCH_SIZE", "ArrowBatch", "ArrowBatchResult", "arrow_input"]

# send_arrow's default batch size in bytes: librdkafka's ``batch.size`` default.
BATCH_SIZE = 1_000_000


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
        self,
        chunk: _native.ArrowRecordChunk,
        compression: str | None,
        *,
        transactional: bool,
        created_ms: int,
    ) -> None:
        super().__init__(chunk.size, compression, is_transactional=transactional)
        self._chunk = chunk
        # Rows without a timestamp get the time of the send_arrow call, as send() stamps a
        # record when it is called, not when its batch is encoded.
        self._created_ms = created_ms
        self._records.close()

    def size(self) -> int:
        return len(self._buffer) if self._buffer is not None else self._chunk.size

    def record_count(self) -> int:
        return self._chunk.record_count

    def _encode(self, header: BatchHeader) -> bytes:
        return self._chunk.encode(self._created_ms, **header)


def arrow_input(data: Any) -> Any:
    """``data`` if it exports the Arrow PyCapsule interface (a record batch through
    ``__arrow_c_array__``; a stream of them, such as a pyarrow ``Table`` or a polars
    ``DataFrame``, through ``__arrow_c_stream__``); TypeError otherwise."""
    if hasattr(data, "__arrow_c_array__") or hasattr(data, "__arrow_c_stream__"):
        return data
    raise TypeError(
        "send_arrow: expected Arrow data (a pyarrow RecordBatch, Table or RecordBatchReader, "
        "or any object with __arrow_c_array__ or __arrow_c_stream__), got "
        f"{type(data).__name__}"
    )


async def results(
    topic: str,
    chunks: Sequence[_native.ArrowRecordChunk],
    futures: Sequence[asyncio.Future[RecordMetadata | None]],
) -> list[ArrowBatchResult]:
    """Each batch's ``ArrowBatchResult`` once the broker has them all (the first batch's
    error if one failed).

    Waited for with ``asyncio.wait``, not ``gather``: cancelling this wait must leave the
    batches' futures alone, since ``flush()`` and ``stop()`` wait for them until the broker
    has answered (``gather`` cancelled them, and those then returned with the batches still
    on their way). A failed batch's future has its error retrieved by the batch itself."""
    if futures:
        await asyncio.wait(futures)
    metadata = [f.result() for f in futures]
    return [
        ArrowBatchResult(
            topic, chunk.partition, -1 if md is None else md.offset, chunk.record_count
        )
        for chunk, md in zip(chunks, metadata, strict=True)
    ]
