"""Writing DataFrames to Kafka through the ``ferrokafka`` data source, with the columns and
options of Spark's Kafka sink: a write-then-read round trip, Spark's column checks, and a
delivery error failing the task."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from ferrokafka.spark import read_kafka, register

from .spark_data import options, spark_rows

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..conftest import TopicFactory

pytestmark = pytest.mark.integration

SOURCE_SCHEMA = (
    "topic string, key string, value binary, "
    "headers array<struct<key: string, value: binary>>, partition int"
)


def write(df: DataFrame, bootstrap: str, **opts: str) -> None:
    register(df.sparkSession)
    writer = df.write.format("ferrokafka").mode("append")
    writer = writer.option("kafka.bootstrap.servers", bootstrap)
    for key, value in opts.items():
        writer = writer.option(key, value)
    writer.save()


def test_write_then_read_round_trip(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    first = make_topic(partitions=3)
    second = make_topic(partitions=1, name=f"{first}-2")
    rows = [
        (
            first if i % 4 else second,
            None if i % 5 == 0 else f"k{i}",
            None if i % 7 == 3 else b"value-%d" % i,
            None if i % 3 == 0 else [("a", b"%d" % i), ("b", None)],
            (i % 3) if i % 4 else None,
        )
        for i in range(2000)
    ]
    frame = spark.createDataFrame(rows, SOURCE_SCHEMA).repartition(4)
    write(frame, bootstrap_servers)
    back = read_kafka(
        spark, options(bootstrap_servers, subscribe=f"{first},{second}", includeHeaders=True)
    )
    # (topic, key, value, headers) of every row, and the partition where the row named one.
    got = spark_rows(back)
    # (Null keys and values compare as b"": the data has no empty ones.)
    assert sorted((g[2], g[0] or b"", g[1] or b"", g[7] or ()) for g in got) == sorted(
        (
            topic,
            (key or "").encode(),
            value or b"",
            tuple(headers or ()),
        )
        for topic, key, value, headers, _ in rows
    )
    by_value = {g[1]: g[3] for g in got if g[1] is not None}
    for _, _, value, _, partition in rows:
        if partition is not None and value is not None:
            assert by_value[value] == partition, value
    both_null = sum(1 for _, key, value, _, _ in rows if key is None and value is None)
    assert both_null and sum(1 for g in got if g[0] is None and g[1] is None) == both_null


def test_the_topic_option_wins_and_strings_are_utf8(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    target = make_topic(partitions=1)
    frame = spark.createDataFrame(
        [("ignored", "ключ", "значение")], "topic string, key string, value string"
    )
    write(frame, bootstrap_servers, topic=target)
    (row,) = read_kafka(spark, options(bootstrap_servers, subscribe=target)).collect()
    assert bytes(row.key).decode() == "ключ" and bytes(row.value).decode() == "значение"


@pytest.mark.parametrize(
    ("schema", "opts", "message"),
    [
        (
            "key string, value string",
            {},
            "topic option required when no 'topic' attribute is present",
        ),
        ("topic string, key string", {}, "Required attribute 'value' not found"),
        (
            "topic string, key int, value string",
            {},
            "key attribute unsupported type int. key must be a(n) string or binary",
        ),
        (
            "topic int, value string",
            {},
            "topic attribute unsupported type int. topic must be a(n) string",
        ),
        (
            "value string, partition bigint",
            {"topic": "t"},
            "partition attribute unsupported type bigint. partition must be a(n) int",
        ),
        (
            "value string",
            {"topic": "t", "kafka.value.serializer": "x"},
            "Kafka option 'value.serializer' is not supported",
        ),
    ],
)
def test_invalid_columns_and_options_fail_with_sparks_wording(
    spark: SparkSession, bootstrap_servers: str, schema: str, opts: dict[str, str], message: str
) -> None:
    frame = spark.createDataFrame([], schema)
    with pytest.raises(Exception) as info:
        write(frame, bootstrap_servers, **opts)
    assert message in str(info.value)


def test_a_delivery_error_fails_the_task(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    target = make_topic(partitions=1)
    frame = spark.createDataFrame([(b"x" * 5000,)], "value binary")
    with pytest.raises(Exception) as info:
        write(frame, bootstrap_servers, topic=target, **{"kafka.max.request.size": "1000"})
    assert "MessageSizeTooLargeError" in str(info.value)
    assert "Writing row 0 of this task failed" in str(info.value) or "1000" in str(info.value)
    assert read_kafka(spark, options(bootstrap_servers, subscribe=target)).count() == 0


def test_a_null_topic_names_its_row_and_nothing_of_its_batch_is_sent(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    target = make_topic(partitions=1)
    rows = [(None if i == 7 else target, b"v%d" % i) for i in range(10)]
    frame = spark.createDataFrame(rows, "topic string, value binary").coalesce(1)
    with pytest.raises(Exception) as info:
        write(frame, bootstrap_servers)
    assert "contains a null topic" in str(info.value) and "(row 7 of this task)" in str(info.value)
    assert read_kafka(spark, options(bootstrap_servers, subscribe=target)).count() == 0


def test_rows_keep_their_order_per_partition_across_topics(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    first = make_topic(partitions=2)
    second = make_topic(partitions=1, name=f"{first}-b")
    n = 5000
    rows = [(first if i % 3 else second, b"%06d" % i, i % 2 if i % 3 else 0) for i in range(n)]
    frame = spark.createDataFrame(rows, "topic string, value binary, partition int").coalesce(1)
    write(frame, bootstrap_servers)
    back_frame = read_kafka(spark, options(bootstrap_servers, subscribe=f"{first},{second}"))
    got = spark_rows(back_frame, include_headers=False)
    # (value, topic, partition, offset) per record: each partition's values in offset order are
    # the rows sent to it, in the order of the frame.
    for topic, partition in ((first, 0), (first, 1), (second, 0)):
        sent = [v for t, v, p in rows if (t, p) == (topic, partition)]
        back = sorted((g[4], g[1]) for g in got if (g[2], g[3]) == (topic, partition))
        assert [bytes(v) for _, v in back] == sent
