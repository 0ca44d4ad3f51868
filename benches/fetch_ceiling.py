"""How fast can the broker serve W1's (or W2's) data, and how close do the client's paths get?

Writes the dataset (``--records`` x ``--value-size`` B, 10-byte keys, 8 partitions,
uncompressed; W1's by default, W2's with ``--records 1000000 --value-size 1024``) once, then
alternates, each in its own process, for ``--rounds`` rounds:

- ``raw-fetch``: the same Fetch requests the consumer sends (one in flight per broker, 1 MiB
  per partition), nothing decoded: the offset only moves by the batch headers. This is what the
  broker and the socket deliver with no client work; it is the ceiling for any client.
- ``ferrokafka-arrow``: ``getmany_arrow`` over the same data (pyarrow imported before the clock).
- ``ferrokafka``: ``getmany`` over the same data, touching each record's offset and value as
  the harness's tally does.

Prints a Markdown table with the medians and the Arrow path's share of the ceiling, and (for
the broker it starts itself) the broker's CPU seconds during each reader's run: on a machine
whose cores the broker shares, what the broker needs at the ceiling bounds what is left for
the client.

    .venv/bin/python benches/fetch_ceiling.py [--records 5000000] [--value-size 100] [--rounds 5]
        [--readers raw-fetch,ferrokafka-arrow,ferrokafka] [--bootstrap H:P]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness.ceiling import describe_run, print_table, run_child

PARTITIONS = 8


async def raw_fetch(bootstrap: str, topic: str, total: int) -> int:
    from ferrokafka import _native
    from ferrokafka.client import AIOKafkaClient
    from ferrokafka.protocol import ApiKey
    from ferrokafka.structs import TopicPartition

    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(topic)
        await client.refresh_metadata()
        leader = client.cluster.leader_for_partition(TopicPartition(topic, 0))
        assert leader is not None
        conn = await client.ready(leader)
        position = dict.fromkeys(range(PARTITIONS), 0)
        while sum(position.values()) < total:
            partitions = [
                {
                    "partition": p,
                    "current_leader_epoch": -1,
                    "fetch_offset": offset,
                    "last_fetched_epoch": -1,
                    "log_start_offset": -1,
                    "partition_max_bytes": 1 << 20,
                }
                for p, offset in position.items()
            ]
            body = {
                "replica_id": -1,
                "max_wait_ms": 500,
                "min_bytes": 1,
                "max_bytes": 50 << 20,
                "isolation_level": 0,
                "session_id": 0,
                "session_epoch": -1,
                "topics": [{"topic": topic, "partitions": partitions}],
                "forgotten_topics_data": [],
                "rack_id": "",
            }
            response = await conn.send(ApiKey.FETCH, body, version=12)
            for t in response["responses"]:
                for part in t["partitions"]:
                    if part["error_code"]:
                        raise RuntimeError(f"fetch error {part['error_code']}")
                    end = _native.records_end(part["records"]) if part["records"] else None
                    if end is not None:
                        position[part["partition_index"]] = end[0]
        return sum(position.values())


async def _consume(bootstrap: str, topic: str, total: int, arrow: bool) -> int:
    """Read ``total`` records from the start with ``getmany_arrow`` (counting rows) or
    ``getmany`` (touching each record's offset and value, as the harness's tally does)."""
    from ferrokafka import AIOKafkaConsumer, TopicPartition

    count = 0
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    ) as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(PARTITIONS)])
        while count < total:
            if arrow:
                for batch in (await consumer.getmany_arrow(timeout_ms=1000)).values():
                    count += batch.num_rows
            else:
                for records in (await consumer.getmany(timeout_ms=1000)).values():
                    for r in records:
                        count += 1 if r.offset >= 0 and r.value is not None else 0
    return count


async def arrow(bootstrap: str, topic: str, total: int) -> int:
    return await _consume(bootstrap, topic, total, arrow=True)


async def records(bootstrap: str, topic: str, total: int) -> int:
    return await _consume(bootstrap, topic, total, arrow=False)


READERS = {"raw-fetch": raw_fetch, "ferrokafka-arrow": arrow, "ferrokafka": records}


def child(client: str, bootstrap: str, topic: str, total: int) -> None:
    if client == "ferrokafka-arrow":
        import pyarrow  # noqa: F401  (outside the clock, as an Arrow user has it imported)
    run = READERS[client]
    cpu, start = time.process_time(), time.perf_counter()
    count = asyncio.run(run(bootstrap, topic, total))
    wall = time.perf_counter() - start
    if count != total:
        raise SystemExit(f"{client}: read {count:,} records, expected {total:,}")
    print(json.dumps({"wall": wall, "cpu": time.process_time() - cpu}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=5_000_000)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--readers", default="raw-fetch,ferrokafka-arrow")
    parser.add_argument("--bootstrap")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        client, bootstrap, topic = args.child
        child(client, bootstrap, topic, args.records)
        return

    from harness.broker import broker
    from harness.datasets import Dataset, write_dataset

    clients = args.readers.split(",")
    for c in clients:
        if c not in READERS:
            parser.error(f"unknown reader {c!r}: choose from {','.join(READERS)}")
    # The ceiling every share is of comes first.
    clients = ["raw-fetch"] + [c for c in clients if c != "raw-fetch"]
    with broker(args.bootstrap) as b:
        topic = f"ceiling-{uuid.uuid4().hex[:8]}"
        b.kafka.create_topic(topic, partitions=PARTITIONS)
        asyncio.run(
            write_dataset(b.bootstrap, topic, Dataset(PARTITIONS, args.records, args.value_size))
        )
        runs: dict[str, list[dict[str, Any]]] = {c: [] for c in clients}
        broker_pid = getattr(b.kafka, "pid", None)
        for rnd in range(args.rounds):
            for c in clients:
                cmd = [sys.executable, __file__, "--records", str(args.records)]
                r = run_child([*cmd, "--child", c, b.bootstrap, topic], broker_pid)
                runs[c].append(r)
                print(describe_run(f"round {rnd + 1}", c, args.records, r), file=sys.stderr)
    print(
        f"\n# {args.records:,} x {args.value_size} B, 8 partitions: broker ceiling vs "
        + ", ".join(c for c in clients if c != "raw-fetch")
    )
    print(f"median of {args.rounds}\n")
    print_table("reader", runs, args.records)


if __name__ == "__main__":
    main()
