"""Streaming reads and writes through the ``ferrokafka`` data source, against the real broker:
a query killed mid-stream and restarted from its checkpoint delivers every record exactly once,
and repairs the consumer group it commits to (``commitOffsetsToGroup``) if killed before that
commit; rate limits; new partitions and newly matching topics; a Kafka-to-Kafka stream."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ferrokafka import AIOKafkaConsumer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.spark import read_kafka, register
from ferrokafka.structs import TopicPartition

from .group_util import FAST, describe
from .spark_data import add_partitions, options, produce_rows, pyspark_version

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

    from ..conftest import TopicFactory

pytestmark = pytest.mark.integration

JOB = Path(__file__).with_name("spark_stream_job.py")


def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def stream(spark: SparkSession, bootstrap: str, **opts: Any) -> DataFrame:
    register(spark)
    reader = spark.readStream.format("ferrokafka").option("kafka.bootstrap.servers", bootstrap)
    for key, value in opts.items():
        reader = reader.option(key, value)
    return reader.load()


def commits(checkpoint: Path) -> int:
    folder = checkpoint / "commits"
    return len([p for p in folder.iterdir() if p.name.isdigit()]) if folder.exists() else 0


# Two Spark applications one after the other (the killed one and its restart), each starting
# its own JVM: the two stages' own limits below (120 s, 300 s) bound it, not the default 120 s.
@pytest.mark.timeout(420)
def test_a_killed_query_restarted_from_its_checkpoint_reads_every_record_once(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, tmp_path: Path
) -> None:
    topic = make_topic(partitions=3)
    rows = produce_rows(bootstrap_servers, topic, 3, 1000)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    argv = [sys.executable, str(JOB), bootstrap_servers, topic, str(out), str(checkpoint)]
    log = (tmp_path / "run.log").open("w")
    job = subprocess.Popen(
        [*argv, "run", "300"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        until(
            lambda: commits(checkpoint) >= 3 or job.poll() is not None,
            120,
            "three committed micro-batches",
        )
        assert job.poll() is None, (tmp_path / "run.log").read_text()[-5000:]
        os.killpg(job.pid, signal.SIGKILL)  # the driver and its JVM, mid-stream
        job.wait(10)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait(10)
        log.close()
    rows += produce_rows(bootstrap_servers, topic, 3, 500, first=1000)
    _restart_reads_each_record_once(spark, [*argv, "available", "300"], out, checkpoint, rows)


def _restart_reads_each_record_once(
    spark: SparkSession, argv: list[str], out: Path, checkpoint: Path, rows: list[Any]
) -> None:
    """Run the query again from its checkpoint (``argv``: the job in AvailableNow mode): it
    commits more micro-batches, and the sink then holds each of ``rows`` exactly once."""
    done_before = commits(checkpoint)
    again = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert again.returncode == 0, _python_errors(again.stdout + again.stderr)
    assert commits(checkpoint) > done_before
    got = [
        (r.partition, r.offset, bytes(r.value or b"-"))
        for r in spark.read.parquet(str(out)).collect()
    ]
    assert len(got) == len(rows)  # nothing twice
    assert sorted(got) == sorted((r.partition, r.offset, r.value or b"-") for r in rows)


def _python_errors(output: str) -> str:
    """The Python lines of a Spark failure (its JVM stack frames left out)."""
    return "\n".join(line for line in output.splitlines() if not line.strip().startswith("at "))[
        -6000:
    ]


def _run(query: StreamingQuery) -> list[int]:
    query.awaitTermination(120)
    assert query.exception() is None, query.exception()
    return [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]


def test_max_offsets_per_trigger_with_available_now(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=3)
    produce_rows(bootstrap_servers, topic, 1, 900)  # all on partition 0
    produce_rows(bootstrap_servers, topic, 3, 100, first=900)  # and 100 on each
    df = stream(
        spark,
        bootstrap_servers,
        subscribe=topic,
        startingOffsets="earliest",
        maxOffsetsPerTrigger="400",
    )
    query = df.writeStream.format("memory").queryName("limited").trigger(availableNow=True).start()
    sizes = _run(query)
    if pyspark_version() < (4, 2):
        # PySpark 4.0/4.1 have no SupportsTriggerAvailableNow for Python sources: Spark runs
        # AvailableNow as one micro-batch, which maxOffsetsPerTrigger bounds like any other.
        assert len(sizes) == 1 and 0 < sizes[0] <= 400 + 3, sizes
        count = spark.sql("select count(distinct partition, offset) from limited").first()[0]
        assert count == sizes[0]
        return
    assert sum(sizes) == 1200 and len(sizes) >= 3
    # Spark's share: at most the limit plus one offset per partition.
    assert max(sizes) <= 400 + 3, sizes
    assert spark.sql("select count(distinct partition, offset) from limited").first()[0] == 1200


def test_new_partitions_and_newly_matching_topics_are_picked_up(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    first = make_topic(partitions=1)
    produce_rows(bootstrap_servers, first, 1, 10)
    prefix = first[: first.rindex("-")]
    df = stream(
        spark, bootstrap_servers, subscribePattern=f"{prefix}-.*", startingOffsets="earliest"
    )
    query = (
        df.writeStream.format("memory")
        .queryName("growing")
        .trigger(processingTime="300 milliseconds")
        .start()
    )

    def seen() -> dict[tuple[str, int], int]:
        return {
            (r.topic, r.partition): r.n
            for r in spark.sql(
                "select topic, partition, count(*) as n from growing group by 1, 2"
            ).collect()
        }

    try:
        until(lambda: seen() == {(first, 0): 10}, 60, "the first topic")
        add_partitions(bootstrap_servers, first, 2)
        produce_rows(bootstrap_servers, first, 2, 5, first=10)
        second = make_topic(partitions=1, name=f"{prefix}-second")
        produce_rows(bootstrap_servers, second, 1, 7)
        # New partitions and topics start at their earliest offset: nothing is skipped.
        until(
            lambda: seen() == {(first, 0): 15, (first, 1): 5, (second, 0): 7},
            60,
            "the new partition and topic",
        )
        assert query.exception() is None
    finally:
        query.stop()


def test_min_offsets_per_trigger_waits_for_enough_data_or_the_delay(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=1)
    produce_rows(bootstrap_servers, topic, 1, 10)
    df = stream(
        spark,
        bootstrap_servers,
        subscribe=topic,
        startingOffsets="earliest",
        minOffsetsPerTrigger="100",
        maxTriggerDelay="4s",
    )
    query = (
        df.writeStream.format("memory")
        .queryName("waiting")
        .trigger(processingTime="200 milliseconds")
        .start()
    )

    def count() -> int:
        return int(spark.sql("select count(*) from waiting").first()[0])

    try:
        until(lambda: count() == 10, 60, "the first batch (never delayed)")
        produce_rows(bootstrap_servers, topic, 1, 5, first=10)
        started = time.monotonic()
        time.sleep(1.5)
        assert count() == 10  # 5 < minOffsetsPerTrigger, and the delay has not passed
        until(lambda: count() == 15, 30, "the delayed batch")
        assert time.monotonic() - started >= 2.0
        produce_rows(bootstrap_servers, topic, 1, 100, first=15)
        until(lambda: count() == 115, 30, "a batch with enough records")
    finally:
        query.stop()


def test_a_stream_from_kafka_to_kafka(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, tmp_path: Path
) -> None:
    source = make_topic(partitions=2)
    target = make_topic(partitions=2, name=f"{source}-out")
    rows = produce_rows(bootstrap_servers, source, 2, 300)
    df = stream(spark, bootstrap_servers, subscribe=source, startingOffsets="earliest")
    query = (
        df.selectExpr("key", "upper(cast(value as string)) as value", "partition")
        .writeStream.format("ferrokafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("topic", target)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    _run(query)
    back = read_kafka(spark, options(bootstrap_servers, subscribe=target)).collect()
    got = sorted((r.partition, bytes(r.value or b"-"), bytes(r.key or b"")) for r in back)
    want = sorted(
        (r.partition, r.value.decode().upper().encode() if r.value else b"-", r.key or b"")
        for r in rows
    )
    assert got == want  # same partitions, keys kept, null values stay null


def _group_offsets(bootstrap: str, group: str) -> dict[int, int]:
    async def go() -> dict[int, int]:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            committed = await admin.list_consumer_group_offsets(group)
        return {tp.partition: om.offset for tp, om in committed.items()}

    return asyncio.run(go())


def _lag(bootstrap: str, group: str) -> dict[int, tuple[int, int, int]]:
    """Java's ``kafka-consumer-groups --describe``: partition -> (current, log end, lag)."""
    return {
        int(row[1]): (int(row[2]), int(row[3]), int(row[4])) for row in describe(bootstrap, group)
    }


def _sink_rows(spark: SparkSession, out: Path) -> list[tuple[int, int]]:
    return sorted((r.partition, r.offset) for r in spark.read.parquet(str(out)).collect())


@pytest.mark.timeout(300)
def test_commit_offsets_to_group_shows_the_streams_lag_to_kafkas_tools(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, tmp_path: Path
) -> None:
    if pyspark_version() < (4, 2):
        pytest.skip(
            "PySpark 4.0/4.1 run Trigger.AvailableNow as one micro-batch, which Spark commits "
            "only when it plans the next one: an AvailableNow query never reaches the group"
        )
    topic = make_topic(partitions=3)
    group = f"lag-{topic}"
    produce_rows(bootstrap_servers, topic, 3, 200)
    out, checkpoint = tmp_path / "out", tmp_path / "ck"

    def run_stream() -> None:
        query = (
            stream(
                spark,
                bootstrap_servers,
                subscribe=topic,
                startingOffsets="earliest",
                maxOffsetsPerTrigger="250",
                commitOffsetsToGroup=group,
            )
            .select("partition", "offset")
            .writeStream.format("parquet")
            .option("path", str(out))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        assert query.exception() is None, query.exception()

    run_stream()
    # Caught up: Java's tool sees the group at the log end, lag 0 on every partition.
    assert _lag(bootstrap_servers, group) == {p: (200, 200, 0) for p in range(3)}
    produce_rows(bootstrap_servers, topic, 3, 50, first=200)
    assert _lag(bootstrap_servers, group) == {p: (200, 250, 50) for p in range(3)}
    run_stream()
    assert _lag(bootstrap_servers, group) == {p: (250, 250, 0) for p in range(3)}
    assert _sink_rows(spark, out) == [(p, o) for p in range(3) for o in range(250)]

    # A driver that died after the checkpoint took a batch and before the group commit leaves
    # the group behind (set back here by hand); the restarted query repairs it and reads
    # nothing twice.
    async def set_back() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            await admin.alter_consumer_group_offsets(
                group, {TopicPartition(topic, p): 100 for p in range(3)}
            )

    asyncio.run(set_back())
    assert _group_offsets(bootstrap_servers, group) == dict.fromkeys(range(3), 100)
    if pyspark_version() >= (4, 2):
        # Nothing new to read: the next batch's planning (latestOffset) repairs the group.
        run_stream()
        assert _group_offsets(bootstrap_servers, group) == dict.fromkeys(range(3), 250)
    produce_rows(bootstrap_servers, topic, 3, 10, first=250)
    run_stream()
    assert _lag(bootstrap_servers, group) == {p: (260, 260, 0) for p in range(3)}
    assert _sink_rows(spark, out) == [(p, o) for p in range(3) for o in range(260)]


def _members(bootstrap: str, group: str) -> int:
    async def go() -> int:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            try:
                [response] = await admin.describe_consumer_groups([group])
            except Errors.GroupIdNotFound:  # before the first member joins
                return 0
        [described] = response["groups"]
        return len(described["members"])

    return asyncio.run(go())


@contextlib.contextmanager
def _member_of(bootstrap: str, group: str, topic: str) -> Iterator[None]:
    """A live member of ``group`` (subscribed to ``topic``, polling in a thread of its own)
    while the block runs: the broker refuses an offset commit from outside the group
    (generation -1) to a group with members, as it refuses the stream's group commits."""
    leave = threading.Event()
    failed: list[BaseException] = []

    async def member() -> None:
        # No auto-commit: the member itself must never write offsets to the group.
        consumer = AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, **FAST
        )
        await consumer.start()
        try:
            while not leave.is_set():
                await consumer.getmany(timeout_ms=200)
        finally:
            await consumer.stop()  # leaves the group: it is empty again

    def run() -> None:
        try:
            asyncio.run(member())
        except BaseException as exc:  # reported to the test below
            failed.append(exc)

    thread = threading.Thread(target=run, name=f"member-{group}", daemon=True)
    thread.start()
    try:
        until(lambda: bool(failed) or _members(bootstrap, group) == 1, 60, "the member to join")
        assert not failed, failed
        yield
        assert thread.is_alive() and not failed, failed  # a member all along
    finally:
        leave.set()
        thread.join(30)
    assert not failed, failed
    until(lambda: _members(bootstrap, group) == 0, 30, "the member to leave")


def _checkpointed_end(checkpoint: Path, topic: str, back: int = 0) -> dict[int, int]:
    """The end offsets of the last micro-batch in the checkpoint's commit log (or of the one
    ``back`` batches before it): its offset log entry's last line is the source's offsets,
    ``{"topic": {"partition": offset}}``."""
    last = max(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    source = (checkpoint / "offsets" / str(last - back)).read_text().splitlines()[-1]
    return {int(p): off for p, off in json.loads(source)[topic].items()}


# Two Spark applications one after the other, each starting its own JVM, as in the killed-query
# test above, plus the member's join and leave.
@pytest.mark.timeout(480)
def test_a_driver_killed_between_checkpoint_and_group_commit_reads_once_and_repairs_the_group(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, tmp_path: Path
) -> None:
    topic = make_topic(partitions=3)
    group = f"killed-{topic}"
    # The member's own topic: whatever it might do, it holds no offsets of the stream's topic.
    other = make_topic(partitions=1, name=f"{topic}-member")
    rows = produce_rows(bootstrap_servers, topic, 3, 1000)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    argv = [sys.executable, str(JOB), bootstrap_servers, topic, str(out), str(checkpoint)]
    log_path = tmp_path / "run.log"
    with _member_of(bootstrap_servers, group, other):
        log = log_path.open("w")
        job = subprocess.Popen(
            [*argv, "run", "300", group],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            until(
                lambda: commits(checkpoint) >= 2 or job.poll() is not None,
                120,
                "two committed micro-batches",
            )
            assert job.poll() is None, log_path.read_text()[-5000:]
            # Every micro-batch is in the checkpoint and every group commit was refused: a
            # kill now lands between the checkpoint and the group commit, whenever it comes.
            assert _group_offsets(bootstrap_servers, group) == {}
            os.killpg(job.pid, signal.SIGKILL)  # the driver and its JVM, mid-stream
            job.wait(10)
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait(10)
            log.close()
    # The group commits were tried and refused: the driver logged a warning and went on.
    assert "commitOffsetsToGroup: committing the offsets" in log_path.read_text()
    done_before = commits(checkpoint)
    checkpointed = _checkpointed_end(checkpoint, topic)
    assert done_before >= 2 and len(checkpointed) == 3 and min(checkpointed.values()) > 0
    # The member has left; the group still has none of what the checkpoint has.
    assert _group_offsets(bootstrap_servers, group) == {}

    rows += produce_rows(bootstrap_servers, topic, 3, 500, first=1000)
    _restart_reads_each_record_once(
        spark, [*argv, "available", "300", group], out, checkpoint, rows
    )
    assert _checkpointed_end(checkpoint, topic) == dict.fromkeys(range(3), 1500)
    if pyspark_version() >= (4, 2):
        # Spark calls commit() for a micro-batch only when it plans the next one, which the
        # last batch of Trigger.AvailableNow never has: the group reaches the log end through
        # the repair, the planning (latestOffset) that commits the checkpoint's offsets.
        assert _group_offsets(bootstrap_servers, group) == dict.fromkeys(range(3), 1500)
        assert _lag(bootstrap_servers, group) == {p: (1500, 1500, 0) for p in range(3)}
    else:
        # PySpark 4.0/4.1 have no start in latestOffset, so no repair: the group gets each
        # batch's end from the next batch's commit(), and ends one batch behind the checkpoint.
        before_last = _checkpointed_end(checkpoint, topic, back=1)
        assert _group_offsets(bootstrap_servers, group) == before_last
        assert _lag(bootstrap_servers, group) == {
            p: (off, 1500, 1500 - off) for p, off in before_last.items()
        }


def test_commit_offsets_to_group_true_names_a_group_from_the_prefix(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory, tmp_path: Path
) -> None:
    """Without kafka.group.id, ``true`` commits to a group of the query's own named as Spark
    names its groups: the prefix, then a random id."""
    if pyspark_version() < (4, 2):
        pytest.skip("PySpark 4.0/4.1's AvailableNow never commits to the group (see above)")
    topic = make_topic(partitions=2)
    prefix = f"pfx-{topic}"
    produce_rows(bootstrap_servers, topic, 2, 40)
    query = (
        stream(
            spark,
            bootstrap_servers,
            subscribe=topic,
            startingOffsets="earliest",
            maxOffsetsPerTrigger="30",
            commitOffsetsToGroup="true",
            groupIdPrefix=prefix,
        )
        .writeStream.foreachBatch(lambda df, batch: df.count())
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    assert sum(_run(query)) == 80

    async def groups() -> list[str]:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            listed = await admin.list_consumer_groups()
        return [group for group, _ in listed]

    named = [g for g in asyncio.run(groups()) if g.startswith(prefix)]
    assert len(named) == 1, named
    assert re.fullmatch(re.escape(prefix) + r"-[0-9a-f-]{36}", named[0])
    # Each batch is committed when the next is planned, the last by the planning after it.
    assert _group_offsets(bootstrap_servers, named[0]) == {0: 40, 1: 40}


def test_a_batch_read_never_commits(
    spark: SparkSession, bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    group = f"batch-{topic}"
    produce_rows(bootstrap_servers, topic, 2, 30)
    register(spark)
    df = (
        spark.read.format("ferrokafka")
        .option("kafka.bootstrap.servers", bootstrap_servers)
        .option("subscribe", topic)
        .option("commitOffsetsToGroup", group)
        .load()
    )
    assert df.count() == 60
    assert _group_offsets(bootstrap_servers, group) == {}
