"""Kafka as Arrow, outside Spark: a bounded read of a topic's offset or time ranges as record
batches in Spark's Kafka schema, decoded in Rust, for pyarrow, Polars, DuckDB and DataFusion.
Needs ``pip install ferrokafka[arrow]``.

>>> reader = ferrokafka.arrow.read("localhost:9092", "events", start_timestamp=midnight)
>>> polars.from_arrow(reader)                     # or duckdb.sql("select ... from reader")

:func:`read` returns a ``pyarrow.RecordBatchReader`` (an object with ``__arrow_c_stream__``),
fetching ahead in a thread of its own while the caller consumes; :func:`read_async` is the same
read for asyncio code, an async iterator of ``pyarrow.RecordBatch``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..formats import AvroFormat, JsonFormat, PayloadFormat
from .bounds import Bounds, Edge, TimeEdge
from .loss import KafkaDataLossError
from .schema import arrow_schema
from .stream import AsyncBatchReader

__all__ = [
    "AsyncBatchReader",
    "AvroFormat",
    "JsonFormat",
    "KafkaDataLossError",
    "PayloadFormat",
    "arrow_schema",
    "read",
    "read_async",
]


def read_async(
    bootstrap_servers: str | list[str],
    topic: str,
    *,
    partitions: Iterable[int] | None = None,
    start: Edge | None = None,
    end: Edge | None = None,
    start_timestamp: TimeEdge | None = None,
    end_timestamp: TimeEdge | None = None,
    include_headers: bool = False,
    fail_on_data_loss: bool = True,
    poll_timeout_ms: int = 120_000,
    key_format: PayloadFormat | None = None,
    value_format: PayloadFormat | None = None,
    **client_options: Any,
) -> AsyncBatchReader:
    """The records of ``topic`` between two edges, as an async iterator of
    ``pyarrow.RecordBatch``es (``async with ... as batches: async for batch in batches``).

    * ``partitions``: the partition numbers to read (default: all of them).
    * ``start``: ``"earliest"`` (the default), ``"latest"``, an offset, or a mapping of
      partition to any of these. ``end``: the same, exclusive; ``"latest"`` by default, which
      is the log end when the read starts (the last stable offset with
      ``isolation_level="read_committed"``). An end past the log's end is refused.
    * ``start_timestamp`` / ``end_timestamp`` (instead of ``start`` / ``end``): milliseconds
      since the epoch or an aware ``datetime`` (or a mapping per partition); the edge is the
      first record at or after that time, or the end of the partition when none is.
    * ``include_headers``: add Spark's ``headers`` column.
    * ``fail_on_data_loss``: records of the range that no longer exist (deleted by retention,
      a deleted topic or partition, a truncated log) raise :class:`KafkaDataLossError`
      (the default), or are logged and skipped.
    * ``poll_timeout_ms``: how long a partition may bring nothing before the read fails with
      ``KafkaTimeoutError``.
    * ``value_format`` / ``key_format``: decode the values (keys) in Rust into a struct
      column, e.g. ``JsonFormat(schema)`` (:mod:`ferrokafka.formats`); in ``FAILFAST`` mode a
      malformed record ends the read with ``PayloadFormatError`` naming its offset.
    * ``client_options``: any option of ``AIOKafkaConsumer`` (security, ``isolation_level``,
      fetch sizes, ...), except the group and offset-reset options the read sets itself.

    Bad arguments raise ``ValueError`` or ``TypeError`` here; the offsets are resolved when
    the first batch is asked for.
    """
    bounds = Bounds.of(topic, partitions, start, end, start_timestamp, end_timestamp)
    return AsyncBatchReader(
        bootstrap_servers,
        bounds,
        include_headers=include_headers,
        fail_on_data_loss=fail_on_data_loss,
        poll_timeout_ms=poll_timeout_ms,
        key_format=key_format,
        value_format=value_format,
        client_options=client_options,
    )


def read(
    bootstrap_servers: str | list[str],
    topic: str,
    *,
    partitions: Iterable[int] | None = None,
    start: Edge | None = None,
    end: Edge | None = None,
    start_timestamp: TimeEdge | None = None,
    end_timestamp: TimeEdge | None = None,
    include_headers: bool = False,
    fail_on_data_loss: bool = True,
    poll_timeout_ms: int = 120_000,
    key_format: PayloadFormat | None = None,
    value_format: PayloadFormat | None = None,
    **client_options: Any,
) -> Any:
    """:func:`read_async`'s read as a ``pyarrow.RecordBatchReader``, for synchronous code:
    ``pl.from_arrow(reader)``, ``duckdb.sql("select ... from reader")``,
    ``datafusion.SessionContext().from_arrow(reader)``, ``reader.read_all()``. The read runs
    on an event loop in a thread of its own, which ends with the read (its last batch taken,
    a failure, or the reader closed or dropped). Not for use inside a running event loop's
    thread where blocking matters: use :func:`read_async` there."""
    from .blocking import to_record_batch_reader

    return to_record_batch_reader(
        read_async(
            bootstrap_servers,
            topic,
            partitions=partitions,
            start=start,
            end=end,
            start_timestamp=start_timestamp,
            end_timestamp=end_timestamp,
            include_headers=include_headers,
            fail_on_data_loss=fail_on_data_loss,
            poll_timeout_ms=poll_timeout_ms,
            key_format=key_format,
            value_format=value_format,
            **client_options,
        )
    )
