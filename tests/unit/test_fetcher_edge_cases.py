"""The consumer's fetcher against a scripted peer, for what a real broker will not do on cue:
fetch-session errors, a diverging leader epoch (log truncation, KIP-320), a NOT_LEADER answer,
a corrupt batch on the wire. The partition's log lives here as encoded record batches."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition, _native
from ferrokafka import errors as Errors
from ferrokafka.consumer.subscription_state import OffsetResetStrategy
from ferrokafka.records import encode_batch

from .fake_broker import FakeBroker, metadata_reply

TOPIC = "t"
TOPIC_ID = uuid.UUID(int=0x1234).bytes


def batch(p: int, base: int) -> list[Any]:
    return [(1000 + i, None, b"%d-%d" % (p, i), []) for i in range(base, base + 10)]


class Log:
    """One topic of ``partitions`` partitions led by node 1 (the fake broker), and a script of
    answers to inject into Fetch responses."""

    def __init__(self, partitions: int = 1, records: int = 30) -> None:
        self.port = 0
        self.partitions = partitions
        self.batches: dict[int, list[tuple[int, bytes]]] = {}
        for p in range(partitions):
            self.batches[p] = [
                (
                    base,
                    encode_batch(
                        [(1000 + i, None, b"%d-%d" % (p, i), []) for i in range(base, base + 10)],
                        base_offset=base,
                    ),
                )
                for base in range(0, records, 10)
            ]
        self.leader_epoch = 5
        self.top_errors: list[int] = []
        self.partition_errors: dict[int, list[int]] = {}
        self.diverging: dict[int, tuple[int, int]] = {}
        self.session_id = 77
        self.fetches: list[dict[str, Any]] = []
        self.session: dict[int, int] = {}
        self.metadata_requests = 0

    def end(self, p: int) -> int:
        return self.batches[p][-1][0] + 10 if self.batches[p] else 0

    async def handle(self, key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        if key == 3:
            self.metadata_requests += 1
            reply = metadata_reply(
                self.port,
                TOPIC,
                self.partitions,
                topic_id=TOPIC_ID,
                leader_epoch=self.leader_epoch,
            )
            return _native.encode_response(key, version, corr, reply)
        if key == 2:
            topics = []
            for t in body["topics"]:
                parts = []
                for p in t["partitions"]:
                    offset = 0 if p["timestamp"] == -2 else self.end(p["partition_index"])
                    parts.append(
                        {
                            "partition_index": p["partition_index"],
                            "error_code": 0,
                            "timestamp": -1,
                            "offset": offset,
                            "leader_epoch": self.leader_epoch,
                        }
                    )
                topics.append({"name": t["name"], "partitions": parts})
            return _native.encode_response(key, version, corr, {"topics": topics})
        assert key == 1, f"unexpected api key {key}"
        self.fetches.append(body)
        await asyncio.sleep(0.01)
        if self.top_errors:
            error = self.top_errors.pop(0)
            reply = {"error_code": error, "session_id": 0, "responses": []}
            return _native.encode_response(key, version, corr, reply)
        # A fetch session as the broker keeps it (KIP-227): a full request replaces it, an
        # incremental one updates the partitions it names and drops the forgotten ones.
        full = body["session_id"] == 0 or body["session_epoch"] == 0
        if full:
            self.session = {}
        for t in body["topics"]:
            for fp in t["partitions"]:
                self.session[fp["partition"]] = fp["fetch_offset"]
        for t in body["forgotten_topics_data"]:
            for p in t["partitions"]:
                self.session.pop(p, None)
        parts = []
        for p, fetch_offset in sorted(self.session.items()):
            errors = self.partition_errors.get(p)
            out: dict[str, Any] = {
                "partition_index": p,
                "error_code": errors.pop(0) if errors else 0,
                "high_watermark": self.end(p),
                "last_stable_offset": self.end(p),
                "log_start_offset": 0,
                "aborted_transactions": None,
                "preferred_read_replica": -1,
                "records": b"",
            }
            if p in self.diverging:
                epoch, end = self.diverging.pop(p)
                out["diverging_epoch"] = {"epoch": epoch, "end_offset": end}
            elif not out["error_code"]:
                out["records"] = b"".join(
                    raw for base, raw in self.batches[p] if base + 10 > fetch_offset
                )
            changed = out["records"] or out["error_code"] or "diverging_epoch" in out
            if full or changed:
                parts.append(out)
        reply = {
            "error_code": 0,
            "session_id": self.session_id,
            "responses": [{"topic_id": TOPIC_ID, "partitions": parts}] if parts else [],
        }
        return _native.encode_response(key, version, corr, reply)


@pytest.fixture
def log() -> Iterator[Log]:
    yield Log()


async def start(log: Log, **config: Any) -> tuple[FakeBroker, AIOKafkaConsumer[Any, Any]]:
    broker = await FakeBroker(log.handle).start()
    log.port = broker.port
    consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
        bootstrap_servers=f"127.0.0.1:{broker.port}",
        **{
            "auto_offset_reset": "earliest",
            "fetch_max_wait_ms": 10,
            "retry_backoff_ms": 10,
            **config,
        },
    )
    await consumer.start()
    consumer.assign([TopicPartition(TOPIC, p) for p in range(log.partitions)])
    return broker, consumer


async def read(consumer: AIOKafkaConsumer[Any, Any], n: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(200):
        for records in (await consumer.getmany(timeout_ms=50)).values():
            out.extend(records)
        if len(out) >= n:
            return out
    raise AssertionError(f"read {len(out)} of {n}")


async def test_fetch_session_incremental_requests_and_reset(log: Log) -> None:
    log.partitions = 2
    log.batches[1] = []  # partition 1 stays empty: the session stops resending it
    broker, consumer = await start(log)
    try:
        got = await read(consumer, 30)
        assert [r.offset for r in got] == list(range(30))
        first = log.fetches[0]
        assert (first["session_id"], first["session_epoch"]) == (0, 0)
        assert {p["partition"] for t in first["topics"] for p in t["partitions"]} == {0, 1}
        for _ in range(100):  # the consumer keeps fetching in the background
            if len(log.fetches) >= 3:
                break
            await asyncio.sleep(0.02)
        later = log.fetches[-1]
        assert later["session_id"] == 77 and later["session_epoch"] >= 1
        sent = {p["partition"] for t in later["topics"] for p in t["partitions"]}
        assert 1 not in sent, "an unchanged partition was resent in the session"
        # The broker forgets the session: the next request is a full one, and nothing is lost.
        log.top_errors.append(Errors.FetchSessionIdNotFound.errno)
        log.batches[0].append((30, encode_batch([(1, None, b"x", [])], base_offset=30)))
        count = len(log.fetches)
        got = await read(consumer, 1)
        assert [r.offset for r in got] == [30]
        assert not log.top_errors, "the session error was never answered"
        restarts = [(f["session_id"], f["session_epoch"]) for f in log.fetches[count:]]
        assert (0, 0) in restarts, restarts
    finally:
        await consumer.stop()
        await broker.stop()


async def test_not_leader_refreshes_metadata_and_retries(log: Log) -> None:
    log.partition_errors[0] = [Errors.NotLeaderForPartitionError.errno] * 2
    broker, consumer = await start(log)
    try:
        before = log.metadata_requests
        got = await read(consumer, 30)
        assert [r.offset for r in got] == list(range(30))
        assert log.metadata_requests > before
    finally:
        await consumer.stop()
        await broker.stop()


async def test_log_truncation_with_reset_none_raises(log: Log) -> None:
    broker, consumer = await start(log, auto_offset_reset="none")
    tp = TopicPartition(TOPIC, 0)
    try:
        consumer.seek(tp, 0)
        got = await read(consumer, 30)
        assert len(got) == 30
        assert consumer._subscription.state(tp).position_epoch == -1  # batches carry epoch -1
        log.diverging[0] = (4, 12)  # the new leader's log ends at 12 for our epoch
        with pytest.raises(Errors.LogTruncationError, match="truncated to offset 12") as info:
            for _ in range(100):
                await consumer.getmany(timeout_ms=50)
        assert info.value.divergent_offsets == {tp: 12}
        consumer.seek(tp, 12)
        got = await read(consumer, 18)
        assert [r.offset for r in got] == list(range(12, 30))
    finally:
        await consumer.stop()
        await broker.stop()


async def test_log_truncation_with_a_reset_policy_continues_from_the_divergence(log: Log) -> None:
    broker, consumer = await start(log)
    tp = TopicPartition(TOPIC, 0)
    try:
        await read(consumer, 30)
        log.diverging[0] = (4, 12)
        got = await read(consumer, 18)
        assert [r.offset for r in got] == list(range(12, 30))
        assert await consumer.position(tp) == 30
    finally:
        await consumer.stop()
        await broker.stop()


async def test_corrupt_batch_raises_and_keeps_the_position(log: Log) -> None:
    base, raw = log.batches[0][1]
    bad = bytearray(raw)
    bad[-1] ^= 0xFF  # a flipped byte in the last record: the CRC no longer matches
    log.batches[0][1] = (base, bytes(bad))
    broker, consumer = await start(log)
    tp = TopicPartition(TOPIC, 0)
    try:
        got = await read(consumer, 10)
        assert [r.offset for r in got] == list(range(10))
        with pytest.raises(Errors.CorruptRecordException, match=r"t.*0.*10") as info:
            for _ in range(100):
                await consumer.getmany(timeout_ms=50)
        assert "crc" in str(info.value).lower()
        assert await consumer.position(tp) == 10, "a corrupt batch must not move the position"
        consumer.seek(tp, 20)  # the application skips the bad batch
        got = await read(consumer, 10)
        assert [r.offset for r in got] == list(range(20, 30))
    finally:
        await consumer.stop()
        await broker.stop()


async def test_a_reset_between_scheduling_a_fetch_and_its_start_costs_nothing(log: Log) -> None:
    """A fetch is scheduled (a task made) for a partition whose position is then reset before
    the task first runs, as a cancelled seek_to_beginning() in the middle of fetching can do:
    the fetch starts where the state said when it was scheduled, its answer is dropped as
    stale, and the partition is fetched again from the new position (before, the task died
    on the missing position and left the node marked busy: nothing was fetched again)."""
    broker, consumer = await start(log)
    tp = TopicPartition(TOPIC, 0)
    fetcher = consumer._fetcher
    assert fetcher is not None
    try:
        assert [r.offset for r in await read(consumer, 30)] == list(range(30))
        consumer.pause(tp)
        for _ in range(200):
            if all(node.task is None for node in fetcher._nodes.values()):
                break
            await asyncio.sleep(0.01)
        # No await from here to the reset: the task is made but has not run.
        consumer.resume(tp)
        fetcher._start_fetches()
        assert any(node.task is not None for node in fetcher._nodes.values())
        consumer._subscription.request_reset(tp, OffsetResetStrategy.EARLIEST)
        await asyncio.wait_for(consumer.seek_to_beginning(tp), 5)
        assert [r.offset for r in await read(consumer, 30)] == list(range(30))
    finally:
        await consumer.stop()
        await broker.stop()
