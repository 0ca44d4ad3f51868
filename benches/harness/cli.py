"""``benches/harness.py``: every workload, every client, one broker; tables, JSON and charts."""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.util
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import charts, machine, report
from .broker import broker
from .java import prepare
from .runner import ROOT, prepare_bytecode
from .workloads import (
    ALL_CLIENTS,
    CONSUMERS,
    FULL,
    GROUP_CLIENTS,
    JAVA_SHARE_IDLE_MS,
    LATENCY_CONSUMERS,
    ONE_RECORD_CONSUMERS,
    OPT_IN_CONSUMERS,
    PRODUCER_IDIOMS,
    PRODUCER_VALUE_SIZE,
    PRODUCERS,
    QUICK,
    SHARE_CLIENTS,
    SHARE_MEMBERS,
    SPARK_READERS,
    STREAM_SOURCES,
    TXN_BATCH,
    TXN_CLIENTS,
    TXN_PARTITIONS,
    TXN_RECORDS,
    TXN_VALUE_SIZE,
    TYPED_CLIENTS,
    W3_CASES,
    WORKLOADS,
    Context,
    Sizes,
    consume_workload,
    group_workload,
    latency_workload,
    produce_workload,
    share_workload,
    spark_workload,
    stream_workload,
    transactions_workload,
    typed_workload,
)

NOT_RUN = {
    "kafkars": "the former PyPI name of kafkarrow (the same project, renamed); kafkarrow is run",
}


def descriptions(sizes: Sizes) -> dict[str, str]:
    rates = " and ".join(f"{rate:,}/s for {s:g} s" for rate, s in sizes.w5_seconds.items())
    return {
        "W1": f"consume {sizes.w1.describe()}",
        "W2": f"consume {sizes.w2.describe()}",
        "W3": f"consume W1 compressed ({sizes.w1.records:,} records x {sizes.w1.value_size} B, "
        f"{sizes.w1.partitions} partitions) and W2 compressed ({sizes.w2.records:,} records x "
        f"{sizes.w2.value_size} B, the 1KiB cases) with lz4 and with zstd",
        "W4": f"consume {sizes.w4.describe()}",
        "W5": f"end-to-end latency at a fixed produce rate, {rates} after {sizes.w5_warmup:g} s "
        "of warm-up; 100-byte values, 8 partitions, produced by confluent-kafka "
        "(`linger.ms=1`); latency is from the produce() call to the poll that returns the "
        "record. The harness's broker is collected (a full GC) before each run, so that no "
        "young-collection pause of the broker, which delays every partition alike, falls in "
        "one client's run and not another's; the pauses that fall in a run are listed with it",
        "W6": f"produce {sizes.w6_records:,} records of {PRODUCER_VALUE_SIZE} random capital "
        "letters, no key, 8 partitions, acks=1 and all, without and with lz4; `linger.ms=5` "
        "and idempotence off for every client, other settings their defaults",
        "W7": f"groups on {sizes.w7.partitions} partitions (classic protocol unless marked, each "
        "client's default heartbeat interval, 3 s; ferrokafka.testing's broker has "
        "`group.initial.rebalance.delay.ms=0`): a new member's time from construction to its "
        "first record, and the time from a 4th member's construction until the four hold "
        "balanced assignments",
        "W8": f"Spark: count + sum(length(value)) of {sizes.w8.describe()}; one SparkSession "
        "(local[2], Spark's Kafka connector jars on spark.jars, 2 shuffle partitions, Python "
        "workers on this interpreter) in one process for every reader",
        "W9": f"share groups (KIP-932): read {sizes.w9.describe()} through a share group with "
        + " and with ".join(str(n) for n in SHARE_MEMBERS)
        + " members; each run in a new group whose `share.auto.offset.reset` is set to "
        "earliest (ferrokafka's admin client, `alter_configs`) before any member joins, the "
        "client's other settings its defaults. records/s is the dataset's records over the "
        "time from the first record any member received to the moment the members together "
        "had every record (member start-up and joins are not in it). The Python members of a "
        "run share one process (ferrokafka's: tasks of one event loop, polling with a 100 ms "
        "timeout; confluent-kafka's: one thread each); each run checks the count and that "
        "every (partition, offset) of the dataset came exactly once. Java's members are one "
        "JVM each (tools/java/ShareMember.java: `poll(100 ms)`, `commitSync()` after each "
        "poll that returned records), checked by their count; with several, each JVM stops "
        f"after {JAVA_SHARE_IDLE_MS / 1000:g} s without a record, and the time runs from the "
        "earliest first record to the latest last one. CPU s is the Python process's CPU time "
        "over the measured span (n/a for Java: a JVM's CPU time is only known for its whole "
        "life, start-up included; the JSON has it as proc_cpu); peak RSS is the whole "
        "process's, for Java the sum of the JVMs' (VmHWM, sampled every 0.1 s). Before the "
        "rounds, one untimed run of the first client with one member",
        "W10": f"Spark streaming: `readStream` of an {sizes.w10.partitions}-partition topic; "
        "one SparkSession (local[2], Spark's Kafka connector jars) in one process for both "
        f"sources. Catch-up: {sizes.w10.describe()} already in the topic, "
        "`Trigger.AvailableNow` from the earliest offsets into a `foreachBatch` that counts "
        "the rows and sums their value lengths, and into Spark's Parquet file sink; rows/s "
        "over `start()` to the query's end (each source once untimed first, per sink). Steady "
        "state, into a `foreachBatch` that caches the micro-batch, appends it to Parquet and "
        "counts it: the query starts on an empty topic (startingOffsets latest); after its "
        "first micro-batch, W5's confluent-kafka producer (`linger.ms=1`) writes "
        f"{sizes.w10_warmup:g} s of warm-up and then "
        + " or ".join(f"{r:,}" for r in sizes.w10_rates)
        + f" records/s for {sizes.w10_seconds:g} s; latency is from each measured record's "
        "Kafka timestamp (its `produce()` call) to the end of its micro-batch's Parquet write "
        "(201 quantiles of each micro-batch's timestamps); the run keeps up when the last "
        "measured record reached the sink within 5 s of the producer's end. Triggers: "
        + " and ".join(f"`{t}`" for t in sizes.w10_triggers)
        + f"; {sizes.w10_steady_rounds} steady-state round(s)",
        "W11": f"typed payloads to a typed Arrow table: {sizes.w11.records:,} records of a "
        "10-field event (longs, an int, a double, strings, a boolean, a timestamp, a nullable "
        "string, a nested record, an array of strings), written once as JSON (about 310 B) "
        "and once as Avro in Confluent's wire format (magic byte 0, 4-byte schema id, the "
        f"datum: about 180 B), each in a topic of {sizes.w11.partitions} partitions; a small "
        "Schema Registry (`GET /schemas/ids/{id}`) served by the harness for the run. Python "
        "clients (each run in its own process, from construction to close, the table built) "
        "end with a `pyarrow.Table` of the decoded fields; Spark readers (one SparkSession, "
        "local[2], as W8) with the decoded `value` struct column, aggregated. Every run sums "
        "every decoded field (string lengths, list sizes, nulls, timestamps) and is checked "
        "against the dataset's sums",
        "W12": "transactions, acks=all, each client's own idiom and its other settings its "
        f"defaults, one transactional id per run, each run writing a new {TXN_PARTITIONS}-"
        "partition topic. "
        f"Small transactions: {sizes.w12_transactions:,} transactions of {TXN_RECORDS} keyless "
        f"records of {TXN_VALUE_SIZE} random capital letters, one after the other (the next "
        "begins when the commit has returned). Consume-transform-produce: a `read_committed` "
        f"consumer in a new group reads {sizes.w12.describe()} (written before the rounds) "
        f"from the earliest offsets, up to {TXN_BATCH} records a poll; each batch's records go "
        "out with the value upper-cased and the key kept, in one transaction with the batch's "
        "next offsets (`send_offsets_to_transaction`). The clock runs from the first "
        "transaction's begin (small) or the first batch's arrival (consume-transform-produce) "
        "to the last commit: the producer's start (coordinator lookup, InitProducerId), a "
        "JVM's and the group's join are not in it (set-up s). CPU s is the process's over "
        "the same span. Every run is checked by reading its output `read_committed`: small, "
        "the count and value bytes; consume-transform-produce, every input key once, every "
        "value the input's upper-cased and the group's committed offsets at the input's end. "
        "Before the rounds, one untimed round of small transactions (every client): a new "
        "broker serves transactions slowly for its first minutes",
    }


def _has_share_consumer() -> bool:
    try:
        import confluent_kafka
    except ImportError:
        return False
    return hasattr(confluent_kafka, "ShareConsumer")


def run_workload(ctx: Context, w: str, pick: Callable[[list[str]], list[str]]) -> None:
    sizes = ctx.sizes
    consumers = CONSUMERS + OPT_IN_CONSUMERS
    if w == "W1":
        consume_workload(ctx, "W1", "none", sizes.w1, pick(consumers + ONE_RECORD_CONSUMERS))
    elif w == "W2":
        one = ONE_RECORD_CONSUMERS if sizes.w2_one_record else []
        consume_workload(ctx, "W2", "none", sizes.w2, pick(consumers + one))
    elif w == "W3":
        for case, codec, value_size in W3_CASES:
            consume_workload(ctx, "W3", case, sizes.w3(codec, value_size), pick(consumers))
    elif w == "W4":
        consume_workload(ctx, "W4", "none", sizes.w4, pick(consumers))
    elif w == "W5":
        latency_workload(ctx, pick(LATENCY_CONSUMERS))
    elif w == "W6":
        produce_workload(ctx, pick(PRODUCERS), pick(PRODUCER_IDIOMS))
    elif w == "W7":
        group_workload(ctx, pick(GROUP_CLIENTS))
    elif w == "W8":
        spark_workload(ctx, pick(SPARK_READERS))
    elif w == "W9":
        share_workload(ctx, pick(SHARE_CLIENTS))
    elif w == "W10":
        stream_workload(ctx, pick(STREAM_SOURCES))
    elif w == "W11":
        typed_workload(ctx, pick(TYPED_CLIENTS))
    elif w == "W12":
        transactions_workload(ctx, pick(TXN_CLIENTS))


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="benches/harness.py",
        description="ferrokafka beside every peer client, on one local broker.",
    )
    p.add_argument("--quick", action="store_true", help="small sizes, one round (proves it works)")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="e.g. W1,W3")
    p.add_argument("--clients", help=f"only these, of: {','.join(ALL_CLIENTS)}")
    p.add_argument("--rounds", type=int, help="rounds per workload (default 3; --quick: 1)")
    p.add_argument("--out", default=str(ROOT / "benches" / "results"), help="results directory")
    p.add_argument("--bootstrap", help="use this running broker instead of starting one")
    p.add_argument("--max-records", type=int, help="records per poll for the consumers")
    p.add_argument(
        "--w5-seconds",
        help="W5's rates and run lengths, e.g. 50000=30 or 1000=60,50000=30 (default "
        + ",".join(f"{rate}={s:g}" for rate, s in FULL.w5_seconds.items())
        + "): p99.9 of a short run is one stall",
    )
    p.add_argument(
        "--w6-records",
        type=int,
        help=f"W6's records per run (default {FULL.w6_records:,}): the slowest idioms "
        "(send_and_wait from 100 tasks) take minutes at the default",
    )
    p.add_argument(
        "--w10-rates",
        help="W10's steady-state produce rates, records/s, comma-separated (default "
        + ",".join(str(r) for r in FULL.w10_rates)
        + "); 'none' runs the catch-up only",
    )
    p.add_argument(
        "--w11-records",
        type=int,
        help=f"W11's typed records per format (default {FULL.w11.records:,})",
    )
    p.add_argument(
        "--w12-transactions",
        type=int,
        help=f"W12's small transactions per run (default {FULL.w12_transactions:,})",
    )
    p.add_argument(
        "--w12-records",
        type=int,
        help=f"W12's consume-transform-produce input, records (default {FULL.w12.records:,})",
    )
    p.add_argument(
        "--stall-seconds",
        type=float,
        default=30.0,
        help="fail a run whose progress stops for this long (default 30)",
    )
    args = p.parse_args(argv)
    args.workloads = [w.strip().upper() for w in args.workloads.split(",") if w.strip()]
    for w in args.workloads:
        if w not in WORKLOADS:
            p.error(f"unknown workload {w!r}: choose from {','.join(WORKLOADS)}")
    if args.clients:
        args.clients = [c.strip() for c in args.clients.split(",") if c.strip()]
        for c in args.clients:
            if c not in ALL_CLIENTS:
                p.error(f"unknown client {c!r}: choose from {','.join(ALL_CLIENTS)}")
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3
    for name in ("w6_records", "w11_records", "w12_transactions", "w12_records"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be positive")
    if args.w10_rates:
        try:
            args.w10_rates = (
                ()
                if args.w10_rates.strip().lower() == "none"
                else tuple(int(r) for r in args.w10_rates.split(","))
            )
        except ValueError:
            p.error(f"--w10-rates: expected rates or 'none', got {args.w10_rates!r}")
        if any(r <= 0 for r in args.w10_rates):
            p.error("--w10-rates: rates must be positive")
    if args.w5_seconds:
        try:
            args.w5_seconds = {
                int(rate): float(seconds)
                for rate, seconds in (pair.split("=") for pair in args.w5_seconds.split(","))
            }
        except ValueError:
            p.error(f"--w5-seconds: expected rate=seconds[,rate=seconds], got {args.w5_seconds!r}")
        if not args.w5_seconds or min(args.w5_seconds) <= 0 or min(args.w5_seconds.values()) <= 0:
            p.error("--w5-seconds: rates and seconds must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    started = time.perf_counter()
    load_before = os.getloadavg()
    state_at_start = machine.ferrokafka_state()
    sizes = QUICK if args.quick else FULL
    if args.w5_seconds:
        sizes = dataclasses.replace(sizes, w5_seconds=args.w5_seconds)
    if args.w6_records:
        sizes = dataclasses.replace(sizes, w6_records=args.w6_records)
    if args.w10_rates is not None:
        sizes = dataclasses.replace(sizes, w10_rates=args.w10_rates)
    if args.w11_records:
        w11 = dataclasses.replace(sizes.w11, records=args.w11_records)
        sizes = dataclasses.replace(sizes, w11=w11)
    if args.w12_transactions:
        sizes = dataclasses.replace(sizes, w12_transactions=args.w12_transactions)
    if args.w12_records:
        w12 = dataclasses.replace(sizes.w12, records=args.w12_records)
        sizes = dataclasses.replace(sizes, w12=w12)
    not_run = dict(NOT_RUN)

    def pick(clients: list[str]) -> list[str]:
        chosen = [
            c
            for c in clients
            if (c not in OPT_IN_CONSUMERS if args.clients is None else c in args.clients)
        ]
        if importlib.util.find_spec("kafkarrow") is None and "kafkarrow" in chosen:
            not_run["kafkarrow"] = "not installed (pip install kafkarrow)"
            chosen.remove("kafkarrow")
        if "confluent-kafka-share" in chosen and not _has_share_consumer():
            not_run["confluent-kafka-share"] = "this confluent-kafka has no `ShareConsumer` (2.16 "
            "has one, experimental)"
            chosen.remove("confluent-kafka-share")
        if importlib.util.find_spec("pyspark") is None and set(chosen) & set(
            SPARK_READERS + STREAM_SOURCES
        ):
            not_run["W8 (Spark)"] = "PySpark is not installed (pip install 'ferrokafka[spark]')"
            chosen = [c for c in chosen if c not in SPARK_READERS + STREAM_SOURCES]
        return chosen

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    needs_java = any(
        c.startswith("java")
        for c in pick(CONSUMERS + PRODUCERS + GROUP_CLIENTS + SHARE_CLIENTS + TXN_CLIENTS)
    )
    with tempfile.TemporaryDirectory(prefix="ferrokafka-bench-java-") as classes:
        java = prepare(Path(classes)) if needs_java else None
        with broker(args.bootstrap) as b:
            ctx = Context(
                bootstrap=b.bootstrap,
                kafka=b.kafka,
                java=java,
                sizes=sizes,
                rounds=args.rounds,
                stall_s=args.stall_seconds,
                max_records=args.max_records,
                broker_gc=b.gc,
            )
            ctx.log(f"broker: {b.description} at {b.bootstrap}")
            prepare_bytecode(ctx.log)
            for w in args.workloads:
                try:
                    run_workload(ctx, w, pick)
                except Exception as exc:  # recorded; the other workloads still run
                    ctx.record(
                        {"workload": w, "case": "setup", "client": "-", "round": 0, "ok": False}
                        | {"error": f"{type(exc).__name__}: {exc}"}
                    )
            description = b.description
    command = "benches/harness.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    result: dict[str, Any] = {
        "command": command.strip(),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "quick": args.quick,
        "rounds": args.rounds,
        "workloads": args.workloads,
        "descriptions": descriptions(sizes),
        "machine": machine.describe(java.version if java else None, description, state_at_start),
        "not_run": not_run,
        "elapsed_s": None,
        "runs": ctx.runs,
    }
    # The machine is shared: the load around the run says how quiet it was.
    result["machine"]["load_average_1_5_15"] = {"start": load_before, "end": os.getloadavg()}
    result["summary"] = report.summary(ctx.runs)
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    js, md = report.write(result, out_dir)
    pngs = charts.draw(result, out_dir)
    print(report.markdown(result))
    failed = [r for r in ctx.runs if not r["ok"] and not r.get("unsupported")]
    ctx.log(
        f"{len(ctx.runs)} runs, {len(failed)} failed, in {result['elapsed_s']:.0f}s; wrote {js}, "
        f"{md} and {len(pngs)} charts in {out_dir}"
    )
    return 1 if failed else 0
