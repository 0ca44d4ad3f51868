"""Kafka for PySpark through ferrokafka: the driver plans offset ranges by Spark's rules, the
executors fetch them with ferrokafka's Rust decoder, and no byte passes through the JVM's Kafka
client. Needs ``pip install ferrokafka[spark]``.

Three ways in, all with the options of Spark's own Kafka source:

* ``read_kafka(spark, options)``: one call, a DataFrame in Spark's Kafka schema.
* ``register(spark)``, then ``spark.read.format("ferrokafka")`` / ``spark.readStream`` /
  ``df.write.format("ferrokafka")``: a Python data source.
* ``plan_ranges`` + ``plan_dataframe`` + ``fetch_arrow`` / ``fetch_pandas``: the building blocks,
  for custom plans.
"""

from __future__ import annotations

from typing import Any

from .fetchers import fetch_arrow, fetch_pandas, plan_dataframe, plan_ranges, read_kafka
from .options import FetchOptions, SourceOptions, parse_fetch_options, parse_source_options
from .planning import OffsetRange, split_ranges
from .reader import KafkaDataLossError
from .schema import KAFKA_SCHEMA, KAFKA_SCHEMA_WITH_HEADERS, PLAN_SCHEMA, arrow_schema
from .writer import write_batches


def register(spark: Any) -> None:
    """Make ``format("ferrokafka")`` available in ``spark``: ``spark.read``,
    ``spark.readStream``, ``df.write`` and ``df.writeStream``."""
    from .datasource import register as _register

    _register(spark)


__all__ = [
    "KAFKA_SCHEMA",
    "KAFKA_SCHEMA_WITH_HEADERS",
    "PLAN_SCHEMA",
    "FetchOptions",
    "KafkaDataLossError",
    "OffsetRange",
    "SourceOptions",
    "arrow_schema",
    "fetch_arrow",
    "fetch_pandas",
    "parse_fetch_options",
    "parse_source_options",
    "plan_dataframe",
    "plan_ranges",
    "read_kafka",
    "register",
    "split_ranges",
    "write_batches",
]
