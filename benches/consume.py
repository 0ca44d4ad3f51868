"""Consume throughput from a real local broker: ferrokafka (``getmany`` records and the Arrow
path), aiokafka and confluent-kafka, each in its own process, on the same topic.

W1 of the benchmark harness (``benches/harness.py``, whose code this uses) with its sizes on the
command line: starts a broker with ``ferrokafka.testing`` (or uses ``--bootstrap``), writes the
dataset once (``--records`` records of ``--value-size`` bytes with 10-byte keys over
``--partitions`` partitions, uncompressed unless ``--compression``), then reads it from the
beginning with each client in assign mode. Every run checks what it read (the count, and a
checksum of offsets and value lengths) so a fast wrong client cannot win. Prints a Markdown
table. ``--clients`` takes any consumer of the harness (e.g. kafka-python, java), and the
one-record idioms (ferrokafka-async-for, aiokafka-async-for, confluent-kafka-poll, ...).

    .venv/bin/python benches/consume.py                  # 5M x 100 B, 8 partitions
    .venv/bin/python benches/consume.py --quick          # 200k records, one round
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.broker import broker
from harness.datasets import Dataset
from harness.java import prepare
from harness.runner import prepare_bytecode
from harness.workloads import CONSUMERS, FULL, ONE_RECORD_CONSUMERS, Context, consume_workload

CLIENTS = ["ferrokafka", "ferrokafka-arrow", "aiokafka", "confluent-kafka"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--compression", default="none")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--bootstrap", help="use this broker instead of starting one")
    parser.add_argument(
        "--max-records",
        type=int,
        help="records per poll (getmany max_records; confluent's num_messages, default 10000)",
    )
    parser.add_argument("--quick", action="store_true", help="200k records, one round")
    args = parser.parse_args()
    if args.quick:
        args.records, args.rounds = 200_000, 1
    clients = args.clients.split(",")
    known = CONSUMERS + ONE_RECORD_CONSUMERS
    for c in clients:
        if c not in known:
            parser.error(f"unknown client {c!r}: choose from {','.join(known)}")
    ds = Dataset(args.partitions, args.records, args.value_size, args.compression)
    prepare_bytecode(lambda line: print(line, file=sys.stderr))
    with tempfile.TemporaryDirectory(prefix="ferrokafka-bench-java-") as classes:
        java = prepare(Path(classes)) if any(c.startswith("java") for c in clients) else None
        with broker(args.bootstrap) as b:
            ctx = Context(
                bootstrap=b.bootstrap,
                kafka=b.kafka,
                java=java,
                sizes=FULL,
                rounds=args.rounds,
                stall_s=30.0,
                max_records=args.max_records,
            )
            runs = consume_workload(ctx, "W1", args.compression, ds, clients)
    print_table(args, runs, clients)


def print_table(args: argparse.Namespace, runs: list[dict[str, Any]], clients: list[str]) -> None:
    print(
        f"\n# consume {args.records:,} records x {args.value_size} B, {args.partitions} "
        f"partitions, {args.compression}, max records per poll {args.max_records or 'all'} "
        f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"median of {args.rounds})\n"
    )
    print("| client | records/s | MB/s (values) | wall s | CPU s | peak RSS MB | vs ferrokafka |")
    print("|---|---|---|---|---|---|---|")
    ok = {c: [r for r in runs if r["client"] == c and r["ok"]] for c in clients}
    failures = {c: [r["error"] for r in runs if r["client"] == c and not r["ok"]] for c in clients}
    base = statistics.median(r["wall"] for r in ok[clients[0]]) if ok[clients[0]] else None
    for c in clients:
        if not ok[c]:
            print(f"| {c} | failed every run: {(failures[c] or ['?'])[-1]} | | | | | |")
            continue
        wall = statistics.median(r["wall"] for r in ok[c])
        cpu = statistics.median(r["cpu"] for r in ok[c])
        rss = max(r["rss_mb"] for r in ok[c])
        rate = args.records / wall
        mb = args.records * args.value_size / wall / 1e6
        ratio = f"{base / wall:.2f}x" if base else "n/a"
        print(
            f"| {c} | {rate / 1e6:.2f} M | {mb:.0f} | {wall:.2f} | {cpu:.2f} | {rss:.0f} "
            f"| {ratio} |"
        )
    for c, reasons in failures.items():
        if reasons:
            print(f"\n{c}: {len(reasons)} of {args.rounds} runs failed ({reasons[-1]})")


if __name__ == "__main__":
    main()
