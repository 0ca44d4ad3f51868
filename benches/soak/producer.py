"""The soak's producer, a child process: ``python -m soak.producer <spec as JSON>``.

An idempotent producer (``acks=all``) sends ``rate`` records a second, round-robin over the
topic's partitions, each value carrying the record's sequence number in its partition and a
global id. Every acknowledged record is appended to the acknowledgement log (flushed every
200 ms); a send that fails is logged too. SIGTERM stops sending, waits for every record in
flight, and exits."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from typing import IO, Any

from ferrokafka import AIOKafkaProducer

from .logs import encode_value, fsync


async def run(spec: dict[str, Any], log: IO[str]) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    partitions: int = spec["partitions"]
    rate: float = spec["rate"]
    lines: list[str] = []
    pending: set[asyncio.Future[Any]] = set()
    producer = AIOKafkaProducer(
        bootstrap_servers=spec["bootstrap"],
        enable_idempotence=True,
        acks="all",
        linger_ms=5,
        request_timeout_ms=spec.get("request_timeout_ms", 30000),
        retry_backoff_ms=100,
    )
    await producer.start()

    def acknowledged(gid: int, partition: int, seq: int, future: asyncio.Future[Any]) -> None:
        pending.discard(future)
        if future.cancelled():
            lines.append(f"F {partition} {seq} {gid}\n")
        elif future.exception() is not None:
            lines.append(f"F {partition} {seq} {gid}\n")
            print(f"send {gid} (p{partition} seq {seq}) failed: {future.exception()!r}", flush=True)
        else:
            lines.append(f"{partition} {future.result().offset} {seq} {gid}\n")

    async def flusher() -> None:
        while True:
            await asyncio.sleep(0.2)
            if lines:
                log.writelines(lines)
                lines.clear()
                log.flush()

    flushing = asyncio.create_task(flusher())
    seqs = [0] * partitions
    gid = 0
    began = time.monotonic()
    try:
        while not stop.is_set():
            now = time.monotonic()
            if (now - began) * rate - gid > rate:
                # A stalled cluster does not make the producer burst without bound afterwards:
                # at most a second's worth is caught up.
                began = now - (gid + rate) / rate
            due = int((now - began) * rate)
            while gid < due and not stop.is_set():
                partition = gid % partitions
                seq = seqs[partition]
                # The create time is the send time: the driver's recovery clock.
                future = await producer.send(
                    spec["topic"],
                    encode_value(gid, partition, seq),
                    partition=partition,
                    timestamp_ms=int(time.time() * 1000),
                )
                pending.add(future)
                future.add_done_callback(
                    lambda f, g=gid, p=partition, s=seq: acknowledged(g, p, s, f)
                )
                seqs[partition] = seq + 1
                gid += 1
            await asyncio.sleep(0.01)
        await producer.flush()
        if pending:
            await asyncio.wait(list(pending), timeout=120)
    finally:
        await producer.stop()
        flushing.cancel()
        log.writelines(lines)
        fsync(log)
    print(json.dumps({"sent": gid}), flush=True)


if __name__ == "__main__":
    producer_spec = json.loads(sys.argv[1])
    with open(producer_spec["acks"], "a") as acks_log:
        asyncio.run(run(producer_spec, acks_log))
