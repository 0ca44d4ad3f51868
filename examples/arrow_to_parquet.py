"""Copy a topic into a Parquet file through Arrow, without a Python object per record.

What it shows: ``getmany_arrow`` hands each partition's records over as one
``pyarrow.RecordBatch`` in Spark's Kafka schema (key, value, topic, partition, offset, timestamp,
timestampType, headers), built by ferrokafka's Rust decoder; ``pyarrow.parquet.ParquetWriter``
appends those batches to a file as they come. The topic is read from the beginning up to its
end offsets at start (what was in it then), in assign mode: no consumer group is involved.

Needs pyarrow (``pip install 'ferrokafka[arrow]'``). Run it::

    python examples/arrow_to_parquet.py --bootstrap-server localhost:9092 --topic events \\
        --output events.parquet
"""

from __future__ import annotations

import argparse
import asyncio

import pyarrow.compute as pc
import pyarrow.parquet as pq
from ferrokafka import AIOKafkaConsumer, TopicPartition


async def topic_partitions(consumer: AIOKafkaConsumer[bytes, bytes], topic: str) -> list[int]:
    """The topic's partition ids, waiting for the metadata to show it."""
    for _ in range(50):
        if topic in await consumer.topics():
            partitions = consumer.partitions_for_topic(topic)
            if partitions:
                return sorted(partitions)
        await asyncio.sleep(0.1)
    raise SystemExit(f"topic {topic!r} does not exist")


async def main(args: argparse.Namespace) -> None:
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap_server,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    writer: pq.ParquetWriter | None = None
    rows = 0
    try:
        partitions = [
            TopicPartition(args.topic, p) for p in await topic_partitions(consumer, args.topic)
        ]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        # What "the end" means for this run: the offsets the topic has now.
        end = await consumer.end_offsets(partitions)
        pending = {tp for tp in partitions if await consumer.position(tp) < end[tp]}
        while pending:
            batches = await consumer.getmany_arrow(*pending, timeout_ms=1000)
            for tp, batch in batches.items():
                if writer is None:
                    writer = pq.ParquetWriter(args.output, batch.schema, compression="zstd")
                # A fetch may run past the end offsets taken at start: keep only what is before.
                batch = batch.filter(pc.less(batch.column("offset"), end[tp]))
                writer.write_batch(batch)
                rows += batch.num_rows
                if await consumer.position(tp) >= end[tp]:
                    pending.discard(tp)
    finally:
        if writer is not None:
            writer.close()
        await consumer.stop()
    if writer is None:
        print(f"{args.topic} has no records: nothing written", flush=True)
    else:
        print(f"wrote {rows} records of {args.topic} to {args.output}", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--output", default="events.parquet", help="the Parquet file to write")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
