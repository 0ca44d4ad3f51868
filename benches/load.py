"""Load held: many clients on one event loop, one consumer with very many partitions, many groups
rebalancing at once. Each scenario starts its own broker(s) with ``ferrokafka.testing``, runs in
this one process and prints a Markdown table (throughput, latency, memory, times).

    .venv/bin/python benches/load.py                          # every scenario, full sizes
    .venv/bin/python benches/load.py --scenario clients       # 50 consumers + 10 producers
    .venv/bin/python benches/load.py --scenario wide          # one consumer, 10,000 partitions
    .venv/bin/python benches/load.py --scenario groups        # 200 groups at once, 3 nodes
    .venv/bin/python benches/load.py --quick                  # small sizes (the test suite's)

Scenarios:

- ``clients``: 10 topics of 10 partitions; 10 producers (one per topic) send at a fixed total
  rate for ``--seconds``, values carrying their send time; 50 consumers (5 per topic, one group
  per topic, 2 partitions each) read them. Reports records/s consumed, end-to-end latency
  (send call to the poll that returned the record) p50/p99/max, the event loop's lag (how late
  a 10 ms timer fires) p99/max, RSS and CPU.
- ``wide``: 10 topics of 1,000 partitions (10,000) with ``--per-partition`` records each; one
  consumer assigned every partition reads them all. Reports the time to the first record and
  to the last, records/s, RSS growth per partition, and the size of the fetch session.
- ``groups``: on a three-node cluster, ``--groups`` groups of one member join at once, then a
  second member joins each (200 rebalances at once). Reports join and rebalance times
  (p50/p99/max until every member holds a stable assignment) and RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import resource
import struct
import sys
import time
import uuid
from dataclasses import dataclass
from typing import Any

from harness.datasets import Dataset, write_dataset


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def table(title: str, rows: list[tuple[str, str]]) -> str:
    lines = [f"### {title}", "", "| measure | value |", "|---|---:|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


class LoopLag:
    """How late a 10 ms timer fires on the running loop: a blocked or overloaded loop shows."""

    def __init__(self) -> None:
        self.lags_ms: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            self.lags_ms.append((time.perf_counter() - t - 0.01) * 1000)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


# -- clients ------------------------------------------------------------------------------------


@dataclass
class ClientsSizes:
    topics: int = 10
    partitions: int = 10
    producers: int = 10
    consumers_per_topic: int = 5
    rate: int = 20_000
    seconds: float = 30.0


async def clients_scenario(bootstrap: str, kafka: Any, sizes: ClientsSizes) -> str:
    from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer

    run = uuid.uuid4().hex[:6]
    topics = [f"load-clients-{run}-{i}" for i in range(sizes.topics)]
    for t in topics:
        await kafka.acreate_topic(t, partitions=sizes.partitions)
    rss0, cpu0 = rss_mb(), cpu_s()
    producers = [AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5) for _ in topics]
    consumers = [
        AIOKafkaConsumer(
            t,
            bootstrap_servers=bootstrap,
            group_id=f"load-{t}",
            auto_offset_reset="earliest",
        )
        for t in topics
        for _ in range(sizes.consumers_per_topic)
    ]
    await asyncio.gather(*(p.start() for p in producers))
    await asyncio.gather(*(c.start() for c in consumers))
    lag = LoopLag()
    lag.start()
    total = int(sizes.rate * sizes.seconds)
    latencies: list[float] = []
    consumed = 0
    stop = asyncio.Event()
    done = asyncio.Event()

    async def consume(consumer: AIOKafkaConsumer) -> None:
        nonlocal consumed
        while not stop.is_set():
            batch = await consumer.getmany(timeout_ms=200)
            now = time.time()
            for records in batch.values():
                for r in records:
                    latencies.append(now - struct.unpack(">d", r.value[:8])[0])
                consumed += len(records)
            if consumed >= total:
                done.set()

    async def produce(index: int, producer: AIOKafkaProducer) -> None:
        per_producer = total // len(producers)
        interval = len(producers) / sizes.rate
        began = time.perf_counter()
        for i in range(per_producer):
            due = began + i * interval
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            value = struct.pack(">d", time.time()) + b"x" * 92
            await producer.send(topics[index], value, partition=i % sizes.partitions)
        await producer.flush()

    readers = [asyncio.create_task(consume(c)) for c in consumers]
    began = time.perf_counter()
    await asyncio.gather(*(produce(i, p) for i, p in enumerate(producers)))
    # Consumed all, or stalled for a minute: the readers set ``done``.
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(done.wait(), 60)
    elapsed = time.perf_counter() - began
    stop.set()
    await asyncio.gather(*readers)
    await lag.stop()
    rss1, cpu1 = rss_mb(), cpu_s()
    await asyncio.gather(*(c.stop() for c in consumers))
    await asyncio.gather(*(p.stop() for p in producers))
    for t in topics:
        await kafka.adelete_topic(t)
    lat_ms = [x * 1000 for x in latencies]
    return table(
        f"clients: {len(consumers)} consumers + {len(producers)} producers on one event loop, "
        f"{sizes.rate:,} records/s for {sizes.seconds:g} s ({sizes.topics} topics x "
        f"{sizes.partitions} partitions, 100-byte values)",
        [
            ("records produced", f"{total:,}"),
            ("records consumed", f"{consumed:,}"),
            ("consumed, records/s", f"{consumed / elapsed:,.0f}"),
            (
                "end-to-end latency p50 / p99 / max, ms",
                "{:.1f} / {:.1f} / {:.1f}".format(
                    pct(lat_ms, 0.5), pct(lat_ms, 0.99), max(lat_ms, default=float("nan"))
                ),
            ),
            (
                "event loop lag p99 / max, ms",
                "{:.1f} / {:.1f}".format(
                    pct(lag.lags_ms, 0.99), max(lag.lags_ms, default=float("nan"))
                ),
            ),
            ("RSS before clients / at the end, MB", f"{rss0:.0f} / {rss1:.0f}"),
            ("CPU seconds (this process)", f"{cpu1 - cpu0:.1f}"),
        ],
    ) + ("" if consumed == total else f"\n\nINCOMPLETE: {consumed} of {total} consumed")


# -- wide ---------------------------------------------------------------------------------------


async def wide_scenario(bootstrap: str, kafka: Any, topics: int, partitions: int, per: int) -> str:
    from ferrokafka import AIOKafkaConsumer, TopicPartition

    run = uuid.uuid4().hex[:6]
    names = [f"load-wide-{run}-{i}" for i in range(topics)]
    t = time.perf_counter()
    for name in names:
        await kafka.acreate_topic(name, partitions=partitions)
    created_s = time.perf_counter() - t
    ds = Dataset(partitions, partitions * per, 100)
    for name in names:
        await write_dataset(bootstrap, name, ds)
    total = topics * partitions * per
    gc.collect()
    rss0, cpu0 = rss_mb(), cpu_s()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    began = time.perf_counter()
    await consumer.start()
    consumer.assign([TopicPartition(n, p) for n in names for p in range(partitions)])
    first: float | None = None
    consumed = 0
    deadline = began + 600
    while consumed < total and time.perf_counter() < deadline:
        batch = await consumer.getmany(timeout_ms=1000)
        n = sum(len(v) for v in batch.values())
        if n and first is None:
            first = time.perf_counter() - began
        consumed += n
    elapsed = time.perf_counter() - began
    rss1, cpu1 = rss_mb(), cpu_s()
    session = {node: peer.session.size for node, peer in consumer._fetcher._nodes.items()}
    await consumer.stop()
    for name in names:
        await kafka.adelete_topic(name)
    count = topics * partitions
    return table(
        f"wide: one consumer assigned {count:,} partitions ({topics} topics x {partitions}), "
        f"{per} records of 100 B each",
        [
            ("topics created in, s", f"{created_s:.1f}"),
            ("records consumed", f"{consumed:,} of {total:,}"),
            ("first record after start(), s", f"{first or float('nan'):.2f}"),
            ("all records after start(), s", f"{elapsed:.2f}"),
            ("records/s", f"{consumed / elapsed:,.0f}"),
            (
                "RSS growth, MB (per partition, KB)",
                f"{rss1 - rss0:.0f} ({(rss1 - rss0) * 1024 / count:.1f})",
            ),
            ("CPU seconds", f"{cpu1 - cpu0:.1f}"),
            (
                "partitions in the fetch session per node",
                ", ".join(f"{k}: {v}" for k, v in session.items()),
            ),
        ],
    ) + ("" if consumed == total else f"\n\nINCOMPLETE: {consumed} of {total} consumed")


# -- groups -------------------------------------------------------------------------------------


async def groups_scenario(bootstrap: str, kafka: Any, groups: int) -> str:
    from ferrokafka import AIOKafkaConsumer

    run = uuid.uuid4().hex[:6]
    topic = f"load-groups-{run}"
    await kafka.acreate_topic(topic, partitions=4)
    rss0 = rss_mb()

    def member(group: int) -> AIOKafkaConsumer:
        return AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"load-{run}-{group}")

    async def timed_start(consumer: AIOKafkaConsumer) -> float:
        t = time.perf_counter()
        await consumer.start()  # returns once the member has its first assignment
        return time.perf_counter() - t

    firsts = [member(g) for g in range(groups)]
    join = await asyncio.gather(*(timed_start(c) for c in firsts))
    # A second member in every group at once: every group rebalances.
    seconds = [member(g) for g in range(groups)]
    began = time.perf_counter()
    await asyncio.gather(*(timed_start(c) for c in seconds))
    settle: list[float] = []
    deadline = began + 300
    pending = set(range(groups))
    while pending and time.perf_counter() < deadline:
        for g in list(pending):
            a, b = firsts[g].assignment(), seconds[g].assignment()
            if len(a) == 2 and len(b) == 2 and not a & b:
                settle.append(time.perf_counter() - began)
                pending.discard(g)
        await asyncio.sleep(0.05)
    rss1 = rss_mb()
    await asyncio.gather(*(c.stop() for c in firsts + seconds))
    await kafka.adelete_topic(topic)
    return table(
        f"groups: {groups} groups join at once, then a second member joins each "
        "(classic protocol, 3-node cluster, a 4-partition topic)",
        [
            (
                "first member's join, p50 / p99 / max, s",
                f"{pct(join, 0.5):.2f} / {pct(join, 0.99):.2f} / {max(join):.2f}",
            ),
            ("groups balanced after the second joins", f"{len(settle)} of {groups}"),
            (
                "rebalance settled, p50 / p99 / max, s",
                "{:.2f} / {:.2f} / {:.2f}".format(
                    pct(settle, 0.5), pct(settle, 0.99), max(settle, default=float("nan"))
                ),
            ),
            ("RSS before / with the members, MB", f"{rss0:.0f} / {rss1:.0f}"),
        ],
    ) + ("" if not pending else f"\n\nUNSETTLED: {len(pending)} groups")


# -- driver -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benches/load.py", description=__doc__.split("\n")[0])
    p.add_argument("--scenario", choices=["clients", "wide", "groups", "all"], default="all")
    p.add_argument("--quick", action="store_true", help="small sizes (seconds, not minutes)")
    p.add_argument("--seconds", type=float, help="clients: how long to produce (default 30)")
    p.add_argument("--rate", type=int, help="clients: records/s in all (default 20,000)")
    p.add_argument("--partitions", type=int, help="wide: partitions per topic (default 1,000)")
    p.add_argument("--per-partition", type=int, help="wide: records per partition (default 10)")
    p.add_argument("--groups", type=int, help="groups: how many (default 200)")
    args = p.parse_args(argv)
    quick = args.quick
    clients = ClientsSizes(
        rate=args.rate or (2_000 if quick else 20_000),
        seconds=args.seconds or (3.0 if quick else 30.0),
    )
    wide_partitions = args.partitions or (50 if quick else 1000)
    per = args.per_partition or (5 if quick else 10)
    groups = args.groups or (10 if quick else 200)
    out: list[str] = [
        f"command: benches/load.py {' '.join(sys.argv[1:] if argv is None else argv)}"
    ]

    from ferrokafka.testing import KafkaBroker, KafkaCluster

    if args.scenario in ("clients", "wide", "all"):
        broker = KafkaBroker(heap_mb=2048)
        broker.start()
        try:
            out.append(f"broker: Apache Kafka {broker.version}, one node (ferrokafka.testing)")
            if args.scenario in ("clients", "all"):
                out.append(asyncio.run(clients_scenario(broker.bootstrap_servers, broker, clients)))
            if args.scenario in ("wide", "all"):
                out.append(
                    asyncio.run(
                        wide_scenario(broker.bootstrap_servers, broker, 10, wide_partitions, per)
                    )
                )
        finally:
            broker.stop()
    if args.scenario in ("groups", "all"):
        cluster = KafkaCluster(3, heap_mb=1024)
        cluster.start()
        try:
            out.append(asyncio.run(groups_scenario(cluster.bootstrap_servers, cluster, groups)))
        finally:
            cluster.stop()
    text = "\n\n".join(out)
    print(text)
    return 1 if ("INCOMPLETE" in text or "UNSETTLED" in text) else 0


if __name__ == "__main__":
    sys.exit(main())
