"""JSON payload formats against the references: the same payloads through Spark's own
``from_json`` (real PySpark) and through ``JsonFormat`` give the same rows and the same
corrupt records; and through the real broker, ``getmany_arrow`` and ``ferrokafka.arrow.read``
decode values in place, FAILFAST losing nothing around a malformed record."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition  # noqa: E402
from ferrokafka import errors as Errors  # noqa: E402
from ferrokafka.arrow import read_async  # noqa: E402
from ferrokafka.formats import JsonFormat  # noqa: E402
from ferrokafka.testing import ExternalKafka, KafkaBroker  # noqa: E402

pytestmark = pytest.mark.integration

DDL = (
    "i INT, l BIGINT, d DOUBLE, s STRING, b BOOLEAN, day DATE, at TIMESTAMP, "
    "price DECIMAL(10,2), tags ARRAY<STRING>, p STRUCT<x: INT, y: STRING>, m MAP<STRING, INT>, "
    "small TINYINT, blob BINARY, nums ARRAY<INT>"
)
ARROW = pa.schema(
    [
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("d", pa.float64()),
        ("s", pa.string()),
        ("b", pa.bool_()),
        ("day", pa.date32()),
        ("at", pa.timestamp("us", tz="UTC")),
        ("price", pa.decimal128(10, 2)),
        ("tags", pa.list_(pa.string())),
        ("p", pa.struct([("x", pa.int32()), ("y", pa.string())])),
        ("m", pa.map_(pa.string(), pa.int32())),
        ("small", pa.int8()),
        ("blob", pa.binary()),
        ("nums", pa.list_(pa.int32())),
    ]
)
PAYLOADS: list[str | None] = [
    json.dumps(
        {
            "i": 1,
            "l": 2**40,
            "d": 1.5,
            "s": "x",
            "b": True,
            "day": "2024-02-29",
            "at": "2024-02-29T12:34:56.789Z",
            "price": 12.345,
            "tags": ["a", "b"],
            "p": {"x": 3, "y": "z"},
            "m": {"k": 1},
            "small": -128,
            "blob": "aGk=",
        }
    ),
    '{"i": "no", "s": 7, "d": 3, "l": -1}',
    '{"i": 2147483648, "small": 128, "b": "true"}',
    '{"s": {"nested": [1, 2]}, "tags": "not a list", "p": {"x": "bad", "y": "ok"}}',
    '{"tags": ["a", 1, null], "m": {"a": 1, "b": "x"}}',
    '{"d": "NaN", "price": 99999999.995, "at": 0}',
    '{"d": "Infinity", "price": "1.005", "day": "2023-02-29"}',
    '{"at": "2024-01-01 00:00:00", "day": "2024-1-5"}',
    '{"at": "2024-01-01T01:00:00+01:00"}',
    "not json",
    "[1, 2]",
    "null",
    "",
    None,
    '  {"i": 5}  ',
    '{"i": 6}{"i": 7}',
    '{"i": 1.0}',
    '{"blob": "***"}',
    '{"nums": [1, "x", 3], "i": 9}',
    '{"nums": [1, null, 3], "small": 255}',
    "{}",
]


def _plain(v: Any) -> Any:
    """A value as both sides can be compared: Spark's Rows and pyarrow's Python values."""
    if hasattr(v, "asDict"):
        return {k: _plain(x) for k, x in v.asDict().items()}
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        if v and isinstance(v[0], tuple):  # pyarrow's map: a list of (key, value)
            return {k: _plain(x) for k, x in v}
        return [_plain(x) for x in v]
    if isinstance(v, dt.datetime):
        return (
            v.replace(tzinfo=None)
            if v.tzinfo is None
            else v.astimezone(dt.UTC).replace(tzinfo=None)
        )
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def test_json_rows_and_corrupt_records_are_sparks(spark: Any) -> None:
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(p,) for p in PAYLOADS], "v string")
    rows = df.select(
        F.from_json("v", DDL + ", _corrupt_record STRING", {"mode": "PERMISSIVE"}).alias("j")
    ).collect()
    sparks = []
    for r in rows:
        if r.j is None:
            sparks.append((None, None))
            continue
        fields = r.j.asDict()
        corrupt = fields.pop("_corrupt_record")
        sparks.append((_plain(fields), corrupt))

    values = pa.array([None if p is None else p.encode() for p in PAYLOADS], pa.binary())
    decoded, bad = JsonFormat(ARROW).decode(values)
    bad_rows = {row for row, _ in bad}
    ours = [
        (_plain(v), PAYLOADS[i] if i in bad_rows else None)
        for i, v in enumerate(decoded.to_pylist())
    ]
    differ = [
        (PAYLOADS[i], want, got)
        for i, (want, got) in enumerate(zip(sparks, ours, strict=True))
        if got != want
    ]
    assert differ == []


def test_ddl_schemas_are_read_as_sparks_arrow_conversion_gives(spark: Any) -> None:
    from ferrokafka.ddl import schema_from_ddl
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType, _parse_datatype_string

    ddls = [
        DDL,
        "`odd name` STRING NOT NULL COMMENT 'a comment', n NUMERIC(38, 6), d DECIMAL",
        "s STRUCT<a: ARRAY<MAP<STRING, DOUBLE>>, `b`: STRUCT<c: DATE>>, bin BINARY",
        "STRUCT<x: BYTE, y: SHORT, z: LONG, r: REAL, t: TIMESTAMP>",
    ]
    for ddl in ddls:
        struct = _parse_datatype_string(ddl)
        assert isinstance(struct, StructType)
        assert schema_from_ddl(ddl) == to_arrow_schema(struct, timezone="UTC"), ddl


async def _topic(broker: KafkaBroker | ExternalKafka, values: list[bytes | None]) -> str:
    topic = f"fk-fmt-{uuid.uuid4().hex[:8]}"
    broker.create_topic(topic, partitions=1)
    async with AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers) as producer:
        for v in values:
            await producer.send(topic, v, key=b"k", partition=0)
    return topic


async def test_getmany_arrow_decodes_values_and_failfast_loses_nothing(
    kafka_broker: KafkaBroker | ExternalKafka,
) -> None:
    schema = pa.schema([("n", pa.int64())])
    values = [json.dumps({"n": i}).encode() for i in range(10)]
    values[6] = b"{broken"
    topic = await _topic(kafka_broker, values)
    tp = TopicPartition(topic, 0)
    fmt = JsonFormat(schema, mode="FAILFAST")
    seen: list[int] = []
    async with AIOKafkaConsumer(bootstrap_servers=kafka_broker.bootstrap_servers) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        failure: Errors.PayloadFormatError | None = None
        while len(seen) + (failure is not None) < 10:
            try:
                got = await consumer.getmany_arrow(timeout_ms=1000, value_format=fmt)
            except Errors.PayloadFormatError as exc:
                failure = exc
                assert await consumer.position(tp) == exc.offset  # at the malformed record
                consumer.seek(tp, exc.offset + 1)
                continue
            for batch in got.values():
                seen += [v["n"] for v in batch.column("value").to_pylist()]
    assert failure is not None and (failure.topic, failure.partition, failure.offset) == (
        topic,
        0,
        6,
    )
    assert seen == [0, 1, 2, 3, 4, 5, 7, 8, 9]


async def test_a_bounded_read_decodes_values_and_keeps_corrupt_ones(
    kafka_broker: KafkaBroker | ExternalKafka,
) -> None:
    schema = pa.schema([("n", pa.int64()), ("tag", pa.string())])
    values: list[bytes | None] = [json.dumps({"n": i, "tag": "t"}).encode() for i in range(50)]
    values[10] = b'{"n": "ten"}'
    values[20] = None
    topic = await _topic(kafka_broker, values)
    async with read_async(
        kafka_broker.bootstrap_servers, topic, value_format=JsonFormat(schema)
    ) as reader:
        assert reader.schema.field("value").type == pa.struct(schema)
        assert reader.schema.names[-1] == "_corrupt_record"
        table = pa.Table.from_batches([b async for b in reader], schema=reader.schema)
    rows = table.sort_by("offset").to_pylist()
    assert [r["value"] for r in rows[:3]] == [{"n": i, "tag": "t"} for i in range(3)]
    assert rows[10]["value"] == {"n": None, "tag": None}
    assert rows[10]["_corrupt_record"] == '{"n": "ten"}'
    assert rows[20]["value"] is None and rows[20]["_corrupt_record"] is None
    assert sum(r["_corrupt_record"] is not None for r in rows) == 1


@pytest.mark.parametrize("reader", ["arrow", "pandas", "datasource"])
@pytest.mark.parametrize("mode", ["PERMISSIVE", "FAILFAST"])
async def test_spark_reads_json_values_as_from_json_over_sparks_own_source(
    spark: Any, kafka_broker: KafkaBroker | ExternalKafka, reader: str, mode: str
) -> None:
    from pyspark.sql import functions as F

    from .test_spark_read import load

    everything = [None if p is None else p.encode() for p in PAYLOADS]
    # FAILFAST: the payloads with nothing malformed (a malformed one fails the read).
    _, bad = JsonFormat(ARROW).decode(pa.array(everything, pa.binary()))
    malformed = {row for row, _ in bad}
    payloads = [p for i, p in enumerate(everything) if mode == "PERMISSIVE" or i not in malformed]
    topic = await _topic(kafka_broker, payloads)
    bootstrap = kafka_broker.bootstrap_servers
    opts = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}
    fmt = {"valueFormat": "json", "valueSchema": DDL, "mode": mode}
    ours = load(spark, reader, {**opts, **fmt})
    theirs = (
        spark.read.format("kafka")
        .options(**opts)
        .load()
        .withColumn(
            "value",
            F.from_json(
                F.col("value").cast("string"),
                DDL + ", _corrupt_record STRING",
                {"mode": "PERMISSIVE"},
            ),
        )
    )
    if mode == "PERMISSIVE":
        theirs = theirs.withColumn("_corrupt_record", F.col("value._corrupt_record")).withColumn(
            "value", F.col("value").dropFields("_corrupt_record")
        )
    else:
        theirs = theirs.withColumn("value", F.col("value").dropFields("_corrupt_record"))
    columns = ["offset", "value"] + (["_corrupt_record"] if mode == "PERMISSIVE" else [])
    got = [
        _plain(r.asDict(recursive=True)) for r in ours.select(*columns).orderBy("offset").collect()
    ]
    want = [
        _plain(r.asDict(recursive=True))
        for r in theirs.select(*columns).orderBy("offset").collect()
    ]
    if reader == "pandas":
        # mapInPandas hands pandas' NaN back to Spark as null, whatever produced it.
        want = [_nan_as_null(row) for row in want]
    assert got == want
    assert len(got) == len(payloads)


def _nan_as_null(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _nan_as_null(x) for k, x in v.items()}
    return None if v == "NaN" else v


def test_spark_failfast_fails_the_task_naming_the_record(
    spark: Any, kafka_broker: KafkaBroker | ExternalKafka
) -> None:
    import asyncio

    from .test_spark_read import load

    topic = asyncio.run(_topic(kafka_broker, [b'{"i": 1}', b"{oops", b'{"i": 3}']))
    opts = {
        "kafka.bootstrap.servers": kafka_broker.bootstrap_servers,
        "subscribe": topic,
        "valueFormat": "json",
        "valueSchema": "i INT",
        "mode": "FAILFAST",
    }
    with pytest.raises(Exception, match=rf"{topic}\[0\] offset 1: the record's value"):
        load(spark, "datasource", opts).collect()
    with pytest.raises(ValueError, match="valueFormat=json needs the option 'valueSchema'"):
        load(spark, "arrow", {**opts, "valueSchema": ""})


def test_struct_values_are_written_as_sparks_to_json_writes_them(spark: Any) -> None:
    """Our JSON, read by Spark's from_json and written again by its to_json, is unchanged."""
    from pyspark.sql import functions as F

    values = pa.array([None if p is None else p.encode() for p in PAYLOADS], pa.binary())
    decoded, _ = JsonFormat(ARROW).decode(values)
    ours = [
        None if b is None else b.decode() for b in JsonFormat(ARROW).encode(decoded).to_pylist()
    ]
    frame = spark.createDataFrame([(v,) for v in ours], "v string")
    theirs = [r.j for r in frame.select(F.to_json(F.from_json("v", DDL)).alias("j")).collect()]
    assert ours == theirs


async def test_send_arrow_writes_json_that_getmany_arrow_reads_back(
    kafka_broker: KafkaBroker | ExternalKafka,
) -> None:
    schema = pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.string()))])
    fmt = JsonFormat(schema)
    rows = [{"id": i, "tags": [f"t{i}"] * (i % 3)} for i in range(100)]
    table = pa.table(
        {"key": [b"k%d" % i for i in range(100)], "value": pa.array(rows, pa.struct(schema))}
    )
    topic = f"fk-fmt-{uuid.uuid4().hex[:8]}"
    kafka_broker.create_topic(topic, partitions=1)
    bootstrap = kafka_broker.bootstrap_servers
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        await (await producer.send_arrow(topic, table, value_format=fmt))
    tp = TopicPartition(topic, 0)
    got: list[Any] = []
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        while len(got) < len(rows):
            batches = await consumer.getmany_arrow(timeout_ms=1000, value_format=fmt)
            for batch in batches.values():
                assert batch.column("_corrupt_record").null_count == batch.num_rows
                got += batch.column("value").to_pylist()
    assert got == rows
