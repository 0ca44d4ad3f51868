"""Kafka into a Polars DataFrame and a DuckDB aggregate: ``ferrokafka.arrow.read`` beside
confluent-kafka's consumer building the same frame, each in its own process, same broker, same
data, one run.

Starts a broker with ``ferrokafka.testing`` (or uses ``--bootstrap``), writes ``--records``
records of ``--value-size`` bytes with 10-byte keys over ``--partitions`` partitions once, then
runs every idiom ``--rounds`` times, alternating. Each idiom reads the whole topic into a
frame (key, value, topic, partition, offset, timestamp) and computes records and value bytes per
partition; the result is checked against what was written, so a fast wrong reader cannot win.
The time runs from the idiom's first call to the aggregate in hand (connecting included).

Idioms:

- ``ferrokafka read → polars``: ``pl.from_arrow(ferrokafka.arrow.read(...))``, then
  ``group_by``;
- ``ferrokafka read → duckdb``: the reader registered in DuckDB, one SQL aggregate over it;
- ``ferrokafka getmany_arrow → polars``: the asyncio consumer's Arrow batches in a loop,
  ``pl.from_arrow`` of the table they make (what ``read`` does for you);
- ``confluent consume → polars``: ``Consumer.consume(num_messages=10000)`` in a loop, the
  messages' fields appended to lists, ``pl.DataFrame`` of them, then ``group_by``;
- ``confluent consume → duckdb``: the same lists as a ``pyarrow.Table`` registered in DuckDB.

    .venv/bin/python benches/arrow_read.py                 # 5M x 100 B, 8 partitions, 3 rounds
    .venv/bin/python benches/arrow_read.py --quick         # 200k records, one round
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
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

IDIOMS = {
    "ferrokafka read → polars": "ferrokafka-polars",
    "ferrokafka read → duckdb": "ferrokafka-duckdb",
    "ferrokafka getmany_arrow → polars": "ferrokafka-getmany-polars",
    "confluent consume → polars": "confluent-polars",
    "confluent consume → duckdb": "confluent-duckdb",
}
#: What each "vs" column compares with.
PEERS = {
    "ferrokafka read → polars": "confluent consume → polars",
    "ferrokafka read → duckdb": "confluent consume → duckdb",
    "ferrokafka getmany_arrow → polars": "confluent consume → polars",
}

DUCKDB_QUERY = (
    "select partition, count(*), sum(octet_length(value)) from records "
    "group by partition order by partition"
)


# -- the child: one idiom, one read --------------------------------------------------------------


def _polars_aggregate(frame: Any) -> list[tuple[int, int, int]]:
    import polars as pl

    agg = (
        frame.group_by("partition")
        .agg(pl.len(), pl.col("value").bin.size().cast(pl.UInt64).sum())
        .sort("partition")
    )
    return [tuple(int(v) for v in row) for row in agg.iter_rows()]


def _duckdb_aggregate(source: Any) -> list[tuple[int, int, int]]:
    import duckdb

    con = duckdb.connect()
    con.register("records", source)
    return [tuple(int(v) for v in row) for row in con.sql(DUCKDB_QUERY).fetchall()]


def _ferrokafka(bootstrap: str, topic: str, engine: str) -> list[tuple[int, int, int]]:
    import ferrokafka.arrow

    reader = ferrokafka.arrow.read(bootstrap, topic)
    if engine == "duckdb":
        return _duckdb_aggregate(reader)
    import polars as pl

    return _polars_aggregate(pl.from_arrow(reader, rechunk=False))


def _ferrokafka_getmany(bootstrap: str, topic: str) -> list[tuple[int, int, int]]:
    import polars as pl
    import pyarrow as pa
    from ferrokafka import AIOKafkaConsumer, TopicPartition

    async def read() -> Any:
        consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
        )
        async with consumer:
            tps = [TopicPartition(topic, p) for p in sorted(await _partitions(consumer, topic))]
            consumer.assign(tps)
            end = await consumer.end_offsets(tps)
            pending = {tp for tp in tps if end[tp] > 0}
            batches = []
            while pending:
                got = await consumer.getmany_arrow(*pending, timeout_ms=1000, max_records=65536)
                batches.extend(got.values())
                for tp in list(pending):
                    if await consumer.position(tp) >= end[tp]:
                        pending.discard(tp)
            return pa.Table.from_batches(batches)

    return _polars_aggregate(pl.from_arrow(asyncio.run(read()), rechunk=False))


async def _partitions(consumer: Any, topic: str) -> set[int]:
    await consumer.topics()
    found = consumer.partitions_for_topic(topic)
    assert found, f"no partitions for {topic}"
    return set(found)


def _confluent(bootstrap: str, topic: str, engine: str) -> list[tuple[int, int, int]]:
    import confluent_kafka
    from harness.consumers import confluent_config

    consumer = confluent_kafka.Consumer(confluent_config(bootstrap))
    try:
        meta = consumer.list_topics(topic, timeout=30)
        parts = sorted(meta.topics[topic].partitions)
        ends = {
            p: consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p))[1]
            for p in parts
        }
        consumer.assign(
            [
                confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
                for p in parts
            ]
        )
        keys: list[bytes | None] = []
        values: list[bytes | None] = []
        partitions: list[int] = []
        offsets: list[int] = []
        stamps: list[int] = []
        left = sum(ends.values())
        while left > 0:
            for m in consumer.consume(num_messages=10000, timeout=1.0):
                if m.error():
                    raise RuntimeError(str(m.error()))
                keys.append(m.key())
                values.append(m.value())
                partitions.append(m.partition())
                offsets.append(m.offset())
                stamps.append(m.timestamp()[1])
                left -= 1
    finally:
        consumer.close()
    columns = {
        "key": keys,
        "value": values,
        "topic": [topic] * len(offsets),
        "partition": partitions,
        "offset": offsets,
        "timestamp": stamps,
    }
    if engine == "duckdb":
        import pyarrow as pa

        table = pa.table(
            {
                **columns,
                "key": pa.array(keys, pa.binary()),
                "value": pa.array(values, pa.binary()),
                "partition": pa.array(partitions, pa.int32()),
                "timestamp": pa.array(stamps, pa.timestamp("ms", tz="UTC")),
            }
        )
        return _duckdb_aggregate(table)
    import polars as pl

    frame = pl.DataFrame(
        {**columns, "timestamp": pl.Series(stamps).cast(pl.Datetime("ms", "UTC"))},
        schema_overrides={"key": pl.Binary, "value": pl.Binary, "partition": pl.Int32},
    )
    return _polars_aggregate(frame)


def child(idiom: str, bootstrap: str, topic: str) -> None:
    # Imported before the clock starts: the time is the read's, not the imports'.
    import duckdb  # noqa: F401
    import ferrokafka.arrow  # noqa: F401
    import polars  # noqa: F401
    import pyarrow  # noqa: F401

    if idiom.startswith("confluent"):
        import confluent_kafka  # noqa: F401
    start = time.perf_counter()
    cpu = time.process_time()
    if idiom == "ferrokafka-polars":
        result = _ferrokafka(bootstrap, topic, "polars")
    elif idiom == "ferrokafka-duckdb":
        result = _ferrokafka(bootstrap, topic, "duckdb")
    elif idiom == "ferrokafka-getmany-polars":
        result = _ferrokafka_getmany(bootstrap, topic)
    elif idiom == "confluent-polars":
        result = _confluent(bootstrap, topic, "polars")
    elif idiom == "confluent-duckdb":
        result = _confluent(bootstrap, topic, "duckdb")
    else:
        raise SystemExit(f"unknown idiom {idiom}")
    wall = time.perf_counter() - start
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": time.process_time() - cpu,
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "result": result,
            }
        )
    )


# -- the parent: the data, the rounds, the table --------------------------------------------------


def run_once(idiom: str, bootstrap: str, topic: str, want: list[list[int]]) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            IDIOMS[idiom],
            "--bootstrap",
            bootstrap,
            "--topic",
            topic,
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        return {"idiom": idiom, "ok": False, "error": done.stderr.strip().splitlines()[-1:]}
    run = json.loads(done.stdout.strip().splitlines()[-1])
    if run["result"] != want:
        return {"idiom": idiom, "ok": False, "error": f"wrong result {run['result']}"}
    return {"idiom": idiom, "ok": True, **run}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idioms", default=",".join(IDIOMS), help="comma-separated")
    parser.add_argument("--bootstrap", help="use this broker instead of starting one")
    parser.add_argument("--quick", action="store_true", help="200k records, one round")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.bootstrap, args.topic)
        return
    if args.quick:
        args.records, args.rounds = 200_000, 1
    idioms = args.idioms.split(",")
    for idiom in idioms:
        if idiom not in IDIOMS:
            parser.error(f"unknown idiom {idiom!r}: choose from {', '.join(IDIOMS)}")

    from harness.broker import broker
    from harness.datasets import Dataset, write_dataset

    ds = Dataset(args.partitions, args.records, args.value_size)
    want = [[p, n, n * args.value_size] for p, n in enumerate(ds.counts())]
    runs = []
    with broker(args.bootstrap) as b:
        topic = f"bench-arrow-read-{os.getpid()}"
        b.kafka.create_topic(topic, partitions=ds.partitions)
        try:
            began = time.perf_counter()
            asyncio.run(write_dataset(b.bootstrap, topic, ds))
            print(f"wrote {ds.describe()} in {time.perf_counter() - began:.1f}s", file=sys.stderr)
            # Warm the broker's read path (page cache, JIT) before anything is counted.
            run_once(idioms[0], b.bootstrap, topic, want)
            for rnd in range(1, args.rounds + 1):
                for idiom in idioms:
                    run = run_once(idiom, b.bootstrap, topic, want)
                    runs.append(run)
                    shown = f"{run['wall']:.2f}s" if run["ok"] else f"failed: {run['error']}"
                    print(f"round {rnd}/{args.rounds} {idiom}: {shown}", file=sys.stderr)
        finally:
            b.kafka.delete_topic(topic)
        print_table(args, ds, runs, idioms, b.description)


def print_table(
    args: argparse.Namespace, ds: Any, runs: list[dict[str, Any]], idioms: list[str], where: str
) -> None:
    print(
        f"\n# {ds.describe()} into a DataFrame and an aggregate per partition "
        f"({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{where}, median of {args.rounds})\n"
    )
    print("| idiom | records/s | wall s | CPU s | peak RSS MB | vs confluent, same engine |")
    print("|---|---|---|---|---|---|")
    walls = {}
    for idiom in idioms:
        ok = [r for r in runs if r["idiom"] == idiom and r["ok"]]
        if ok:
            walls[idiom] = statistics.median(r["wall"] for r in ok)
    for idiom in idioms:
        ok = [r for r in runs if r["idiom"] == idiom and r["ok"]]
        if not ok:
            failed = [r["error"] for r in runs if r["idiom"] == idiom]
            print(f"| {idiom} | failed every run: {failed[-1] if failed else '?'} | | | | |")
            continue
        wall = walls[idiom]
        cpu = statistics.median(r["cpu"] for r in ok)
        rss = max(r["rss_mb"] for r in ok)
        peer = PEERS.get(idiom)
        ratio = f"{walls[peer] / wall:.2f}x" if peer in walls else ""
        print(
            f"| {idiom} | {ds.records / wall / 1e6:.2f} M | {wall:.2f} | {cpu:.2f} | {rss:.0f} "
            f"| {ratio} |"
        )


if __name__ == "__main__":
    main()
