"""The datasets: what is written once per workload and what every reader must then see.

Records of partition ``p`` have offsets ``0..n_p-1``, 10-byte keys ``key-NNNNNN`` and one
repeated value of ``value_size`` bytes. Readers prove what they read with the count and a
checksum: ``31 * sum(offsets) + sum(value lengths)`` mod 2^48.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MASK = 0xFFFFFFFFFFFF
KEY_SIZE = 10


@dataclass(frozen=True)
class Dataset:
    partitions: int
    records: int
    value_size: int
    codec: str = "none"

    def describe(self) -> str:
        return (
            f"{self.records:,} records x {self.value_size} B, {KEY_SIZE}-byte keys, "
            f"{self.partitions} partitions, {self.codec}"
        )

    def counts(self) -> list[int]:
        """Records per partition."""
        base, extra = divmod(self.records, self.partitions)
        return [base + (1 if p < extra else 0) for p in range(self.partitions)]

    def checksum(self) -> int:
        total = 0
        for n in self.counts():
            total += 31 * (n * (n - 1) // 2) + n * self.value_size
        return total & MASK

    def value_bytes(self) -> int:
        return self.records * self.value_size

    def key_and_value_bytes(self) -> int:
        return self.records * (KEY_SIZE + self.value_size)


def key(i: int) -> bytes:
    return b"key-%06d" % (i % 1_000_000)


async def write_dataset(
    bootstrap: str, topic: str, ds: Dataset, values: Sequence[bytes] | None = None
) -> None:
    """Write ``ds`` into ``topic`` (which exists, with ``ds.partitions`` partitions) with raw
    Produce requests of ~512 KiB batches built by ferrokafka's batch encoder, 16 in flight.
    With ``values`` (``ds.records`` of them, about ``ds.value_size`` bytes each) the records
    carry those instead of the one repeated value, partition ``p`` the ``p``-th run of
    ``ds.counts()[p]`` of them (W11's typed records)."""
    from ferrokafka.client import AIOKafkaClient
    from ferrokafka.records import encode_batch
    from ferrokafka.structs import TopicPartition

    per_batch = max(1, (512 * 1024) // (ds.value_size + 30))
    # Current timestamps: older ones fall to time-based retention in the middle of a run.
    now_ms = int(time.time() * 1000)
    value = dataset_value(ds)
    if values is not None and len(values) != ds.records:
        raise ValueError(f"{len(values)} values for {ds.records} records")
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(topic)
        await client.refresh_metadata()
        pending: set[asyncio.Future[Any]] = set()
        try:
            first = 0  # the index in ``values`` of partition p's first record
            for p, count in enumerate(ds.counts()):
                leader = client.cluster.leader_for_partition(TopicPartition(topic, p))
                assert leader is not None and leader >= 0
                for start in range(0, count, per_batch):
                    n = min(per_batch, count - start)
                    at = first + start
                    records = [
                        (
                            now_ms + start + i,
                            key(start + i),
                            value if values is None else values[at + i],
                            [],
                        )
                        for i in range(n)
                    ]
                    batch = encode_batch(records, compression=ds.codec)
                    body = {
                        "transactional_id": None,
                        "acks": 1,
                        "timeout_ms": 30000,
                        "topic_data": [
                            {"name": topic, "partition_data": [{"index": p, "records": batch}]}
                        ],
                    }
                    pending.add(asyncio.ensure_future(_produce(client, leader, body)))
                    if len(pending) >= 16:
                        done, pending = await asyncio.wait(pending, return_when="FIRST_COMPLETED")
                        for d in done:
                            d.result()
                first += count
            await asyncio.gather(*pending)
        finally:
            for f in pending:
                f.cancel()
            await asyncio.gather(*pending, return_exceptions=True)


#: NOT_LEADER_OR_FOLLOWER and UNKNOWN_TOPIC_OR_PARTITION: a topic just created can answer
#: these for a moment after its metadata already shows a leader.
_RETRIABLE = {3, 6}


async def _produce(client: Any, leader: int, body: dict[str, Any]) -> None:
    from ferrokafka.errors import KafkaConnectionError
    from ferrokafka.protocol import ApiKey

    for attempt in range(100):
        try:
            conn = await client.ready(leader)
            response = await conn.send(ApiKey.PRODUCE, body, version=12)
        except KafkaConnectionError:
            if attempt == 99:
                raise
            await asyncio.sleep(0.1)
            continue
        codes = {p["error_code"] for t in response["responses"] for p in t["partition_responses"]}
        codes.discard(0)
        if not codes:
            return
        if not codes <= _RETRIABLE:
            raise RuntimeError(f"produce failed: error {sorted(codes)}")
        await asyncio.sleep(0.1)
    raise RuntimeError(f"produce failed 100 times: error {sorted(codes)}")


async def end_offsets(bootstrap: str, topic: str, partitions: int) -> list[int]:
    """The topic's end offsets, partition by partition (the producers' check)."""
    from ferrokafka import AIOKafkaConsumer, TopicPartition

    async with AIOKafkaConsumer(bootstrap_servers=bootstrap) as consumer:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        ends = await consumer.end_offsets(tps)
    return [ends[tp] for tp in tps]


@dataclass
class Committed:
    """What a ``read_committed`` reader finds in a topic: the record count and how many times
    each key and each value occurs."""

    count: int
    keys: Counter[bytes | None]
    values: Counter[bytes | None]


def dataset_keys(ds: Dataset) -> Counter[bytes | None]:
    """How many times each key occurs in ``ds`` (partition ``p``'s records are keyed by their
    offsets, so the small offsets' keys occur once per partition)."""
    keys: Counter[bytes | None] = Counter()
    for n in ds.counts():
        keys.update(key(i) for i in range(n))
    return keys


def dataset_value(ds: Dataset) -> bytes:
    """The one value every record of ``ds`` has (see ``write_dataset``)."""
    return (b"0123456789abcdef" * (ds.value_size // 16 + 1))[: ds.value_size]


async def read_committed(
    bootstrap: str, topic: str, partitions: int, timeout_s: float
) -> Committed:
    """Every record of ``topic`` that a ``read_committed`` consumer sees, from the earliest
    offsets to the last stable offsets (the transaction checks: records of aborted
    transactions and transaction markers are not counted)."""
    from ferrokafka import AIOKafkaConsumer, TopicPartition

    found = Committed(0, Counter(), Counter())
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed"
    ) as consumer:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        deadline = time.monotonic() + timeout_s
        left = {tp for tp in tps if ends[tp] > 0}
        while left:
            if time.monotonic() > deadline:
                raise TimeoutError(f"read_committed of {topic}: not at the end in {timeout_s:.0f}s")
            for records in (await consumer.getmany(timeout_ms=200)).values():
                found.count += len(records)
                found.keys.update(r.key for r in records)
                found.values.update(r.value for r in records)
            left = {tp for tp in left if await consumer.position(tp) < ends[tp]}
    return found


async def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> list[int]:
    """Group ``group``'s committed offsets of ``topic``, partition by partition (-1: none)."""
    from ferrokafka import AIOKafkaConsumer, TopicPartition

    async with AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group) as consumer:
        got = [await consumer.committed(TopicPartition(topic, p)) for p in range(partitions)]
    return [-1 if offset is None else offset for offset in got]


async def transaction_version(bootstrap: str) -> int:
    """The cluster's finalized ``transaction.version`` (0 when it has none: Kafka 3.x)."""
    from ferrokafka.client import AIOKafkaClient

    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        await client.refresh_metadata()
        return client.finalized_feature("transaction.version")
