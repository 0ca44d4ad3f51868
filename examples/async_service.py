"""An asyncio service that consumes a topic in a consumer group and shuts down gracefully.

What it shows:

* a group member (``subscribe`` with a ``group_id``) that commits by hand, only what it has
  processed (``enable_auto_commit=False``), so a record is never marked done before it is;
* a ``ConsumerRebalanceListener`` that commits the processed offsets of partitions taken away
  in a rebalance, so the member that gets them next starts right after them;
* SIGTERM and SIGINT (Ctrl-C) handled by the event loop: the service stops taking records,
  finishes the one in hand, commits what it processed and closes the consumer, which leaves
  the group at once instead of after the session timeout. It exits with status 0.

Run it (stop it with Ctrl-C or ``kill -TERM``)::

    python examples/async_service.py --bootstrap-server localhost:9092 --topic events \\
        --group event-service

``--seconds N`` stops it after N seconds as if it had been sent SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, ConsumerRecord, TopicPartition


class CommitProcessedOnRevoke(ConsumerRebalanceListener):
    """Commits what was processed of the partitions a rebalance takes away."""

    def __init__(self, service: EventService) -> None:
        self.service = service

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.service.commit(revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        print(f"assigned {sorted(tp.partition for tp in assigned)}", flush=True)


class EventService:
    def __init__(self, consumer: AIOKafkaConsumer[bytes, bytes], work_ms: int) -> None:
        self.consumer = consumer
        self.work_s = work_ms / 1000
        self.stopping = asyncio.Event()
        # The next offset to read, per partition: what a commit records as done.
        self.processed: dict[TopicPartition, int] = {}
        self.committed: dict[TopicPartition, int] = {}
        self.count = 0

    async def handle(self, record: ConsumerRecord[bytes, bytes]) -> None:
        """The application's work on one record (here: pretend it takes a while)."""
        await asyncio.sleep(self.work_s)
        self.processed[TopicPartition(record.topic, record.partition)] = record.offset + 1
        self.count += 1
        print(f"processed partition={record.partition} offset={record.offset}", flush=True)

    async def commit(self, partitions: set[TopicPartition] | None = None) -> None:
        """Commit the processed offsets (of ``partitions``, or all) not committed yet."""
        todo = {
            tp: offset
            for tp, offset in self.processed.items()
            if (partitions is None or tp in partitions) and self.committed.get(tp) != offset
        }
        if todo:
            await self.consumer.commit(todo)
            self.committed.update(todo)

    async def run(self) -> None:
        while not self.stopping.is_set():
            # A short poll timeout bounds how long a stop request waits for this call.
            batch = await self.consumer.getmany(timeout_ms=500)
            for records in batch.values():
                for record in records:
                    if self.stopping.is_set():
                        # Records fetched but not processed are not committed: the next
                        # member of the group reads them again.
                        break
                    await self.handle(record)
            await self.commit()


async def main(args: argparse.Namespace) -> None:
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap_server,
        group_id=args.group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    service = EventService(consumer, args.work_ms)
    consumer.subscribe([args.topic], listener=CommitProcessedOnRevoke(service))

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, service.stopping.set)
    if args.seconds is not None:
        loop.call_later(args.seconds, service.stopping.set)

    await consumer.start()
    try:
        await service.run()
        await service.commit()
    finally:
        await consumer.stop()
    for tp, offset in sorted(service.committed.items()):
        print(f"committed partition={tp.partition} offset={offset}", flush=True)
    print(f"stopped after processing {service.count} records", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="events")
    parser.add_argument("--group", default="event-service")
    parser.add_argument(
        "--work-ms", type=int, default=10, help="simulated work per record (default 10)"
    )
    parser.add_argument("--seconds", type=float, help="stop after this many seconds")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
