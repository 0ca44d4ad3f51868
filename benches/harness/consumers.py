"""The Python consumer clients, each run in its own child process (``child``).

Every client reads a topic from the beginning until it has seen the expected number of records
(assign mode over every partition, except ``ferrokafka-group``, which subscribes with a new
group), accounting for each record with :class:`~harness.tally.Tally`. The timed region runs
from the client's construction to its close; imports happen before it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from .tally import Tally, emit, peak_rss_mb

#: Poll timeout of every client, seconds (latency runs poll more often).
POLL_S = 1.0
LATENCY_POLL_S = 0.1


class Source:
    """One client: ``open``, ``poll`` until done (records go to the tally), ``close``."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.bootstrap: str = spec["bootstrap"]
        self.topic: str = spec["topic"]
        self.partitions: int = spec["partitions"]
        self.max_records: int | None = spec.get("max_records")
        self.expected: int = spec["expected"]
        self.poll_s = LATENCY_POLL_S if spec.get("latency") else POLL_S
        self.polled = False  # set after the first poll
        tls = spec.get("tls")
        self.cafile: str | None = None if tls is None else tls["cafile"]

    def aiokafka_tls(self) -> dict[str, Any]:
        """aiokafka-style TLS options (ferrokafka takes the same)."""
        if self.cafile is None:
            return {}
        from ferrokafka.helpers import create_ssl_context

        return {"security_protocol": "SSL", "ssl_context": create_ssl_context(cafile=self.cafile)}

    async def open(self) -> None:
        raise NotImplementedError

    async def poll(self, tally: Tally) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError


#: Per-record idioms hand the tally their counts in chunks of this many records.
CHUNK = 4096


async def each_async(records: Any, tally: Tally, left: int) -> None:
    """``async for`` over aiokafka-style records until ``left`` have come: each record's
    offset and value length are summed inline, as ``Tally.add_records`` does per record."""
    n = offsets = nbytes = 0
    async for r in records:
        offsets += r.offset
        nbytes += len(r.value)
        n += 1
        if n == CHUNK or n == left:
            tally.add_counts(n, offsets, nbytes)
            left -= n
            if not left:
                return
            n = offsets = nbytes = 0
            tally.progress()


async def each_awaited(getone: Any, tally: Tally, left: int) -> None:
    """``await getone()`` per record until ``left`` have come (the accounting of
    ``each_async``)."""
    n = offsets = nbytes = 0
    while True:
        r = await getone()
        offsets += r.offset
        nbytes += len(r.value)
        n += 1
        if n == CHUNK or n == left:
            tally.add_counts(n, offsets, nbytes)
            left -= n
            if not left:
                return
            n = offsets = nbytes = 0
            tally.progress()


def each_sync(records: Any, tally: Tally, left: int) -> None:
    """A blocking ``for record in consumer`` (kafka-python's iteration), as ``each_async``."""
    n = offsets = nbytes = 0
    for r in records:
        offsets += r.offset
        nbytes += len(r.value)
        n += 1
        if n == CHUNK or n == left:
            tally.add_counts(n, offsets, nbytes)
            left -= n
            if not left:
                return
            n = offsets = nbytes = 0
            tally.progress()


class Ferrokafka(Source):
    """``getmany`` records, ``getmany_arrow`` columns, or ``getmany`` in a group."""

    def __init__(
        self,
        spec: dict[str, Any],
        arrow: bool = False,
        group: bool = False,
        getone: bool = False,
        tuned: bool = False,
        iterate: bool = False,
    ) -> None:
        super().__init__(spec)
        import ferrokafka

        self.mod = ferrokafka
        if tuned:
            from ferrokafka import memory

            memory.tune()
        self.arrow = arrow
        self.group = group
        self.getone = getone
        self.iterate = iterate
        self.latency = bool(spec.get("latency"))
        if arrow:
            import pyarrow.compute  # noqa: F401  (imported outside the timed region)

    async def open(self) -> None:
        kw: dict[str, Any] = {}
        if self.group:
            kw["group_id"] = f"bench-{uuid.uuid4().hex[:12]}"
        self.consumer = self.mod.AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **kw,
            **self.aiokafka_tls(),
        )
        if self.group:
            self.consumer.subscribe([self.topic])
            await self.consumer.start()
        else:
            await self.consumer.start()
            tp = self.mod.TopicPartition
            self.consumer.assign([tp(self.topic, p) for p in range(self.partitions)])

    async def poll(self, tally: Tally) -> None:
        ms = int(self.poll_s * 1000)
        if self.iterate:
            await each_async(self.consumer, tally, self.expected - tally.count)
        elif self.getone and not self.latency:
            await each_awaited(self.consumer.getone, tally, self.expected - tally.count)
        elif self.getone and self.polled:
            tally.add_records([await self.consumer.getone()])
        elif self.arrow:
            got = await self.consumer.getmany_arrow(timeout_ms=ms, max_records=self.max_records)
            for batch in got.values():
                tally.add_arrow(batch)
        else:
            got = await self.consumer.getmany(timeout_ms=ms, max_records=self.max_records)
            for records in got.values():
                tally.add_records(records)

    async def close(self) -> None:
        await self.consumer.stop()


class Aiokafka(Source):
    def __init__(
        self,
        spec: dict[str, Any],
        getone: bool = False,
        iterate: bool = False,
        group: bool = False,
    ) -> None:
        super().__init__(spec)
        import aiokafka

        self.mod = aiokafka
        self.getone = getone
        self.iterate = iterate
        self.group = group
        self.latency = bool(spec.get("latency"))

    async def open(self) -> None:
        kw: dict[str, Any] = {}
        if self.group:
            kw["group_id"] = f"bench-{uuid.uuid4().hex[:12]}"
        self.consumer = self.mod.AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **kw,
            **self.aiokafka_tls(),
        )
        if self.group:
            self.consumer.subscribe([self.topic])
            await self.consumer.start()
        else:
            await self.consumer.start()
            tp = self.mod.TopicPartition
            self.consumer.assign([tp(self.topic, p) for p in range(self.partitions)])

    async def poll(self, tally: Tally) -> None:
        if self.iterate:
            await each_async(self.consumer, tally, self.expected - tally.count)
            return
        if self.getone and not self.latency:
            await each_awaited(self.consumer.getone, tally, self.expected - tally.count)
            return
        if self.getone and self.polled:
            tally.add_records([await self.consumer.getone()])
            return
        got = await self.consumer.getmany(
            timeout_ms=int(self.poll_s * 1000), max_records=self.max_records
        )
        for records in got.values():
            tally.add_records(records)

    async def close(self) -> None:
        await self.consumer.stop()


class KafkaPython(Source):
    """kafka-python 3 (synchronous; ``poll`` returns ``{tp: [ConsumerRecord]}``)."""

    def __init__(self, spec: dict[str, Any], iterate: bool = False) -> None:
        super().__init__(spec)
        import kafka

        self.mod = kafka
        self.iterate = iterate

    async def open(self) -> None:
        self.consumer = self.mod.KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            group_id=None,
            **(
                {}
                if self.cafile is None
                else {"security_protocol": "SSL", "ssl_cafile": self.cafile}
            ),
        )
        tp = self.mod.TopicPartition
        self.consumer.assign([tp(self.topic, p) for p in range(self.partitions)])

    async def poll(self, tally: Tally) -> None:
        if self.iterate:
            each_sync(self.consumer, tally, self.expected - tally.count)
            return
        got = self.consumer.poll(timeout_ms=int(self.poll_s * 1000), max_records=self.max_records)
        for records in got.values():
            tally.add_records(records)

    async def close(self) -> None:
        self.consumer.close()


def confluent_config(bootstrap: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": "bench-unused",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        # librdkafka pauses a partition's fetches for fetch.queue.backoff.ms (1 s by
        # default) whenever its local queue is full: with a consumer that keeps up that
        # only adds idle time, so it is turned down here (said in the table).
        "fetch.queue.backoff.ms": 1,
    }


class Confluent(Source):
    """confluent-kafka's ``Consumer`` with batch ``consume()``, or its asyncio
    ``confluent_kafka.aio.AIOConsumer`` (the same calls, run in a thread pool)."""

    def __init__(self, spec: dict[str, Any], aio: bool = False, one: bool = False) -> None:
        super().__init__(spec)
        import confluent_kafka
        import confluent_kafka.aio

        self.mod = confluent_kafka
        self.aio = aio
        self.one = one

    async def open(self) -> None:
        conf = confluent_config(self.bootstrap)
        if self.cafile is not None:
            conf |= {"security.protocol": "SSL", "ssl.ca.location": self.cafile}
        tps = [
            self.mod.TopicPartition(self.topic, p, self.mod.OFFSET_BEGINNING)
            for p in range(self.partitions)
        ]
        if self.aio:
            self.consumer = self.mod.aio.AIOConsumer(conf)
            await self.consumer.assign(tps)
        else:
            self.consumer = self.mod.Consumer(conf)
            self.consumer.assign(tps)

    async def poll(self, tally: Tally) -> None:
        if self.one:
            await self.poll_each(tally, self.expected - tally.count)
            return
        n = self.max_records or 10000
        if self.aio:
            messages = await self.consumer.consume(num_messages=n, timeout=self.poll_s)
        else:
            messages = self.consumer.consume(num_messages=n, timeout=self.poll_s)
        tally.add_messages(messages)

    async def poll_each(self, tally: Tally, left: int) -> None:
        """confluent-kafka's one-message ``poll()`` loop (awaited for ``AIOConsumer``), with
        the accounting of ``each_async``."""
        n = offsets = nbytes = 0
        timeout = self.poll_s
        consumer = self.consumer
        while True:
            msg = (await consumer.poll(timeout)) if self.aio else consumer.poll(timeout)
            if msg is None:
                continue
            if msg.error():
                raise RuntimeError(str(msg.error()))
            offsets += msg.offset()
            nbytes += len(msg.value())
            n += 1
            if n == CHUNK or n == left:
                tally.add_counts(n, offsets, nbytes)
                left -= n
                if not left:
                    return
                n = offsets = nbytes = 0
                tally.progress()

    async def close(self) -> None:
        if self.aio:
            await self.consumer.close()
        else:
            self.consumer.close()


class Kafkarrow(Source):
    """kafkarrow (formerly kafkars): Rust (rust-rdkafka) into Arrow batches, all partitions of
    the topic from the earliest offset; it has no assign and no close."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        import kafkarrow

        self.mod = kafkarrow

    async def open(self) -> None:
        self.consumer = self.mod.ConsumerManager(
            config={"bootstrap.servers": self.bootstrap},
            topics=[self.mod.SourceTopic.from_earliest(self.topic)],
        )

    async def poll(self, tally: Tally) -> None:
        batch = self.consumer.poll(timeout_ms=int(self.poll_s * 1000))
        if batch.num_rows:
            tally.add_arrow(batch)

    async def close(self) -> None:
        del self.consumer


SOURCES: dict[str, Any] = {
    "ferrokafka": Ferrokafka,
    "ferrokafka-arrow": lambda spec: Ferrokafka(spec, arrow=True),
    "ferrokafka-group": lambda spec: Ferrokafka(spec, group=True),
    # Opt-in (named in --clients): the process-wide settings of ferrokafka.memory.tune().
    "ferrokafka-tuned": lambda spec: Ferrokafka(spec, tuned=True),
    "ferrokafka-arrow-tuned": lambda spec: Ferrokafka(spec, arrow=True, tuned=True),
    "aiokafka": Aiokafka,
    "kafka-python": KafkaPython,
    "confluent-kafka": Confluent,
    "confluent-kafka-aio": lambda spec: Confluent(spec, aio=True),
    "kafkarrow": Kafkarrow,
    # One record at a time, as services write it (W1, W2): `async for`, `await getone()`,
    # kafka-python's iteration, confluent-kafka's `poll()`.
    "ferrokafka-async-for": lambda spec: Ferrokafka(spec, iterate=True),
    "ferrokafka-group-async-for": lambda spec: Ferrokafka(spec, group=True, iterate=True),
    "aiokafka-async-for": lambda spec: Aiokafka(spec, iterate=True),
    "aiokafka-group-async-for": lambda spec: Aiokafka(spec, group=True, iterate=True),
    "kafka-python-iter": lambda spec: KafkaPython(spec, iterate=True),
    "confluent-kafka-poll": lambda spec: Confluent(spec, one=True),
    "confluent-kafka-aio-poll": lambda spec: Confluent(spec, aio=True, one=True),
    # W1/W2: `await getone()` per record. W5: the same after a first getmany, so that the
    # latency source is started only once the consumer is fetching.
    "ferrokafka-getone": lambda spec: Ferrokafka(spec, getone=True),
    "aiokafka-getone": lambda spec: Aiokafka(spec, getone=True),
}
#: W5 runs each aiokafka-API client under uvloop too, as ``<client>-uvloop``.
UVLOOP = "-uvloop"


async def consume(spec: dict[str, Any]) -> dict[str, Any]:
    source = SOURCES[spec["client"].removesuffix(UVLOOP)](spec)
    latency = bool(spec.get("latency"))
    expected: int = spec["expected"]
    tally = Tally(latency)
    start_cpu = time.process_time()
    start = time.perf_counter()
    await source.open()
    try:
        first = True
        while tally.count < expected:
            await source.poll(tally)
            if first and latency:
                emit(ready=True)
            first = False
            source.polled = True
            tally.progress()
    finally:
        await source.close()
    wall = time.perf_counter() - start
    cpu = time.process_time() - start_cpu
    # The peak so far is the client's (and the tally's compact counters); sorting W5's
    # latencies below makes a Python int of each, tens of MB that are the harness's own.
    rss_mb = peak_rss_mb()
    return {"wall": wall, "cpu": cpu, "rss_mb": rss_mb, **tally.result()}


def run(spec: dict[str, Any]) -> dict[str, Any]:
    if spec["client"].endswith(UVLOOP):
        import uvloop

        return uvloop.run(consume(spec))
    return asyncio.run(consume(spec))
