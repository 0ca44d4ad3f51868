"""The Python producers, each run in its own child process (``child``).

W6 (``produce``): ``records`` values of ``value_size`` random capital letters (as Kafka's
ProducerPerformance makes them; a pool of 1,024 made before the clock starts), no key or a
key made per record (``keys``), sent as fast as the client accepts them in the client's
idiom (a suffix of its name, see ``split_idiom``), then flushed. Every client gets
``linger.ms=5`` (the Java and librdkafka default) and idempotence off; the rest are each
client's defaults. The timed region runs from the producer's construction to its close; every
delivery must succeed.

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


def record_keys(spec: dict[str, Any]) -> Any:
    """The key of record ``i`` as a user writes it: None (keyless), ``b"%d" % i`` (a key per
    record, ``keys="unique"``) or ``b"%d" % (i % k)`` (a key space of ``k``)."""
    keys = spec.get("keys")
    if keys is None:
        return None
    if keys == "unique":
        return lambda i: b"%d" % i
    space = int(keys)
    return lambda i: b"%d" % (i % space)


#: ``send_and_wait`` from this many concurrent tasks: the request-handler pattern.
TASKS = 100
#: Futures awaited together with ``gather`` in chunks of this many.
GATHER = 10_000


async def produce_async(mod: Any, spec: dict[str, Any], idiom: str) -> dict[str, Any]:
    """ferrokafka or aiokafka (the same API), each record sent as ``idiom`` says: its future
    given a done-callback (``callback``), dropped (``dropped``; the final flush waits for
    them), awaited in ``gather`` chunks of ``GATHER`` (``gather``), or ``send_and_wait``
    from ``TASKS`` concurrent tasks (``send-and-wait``)."""
    values = random_values(POOL, spec["value_size"])
    topic, n = spec["topic"], spec["records"]
    key_of = record_keys(spec)
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
        if idiom == "send-and-wait":

            async def task(first: int) -> None:
                for i in range(first, n, TASKS):
                    key = None if key_of is None else key_of(i)
                    await producer.send_and_wait(topic, values[i % POOL], key=key)
                    got.ok += 1
                    if i % 8192 == 0:
                        emit(progress=i)

            await asyncio.gather(*(task(t) for t in range(TASKS)))
        elif idiom == "gather":
            futures = []
            for i in range(n):
                key = None if key_of is None else key_of(i)
                futures.append(await producer.send(topic, values[i % POOL], key=key))
                if len(futures) == GATHER:
                    got.ok += len(await asyncio.gather(*futures))
                    futures = []
                    emit(progress=i)
            got.ok += len(await asyncio.gather(*futures))
        else:
            callback = idiom == "callback"
            dropped = []
            for i in range(n):
                key = None if key_of is None else key_of(i)
                fut = await producer.send(topic, values[i % POOL], key=key)
                if callback:
                    fut.add_done_callback(delivered)
                elif i % 8192 == 0:
                    dropped.append(fut)  # a sample, checked after the flush
                if i % 8192 == 0:
                    emit(progress=i)
            await producer.flush()
            if not callback:
                for fut in dropped:
                    fut.result()  # raises if a delivery failed
                got.ok = n  # the broker's end offsets are checked by the parent
    finally:
        await producer.stop()
    return got.result(time.perf_counter() - start, time.process_time() - start_cpu)


def confluent_producer_config(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "bootstrap.servers": spec["bootstrap"],
        "acks": spec["acks"],
        "compression.type": spec["codec"],
        "linger.ms": LINGER_MS,
        "enable.idempotence": False,
    }


def produce_confluent(spec: dict[str, Any], poll_each: bool) -> dict[str, Any]:
    """confluent-kafka's ``Producer``: ``produce()`` with a delivery callback, and ``poll(0)``
    (which runs the callbacks) every 8,192 records, or after every ``produce()``
    (``poll_each``: its documentation's loop)."""
    import confluent_kafka

    values = random_values(POOL, spec["value_size"])
    topic, n = spec["topic"], spec["records"]
    key_of = record_keys(spec)
    got = Deliveries()

    def delivered(err: Any, msg: Any) -> None:
        if err is not None:
            got.errors.append(str(err))
        else:
            got.ok += 1

    start_cpu = time.process_time()
    start = time.perf_counter()
    producer = confluent_kafka.Producer(confluent_producer_config(spec))
    for i in range(n):
        key = None if key_of is None else key_of(i)
        while True:
            try:
                producer.produce(topic, values[i % POOL], key, on_delivery=delivered)
                break
            except BufferError:  # its local queue is full: serve callbacks, then retry
                producer.poll(0.005)
        if poll_each:
            producer.poll(0)
        if i % 8192 == 0:
            if not poll_each:
                producer.poll(0)
            emit(progress=i)
    left = producer.flush(60)
    if left:
        raise RuntimeError(f"{left} records still queued after flush")
    return got.result(time.perf_counter() - start, time.process_time() - start_cpu)


async def produce_confluent_aio(spec: dict[str, Any], idiom: str) -> dict[str, Any]:
    """confluent-kafka's ``AIOProducer``: ``await produce()`` gives a delivery future per
    record, awaited in ``gather`` chunks (``gather``) or at once by each of ``TASKS`` tasks
    (``send-and-wait``); a task calls ``poll()`` meanwhile, which resolves them."""
    from confluent_kafka.aio import AIOProducer

    values = random_values(POOL, spec["value_size"])
    topic, n = spec["topic"], spec["records"]
    key_of = record_keys(spec)
    got = Deliveries()
    start_cpu = time.process_time()
    start = time.perf_counter()
    # AIOProducer hands records to librdkafka in batches of batch_size (1,000) or after
    # buffer_timeout (1 s): 100 tasks each awaiting its record never fill a batch, so each
    # record would wait the second out. A batch the size of the task count is how that
    # pattern is configured.
    batch = {"batch_size": TASKS} if idiom == "send-and-wait" else {}
    producer = AIOProducer(confluent_producer_config(spec), **batch)

    async def serve_deliveries() -> None:
        # A delivery future resolves when librdkafka's delivery report is served, which
        # only poll() does: without this task an awaited record waits for the next flush.
        while True:
            await producer.poll(0.01)

    poller = asyncio.create_task(serve_deliveries())
    try:
        if idiom == "send-and-wait":

            async def task(first: int) -> None:
                for i in range(first, n, TASKS):
                    key = None if key_of is None else key_of(i)
                    await (await producer.produce(topic, values[i % POOL], key))
                    got.ok += 1
                    if i % 8192 == 0:
                        emit(progress=i)

            await asyncio.gather(*(task(t) for t in range(TASKS)))
        else:
            futures = []
            for i in range(n):
                key = None if key_of is None else key_of(i)
                futures.append(await producer.produce(topic, values[i % POOL], key))
                if len(futures) == GATHER:
                    got.ok += len(await asyncio.gather(*futures))
                    futures = []
                    emit(progress=i)
            got.ok += len(await asyncio.gather(*futures))
        await producer.flush()
    finally:
        poller.cancel()
        await asyncio.gather(poller, return_exceptions=True)
        await producer.close()
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


#: The idioms a client name may end with (none: ``callback``).
IDIOMS = ("dropped", "gather", "send-and-wait", "poll-each")


def split_idiom(client: str) -> tuple[str, str]:
    """``"ferrokafka-gather"`` -> ``("ferrokafka", "gather")``; no suffix: ``callback``."""
    for idiom in IDIOMS:
        if client.endswith("-" + idiom):
            return client.removesuffix("-" + idiom), idiom
    return client, "callback"


def produce(spec: dict[str, Any]) -> dict[str, Any]:
    client, idiom = split_idiom(spec["client"])
    if client == "confluent-kafka":
        return produce_confluent(spec, poll_each=idiom == "poll-each")
    if client == "confluent-kafka-aio":
        return asyncio.run(produce_confluent_aio(spec, idiom))
    if client == "ferrokafka-arrow":
        return asyncio.run(produce_arrow(spec))
    if client == "ferrokafka":
        import ferrokafka as mod
    elif client == "aiokafka":
        import aiokafka as mod
    else:
        raise ValueError(f"no Python producer {client!r}")
    return asyncio.run(produce_async(mod, spec, idiom))


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
