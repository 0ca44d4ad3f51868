"""W11's readers: a topic of typed records (``typed``) to a typed Arrow table (Python) or to the
decoded ``value`` struct column (Spark), each with the idiom its users write.

Python clients, one run per child process (role ``typed``), reading every partition from the
beginning until the dataset's count has come, the timed region from the client's construction
to its close with the table built:

* ``ferrokafka-arrow``: ``getmany_arrow(value_format=...)`` (``JsonFormat(DDL)``, or
  ``AvroFormat(confluent=True, registry_url=...)``), the batches concatenated into a table;
* ``confluent-kafka``: ``Consumer.consume()`` and its deserializer per message
  (``AvroDeserializer`` with a ``SchemaRegistryClient``, or ``JSONDeserializer`` with the JSON
  Schema), the dicts of each ``consume()`` made a record batch with
  ``RecordBatch.from_pylist``, the batches a table.

Spark (role ``typed-spark``): one SparkSession for every reader and both formats, as W8's
(``spark_reads``): Spark's own Kafka source followed by ``from_json``/``from_avro``, and
ferrokafka's source with ``valueFormat``. Each run collects ``typed.CHECKSUM_SQL``: every field
of every record is decoded and summed. ``spark-ceiling`` is the most any Python reader can give
Spark for this query here: the same rows, already decoded, read from Arrow files in the page
cache (``write_ceiling``) and handed to Spark through ``mapInArrow`` in the schema ferrokafka's
readers give it (no Kafka, no decoding).
"""

from __future__ import annotations

import asyncio
import io
import sys
import time
import traceback
from functools import partial
from typing import Any

from . import typed
from .tally import emit

POLL_S = 1.0
#: Records per ``consume()`` call of confluent-kafka (W1's).
CONSUME_BATCH = 10_000

PYTHON_CLIENTS = ["ferrokafka-arrow", "confluent-kafka"]
SPARK_READERS = [
    "spark-jvm",
    "ferrokafka-spark-arrow",
    "ferrokafka-spark-datasource",
    "spark-ceiling",
]
#: Rows per Arrow batch of the ceiling (Spark's own ``maxRecordsPerBatch`` default, as W8's).
CEILING_BATCH_ROWS = 10_000


# -- Python clients ----------------------------------------------------------------------------


async def _ferrokafka(spec: dict[str, Any]) -> Any:
    import pyarrow as pa
    from ferrokafka import AIOKafkaConsumer, TopicPartition
    from ferrokafka.formats import AvroFormat, JsonFormat

    if spec["format"] == "JSON":
        fmt: Any = JsonFormat(typed.DDL)
    else:
        fmt = AvroFormat(confluent=True, registry_url=spec["registry"])
    expected: int = spec["expected"]
    batches = []
    count = 0
    last = time.monotonic()
    async with AIOKafkaConsumer(
        bootstrap_servers=spec["bootstrap"], auto_offset_reset="earliest", enable_auto_commit=False
    ) as consumer:
        consumer.assign([TopicPartition(spec["topic"], p) for p in range(spec["partitions"])])
        while count < expected:
            got = await consumer.getmany_arrow(timeout_ms=int(POLL_S * 1000), value_format=fmt)
            for batch in got.values():
                batches.append(batch)
                count += batch.num_rows
            if time.monotonic() - last > 0.5:
                emit(progress=count)
                last = time.monotonic()
    return pa.Table.from_batches(batches)


def _confluent(spec: dict[str, Any]) -> Any:
    import datetime as dt
    import json

    import confluent_kafka
    import pyarrow as pa
    from confluent_kafka.serialization import MessageField, SerializationContext

    from .consumers import confluent_config

    value_type = typed.arrow_type()
    schema = pa.schema(list(value_type))
    expected: int = spec["expected"]
    topic: str = spec["topic"]
    json_records = spec["format"] == "JSON"
    if json_records:
        from confluent_kafka.schema_registry.json_schema import JSONDeserializer

        # The topic holds plain JSON (what Spark's from_json and ferrokafka read): no
        # Confluent framing before it, so the schema id is taken from nowhere and the value
        # read whole (its 'schema.id.deserializer' hook); each record is validated against
        # the JSON Schema, the deserializer's default.
        def whole(payload: bytes, ctx: Any, schema_id: Any) -> io.BytesIO:
            return io.BytesIO(payload)

        deserialize: Any = JSONDeserializer(
            json.dumps(typed.JSON_SCHEMA), conf={"schema.id.deserializer": whole}
        )
        iso = dt.datetime.fromisoformat
    else:
        from confluent_kafka.schema_registry import SchemaRegistryClient
        from confluent_kafka.schema_registry.avro import AvroDeserializer

        deserialize = AvroDeserializer(SchemaRegistryClient({"url": spec["registry"]}))
    ctx = SerializationContext(topic, MessageField.VALUE)
    consumer = confluent_kafka.Consumer(confluent_config(spec["bootstrap"]))
    batches = []
    count = 0
    last = time.monotonic()
    try:
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(spec["partitions"])
            ]
        )
        while count < expected:
            rows = []
            for msg in consumer.consume(CONSUME_BATCH, POLL_S):
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                row = deserialize(msg.value(), ctx)
                if json_records:  # JSON has no timestamp type: the text, parsed
                    row["at"] = iso(row["at"])
                rows.append(row)
            if rows:
                batches.append(pa.RecordBatch.from_pylist(rows, schema=schema))
                count += len(rows)
            if time.monotonic() - last > 0.5:
                emit(progress=count)
                last = time.monotonic()
    finally:
        consumer.close()
    return pa.Table.from_batches(batches, schema=schema)


def _as_struct(table: Any) -> Any:
    """The records of a table: its ``value`` struct column (ferrokafka's), or its columns as
    one (the peer's rows)."""
    import pyarrow as pa

    if "value" in table.column_names:
        return table.column("value")
    return pa.StructArray.from_arrays(
        [c.combine_chunks() for c in table.columns], fields=list(table.schema)
    )


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """One Python client's run; imports happen before the clock starts."""
    import pyarrow.compute  # noqa: F401  (imported before the clock starts)

    client = spec["client"]
    if client == "ferrokafka-arrow":
        import ferrokafka.formats  # noqa: F401

        def read() -> Any:
            return asyncio.run(_ferrokafka(spec))
    elif client == "confluent-kafka":
        import confluent_kafka.schema_registry.avro
        import confluent_kafka.schema_registry.json_schema  # noqa: F401

        def read() -> Any:
            return _confluent(spec)
    else:
        raise ValueError(f"no W11 client {client!r}")
    from .tally import peak_rss_mb

    start_cpu = time.process_time()
    start = time.perf_counter()
    table = read()
    wall = time.perf_counter() - start
    cpu = time.process_time() - start_cpu
    rss = peak_rss_mb()
    values = _as_struct(table)
    if values.type != typed.arrow_type():  # the same types, or the checksum compares nothing
        values = values.cast(typed.arrow_type())
    return {
        "wall": wall,
        "cpu": cpu,
        "rss_mb": rss,
        "count": table.num_rows,
        "bytes": spec["value_bytes"],
        "checksum": typed.checksum(values),
        "arrow_type": str(_as_struct(table).type),
    }


# -- Spark -------------------------------------------------------------------------------------


def ceiling_schema() -> Any:
    """What ferrokafka's Spark readers hand Spark with ``valueFormat="avro"`` (Kafka's columns
    with ``value`` the decoded struct, then the corrupt-record column, binary; JSON's is a
    string, null in every row of this dataset either way), as a pyarrow schema."""
    import pyarrow as pa
    from ferrokafka.spark import arrow_schema

    kafka = arrow_schema(False)
    value = kafka.get_field_index("value")
    return kafka.set(value, pa.field("value", typed.arrow_type())).append(
        pa.field("_corrupt_record", pa.binary())
    )


def write_ceiling(values: Any, directory: str, partitions: int, topic: str) -> list[str]:
    """The dataset's rows (``values``, ``typed.rows``) split into ``partitions`` Arrow IPC
    files under ``directory``, in ``ceiling_schema()``, ``CEILING_BATCH_ROWS`` a batch; their
    paths. Written before any run, so the ceiling reads them from the page cache."""
    import os

    import numpy as np
    import pyarrow as pa

    schema = ceiling_schema()
    n = len(values)
    paths = []
    for p in range(partitions):
        path = os.path.join(directory, f"ceiling-{p}.arrow")
        lo, hi = n * p // partitions, n * (p + 1) // partitions
        with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as out:
            for start in range(lo, hi, CEILING_BATCH_ROWS):
                m = min(CEILING_BATCH_ROWS, hi - start)
                cols = [
                    pa.nulls(m, pa.binary()),
                    values.slice(start, m),
                    pa.array([topic] * m, pa.string()),
                    pa.array(np.full(m, p, dtype=np.int32)),
                    pa.array(np.arange(start - lo, start - lo + m, dtype=np.int64)),
                    pa.array(np.full(m, typed.START_US, dtype=np.int64)).cast(schema[5].type),
                    pa.array(np.zeros(m, dtype=np.int32)),
                    pa.nulls(m, pa.binary()),
                ]
                out.write_batch(pa.RecordBatch.from_arrays(cols, schema=schema))
        paths.append(path)
    return paths


def ceiling_frame(spark: Any, paths: list[str]) -> Any:
    """``mapInArrow`` over a plan of one row per file: each task memory-maps its file and
    yields its batches as they are."""
    from pyspark.sql.pandas.types import from_arrow_schema

    def produce(plans: Any) -> Any:
        import pyarrow as pa

        for plan in plans:
            for i in plan.column(0).to_pylist():
                with pa.memory_map(paths[i]) as source:
                    reader = pa.ipc.open_file(source)
                    for b in range(reader.num_record_batches):
                        yield reader.get_batch(b)

    n = len(paths)
    return spark.range(0, n, 1, n).mapInArrow(produce, from_arrow_schema(ceiling_schema()))


def frame(
    spark: Any,
    reader: str,
    fmt: str,
    options: dict[str, str],
    registry: str,
    ceiling: list[str],
) -> Any:
    """``reader``'s DataFrame of the topic with its ``value`` column decoded (a struct);
    ``ceiling``: the ceiling's files (``write_ceiling``)."""
    import json

    if reader == "spark-ceiling":
        return ceiling_frame(spark, ceiling)
    schema = json.dumps(typed.SCHEMA)
    if reader == "spark-jvm":
        from pyspark.sql import functions as F

        raw = spark.read.format("kafka").options(**options).load()
        if fmt == "JSON":
            value = F.from_json(F.col("value").cast("string"), typed.DDL)
        else:
            from pyspark.sql.avro.functions import from_avro

            # Spark's from_avro reads plain datums (SPARK-34652): its users cut Confluent's
            # 5-byte header (magic byte, schema id) off first.
            value = from_avro(F.expr("substring(value, 6, length(value) - 5)"), schema)
        return raw.select(value.alias("value"))
    more = {"valueFormat": "json", "valueSchema": typed.DDL}
    if fmt == "Avro":
        more = {"valueFormat": "avro", "valueSchema": schema, "schemaRegistryAddress": registry}
    if reader == "ferrokafka-spark-arrow":
        from ferrokafka.spark import read_kafka

        return read_kafka(spark, {**options, **more}, fetcher="arrow")
    if reader == "ferrokafka-spark-datasource":
        return spark.read.format("ferrokafka").options(**options, **more).load()
    raise ValueError(f"no W11 Spark reader {reader!r}")


def run_spark(spec: dict[str, Any]) -> dict[str, Any]:
    """Every reader over both topics in one SparkSession: per format, each reader once untimed
    (round 0), then ``rounds`` alternating rounds; each run reported as ``{"run": {...}}``
    with its checksum, wall and the process tree's CPU time (as W8's)."""
    from .spark_reads import _error, session, timed_query
    from .spark_reads import emit as emit_locked

    readers: list[str] = spec["readers"]
    query = [f"{sql} AS {name}" for name, sql in typed.CHECKSUM_SQL.items()]
    with session("ferrokafka-bench-W11") as (spark, progress, figures):
        if "ferrokafka-spark-datasource" in readers:
            import ferrokafka.spark

            ferrokafka.spark.register(spark)
        for fmt, topic in spec["topics"].items():
            options = {"kafka.bootstrap.servers": spec["bootstrap"], "subscribe": topic}
            schedule = [(0, r) for r in readers]
            schedule += [(rnd, r) for rnd in range(1, spec["rounds"] + 1) for r in readers]
            for rnd, reader in schedule:
                result: dict[str, Any] = {"client": reader, "round": rnd, "case": fmt}
                try:
                    row, timing = timed_query(
                        partial(
                            frame,
                            spark,
                            reader,
                            fmt,
                            options,
                            spec["registry"],
                            spec.get("ceiling", []),
                        ),
                        query,
                    )
                except Exception as exc:  # this run fails; the others still run
                    traceback.print_exc(file=sys.stderr)
                    result["error"] = _error(exc)
                else:
                    got = {k: int(row[k] or 0) for k in typed.CHECKSUM_SQL}
                    result.update(
                        count=got["rows"],
                        checksum=got,
                        bytes=spec["value_bytes"][fmt],
                        **timing,
                    )
                progress.runs += 1
                emit_locked(run=result)
    return figures
