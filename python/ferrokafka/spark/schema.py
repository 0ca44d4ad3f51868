"""Spark's Kafka schema, as Spark's DDL and as Arrow (what the Rust decoder builds)."""

from __future__ import annotations

from ..arrow.schema import arrow_schema, without_headers
from .payloads import ColumnFormat, formatted_spark_schema

__all__ = ["KAFKA_SCHEMA", "KAFKA_SCHEMA_WITH_HEADERS", "arrow_schema", "without_headers"]

KAFKA_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, "
    "timestamp timestamp, timestampType int"
)
KAFKA_SCHEMA_WITH_HEADERS = KAFKA_SCHEMA + ", headers array<struct<key: string, value: binary>>"

#: The plan DataFrame's schema: one offset range per row.
PLAN_SCHEMA = "topic string, partition int, fromOffset bigint, untilOffset bigint"


def spark_schema(
    include_headers: bool,
    key_format: ColumnFormat | None = None,
    value_format: ColumnFormat | None = None,
) -> str:
    schema = KAFKA_SCHEMA_WITH_HEADERS if include_headers else KAFKA_SCHEMA
    return formatted_spark_schema(schema, key_format, value_format)
