"""W10's child process: one SparkSession (local[2]) streaming from Kafka with each source,
Spark's own (``format("kafka")``, ``spark-jvm``) and ferrokafka's data source
(``format("ferrokafka")``), into the same sinks; and for the catch-up, ``spark-stream-ceiling``:
a Python streaming data source with no Kafka behind it, handing over the same rows as in-memory
Arrow batches, the most any Python streaming source can give Spark here (it pays what Spark
costs every Python source: the process that answers the driver's offset calls, the workers).

Two kinds of run:

- catch-up: the dataset is already in the topic; ``Trigger.AvailableNow`` from the earliest
  offsets, into a ``foreachBatch`` that counts the rows and sums their value lengths, and into
  Spark's Parquet file sink. ``wall`` is from ``start()`` to the query's end, ``trigger_s`` the
  micro-batches by Spark's own account (``triggerExecution``: the rate Spark's progress reports
  as ``processedRowsPerSecond``), ``start_s`` the rest (starting the query and its source); the
  parent checks the count and the value bytes (of the Parquet sink: read back after the clock
  stopped).
- steady state: the query starts on an empty topic (``startingOffsets`` latest) with the
  default trigger or ``processingTime``, into a ``foreachBatch`` that caches the micro-batch,
  appends it to Parquet and counts it; once its first (empty) micro-batch ran, a
  confluent-kafka producer process (W5's fixed-rate source) writes a warm-up and then
  ``rate * seconds`` measured records. A record's latency is from its Kafka timestamp (the
  producer's ``produce()`` call, ms) to the moment its micro-batch's Parquet write returned
  (from 201 quantiles of each batch's timestamps, so a batch costs one aggregate). The run keeps up
  when every measured record reached the sink within ``KEEP_UP_S`` of the producer's end.

Runs are reported as ``{"run": {...}}`` lines as they end, as ``spark_reads`` does.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from .spark_reads import KAFKA_DDL, Progress, _error, ceiling_function, emit, session, tree_cpu_s

SOURCES = ["spark-jvm", "ferrokafka-spark-datasource", "spark-stream-ceiling"]
#: The sources of the steady-state runs (the ceiling reads no topic).
STEADY_SOURCES = ["spark-jvm", "ferrokafka-spark-datasource"]
CEILING_FORMAT = "bench_stream_ceiling"
FORMATS = {
    "spark-jvm": "kafka",
    "ferrokafka-spark-datasource": "ferrokafka",
    "spark-stream-ceiling": CEILING_FORMAT,
}
#: A steady-state run keeps up when its last measured record reached the sink this soon after
#: the producer's last one was sent.
KEEP_UP_S = 5.0
#: How long a steady-state run waits after the producer's end for the stream to drain.
DRAIN_S = 60.0
#: The timestamp quantiles each micro-batch reports of its measured records.
QUANTILES = [i / 200 for i in range(201)]


class Batches:
    """What the ``foreachBatch`` function saw: counts, value bytes, and for steady state the
    latency histogram (ms -> records) of the measured records."""

    def __init__(self, out: Path, latency: bool) -> None:
        self.out = str(out)
        self.latency = latency
        self.count = 0
        self.value_bytes = 0
        self.measured = 0
        self.batches = 0
        self.histogram: dict[int, float] = {}
        self.last_measured_sink = 0.0
        self.lock = threading.Lock()

    def __call__(self, df: Any, batch_id: int) -> None:
        from pyspark import StorageLevel

        df.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            df.select("key", "value", "partition", "offset", "timestamp").write.mode(
                "append"
            ).parquet(self.out)
            sink_ms = time.time() * 1000
            # One aggregate after the write: the count, the value bytes and, of the measured
            # records (flag 1 in their value's first byte, W5's header), the quantiles of
            # their timestamps, each standing for an equal share of them.
            measured = "substring(value, 1, 1) = X'01'"
            row = df.selectExpr(
                "count(*)",
                "sum(length(value))",
                f"count_if({measured})",
                f"percentile_approx(if({measured}, unix_millis(timestamp), null), "
                f"array({', '.join(str(q) for q in QUANTILES)}), 10000)",
            ).collect()[0]
        finally:
            df.unpersist()
        with self.lock:
            self.batches += 1
            self.count += int(row[0])
            self.value_bytes += int(row[1] or 0)
            n = int(row[2])
            if self.latency and n:
                share = n / len(QUANTILES)
                for stamp in row[3]:
                    latency = max(0, round(sink_ms - stamp))
                    self.histogram[latency] = self.histogram.get(latency, 0.0) + share
                self.measured += n
                self.last_measured_sink = sink_ms / 1000


def percentile(histogram: dict[int, float], q: float) -> float:
    total = sum(histogram.values())
    rank = q * total
    seen = 0.0
    for value in sorted(histogram):
        seen += histogram[value]
        if seen >= rank:
            return float(value)
    return float("nan")


def ceiling_source(counts: list[int], value_size: int, topic: str) -> type:
    """The ``spark-stream-ceiling`` data source: one offset (rows so far), one input partition
    per Kafka partition, each read as ``ceiling_function`` builds W8's ceiling. Made here,
    nested, so that cloudpickle ships the classes by value to Spark's Python processes."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

    produce = ceiling_function(counts, value_size, topic)
    total = sum(counts)

    class Part(InputPartition):
        def __init__(self, partition: int) -> None:
            super().__init__(partition)
            self.partition = partition

    class Reader(DataSourceStreamReader):
        def initialOffset(self) -> dict[str, int]:
            return {"rows": 0}

        def latestOffset(self, start: Any = None, limit: Any = None) -> dict[str, int]:
            return {"rows": total}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[Part]:
            return [Part(p) for p in range(len(counts))] if end["rows"] > start["rows"] else []

        def read(self, partition: Any) -> Any:
            import pyarrow as pa

            plan = pa.record_batch([pa.array([partition.partition], pa.int64())], names=["id"])
            yield from produce(iter([plan]))

        def commit(self, end: dict[str, int]) -> None:
            pass

    class Source(DataSource):
        @classmethod
        def name(cls) -> str:
            return CEILING_FORMAT

        def schema(self) -> str:
            return KAFKA_DDL

        def streamReader(self, schema: Any) -> Reader:
            return Reader()

    return Source


def stream(spark: Any, source: str, bootstrap: str, topic: str, starting: str) -> Any:
    return (
        spark.readStream.format(FORMATS[source])
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", starting)
        .load()
    )


#: The catch-up's sinks: a ``foreachBatch`` that counts the rows and sums their value lengths
#: (what the source costs, with the least sink work), and Spark's Parquet file sink.
CATCH_UP_SINKS = {"foreachBatch count": "count", "Parquet sink": "parquet"}


def catch_up(
    spark: Any, source: str, spec: dict[str, Any], work: Path, sink: str
) -> dict[str, Any]:
    counted = {"count": 0, "bytes": 0, "batches": 0}

    def count(df: Any, batch_id: int) -> None:
        row = df.selectExpr("count(*)", "sum(length(value))").collect()[0]
        counted["count"] += int(row[0])
        counted["bytes"] += int(row[1] or 0)
        counted["batches"] += 1

    out = work / "out"
    writer = stream(spark, source, spec["bootstrap"], spec["topic"], "earliest").writeStream
    if sink == "count":
        writer = writer.foreachBatch(count)
    else:
        writer = writer.format("parquet").option("path", str(out))
    cpu0 = tree_cpu_s()
    t0 = time.perf_counter()
    query = (
        writer.option("checkpointLocation", str(work / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    wall = time.perf_counter() - t0
    cpu = tree_cpu_s() - cpu0
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    # Where the query's time went, by Spark's own account (ms per phase, summed over batches).
    phases: dict[str, int] = {}
    for progress in query.recentProgress:
        for phase, ms in (progress["durationMs"] or {}).items():
            phases[phase] = phases.get(phase, 0) + int(ms)
    trigger_s = phases.get("triggerExecution", 0) / 1000
    if sink == "parquet":  # checked after the clock stopped: what the sink holds
        row = spark.read.parquet(str(out)).selectExpr("count(*)", "sum(length(value))").first()
        counted = {
            "count": int(row[0]),
            "bytes": int(row[1] or 0),
            "batches": len(query.recentProgress),
        }
    return {
        **counted,
        "wall": wall,
        "cpu": cpu,
        "phases_ms": phases,
        "trigger_s": trigger_s,
        "start_s": wall - trigger_s,
    }


def steady(
    spark: Any,
    source: str,
    spec: dict[str, Any],
    work: Path,
    topic: str,
    rate: int,
    trigger: str,
) -> dict[str, Any]:
    from .runner import python_child

    seen = Batches(work / "out", latency=True)
    writer = (
        stream(spark, source, spec["bootstrap"], topic, "latest")
        .writeStream.foreachBatch(seen)
        .option("checkpointLocation", str(work / "checkpoint"))
    )
    if trigger != "default":
        writer = writer.trigger(processingTime=trigger)
    query = writer.start()
    try:
        deadline = time.monotonic() + 120
        while query.lastProgress is None:  # its first micro-batch: the offsets are pinned
            if query.exception() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the query did not start: {query.exception()}")
            time.sleep(0.1)
        n = int(rate * spec["seconds"])
        producer = {
            "role": "rate-produce",
            "bootstrap": spec["bootstrap"],
            "topic": topic,
            "rate": rate,
            "seconds": spec["seconds"],
            "warmup": spec["warmup"],
            "value_size": spec["value_size"],
        }
        cpu0 = tree_cpu_s()
        done = subprocess.run(
            python_child(producer),
            capture_output=True,
            text=True,
            timeout=spec["seconds"] * 4 + spec["warmup"] + 120,
            check=False,
        )
        produced_at = time.time()
        if done.returncode != 0:
            raise RuntimeError(f"the producer failed: {done.stderr.strip()[-500:]}")
        deadline = time.monotonic() + DRAIN_S
        while seen.measured < n and time.monotonic() < deadline:
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            time.sleep(0.1)
        drained = seen.last_measured_sink - produced_at if seen.measured >= n else None
        cpu = tree_cpu_s() - cpu0
    finally:
        query.stop()
    hist = dict(seen.histogram)
    return {
        "count": seen.measured,
        "expected": n,
        "batches": seen.batches,
        "p50_ms": percentile(hist, 0.50),
        "p99_ms": percentile(hist, 0.99),
        "max_ms": max(hist) if hist else None,
        "drain_s": drained,
        "keeps_up": drained is not None and drained <= KEEP_UP_S,
        "cpu": cpu,
    }


def _create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from ferrokafka.admin import AIOKafkaAdminClient, NewTopic

    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topics([NewTopic(topic, partitions, 1)])

    asyncio.run(go())


def _delete_topic(bootstrap: str, topic: str) -> None:
    from ferrokafka.admin import AIOKafkaAdminClient

    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.delete_topics([topic])

    asyncio.run(go())


def run(spec: dict[str, Any]) -> dict[str, Any]:
    import ferrokafka.spark

    sources: list[str] = spec["sources"]
    root = Path(tempfile.mkdtemp(prefix="ferrokafka-bench-W10-"))
    try:
        with session("ferrokafka-bench-W10") as (spark, progress, figures):
            ferrokafka.spark.register(spark)
            ceiling = ceiling_source(spec["counts"], spec["value_size"], spec["topic"])
            spark.dataSource.register(ceiling)
            # Catch-up: each source once untimed (class loading, Python workers), then the
            # rounds.
            schedule = [(0, s) for s in sources]
            schedule += [(rnd, s) for rnd in range(1, spec["rounds"] + 1) for s in sources]
            for name, sink in CATCH_UP_SINKS.items():
                for rnd, source in schedule:
                    _one(
                        progress,
                        f"catch-up, {name}",
                        source,
                        rnd,
                        lambda w, s=source, k=sink: catch_up(spark, s, spec, w, k),
                        root,
                    )
            made = 0
            for rate in spec["rates"]:
                for trigger in spec["triggers"]:
                    case = f"{rate}/s, trigger {trigger}"
                    for rnd in range(1, spec["steady_rounds"] + 1):
                        for source in [s for s in sources if s in STEADY_SOURCES]:
                            made += 1
                            topic = f"{spec['topic']}-steady-{made}"
                            _create_topic(spec["bootstrap"], topic, spec["partitions"])
                            try:
                                _one(
                                    progress,
                                    case,
                                    source,
                                    rnd,
                                    lambda w, s=source, tp=topic, r=rate, tr=trigger: steady(
                                        spark, s, spec, w, tp, r, tr
                                    ),
                                    root,
                                )
                            finally:
                                _delete_topic(spec["bootstrap"], topic)
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _one(progress: Progress, case: str, source: str, rnd: int, body: Any, root: Path) -> None:
    work = Path(tempfile.mkdtemp(dir=root))
    result: dict[str, Any] = {"client": source, "round": rnd, "case": case}
    try:
        result.update(body(work))
    except Exception as exc:  # this run fails; the others still run
        traceback.print_exc(file=sys.stderr)
        result["error"] = _error(exc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    progress.runs += 1
    emit(run=result)
