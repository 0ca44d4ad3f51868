"""The report: one Markdown table per workload (medians over rounds, min-max, the ratio to
ferrokafka, failures said as such) and the JSON file with every raw figure."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .workloads import (
    CTP_CASE,
    SHARE_BASE,
    SPARK_BASE,
    TXN_BASE,
    TYPED_BASE,
    TYPED_SPARK_BASE,
    summarize,
)

CONSUMER_WORKLOADS = ("W1", "W2", "W3", "W4")

NOTES = {
    "ferrokafka-group": "subscribe() in a new group (the join is in its time)",
    "confluent-kafka": "`consume(10000)`, `fetch.queue.backoff.ms=1` (its 1 s default only adds "
    "idle time when the local queue fills)",
    "confluent-kafka-aio": "`confluent_kafka.aio.AIOConsumer.consume(10000)` (the same calls run "
    "in a thread pool), `fetch.queue.backoff.ms=1`",
    "kafkarrow": "Arrow batches released in timestamp order across partitions; reads every "
    "partition from the earliest offset (it has no assign)",
    "java": "tools/java/BenchConsumer.java, `check.crcs=true`, default `max.poll.records` (500)",
    "java-perf": "Kafka's own tool: **CRC checks off** (it sets `check.crcs=false`); joins a "
    "group; checked by count and bytes only (it prints no checksum)",
}
PRODUCER_NOTES = {
    "ferrokafka-arrow": "`send_arrow` of Arrow record batches of 65,536 rows (the `value` "
    "column), made before the clock starts; batches up to 1,000,000 bytes (its default)",
    "java-perf": "Kafka's ProducerPerformance (`--throughput -1`, random A-Z values)",
    "java": "tools/java/BenchProducer.java: `send(record, callback)` per record (the callback "
    "counts deliveries), `linger.ms=5`, idempotence off, then `flush()`",
    "ferrokafka-gather": "`futures.append(await producer.send(...))`, then `await "
    "asyncio.gather(*futures)` every 10,000 records",
    "ferrokafka-send-and-wait": "100 tasks, each `await producer.send_and_wait(...)` in turn "
    "(the request-handler pattern)",
    "confluent-kafka-poll-each": "`produce(..., on_delivery=cb)` then `poll(0)` after each "
    "(its documentation's loop)",
    "confluent-kafka-aio-send-and-wait": "100 tasks, each `await (await "
    "producer.produce(...))`; `AIOProducer(batch_size=100)`: with its default of 1,000, 100 "
    "waiting tasks never fill a batch and each record waits its 1 s `buffer_timeout`",
    "confluent-kafka-aio-gather": "`await producer.produce(...)` per record, the futures "
    "awaited with `gather` every 10,000; with both `AIOProducer` idioms a task runs `await "
    "producer.poll(0.01)` in a loop: delivery futures resolve only when `poll()` serves the "
    "reports",
}
SPARK_NOTES = {
    "spark-jvm": '`spark.read.format("kafka")` with `kafka.bootstrap.servers` and `subscribe`, '
    "other options their defaults (Spark plans the offset ranges when the query runs)",
    "ferrokafka-spark-arrow": "`ferrokafka.spark.read_kafka(spark, options, "
    'fetcher="arrow")`: plans the offset ranges on the driver when the DataFrame is built '
    "(timed), fetches and decodes each in a Spark Python worker with `mapInArrow`",
    "ferrokafka-spark-pandas": 'the same with `fetcher="pandas"`: `mapInPandas`, each Arrow '
    "batch made a pandas DataFrame, which Spark turns back into Arrow",
    "ferrokafka-spark-datasource": "`ferrokafka.spark.register(spark)` once (untimed), then "
    '`spark.read.format("ferrokafka")`: a Python data source, planned and read in Python '
    "workers",
    "spark-ceiling": "no Kafka: `mapInArrow` over a plan of one row per partition, each task "
    "yielding its partition's rows as in-memory Arrow batches of 10,000 rows in Spark's Kafka "
    "schema (constant 10-byte key and value of the dataset's size, built once per task): the "
    "most any Python reader can give Spark here",
    "spark-stream-ceiling": "(W10) no Kafka: a Python streaming data source whose one "
    "micro-batch has an input partition per Kafka partition, each yielding that partition's "
    "rows as the `spark-ceiling` batches: the most any Python streaming source can give "
    "Spark here, paying what Spark costs every one (the Python process that answers the "
    "driver's offset calls, started with each query)",
}
SHARE_NOTES = {
    "ferrokafka-share": "`AIOKafkaShareConsumer(topic, bootstrap_servers=..., group_id=...)` "
    "(its defaults: `max_poll_records=500`, `fetch_max_wait_ms=500`), "
    "`await consumer.getmany(timeout_ms=100)` in a loop; implicit acknowledgement (the next "
    "poll accepts what the last returned)",
    "ferrokafka-share-async-for": "the same consumer, `async for record in consumer` (one "
    "record at a time)",
    "ferrokafka-share-arrow": "the same consumer, `await consumer.getmany_arrow(timeout_ms=100)`"
    ": a `pyarrow.RecordBatch` per partition (rows counted, partition and offset columns kept "
    "for the check)",
    "ferrokafka-share-explicit": '`share_acknowledgement_mode="explicit"`: '
    "`consumer.acknowledge(record)` for each record, then `await consumer.commit()` after "
    "each poll that returned records (what Java's `commitSync()` per poll does)",
    "confluent-kafka-share": "`confluent_kafka.ShareConsumer` (experimental in 2.16; "
    "`bootstrap.servers` and `group.id` only), `poll(0.1)` returning a batch; implicit "
    "acknowledgement; one thread per member",
    "java-share": "tools/java/ShareMember.java: `KafkaShareConsumer.poll(100 ms)`, implicit "
    "acknowledgement (sent with the next fetch); one JVM per member, checked by the count only",
    "java-share-commit": "tools/java/ShareMember.java: as java-share, and `commitSync()` after "
    "each poll that returned records",
}
TXN_NOTES = {
    "ferrokafka": '`AIOKafkaProducer(transactional_id=..., acks="all")`; small: `async with '
    "producer.transaction():` around `await producer.send(topic, value)` x10 (futures "
    "dropped: the commit waits for them); consume-transform-produce: `getmany(timeout_ms=100, "
    "max_records=500)`, then in the block a `send` per record and `await "
    "producer.send_offsets_to_transaction({tp: last offset + 1}, group_id)` "
    "(examples/transform_transactions.py)",
    "aiokafka": "the same code as ferrokafka's, on aiokafka (which follows the transaction "
    "version 1 flow: AddPartitionsToTxn and AddOffsetsToTxn before the writes)",
    "confluent-kafka": "`Producer({..., 'transactional.id': ..., 'acks': 'all'})`, "
    "`init_transactions()` before the clock; `begin_transaction()`, `produce()` each, "
    "`commit_transaction()`; consume-transform-produce: `Consumer.consume(500, 0.1)` and "
    "`send_offsets_to_transaction(consumer.position(consumer.assignment()), "
    "consumer.consumer_group_metadata())` (its transactions example); librdkafka follows "
    "the transaction version 1 flow too (AddPartitionsToTxn, EndTxn v1)",
    "java": "tools/java/BenchTransactions.java: `initTransactions()` before the clock; "
    "`beginTransaction()`, `send()` each (futures dropped), `commitTransaction()`; "
    "consume-transform-produce: `poll(100 ms)` with `max.poll.records=500` (its default), "
    "`sendOffsetsToTransaction(offsets, consumer.groupMetadata())`",
}
TYPED_NOTES = {
    "ferrokafka-arrow": '`AIOKafkaConsumer` (assign, `auto_offset_reset="earliest"`), '
    "`await consumer.getmany_arrow(timeout_ms=1000, value_format=fmt)` in a loop with "
    "`fmt = JsonFormat(ddl)` or `AvroFormat(confluent=True, registry_url=...)` (writer "
    "schemas fetched from the registry by id), the batches made one table with "
    "`pa.Table.from_batches`",
    "confluent-kafka": "`Consumer` (assign, `fetch.queue.backoff.ms=1`), `consume(10000, 1.0)`"
    " in a loop, each message's value through `AvroDeserializer(SchemaRegistryClient({'url': "
    "...}))` or `JSONDeserializer(json_schema)` (which validates each record with jsonschema, "
    "its default; the topic's values are plain JSON, so its `schema.id.deserializer` hook "
    "hands it the whole value), the JSON timestamp parsed with `datetime.fromisoformat`, each "
    "`consume()`'s dicts made a record batch with `pa.RecordBatch.from_pylist(rows, "
    "schema=...)`, the batches one table",
    "spark-jvm": '`spark.read.format("kafka")` then `from_json(col("value").cast("string"), '
    'ddl)`, or `from_avro(expr("substring(value, 6, length(value) - 5)"), avro_schema)` '
    "(spark-avro; its `from_avro` does not read Confluent's framing, so the 5-byte header is "
    "cut off first)",
    "ferrokafka-spark-arrow": "`ferrokafka.spark.read_kafka(spark, options)` with "
    '`valueFormat` `"json"` and `valueSchema` (DDL), or `"avro"`, `valueSchema` (the Avro '
    "schema) and `schemaRegistryAddress`: decoded in Rust in the Python workers",
    "ferrokafka-spark-datasource": '`spark.read.format("ferrokafka")` with the same options '
    "(`ferrokafka.spark.register(spark)` once, untimed)",
    "spark-ceiling": "no Kafka, no decoding: the same rows, already decoded, in the schema "
    "ferrokafka's readers hand Spark (Kafka's columns, `value` the struct, the corrupt-record "
    "column), written to an Arrow file per partition before the runs; `mapInArrow` over a plan "
    "of one row per file, each task memory-mapping its file (in the page cache) and yielding "
    "its batches of 10,000 rows: the most any Python reader can give Spark for this query here",
}
GROUP_NOTES = {
    "java": "tools/java/BenchGroup.java: members are threads of one fresh JVM, so its first "
    "record includes loading the client's classes",
    "ferrokafka-kip848": 'group_protocol="consumer" (KIP-848; the broker paces heartbeats)',
    "java-kip848": "group.protocol=consumer (KIP-848)",
}


def label(client: str, versions: dict[str, Any], role: str = "consumer") -> str:
    v = versions
    names = {
        "ferrokafka": "ferrokafka `getmany`",
        "ferrokafka-arrow": "ferrokafka `getmany_arrow`",
        "ferrokafka-group": "ferrokafka `getmany`, group",
        "ferrokafka-tuned": "ferrokafka `getmany`, `memory.tune()`",
        "ferrokafka-arrow-tuned": "ferrokafka `getmany_arrow`, `memory.tune()`",
        "ferrokafka-getone": "ferrokafka `getone`",
        "ferrokafka-async-for": "ferrokafka `async for`",
        "ferrokafka-group-async-for": "ferrokafka `async for`, group",
        "aiokafka-async-for": f"aiokafka {v.get('aiokafka')} `async for`",
        "aiokafka-group-async-for": f"aiokafka {v.get('aiokafka')} `async for`, group",
        "kafka-python-iter": f"kafka-python {v.get('kafka-python')} `for msg in consumer`",
        "confluent-kafka-poll": f"confluent-kafka {v.get('confluent-kafka')} `poll()` loop",
        "confluent-kafka-aio-poll": (
            f"confluent-kafka {v.get('confluent-kafka')} `await AIOConsumer.poll()` loop"
        ),
        "aiokafka-getone": f"aiokafka {v.get('aiokafka')} `getone`",
        "ferrokafka-uvloop": "ferrokafka `getmany`, uvloop",
        "ferrokafka-getone-uvloop": "ferrokafka `getone`, uvloop",
        "aiokafka-uvloop": f"aiokafka {v.get('aiokafka')}, uvloop",
        "aiokafka-getone-uvloop": f"aiokafka {v.get('aiokafka')} `getone`, uvloop",
        "ferrokafka-kip848": "ferrokafka, KIP-848",
        "aiokafka": f"aiokafka {v.get('aiokafka')}",
        "kafka-python": f"kafka-python {v.get('kafka-python')}",
        "confluent-kafka": f"confluent-kafka {v.get('confluent-kafka')} `Consumer`",
        "confluent-kafka-aio": f"confluent-kafka {v.get('confluent-kafka')} `AIOConsumer`",
        "kafkarrow": f"kafkarrow {v.get('kafkarrow')}",
        "java": f"Java KafkaConsumer {v.get('kafka-clients (Java consumer)')}",
        "java-kip848": "Java KafkaConsumer, KIP-848",
        "java-perf": "Kafka ConsumerPerformance (CRC checks off)",
        "spark-jvm": f"Spark's Kafka source {v.get('spark-sql-kafka-0-10')}",
        "ferrokafka-spark-arrow": 'ferrokafka `read_kafka`, `fetcher="arrow"`',
        "ferrokafka-spark-pandas": 'ferrokafka `read_kafka`, `fetcher="pandas"`',
        "ferrokafka-spark-datasource": 'ferrokafka `format("ferrokafka")`',
        "spark-ceiling": "Spark's ceiling: `mapInArrow`, in-memory batches",
        "spark-stream-ceiling": "a Python streaming source of in-memory batches (ceiling)",
        "ferrokafka-share": "ferrokafka share `getmany`, implicit acks",
        "ferrokafka-share-async-for": "ferrokafka share `async for`, implicit acks",
        "ferrokafka-share-arrow": "ferrokafka share `getmany_arrow`, implicit acks",
        "ferrokafka-share-explicit": "ferrokafka share `getmany`, explicit acks + `commit()` "
        "per poll",
        "confluent-kafka-share": f"confluent-kafka {v.get('confluent-kafka')} "
        "`ShareConsumer.poll()`, implicit acks",
        "java-share": f"Java KafkaShareConsumer {v.get('kafka-clients (Java consumer)')}, "
        "implicit acks",
        "java-share-commit": f"Java KafkaShareConsumer {v.get('kafka-clients (Java consumer)')}, "
        "implicit acks + `commitSync()` per poll",
    }
    if role == "producer":
        names.update(
            {
                "ferrokafka": "ferrokafka `send`, a done-callback per future",
                "ferrokafka-arrow": "ferrokafka `send_arrow`",
                "ferrokafka-dropped": "ferrokafka `send`, futures dropped",
                "ferrokafka-gather": "ferrokafka `send`, futures awaited (`gather` per 10k)",
                "ferrokafka-send-and-wait": "ferrokafka `send_and_wait`, 100 tasks",
                "aiokafka-dropped": f"aiokafka {v.get('aiokafka')} `send`, futures dropped",
                "aiokafka-gather": f"aiokafka {v.get('aiokafka')} `send`, `gather` per 10k",
                "aiokafka-send-and-wait": f"aiokafka {v.get('aiokafka')} `send_and_wait`, "
                "100 tasks",
                "confluent-kafka-poll-each": f"confluent-kafka {v.get('confluent-kafka')} "
                "`produce` + callback + `poll(0)` each",
                "confluent-kafka-aio-gather": f"confluent-kafka {v.get('confluent-kafka')} "
                "`AIOProducer`, `gather` per 10k",
                "confluent-kafka-aio-send-and-wait": f"confluent-kafka "
                f"{v.get('confluent-kafka')} `AIOProducer`, awaited, 100 tasks",
                "aiokafka": f"aiokafka {v.get('aiokafka')} `send`, a done-callback per future",
                "confluent-kafka": f"confluent-kafka {v.get('confluent-kafka')} `produce` + "
                "callback, `poll(0)` per 8k",
                "java-perf": f"Kafka ProducerPerformance {v.get('kafka-clients (Java consumer)')}",
                "java": f"Java KafkaProducer {v.get('kafka-clients (Java consumer)')} `send` "
                "+ callback",
            }
        )
    if role == "transactions":
        names.update(
            {
                "ferrokafka": "ferrokafka `async with producer.transaction()`",
                "aiokafka": f"aiokafka {v.get('aiokafka')} `async with producer.transaction()`",
                "confluent-kafka": f"confluent-kafka {v.get('confluent-kafka')} "
                "`begin_transaction()`, `commit_transaction()`",
                "java": f"Java KafkaProducer {v.get('kafka-clients (Java consumer)')} "
                "`beginTransaction()`, `commitTransaction()`",
            }
        )
    if role == "typed":
        names.update(
            {
                "ferrokafka-arrow": "ferrokafka `getmany_arrow(value_format=...)`",
                "spark-ceiling": "Spark's ceiling: `mapInArrow`, decoded rows from memory",
                "confluent-kafka": f"confluent-kafka {v.get('confluent-kafka')} `Consumer` + "
                "its deserializer",
                "spark-jvm": f"Spark's Kafka source {v.get('spark-sql-kafka-0-10')} + "
                "`from_json`/`from_avro`",
                "ferrokafka-spark-arrow": "ferrokafka in Spark, `read_kafka` + `valueFormat`",
                "ferrokafka-spark-datasource": 'ferrokafka in Spark, `format("ferrokafka")` + '
                "`valueFormat`",
            }
        )
    if role == "group":
        names["ferrokafka"] = "ferrokafka"
        names["confluent-kafka"] = f"confluent-kafka {v.get('confluent-kafka')}"
    return names.get(client, client)


def _by(runs: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        out.setdefault(r[key], []).append(r)
    return out


def _rate(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e5 else f"{x / 1e3:.1f} k"


def _failures(s: dict[str, Any]) -> str:
    reasons = s["failures"]
    if s.get("unsupported") and not reasons:
        return s["unsupported"]
    return f"{len(reasons)} of {s['runs']} runs failed: {reasons[-1]}" if reasons else ""


def _failed(s: dict[str, Any]) -> str:
    return "unsupported" if s.get("unsupported") and not s["failures"] else "failed"


def _header(columns: str) -> list[str]:
    """A Markdown table's header row from ``"a | b | c"``, and the separator under it."""
    return [f"| {columns} |", "|" + "---|" * (columns.count("|") + 1)]


def _failed_row(s: dict[str, Any], width: int, *first: str) -> str:
    """The row of a client without figures: the ``first`` cells, that it failed (or is
    unsupported) and why, then empty cells up to ``width``."""
    cells = [*first, _failed(s), _failures(s)]
    return "| " + " | ".join(cells) + " |" + " |" * (width - len(cells))


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per workload, case and client: median/min/max of every figure that applies."""
    metrics = ["records_per_s", "mb_per_s", "wall", "cpu", "rss_mb", "proc_cpu"]
    metrics += ["first_record_s", "settle_s", "achieved_rate", "p50", "p99", "p999", "max"]
    metrics += ["plan_s", "p50_ms", "p99_ms", "max_ms", "drain_s", "batches"]
    metrics += ["batch_records_per_s", "trigger_s", "start_s"]
    metrics += ["txn_per_s", "setup_s"]
    out: dict[str, Any] = {}
    for r in runs:
        if "lat_us" in r:
            r.update(
                zip(("p50", "p99", "p999", "max"), (v / 1000 for v in r["lat_us"]), strict=True)
            )
    for workload, wruns in _by(runs, "workload").items():
        for case, cruns in _by(wruns, "case").items():
            for client, kruns in _by(cruns, "client").items():
                figures = {m: summarize(kruns, m) for m in metrics}
                figures = {m: s for m, s in figures.items() if "median" in s}
                first = summarize(kruns, "round")
                pauses = [r["broker_pauses_ms"] for r in kruns if "broker_pauses_ms" in r]
                if pauses:
                    figures["broker_pauses_ms"] = [ms for run in pauses for ms in run]
                out.setdefault(workload, {}).setdefault(case, {})[client] = {
                    "runs": first["runs"],
                    "ok": first["ok"],
                    "failures": first["failures"],
                    **({"unsupported": first["unsupported"]} if "unsupported" in first else {}),
                    **figures,
                }
    return out


def _med(s: dict[str, Any], metric: str) -> float | None:
    m = s.get(metric)
    return m["median"] if m else None


def consumer_table(case: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    lines = _header(
        "client | records/s | min-max | MB/s (values) | wall s | CPU s "
        "| peak RSS MB | vs ferrokafka"
    )
    base = _med(case.get("ferrokafka", {}), "records_per_s")
    for client, s in case.items():
        name = label(client, versions)
        rate = _med(s, "records_per_s")
        if rate is None:
            lines.append(_failed_row(s, 8, name))
            continue
        lines.append(f"| {name} | {_throughput_cells(s, rate, base, '.0f')} |")
    return lines


def _throughput_cells(s: dict[str, Any], rate: float, base: float | None, mb: str) -> str:
    """records/s, min-max, MB/s, wall, CPU, peak RSS and the ratio to ferrokafka's rate."""
    r = s["records_per_s"]
    ratio = f"{rate / base:.2f}x" if base else "n/a"
    return (
        f"{_rate(rate)} | {_rate(r['min'])}-{_rate(r['max'])} "
        f"| {format(_med(s, 'mb_per_s'), mb)} | {_med(s, 'wall'):.2f} | {_med(s, 'cpu'):.2f} "
        f"| {s['rss_mb']['max']:.0f} | {ratio}"
    )


def spark_table(case: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    lines = _header(
        "reader | rows/s | min-max | MB/s (values) | wall s | of which DataFrame s "
        "| CPU s | vs Spark's Kafka source | of Spark's ceiling"
    )
    base = _med(case.get(SPARK_BASE, {}), "records_per_s")
    ceiling = _med(case.get("spark-ceiling", {}), "records_per_s")
    for client, s in case.items():
        name = label(client, versions, "spark")
        rate = _med(s, "records_per_s")
        if rate is None:
            lines.append(_failed_row(s, 9, name))
            continue
        r = s["records_per_s"]
        vs = f"{rate / base:.2f}x" if base else "n/a"
        of = f"{rate / ceiling:.0%}" if ceiling else "n/a"
        lines.append(
            f"| {name} | {_rate(rate)} | {_rate(r['min'])}-{_rate(r['max'])} "
            f"| {_med(s, 'mb_per_s'):.0f} | {_med(s, 'wall'):.2f} | {_med(s, 'plan_s'):.2f} "
            f"| {_med(s, 'cpu'):.2f} | {vs} | {of} |"
        )
    return lines


def typed_table(case: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    """W11, one format: a row per client, each beside confluent-kafka's consumer and beside
    Spark's Kafka source with its decoding function. Spark readers share one process: no peak
    RSS of their own, and their CPU s is the process tree's."""
    lines = _header(
        "client | rows/s | min-max | MB/s (values) | wall s | CPU s | peak RSS MB "
        "| vs confluent-kafka | vs Spark's source"
    )
    base = _med(case.get(TYPED_BASE, {}), "records_per_s")
    spark = _med(case.get(TYPED_SPARK_BASE, {}), "records_per_s")
    for client, s in case.items():
        name = label(client, versions, "typed")
        rate = _med(s, "records_per_s")
        if rate is None:
            lines.append(_failed_row(s, 9, name))
            continue
        r = s["records_per_s"]
        rss = s.get("rss_mb") if "plan_s" not in s else None
        cells = [
            name,
            _rate(rate),
            f"{_rate(r['min'])}-{_rate(r['max'])}",
            f"{_med(s, 'mb_per_s'):.1f}",
            f"{_med(s, 'wall'):.2f}",
            _opt(_med(s, "cpu")),
            "n/a (one Spark process)" if rss is None else f"{rss['max']:.0f}",
            f"{rate / base:.2f}x" if base else "n/a",
            f"{rate / spark:.2f}x" if spark else "n/a",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def latency_table(case: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    lines = _header(
        "client | p50 ms | p99 ms | p99.9 ms | max ms | CPU s "
        "| peak RSS MB | p99 / ferrokafka's | produced at | broker GC pauses in its runs"
    )
    base = _med(case.get("ferrokafka", {}), "p99")
    for client, s in case.items():
        name = label(client, versions)
        p99 = _med(s, "p99")
        if p99 is None:
            lines.append(_failed_row(s, 10, name))
            continue
        ratio = f"{p99 / base:.2f}x" if base else "n/a"
        achieved = _med(s, "achieved_rate")
        lines.append(
            f"| {name} | {_med(s, 'p50'):.1f} | {p99:.1f} | {_med(s, 'p999'):.1f} "
            f"| {_med(s, 'max'):.1f} | {_med(s, 'cpu'):.2f} | {s['rss_mb']['max']:.0f} "
            f"| {ratio} | {_rate(achieved) if achieved else '?'}/s | {_pauses(s)} |"
        )
    return lines


def _pauses(s: dict[str, Any]) -> str:
    """The broker's collection pauses during a client's measured runs (W5 collects the
    broker's heap before each run so that there are none): "none", or how many and how long."""
    if "broker_pauses_ms" not in s:
        return "not recorded"
    pauses = s["broker_pauses_ms"]
    if not pauses:
        return "none"
    return f"{len(pauses)}: " + ", ".join(f"{ms:.0f}" for ms in pauses) + " ms"


def producer_table(cases: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    lines = _header(
        "producer | acks, codec | records/s | min-max | MB/s | wall s | CPU s "
        "| peak RSS MB | vs ferrokafka"
    )
    for case_name, case in cases.items():
        base = _med(case.get("ferrokafka", {}), "records_per_s")
        for client, s in case.items():
            name = label(client, versions, "producer")
            rate = _med(s, "records_per_s")
            if rate is None:
                lines.append(_failed_row(s, 9, name, case_name))
                continue
            lines.append(f"| {name} | {case_name} | {_throughput_cells(s, rate, base, '.1f')} |")
    return lines


def group_table(case: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    lines = _header(
        "client | start to first record s | min-max | 4th member to settled s | min-max "
        "| settle / ferrokafka's"
    )
    base = _med(case.get("ferrokafka", {}), "settle_s")
    for client, s in case.items():
        name = label(client, versions, "group")
        if _med(s, "settle_s") is None:
            lines.append(_failed_row(s, 6, name))
            continue
        f, st = s["first_record_s"], s["settle_s"]
        ratio = f"{st['median'] / base:.2f}x" if base else "n/a"
        lines.append(
            f"| {name} | {f['median']:.2f} | {f['min']:.2f}-{f['max']:.2f} | {st['median']:.2f} "
            f"| {st['min']:.2f}-{st['max']:.2f} | {ratio} |"
        )
    return lines


def share_table(
    cases: dict[str, Any], versions: dict[str, Any], runs: list[dict[str, Any]]
) -> list[str]:
    """W9: a row per member count and client; the records each member received are those of
    the client's median run (by records/s)."""
    lines = _header(
        "client | members | records/s | min-max | first to last record s | records per member "
        "| CPU s | peak RSS MB | vs java-share"
    )
    for case_name, case in cases.items():
        if case_name == "setup":
            continue
        base = _med(case.get(SHARE_BASE, {}), "records_per_s")
        members = case_name.split()[0]
        for client, s in case.items():
            name = label(client, versions, "share")
            rate = _med(s, "records_per_s")
            if rate is None:
                lines.append(_failed_row(s, 9, name, members))
                continue
            ok = sorted(
                (
                    r
                    for r in runs
                    if (r["workload"], r["case"], r["client"]) == ("W9", case_name, client)
                    and r["ok"]
                ),
                key=lambda r: r["records_per_s"],
            )
            split = " / ".join(f"{n:,}" for n in ok[(len(ok) - 1) // 2]["per_member"])
            r = s["records_per_s"]
            cpu = _med(s, "cpu")
            rss = s.get("rss_mb")
            cells = [
                name,
                members,
                _rate(rate),
                f"{_rate(r['min'])}-{_rate(r['max'])}",
                f"{_med(s, 'wall'):.2f}",
                split,
                "n/a" if cpu is None else f"{cpu:.2f}",  # Java: the JVMs' CPU is not split out
                "?" if rss is None else f"{rss['max']:.0f}",
                f"{rate / base:.2f}x" if base else "n/a",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def transactions_table(cases: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    """W12: a row per case and client; ratios are to the Java producer's transactions/s."""
    lines = _header(
        "client | case | transactions/s | min-max | records/s | records a transaction "
        "| wall s | CPU s | CPU ms a transaction | set-up s | peak RSS MB | vs Java"
    )
    for case_name, case in cases.items():
        if case_name == "setup":
            continue
        base = _med(case.get(TXN_BASE, {}), "txn_per_s")
        for client, s in case.items():
            name = label(client, versions, "transactions")
            rate = _med(s, "txn_per_s")
            if rate is None:
                lines.append(_failed_row(s, 12, name, case_name))
                continue
            t = s["txn_per_s"]
            cpu = _med(s, "cpu") or 0.0
            wall = _med(s, "wall") or 0.0
            records = _med(s, "records_per_s") or 0.0
            rss = s.get("rss_mb")
            cells = [
                name,
                case_name,
                f"{rate:,.0f}",
                f"{t['min']:,.0f}-{t['max']:,.0f}",
                _rate(records),
                f"{records / rate:.0f}",
                f"{wall:.2f}",
                f"{cpu:.2f}",
                f"{cpu * 1000 / (rate * wall):.2f}" if rate and wall else "n/a",
                _opt(_med(s, "setup_s")),
                "?" if rss is None else f"{rss['max']:.0f}",
                f"{rate / base:.2f}x" if base else "n/a",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _transaction_versions(runs: list[dict[str, Any]]) -> str:
    """The cluster's finalized ``transaction.version`` as W12's runs found it."""
    found = sorted({r["transaction_version"] for r in runs if "transaction_version" in r})
    if not found:
        return "not read (no run)"
    return " and ".join(str(v) for v in found) + (
        "" if min(found) >= 2 else " (**not 2**: the older protocol was measured)"
    )


def _opt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def stream_tables(
    cases: dict[str, Any], versions: dict[str, Any], runs: list[dict[str, Any]]
) -> list[str]:
    """W10: the catch-up's rows/s per sink, then a row per steady-state case and source."""
    lines: list[str] = []
    for case_name, catch_up in cases.items():
        if not case_name.startswith("catch-up"):
            continue
        sink = case_name.removeprefix("catch-up, ")
        lines += ["", f"### Catch-up (`Trigger.AvailableNow`) into {sink}", ""]
        lines += _header(
            "source | rows/s | min-max | wall s | before the first micro-batch s "
            "| micro-batches s | rows/s in the micro-batches | micro-batches | CPU s "
            "| vs Spark's Kafka source: rows/s, in the micro-batches"
        )
        base = _med(catch_up.get(SPARK_BASE, {}), "records_per_s")
        base_batch = _med(catch_up.get(SPARK_BASE, {}), "batch_records_per_s")
        for client, s in catch_up.items():
            name = label(client, versions, "spark")
            rate = _med(s, "records_per_s")
            if rate is None:
                lines.append(_failed_row(s, 10, name))
                continue
            r = s["records_per_s"]
            batch = _med(s, "batch_records_per_s")
            ratios = f"{rate / base:.2f}x" if base else "n/a"
            ratios += f", {batch / base_batch:.2f}x" if batch and base_batch else ", n/a"
            lines.append(
                f"| {name} | {_rate(rate)} | {_rate(r['min'])}-{_rate(r['max'])} "
                f"| {_med(s, 'wall'):.2f} | {_opt(_med(s, 'start_s'))} "
                f"| {_opt(_med(s, 'trigger_s'))} | {_rate(batch) if batch else 'n/a'} "
                f"| {_med(s, 'batches'):.0f} | {_med(s, 'cpu'):.1f} | {ratios} |"
            )
    steady = {c: v for c, v in cases.items() if not c.startswith("catch-up") and c != "process"}
    if steady:
        lines += ["", "### Steady state: end-to-end latency", ""]
        lines += _header(
            "source | produced at, trigger | p50 ms | p99 ms | max ms | kept up "
            "| last record in sink after the producer's end, s | micro-batches | CPU s "
            "| p99 / Spark's"
        )
    for case_name, case in steady.items():
        base_p99 = _med(case.get(SPARK_BASE, {}), "p99_ms")
        for client, s in case.items():
            name = label(client, versions, "spark")
            p99 = _med(s, "p99_ms")
            if p99 is None:
                lines.append(_failed_row(s, 10, name, case_name))
                continue
            mine = [
                r
                for r in runs
                if (r["workload"], r["case"], r["client"]) == ("W10", case_name, client) and r["ok"]
            ]
            kept = sum(1 for r in mine if r.get("keeps_up"))
            drain = _med(s, "drain_s")
            cells = [
                name,
                case_name,
                f"{_med(s, 'p50_ms'):.0f}",
                f"{p99:.0f}",
                f"{_med(s, 'max_ms'):.0f}",
                f"{kept} of {len(mine)}",
                "n/a" if drain is None else f"{drain:.1f}",
                f"{_med(s, 'batches'):.0f}",
                f"{_med(s, 'cpu'):.1f}",
                f"{p99 / base_p99:.2f}x" if base_p99 else "n/a",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def _notes(summ: dict[str, Any], versions: dict[str, Any]) -> list[str]:
    """One line per client that ran, saying what it is and how it is set up."""
    seen: dict[str, set[str]] = {}
    for workload, cases in summ.items():
        role = {
            "W6": "producer",
            "W7": "group",
            "W8": "spark",
            "W9": "share",
            "W10": "spark",
            "W11": "typed",
            "W12": "transactions",
        }.get(workload, "consumer")
        for case in cases.values():
            seen.setdefault(role, set()).update(case)
    lines = []
    where = {
        "consumer": "",
        "producer": " (W6)",
        "group": " (W7)",
        "spark": " (W8)",
        "share": " (W9)",
        "transactions": " (W12)",
        "typed": " (W11)",
    }
    roles = [("consumer", NOTES), ("producer", PRODUCER_NOTES), ("group", GROUP_NOTES)]
    roles += [("spark", SPARK_NOTES), ("share", SHARE_NOTES), ("transactions", TXN_NOTES)]
    roles += [("typed", TYPED_NOTES)]
    for role, notes in roles:
        lines += [
            f"- {label(c, versions, role)}{where[role]}: {notes[c]}"
            for c in notes
            if c in seen.get(role, ())
        ]
    return lines


W11_METHOD = (
    "W11 reads the same records as JSON and as Avro in Confluent's wire format, to typed "
    "columns. The Python clients run each in its own process, alternating round by round, "
    "after one untimed read of each topic by ferrokafka (the broker's cold start); each ends "
    "with a `pyarrow.Table` of the decoded fields, so its rows/s is what reaching a typed "
    "table costs. The Spark readers run in one SparkSession as W8's, each once untimed per "
    "format, then alternating; their query aggregates every decoded field, so no decoding is "
    "pruned. Every run's count and sums over every field (string lengths, list sizes, nulls, "
    "timestamps) must be the dataset's exactly. The Schema Registry is the harness's own: "
    "`GET /schemas/ids/{id}` served from a thread of the harness (no Schema Registry can be "
    "run from the packages here); each reader fetches a schema once and keeps it."
)

W8_METHOD = (
    "W8 runs in one process holding one SparkSession (a process has one SparkContext): the "
    'readers run `df.selectExpr("count(*)", "sum(length(value))").collect()`, each once '
    "untimed (the session's first queries load classes and start the Python workers), then in "
    "alternating rounds. Each run checks the count and the sum of value lengths against the "
    "dataset. Wall s runs from building the DataFrame (`read_kafka` plans its offset ranges "
    "there: the DataFrame s column) to the collected row; CPU s is the whole process tree's "
    "over that span (the Python driver, Spark's JVM, its Python workers). Peak RSS is not per "
    "reader here; the JSON has the JVM's and the driver's."
)


def markdown(report: dict[str, Any]) -> str:
    versions = report["machine"]["versions"]
    m = report["machine"]
    summ = report["summary"]
    out = [
        f"# ferrokafka benchmark harness, {report['date']}",
        "",
        f"`{report['command']}`: {m['cores']} cores ({m['cpu_model']}, {m['machine']}), "
        f"{m['memory_gib']} GiB, Python {m['python']}, broker: {versions['broker']}; "
        f"{report['rounds']} round(s) alternating between clients, each client in its own "
        "process"
        + (" (--quick: sizes too small to compare clients)" if report["quick"] else "")
        + f"; took {report['elapsed_s']:.0f} s; 1-minute load average at start and end "
        + ", ".join(f"{v[0]:.1f}" for v in m.get("load_average_1_5_15", {}).values())
        + " (the cores are shared with other work).",
        "",
        "Before the rounds of W1-W4, each dataset is read once, untimed, by ferrokafka "
        "`getmany_arrow`, so that no client pays for the broker's cold start. "
        "Every consumer run checks what it read: the count and a checksum of offsets and value "
        "lengths (ConsumerPerformance: count and bytes); every producer run, that the broker "
        "stored exactly what was acknowledged. Figures are medians over rounds, with min-max; "
        "CPU s is the process CPU time (all threads) of the timed region, from the client's "
        "construction to its close; peak RSS is the whole process's (max over rounds), for a "
        "Python consumer read when the client has closed (before the harness sorts W5's "
        "latencies, which makes a Python int of each). ferrokafka's modules and the harness's "
        "are byte-compiled first, as pip does on install (the peers' installed modules already "
        "are). A run that failed is listed as failed, with its reason.",
        *(["", W8_METHOD] if "W8" in report["workloads"] else []),
        *(["", W11_METHOD] if "W11" in report["workloads"] else []),
        "",
        "Versions: "
        + ", ".join(f"{k} {v}" for k, v in versions.items() if k != "broker" and v is not None)
        + ".",
    ]
    fk = m["ferrokafka"]
    if fk["start"] == fk["end"]:
        out += ["", f"ferrokafka: {fk['start']}."]
    else:
        out += [
            "",
            f"**ferrokafka changed during this run**: at the start {fk['start']}, at the end "
            f"{fk['end']}; its figures mix both.",
        ]
    notes = _notes(summ, versions)
    if notes:
        out += ["", "Clients:", "", *notes]
    for workload in report["workloads"]:
        desc = report["descriptions"].get(workload, "")
        cases = summ.get(workload, {})
        out += ["", f"## {workload}: {desc}"]
        if workload in CONSUMER_WORKLOADS:
            for case_name, case in cases.items():
                if len(cases) > 1:
                    out += ["", f"### {workload} {case_name}"]
                out += ["", *consumer_table(case, versions)]
        elif workload == "W5":
            for case_name, case in cases.items():
                out += ["", f"### produced at {case_name}", "", *latency_table(case, versions)]
        elif workload == "W6":
            out += ["", *producer_table(cases, versions)]
        elif workload == "W7":
            for case in cases.values():
                out += ["", *group_table(case, versions)]
        elif workload == "W8":
            for case in cases.values():
                out += ["", *spark_table(case, versions)]
        elif workload == "W9":
            out += ["", *share_table(cases, versions, report["runs"])]
        elif workload == "W10":
            out += stream_tables(cases, versions, report["runs"])
        elif workload == "W11":
            for case_name, case in cases.items():
                if case_name != "setup":
                    out += ["", f"### W11 {case_name}", "", *typed_table(case, versions)]
        elif workload == "W12":
            w12 = [r for r in report["runs"] if r["workload"] == "W12"]
            out += [
                "",
                "The cluster's finalized `transaction.version` (ApiVersions' finalized features): "
                + _transaction_versions(w12)
                + ".",
                "",
                *transactions_table(cases, versions),
            ]
    goals = targets(summ)
    if goals:
        quick = " (--quick: these sizes say nothing about the targets)" if report["quick"] else ""
        out += ["", f"## Targets{quick}", "", *goals]
    if report.get("not_run"):
        out += ["", "## Not run", ""]
        out += [f"- {name}: {why}" for name, why in report["not_run"].items()]
    return "\n".join(out) + "\n"


def targets(summ: dict[str, Any]) -> list[str]:
    """The targets (issues 6 and 26) against the figures of this run, each said met or not."""
    lines = []

    def med(w: str, case: str, client: str, metric: str) -> float | None:
        return _med(summ.get(w, {}).get(case, {}).get(client, {}), metric)

    def check(what: str, ours: float | None, theirs: float | None, want: float, hi: bool) -> None:
        if ours is None or theirs is None:
            lines.append(f"- {what}: no figure (a client failed or did not run)")
            return
        ratio = ours / theirs
        met = ratio >= want if hi else ratio <= want
        lines.append(
            f"- {what}: {ratio:.2f}x (target {'>=' if hi else '<='} {want:g}x): "
            + ("met" if met else "**not met**")
        )

    def rss_check(w: str, case: str, what: str) -> None:
        clients = summ.get(w, {}).get(case, {})
        ours = clients.get("ferrokafka", {}).get("rss_mb")
        theirs = clients.get("aiokafka", {}).get("rss_mb")
        check(what, ours["max"] if ours else None, theirs["max"] if theirs else None, 1, False)

    for w in CONSUMER_WORKLOADS:
        for case in summ.get(w, {}):
            tag = f"{w}{'' if case == 'none' else ' ' + case}"
            rate = med(w, case, "ferrokafka", "records_per_s")
            check(
                f"{tag} records/s, ferrokafka `getmany` / aiokafka",
                rate,
                med(w, case, "aiokafka", "records_per_s"),
                5,
                True,
            )
            check(
                f"{tag} records/s, ferrokafka `getmany` / confluent-kafka `Consumer`",
                rate,
                med(w, case, "confluent-kafka", "records_per_s"),
                2,
                True,
            )
            check(
                f"{tag} records/s, ferrokafka `getmany_arrow` / Java KafkaConsumer (CRC on)",
                med(w, case, "ferrokafka-arrow", "records_per_s"),
                med(w, case, "java", "records_per_s"),
                1,
                True,
            )
            rss_check(w, case, f"{tag} peak RSS, ferrokafka `getmany` / aiokafka")
            # One record at a time (issue 37): against aiokafka's `async for`, confluent-kafka's
            # `poll()` loop and ferrokafka's own `getmany`.
            for client, call in (
                ("ferrokafka-async-for", "`async for`"),
                ("ferrokafka-getone", "`getone`"),
            ):
                ours = med(w, case, client, "records_per_s")
                if ours is None and client not in summ.get(w, {}).get(case, {}):
                    continue
                for peer, shown, want in (
                    ("aiokafka-async-for", "aiokafka `async for`", 10),
                    ("confluent-kafka-poll", "confluent-kafka `poll()` loop", 3),
                    ("ferrokafka", "ferrokafka `getmany`", 0.5),
                ):
                    check(
                        f"{tag} records/s, ferrokafka {call} / {shown}",
                        ours,
                        med(w, case, peer, "records_per_s"),
                        want,
                        True,
                    )
    for case in summ.get("W5", {}):
        rss_check("W5", case, f"W5 {case} peak RSS, ferrokafka `getmany` / aiokafka")
        for call in ("getmany", "getone"):
            for loop in ("asyncio", "uvloop"):
                suffix = ("" if call == "getmany" else "-getone") + (
                    "" if loop == "asyncio" else "-uvloop"
                )
                ratios = []
                for metric, shown in (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9")):
                    ours = med("W5", case, f"ferrokafka{suffix}", metric)
                    theirs = med("W5", case, f"aiokafka{suffix}", metric)
                    if ours is not None and theirs:
                        ratios.append((shown, ours / theirs))
                what = f"W5 {case} `{call}` {loop} latency, ferrokafka / aiokafka"
                if len(ratios) < 3:
                    lines.append(f"- {what}: no figure (a client failed or did not run)")
                    continue
                met = all(r <= 1 for _, r in ratios)
                shown_ratios = ", ".join(f"{name} {r:.2f}x" for name, r in ratios)
                lines.append(
                    f"- {what}: {shown_ratios} (target <= 1x each): "
                    + ("met" if met else "**not met**")
                )
    for case in summ.get("W6", {}):
        if case.startswith("idioms"):
            # Issue 37: each idiom beside confluent-kafka's delivery-confirmed loop
            # (`produce()`, a delivery callback, `poll(0)` after each), and `send_and_wait`
            # from 100 tasks beside aiokafka's and confluent-kafka's AIOProducer's.
            each = med("W6", case, "confluent-kafka-poll-each", "records_per_s")
            for client, shown in (
                ("ferrokafka-dropped", "futures dropped"),
                ("ferrokafka", "a done-callback per future"),
                ("ferrokafka-gather", "futures awaited (`gather`)"),
            ):
                check(
                    f"W6 {case} records/s, ferrokafka `send`, {shown} / confluent-kafka "
                    "`produce` + callback + `poll(0)`",
                    med("W6", case, client, "records_per_s"),
                    each,
                    1,
                    True,
                )
            waited = med("W6", case, "ferrokafka-send-and-wait", "records_per_s")
            for peer, shown, want in (
                ("aiokafka-send-and-wait", "aiokafka's", 2),
                ("confluent-kafka-aio-send-and-wait", "confluent-kafka `AIOProducer`", 1),
            ):
                check(
                    f"W6 {case} records/s, ferrokafka `send_and_wait` x100 tasks / {shown}",
                    waited,
                    med("W6", case, peer, "records_per_s"),
                    want,
                    True,
                )
            rss_check("W6", case, f"W6 {case} peak RSS, ferrokafka producer / aiokafka's")
            continue
        confluent = med("W6", case, "confluent-kafka", "records_per_s")
        check(
            f"W6 {case} records/s, ferrokafka `send` / confluent-kafka `produce`",
            med("W6", case, "ferrokafka", "records_per_s"),
            confluent,
            1,
            True,
        )
        check(
            f"W6 {case} records/s, ferrokafka `send_arrow` / confluent-kafka `produce`",
            med("W6", case, "ferrokafka-arrow", "records_per_s"),
            confluent,
            3,
            True,
        )
        rss_check("W6", case, f"W6 {case} peak RSS, ferrokafka producer / aiokafka's")
    for client, what, want in (
        ("ferrokafka-spark-arrow", '`read_kafka` `fetcher="arrow"`', 3),
        ("ferrokafka-spark-pandas", '`read_kafka` `fetcher="pandas"`', 2),
        ("ferrokafka-spark-datasource", '`format("ferrokafka")`', 2.5),
    ):
        if client in summ.get("W8", {}).get("none", {}):
            check(
                f"W8 rows/s, ferrokafka {what} / Spark's Kafka source",
                med("W8", "none", client, "records_per_s"),
                med("W8", "none", SPARK_BASE, "records_per_s"),
                want,
                True,
            )
    for case in summ.get("W10", {}):
        if case.startswith("catch-up"):
            check(
                f'W10 {case} rows/s, ferrokafka `format("ferrokafka")` / Spark\'s Kafka source',
                med("W10", case, "ferrokafka-spark-datasource", "records_per_s"),
                med("W10", case, SPARK_BASE, "records_per_s"),
                3,
                True,
            )
            # Not a target: the bound every Python streaming source has here.
            bound = med("W10", case, "spark-stream-ceiling", "records_per_s")
            spark_rate = med("W10", case, SPARK_BASE, "records_per_s")
            if bound is not None and spark_rate:
                lines.append(
                    f"- W10 {case}: the in-memory Python streaming source (ceiling) reaches "
                    f"{bound / spark_rate:.2f}x Spark's Kafka source's rows/s, the most a "
                    "Python source can reach here"
                )
            check(
                f'W10 {case} rows/s in the micro-batches, ferrokafka `format("ferrokafka")` / '
                "Spark's Kafka source",
                med("W10", case, "ferrokafka-spark-datasource", "batch_records_per_s"),
                med("W10", case, SPARK_BASE, "batch_records_per_s"),
                3,
                True,
            )
        elif case != "process":
            check(
                f"W10 {case} p99 latency, ferrokafka's data source / Spark's Kafka source",
                med("W10", case, "ferrokafka-spark-datasource", "p99_ms"),
                med("W10", case, SPARK_BASE, "p99_ms"),
                1,
                False,
            )
    for case in summ.get("W11", {}):
        if case == "setup":
            continue
        # Issue 41: typed payloads to typed Arrow, the consumer beside confluent-kafka's
        # consumer with its deserializer, ferrokafka in Spark beside Spark's own source with
        # from_json/from_avro.
        w11 = summ["W11"][case]
        decoder = "AvroDeserializer" if case == "Avro" else "JSONDeserializer"
        function = "from_avro" if case == "Avro" else "from_json"
        check(
            f"W11 {case} rows/s, ferrokafka `getmany_arrow(value_format=...)` / confluent-kafka "
            f"`Consumer` + `{decoder}`",
            med("W11", case, "ferrokafka-arrow", "records_per_s"),
            med("W11", case, TYPED_BASE, "records_per_s"),
            5,
            True,
        )
        spark_rate = med("W11", case, TYPED_SPARK_BASE, "records_per_s")
        for client, what in (
            ("ferrokafka-spark-arrow", "`read_kafka`"),
            ("ferrokafka-spark-datasource", '`format("ferrokafka")`'),
        ):
            if client in w11:
                check(
                    f"W11 {case} rows/s, ferrokafka in Spark ({what} + `valueFormat`) / Spark's "
                    f"Kafka source + `{function}`",
                    med("W11", case, client, "records_per_s"),
                    spark_rate,
                    3,
                    True,
                )
        # Not targets: Spark's ceiling (the most a Python reader can give Spark), and a Python
        # process beside a Spark session, which a reader may choose between.
        for client, what, after in (
            (
                "spark-ceiling",
                "Spark's ceiling, decoded rows handed over from memory,",
                ": the most a Python reader can reach here",
            ),
            ("ferrokafka-arrow", "ferrokafka `getmany_arrow(value_format=...)`", ""),
        ):
            rate = med("W11", case, client, "records_per_s")
            if rate is not None and spark_rate:
                lines.append(
                    f"- W11 {case} (not a target): {what} reaches {rate / spark_rate:.2f}x the "
                    f"rows/s of Spark's Kafka source + `{function}`{after}"
                )
    for case in summ.get("W12", {}):
        # Issue 42: ferrokafka's transactions at least the Java producer's. A
        # consume-transform-produce transaction is whatever a poll returned, so its records/s
        # is said too: fewer records a poll would mean more, smaller transactions.
        metrics = [("txn_per_s", "transactions/s")]
        if case == CTP_CASE:
            metrics.append(("records_per_s", "records/s"))
        for metric, shown in metrics if case != "setup" else []:
            check(
                f"W12 {case} {shown}, ferrokafka `transaction()` / Java KafkaProducer",
                med("W12", case, "ferrokafka", metric),
                med("W12", case, TXN_BASE, metric),
                1,
                True,
            )
    if "1000/s" in summ.get("W5", {}):
        check(
            "W5 1000/s p99 latency, ferrokafka `getmany` / confluent-kafka `Consumer`",
            med("W5", "1000/s", "ferrokafka", "p99"),
            med("W5", "1000/s", "confluent-kafka", "p99"),
            1,
            False,
        )
    return lines


def write(report: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    js = out_dir / "results.json"
    md = out_dir / "results.md"
    js.write_text(json.dumps(report, indent=1, sort_keys=False) + "\n")
    md.write_text(markdown(report))
    return js, md
