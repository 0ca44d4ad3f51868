"""Confluent-framed Avro and key formats through the real broker, in Spark (batch and
streaming, ``read_kafka`` and ``format("ferrokafka")``) and in the share consumer: Spark's rows
are what ``ferrokafka.arrow.read`` decodes from the same records, and those are what fastavro
reads. The Schema Registry's endpoint is served by the test's own small HTTP server (no
Confluent Schema Registry is published on Maven Central or PyPI, and Apicurio's Maven artifact
is the application jar alone, not runnable without a Quarkus build)."""

from __future__ import annotations

import io
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import fastavro  # type: ignore[import-untyped]
import pytest

pa = pytest.importorskip("pyarrow")

from ferrokafka import AIOKafkaProducer, AIOKafkaShareConsumer  # noqa: E402
from ferrokafka import errors as Errors  # noqa: E402
from ferrokafka.arrow import read  # noqa: E402
from ferrokafka.formats import AvroFormat, JsonFormat  # noqa: E402
from ferrokafka.testing import ExternalKafka, KafkaBroker  # noqa: E402

from ..unit.test_formats_avro import V1, V2, Registry, framed, serve, written  # noqa: E402
from .share_util import configure_share_group  # noqa: E402
from .test_formats import _plain  # noqa: E402

pytestmark = pytest.mark.integration

KEY_DDL = "user STRING, n INT"


@pytest.fixture
def schema_registry() -> Iterator[tuple[Registry, str]]:
    """Schema ids 1 (``V1``) and 2 (``V2``; answered 500 the first time), basic auth."""
    with serve(Registry({1: V1, 2: V2}, fail_first={2}, auth="spark:s3cret")) as served:
        yield served


NULLS = dict.fromkeys(("id", "score", "added", "opt"))


async def _framed_topic(broker: KafkaBroker | ExternalKafka) -> tuple[str, list[Any]]:
    """A topic of 30 records: JSON keys (one malformed, at offset 5) and values framed with
    schema id 1 (``V1``) or 2 (``V2``), then a value cut short, one of an unknown framing, a
    null one and one more of id 1; and the values as fastavro reads them through ``V2`` (a
    struct of nulls for the two malformed ones, as ``from_avro`` gives them)."""
    old = written(V1, [{"id": i, "gone": f"g{i}", "score": i / 2} for i in range(0, 26, 2)])
    new = written(
        V2,
        [{"id": i, "score": i / 4, "added": f"a{i}", "opt": i} for i in range(1, 27, 2)],
    )
    values: list[bytes | None] = [
        framed(1, old[i // 2]) if i % 2 == 0 else framed(2, new[i // 2]) for i in range(26)
    ]
    values += [framed(2, new[1])[:-1], b"\x07not framed", None, framed(1, old[0])]
    keys = [json.dumps({"user": f"u{i % 3}", "n": i}).encode() for i in range(len(values))]
    keys[5] = b"{broken"
    topic = f"fk-reg-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=1)
    async with AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers) as producer:
        for key, value in zip(keys, values, strict=True):
            await producer.send(topic, value, key=key, partition=0)
    reader = fastavro.parse_schema(V2)
    want: list[Any] = []
    for i, value in enumerate(values):
        if i in (26, 27):
            want.append(NULLS)
        elif value is None:
            want.append(None)
        else:
            writer = fastavro.parse_schema(V1 if value[4] == 1 else V2)
            want.append(fastavro.schemaless_reader(io.BytesIO(value[5:]), writer, reader))
    return topic, want


def _python_rows(bootstrap: str, topic: str, key_format: Any, value_format: Any) -> list[Any]:
    table = read(bootstrap, topic, key_format=key_format, value_format=value_format).read_all()
    return [_plain(r) for r in table.drop_columns(["timestamp"]).to_pylist()]


def _spark_rows(frame: Any) -> list[Any]:
    rows = frame.drop("timestamp").orderBy("offset").collect()
    return [_plain(r.asDict(recursive=True)) for r in rows]


@pytest.mark.parametrize("reader", ["arrow", "datasource"])
async def test_spark_reads_confluent_avro_through_a_registry_and_json_keys(
    spark: Any,
    kafka_broker: KafkaBroker | ExternalKafka,
    schema_registry: tuple[Registry, str],
    reader: str,
) -> None:
    from .test_spark_read import load

    state, url = schema_registry
    topic, want = await _framed_topic(kafka_broker)
    bootstrap = kafka_broker.bootstrap_servers
    opts = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "keyFormat": "json",
        "keySchema": KEY_DDL,
        "keyColumnNameOfCorruptRecord": "_corrupt_key",
        "valueFormat": "avro",
        "valueSchema": json.dumps(V2),
        "schemaRegistryAddress": url,
        "schemaRegistryTimeoutMs": "5000",
    }
    got = _spark_rows(load(spark, reader, opts))
    python = _python_rows(
        bootstrap,
        topic,
        JsonFormat(KEY_DDL, corrupt_column="_corrupt_key"),
        AvroFormat(confluent=True, registry_url=url, reader_schema=V2),
    )
    assert got == python
    assert [r["value"] for r in got] == want
    # The value cut short and the one of another framing keep their bytes; the null one is null.
    assert [r["_corrupt_record"] is not None for r in got[26:]] == [True, True, False, False]
    assert [r["_corrupt_key"] for r in got if r["_corrupt_key"]] == ["{broken"]
    assert got[5]["key"] == {"user": None, "n": None}
    assert got[4]["key"] == {"user": "u1", "n": 4}
    assert set(state.requests) == {1, 2}


def test_spark_streams_confluent_avro_with_schemas_given_inline(
    spark: Any, kafka_broker: KafkaBroker | ExternalKafka
) -> None:
    import asyncio

    from .test_spark_stream import stream

    topic, want = asyncio.run(_framed_topic(kafka_broker))
    df = stream(
        spark,
        kafka_broker.bootstrap_servers,
        subscribe=topic,
        startingOffsets="earliest",
        valueFormat="avro",
        valueSchema=json.dumps(V2),
        avroSchemasById=json.dumps({"1": V1, "2": V2}),
    )
    name = f"inline_{uuid.uuid4().hex[:8]}"
    query = df.writeStream.format("memory").queryName(name).trigger(availableNow=True).start()
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()
    rows = _spark_rows(spark.table(name))
    assert [r["value"] for r in rows] == want
    assert [r["_corrupt_record"] is not None for r in rows] == [i in (26, 27) for i in range(30)]


def test_spark_failfast_names_a_malformed_key(
    spark: Any, kafka_broker: KafkaBroker | ExternalKafka
) -> None:
    import asyncio

    from .test_spark_read import load

    topic, _ = asyncio.run(_framed_topic(kafka_broker))
    opts = {
        "kafka.bootstrap.servers": kafka_broker.bootstrap_servers,
        "subscribe": topic,
        "keyFormat": "json",
        "keySchema": KEY_DDL,
        "mode": "FAILFAST",
    }
    with pytest.raises(Exception, match=rf"{topic}\[0\] offset 5: the record's key"):
        load(spark, "datasource", opts).collect()


async def test_share_consumer_decodes_through_a_registry_and_releases_a_malformed_record(
    bootstrap_servers: str, make_topic: Any, schema_registry: tuple[Registry, str]
) -> None:
    """FAILFAST: every record but the malformed one is handed out once; the malformed one is
    named, released, and delivered again with a higher delivery count, as the Java share
    consumer does with a record its deserializer refuses."""
    _, url = schema_registry
    topic = make_topic(partitions=1)
    good = written(V2, [{"id": i, "score": 0.0, "added": "x", "opt": None} for i in range(20)])
    values = [framed(2, v) for v in good]
    values[7] = values[7][:-3]  # cut short: malformed
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        for value in values:
            await producer.send(topic, value, partition=0)
    group = f"share-{topic}"
    await configure_share_group(bootstrap_servers, group, share_auto_offset_reset="earliest")
    fmt = AvroFormat(confluent=True, registry_url=url, reader_schema=V2, mode="FAILFAST")
    ids: list[int] = []
    failures: list[int] = []
    counts: list[int] = []
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group
    ) as consumer:
        deadline = time.monotonic() + 60
        while len(ids) < 19 or len(failures) < 2:
            assert time.monotonic() < deadline, (ids, failures)
            try:
                got = await consumer.getmany_arrow(timeout_ms=500, value_format=fmt)
            except Errors.PayloadFormatError as exc:
                failures.append(exc.offset)
                continue
            for batch in got.values():
                ids += [v["id"] for v in batch.column("value").to_pylist()]
                counts += batch.column("deliveryCount").to_pylist()
    assert sorted(ids) == [i for i in range(20) if i != 7]
    assert set(counts) == {1}
    assert failures[:2] == [7, 7]  # released, delivered again, refused again
