"""Avro payload formats through the real broker: ``send_arrow`` with ``AvroFormat`` writes what
``getmany_arrow`` with it reads back (Confluent's framing), and the Spark source with
``valueFormat=avro`` gives the rows Spark's own ``from_avro`` (spark-avro, from Maven Central)
gives over Spark's own Kafka source for the same topic, malformed values included."""

from __future__ import annotations

import io
import json
import uuid
from typing import Any

import fastavro  # type: ignore[import-untyped]
import pytest

pa = pytest.importorskip("pyarrow")

from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402
from ferrokafka.formats import AvroFormat  # noqa: E402
from ferrokafka.testing import ExternalKafka, KafkaBroker  # noqa: E402

from ..unit.test_formats_avro import ALL, record  # noqa: E402
from .test_formats import _plain, _topic  # noqa: E402

pytestmark = pytest.mark.integration


async def test_send_arrow_writes_avro_that_getmany_arrow_reads_back(
    kafka_broker: KafkaBroker | ExternalKafka,
) -> None:
    writer = AvroFormat(ALL, confluent=True, schema_id=42)
    # The column to send: the records as AvroFormat reads them (every type).
    datums = [io.BytesIO() for _ in range(60)]
    parsed = fastavro.parse_schema(ALL)
    for k, buf in enumerate(datums):
        fastavro.schemaless_writer(buf, parsed, record(k))
    values, bad = AvroFormat(ALL).decode(pa.array([b.getvalue() for b in datums], pa.binary()))
    assert bad == []
    table = pa.table({"key": [b"k%d" % i for i in range(len(values))], "value": values})
    topic = f"fk-avro-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic, partitions=1)
    bootstrap = kafka_broker.bootstrap_servers
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        await (await producer.send_arrow(topic, table, value_format=writer))
    reader = AvroFormat(confluent=True, schemas={42: ALL})
    tp = TopicPartition(topic, 0)
    got: list[Any] = []
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        while len(got) < len(values):
            batches = await consumer.getmany_arrow(timeout_ms=1000, value_format=reader)
            for batch in batches.values():
                assert batch.column("_corrupt_record").null_count == batch.num_rows
                raw = batch.column("value")
                got += [_plain(v) for v in raw.to_pylist()]
                assert raw.type == values.type
    assert got == [_plain(v) for v in values.to_pylist()]


@pytest.mark.parametrize("reader", ["arrow", "datasource"])
async def test_spark_reads_avro_values_as_from_avro_over_sparks_own_source(
    spark: Any, kafka_broker: KafkaBroker | ExternalKafka, reader: str
) -> None:
    from pyspark.sql import functions as F
    from pyspark.sql.avro.functions import from_avro

    from .test_spark_read import load

    parsed = fastavro.parse_schema(ALL)
    payloads: list[bytes | None] = []
    for k in range(40):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record(k))
        payloads.append(buf.getvalue())
    # Values neither reads: cut short, empty; and a null value, a null row for both.
    payloads += [payloads[3][:20], payloads[5][:-1], b"", None]
    topic = await _topic(kafka_broker, payloads)
    schema = json.dumps(ALL)
    opts = {"kafka.bootstrap.servers": kafka_broker.bootstrap_servers, "subscribe": topic}
    ours = load(spark, reader, {**opts, "valueFormat": "avro", "valueSchema": schema})
    theirs = (
        spark.read.format("kafka")
        .options(**opts)
        .load()
        .withColumn("value", from_avro(F.col("value"), schema, {"mode": "PERMISSIVE"}))
    )
    got = [
        _plain(r.asDict(recursive=True))
        for r in ours.select("offset", "value", "_corrupt_record").orderBy("offset").collect()
    ]
    want = [
        _plain(r.asDict(recursive=True))
        for r in theirs.select("offset", "value").orderBy("offset").collect()
    ]
    assert [{k: v for k, v in r.items() if k != "_corrupt_record"} for r in got] == want
    assert len(got) == len(payloads)
    assert all(r["value"] is not None for r in got[:40])
    # The values that did not read keep their bytes; the null value is no corrupt record.
    assert [r["_corrupt_record"] for r in got[40:]] == [*payloads[40:43], None]


def test_spark_failfast_fails_the_task_naming_the_record(
    spark: Any, kafka_broker: KafkaBroker | ExternalKafka
) -> None:
    import asyncio

    from .test_spark_read import load

    schema = {"type": "record", "name": "R", "fields": [{"name": "i", "type": "int"}]}
    datums = [b"\x02", b"\x80", b"\x06"]  # 1, a varint cut short, 3
    topic = asyncio.run(_topic(kafka_broker, datums))
    opts = {
        "kafka.bootstrap.servers": kafka_broker.bootstrap_servers,
        "subscribe": topic,
        "valueFormat": "avro",
        "valueSchema": json.dumps(schema),
    }
    with pytest.raises(Exception, match=rf"{topic}\[0\] offset 1: the record's value .*truncated"):
        load(spark, "datasource", {**opts, "mode": "FAILFAST"}).collect()
    rows = load(spark, "arrow", opts).orderBy("offset").collect()
    assert [r["value"]["i"] for r in rows] == [1, None, 3]
    assert [r["_corrupt_record"] for r in rows] == [None, bytearray(b"\x80"), None]
