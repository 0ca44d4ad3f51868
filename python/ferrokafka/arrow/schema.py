"""Spark's Kafka schema as Arrow: what the Rust decoder builds for ``getmany_arrow``, the Spark
source and :func:`ferrokafka.arrow.read`."""

from __future__ import annotations

from typing import Any

__all__ = ["HEADERS_INDEX", "OFFSET_COLUMN", "arrow_schema", "cut", "without_headers"]

OFFSET_COLUMN = 4
"""The index of the ``offset`` column in :func:`arrow_schema`."""
HEADERS_INDEX = 7
"""The index of the ``headers`` column in :func:`arrow_schema` with headers."""


def arrow_schema(include_headers: bool) -> Any:
    """The Arrow schema of the batches: every field nullable, timestamps in microseconds UTC."""
    import pyarrow as pa

    fields = [
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("timestamp", pa.timestamp("us", tz="UTC")),
        pa.field("timestampType", pa.int32()),
    ]
    if include_headers:
        header = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
        fields.append(pa.field("headers", pa.list_(pa.field("element", header))))
    return pa.schema(fields)


_NO_HEADERS: Any = None


def without_headers(batch: Any) -> Any:
    """``batch`` without its ``headers`` column (no copy)."""
    global _NO_HEADERS
    import pyarrow as pa

    if _NO_HEADERS is None:
        _NO_HEADERS = arrow_schema(False)
    # headers is the last column: the others, as they are.
    return pa.RecordBatch.from_arrays(batch.columns[: len(_NO_HEADERS)], schema=_NO_HEADERS)


def cut(batch: Any, until: int) -> Any:
    """The rows of ``batch`` below offset ``until`` (offsets ascend; no copy)."""
    import pyarrow.compute as pc

    keep = pc.sum(pc.less(batch.column(OFFSET_COLUMN), until)).as_py() or 0
    return batch.slice(0, keep)
