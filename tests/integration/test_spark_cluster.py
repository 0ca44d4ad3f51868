"""On a real standalone Spark cluster (a master and two workers on loopback, started from the
PySpark package): executors in other processes pull the offset ranges, and every way in returns
exactly what was produced."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from ferrokafka.spark import fetch_arrow, plan_dataframe, plan_ranges

from .spark_data import CHECKSUM_SQL, checksum, expected, options, produce_rows, spark_rows
from .test_spark_read import READERS, load

if TYPE_CHECKING:
    from ..conftest import SparkOnCluster, TopicFactory

pytestmark = pytest.mark.integration


# The first test here also starts the cluster (a master and two workers, each a JVM), which on
# two busy cores takes most of the default 120 s.
@pytest.mark.timeout(300)
def test_every_reader_on_a_standalone_cluster(
    spark_cluster: SparkOnCluster, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    spark = spark_cluster.session
    topic = make_topic(partitions=4)
    rows = produce_rows(bootstrap_servers, topic, 4, 2500, compression="lz4")
    opts = options(bootstrap_servers, subscribe=topic, includeHeaders="true", minPartitions="8")
    for reader in READERS:
        df = load(spark, reader, opts)
        assert tuple(df.selectExpr(*CHECKSUM_SQL).first()) == checksum(rows), reader
    sample = [r for r in rows if r.offset % 101 == 7]
    picked = load(spark, "arrow", opts).where("offset % 101 = 7")
    assert spark_rows(picked) == expected(sample)


def test_executors_in_other_processes_pull_the_ranges(
    spark_cluster: SparkOnCluster, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    spark = spark_cluster.session
    topic = make_topic(partitions=2)
    rows = produce_rows(bootstrap_servers, topic, 2, 1000)
    opts = options(bootstrap_servers, subscribe=topic, minPartitions="6")
    fetch = fetch_arrow(opts)

    def report(plans: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        count = sum(batch.num_rows for batch in fetch(plans))
        yield pa.RecordBatch.from_pylist([{"pid": os.getpid(), "rows": count}])

    seen = (
        plan_dataframe(spark, plan_ranges(opts)).mapInArrow(report, "pid long, rows long").collect()
    )
    assert sum(r.rows for r in seen) == len(rows)
    pids = {r.pid for r in seen}
    assert os.getpid() not in pids and len(pids) >= 2, pids  # both workers' Python processes
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
    assert executors == 3  # the driver and one executor on each worker
