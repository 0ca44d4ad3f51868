"""What the consumer-group tests share: fast group timing, polling members until their
assignment settles, a Java ``KafkaConsumer`` member (tools/java/GroupMember.java), Kafka's own
``ConsumerGroupCommand --describe``, and a writer that keeps producing while a test does
something else."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.client import AIOKafkaClient
from ferrokafka.records import encode_batch
from ferrokafka.testing import resolve_kafka

from .java_util import kafka_tool
from .produce_util import Record, _send, value_of

ROOT = Path(__file__).resolve().parents[2]
JAVA_MEMBER = ROOT / "tools" / "java" / "GroupMember.java"

FAST: dict[str, Any] = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 500,
    "metadata_max_age_ms": 1000,
    "auto_offset_reset": "earliest",
}
"""Classic-protocol timing for tests. Under ``group_protocol="consumer"`` the session and
heartbeat timing is the broker's (the harness sets 10 s and 500 ms) and these two are unused."""


async def until(check: Callable[[], bool], timeout: float = 40.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what or check}"
        await asyncio.sleep(0.1)


async def poll_all(consumers: list[AIOKafkaConsumer[Any, Any]]) -> list[Any]:
    """One short poll of every member (keeps them alive under max_poll_interval_ms)."""
    out: list[Any] = []
    for c in consumers:
        for records in (await c.getmany(timeout_ms=50)).values():
            out.extend(records)
    return out


async def committed_offsets(
    bootstrap: str, group: str, partitions: list[TopicPartition]
) -> dict[TopicPartition, int]:
    """The group's committed offsets as another client sees them (OffsetFetch through the admin
    client): -1 where nothing is committed."""
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        got = await admin.list_consumer_group_offsets(group, partitions=partitions)
    return {tp: got[tp].offset if tp in got else -1 for tp in partitions}


def complete_split(sets: list[set[TopicPartition]], partitions: int) -> bool:
    """Every partition owned by exactly one member, the members within one of each other."""
    sizes = [len(s) for s in sets]
    return (
        len(set().union(*sets)) == partitions
        and sum(sizes) == partitions
        and max(sizes) - min(sizes) <= 1
    )


async def settle(
    consumers: list[AIOKafkaConsumer[Any, Any]], partitions: int, timeout: float = 60.0
) -> None:
    """Poll every member until their assignments are complete, disjoint and balanced."""
    deadline = time.monotonic() + timeout
    while True:
        await poll_all(consumers)
        sets = [c.assignment() for c in consumers]
        if complete_split(sets, partitions):
            return
        assert time.monotonic() < deadline, f"assignment did not settle: {sets}"


def members(n: int, bootstrap: str, topic: str, group: str, **config: Any) -> list[Any]:
    """``n`` unstarted members subscribed to ``topic`` (``FAST`` timing unless overridden;
    ``group_protocol="consumer"`` for KIP-848)."""
    out = []
    for _ in range(n):
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, group_id=group, **{**FAST, **config}
        )
        c.subscribe([topic])
        out.append(c)
    return out


class JavaMember:
    """A Java consumer in the group, its latest assignment read from its output."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.assignment: set[TopicPartition] = set()
        self.task = asyncio.ensure_future(self._read())

    @classmethod
    async def start(
        cls,
        bootstrap: str,
        group: str,
        topic: str,
        assignor: str,
        seconds: int = 90,
        protocol: str = "classic",
    ) -> JavaMember:
        """``assignor`` is a client-side assignor's name under ``protocol="classic"`` and the
        server-side one (``group.remote.assignor``) under ``protocol="consumer"``."""
        proc = await asyncio.create_subprocess_exec(
            "java",
            "-cp",
            resolve_kafka().classpath,
            str(JAVA_MEMBER),
            bootstrap,
            group,
            topic,
            assignor,
            protocol,
            str(seconds),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for line in self.proc.stdout:
            data = json.loads(line)
            self.assignment = {TopicPartition(t, p) for t, p in data["assignment"]}

    async def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.terminate()
            await self.proc.wait()
        self.task.cancel()


def describe(bootstrap: str, group: str) -> list[list[str]]:
    """Rows of ``kafka-consumer-groups --describe``: TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET
    LAG CONSUMER-ID HOST CLIENT-ID (after GROUP)."""
    out = kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "--bootstrap-server",
        bootstrap,
        "--describe",
        "--group",
        group,
    )
    rows = []
    for line in out.splitlines():
        cols = line.split()
        if cols and cols[0] == group:
            rows.append(cols[1:])
    assert rows, out
    return rows


class Writer:
    """Appends a round of ``per_round`` records to every partition of ``topic`` (acks=all,
    values ``value_of(p, i)``), again and again until ``stop()``; ``rounds`` counts the rounds
    written. The pause between rounds paces the data; nothing waits on it."""

    def __init__(
        self, bootstrap: str, topic: str, partitions: int, per_round: int = 20, pause: float = 0.1
    ) -> None:
        self.rounds = 0
        self._args = (bootstrap, topic, partitions, per_round, pause)
        self._stop = asyncio.Event()
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        bootstrap, topic, partitions, per_round, pause = self._args
        async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
            client.add_topic(topic)
            while not self._stop.is_set():
                for p in range(partitions):
                    base = self.rounds * per_round
                    records: list[Record] = [
                        (1_700_000_000_000 + i, b"k%d" % i, value_of(p, i), [])
                        for i in range(base, base + per_round)
                    ]
                    await _send(client, topic, p, encode_batch(records))
                self.rounds += 1
                await asyncio.sleep(pause)

    async def stop(self) -> int:
        """Stop after the round being written; returns how many records each partition got."""
        self._stop.set()
        await self.task
        return self.rounds * self._args[3]
