"""W1-W12: what each writes, which clients run it and how a run is checked.

Every workload alternates its clients round by round (A B C ... A B C ...). A run that reads
the wrong data, fails, stalls or times out is recorded as failed with its reason; the harness
goes on with the next run.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import runner
from .broker import BrokerGC
from .datasets import (
    MASK,
    Dataset,
    committed_offsets,
    dataset_keys,
    dataset_value,
    end_offsets,
    read_committed,
    transaction_version,
    write_dataset,
)
from .java import (
    CONSUMER_PERFORMANCE,
    PRODUCER_PERFORMANCE,
    Java,
    parse_consumer_performance,
    parse_producer_performance,
)
from .spark_reads import READERS as SPARK_READERS
from .typed_reads import PYTHON_CLIENTS as TYPED_PYTHON_CLIENTS
from .typed_reads import SPARK_READERS as TYPED_SPARK_READERS

PYTHON_CONSUMERS = [
    "ferrokafka",
    "ferrokafka-arrow",
    "ferrokafka-group",
    "aiokafka",
    "kafka-python",
    "confluent-kafka",
    "confluent-kafka-aio",
    "kafkarrow",
]
CONSUMERS = [*PYTHON_CONSUMERS, "java", "java-perf"]
#: W1 and W2 also read one record at a time, as services write it: `async for`, `getone()`
#: (ferrokafka, aiokafka; in assign mode and in a group), kafka-python's iteration,
#: confluent-kafka's `poll()` loop (its `Consumer` and its `AIOConsumer`).
ONE_RECORD_CONSUMERS = [
    "ferrokafka-async-for",
    "ferrokafka-getone",
    "ferrokafka-group-async-for",
    "aiokafka-async-for",
    "aiokafka-getone",
    "aiokafka-group-async-for",
    "kafka-python-iter",
    "confluent-kafka-poll",
    "confluent-kafka-aio-poll",
]
#: W1-W4 consumers run only when named in ``--clients``: ferrokafka with ``memory.tune()``'s
#: process-wide settings, to measure them beside the default.
OPT_IN_CONSUMERS = ["ferrokafka-tuned", "ferrokafka-arrow-tuned"]
#: Reads each W1-W4 dataset once, untimed, before the rounds start.
WARM_UP_CLIENT = "ferrokafka-arrow"
#: W5 also has getone and uvloop variants of the aiokafka-API clients (ConsumerPerformance has
#: no latency mode).
ASYNC_LATENCY = ["ferrokafka", "ferrokafka-getone", "aiokafka", "aiokafka-getone"]
LATENCY_CONSUMERS = [
    *PYTHON_CONSUMERS,
    "ferrokafka-getone",
    "aiokafka-getone",
    *(f"{client}-uvloop" for client in ASYNC_LATENCY),
    "java",
]
PRODUCERS = ["ferrokafka", "ferrokafka-arrow", "aiokafka", "confluent-kafka", "java-perf"]
#: W6's idioms (acks=1, no compression), keyless and keyed (KEY_CASES): each record's future
#: dropped, given a done-callback (the name alone), awaited in `gather` chunks, or
#: `send_and_wait` from 100 tasks; confluent-kafka's `produce()` with `poll(0)` every 8,192
#: records or after each, and its `AIOProducer`; the Java producer with a callback per record
#: (tools/java/BenchProducer.java).
PRODUCER_IDIOMS = [
    "ferrokafka-dropped",
    "ferrokafka",
    "ferrokafka-gather",
    "ferrokafka-send-and-wait",
    "aiokafka-dropped",
    "aiokafka",
    "aiokafka-gather",
    "aiokafka-send-and-wait",
    "confluent-kafka",
    "confluent-kafka-poll-each",
    "confluent-kafka-aio-gather",
    "confluent-kafka-aio-send-and-wait",
    "java",
]
#: W6 idiom cases: the case's name and its keys (see producers.record_keys).
KEY_CASES: list[tuple[str, str | None]] = [
    ("keyless", None),
    ("keyed, a key per record", "unique"),
    ("keyed, 10,000 keys", "10000"),
]
GROUP_CLIENTS = [
    "ferrokafka",
    "aiokafka",
    "confluent-kafka",
    "java",
    "ferrokafka-kip848",
    "java-kip848",
]
#: W8's ratios are to Spark's own Kafka source.
SPARK_BASE = "spark-jvm"
#: W9, share groups (KIP-932): ferrokafka's AIOKafkaShareConsumer with `getmany` (implicit
#: acknowledgement), `async for`, `getmany_arrow`, and explicit `acknowledge` + `commit()` per
#: poll; confluent-kafka's ShareConsumer; Java's KafkaShareConsumer (tools/java/ShareMember.java),
#: polling alone (implicit acknowledgement, as ferrokafka's `getmany`) and with `commitSync()`
#: after each poll.
SHARE_CLIENTS = [
    "ferrokafka-share",
    "ferrokafka-share-async-for",
    "ferrokafka-share-arrow",
    "ferrokafka-share-explicit",
    "confluent-kafka-share",
    "java-share",
    "java-share-commit",
]
#: W9's ratios are to the Java client's.
SHARE_BASE = "java-share"
#: W9's cases: members of the one share group.
SHARE_MEMBERS = (1, 4)
#: ShareMember stops after this long without a record, counted from its start until its first
#: record: with several members it is how each JVM ends (after the last record, outside the
#: measured time), so it must also cover a JVM's start and join on a busy machine.
JAVA_SHARE_IDLE_MS = 10_000
#: W12, transactions: ferrokafka's `transaction()` block and Java's KafkaProducer
#: (tools/java/BenchTransactions.java), both on transaction version 2 when the cluster finalized
#: it; aiokafka's `transaction()` and confluent-kafka's `begin_transaction()`/
#: `commit_transaction()` follow version 1 (AddPartitionsToTxn before a partition's first
#: write), which Kafka 4.2 still serves to clients that send its older request versions.
TXN_CLIENTS = ["ferrokafka", "aiokafka", "confluent-kafka", "java"]
#: W12's ratios are to the Java producer's.
TXN_BASE = "java"
#: W12's cases: (case name, the child's mode).
CTP_CASE = "consume-transform-produce"
TXN_CASES = [("small transactions", "small"), (CTP_CASE, "ctp")]
#: W12: records per small transaction, and the most records a consume-transform-produce poll
#: returns (Java's `max.poll.records` default), each batch one transaction.
TXN_RECORDS = 10
TXN_BATCH = 500
TXN_VALUE_SIZE = 100
#: Partitions of each W12 output topic.
TXN_PARTITIONS = 8
#: W11, typed payloads to a typed Arrow table: ferrokafka's `getmany_arrow(value_format=...)`
#: and confluent-kafka's `Consumer` with its deserializers, each in its own process; Spark's
#: Kafka source with `from_json`/`from_avro` and ferrokafka's Spark source with `valueFormat`,
#: in one Spark process.
TYPED_CLIENTS = [*TYPED_PYTHON_CLIENTS, *TYPED_SPARK_READERS]
#: W11's ratios: the consumer's to confluent-kafka's, and ferrokafka's Spark source's to
#: Spark's own source with its decoding functions.
TYPED_BASE = "confluent-kafka"
TYPED_SPARK_BASE = "spark-jvm"
ALL_CLIENTS = sorted(
    {
        *CONSUMERS,
        *ONE_RECORD_CONSUMERS,
        *OPT_IN_CONSUMERS,
        *LATENCY_CONSUMERS,
        *PRODUCERS,
        *PRODUCER_IDIOMS,
        *GROUP_CLIENTS,
        *SPARK_READERS,
        *SHARE_CLIENTS,
        *TXN_CLIENTS,
        *TYPED_CLIENTS,
    }
)
WORKLOADS = ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W10", "W11", "W12"]
#: W10, Spark streaming: Spark's own Kafka source and ferrokafka's data source.
STREAM_SOURCES = ["spark-jvm", "ferrokafka-spark-datasource", "spark-stream-ceiling"]

LATENCY_VALUE_SIZE = 100
PRODUCER_VALUE_SIZE = 100
PRODUCER_CONFIGS = [("1", "none"), ("all", "none"), ("1", "lz4"), ("all", "lz4")]
#: W3's cases: (name, codec, value size); 100 B is W1 compressed, 1 KiB is W2 compressed (very
#: compressible values: a fetch of 1 MiB inflates to tens of MB).
W3_CASES = [
    ("lz4", "lz4", 100),
    ("zstd", "zstd", 100),
    ("lz4 1KiB", "lz4", 1024),
    ("zstd 1KiB", "zstd", 1024),
]
GROUP_PARTITIONS = 8
#: W9: 1,000,000 records, so that the fastest runs last about a second (200,000 took 0.1 s,
#: too short to measure steadily).
#: W10's catch-up: 2,000,000 records of 100 B in 8 partitions, W8's data.
W10_DATASET = Dataset(8, 2_000_000, 100)
W9_DATASET = Dataset(4, 1_000_000, 100)
#: W11: 2,000,000 typed records (about 180 B as Confluent-framed Avro, 310 B as JSON) in 8
#: partitions, per format.
W11_DATASET = Dataset(8, 2_000_000, 200)
#: W12's consume-transform-produce input: 200,000 records of 100 B in 8 partitions, 400
#: transactions of 500.
W12_DATASET = Dataset(8, 200_000, 100)


@dataclass(frozen=True)
class Sizes:
    w1: Dataset
    w2: Dataset
    w4: Dataset
    #: W5: produce rate (records/s) -> seconds measured; warm-up seconds before each.
    w5_seconds: dict[int, float]
    w5_warmup: float
    w6_records: int
    w7: Dataset
    w8: Dataset
    #: W6's idiom cases (names from KEY_CASES); W2 with the one-record idioms too.
    key_cases: tuple[str, ...] = ()
    w2_one_record: bool = True
    #: W9: read through a share group (a default: benches/consume_tls.py makes its own Sizes).
    w9: Dataset = W9_DATASET
    #: W10: Spark streaming's catch-up dataset, then produce rates (records/s) held for
    #: ``w10_seconds`` after ``w10_warmup`` seconds, under each trigger.
    w10: Dataset = W10_DATASET
    w10_rates: tuple[int, ...] = (20_000, 100_000)
    w10_seconds: float = 60.0
    w10_warmup: float = 5.0
    w10_triggers: tuple[str, ...] = ("default", "1 second")
    #: Steady-state runs are a minute each: fewer rounds than the catch-up's.
    w10_steady_rounds: int = 1
    #: W11: typed records per format (``value_size`` only sizes the written batches).
    w11: Dataset = W11_DATASET
    #: W12: small transactions per run, and consume-transform-produce's input.
    w12_transactions: int = 2_000
    w12: Dataset = W12_DATASET

    def w3(self, codec: str, value_size: int = 100) -> Dataset:
        """W1's records compressed with ``codec``, or W2's for 1 KiB values."""
        like = self.w2 if value_size == self.w2.value_size else self.w1
        return Dataset(like.partitions, like.records, value_size, codec)


FULL = Sizes(
    w1=Dataset(8, 5_000_000, 100),
    w2=Dataset(8, 1_000_000, 1024),
    w4=Dataset(1000, 1_000_000, 100),
    w5_seconds={1000: 10.0, 50_000: 5.0},
    w5_warmup=2.0,
    w6_records=1_000_000,
    w7=Dataset(GROUP_PARTITIONS, 8_000, 100),
    w8=Dataset(8, 2_000_000, 100),
    key_cases=("keyless", "keyed, a key per record", "keyed, 10,000 keys"),
    w9=W9_DATASET,
)
QUICK = Sizes(
    w1=Dataset(8, 40_000, 100),
    w2=Dataset(8, 8_000, 1024),
    w4=Dataset(100, 10_000, 100),
    w5_seconds={1000: 0.5, 50_000: 0.2},
    w5_warmup=0.3,
    w6_records=10_000,
    w7=Dataset(GROUP_PARTITIONS, 800, 100),
    w8=Dataset(8, 50_000, 100),
    # Every idiom client once (keyed: the path keyless records do not take), in less time.
    key_cases=("keyed, a key per record",),
    w2_one_record=False,
    w9=Dataset(4, 20_000, 100),
    w10=Dataset(8, 50_000, 100),
    w10_rates=(2_000,),
    w10_seconds=3.0,
    w10_warmup=1.0,
    w11=Dataset(8, 20_000, 200),
    w12_transactions=30,
    w12=Dataset(8, 2_000, 100),
)


@dataclass
class Context:
    bootstrap: str
    kafka: Any  # ferrokafka.testing.KafkaBroker or ExternalKafka: create_topic, delete_topic
    java: Java | None
    sizes: Sizes
    rounds: int
    stall_s: float
    max_records: int | None = None
    tls: dict[str, str] | None = None
    """TLS for the consumers (``{"cafile": path}``): the broker's address is a TLS listener."""
    java_properties: Path | None = None
    """Extra client configs for the Java consumer (the same TLS settings, as a properties
    file)."""
    broker_gc: BrokerGC | None = None
    """The started broker's collections (None for an external broker): W5 collects its heap
    before each run and records the pauses that fell in the run."""
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)
    runs: list[dict[str, Any]] = field(default_factory=list)

    def topic(self, *parts: object) -> str:
        name = "-".join(str(p) for p in ("bench", *parts, os.getpid(), uuid.uuid4().hex[:6]))
        return name.replace("=", "").replace("/", "").replace(" ", "-")

    def record(self, run: dict[str, Any]) -> dict[str, Any]:
        self.runs.append(run)
        self.log(progress_line(run, self.rounds))
        return run

    def unrecorded(self) -> Context:
        """This context for a warm-up run: its runs are logged as such and not recorded."""
        return replace(self, runs=[], log=lambda line: self.log(f"(warm-up, not recorded) {line}"))


@contextmanager
def written_topic(ctx: Context, ds: Dataset, *parts: str) -> Iterator[str]:
    """A new topic (named after ``parts``) holding ``ds``, deleted when the block ends."""
    topic = ctx.topic(*parts)
    ctx.kafka.create_topic(topic, partitions=ds.partitions)
    try:
        t = time.perf_counter()
        asyncio.run(write_dataset(ctx.bootstrap, topic, ds))
        ctx.log(f"[{' '.join(parts)}] wrote {ds.describe()} in {time.perf_counter() - t:.1f}s")
        yield topic
    finally:
        ctx.kafka.delete_topic(topic)


def progress_line(run: dict[str, Any], rounds: int) -> str:
    head = f"[{run['workload']} {run['case']} round {run['round']}/{rounds}] {run['client']}"
    if run["case"] == "setup":
        head = f"[{run['workload']}] setting up"
    if run.get("unsupported"):
        return f"{head}: UNSUPPORTED: {run['unsupported']}"
    if not run["ok"]:
        return f"{head}: FAILED: {run['error']}"
    if "lat_us" in run:
        p50, p99, p999, _ = (v / 1000 for v in run["lat_us"])
        pauses = run.get("broker_pauses_ms")
        gc = (
            "" if not pauses else f" ({len(pauses)} broker GC pauses, longest {max(pauses):.0f} ms)"
        )
        return f"{head}: p50 {p50:.1f} ms, p99 {p99:.1f} ms, p99.9 {p999:.1f} ms{gc}"
    if "settle_s" in run:
        return f"{head}: first record {run['first_record_s']:.2f}s, settle {run['settle_s']:.2f}s"
    if "p99_ms" in run:  # W10 steady state
        drain = run.get("drain_s")
        return (
            f"{head}: p50 {run['p50_ms']:.0f} ms, p99 {run['p99_ms']:.0f} ms, max "
            f"{run['max_ms']:.0f} ms, {run['batches']} micro-batches, "
            + ("did not drain" if drain is None else f"drained {drain:.1f}s after the producer")
        )
    if "batches" in run:  # W10 catch-up
        return (
            f"{head}: {run['records_per_s'] / 1e6:.3f} M rec/s, wall {run['wall']:.2f}s, "
            f"{run['batches']} micro-batches, cpu {run['cpu']:.1f}s"
        )
    if "txn_per_s" in run:  # W12
        return (
            f"{head}: {run['txn_per_s']:,.0f} transactions/s, {run['records_per_s'] / 1e3:.1f} k "
            f"rec/s, wall {run['wall']:.2f}s, cpu {run['cpu']:.2f}s, set-up "
            f"{run['setup_s']:.2f}s, rss {run.get('rss_mb', 0):.0f} MB"
        )
    if "per_member" in run:  # W9: from the first record to the last, members together
        split = "/".join(f"{n:,}" for n in run["per_member"])
        return (
            f"{head}: {run['records_per_s'] / 1e6:.3f} M rec/s, {run['wall']:.2f}s from the "
            f"first record to the last, per member {split}, rss {run.get('rss_mb', 0):.0f} MB"
        )
    line = (
        f"{head}: {run['records_per_s'] / 1e6:.3f} M rec/s, {run['mb_per_s']:.1f} MB/s, "
        f"wall {run['wall']:.2f}s, cpu {run['cpu']:.2f}s"
    )
    if "plan_s" in run:  # W8: one process for every reader, so no peak RSS of its own
        return line + f" (of which DataFrame {run['plan_s']:.2f}s)"
    return line + f", rss {run.get('rss_mb', 0):.0f} MB"


def _base(workload: str, case: str, client: str, rnd: int) -> dict[str, Any]:
    return {"workload": workload, "case": case, "client": client, "round": rnd}


#: How librdkafka says it was built without a codec: the client cannot read that data at all.
NO_CODEC = "Local: Not implemented"


def _finish(run: dict[str, Any], out: runner.Outcome, error: str | None = None) -> dict[str, Any]:
    run["ok"] = out.ok and error is None
    run["error"] = out.error or error
    codec = run["case"].split()[0]
    if not run["ok"] and codec in ("lz4", "zstd") and NO_CODEC in (run["error"] or ""):
        # Said as such in the table, and not a harness failure.
        run["unsupported"] = f"cannot read {codec} (its librdkafka: {NO_CODEC})"
    run["proc_cpu"] = out.proc_cpu
    if out.result:
        run.update(out.result)
    if run["ok"] and "wall" in run and "count" in run:
        run["records_per_s"] = run["count"] / run["wall"]
        run["mb_per_s"] = run.get("bytes", 0) / run["wall"] / 1e6
    return run


def _timeout(records: int) -> float:
    return 120.0 + records / 10_000


def _need_java(ctx: Context) -> Java:
    if ctx.java is None:
        raise RuntimeError("no JDK: the Java clients cannot run")
    return ctx.java


# -- W1-W4: consuming a dataset ----------------------------------------------------------------


def consume_once(
    ctx: Context,
    workload: str,
    case: str,
    client: str,
    rnd: int,
    topic: str,
    ds: Dataset,
    keep: bool = True,
) -> dict[str, Any]:
    """One read of the dataset by ``client``, checked; recorded unless ``keep`` is false."""
    run = _base(workload, case, client, rnd)
    timeout = _timeout(ds.records)
    if client in PYTHON_CONSUMERS or client in ONE_RECORD_CONSUMERS or client in OPT_IN_CONSUMERS:
        spec = {
            "role": "consume",
            "client": client,
            "bootstrap": ctx.bootstrap,
            "topic": topic,
            "partitions": ds.partitions,
            "expected": ds.records,
            "max_records": ctx.max_records,
            "tls": ctx.tls,
        }
        argv = runner.python_child(spec)
        out = runner.run(argv, stall_s=ctx.stall_s, timeout_s=timeout, name=client)
    elif client == "java":
        argv = _need_java(ctx).consumer(
            "throughput", ctx.bootstrap, topic, ds.partitions, ds.records, ctx.java_properties
        )
        out = runner.run(argv, stall_s=ctx.stall_s, timeout_s=timeout, name=client)
    elif client == "java-perf":
        argv = _need_java(ctx).tool(
            CONSUMER_PERFORMANCE,
            "--bootstrap-server",
            ctx.bootstrap,
            "--topic",
            topic,
            "--num-records",
            ds.records,
            # The tool's own stall limit: it stops when no record came for this long.
            "--timeout",
            int(ctx.stall_s * 1000),
            "--group",
            f"bench-perf-{uuid.uuid4().hex[:10]}",
        )
        out = runner.run(argv, stall_s=None, timeout_s=timeout, name=client)
        if out.ok and out.result is not None:
            try:
                count, mb = parse_consumer_performance(out.lines)
            except ValueError as exc:
                return ctx.record(_finish(run, out, str(exc)))
            # It prints MB (2^20 bytes) of keys and values with four decimals, no checksum.
            if abs(mb - ds.key_and_value_bytes() / 2**20) > 0.00011:
                error = f"read {mb} MB of keys and values, expected {ds.key_and_value_bytes()} B"
                return ctx.record(_finish(run, out, error))
            out.result.update(count=count, bytes=ds.value_bytes(), verified="count, bytes")
            out.result["tool_output"] = out.lines[-2:]
    else:
        raise ValueError(f"no consumer client {client!r}")
    error = None
    if out.ok and out.result is not None and "checksum" in out.result:
        got, want = (out.result["count"], out.result["checksum"]), (ds.records, ds.checksum())
        if got != want:
            error = f"read wrong data: (count, checksum) {got}, expected {want}"
        out.result["verified"] = "count, checksum"
    elif out.ok and out.result is not None and out.result.get("count") != ds.records:
        error = f"read {out.result.get('count')} records, expected {ds.records}"
    run = _finish(run, out, error)
    return ctx.record(run) if keep else run


def consume_workload(
    ctx: Context, workload: str, case: str, ds: Dataset, clients: list[str]
) -> list[dict[str, Any]]:
    with written_topic(ctx, ds, workload, case) as topic:
        # The broker's fetch path is cold (JIT, page cache) until something reads the topic;
        # without this, the first client of round 1 pays for it.
        warm = consume_once(ctx, workload, case, WARM_UP_CLIENT, 0, topic, ds, keep=False)
        ctx.log(progress_line(warm, ctx.rounds).replace("round 0/", "warm-up, not counted, of "))
        runs = []
        for rnd in range(1, ctx.rounds + 1):
            for client in clients:  # alternating: A B C ... A B C ...
                runs.append(consume_once(ctx, workload, case, client, rnd, topic, ds))
        return runs


# -- W5: end-to-end latency at a fixed produce rate --------------------------------------------


def latency_once(
    ctx: Context, case: str, client: str, rnd: int, rate: int, seconds: float
) -> dict[str, Any]:
    run = _base("W5", case, client, rnd)
    n = int(rate * seconds)
    partitions = 8
    topic = ctx.topic("W5", rate, client, rnd)
    ctx.kafka.create_topic(topic, partitions=partitions)
    try:
        if client == "java":
            argv = _need_java(ctx).consumer("latency", ctx.bootstrap, topic, partitions, n)
        else:
            spec = {
                "role": "consume",
                "client": client,
                "bootstrap": ctx.bootstrap,
                "topic": topic,
                "partitions": partitions,
                "expected": n,
                "latency": True,
            }
            argv = runner.python_child(spec)
        timeout = 120.0 + seconds * 3
        consumer = runner.Child(argv, stall_s=ctx.stall_s, timeout_s=timeout, name=client)
        not_ready = consumer.wait_ready(60.0)
        if not_ready is not None:
            consumer.kill()
            return ctx.record(_finish(run, consumer.finish(), not_ready))
        if ctx.broker_gc is not None:
            ctx.broker_gc.collect()
        source = {
            "role": "rate-produce",
            "bootstrap": ctx.bootstrap,
            "topic": topic,
            "rate": rate,
            "seconds": seconds,
            "warmup": ctx.sizes.w5_warmup,
            "value_size": LATENCY_VALUE_SIZE,
        }
        measured_from = time.time() + ctx.sizes.w5_warmup
        produced = runner.run(
            runner.python_child(source), stall_s=ctx.stall_s, timeout_s=timeout, name="source"
        )
        if ctx.broker_gc is not None:
            run["broker_pauses_ms"] = ctx.broker_gc.pauses(measured_from, time.time())
        if not produced.ok:
            consumer.kill()
            consumer.finish()
            return ctx.record(_finish(run, produced, f"the producer failed: {produced.error}"))
        out = consumer.finish()
        error = None
        want = (n, (31 * (n * (n - 1) // 2) + n * LATENCY_VALUE_SIZE) & MASK)
        if out.ok and out.result is not None:
            got = (out.result["count"], out.result["checksum"])
            if got != want:
                error = f"read wrong data: (count, checksum) {got}, expected {want}"
            out.result["verified"] = "count, checksum"
        run["achieved_rate"] = (produced.result or {}).get("achieved_rate")
        return ctx.record(_finish(run, out, error))
    finally:
        ctx.kafka.delete_topic(topic)


def latency_workload(ctx: Context, clients: list[str]) -> list[dict[str, Any]]:
    # A broker's first seconds of small produces and fetches stall once for most of a second
    # (on this machine, whichever client runs first saw a p99 near 1 s): one run of the first
    # rate's length, not recorded, goes before the measured ones.
    if clients:
        rate, seconds = next(iter(ctx.sizes.w5_seconds.items()))
        warm = ctx.unrecorded()
        latency_once(warm, f"{rate}/s", clients[0], 0, rate, seconds)
    runs = []
    for rate, seconds in ctx.sizes.w5_seconds.items():
        case = f"{rate}/s"
        for rnd in range(1, ctx.rounds + 1):
            for client in clients:
                runs.append(latency_once(ctx, case, client, rnd, rate, seconds))
    return runs


# -- W6: producer throughput -------------------------------------------------------------------


def produce_once(
    ctx: Context,
    case: str,
    client: str,
    rnd: int,
    acks: str,
    codec: str,
    keys: str | None = None,
) -> dict[str, Any]:
    run = _base("W6", case, client, rnd)
    n = ctx.sizes.w6_records
    partitions = 8
    topic = ctx.topic("W6", acks, codec, client, rnd)
    ctx.kafka.create_topic(topic, partitions=partitions)
    try:
        if client == "java-perf":
            argv = _need_java(ctx).tool(
                PRODUCER_PERFORMANCE,
                "--topic",
                topic,
                "--num-records",
                n,
                "--record-size",
                PRODUCER_VALUE_SIZE,
                "--throughput",
                -1,
                "--producer-props",
                f"bootstrap.servers={ctx.bootstrap}",
                f"acks={acks}",
                f"compression.type={codec}",
                "linger.ms=5",
                "enable.idempotence=false",
            )
        elif client == "java":
            argv = _need_java(ctx).argv(
                "BenchProducer",
                ctx.bootstrap,
                topic,
                n,
                PRODUCER_VALUE_SIZE,
                acks,
                codec,
                keys or "none",
                "linger.ms=5",
                "enable.idempotence=false",
            )
        else:
            spec = {
                "role": "produce",
                "client": client,
                "bootstrap": ctx.bootstrap,
                "topic": topic,
                "records": n,
                "value_size": PRODUCER_VALUE_SIZE,
                "acks": acks,
                "codec": codec,
                "keys": keys,
            }
            argv = runner.python_child(spec)
        stall = None if client == "java-perf" else ctx.stall_s
        out = runner.run(argv, stall_s=stall, timeout_s=_timeout(n), name=client)
        error = None
        if out.ok and out.result is not None:
            if client == "java-perf":
                out.result["tool_output"] = out.lines[-1:]
                try:
                    out.result["count"] = parse_producer_performance(out.lines)
                except ValueError as exc:
                    error = str(exc)
            if out.result.get("errors"):
                error = f"{out.result['errors']} delivery callbacks saw an error"
            out.result["bytes"] = n * PRODUCER_VALUE_SIZE
            stored = sum(asyncio.run(end_offsets(ctx.bootstrap, topic, partitions)))
            out.result["verified"] = "acknowledged count, broker end offsets"
            if error is None and (out.result.get("count"), stored) != (n, n):
                error = f"{out.result.get('count')} acknowledged, {stored} stored, expected {n}"
        return ctx.record(_finish(run, out, error))
    finally:
        ctx.kafka.delete_topic(topic)


def produce_workload(
    ctx: Context, clients: list[str], idiom_clients: list[str] | None = None
) -> list[dict[str, Any]]:
    idiom_clients = idiom_clients or []
    # (case, acks, codec, keys, clients): the settings cases, then the idioms' cases.
    cases = [
        (f"acks={acks} {codec}", acks, codec, None, clients) for acks, codec in PRODUCER_CONFIGS
    ]
    if idiom_clients:
        cases += [
            (f"idioms, {name}", "1", "none", keys, idiom_clients)
            for name, keys in KEY_CASES
            if name in ctx.sizes.key_cases
        ]
    # A fresh broker appends slowly until its JIT has compiled the produce path, and W6's
    # small batches take it longest: with none, ferrokafka (first in every round) ran round 1
    # of the first case at 0.36M records/s, then 0.54M and 0.82M, and its runs cost the broker
    # 3.1, 2.1 and 0.6 CPU s (benches/produce_ceiling.py). So one whole round of the settings
    # cases goes first and is not recorded.
    warm = ctx.unrecorded()
    for case, acks, codec, keys, who in cases[: len(PRODUCER_CONFIGS)]:
        for client in who:
            produce_once(warm, case, client, 0, acks, codec, keys)
    # Rounds outside, cases inside: this broker has spells of 20-30 s in which every append
    # costs it about three times the CPU (whichever client is writing; not a GC pause). With
    # a case's rounds back to back, one spell took two of a case's three runs and so its
    # median; spread over the cases, a spell costs each case at most one run.
    runs = []
    for rnd in range(1, ctx.rounds + 1):
        for case, acks, codec, keys, who in cases:
            for client in who:
                runs.append(produce_once(ctx, case, client, rnd, acks, codec, keys))
    return runs


def group_workload(ctx: Context, clients: list[str]) -> list[dict[str, Any]]:
    ds = ctx.sizes.w7
    topic = ctx.topic("W7")
    ctx.kafka.create_topic(topic, partitions=ds.partitions)
    runs = []
    try:
        asyncio.run(write_dataset(ctx.bootstrap, topic, ds))
        for rnd in range(1, ctx.rounds + 1):
            for client in clients:
                run = _base("W7", "groups", client, rnd)
                if client.startswith("java"):
                    protocol = "consumer" if client.endswith("kip848") else "classic"
                    group = f"bench-w7-{uuid.uuid4().hex[:10]}"
                    argv = _need_java(ctx).group(
                        ctx.bootstrap, topic, ds.partitions, group, protocol
                    )
                else:
                    spec = {
                        "role": "group",
                        "client": client,
                        "bootstrap": ctx.bootstrap,
                        "topic": topic,
                        "partitions": ds.partitions,
                    }
                    argv = runner.python_child(spec)
                out = runner.run(argv, stall_s=None, timeout_s=400.0, name=client)
                runs.append(ctx.record(_finish(run, out)))
    finally:
        ctx.kafka.delete_topic(topic)
    return runs


# -- W8: Spark ---------------------------------------------------------------------------------


def _warm_up_or_record(ctx: Context, run: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    """A Spark process's run: round 0 (untimed) is only logged, the others are recorded."""
    if run["round"] == 0:
        line = progress_line(run, ctx.rounds)
        ctx.log(line.replace("round 0/", "warm-up, not counted, of "))
    else:
        runs.append(ctx.record(run))


#: The Spark process shows no progress while its session starts and its first query compiles:
#: 22 s for the session alone on two cores shared with a broker and a test suite, so the usual
#: stall allowance (30 s) killed healthy runs there.
SPARK_STALL_S = 120.0


def spark_workload(ctx: Context, clients: list[str]) -> list[dict[str, Any]]:
    """Every reader in one child process holding one SparkSession (a process has one
    SparkContext): each reads the dataset once untimed, then the rounds alternate. The child
    reports each run as it ends (``spark_reads``); each is checked here: the count and the sum
    of value lengths must be the dataset's exactly."""
    ds = ctx.sizes.w8
    if not clients:
        return []
    topic = ctx.topic("W8")
    ctx.kafka.create_topic(topic, partitions=ds.partitions)
    runs: list[dict[str, Any]] = []
    try:
        t = time.perf_counter()
        asyncio.run(write_dataset(ctx.bootstrap, topic, ds))
        ctx.log(f"[W8] wrote {ds.describe()} in {time.perf_counter() - t:.1f}s")
        want = (ds.records, ds.value_bytes())

        def on_run(event: dict[str, Any]) -> None:
            got = event["run"]
            run = _base("W8", "none", got["client"], got["round"])
            run.update(got)
            error = got.get("error")
            if error is None and (got["count"], got["bytes"]) != want:
                error = f"read wrong data: (count, value bytes) {(got['count'], got['bytes'])}"
                error += f", expected {want}"
            run["ok"] = error is None
            run["error"] = error
            if run["ok"]:
                run["verified"] = "count, value bytes"
                run["records_per_s"] = run["count"] / run["wall"]
                run["mb_per_s"] = run["bytes"] / run["wall"] / 1e6
            _warm_up_or_record(ctx, run, runs)

        spec = {
            "role": "spark",
            "bootstrap": ctx.bootstrap,
            "topic": topic,
            "partitions": ds.partitions,
            "records": ds.records,
            "value_size": ds.value_size,
            "readers": clients,
            "rounds": ctx.rounds,
        }
        queries = (ctx.rounds + 1) * len(clients)
        timeout = 300.0 + queries * (60.0 + ds.records / 10_000)
        child = runner.Child(
            runner.python_child(spec),
            stall_s=max(ctx.stall_s, SPARK_STALL_S),
            timeout_s=timeout,
            name="spark",
            on_event=on_run,
        )
        out = child.finish()
        done = {(r["client"], r["round"]) for r in runs}
        for rnd in range(1, ctx.rounds + 1):
            for client in clients:
                if (client, rnd) not in done:
                    run = _base("W8", "none", client, rnd)
                    error = f"the Spark process ended before this run: {out.error}"
                    runs.append(ctx.record(run | {"ok": False, "error": error}))
        if not out.ok:
            ctx.log(f"[W8] the Spark process failed: {out.error}")
        for run in runs:  # the one process's figures (session start, peak RSS), with each run
            run["spark_process"] = dict(out.result or {})
        return runs
    finally:
        ctx.kafka.delete_topic(topic)


# -- W10: Spark streaming --------------------------------------------------------------------


def stream_workload(ctx: Context, clients: list[str]) -> list[dict[str, Any]]:
    """Every source in one child process holding one SparkSession (``spark_streams``): the
    catch-up of the dataset (each source once untimed, then the rounds), then the steady-state
    runs, each on a fresh topic. Catch-up runs are checked by count and value bytes; steady
    ones by the count of measured records that reached the sink."""
    sizes = ctx.sizes
    ds = sizes.w10
    if not clients:
        return []
    topic = ctx.topic("W10")
    ctx.kafka.create_topic(topic, partitions=ds.partitions)
    runs: list[dict[str, Any]] = []
    try:
        t = time.perf_counter()
        asyncio.run(write_dataset(ctx.bootstrap, topic, ds))
        ctx.log(f"[W10] wrote {ds.describe()} in {time.perf_counter() - t:.1f}s")

        def on_run(event: dict[str, Any]) -> None:
            got = event["run"]
            run = _base("W10", got["case"], got["client"], got["round"])
            run.update(got)
            error = got.get("error")
            if error is None and got["case"].startswith("catch-up"):
                want = (ds.records, ds.value_bytes())
                if (got["count"], got["bytes"]) != want:
                    error = "read wrong data: (count, value bytes) "
                    error += f"{(got['count'], got['bytes'])}, expected {want}"
                else:
                    run["verified"] = "count, value bytes"
                    run["records_per_s"] = got["count"] / got["wall"]
                    if got.get("trigger_s"):
                        run["batch_records_per_s"] = got["count"] / got["trigger_s"]
            elif error is None:
                if got["count"] != got["expected"]:
                    error = f"{got['count']} of {got['expected']} measured records reached the "
                    error += "sink"
                else:
                    run["verified"] = "count of measured records"
            run["ok"] = error is None
            run["error"] = error
            _warm_up_or_record(ctx, run, runs)

        spec = {
            "role": "spark-stream",
            "bootstrap": ctx.bootstrap,
            "topic": topic,
            "partitions": ds.partitions,
            "records": ds.records,
            "counts": ds.counts(),
            "value_size": ds.value_size,
            "sources": clients,
            "rounds": ctx.rounds,
            "rates": list(sizes.w10_rates),
            "triggers": list(sizes.w10_triggers),
            "seconds": sizes.w10_seconds,
            "warmup": sizes.w10_warmup,
            "steady_rounds": sizes.w10_steady_rounds,
        }
        steady = len(sizes.w10_rates) * len(sizes.w10_triggers) * sizes.w10_steady_rounds
        timeout = 600.0 + (ctx.rounds + 1) * len(clients) * (120.0 + ds.records / 10_000)
        timeout += steady * len(clients) * (sizes.w10_seconds * 2 + 180.0)
        child = runner.Child(
            runner.python_child(spec),
            stall_s=max(ctx.stall_s, SPARK_STALL_S),
            timeout_s=timeout,
            name="spark-stream",
            on_event=on_run,
        )
        out = child.finish()
        if not out.ok:
            ctx.log(f"[W10] the Spark process failed: {out.error}")
            runs.append(
                ctx.record(
                    _base("W10", "process", "spark", 1)
                    | {"ok": False, "error": f"the Spark process failed: {out.error}"}
                )
            )
        for run in runs:
            run["spark_process"] = dict(out.result or {})
        return runs
    finally:
        ctx.kafka.delete_topic(topic)


# -- W11: typed payloads to a typed Arrow table -----------------------------------------------


def _check_typed(run: dict[str, Any], want: dict[str, int]) -> str | None:
    """A W11 run's error, if what it decoded is not the dataset (None: it is)."""
    got = run.get("checksum") or {}
    if got == want:
        run["verified"] = "count, checksum of every decoded field"
        return None
    wrong = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
    return "read wrong data: (got, expected) " + ", ".join(
        f"{k} {g} != {w}" for k, (g, w) in list(wrong.items())[:4]
    )


def typed_once(
    ctx: Context, fmt: str, client: str, rnd: int, spec: dict[str, Any], want: dict[str, int]
) -> dict[str, Any]:
    """One run of a Python W11 client in its own process, checked."""
    run = _base("W11", fmt, client, rnd)
    records: int = spec["expected"]
    # confluent-kafka's per-record deserializers run at tens of thousands of records a second.
    timeout = 120.0 + records / 2_000
    out = runner.run(
        runner.python_child({**spec, "client": client}),
        stall_s=ctx.stall_s,
        timeout_s=timeout,
        name=client,
    )
    error = None
    if out.ok and out.result is not None:
        error = _check_typed(out.result, want)
    return _finish(run, out, error)


def typed_workload(ctx: Context, clients: list[str]) -> list[dict[str, Any]]:
    """W11: the dataset (``typed.rows``) written once as JSON and once as Avro in Confluent's
    wire format, each in its topic; a Schema Registry (``typed.Registry``) for the run. Per
    format, one untimed run of ferrokafka's consumer, then the Python clients' rounds; then
    one Spark process for its readers and both formats (each reader once untimed first, as
    W8). Every run checks the count and the checksum of the decoded fields. Spark's ceiling
    reads the same rows, decoded, from Arrow files written here first (``write_ceiling``)."""
    from . import typed
    from .typed_reads import write_ceiling

    ds = ctx.sizes.w11
    python = [c for c in clients if c in TYPED_PYTHON_CLIENTS]
    spark = [c for c in clients if c in TYPED_SPARK_READERS]
    if not clients:
        return []
    t = time.perf_counter()
    values = typed.rows(ds.records)
    want = typed.checksum(values)
    topics: dict[str, str] = {}
    value_bytes: dict[str, int] = {}
    runs: list[dict[str, Any]] = []
    scratch = tempfile.TemporaryDirectory(prefix="ferrokafka-bench-W11-")
    ceiling: list[str] = []
    try:
        if "spark-ceiling" in spark:
            topic = ctx.topic("W11", "ceiling")
            ceiling = write_ceiling(values, scratch.name, ds.partitions, topic)
        for fmt in typed.FORMATS:
            payloads = typed.encode(values, fmt)
            value_bytes[fmt] = sum(map(len, payloads))
            topic = ctx.topic("W11", fmt)
            ctx.kafka.create_topic(topic, partitions=ds.partitions)
            topics[fmt] = topic
            sized = replace(ds, value_size=value_bytes[fmt] // ds.records)
            asyncio.run(write_dataset(ctx.bootstrap, topic, sized, payloads))
            del payloads
            ctx.log(
                f"[W11 {fmt}] wrote {ds.records:,} records of {value_bytes[fmt] / ds.records:.0f}"
                f" B on average, {ds.partitions} partitions (made and written in "
                f"{time.perf_counter() - t:.1f}s)"
            )
            t = time.perf_counter()
        del values
        with typed.Registry(typed.registry_schemas()) as registry:
            for fmt in typed.FORMATS:
                spec = {
                    "role": "typed",
                    "format": fmt,
                    "bootstrap": ctx.bootstrap,
                    "topic": topics[fmt],
                    "partitions": ds.partitions,
                    "expected": ds.records,
                    "registry": registry.url,
                    "value_bytes": value_bytes[fmt],
                }
                if python:
                    # The broker's fetch path is cold until something reads the topic.
                    warm = typed_once(ctx, fmt, TYPED_PYTHON_CLIENTS[0], 0, spec, want)
                    line = progress_line(warm, ctx.rounds)
                    ctx.log(line.replace("round 0/", "warm-up, not counted, of "))
                for rnd in range(1, ctx.rounds + 1):
                    for client in python:
                        runs.append(ctx.record(typed_once(ctx, fmt, client, rnd, spec, want)))
            if spark:
                runs += _typed_spark(ctx, spark, topics, value_bytes, registry.url, want, ceiling)
            ctx.log(f"[W11] registry lookups by schema id: {registry.requests}")
        return runs
    finally:
        scratch.cleanup()
        for topic in topics.values():
            ctx.kafka.delete_topic(topic)


def _typed_spark(
    ctx: Context,
    readers: list[str],
    topics: dict[str, str],
    value_bytes: dict[str, int],
    registry: str,
    want: dict[str, int],
    ceiling: list[str],
) -> list[dict[str, Any]]:
    """W11's Spark readers in one child process (``typed_reads.run_spark``), checked;
    ``ceiling``: the files ``spark-ceiling`` reads."""
    ds = ctx.sizes.w11
    runs: list[dict[str, Any]] = []

    def on_run(event: dict[str, Any]) -> None:
        got = event["run"]
        run = _base("W11", got["case"], got["client"], got["round"])
        run.update(got)
        error = got.get("error")
        if error is None:
            error = _check_typed(run, want)
        run["ok"] = error is None
        run["error"] = error
        if run["ok"]:
            run["records_per_s"] = run["count"] / run["wall"]
            run["mb_per_s"] = run["bytes"] / run["wall"] / 1e6
        _warm_up_or_record(ctx, run, runs)

    spec = {
        "role": "typed-spark",
        "bootstrap": ctx.bootstrap,
        "topics": topics,
        "registry": registry,
        "readers": readers,
        "rounds": ctx.rounds,
        "value_bytes": value_bytes,
        "ceiling": ceiling,
    }
    queries = (ctx.rounds + 1) * len(readers) * len(topics)
    timeout = 300.0 + queries * (60.0 + ds.records / 5_000)
    child = runner.Child(
        runner.python_child(spec),
        stall_s=max(ctx.stall_s, SPARK_STALL_S),
        timeout_s=timeout,
        name="spark",
        on_event=on_run,
    )
    out = child.finish()
    done = {(r["case"], r["client"], r["round"]) for r in runs}
    for fmt in topics:
        for rnd in range(1, ctx.rounds + 1):
            for client in readers:
                if (fmt, client, rnd) not in done:
                    run = _base("W11", fmt, client, rnd)
                    error = f"the Spark process ended before this run: {out.error}"
                    runs.append(ctx.record(run | {"ok": False, "error": error}))
    if not out.ok:
        ctx.log(f"[W11] the Spark process failed: {out.error}")
    for run in runs:
        run["spark_process"] = dict(out.result or {})
    return runs


# -- W9: share groups --------------------------------------------------------------------------


def share_once(
    ctx: Context, client: str, rnd: int, topic: str, ds: Dataset, members: int
) -> dict[str, Any]:
    """One run of ``client`` with ``members`` members in a fresh share group, checked."""
    from .shares import configure_group

    case = f"{members} member{'s' if members > 1 else ''}"
    run = _base("W9", case, client, rnd)
    run["members"] = members
    group = f"bench-w9-{uuid.uuid4().hex[:10]}"
    try:
        asyncio.run(configure_group(ctx.bootstrap, group))
    except Exception as exc:
        error = f"could not set share.auto.offset.reset on {group}: {type(exc).__name__}: {exc}"
        return ctx.record(run | {"ok": False, "error": error})
    timeout = _timeout(ds.records)
    if client.startswith("java-share"):
        commit = client == "java-share-commit"
        return ctx.record(_java_share(ctx, run, group, topic, ds, members, timeout, commit))
    spec = {
        "role": "share",
        "client": client,
        "bootstrap": ctx.bootstrap,
        "topic": topic,
        "group": group,
        "members": members,
        "counts": ds.counts(),
        "expected": ds.records,
        # The child stops here and says how many came (the watchdog would only kill it).
        "deadline_s": timeout - 20,
    }
    out = runner.run(runner.python_child(spec), stall_s=ctx.stall_s, timeout_s=timeout, name=client)
    error = None
    got = out.result
    if out.ok and got is not None:
        if not got["complete"]:
            error = f"received {got['count']:,} of {ds.records:,} records in {timeout - 20:.0f}s"
        elif got["missing"] or got["duplicates"] or got["outside"]:
            error = (
                f"received {got['count']:,} records: {got['missing']:,} of the dataset missing, "
                f"{got['duplicates']:,} duplicates, {got['outside']:,} outside it"
            )
        got["verified"] = "count, every (partition, offset) once"
    return ctx.record(_finish(run, out, error))


def _java_share(
    ctx: Context,
    run: dict[str, Any],
    group: str,
    topic: str,
    ds: Dataset,
    members: int,
    timeout: float,
    commit: bool,
) -> dict[str, Any]:
    """``members`` JVMs of tools/java/ShareMember.java started together: one alone stops at
    the dataset's count; several stop each after ``JAVA_SHARE_IDLE_MS`` without a record. The
    time is from the earliest first record to the latest last one (their wall clocks: one
    machine), so the JVMs' start and the idle wait at the end are not in it. Checked by the
    count only (quiet: ShareMember prints no per-record lines)."""
    java = _need_java(ctx)
    count = ds.records if members == 1 else 0
    # One member stops at the count: the idle limit only ends a stuck run there.
    idle = JAVA_SHARE_IDLE_MS if members > 1 else 6 * JAVA_SHARE_IDLE_MS
    children = [
        runner.Child(
            java.share_member(ctx.bootstrap, group, topic, count, idle, commit=commit),
            stall_s=None,
            timeout_s=timeout + idle / 1000,
            name=f"{run['client']}-{i}",
            bare_result=True,
            sample_rss=True,
        )
        for i in range(members)
    ]
    outs = [child.finish() for child in children]
    failed = [(i, o.error) for i, o in enumerate(outs) if not o.ok]
    cpu = [o.proc_cpu for o in outs]
    combined = runner.Outcome(
        ok=not failed,
        result=None,
        error=f"member {failed[0][0]}: {failed[0][1]}" if failed else None,
        proc_cpu=None if None in cpu else sum(c for c in cpu if c is not None),
    )
    error = None
    if not failed:
        summaries = [o.result or {} for o in outs]
        per_member = [int(r.get("records", 0)) for r in summaries]
        received = [r for r in summaries if r.get("records")]
        result: dict[str, Any] = {"count": sum(per_member), "per_member": per_member}
        rss = [o.sampled_rss_mb for o in outs]
        if None not in rss:
            result["rss_mb"] = sum(r for r in rss if r is not None)
            result["per_member_rss_mb"] = rss
        if received:
            first = min(r["first_ms"] for r in received)
            last = max(r["last_ms"] for r in received)
            result["wall"] = max(last - first, 1) / 1000
        result["verified"] = "count"
        if result["count"] != ds.records:
            error = f"received {result['count']:,} records, expected {ds.records:,}"
            result.pop("wall", None)
        combined.result = result
    return _finish(run, combined, error)


def share_workload(ctx: Context, clients: list[str]) -> list[dict[str, Any]]:
    """Every client with 1 and 4 members (SHARE_MEMBERS), rounds outside, one dataset; each
    run in a new share group reading it from the earliest offset. One run of the first client
    with one member goes first and is not recorded (the broker's share-fetch path is cold)."""
    ds = ctx.sizes.w9
    if not clients:
        return []
    runs = []
    with written_topic(ctx, ds, "W9") as topic:
        share_once(ctx.unrecorded(), clients[0], 0, topic, ds, 1)
        for rnd in range(1, ctx.rounds + 1):
            for members in SHARE_MEMBERS:
                for client in clients:
                    runs.append(share_once(ctx, client, rnd, topic, ds, members))
    return runs


# -- W12: transactions ------------------------------------------------------------------------


def transactions_once(
    ctx: Context, case: str, mode: str, client: str, rnd: int, source: str, version: int
) -> dict[str, Any]:
    """One run of ``client`` (``mode`` small or ctp, see ``transactions``) into a new output
    topic with a new transactional id (and group), then checked by reading the output topic
    ``read_committed``: small, the count and the value bytes of every record committed; ctp,
    the input's records each once (their keys' multiset), each value the input's upper-cased,
    and the group's committed offsets at the input's end."""
    run = _base("W12", case, client, rnd)
    run["transaction_version"] = version
    ds = ctx.sizes.w12
    output = ctx.topic("W12", mode, client, rnd)
    ctx.kafka.create_topic(output, partitions=TXN_PARTITIONS)
    txn_id = f"bench-w12-{uuid.uuid4().hex[:10]}"
    group = f"bench-w12-{uuid.uuid4().hex[:10]}"
    n = ctx.sizes.w12_transactions
    expected = n * TXN_RECORDS if mode == "small" else ds.records
    # A transaction's round trips dominate: a few milliseconds each on a quiet machine, tens
    # on a loaded one.
    timeout = 120.0 + (n * 0.1 if mode == "small" else ds.records / 1000)
    try:
        if client == "java":
            args: list[object] = [mode, ctx.bootstrap, txn_id]
            if mode == "small":
                args += [output, n, TXN_RECORDS, TXN_VALUE_SIZE]
            else:
                args += [source, output, group, ds.records, TXN_BATCH]
            argv = _need_java(ctx).argv("BenchTransactions", *args)
        else:
            spec = {
                "role": "transactions",
                "client": client,
                "case": mode,
                "bootstrap": ctx.bootstrap,
                "transactional_id": txn_id,
                "topic": output,
                "transactions": n,
                "per_transaction": TXN_RECORDS,
                "value_size": TXN_VALUE_SIZE,
                "input": source,
                "output": output,
                "group": group,
                "expected": ds.records,
                "batch": TXN_BATCH,
            }
            argv = runner.python_child(spec)
        out = runner.run(argv, stall_s=ctx.stall_s, timeout_s=timeout, name=client)
        error = None
        if out.ok and out.result is not None:
            error = _check_transactions(ctx, mode, output, group, source, expected, out.result)
        run = _finish(run, out, error)
        if run["ok"]:
            run["txn_per_s"] = run["transactions"] / run["wall"]
        return ctx.record(run)
    finally:
        ctx.kafka.delete_topic(output)


def _check_transactions(
    ctx: Context,
    mode: str,
    output: str,
    group: str,
    source: str,
    expected: int,
    result: dict[str, Any],
) -> str | None:
    """What a W12 run left in its output topic, said as its error (None: all as expected)."""
    ds = ctx.sizes.w12
    result["bytes"] = expected * TXN_VALUE_SIZE
    if result.get("count") != expected:
        return f"{result.get('count')} records committed, expected {expected}"
    found = asyncio.run(read_committed(ctx.bootstrap, output, TXN_PARTITIONS, _timeout(expected)))
    if mode == "small":
        result["verified"] = "count, value bytes (read_committed)"
        got = (found.count, sum(len(v or b"") * k for v, k in found.values.items()))
        if got != (expected, expected * TXN_VALUE_SIZE):
            return f"read_committed found (count, value bytes) {got}, expected {expected} records"
        return None
    result["verified"] = (
        "count, each input key once, values upper-cased (read_committed), group offsets at "
        "the input's end"
    )
    if found.count != expected:
        return f"read_committed found {found.count} records, expected {expected}"
    if found.keys != dataset_keys(ds):
        return "read_committed found the input's count but not its keys, each once"
    upper = dataset_value(ds).upper()
    if found.values != {upper: expected}:
        wrong = sum(k for v, k in found.values.items() if v != upper)
        return f"{wrong} values are not the input's upper-cased"
    offsets = asyncio.run(committed_offsets(ctx.bootstrap, group, source, ds.partitions))
    if offsets != ds.counts():
        return f"group {group} committed {offsets}, expected the input's end {ds.counts()}"
    return None


def transactions_workload(ctx: Context, clients: list[str]) -> list[dict[str, Any]]:
    """Both cases (TXN_CASES) for every client, rounds outside; consume-transform-produce reads
    one input topic written before the rounds. A whole round of small transactions goes first
    and is not recorded: a new broker serves transactions slowly for its first minutes (one
    client's runs of 200 went from 36 a second to 65-75, then to 80-240 after 1,500 more), so
    with one client's warm-up whichever client ran first paid for it."""
    if not clients:
        return []
    version = asyncio.run(transaction_version(ctx.bootstrap))
    ctx.log(
        f"[W12] the cluster's finalized transaction.version: {version}"
        + ("" if version >= 2 else " (not 2: these runs measure the older protocol)")
    )
    runs = []
    with written_topic(ctx, ctx.sizes.w12, "W12") as source:
        case, mode = TXN_CASES[0]
        for client in clients:
            transactions_once(ctx.unrecorded(), case, mode, client, 0, source, version)
        for rnd in range(1, ctx.rounds + 1):
            for case, mode in TXN_CASES:
                for client in clients:
                    runs.append(transactions_once(ctx, case, mode, client, rnd, source, version))
    return runs


# -- summaries ---------------------------------------------------------------------------------


def summarize(runs: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """Median and min-max of ``metric`` over the successful runs, and the failures."""
    ok = [r for r in runs if r["ok"] and r.get(metric) is not None]
    failed = [r["error"] for r in runs if not r["ok"] and not r.get("unsupported")]
    unsupported = [r["unsupported"] for r in runs if r.get("unsupported")]
    out: dict[str, Any] = {"runs": len(runs), "ok": len(ok), "failures": failed}
    if unsupported:
        out["unsupported"] = unsupported[-1]
    if ok:
        values = [r[metric] for r in ok]
        out.update(median=statistics.median(values), min=min(values), max=max(values))
    return out
