"""Consume, transform and produce exactly once, with Kafka transactions.

What it shows: each batch read from the input topic is transformed (here: the value upper-cased)
and written to the output topic in one transaction, together with the input offsets it
consumed (``send_offsets_to_transaction``). Either both happen or neither does, so after a crash
and a restart every input record appears in the output exactly once, for consumers that read
with ``isolation_level="read_committed"``:

* the consumer reads ``read_committed`` (it skips records of aborted transactions upstream)
  and never commits by itself: the producer's transaction commits its offsets;
* the producer has a ``transactional_id``, which fences an older instance of the same
  processor (a zombie) so its transactions cannot commit after this one starts;
* if a batch fails, the transaction is aborted and the consumer goes back to the last committed
  offsets, so the batch is processed again.

Run it::

    python examples/transform_transactions.py --bootstrap-server localhost:9092 \\
        --input orders --output orders-upper --group upper-caser

It runs until Ctrl-C, or, with ``--idle-seconds N``, until no record has arrived for N seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from ferrokafka.errors import KafkaError, ProducerFenced


def transform(record: ConsumerRecord[bytes, bytes]) -> bytes:
    """The processing step: anything computed from the record alone."""
    return (record.value or b"").upper()


async def process_batch(
    producer: AIOKafkaProducer,
    group: str,
    output: str,
    batch: dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]],
) -> int:
    """Write the batch's results and its input offsets in one transaction."""
    async with producer.transaction():  # commits at the end, aborts if the block raises
        for records in batch.values():
            for record in records:
                await producer.send(output, transform(record), key=record.key)
        # The next offset to read, per partition: committed only if the transaction is.
        offsets = {tp: records[-1].offset + 1 for tp, records in batch.items()}
        await producer.send_offsets_to_transaction(offsets, group)
    return sum(len(records) for records in batch.values())


async def main(args: argparse.Namespace) -> None:
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        args.input,
        bootstrap_servers=args.bootstrap_server,
        group_id=args.group,
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    producer = AIOKafkaProducer(
        bootstrap_servers=args.bootstrap_server,
        transactional_id=args.transactional_id or f"{args.group}-{args.input}",
    )
    await producer.start()
    await consumer.start()
    total = 0
    last_record = time.monotonic()
    try:
        while args.idle_seconds is None or time.monotonic() - last_record < args.idle_seconds:
            batch = await consumer.getmany(timeout_ms=500)
            if not batch:
                continue
            try:
                total += await process_batch(producer, args.group, args.output, batch)
            except ProducerFenced:
                raise  # a newer instance with this transactional_id took over: stop here
            except KafkaError as exc:
                # The transaction was aborted: nothing of the batch was written and its offsets
                # were not committed, so read it again from the committed offsets.
                print(f"batch failed, retrying from the committed offsets: {exc!r}", flush=True)
                await consumer.seek_to_committed(*batch)
                continue
            last_record = time.monotonic()
            print(f"committed a transaction, {total} records so far", flush=True)
    finally:
        await consumer.stop()
        await producer.stop()
    print(f"transformed {total} records", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--input", default="orders", help="topic to read")
    parser.add_argument("--output", default="orders-upper", help="topic to write")
    parser.add_argument("--group", default="upper-caser", help="consumer group of the input")
    parser.add_argument(
        "--transactional-id", help="the producer's transactional id (default: GROUP-INPUT)"
    )
    parser.add_argument(
        "--idle-seconds", type=float, help="stop when no record has arrived for this long"
    )
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
