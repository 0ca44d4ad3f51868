"""W12's Python clients, each run in its own child process (``child``): transactional producers
in each client's own idiom, acks=all (a transactional producer's only setting), every other
setting the client's default.

``small`` (``case``): ``transactions`` transactions of ``per_transaction`` keyless records of
``value_size`` random capital letters each, one after the other: begin, the sends, commit, and
the next begins only when the commit has returned.

``ctp``: consume-transform-produce. A ``read_committed`` consumer in a new group reads the input
topic from the earliest offsets, up to ``batch`` records a poll; each batch's records go to the
output topic with the value upper-cased and the key kept, in one transaction together with the
batch's next offsets (``send_offsets_to_transaction``), until ``expected`` records are through.

The timed span is the work, not the clients' start-up (finding the transaction coordinator,
InitProducerId; a JVM's start): ``small`` from the first transaction's begin to the last one's
commit, ``ctp`` from the first batch's arrival to the last commit (the group's join is before
it). ``setup_s`` is the time from construction to the first begin, for the record. The parent
checks what reached the output topic (``workloads.transactions_once``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .producers import POOL, random_values
from .tally import PROGRESS_EVERY_S, emit


class Clock:
    """The timed span: wall and CPU from ``start()`` to ``result()``, the transactions and
    records counted meanwhile, and a progress line every ``PROGRESS_EVERY_S``."""

    def __init__(self) -> None:
        self.made = time.perf_counter()
        self.transactions = 0
        self.count = 0
        self._last_emit = 0.0
        self._t0 = self._cpu0 = 0.0
        self.setup_s: float | None = None

    def start(self) -> None:
        if self.setup_s is None:
            self._t0, self._cpu0 = time.perf_counter(), time.process_time()
            self.setup_s = self._t0 - self.made

    def committed(self, records: int) -> None:
        self.transactions += 1
        self.count += records
        now = time.monotonic()
        if now - self._last_emit >= PROGRESS_EVERY_S:
            self._last_emit = now
            emit(progress=self.transactions)

    def result(self) -> dict[str, Any]:
        wall = time.perf_counter() - self._t0
        return {
            "wall": wall,
            "cpu": time.process_time() - self._cpu0,
            "count": self.count,
            "transactions": self.transactions,
            "setup_s": self.setup_s,
        }


async def small_async(mod: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """ferrokafka or aiokafka: ``async with producer.transaction():`` around the sends, each
    ``await producer.send(...)`` (its future dropped: the commit waits for every record)."""
    values = random_values(POOL, spec["value_size"])
    topic, per = spec["topic"], spec["per_transaction"]
    clock = Clock()
    producer = mod.AIOKafkaProducer(
        bootstrap_servers=spec["bootstrap"], transactional_id=spec["transactional_id"], acks="all"
    )
    await producer.start()
    try:
        clock.start()
        for t in range(spec["transactions"]):
            async with producer.transaction():
                for i in range(per):
                    await producer.send(topic, values[(t * per + i) % POOL])
            clock.committed(per)
        return clock.result()
    finally:
        await producer.stop()


def small_confluent(spec: dict[str, Any]) -> dict[str, Any]:
    """confluent-kafka's ``Producer``: ``begin_transaction()``, ``produce()`` each record,
    ``commit_transaction()`` (which flushes and raises if a record failed)."""
    import confluent_kafka

    values = random_values(POOL, spec["value_size"])
    topic, per = spec["topic"], spec["per_transaction"]
    clock = Clock()
    producer = confluent_kafka.Producer(confluent_config(spec))
    producer.init_transactions()
    clock.start()
    for t in range(spec["transactions"]):
        producer.begin_transaction()
        for i in range(per):
            producer.produce(topic, values[(t * per + i) % POOL])
        producer.commit_transaction()
        clock.committed(per)
    result = clock.result()
    producer.flush()
    return result


def confluent_config(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "bootstrap.servers": spec["bootstrap"],
        "transactional.id": spec["transactional_id"],
        "acks": "all",
    }


async def ctp_async(mod: Any, spec: dict[str, Any]) -> dict[str, Any]:
    """ferrokafka or aiokafka, as ``examples/transform_transactions.py`` does it:
    ``getmany(max_records=batch)``, then ``async with producer.transaction():`` the sends and
    ``send_offsets_to_transaction({tp: last offset + 1}, group)``."""
    output, group = spec["output"], spec["group"]
    clock = Clock()
    consumer = mod.AIOKafkaConsumer(
        spec["input"],
        bootstrap_servers=spec["bootstrap"],
        group_id=group,
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    producer = mod.AIOKafkaProducer(
        bootstrap_servers=spec["bootstrap"], transactional_id=spec["transactional_id"], acks="all"
    )
    await producer.start()
    await consumer.start()
    try:
        while clock.count < spec["expected"]:
            batch = await consumer.getmany(timeout_ms=100, max_records=spec["batch"])
            if not batch:
                continue
            clock.start()
            async with producer.transaction():
                for records in batch.values():
                    for record in records:
                        await producer.send(output, record.value.upper(), key=record.key)
                offsets = {tp: records[-1].offset + 1 for tp, records in batch.items()}
                await producer.send_offsets_to_transaction(offsets, group)
            clock.committed(sum(len(records) for records in batch.values()))
        return clock.result()
    finally:
        await consumer.stop()
        await producer.stop()


def ctp_confluent(spec: dict[str, Any]) -> dict[str, Any]:
    """confluent-kafka, as its transactions example does it: ``consume(batch)``, then
    ``begin_transaction()``, ``produce()`` each, ``send_offsets_to_transaction(
    consumer.position(consumer.assignment()), consumer.consumer_group_metadata())`` and
    ``commit_transaction()``."""
    import confluent_kafka

    output = spec["output"]
    clock = Clock()
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": spec["bootstrap"],
            "group.id": spec["group"],
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    producer = confluent_kafka.Producer(confluent_config(spec))
    producer.init_transactions()
    consumer.subscribe([spec["input"]])
    try:
        while clock.count < spec["expected"]:
            messages = consumer.consume(spec["batch"], 0.1)
            if not messages:
                continue
            clock.start()
            producer.begin_transaction()
            for m in messages:
                if m.error() is not None:
                    raise RuntimeError(f"consume: {m.error()}")
                producer.produce(output, m.value().upper(), m.key())
            producer.send_offsets_to_transaction(
                consumer.position(consumer.assignment()), consumer.consumer_group_metadata()
            )
            producer.commit_transaction()
            clock.committed(len(messages))
        result = clock.result()
    finally:
        consumer.close()
    producer.flush()
    return result


def run(spec: dict[str, Any]) -> dict[str, Any]:
    client, case = spec["client"], spec["case"]
    if client == "confluent-kafka":
        return small_confluent(spec) if case == "small" else ctp_confluent(spec)
    if client == "ferrokafka":
        import ferrokafka as mod
    elif client == "aiokafka":
        import aiokafka as mod
    else:
        raise ValueError(f"no Python transactional client {client!r}")
    return asyncio.run(small_async(mod, spec) if case == "small" else ctp_async(mod, spec))
