"""W8's child process: one SparkSession (local[2]) reading one Kafka dataset with each reader,
``count(*)`` and ``sum(length(value))``, rounds alternating between readers.

Readers: Spark's own Kafka source (``spark-jvm``), ferrokafka's ``read_kafka`` with the Arrow
and the pandas fetcher, ferrokafka's Python data source (``format("ferrokafka")``), and
``spark-ceiling``: the same rows without Kafka, built as Arrow batches in the Python workers and
handed to Spark through ``mapInArrow``, the most a Python reader can give Spark on this machine.

A process has one SparkContext, so every run of the workload happens here: each reader once,
untimed (the first queries of a session load classes, start Python workers, JIT the JVM), then
``rounds`` timed rounds. Each run is reported as a ``{"run": {...}}`` line when it ends; the
parent checks the count and the byte sum against the dataset. A run's ``wall`` is from building
the DataFrame (``read_kafka`` plans its offset ranges there) to the collected row; ``cpu`` is
the CPU time of the whole process tree over the same span (this Python driver, Spark's JVM and
its Python workers), read from ``/proc``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from .datasets import KEY_SIZE, Dataset
from .tally import emit as _emit
from .tally import peak_rss_mb

READERS = [
    "spark-jvm",
    "ferrokafka-spark-arrow",
    "ferrokafka-spark-pandas",
    "ferrokafka-spark-datasource",
    "spark-ceiling",
]
#: The query every reader runs.
QUERY = ("count(*)", "sum(length(value))")
#: Rows per Arrow batch of the ceiling (Spark's own ``maxRecordsPerBatch`` default).
CEILING_BATCH_ROWS = 10_000
#: Spark's Kafka schema (``ferrokafka.spark.KAFKA_SCHEMA``, written out: the ceiling does not
#: depend on ferrokafka).
KAFKA_DDL = (
    "key binary, value binary, topic string, partition int, offset bigint, "
    "timestamp timestamp, timestampType int"
)
PROGRESS_EVERY_S = 0.5

_emit_lock = threading.Lock()


def emit(**event: Any) -> None:
    with _emit_lock:  # the progress thread and the main thread both print
        _emit(**event)


# -- the readers -------------------------------------------------------------------------------


def ceiling_function(
    counts: list[int], value_size: int, topic: str
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A ``mapInArrow`` function over a plan of one row per partition (``id`` = partition):
    yields that partition's ``counts[id]`` rows in Spark's Kafka schema, ``CEILING_BATCH_ROWS``
    at a time, a constant ``KEY_SIZE``-byte key and ``value_size``-byte value, offsets counting
    from 0. Nothing is read: the columns are built once per task and sliced. Nested, so that
    cloudpickle ships it by value to the workers."""
    rows = CEILING_BATCH_ROWS
    value = (b"0123456789abcdef" * (value_size // 16 + 1))[:value_size]
    key = b"k" * KEY_SIZE
    now_us = int(time.time() * 1_000_000)

    def produce(plans: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa
        from ferrokafka.spark import arrow_schema

        schema = arrow_schema(False)
        keys = pa.array([key] * rows, pa.binary())
        values = pa.array([value] * rows, pa.binary())
        topics = pa.array([topic] * rows, pa.string())
        stamps = pa.array(np.full(rows, now_us, dtype=np.int64)).cast(schema.field(5).type)
        types = pa.array(np.zeros(rows, dtype=np.int32))
        for plan in plans:
            for p in plan.column(0).to_pylist():
                parts = pa.array(np.full(rows, p, dtype=np.int32))
                n = counts[p]
                for start in range(0, n, rows):
                    m = min(rows, n - start)
                    offsets = pa.array(np.arange(start, start + m, dtype=np.int64))
                    cols = [keys, values, topics, parts, offsets, stamps, types]
                    if m < rows:
                        cols = [c if c is offsets else c.slice(0, m) for c in cols]
                    yield pa.RecordBatch.from_arrays(cols, schema=schema)

    return produce


def frame(spark: Any, reader: str, options: dict[str, str], ds: Dataset, topic: str) -> Any:
    """The DataFrame of ``reader`` over the dataset (``read_kafka`` plans here)."""
    if reader == "spark-jvm":
        return spark.read.format("kafka").options(**options).load()
    if reader in ("ferrokafka-spark-arrow", "ferrokafka-spark-pandas"):
        from ferrokafka.spark import read_kafka

        fetcher = reader.rsplit("-", 1)[1]
        return read_kafka(spark, options, fetcher=fetcher)
    if reader == "ferrokafka-spark-datasource":
        return spark.read.format("ferrokafka").options(**options).load()
    if reader == "spark-ceiling":
        n = ds.partitions
        produce = ceiling_function(ds.counts(), ds.value_size, topic)
        return spark.range(0, n, 1, n).mapInArrow(produce, KAFKA_DDL)
    raise ValueError(f"no Spark reader {reader!r}")


# -- accounting --------------------------------------------------------------------------------


def _proc_stats() -> dict[int, tuple[int, int]]:
    """pid -> (ppid, CPU ticks: own and reaped children's) of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rindex(")") + 2 :].split()  # fields from the 3rd (state) on
        ticks = sum(int(v) for v in fields[11:15])  # utime, stime, cutime, cstime
        out[int(name)] = (int(fields[1]), ticks)
    return out


def tree_pids(root: int, stats: dict[int, tuple[int, int]]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def tree_cpu_s() -> float:
    """CPU seconds of this process and all its descendants (Spark's JVM, its Python daemon and
    workers), counting children they already reaped."""
    stats = _proc_stats()
    ticks = sum(stats[p][1] for p in tree_pids(os.getpid(), stats) if p in stats)
    return ticks / os.sysconf("SC_CLK_TCK")


def timed_query(make: Callable[[], Any], query: list[str]) -> tuple[Any, dict[str, float]]:
    """The one row of ``query`` collected over the DataFrame ``make()`` builds, and the run's
    figures: wall seconds from building on, the building's (planning) seconds, and the
    process tree's CPU seconds."""
    cpu0 = tree_cpu_s()
    t0 = time.perf_counter()
    df = make()
    t1 = time.perf_counter()
    row = df.selectExpr(*query).collect()[0]
    t2 = time.perf_counter()
    return row, {"wall": t2 - t0, "plan_s": t1 - t0, "cpu": tree_cpu_s() - cpu0}


def jvm_peak_rss_mb() -> float | None:
    """Peak RSS of Spark's JVM (a child of this process)."""
    stats = _proc_stats()
    for pid in tree_pids(os.getpid(), stats):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != "java":
                    continue
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            continue
    return None


class Progress(threading.Thread):
    """Prints ``{"progress": [runs done, tasks completed in running stages]}`` when it changes:
    the stall watchdog's signal (a task that hangs stops it)."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="progress")
        self.runs = 0
        self.context: Any = None
        self.halt = threading.Event()

    def run(self) -> None:
        last: Any = None
        while not self.halt.wait(PROGRESS_EVERY_S):
            tasks = 0
            if self.context is not None:
                try:
                    tracker = self.context.statusTracker()
                    for stage in tracker.getActiveStageIds():
                        info = tracker.getStageInfo(stage)
                        tasks += info.numCompletedTasks if info else 0
                except Exception:  # the context is stopping
                    continue
            now = [self.runs, tasks]
            if now != last:
                emit(progress=now)
                last = now


def _error(exc: BaseException) -> str:
    """A Spark error in one line: its first line and, for a Python worker's traceback, its
    last (the exception raised)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    head = f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]
    tail = next((ln for ln in reversed(lines) if "Error" in ln or "Exception" in ln), "")
    return head if not tail or tail in head else f"{head} ... {tail[:300]}"


# -- the child's entry point -------------------------------------------------------------------


@contextmanager
def session(app_name: str) -> Iterator[tuple[Any, Progress, dict[str, Any]]]:
    """The process's SparkSession (local[2], Spark's Kafka connector jars), its progress
    thread, and the process's figures (session start; peak RSS of the JVM and the driver,
    filled in when the body ends well)."""
    from ferrokafka.testing.spark import spark_kafka_jars, spark_session, stop_spark_session

    progress = Progress()
    progress.start()
    t = time.perf_counter()
    try:
        spark = spark_session("local[2]", jars=spark_kafka_jars(), app_name=app_name)
        progress.context = spark.sparkContext
        figures: dict[str, Any] = {"session_start_s": time.perf_counter() - t}
        yield spark, progress, figures
        figures.update(jvm_peak_rss_mb=jvm_peak_rss_mb(), driver_rss_mb=peak_rss_mb())
    finally:
        progress.halt.set()
        stop_spark_session()


def run(spec: dict[str, Any]) -> dict[str, Any]:
    ds = Dataset(spec["partitions"], spec["records"], spec["value_size"])
    topic: str = spec["topic"]
    readers: list[str] = spec["readers"]
    options = {"kafka.bootstrap.servers": spec["bootstrap"], "subscribe": topic}
    with session("ferrokafka-bench-W8") as (spark, progress, figures):
        if "ferrokafka-spark-datasource" in readers:
            import ferrokafka.spark

            ferrokafka.spark.register(spark)
        schedule = [(0, r) for r in readers]  # untimed: the session's first query of each
        schedule += [(rnd, r) for rnd in range(1, spec["rounds"] + 1) for r in readers]
        for rnd, reader in schedule:
            result: dict[str, Any] = {"client": reader, "round": rnd}
            try:
                row, timing = timed_query(
                    partial(frame, spark, reader, options, ds, topic), list(QUERY)
                )
            except Exception as exc:  # this run fails; the others still run
                traceback.print_exc(file=sys.stderr)
                result["error"] = _error(exc)
            else:
                result.update(count=int(row[0]), bytes=int(row[1] or 0), **timing)
            progress.runs += 1
            emit(run=result)
    return figures
