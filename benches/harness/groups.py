"""W7, group timings, for the Python clients (run in a child process by ``child``; the Java
client does the same in tools/java/BenchGroup.java).

Member 1 starts alone in a new group on a topic that holds records: the time from its
construction to its first record (``first_record_s``). Members 2 and 3 join and the group
settles; then member 4 is constructed: the time until the four hold disjoint, balanced
assignments covering every partition (``settle_s``). Every member polls every 100 ms, with
the client's default group settings (heartbeat interval 3 s for all of them).
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

POLL_S = 0.1
WAIT_S = 120.0


def settled(assigned: dict[int, set[int]], n: int, partitions: int) -> bool:
    """``n`` members, disjoint, covering every partition, sizes differing by at most one."""
    if len(assigned) != n:
        return False
    sizes = [len(s) for s in assigned.values()]
    if min(sizes) < partitions // n or max(sizes) > -(-partitions // n):
        return False
    return sum(sizes) == partitions and len(set().union(*assigned.values())) == partitions


class Members:
    """What the members report (from any thread) and the waits on it."""

    def __init__(self, partitions: int) -> None:
        self.partitions = partitions
        self.assigned: dict[int, set[int]] = {}
        self.first_record: dict[int, float] = {}
        self.stop = False

    def saw_records(self, member: int) -> None:
        self.first_record.setdefault(member, time.perf_counter())

    def wait(self, done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while not done():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} in {WAIT_S:.0f}s: {self.assigned}")
            time.sleep(0.01)

    async def await_(self, done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT_S
        while not done():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {what} in {WAIT_S:.0f}s: {self.assigned}")
            await asyncio.sleep(0.01)


async def run_async(spec: dict[str, Any]) -> dict[str, Any]:
    """ferrokafka (classic or KIP-848 protocol) and aiokafka: members are tasks of one loop."""
    if spec["client"].startswith("ferrokafka"):
        import ferrokafka as mod
    else:
        import aiokafka as mod
    extra: dict[str, Any] = {}
    if spec["client"] == "ferrokafka-kip848":
        extra["group_protocol"] = "consumer"
    group = f"bench-w7-{uuid.uuid4().hex[:10]}"
    m = Members(spec["partitions"])

    async def member(i: int) -> None:
        c = mod.AIOKafkaConsumer(
            bootstrap_servers=spec["bootstrap"],
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **extra,
        )
        c.subscribe([spec["topic"]])
        await c.start()
        try:
            while not m.stop:
                if await c.getmany(timeout_ms=int(POLL_S * 1000)):
                    m.saw_records(i)
                m.assigned[i] = {tp.partition for tp in c.assignment()}
        finally:
            await c.stop()

    tasks: list[asyncio.Future[None]] = []

    def failed() -> bool:
        for t in tasks:
            if t.done() and t.exception() is not None:
                raise RuntimeError(f"a member failed: {t.exception()!r}")
        return False

    t0 = time.perf_counter()
    tasks.append(asyncio.ensure_future(member(0)))
    try:
        await m.await_(lambda: failed() or 0 in m.first_record, "first record")
        first = m.first_record[0] - t0
        tasks += [asyncio.ensure_future(member(i)) for i in (1, 2)]
        await m.await_(
            lambda: failed() or settled(m.assigned, 3, m.partitions), "three-member group"
        )
        t1 = time.perf_counter()
        tasks.append(asyncio.ensure_future(member(3)))
        await m.await_(
            lambda: failed() or settled(m.assigned, 4, m.partitions), "four-member group"
        )
        settle = time.perf_counter() - t1
    finally:
        m.stop = True
        await asyncio.gather(*tasks, return_exceptions=True)
    return {"first_record_s": first, "settle_s": settle}


def run_confluent(spec: dict[str, Any]) -> dict[str, Any]:
    """confluent-kafka: members are threads, each with its own ``Consumer``."""
    import confluent_kafka

    group = f"bench-w7-{uuid.uuid4().hex[:10]}"
    m = Members(spec["partitions"])
    errors: list[BaseException] = []

    def member(i: int) -> None:
        try:
            c = confluent_kafka.Consumer(
                {
                    "bootstrap.servers": spec["bootstrap"],
                    "group.id": group,
                    "auto.offset.reset": "earliest",
                    "enable.auto.commit": False,
                }
            )
            c.subscribe([spec["topic"]])
            try:
                while not m.stop:
                    if c.consume(num_messages=10000, timeout=POLL_S):
                        m.saw_records(i)
                    m.assigned[i] = {tp.partition for tp in c.assignment()}
            finally:
                c.close()
        except BaseException as exc:
            errors.append(exc)

    def start(i: int) -> threading.Thread:
        t = threading.Thread(target=member, args=(i,), daemon=True)
        t.start()
        return t

    def failed() -> bool:
        if errors:
            raise RuntimeError(f"a member failed: {errors[0]!r}")
        return False

    threads = []
    t0 = time.perf_counter()
    threads.append(start(0))
    try:
        m.wait(lambda: failed() or 0 in m.first_record, "first record")
        first = m.first_record[0] - t0
        threads += [start(1), start(2)]
        m.wait(lambda: failed() or settled(m.assigned, 3, m.partitions), "three-member group")
        t1 = time.perf_counter()
        threads.append(start(3))
        m.wait(lambda: failed() or settled(m.assigned, 4, m.partitions), "four-member group")
        settle = time.perf_counter() - t1
    finally:
        m.stop = True
        for t in threads:
            t.join(60)
    return {"first_record_s": first, "settle_s": settle}


def run(spec: dict[str, Any]) -> dict[str, Any]:
    if spec["client"] == "confluent-kafka":
        return run_confluent(spec)
    return asyncio.run(run_async(spec))
