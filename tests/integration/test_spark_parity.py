"""Parity with Spark's own Kafka source (spark-sql-kafka, loaded from Maven Central): for the same
options, ``read_kafka`` (both fetchers) and the ``ferrokafka`` data source return exactly the rows
that ``spark.read.format("kafka")`` returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .spark_data import BASE_TS, options, produce_rows, spark_rows
from .test_spark_read import READERS, _transactions, load

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..conftest import TopicFactory

pytestmark = pytest.mark.integration


def jvm(spark: SparkSession, opts: dict[str, Any]) -> DataFrame:
    frame = spark.read.format("kafka")
    for key, value in opts.items():
        frame = frame.option(key, value)
    return frame.load()


def same_rows(spark: SparkSession, opts: dict[str, Any], include_headers: bool) -> int:
    theirs = spark_rows(jvm(spark, opts), include_headers)
    assert theirs, "Spark's source read nothing: the comparison would prove nothing"
    for reader in READERS:
        assert spark_rows(load(spark, reader, opts), include_headers) == theirs, (reader, opts)
    return len(theirs)


def test_same_rows_as_sparks_kafka_source(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=3)
    produce_rows(bootstrap_servers, topic, 3, 300, compression="zstd")
    base = options(bootstrap_servers)
    cases: list[tuple[dict[str, Any], bool]] = [
        ({"subscribe": topic, "includeHeaders": "true"}, True),
        ({"subscribePattern": topic[4:12]}, False),
        (
            {
                "assign": f'{{"{topic}":[0,2]}}',
                "startingOffsets": f'{{"{topic}":{{"0":17,"2":-2}}}}',
                "endingOffsets": f'{{"{topic}":{{"0":-1,"2":250}}}}',
                "includeHeaders": "true",
            },
            True,
        ),
        (
            {
                "subscribe": topic,
                "startingTimestamp": str(BASE_TS + 100),
                "endingTimestamp": str(BASE_TS + 200),
            },
            False,
        ),
        (
            {
                "subscribe": topic,
                "startingOffsetsByTimestamp": f'{{"{topic}":{{"0":{BASE_TS + 5},'
                f'"1":{BASE_TS + 50},"2":{BASE_TS + 299}}}}}',
                "minPartitions": "7",
            },
            False,
        ),
    ]
    counts = [same_rows(spark, {**base, **opts}, headers) for opts, headers in cases]
    assert counts == [900, 900, 283 + 250, 300, 295 + 250 + 1]


def test_same_rows_on_a_transactional_topic(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=1)
    committed, aborted = _transactions(bootstrap_servers, topic)
    for level, count in (("read_committed", len(committed)), ("read_uncommitted", 250)):
        opts = options(bootstrap_servers, subscribe=topic, **{"kafka.isolation.level": level})
        assert same_rows(spark, opts, False) == count
    assert len(aborted) == 50
