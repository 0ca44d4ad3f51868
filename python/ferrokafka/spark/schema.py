"""Spark's Kafka schema, as Spark's DDL and as Arrow (what the Rust decoder builds)."""

from __future__ import annotations

from typing import Any

__all__ = ["KAFKA_SCHEMA", "KAFKA_SCHEMA_WITH_HEADERS", "arrow_schema", "without_headers"]

KAFKA_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, "
    "timestamp timestamp, timestampType int"
)
KAFKA_SCHEMA_WITH_HEADERS = KAFKA_SCHEMA + ", headers array<struct<key: string, value: binary>>"

#: The plan DataFrame's schema: one offset range per row.
PLAN_SCHEMA = "topic string, partition int, fromOffset bigint, untilOffset bigint"


def spark_schema(include_headers: bool) -> str:
    return KAFKA_SCHEMA_WITH_HEADERS if include_headers else KAFKA_SCHEMA


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
    return pa.RecordBatch.from_arrays(batch.columns[:7], schema=_NO_HEADERS)
