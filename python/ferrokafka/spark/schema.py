"""Spark's Kafka schema, as Spark's DDL and as Arrow (what the Rust decoder builds)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..arrow.schema import arrow_schema, without_headers

if TYPE_CHECKING:
    from .options import ValueFormat

__all__ = ["KAFKA_SCHEMA", "KAFKA_SCHEMA_WITH_HEADERS", "arrow_schema", "without_headers"]

KAFKA_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset bigint, "
    "timestamp timestamp, timestampType int"
)
KAFKA_SCHEMA_WITH_HEADERS = KAFKA_SCHEMA + ", headers array<struct<key: string, value: binary>>"

#: The plan DataFrame's schema: one offset range per row.
PLAN_SCHEMA = "topic string, partition int, fromOffset bigint, untilOffset bigint"


def spark_schema(include_headers: bool, value_format: ValueFormat | None = None) -> str:
    schema = KAFKA_SCHEMA_WITH_HEADERS if include_headers else KAFKA_SCHEMA
    return schema if value_format is None else value_format.spark_schema(schema)
