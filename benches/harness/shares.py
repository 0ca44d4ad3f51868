"""W9, share groups (KIP-932), for the Python clients (run in a child process by ``child``; the
Java members are tools/java/ShareMember.java, one JVM each, started by ``workloads``).

The ``members`` members of one fresh share group (its ``share.auto.offset.reset`` set to
earliest by ``configure_group`` before any joins) run in this one process: ferrokafka's as
tasks of one event loop, confluent-kafka's as threads. They start together; the run ends when
they have received, together, as many records as the dataset holds. The time is from the first
record received (a poll that returned records) to the last; ``cpu`` is the process's CPU time
over the same span. Each record's (partition, offset) is kept while it runs and checked after
it: every record of the dataset, none twice.
"""

from __future__ import annotations

import asyncio
import threading
import time
from array import array
from collections.abc import Callable
from typing import Any

from .tally import emit, peak_rss_mb

POLL_MS = 100
#: A ``{"progress": n}`` line each time this many more records came (the stall watchdog's
#: signal).
PROGRESS_EVERY = 10_000


async def configure_group(bootstrap: str, group: str) -> None:
    """``share.auto.offset.reset=earliest`` for ``group`` (a new share group starts at the
    latest offset otherwise), set before any member joins."""
    from ferrokafka.admin import AIOKafkaAdminClient, ConfigResource, ConfigResourceType

    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.alter_configs(
            [
                ConfigResource(
                    ConfigResourceType.GROUP, group, {"share.auto.offset.reset": "earliest"}
                )
            ]
        )


class Received:
    """What the members received: counts per member, (partition, offset) per partition, the
    first and last record's times. Updated once per poll (per record by ``async for``); the
    threads of confluent-kafka's members hold ``lock`` around ``add``."""

    def __init__(self, expected: int, partitions: int, members: int) -> None:
        self.expected = expected
        self.count = 0
        self.per_member = [0] * members
        self.offsets = [array("q") for _ in range(partitions)]
        self.first: float | None = None
        self.last: float | None = None
        self.cpu_first = self.cpu_last = 0.0
        #: Set when every record has come (``complete``), or by the runner on a member's
        #: failure or at its deadline: the members stop after their current poll.
        self.stop = threading.Event()
        self.complete = False
        #: Called (in the member's thread) when ``complete`` becomes true.
        self.on_complete: Callable[[], None] | None = None
        self.lock = threading.Lock()
        self._next_progress = 0

    def add(self, member: int, n: int) -> None:
        """``n`` records came to ``member`` in one poll (their offsets already kept). Light
        enough to call per record (``async for``): the clock is read at the first record and
        at the last only."""
        if self.first is None:
            self.first = time.perf_counter()
            self.cpu_first = time.process_time()
        self.count += n
        self.per_member[member] += n
        if self.count >= self._next_progress:
            self._next_progress = self.count + PROGRESS_EVERY
            emit(progress=self.count)
        if self.count >= self.expected and not self.complete:
            self.last = time.perf_counter()
            self.cpu_last = time.process_time()
            self.complete = True
            self.stop.set()
            if self.on_complete is not None:
                self.on_complete()

    def check(self, counts: list[int]) -> dict[str, Any]:
        """Every (partition, offset) of the dataset (``counts`` records per partition), once."""
        got: list[list[int]] = [list(a) for a in self.offsets]
        missing = duplicates = outside = 0
        for p, n in enumerate(counts):
            offsets = got[p] if p < len(got) else []
            distinct = set(offsets)
            duplicates += len(offsets) - len(distinct)
            inside = {o for o in distinct if 0 <= o < n}
            outside += len(distinct) - len(inside)
            missing += n - len(inside)
        return {"missing": missing, "duplicates": duplicates, "outside": outside}

    def result(self, counts: list[int]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "count": self.count,
            "per_member": self.per_member,
            "complete": self.complete,
        }
        if self.complete and self.first is not None and self.last is not None:
            out["wall"] = self.last - self.first
            out["cpu"] = self.cpu_last - self.cpu_first
        out["rss_mb"] = peak_rss_mb()  # the members are closed; before the check below
        out.update(self.check(counts))
        return out


# -- ferrokafka: members are tasks of one event loop -----------------------------------------


async def _getmany(i: int, consumer: Any, got: Received) -> None:
    """``getmany``, implicit acknowledgement (the next poll accepts what this one returned)."""
    offsets = got.offsets
    while not got.stop.is_set():
        data = await consumer.getmany(timeout_ms=POLL_MS)
        if not data:
            continue
        n = 0
        for tp, records in data.items():
            offsets[tp.partition].extend([r.offset for r in records])
            n += len(records)
        got.add(i, n)


async def _explicit(i: int, consumer: Any, got: Received) -> None:
    """``getmany``, ``acknowledge(record)`` for each, then ``await commit()`` (Java's
    ``commitSync()`` after each poll)."""
    offsets = got.offsets
    acknowledge = consumer.acknowledge
    while not got.stop.is_set():
        data = await consumer.getmany(timeout_ms=POLL_MS)
        if not data:
            continue
        n = 0
        for tp, records in data.items():
            kept = offsets[tp.partition]
            for r in records:
                acknowledge(r)
                kept.append(r.offset)
            n += len(records)
        got.add(i, n)
        await consumer.commit()


async def _arrow(i: int, consumer: Any, got: Received) -> None:
    """``getmany_arrow``: a ``pyarrow.RecordBatch`` per partition; its rows are counted and its
    offsets copied out for the check. (Keeping the column itself would keep the whole batch:
    its columns arrive as one Arrow struct array, whose buffers are released together.)"""
    offsets = got.offsets
    while not got.stop.is_set():
        data = await consumer.getmany_arrow(timeout_ms=POLL_MS)
        if not data:
            continue
        n = 0
        for tp, batch in data.items():
            offsets[tp.partition].frombytes(batch.column("offset").to_numpy().tobytes())
            n += batch.num_rows
        got.add(i, n)


async def _async_for(i: int, consumer: Any, got: Received) -> None:
    """``async for record in consumer`` (implicit acknowledgement): one record at a time."""
    offsets = got.offsets
    async for r in consumer:
        offsets[r.partition].append(r.offset)
        got.add(i, 1)
        if got.stop.is_set():
            return


MEMBERS = {
    "ferrokafka-share": _getmany,
    "ferrokafka-share-async-for": _async_for,
    "ferrokafka-share-arrow": _arrow,
    "ferrokafka-share-explicit": _explicit,
}


async def run_ferrokafka(spec: dict[str, Any], got: Received) -> None:
    import ferrokafka

    if spec["client"] == "ferrokafka-share-arrow":
        import pyarrow  # noqa: F401  (imported before the members start)
    extra = {}
    if spec["client"] == "ferrokafka-share-explicit":
        extra["share_acknowledgement_mode"] = "explicit"
    member = MEMBERS[spec["client"]]
    consumers = [
        ferrokafka.AIOKafkaShareConsumer(
            spec["topic"], bootstrap_servers=spec["bootstrap"], group_id=spec["group"], **extra
        )
        for _ in range(spec["members"])
    ]
    complete = asyncio.Event()
    got.on_complete = complete.set
    tasks: list[asyncio.Task[None]] = []
    try:
        await asyncio.gather(*(c.start() for c in consumers))
        tasks = [asyncio.ensure_future(member(i, c, got)) for i, c in enumerate(consumers)]
        waiter = asyncio.ensure_future(complete.wait())
        pending: set[asyncio.Future[Any]] = {waiter, *tasks}
        deadline = time.monotonic() + spec["deadline_s"]
        # Until every record came, a member failed, or the deadline (the result says how many
        # came); a member that returned without an error (`async for` after stop) is waited out.
        while waiter in pending and time.monotonic() < deadline:
            done, pending = await asyncio.wait(
                pending, timeout=deadline - time.monotonic(), return_when=asyncio.FIRST_COMPLETED
            )
            for t in done:
                if t is not waiter and t.exception() is not None:
                    raise RuntimeError(f"a member failed: {t.exception()!r}") from t.exception()
        waiter.cancel()
    finally:
        got.stop.set()  # the members still polling stop after this poll
        # stop() ends a waiting poll (an `async for` returns): the members' tasks end.
        await asyncio.gather(*(c.stop() for c in consumers), return_exceptions=True)
        await asyncio.gather(*tasks, return_exceptions=True)
    for t in tasks:
        if not t.cancelled() and t.exception() is not None:
            raise RuntimeError(f"a member failed: {t.exception()!r}") from t.exception()


# -- confluent-kafka: members are threads, each with its own ShareConsumer ---------------------


def run_confluent(spec: dict[str, Any], got: Received) -> None:
    """``ShareConsumer.poll()`` (a batch of messages), implicit acknowledgement."""
    import confluent_kafka

    errors: list[BaseException] = []
    started = threading.Barrier(spec["members"] + 1)

    def member(i: int) -> None:
        try:
            consumer = confluent_kafka.ShareConsumer(
                {"bootstrap.servers": spec["bootstrap"], "group.id": spec["group"]}
            )
        except BaseException as exc:
            errors.append(exc)
            started.abort()
            return
        try:
            consumer.subscribe([spec["topic"]])
            started.wait()
            offsets = got.offsets
            while not got.stop.is_set():
                messages = consumer.poll(POLL_MS / 1000)
                if not messages:
                    continue
                n = 0
                for msg in messages:
                    if msg.error():
                        raise RuntimeError(str(msg.error()))
                    offsets[msg.partition()].append(msg.offset())
                    n += 1
                with got.lock:
                    got.add(i, n)
        except BaseException as exc:
            errors.append(exc)
            got.stop.set()
        finally:
            consumer.close()

    threads = [
        threading.Thread(target=member, args=(i,), daemon=True) for i in range(spec["members"])
    ]
    for t in threads:
        t.start()
    try:
        started.wait()
        got.stop.wait(spec["deadline_s"])
    except threading.BrokenBarrierError:
        pass
    finally:
        got.stop.set()
        for t in threads:
            t.join(60)
    if errors:
        raise RuntimeError(f"a member failed: {errors[0]!r}") from errors[0]


def run(spec: dict[str, Any]) -> dict[str, Any]:
    got = Received(spec["expected"], len(spec["counts"]), spec["members"])
    if spec["client"] == "confluent-kafka-share":
        run_confluent(spec, got)
    else:
        asyncio.run(run_ferrokafka(spec, got))
    return got.result(spec["counts"])
