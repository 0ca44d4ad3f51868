"""One group member of the soak, a child process: ``python -m soak.member <spec as JSON>``.

It subscribes, "processes" every record by appending it to its own log (one file per
incarnation), and commits by hand: every quarter second, and for the partitions being revoked
in the rebalance listener, always after an fsync of the log, so a committed offset is never
ahead of a processed (recorded) record. SIGTERM commits what was processed, leaves the group and
exits; SIGKILL (the soak's member fault) loses what was not yet committed, which the next owner
processes again: those are the duplicates the verification explains."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from typing import IO, Any

from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition

from .logs import decode_value, fsync, partitions_text

COMMIT_EVERY_S = 0.25


class Member:
    def __init__(self, spec: dict[str, Any], log: IO[str]) -> None:
        self.spec = spec
        self.log = log
        options: dict[str, Any] = {}
        if spec["protocol"] == "classic":
            options.update(session_timeout_ms=6000, heartbeat_interval_ms=1000)
        self.consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
            bootstrap_servers=spec["bootstrap"],
            group_id=spec["group"],
            group_protocol=spec["protocol"],
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            request_timeout_ms=10000,
            retry_backoff_ms=100,
            fetch_max_wait_ms=200,
            **options,
        )
        self.pending: dict[TopicPartition, int] = {}
        """The next offset to commit, per partition processed since its last commit."""

    async def commit(self, partitions: set[TopicPartition] | None = None) -> None:
        offsets = {
            tp: offset
            for tp, offset in self.pending.items()
            if partitions is None or tp in partitions
        }
        if not offsets:
            return
        fsync(self.log)
        try:
            await self.consumer.commit(offsets)
        except Exception as exc:
            print(f"{time.time():.3f} commit of {len(offsets)} failed: {exc!r}", flush=True)
            return
        self.log.write(
            f"C {time.time():.3f} "
            + ",".join(f"{tp.partition}:{o}" for tp, o in sorted(offsets.items()))
            + "\n"
        )
        for tp, offset in offsets.items():
            if self.pending.get(tp) == offset:
                del self.pending[tp]

    def process(self, batch: dict[TopicPartition, list[Any]]) -> None:
        write = self.log.write
        for tp, records in batch.items():
            for record in records:
                gid, _, seq = decode_value(record.value)
                write(f"P {tp.partition} {record.offset} {seq} {gid} {record.timestamp}\n")
            if records:
                self.pending[tp] = records[-1].offset + 1

    async def run(self, stop: asyncio.Event) -> None:
        member = self

        class Listener(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
                await member.commit(revoked)
                for tp in revoked:
                    member.pending.pop(tp, None)
                member.log.write(
                    f"R {time.time():.3f} {partitions_text([tp.partition for tp in revoked])}\n"
                )
                fsync(member.log)

            async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
                member.log.write(
                    f"A {time.time():.3f} {partitions_text([tp.partition for tp in assigned])}\n"
                )

        self.consumer.subscribe([self.spec["topic"]], listener=Listener())
        await self.consumer.start()
        try:
            last_commit = time.monotonic()
            while not stop.is_set():
                self.process(await self.consumer.getmany(timeout_ms=200, max_records=2000))
                if time.monotonic() - last_commit >= COMMIT_EVERY_S:
                    await self.commit()
                    last_commit = time.monotonic()
            await self.commit()
        finally:
            await self.consumer.stop()
        self.log.write(f"S {time.time():.3f}\n")
        fsync(self.log)


async def main(spec: dict[str, Any], log: IO[str]) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await Member(spec, log).run(stop)


if __name__ == "__main__":
    member_spec = json.loads(sys.argv[1])
    with open(member_spec["log"], "a") as member_log:
        asyncio.run(main(member_spec, member_log))
