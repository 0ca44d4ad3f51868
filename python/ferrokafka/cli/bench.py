"""``ferrokafka bench``: a produce-then-consume throughput run against any cluster (a fresh topic
by default, deleted after), reading back with ``getmany`` and, when pyarrow is installed,
``getmany_arrow``; and ``ferrokafka bench harness ...``, which runs the comparison harness
(``benches/harness.py``) of a source checkout."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from ..admin import AIOKafkaAdminClient, NewTopic
from ..consumer import AIOKafkaConsumer
from ..producer import AIOKafkaProducer
from ..structs import TopicPartition
from .errors import CliError
from .options import client_options, connection_parent
from .output import Output, human_bytes
from .parsing import positive
from .subcommands import Subcommands

__all__ = ["add_bench_command", "harness_path", "run_harness"]

_IN_FLIGHT = 20_000
# A throughput run: the producer fills large batches unless -X options say otherwise.
_PRODUCER_DEFAULTS = {"linger_ms": 5, "max_batch_size": 1 << 20}


def harness_path() -> Path:
    """``benches/harness.py`` of the source checkout this package runs from."""
    return Path(__file__).resolve().parents[3] / "benches" / "harness.py"


def run_harness(rest: list[str]) -> int:
    """Run the harness with ``rest`` as its arguments; its exit code."""
    path = harness_path()
    if not path.is_file():
        raise CliError(
            f"bench harness: no {path}; the harness lives in a source checkout of ferrokafka "
            "(benches/), not in an installed wheel"
        )
    return subprocess.call([sys.executable, str(path), *rest], cwd=path.parent)


def add_bench_command(subcommands: Subcommands) -> None:
    bench = subcommands.add_parser(
        "bench",
        parents=[connection_parent()],
        help="produce then consume N records and print the throughput",
        description="Produce --records records to a topic, then read them back with getmany "
        "(and getmany_arrow when pyarrow is installed); print records/s and MB/s of each. "
        "'ferrokafka bench harness [ARGS]' runs benches/harness.py of a source checkout.",
    )
    bench.add_argument("--records", type=positive, default=100_000, help="default 100000")
    bench.add_argument("--record-size", type=positive, default=100, help="value bytes; 100")
    bench.add_argument(
        "--topic", help="default: a fresh topic, deleted afterwards (an existing topic is kept)"
    )
    bench.add_argument("--partitions", type=positive, default=4, help="of a fresh topic; 4")
    bench.add_argument("--format", choices=("table", "json"), default="table")
    bench.set_defaults(handler=_run)
    actions = bench.add_subparsers(metavar="[harness]")
    harness = actions.add_parser(
        "harness",
        help="run benches/harness.py (source checkout only) with the remaining arguments",
        add_help=False,
    )
    harness.add_argument("rest", nargs=argparse.REMAINDER, help="the harness's own arguments")
    harness.set_defaults(handler=lambda args: run_harness(list(args.rest)))


def _run(args: argparse.Namespace) -> int:
    return asyncio.run(_bench(args, Output()))


async def _bench(args: argparse.Namespace, out: Output) -> int:
    topic = args.topic or f"ferrokafka-bench-{uuid.uuid4().hex[:12]}"
    admin = AIOKafkaAdminClient(**client_options(args, AIOKafkaAdminClient))
    await admin.start()
    try:
        if args.topic is None:
            response = await admin.create_topics([NewTopic(topic, args.partitions, -1)])
            code = response["topics"][0]["error_code"]
            if code:
                raise CliError(f"could not create topic {topic!r} (error code {code})")
            await admin.wait_for_topic(topic, partitions=args.partitions, timeout=30)
        results = [await _produce(args, topic, out)]
        results.append(await _consume(args, topic, "getmany", out))
        if importlib.util.find_spec("pyarrow") is None:
            out.note("pyarrow is not installed: getmany_arrow not measured")
        else:
            results.append(await _consume(args, topic, "getmany_arrow", out))
    finally:
        try:
            if args.topic is None:
                await admin.delete_topics([topic])
        finally:
            await admin.close()
    columns = ["phase", "records", "bytes", "seconds", "records_per_s", "mb_per_s"]
    out.rows(
        columns if args.format == "json" else [c.upper() for c in columns], results, args.format
    )
    return 0


def _row(phase: str, records: int, size: int, seconds: float) -> list[Any]:
    return [
        phase,
        records,
        size,
        round(seconds, 3),
        round(records / seconds),
        round(size / seconds / 1e6, 1),
    ]


async def _produce(args: argparse.Namespace, topic: str, out: Output) -> list[Any]:
    options = {**_PRODUCER_DEFAULTS, **client_options(args, AIOKafkaProducer)}
    producer = AIOKafkaProducer(**options)
    await producer.start()
    value = os.urandom(args.record_size)
    try:
        began = time.perf_counter()
        with out.progress("produce", args.records) as meter:
            pending = []
            for i in range(args.records):
                pending.append(await producer.send(topic, value=value, key=b"%d" % i))
                if len(pending) >= _IN_FLIGHT:
                    await asyncio.gather(*pending)
                    meter.add(len(pending), len(pending) * args.record_size)
                    pending.clear()
            await producer.flush()
            await asyncio.gather(*pending)
        seconds = time.perf_counter() - began
    finally:
        await producer.stop()
    return _row("produce", args.records, args.records * args.record_size, seconds)


async def _consume(args: argparse.Namespace, topic: str, how: str, out: Output) -> list[Any]:
    if how == "getmany_arrow":
        importlib.import_module("pyarrow")  # its import is not part of the reading
    options = client_options(args, AIOKafkaConsumer)
    options["auto_offset_reset"] = "earliest"
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(**options)
    await consumer.start()
    try:
        await consumer.topics()
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or []]
        ends = await consumer.end_offsets(partitions)
        starts = await consumer.beginning_offsets(partitions)
        wanted = sum(ends[tp] - starts[tp] for tp in partitions)
        records = size = 0
        # From the assignment on: the consumer starts fetching as soon as it has partitions.
        began = time.perf_counter()
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        with out.progress(how, wanted) as meter:
            while records < wanted:
                if how == "getmany":
                    batch = await consumer.getmany(timeout_ms=1000)
                    for rows in batch.values():
                        records += len(rows)
                        size += sum(len(r.value or b"") for r in rows)
                else:
                    arrow = await consumer.getmany_arrow(timeout_ms=1000)
                    for table in arrow.values():
                        records += table.num_rows
                        size += table.column("value").nbytes
                meter.records, meter.bytes = records, size
        seconds = time.perf_counter() - began
    finally:
        await consumer.stop()
    out.note(f"{how}: {records:,} records, {human_bytes(size)}")
    return _row(how, records, size, seconds)
