"""The synchronous read: an :class:`AsyncBatchReader` run on a loop thread of its own, handed
out as a ``pyarrow.RecordBatchReader`` (the Arrow C stream that Polars, DuckDB and DataFusion
import without copying the columns)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from ..loop_thread import LoopThread
from .stream import AsyncBatchReader

__all__ = ["to_record_batch_reader"]

#: How long closing the read's consumer may take once the read ends or is dropped.
_CLOSE_TIMEOUT = 10.0

log = logging.getLogger(__name__)


def to_record_batch_reader(reader: AsyncBatchReader) -> Any:
    import pyarrow as pa

    return pa.RecordBatchReader.from_batches(reader.schema, _batches(reader))


def _batches(reader: AsyncBatchReader) -> Iterator[Any]:
    # The thread starts with the first batch asked for, and ends with the read: when the
    # last batch was taken, the read failed, or the RecordBatchReader was dropped.
    thread = LoopThread("ferrokafka-arrow-read")
    try:
        while True:
            try:
                batch = thread.run(reader.__anext__())
            except StopAsyncIteration:
                return
            yield batch
    finally:
        try:
            thread.run(reader.close(), _CLOSE_TIMEOUT)
        except Exception as exc:
            # Often reached from the garbage collector (a dropped reader), where an exception
            # would only be printed as ignored: say what did not close, and go on.
            log.warning("closing the read's consumer failed: %s: %s", type(exc).__name__, exc)
        finally:
            thread.stop(_CLOSE_TIMEOUT)
