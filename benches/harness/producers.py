"""The Python producers, each run in its own child process (``child``).

W6 (``produce``): ``records`` values of ``value_size`` random capital letters (as Kafka's
ProducerPerformance makes them; a pool of 1,024 made before the clock starts), no key, sent
as fast as the client accepts them, then flushed. Every client gets ``linger.ms=5`` (the Java
and librdkafka default) and idempotence off; the rest are each client's defaults. The timed
region runs from the producer's construction to its close; every delivery must succeed.

``ferrokafka-arrow`` is ferrokafka's bulk path, ``send_arrow``: the same values as Arrow
record batches (see ``produce_arrow``).

W5 (``rate_produce``): the fixed-rate source of the latency runs, confluent-kafka's producer
with ``linger.ms=1``: a warm-up of flag-0 records, then exactly ``rate * seconds`` measured
records stamped with the time of their ``produce()`` call (see ``tally.LATENCY_HEADER``).
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from .tally import LATENCY_HEADER, emit

LINGER_MS = 5
#: The latency source's linger: 1 ms keeps it at 50k records/s on two shared cores (with 0 it
#: falls behind there), and adds the same <= 1 ms for every consumer.
LATENCY_LINGER_MS = 1
POOL = 1024


def random_values(n: int, size: int) -> list[bytes]:
    rng = random.Random(6)
    return [bytes(rng.choices(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", k=size)) for _ in range(n)]


class Deliveries:
    def __init__(self) -> None:
        self.ok = 0
        self.errors: list[str] = []

    def result(self, wall: float, cpu: float) -> dict[str, Any]:
        if self.errors:
            raise RuntimeError(f"{len(self.errors)} deliveries failed, first: {self.errors[0]}")
        return {"wall": wall, "cpu": cpu, "count": self.ok}


def async_producer(mod: Any, spec: dict[str, Any]) -> Any:
    """An ``AIOKafkaProducer`` of ``mod`` (ferrokafka or aiokafka) with W6's settings."""
    return mod.AIOKafkaProducer(
        bootstrap_servers=spec["bootstrap"],
        acks=1 if spec["acks"] == "1" else "all",
        compression_type=None if spec["codec"] == "none" else spec["codec"],
        linger_ms=LINGER_MS,
        enable_idempotence=False,
    )


async def produce_async(mod: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """ferrokafka or aiokafka (the same API)."""
    values = random_values(POOL, spec["value_size"])
    topic, n = spec["topic"], spec["records"]
    got = Deliveries()

    def delivered(fut: asyncio.Future[Any]) -> None:
        if fut.cancelled():
            got.errors.append("cancelled")
        elif fut.exception() is not None:
            got.errors.append(repr(fut.exception()))
        else:
            got.ok += 1

    start_cpu = time.process_time()
    start = time.perf_counter()
    producer = async_producer(mod, spec)
    await producer.start()
    try:
        for i in range(n):
            fut = await producer.send(topic, values[i % POOL])
            fut.add_done_callback(delivered)
            if i % 8192 == 0:
                emit(progress=i)
        await producer.flush()
    finally:
        await producer.stop()
    return got.result(time.perf_counter() - start, time.process_time() - start_cpu)


def produce_confluent(spec: dict[str, Any]) -> dict[str, Any]:
    import confluent_kafka

    values = random_values(POOL, spec["value_size"])
    topic, n = spec["topic"], spec["records"]
    got = Deliveries()

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            got.errors.append(str(err))
        else:
            got.ok += 1

    start_cpu = time.process_time()
    start = time.perf_counter()
    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": spec["bootstrap"],
            "acks": spec["acks"],
            "compression.type": spec["codec"],
            "linger.ms": LINGER_MS,
            "enable.idempotence": False,
        }
    )
    for i in range(n):
        while True:
            try:
                producer.produce(topic, values[i % POOL], on_delivery=delivered)
                break
            except BufferError:  # its local queue is full: serve callbacks, then retry
                producer.poll(0.005)
        if i % 8192 == 0:
            producer.poll(0)
            emit(progress=i)
    left = producer.flush(60)
    if left:
        raise RuntimeError(f"{left} records still queued after flush")
    return got.result(time.perf_counter() - start, time.process_time() - start_cpu)


#: Rows per ``send_arrow`` call: as a Spark task or a Parquet reader hands them over.
ARROW_ROWS = 65536


async def produce_arrow(spec: dict[str, Any]) -> dict[str, Any]:
    """ferrokafka's ``send_arrow``: the same values, as the ``value`` column of Arrow record
    batches of ``ARROW_ROWS`` rows, made before the clock starts (the bulk path's input is
    Arrow already: a Parquet file, a Spark task); each call's batches are acknowledged
    together."""
    import ferrokafka
    import pyarrow as pa

    values = random_values(POOL, spec["value_size"])
    topic, n = spec["topic"], spec["records"]
    batches = []
    for first in range(0, n, ARROW_ROWS):
        rows = range(first, min(n, first + ARROW_ROWS))
        batches.append(pa.record_batch({"value": pa.array([values[i % POOL] for i in rows])}))
    start_cpu = time.process_time()
    start = time.perf_counter()
    producer = async_producer(ferrokafka, spec)
    await producer.start()
    count = 0
    try:
        futures = []
        for i, batch in enumerate(batches):
            futures.append(await producer.send_arrow(topic, batch))
            emit(progress=i * ARROW_ROWS)
        for future in futures:
            count += sum(result.record_count for result in await future)
    finally:
        await producer.stop()
    return {
        "wall": time.perf_counter() - start,
        "cpu": time.process_time() - start_cpu,
        "count": count,
    }


def produce(spec: dict[str, Any]) -> dict[str, Any]:
    client = spec["client"]
    if client == "confluent-kafka":
        return produce_confluent(spec)
    if client == "ferrokafka-arrow":
        return asyncio.run(produce_arrow(spec))
    if client == "ferrokafka":
        import ferrokafka as mod
    elif client == "aiokafka":
        import aiokafka as mod
    else:
        raise ValueError(f"no Python producer {client!r}")
    return asyncio.run(produce_async(mod, spec))


def rate_produce(spec: dict[str, Any]) -> dict[str, Any]:
    import confluent_kafka

    producer = confluent_kafka.Producer(
        {
            "bootstrap.servers": spec["bootstrap"],
            "linger.ms": LATENCY_LINGER_MS,
            "acks": 1,
            "delivery.report.only.error": True,
        }
    )
    errors: list[str] = []

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    topic, rate = spec["topic"], spec["rate"]
    pad = b"x" * (spec["value_size"] - LATENCY_HEADER.size)
    pack = LATENCY_HEADER.pack

    def phase(flag: int, count: int) -> float:
        start = time.monotonic()
        sent = 0
        last_emit = start
        while sent < count:
            now = time.monotonic()
            due = min(count, int((now - start) * rate) + 1)
            while sent < due:
                value = pack(flag, sent, time.time_ns() // 1000) + pad
                try:
                    producer.produce(topic, value, on_delivery=delivered)
                except BufferError:
                    producer.poll(0.001)
                    continue
                sent += 1
            producer.poll(0)
            if now - last_emit >= 0.5:
                emit(progress=sent)
                last_emit = now
            wait = sent / rate - (time.monotonic() - start)
            if wait > 0:
                time.sleep(wait)
        return time.monotonic() - start

    phase(0, int(rate * spec["warmup"]))
    n = int(rate * spec["seconds"])
    took = phase(1, n)
    left = producer.flush(30)
    if errors or left:
        raise RuntimeError(f"{len(errors)} deliveries failed, {left} queued: {errors[:1]}")
    return {"count": n, "seconds": took, "achieved_rate": n / took}
