"""The Spark test infrastructure itself: the local session, Spark's own Kafka source, the
standalone cluster (its Python workers, its stop, its start failures)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ferrokafka
import pytest
from ferrokafka.testing.spark import (
    SparkStartError,
    StandaloneSpark,
    spark_kafka_jars,
    spark_session,
)

from .produce_util import produce_values

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    from ..conftest import SparkOnCluster

pytestmark = pytest.mark.integration

WORKER_SCHEMA = "pid long, executable string, ferrokafka string"


def _worker_probe() -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A ``mapInArrow`` function reporting, once per partition, which Python runs it. Built in a
    closure so cloudpickle ships it by value (this test module is not importable on executors)."""

    def probe(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import ferrokafka as worker_ferrokafka
        import pyarrow

        for _ in batches:
            pass
        row = {
            "pid": os.getpid(),
            "executable": sys.executable,
            "ferrokafka": worker_ferrokafka.__file__,
        }
        yield pyarrow.RecordBatch.from_pylist([row])

    return probe


def _probe(session: SparkSession, partitions: int) -> list[Any]:
    frame = session.range(partitions, numPartitions=partitions)
    return frame.mapInArrow(_worker_probe(), WORKER_SCHEMA).collect()


def _artifact_id(jar_name: str) -> str:
    return re.sub(r"-\d[^-]*\.jar$", "", jar_name)


def _processes_under(root: Path) -> list[str]:
    """Live processes that name ``root`` in their command line (daemons, executors: the conf dir
    is on their classpath) or run in it (executors' Python workers)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if str(root) in cmdline or cwd.startswith(str(root)):
            found.append(f"{proc.name}: {cmdline[:160]}")
    return found


# ---- local session ----------------------------------------------------------------------------


def test_local_session_runs_sql_and_this_interpreter_in_python_workers(
    spark: SparkSession, spark_jars: list[Path]
) -> None:
    assert spark.sparkContext.master == "local[2]"
    assert spark_session("local[2]", jars=spark_jars) is spark  # same settings: reused
    assert spark.range(1000).selectExpr("sum(id)").collect()[0][0] == 499500
    rows = _probe(spark, 2)
    assert len(rows) == 2
    assert os.getpid() not in {r.pid for r in rows}
    assert {r.executable for r in rows} == {sys.executable}
    assert {r.ferrokafka for r in rows} == {ferrokafka.__file__}


def test_spark_kafka_jars_are_exactly_what_pyspark_lacks() -> None:
    import pyspark

    names = sorted(j.name for j in spark_kafka_jars())
    assert names == [
        "commons-pool2-2.13.1.jar",
        "kafka-clients-3.9.2.jar",
        "spark-avro_2.13-4.2.0.jar",
        "spark-sql-kafka-0-10_2.13-4.2.0.jar",
        "spark-token-provider-kafka-0-10_2.13-4.2.0.jar",
    ]
    # Resolved without their dependencies: nothing PySpark ships comes twice.
    shipped = {_artifact_id(p.name) for p in (Path(pyspark.__file__).parent / "jars").iterdir()}
    assert not shipped & {_artifact_id(n) for n in names}


# ---- standalone cluster -----------------------------------------------------------------------


def test_standalone_cluster_runs_python_workers_on_its_executors(
    spark_cluster: SparkOnCluster,
) -> None:
    session = spark_cluster.session
    assert session.sparkContext.master == spark_cluster.standalone.master_url
    assert spark_cluster.session is session  # reused, not restarted
    rows = _probe(session, 4)
    pids = {r.pid for r in rows}
    assert len(rows) == 4
    assert len(pids) >= 2, rows  # one Python worker per executor, one executor per worker
    assert os.getpid() not in pids
    assert {r.executable for r in rows} == {sys.executable}
    assert {r.ferrokafka for r in rows} == {ferrokafka.__file__}
    status = spark_cluster.standalone.status()
    assert status["aliveworkers"] == 2
    assert [(a["name"], a["cores"]) for a in status["activeapps"]] == [("ferrokafka-tests", 2)]


def test_spark_kafka_source_reads_what_was_produced(
    spark: SparkSession, bootstrap_servers: str, topic: str
) -> None:
    # Runs after the cluster test: `spark` is a local session again, with the connector.
    asyncio.run(produce_values(bootstrap_servers, topic, partitions=1, per_partition=37))
    frame = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", topic)
        .load()
    )
    assert spark.sparkContext.master == "local[2]"
    assert frame.count() == 37


def test_standalone_stop_leaves_no_process_behind() -> None:
    # Its own cluster with one worker: a job leaves an executor JVM and its Python workers.
    with StandaloneSpark(workers=1) as standalone:
        root = standalone.directory
        daemons = set(standalone.pids.values())
        assert len(_probe(standalone.session(jars=spark_kafka_jars()), 1)) == 1
        running = _processes_under(root)
        assert len(running) >= len(daemons) + 2, running  # + executor JVM, Python daemon
    assert _processes_under(root) == []
    assert not root.exists()


def test_standalone_start_failure_raises_with_the_log_and_leaves_nothing() -> None:
    standalone = StandaloneSpark(workers=1, memory="lots", keep_dirs=True)
    with pytest.raises(SparkStartError, match=r"worker-1 exited") as failure:
        standalone.start()
    found = re.search(r"log (\S+)/worker-1\.log", str(failure.value))
    assert found, failure.value
    root = Path(found.group(1))
    try:
        assert "Usage: Worker" in str(failure.value)  # the log's tail: it rejected "lots"
        assert _processes_under(root) == []
    finally:
        shutil.rmtree(root, ignore_errors=True)
