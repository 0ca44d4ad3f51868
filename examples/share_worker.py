"""A pool of asyncio workers taking jobs from a topic through a share group (KIP-932).

What it shows:

* more workers than partitions: every worker is a member of the share group and takes jobs
  from the same partitions; each job is locked to one worker at a time;
* per-job retries without blocking the partition: a job that fails is released
  (``AcknowledgeType.RELEASE``) and comes back, to any worker, with its ``delivery_count`` one
  higher; a poison job (still failing on its ``--max-attempts``-th delivery) is rejected
  (``AcknowledgeType.REJECT``: archived, never delivered again) and logged;
* explicit acknowledgement (``share_acknowledgement_mode="explicit"``): a job counts as done
  only once its worker has accepted it, and ``commit()`` waits for the broker's word;
* a graceful stop on SIGTERM/SIGINT (or after ``--seconds``): each worker finishes the job in
  hand; jobs fetched but not started go back to the group at once.

Jobs whose value contains ``fail`` fail on every attempt; the others succeed. A share group
starts at the end of its topics: ``--from-beginning`` sets the group's
``share.auto.offset.reset`` to ``earliest`` first, so that jobs already in the topic are taken.

Run it (stop it with Ctrl-C or ``kill -TERM``)::

    python examples/share_worker.py --bootstrap-server localhost:9092 --topic jobs \\
        --group job-workers --workers 4 --from-beginning
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from ferrokafka import AcknowledgeType, AIOKafkaShareConsumer, ConsumerRecord
from ferrokafka.admin import AIOKafkaAdminClient, ConfigResource, ConfigResourceType


class JobFailed(Exception):
    pass


async def run_job(record: ConsumerRecord[bytes, bytes], work_s: float) -> None:
    """The application's work on one job (here: pretend it takes a while)."""
    await asyncio.sleep(work_s)
    if b"fail" in (record.value or b""):
        raise JobFailed(record.value)


async def worker(n: int, args: argparse.Namespace, stopping: asyncio.Event) -> int:
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        args.topic,
        bootstrap_servers=args.bootstrap_server,
        group_id=args.group,
        share_acknowledgement_mode="explicit",
        max_poll_records=args.batch,
    )
    done = 0
    await consumer.start()
    try:
        while not stopping.is_set():
            batch = await consumer.getmany(timeout_ms=500)
            for records in batch.values():
                for record in records:
                    if stopping.is_set():
                        # Not started: give it back to the group now.
                        consumer.acknowledge(record, AcknowledgeType.RELEASE)
                        continue
                    job = f"partition={record.partition} offset={record.offset}"
                    try:
                        await run_job(record, args.work_ms / 1000)
                    except JobFailed:
                        if (record.delivery_count or 1) >= args.max_attempts:
                            consumer.acknowledge(record, AcknowledgeType.REJECT)
                            print(f"worker {n} gave up {job} after {record.delivery_count}")
                        else:
                            consumer.acknowledge(record, AcknowledgeType.RELEASE)
                            print(f"worker {n} failed {job} attempt {record.delivery_count}")
                        continue
                    consumer.acknowledge(record, AcknowledgeType.ACCEPT)
                    done += 1
                    print(f"worker {n} done {job}", flush=True)
            if batch:
                await consumer.commit()
    finally:
        await consumer.stop()
    return done


async def main(args: argparse.Namespace) -> None:
    if args.from_beginning:
        async with AIOKafkaAdminClient(bootstrap_servers=args.bootstrap_server) as admin:
            earliest = {"share.auto.offset.reset": "earliest"}
            await admin.alter_configs(
                [ConfigResource(ConfigResourceType.GROUP, args.group, earliest)]
            )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    if args.seconds is not None:
        loop.call_later(args.seconds, stopping.set)
    counts = await asyncio.gather(*(worker(n, args, stopping) for n in range(args.workers)))
    print(f"stopped: {sum(counts)} jobs done by {args.workers} workers {counts}", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="jobs")
    parser.add_argument("--group", default="job-workers")
    parser.add_argument("--workers", type=int, default=4, help="members of the group (default 4)")
    parser.add_argument("--batch", type=int, default=10, help="jobs per poll (default 10)")
    parser.add_argument(
        "--max-attempts", type=int, default=3, help="deliveries before a job is rejected"
    )
    parser.add_argument("--work-ms", type=int, default=20, help="time per job (default 20)")
    parser.add_argument("--from-beginning", action="store_true", help="take jobs already there")
    parser.add_argument("--seconds", type=float, help="stop after this many seconds")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
