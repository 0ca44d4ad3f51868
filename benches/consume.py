"""Consume throughput from a real local broker: ferrokafka (``getmany`` records and the Arrow
path), aiokafka and confluent-kafka, each in its own process, on the same topic.

Starts a broker with ``ferrokafka.testing`` (or uses ``--bootstrap``), writes the dataset once
(``--records`` records of ``--value-size`` bytes with 10-byte keys over ``--partitions``
partitions, uncompressed unless ``--compression``), then reads it from the beginning with each
client in assign mode. Every run checks what it read (the count, and a checksum of offsets and
value lengths) so a fast wrong client cannot win. Prints a Markdown table.

    .venv/bin/python benches/consume.py                  # 5M x 100 B, 8 partitions
    .venv/bin/python benches/consume.py --quick          # 200k records, one round
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

CLIENTS = ["ferrokafka", "ferrokafka-arrow", "aiokafka", "confluent-kafka"]
TOPIC = "bench-consume"


# -- writing the dataset -------------------------------------------------------------------


async def write_dataset(
    bootstrap: str, topic: str, partitions: int, records: int, value_size: int, codec: str
) -> None:
    from ferrokafka.client import AIOKafkaClient
    from ferrokafka.protocol import ApiKey
    from ferrokafka.records import encode_batch
    from ferrokafka.structs import TopicPartition

    per_batch = max(1, (512 * 1024) // (value_size + 30))
    # Current timestamps: older ones fall to time-based retention in the middle of a run.
    now_ms = int(time.time() * 1000)
    value = (b"0123456789abcdef" * (value_size // 16 + 1))[:value_size]
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(topic)
        await client.refresh_metadata()
        per_partition = records // partitions
        pending: set[asyncio.Future[Any]] = set()
        for p in range(partitions):
            leader = client.cluster.leader_for_partition(TopicPartition(topic, p))
            assert leader is not None and leader >= 0
            conn = await client.ready(leader)
            count = per_partition + (1 if p < records % partitions else 0)
            for start in range(0, count, per_batch):
                n = min(per_batch, count - start)
                batch = encode_batch(
                    [(now_ms + start + i, b"key-%06d" % (start + i), value, []) for i in range(n)],
                    compression=codec,
                )
                body = {
                    "transactional_id": None,
                    "acks": 1,
                    "timeout_ms": 30000,
                    "topic_data": [
                        {"name": topic, "partition_data": [{"index": p, "records": batch}]}
                    ],
                }
                pending.add(asyncio.ensure_future(conn.send(ApiKey.PRODUCE, body, version=12)))
                if len(pending) >= 16:
                    done, pending = await asyncio.wait(pending, return_when="FIRST_COMPLETED")
                    for d in done:
                        _check_produce(d.result())
        for d in await asyncio.gather(*pending):
            _check_produce(d)


def _check_produce(response: dict[str, Any]) -> None:
    for t in response["responses"]:
        for p in t["partition_responses"]:
            if p["error_code"]:
                raise RuntimeError(f"produce failed: error {p['error_code']}")


# -- the clients (each run in a child process) -----------------------------------------------


STALL_SECONDS = 30.0


class Tally:
    def __init__(self) -> None:
        self.count = 0
        self.bytes = 0
        self.checksum = 0
        self._seen = 0
        self._since = time.monotonic()

    def check_progress(self) -> None:
        """Fail a run that received nothing for STALL_SECONDS (reported, not waited for)."""
        now = time.monotonic()
        if self.count != self._seen:
            self._seen, self._since = self.count, now
        elif now - self._since > STALL_SECONDS:
            raise RuntimeError(f"stalled: nothing for {STALL_SECONDS:.0f}s after {self.count:,}")

    def add_records(self, records: list[Any]) -> None:
        """The same light per-record work for every client that returns record objects."""
        offsets = 0
        nbytes = 0
        for r in records:
            offsets += r.offset
            nbytes += len(r.value)
        self.count += len(records)
        self.bytes += nbytes
        self.checksum = (self.checksum + offsets * 31 + nbytes) & 0xFFFFFFFFFFFF


async def run_ferrokafka(
    bootstrap: str, topic: str, partitions: int, total: int, arrow: bool, max_records: int | None
) -> Tally:
    from ferrokafka import AIOKafkaConsumer, TopicPartition

    tally = Tally()
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    ) as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        while tally.count < total:
            tally.check_progress()
            if arrow:
                import pyarrow.compute as pc

                got = await consumer.getmany_arrow(timeout_ms=1000, max_records=max_records)
                for batch in got.values():
                    offsets = batch.column(4)
                    lengths = pc.binary_length(batch.column(1))
                    n = batch.num_rows
                    tally.count += n
                    tally.bytes += pc.sum(lengths).as_py() or 0
                    tally.checksum = (
                        tally.checksum
                        + (pc.sum(offsets).as_py() or 0) * 31
                        + (pc.sum(lengths).as_py() or 0)
                    ) & 0xFFFFFFFFFFFF
            else:
                for records in (
                    await consumer.getmany(timeout_ms=1000, max_records=max_records)
                ).values():
                    tally.add_records(records)
    return tally


async def run_aiokafka(
    bootstrap: str, topic: str, partitions: int, total: int, max_records: int | None
) -> Tally:
    from aiokafka import AIOKafkaConsumer, TopicPartition

    tally = Tally()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        while tally.count < total:
            tally.check_progress()
            got = await consumer.getmany(timeout_ms=1000, max_records=max_records)
            for records in got.values():
                tally.add_records(records)
    finally:
        await consumer.stop()
    return tally


def run_confluent(
    bootstrap: str, topic: str, partitions: int, total: int, max_records: int | None
) -> Tally:
    import confluent_kafka

    tally = Tally()
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-unused",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            # librdkafka pauses a partition's fetches for fetch.queue.backoff.ms (1 s by
            # default) whenever its local queue is full: with a consumer that keeps up that
            # only adds idle time, so it is turned down here (documented in the table).
            "fetch.queue.backoff.ms": 1,
        }
    )
    try:
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in range(partitions)
            ]
        )
        while tally.count < total:
            tally.check_progress()
            messages = consumer.consume(num_messages=max_records or 10000, timeout=1.0)
            offsets = 0
            nbytes = 0
            for msg in messages:
                if msg.error():
                    raise RuntimeError(str(msg.error()))
                offsets += msg.offset()
                nbytes += len(msg.value())
            tally.count += len(messages)
            tally.bytes += nbytes
            tally.checksum = (tally.checksum + offsets * 31 + nbytes) & 0xFFFFFFFFFFFF
    finally:
        consumer.close()
    return tally


def child(args: argparse.Namespace) -> None:
    limit = args.max_records
    start_cpu = time.process_time()
    start = time.perf_counter()
    if args.client == "confluent-kafka":
        tally = run_confluent(args.bootstrap, args.topic, args.partitions, args.records, limit)
    elif args.client == "aiokafka":
        tally = asyncio.run(
            run_aiokafka(args.bootstrap, args.topic, args.partitions, args.records, limit)
        )
    else:
        arrow = args.client == "ferrokafka-arrow"
        tally = asyncio.run(
            run_ferrokafka(args.bootstrap, args.topic, args.partitions, args.records, arrow, limit)
        )
    wall = time.perf_counter() - start
    print(
        json.dumps(
            {
                "client": args.client,
                "wall": wall,
                "cpu": time.process_time() - start_cpu,
                "count": tally.count,
                "bytes": tally.bytes,
                "checksum": tally.checksum,
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def expected_checksum(partitions: int, records: int, value_size: int) -> int:
    total = 0
    for p in range(partitions):
        n = records // partitions + (1 if p < records % partitions else 0)
        total += 31 * (n * (n - 1) // 2) + n * value_size
    return total & 0xFFFFFFFFFFFF


# -- the parent --------------------------------------------------------------------------------


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
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--topic", default=TOPIC, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        child(args)
        return
    if args.quick:
        args.records, args.rounds = 200_000, 1
    clients = args.clients.split(",")

    broker = None
    bootstrap = args.bootstrap
    if bootstrap is None:
        from ferrokafka.testing import KafkaBroker

        broker = KafkaBroker(heap_mb=2048)
        broker.start()
        bootstrap = broker.bootstrap_servers
    try:
        topic = f"{TOPIC}-{os.getpid()}"
        if broker is not None:
            broker.create_topic(topic, partitions=args.partitions)
        else:
            from ferrokafka.testing import ExternalKafka

            ExternalKafka(bootstrap).start().create_topic(topic, partitions=args.partitions)
        t = time.perf_counter()
        asyncio.run(
            write_dataset(
                bootstrap, topic, args.partitions, args.records, args.value_size, args.compression
            )
        )
        print(
            f"wrote {args.records:,} records of {args.value_size} B to {args.partitions} "
            f"partitions ({args.compression}) in {time.perf_counter() - t:.1f}s",
            file=sys.stderr,
        )
        want = expected_checksum(args.partitions, args.records, args.value_size)
        results: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
        failures: dict[str, list[str]] = {}
        for rnd in range(args.rounds):
            for client in clients:  # alternating: A B C D A B C D ...
                cmd = [sys.executable, __file__, "--client", client, "--bootstrap", bootstrap]
                cmd += ["--topic", topic, "--partitions", str(args.partitions)]
                cmd += ["--records", str(args.records)]
                if args.max_records:
                    cmd += ["--max-records", str(args.max_records)]
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
                if out.returncode != 0:
                    reason = (out.stderr.strip().splitlines() or ["no output"])[-1]
                    failures.setdefault(client, []).append(reason)
                    print(f"round {rnd + 1} {client}: FAILED: {reason}", file=sys.stderr)
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                ok = r["count"] == args.records and r["checksum"] == want
                if not ok:
                    raise RuntimeError(f"{client} read wrong data: {r} (checksum {want})")
                results[client].append(r)
                print(
                    f"round {rnd + 1} {client}: {args.records / r['wall'] / 1e6:.2f} M rec/s "
                    f"in {r['wall']:.2f}s, cpu {r['cpu']:.2f}s, rss {r['rss_mb']:.0f} MB",
                    file=sys.stderr,
                )
        print_table(args, results, clients, failures)
    finally:
        if broker is not None:
            broker.stop()


def print_table(
    args: argparse.Namespace,
    results: dict[str, list[dict[str, Any]]],
    clients: list[str],
    failures: dict[str, list[str]],
) -> None:
    print(
        f"\n# consume {args.records:,} records x {args.value_size} B, {args.partitions} "
        f"partitions, {args.compression}, max records per poll {args.max_records or 'all'} "
        f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"median of {args.rounds})\n"
    )
    print("| client | records/s | MB/s (values) | wall s | CPU s | peak RSS MB | vs ferrokafka |")
    print("|---|---|---|---|---|---|---|")
    base = statistics.median(r["wall"] for r in results[clients[0]])
    for c in clients:
        if not results[c]:
            print(f"| {c} | failed every run: {failures.get(c, ['?'])[-1]} | | | | | |")
            continue
        wall = statistics.median(r["wall"] for r in results[c])
        cpu = statistics.median(r["cpu"] for r in results[c])
        rss = max(r["rss_mb"] for r in results[c])
        rate = args.records / wall
        mb = args.records * args.value_size / wall / 1e6
        print(
            f"| {c} | {rate / 1e6:.2f} M | {mb:.0f} | {wall:.2f} | {cpu:.2f} | {rss:.0f} "
            f"| {base / wall:.2f}x |"
        )
    for c, reasons in failures.items():
        print(f"\n{c}: {len(reasons)} of {args.rounds} runs failed ({reasons[-1]})")


if __name__ == "__main__":
    main()
