"""Share groups across processes and clients: ferrokafka members beside Java
``KafkaShareConsumer`` members (kafka-clients 4.2) in one share group take every record exactly
once between them; a member killed while holding records has them redelivered, one delivery
more; ``ferrokafka share consume`` releases and accepts."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ferrokafka import AIOKafkaShareConsumer
from ferrokafka.testing import resolve_kafka

from .share_util import configure_share_group, poll_until, produce_current, quiet_for

pytestmark = pytest.mark.integration

JAVA_MEMBER = Path(__file__).resolve().parents[2] / "tools" / "java" / "ShareMember.java"


async def test_ferrokafka_and_java_members_share_one_group(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    group = f"share-mixed-{topic}"
    per_partition = 20_000
    await configure_share_group(bootstrap_servers, group, share_auto_offset_reset="earliest")
    await produce_current(bootstrap_servers, topic, 2, per_partition)
    java = [
        await asyncio.create_subprocess_exec(
            "java",
            "-cp",
            resolve_kafka().classpath,
            str(JAVA_MEMBER),
            bootstrap_servers,
            group,
            topic,
            "0",
            "8000",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    seen: Counter[tuple[int, int]] = Counter()
    total = 2 * per_partition
    ours = 0
    # Each Java member prints a line per record as it goes ("partition offset deliveryCount"),
    # then a JSON summary: read as they come, so ferrokafka's members know when every record
    # has been taken by someone (and a Java member never blocks on a full pipe).
    java_lines: list[list[str]] = [[] for _ in java]

    async def read_java(proc: asyncio.subprocess.Process, lines: list[str]) -> bytes:
        assert proc.stdout is not None and proc.stderr is not None
        errors = asyncio.create_task(proc.stderr.read())
        async for raw in proc.stdout:
            line = raw.decode().strip()
            lines.append(line)
            if not line.startswith("{"):
                partition, offset, count = map(int, line.split())
                assert count == 1, line
                seen[(partition, offset)] += 1
        await proc.wait()
        return await errors

    readers = [
        asyncio.create_task(read_java(p, ls)) for p, ls in zip(java, java_lines, strict=True)
    ]
    # The Java members start first (a JVM takes seconds): once each has its first records,
    # ferrokafka's join them.
    deadline = time.monotonic() + 90
    while not all(java_lines):
        for reader in readers:
            if reader.done():  # a Java member ended before its first record: why
                raise AssertionError(reader.result().decode()[-3000:])
        assert time.monotonic() < deadline, "a Java member had no record after 90 s"
        await asyncio.sleep(0.05)
    refused: list[Any] = []
    members = [
        AIOKafkaShareConsumer(
            topic,
            bootstrap_servers=bootstrap_servers,
            group_id=group,
            acknowledgement_commit_callback=lambda o, e: e is None or refused.append((o, e)),
        )
        for _ in range(2)
    ]

    async def work(member: AIOKafkaShareConsumer[Any, Any]) -> None:
        nonlocal ours
        # Until every record was taken by some member: the Java members end on their own after
        # 8 s without records, and on a loaded machine a member can go that long between
        # assignments; a minute without records anywhere ends the test's wait (and fails it).
        idle_since = time.monotonic()
        while len(seen) < total and time.monotonic() - idle_since < 60:
            data = await member.getmany(timeout_ms=200, max_records=50)
            for tp, records in data.items():
                for r in records:
                    seen[(tp.partition, r.offset)] += 1
                    ours += 1
            if data:
                idle_since = time.monotonic()
                await asyncio.sleep(0.005)  # some work per poll

    try:
        await asyncio.gather(*(m.start() for m in members))
        await asyncio.wait_for(asyncio.gather(*(work(m) for m in members)), 180)
    finally:
        await asyncio.gather(*(m.stop() for m in members))
    theirs = 0
    for proc, lines, reader in zip(java, java_lines, readers, strict=True):
        err = await asyncio.wait_for(reader, 120)
        assert proc.returncode == 0, err.decode()[-3000:]
        summary = json.loads(lines[-1])
        assert summary["records"] == len(lines) - 1
        theirs += summary["records"]
    missing = sorted({(p, o) for p in (0, 1) for o in range(per_partition)} - set(seen))
    assert not refused, refused[:3]
    assert not missing, (
        "every record was taken by some member",
        ours,
        theirs,
        missing[:3],
        missing[-3:],
    )
    assert set(seen.values()) == {1}, "and by one member only, once"
    assert ours > 0 and theirs > 0, (ours, theirs)


_HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from ferrokafka import AIOKafkaShareConsumer

    async def main():
        bootstrap, group, topic = sys.argv[1:4]
        consumer = AIOKafkaShareConsumer(
            topic, bootstrap_servers=bootstrap, group_id=group,
            share_acknowledgement_mode="explicit",
        )
        await consumer.start()
        while True:
            data = await consumer.getmany(timeout_ms=500)
            if data:
                offsets = sorted(r.offset for rs in data.values() for r in rs)
                print(" ".join(map(str, offsets)), flush=True)
                await asyncio.sleep(3600)  # holds them, unanswered, until killed

    asyncio.run(main())
    """
)


async def test_records_of_a_killed_member_come_back(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=1)
    group = f"share-killed-{topic}"
    await configure_share_group(
        bootstrap_servers,
        group,
        share_auto_offset_reset="earliest",
        share_record_lock_duration_ms="15000",
    )
    await produce_current(bootstrap_servers, topic, 1, 30)
    holder = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _HOLDER,
        bootstrap_servers,
        group,
        topic,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert holder.stdout is not None
    try:
        line = await asyncio.wait_for(holder.stdout.readline(), 60)
    finally:
        holder.send_signal(signal.SIGKILL)
        _, err = await holder.communicate()
    held = [int(o) for o in line.split()]
    assert held, err.decode()[-2000:]
    killed_at = time.monotonic()
    async with AIOKafkaShareConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group
    ) as survivor:
        got = await poll_until(survivor, lambda got: len(got) >= 30, timeout=60)
        waited = time.monotonic() - killed_at
        assert await quiet_for(survivor, 1) == []
    by_offset = {r.offset: r.delivery_count for r in got}
    assert sorted(by_offset) == list(range(30))
    assert {o: by_offset[o] for o in held} == dict.fromkeys(held, 2), "redelivered, one more"
    assert {c for o, c in by_offset.items() if o not in held} <= {1}
    # Within the lock's 15 s, or sooner: the broker also releases what a share session held
    # when the session's connection goes.
    assert waited < 45, waited


def test_the_command_line_releases_then_accepts(bootstrap_servers: str, make_topic: Any) -> None:
    topic = make_topic(partitions=1)
    group = f"share-cli-{topic}"
    asyncio.run(produce_current(bootstrap_servers, topic, 1, 3))
    base = [sys.executable, "-m", "ferrokafka", "share", "consume", "-b", bootstrap_servers]
    base += ["-g", group, "-t", topic, "--format", "json", "--idle-ms", "3000"]

    def run(*extra: str) -> list[dict[str, Any]]:
        proc = subprocess.run(base + list(extra), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return [json.loads(line) for line in proc.stdout.splitlines()]

    released = run("--auto-offset-reset", "earliest", "--ack", "release", "-c", "3")
    assert [(r["offset"], r["delivery_count"]) for r in released] == [(0, 1), (1, 1), (2, 1)]
    accepted = run()
    assert [r["offset"] for r in accepted] == [0, 1, 2]
    # Delivered again, one count higher per acquisition: 2, or 3 when the first run's fetch
    # in flight took the released records back before it stopped (and stopping released them),
    # as a Java share consumer's prefetch may.
    counts = {r["delivery_count"] for r in accepted}
    assert counts in ({2}, {3}), counts
    assert run() == []
