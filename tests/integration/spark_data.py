"""Test data for the Spark tests: records written with ferrokafka's producer, kept as the rows
Spark's Kafka source would show, to compare DataFrames against."""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ferrokafka import AIOKafkaProducer
from ferrokafka.admin import AIOKafkaAdminClient, NewPartitions, RecordsToDelete
from ferrokafka.structs import TopicPartition

#: Timestamps of the produced records: BASE_TS + i milliseconds. Recent, so that the broker's
#: time-based retention (7 days) does not delete them during the run.
BASE_TS = (int(time.time()) - 3600) * 1000


@dataclass(frozen=True)
class Row:
    key: bytes | None
    value: bytes | None
    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    headers: tuple[tuple[str, bytes | None], ...] | None

    def spark(self, include_headers: bool = True) -> tuple[Any, ...]:
        """The row as Spark collects it (timestamp in ms, headers as tuples or None)."""
        out: tuple[Any, ...] = (
            self.key,
            self.value,
            self.topic,
            self.partition,
            self.offset,
            self.timestamp_ms,
            0,
        )
        return (*out, self.headers) if include_headers else out


def record(i: int, partition: int) -> tuple[bytes | None, bytes | None, Any]:
    """Record ``i``'s key, value and headers: some keys and values null, half with headers."""
    key = None if i % 11 == 0 else b"key-%d" % (i % 97)
    value = (
        None
        if i % 13 == 5 and key is not None
        else (b"p%d-%06d-" % (partition, i)).ljust(40 + i % 60, b"v")
    )
    headers = [("h", b"%d" % i), ("n", None)] if i % 2 else None
    return key, value, headers


def produce_rows(
    bootstrap: str,
    topic: str,
    partitions: int,
    per_partition: int,
    *,
    compression: str | None = None,
    first: int = 0,
) -> list[Row]:
    """Write ``per_partition`` records to each partition; returns the rows, offsets included."""

    async def go() -> list[Row]:
        rows = []
        async with AIOKafkaProducer(
            bootstrap_servers=bootstrap, compression_type=compression, linger_ms=5
        ) as producer:
            futures = []
            for i in range(first, first + per_partition):
                for p in range(partitions):
                    key, value, headers = record(i, p)
                    ts = BASE_TS + i
                    fut = await producer.send(
                        topic, value, key=key, partition=p, timestamp_ms=ts, headers=headers
                    )
                    futures.append((fut, key, value, p, ts, headers))
            for fut, key, value, p, ts, headers in futures:
                meta = await fut
                rows.append(
                    Row(
                        key,
                        value,
                        topic,
                        p,
                        meta.offset,
                        ts,
                        tuple(headers) if headers else None,
                    )
                )
        return rows

    return asyncio.run(go())


def checksum(rows: Iterable[Row]) -> tuple[int, int, int]:
    """(count, sum of crc32(value), sum of offsets): what ``checksum_sql`` computes in Spark."""
    count = total = offsets = 0
    for row in rows:
        count += 1
        total += zlib.crc32(row.value) if row.value is not None else 0
        offsets += row.offset
    return count, total, offsets


CHECKSUM_SQL = ("count(*)", "coalesce(sum(crc32(value)), 0)", "coalesce(sum(offset), 0)")


def spark_rows(df: Any, include_headers: bool = True) -> list[tuple[Any, ...]]:
    """A DataFrame's rows as comparable tuples, sorted by (topic, partition, offset)."""
    out = []
    for r in df.collect():
        ts = r["timestamp"]
        base: tuple[Any, ...] = (
            None if r["key"] is None else bytes(r["key"]),
            None if r["value"] is None else bytes(r["value"]),
            r["topic"],
            r["partition"],
            r["offset"],
            round(ts.timestamp() * 1000),
            r["timestampType"],
        )
        if include_headers:
            headers = r["headers"]
            base = (
                *base,
                None
                if headers is None
                else tuple(
                    (h["key"], None if h["value"] is None else bytes(h["value"])) for h in headers
                ),
            )
        out.append(base)
    return sorted(out, key=lambda t: (t[2], t[3], t[4]))


def expected(rows: Sequence[Row], include_headers: bool = True) -> list[tuple[Any, ...]]:
    return sorted((r.spark(include_headers) for r in rows), key=lambda t: (t[2], t[3], t[4]))


def delete_records(bootstrap: str, before: dict[TopicPartition, int]) -> None:
    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.delete_records({tp: RecordsToDelete(o) for tp, o in before.items()})

    asyncio.run(go())


def add_partitions(bootstrap: str, topic: str, total: int) -> None:
    async def go() -> None:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_partitions({topic: NewPartitions(total)})

    asyncio.run(go())


def options(bootstrap: str, **more: Any) -> dict[str, Any]:
    return {"kafka.bootstrap.servers": bootstrap, **more}


def pyspark_version() -> tuple[int, int]:
    """(major, minor) of the installed PySpark, for what older releases cannot do."""
    import pyspark

    major, minor = pyspark.__version__.split(".")[:2]
    return int(major), int(minor)
