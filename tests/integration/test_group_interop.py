"""ferrokafka and Java ``KafkaConsumer`` members (kafka-clients from Maven) in one group: the
partitions are split between them, and Kafka's own ``ConsumerGroupCommand --describe`` shows
the ferrokafka members, their assignments and their lag."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka.coordinator.assignors.range import RangePartitionAssignor
from ferrokafka.coordinator.assignors.sticky.sticky_assignor import (
    CooperativeStickyPartitionAssignor,
)
from ferrokafka.testing import kafka_version, resolve_jars, resolve_kafka

from .produce_util import produce_values
from .test_group import FAST, poll_all

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
JAVA_MEMBER = ROOT / "tools" / "java" / "GroupMember.java"


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


async def test_java_and_ferrokafka_members_share_a_group_range(
    bootstrap_servers: str, make_topic: Any
) -> None:
    await _shared_group(bootstrap_servers, make_topic, "range", RangePartitionAssignor)


async def test_java_and_ferrokafka_members_share_a_group_cooperative_sticky(
    bootstrap_servers: str, make_topic: Any
) -> None:
    await _shared_group(
        bootstrap_servers, make_topic, "cooperative-sticky", CooperativeStickyPartitionAssignor
    )


async def _shared_group(bootstrap: str, make_topic: Any, name: str, assignor: Any) -> None:
    topic = make_topic(partitions=12)
    group = f"g-{topic}"
    await produce_values(bootstrap, topic, 12, 20)
    java = [await JavaMember.start(bootstrap, group, topic, name) for _ in range(2)]
    ours: list[AIOKafkaConsumer[Any, Any]] = []
    for _ in range(2):
        c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            partition_assignment_strategy=(assignor,),
            **FAST,
        )
        c.subscribe([topic])
        await c.start()
        ours.append(c)
    try:
        deadline = time.monotonic() + 90
        while True:
            await poll_all(ours)
            sets = [c.assignment() for c in ours] + [j.assignment for j in java]
            sizes = [len(s) for s in sets]
            if sum(sizes) == 12 and len(set().union(*sets)) == 12 and sizes == [3, 3, 3, 3]:
                break
            assert time.monotonic() < deadline, f"no complete split: {sets}"
        positions = {}
        for c in ours:
            for tp in c.assignment():
                positions[tp] = await c.position(tp)
            await asyncio.wait_for(c.commit(), 60)
        # In a thread: the members keep heartbeating while the JVM runs.
        described = await asyncio.wait_for(asyncio.to_thread(describe, bootstrap, group), 120)
        for tp, position in positions.items():
            row = next(r for r in described if r[:2] == [topic, str(tp.partition)])
            assert "ferrokafka" in " ".join(row[5:]), row  # consumer and client id
            current, end, lag = row[2:5]
            assert (int(current), int(end), int(lag)) == (position, 20, 20 - position), row
    finally:
        for c in ours:
            await c.stop()
        for j in java:
            await j.stop()


def describe(bootstrap: str, group: str) -> list[list[str]]:
    """Rows of ``kafka-consumer-groups --describe``: TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET
    LAG CONSUMER-ID HOST CLIENT-ID (after GROUP)."""
    tools = resolve_jars([f"org.apache.kafka:kafka-tools:{kafka_version()}"]).classpath
    cmd = [
        "java",
        "-cp",
        f"{resolve_kafka().classpath}:{tools}",
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "--bootstrap-server",
        bootstrap,
        "--describe",
        "--group",
        group,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    rows = []
    for line in out.splitlines():
        cols = line.split()
        if cols and cols[0] == group:
            rows.append(cols[1:])
    assert rows, out
    return rows
