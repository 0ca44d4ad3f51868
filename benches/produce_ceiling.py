"""How fast does the broker take W6's records, and how close do the producers get?

W6's data (``--records`` values of 100 random capital letters, no key, 8 partitions, acks=1,
uncompressed), written to a fresh topic per run, each writer in its own process, for
``--rounds`` rounds:

- ``raw-produce``: the records encoded before the clock starts into 1,000,000-byte batches (as
  ``send_arrow`` makes them), then only Produce requests shaped as the producer shapes them: at
  most one batch per partition and ``--max-request-size`` bytes (the producer's default,
  1 MiB: one such batch) per request, up to 5 requests in flight (Java's and ferrokafka's
  default limit per connection). No client work but the requests' framing: the ceiling for
  any client on this broker and machine with requests of that size.
- ``ferrokafka-arrow``, ``ferrokafka``, ``confluent-kafka``: the harness's W6 runs of
  ``send_arrow``, ``send()`` and ``Producer.produce()`` (see ``harness/producers.py``).

Prints a Markdown table of medians with each writer's share of the ceiling and the broker's CPU
seconds during its runs (for the broker this program starts): on two cores shared with the
broker, what the broker needs to append at the ceiling bounds what is left for the client.

    .venv/bin/python benches/produce_ceiling.py [--records 1000000] [--rounds 3]
        [--writers raw-produce,ferrokafka-arrow,confluent-kafka] [--max-request-size BYTES]
        [--bootstrap H:P]
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
BATCH_BYTES = 1_000_000
IN_FLIGHT = 5
VALUE_SIZE = 100


def encoded_batches(total: int) -> list[list[tuple[int, bytes]]]:
    """Per partition, ``(record count, batch bytes)`` of W6's values spread evenly over the
    partitions, in batches of at most ``BATCH_BYTES``."""
    from ferrokafka import _native
    from harness.producers import POOL, random_values

    values = random_values(POOL, VALUE_SIZE)
    now = int(time.time() * 1000)
    per_record = VALUE_SIZE + 12  # an upper bound of one record's bytes in a batch
    per_batch = (BATCH_BYTES - 61) // per_record
    out: list[list[tuple[int, bytes]]] = [[] for _ in range(PARTITIONS)]
    for p in range(PARTITIONS):
        left = total // PARTITIONS + (1 if p < total % PARTITIONS else 0)
        i = p
        while left:
            n = min(per_batch, left)
            records = [(now, None, values[(i + k) % POOL], []) for k in range(n)]
            out[p].append((n, _native.encode_batch(records)))
            left -= n
            i += n
    return out


async def raw_produce(
    bootstrap: str, topic: str, batches: list[list[tuple[int, bytes]]], max_request_size: int
) -> int:
    """Send every batch, at most one per partition and ``max_request_size`` bytes (but always
    one batch) per request, ``IN_FLIGHT`` requests at a time; the records the broker
    acknowledged."""
    from ferrokafka.client import AIOKafkaClient
    from ferrokafka.protocol import ApiKey
    from ferrokafka.structs import TopicPartition

    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(topic)
        await client.refresh_metadata()
        leader = client.cluster.leader_for_partition(TopicPartition(topic, 0))
        assert leader is not None
        conn = await client.ready(leader)
        version = min(conn.version_for(ApiKey.PRODUCE), 12)  # 13 names topics by id
        queues = [list(reversed(b)) for b in batches]
        acknowledged = 0

        async def request(parts: list[tuple[int, int, bytes]]) -> int:
            body = {
                "transactional_id": None,
                "acks": 1,
                "timeout_ms": 30000,
                "topic_data": [
                    {
                        "name": topic,
                        "partition_data": [{"index": p, "records": b} for p, _, b in parts],
                    }
                ],
            }
            response = await conn.send(ApiKey.PRODUCE, body, version=version)
            for t in response["responses"]:
                for part in t["partition_responses"]:
                    if part["error_code"]:
                        raise RuntimeError(f"produce error {part['error_code']}")
            return sum(n for _, n, _ in parts)

        pending: set[asyncio.Task[int]] = set()
        while any(queues) or pending:
            while len(pending) < IN_FLIGHT and any(queues):
                parts: list[tuple[int, int, bytes]] = []
                size = 0
                for p, q in enumerate(queues):
                    if q and (not parts or size + len(q[-1][1]) <= max_request_size):
                        parts.append((p, *q.pop()))
                        size += len(parts[-1][2])
                pending.add(asyncio.create_task(request(parts)))
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            acknowledged += sum(t.result() for t in done)
        return acknowledged


def child(
    writer: str, bootstrap: str, topic: str, total: int, max_request_size: int
) -> dict[str, Any]:
    if writer == "raw-produce":
        batches = encoded_batches(total)
        cpu, start = time.process_time(), time.perf_counter()
        count = asyncio.run(raw_produce(bootstrap, topic, batches, max_request_size))
        return {
            "wall": time.perf_counter() - start,
            "cpu": time.process_time() - cpu,
            "count": count,
        }
    from harness.producers import produce

    spec = {
        "client": writer,
        "bootstrap": bootstrap,
        "topic": topic,
        "records": total,
        "value_size": VALUE_SIZE,
        "acks": "1",
        "codec": "none",
    }
    return produce(spec)


WRITERS = ["raw-produce", "ferrokafka-arrow", "ferrokafka", "confluent-kafka"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--writers", default="raw-produce,ferrokafka-arrow,confluent-kafka")
    parser.add_argument("--max-request-size", type=int, default=1 << 20)
    parser.add_argument("--bootstrap")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        writer, bootstrap, topic = args.child
        result = child(writer, bootstrap, topic, args.records, args.max_request_size)
        print(json.dumps(result))
        return

    from harness.broker import broker

    writers = args.writers.split(",")
    for w in writers:
        if w not in WRITERS:
            parser.error(f"unknown writer {w!r}: choose from {','.join(WRITERS)}")
    # The ceiling every share is of comes first.
    writers = ["raw-produce"] + [w for w in writers if w != "raw-produce"]
    runs: dict[str, list[dict[str, Any]]] = {w: [] for w in writers}
    with broker(args.bootstrap) as b:
        broker_pid = getattr(b.kafka, "pid", None)
        # One round first, not counted: a fresh broker appends slowly until its JIT is warm
        # (the small batches of send() take longest).
        for rnd in range(args.rounds + 1):
            for w in writers:
                topic = f"ceiling-{uuid.uuid4().hex[:8]}"
                b.kafka.create_topic(topic, partitions=PARTITIONS)
                argv = [sys.executable, __file__, "--records", str(args.records)]
                argv += ["--max-request-size", str(args.max_request_size)]
                r = run_child([*argv, "--child", w, b.bootstrap, topic], broker_pid)
                b.kafka.delete_topic(topic)
                if r["count"] != args.records:
                    raise SystemExit(f"{w}: {r['count']:,} acknowledged, expected {args.records:,}")
                label = f"round {rnd}" if rnd else "warm-up"
                print(describe_run(label, w, args.records, r), file=sys.stderr)
                if rnd:
                    runs[w].append(r)
    print(
        f"\n# W6's {args.records:,} x {VALUE_SIZE} B, 8 partitions, acks=1, requests of at most "
        f"{args.max_request_size:,} bytes: broker ceiling"
    )
    print(f"median of {args.rounds}\n")
    print_table("writer", runs, args.records)


if __name__ == "__main__":
    main()
