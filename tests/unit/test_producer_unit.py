"""The producer without a real broker: option checks, BatchBuilder, sequence bookkeeping, and
retry/error paths against the in-process fake peer (errors a real broker will not give on cue)."""

from __future__ import annotations

import asyncio
import struct
import time
from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.cluster import ClusterMetadata
from ferrokafka.config import ProducerConfig
from ferrokafka.partitioner import partition_for_key
from ferrokafka.producer import AIOKafkaProducer, BatchBuilder
from ferrokafka.producer.idempotence import ProducerIdState, next_sequence
from ferrokafka.producer.message_accumulator import (
    QUEUED_BATCHES,
    MessageAccumulator,
    ProducerBatch,
)
from ferrokafka.producer.sender import MAX_IN_FLIGHT, Sender
from ferrokafka.records import decode_records
from ferrokafka.structs import TopicPartition

from .fake_broker import FakeBroker, metadata_reply

TOPIC = "t"


# ---- options ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("acks", 2),
        ("acks", "none"),
        ("compression_type", "brotli"),
        ("max_batch_size", 0),
        ("max_request_size", -1),
        ("linger_ms", -5),
        ("request_timeout_ms", 0),
        ("retry_backoff_ms", -1),
        ("partitioner", "murmur2"),
        ("key_serializer", 42),
        ("value_serializer", "json"),
        ("enable_idempotence", "yes"),
        ("metadata_max_age_ms", -1),
        ("connections_max_idle_ms", 0),
        ("security_protocol", "SASL_PLAINTEXT"),
    ],
)
def test_invalid_options_raise_value_error_naming_the_option(option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=option):
        AIOKafkaProducer(**{option: value})


def test_acks_defaults_follow_aiokafka() -> None:
    assert AIOKafkaProducer()._acks == 1
    assert AIOKafkaProducer(acks="all")._acks == -1
    assert AIOKafkaProducer(acks=0)._acks == 0
    assert AIOKafkaProducer(enable_idempotence=True)._acks == -1
    with pytest.raises(ValueError, match="enable_idempotence"):
        AIOKafkaProducer(enable_idempotence=True, acks=1)


@pytest.mark.parametrize("bad", ["", 5, b"tx"])
def test_a_bad_transactional_id_raises(bad: object) -> None:
    with pytest.raises(ValueError, match="transactional_id"):
        AIOKafkaProducer(transactional_id=bad)  # type: ignore[arg-type]


def test_a_transactional_id_turns_idempotence_on() -> None:
    producer = AIOKafkaProducer(transactional_id="tx")
    assert producer._idempotence is not None and producer._acks == -1
    with pytest.raises(ValueError, match="acks"):
        AIOKafkaProducer(transactional_id="tx", acks=1)


async def test_transactional_calls_before_start_raise() -> None:
    producer = AIOKafkaProducer(transactional_id="tx")
    with pytest.raises(Errors.IllegalStateError, match="not started"):
        await producer.begin_transaction()


def test_deprecated_api_version_warns() -> None:
    with pytest.warns(DeprecationWarning, match="api_version"):
        AIOKafkaProducer(api_version="auto")


def test_client_ids_are_unique_by_default() -> None:
    a, b = AIOKafkaProducer(), AIOKafkaProducer()
    assert a.client.config.client_id != b.client.config.client_id
    assert AIOKafkaProducer(client_id="mine").client.config.client_id == "mine"


async def test_send_before_start_is_an_error() -> None:
    producer = AIOKafkaProducer()
    with pytest.raises(Errors.IllegalStateError, match="start"):
        await producer.send(TOPIC, b"v")
    with pytest.raises(ValueError, match="key or value"):
        await producer.send(TOPIC)
    await producer.stop()


# ---- BatchBuilder -----------------------------------------------------------------------------


def test_batch_builder_fills_up_then_refuses() -> None:
    builder = BatchBuilder(400, "gzip")
    first = builder.append(key=b"k", value=b"x" * 100, timestamp=1000, headers=[("h", None)])
    assert first is not None and (first.offset, first.crc, first.timestamp) == (0, None, 1000)
    second = builder.append(key=None, value=b"y" * 100, timestamp=None)
    assert second is not None and second.offset == 1 and second.timestamp > 1000
    assert builder.append(key=None, value=b"z" * 100, timestamp=None) is None
    assert builder.closed() and builder.record_count() == 2
    assert builder.size() <= 400
    raw = builder._build(-1, -1, -1)
    assert builder.size() == len(raw)
    records = decode_records(raw, TOPIC, 0).records
    assert [(r.offset, r.key, r.value, r.headers) for r in records] == [
        (0, b"k", b"x" * 100, (("h", None),)),
        (1, None, b"y" * 100, ()),
    ]


def test_batch_builder_first_record_always_fits_and_checks_types() -> None:
    builder = BatchBuilder(10, None, key_serializer=str.encode)
    assert builder.append(key="big", value=b"v" * 1000, timestamp=1) is not None
    assert builder.append(key="more", value=b"v", timestamp=2) is None
    with pytest.raises(TypeError, match="value"):
        BatchBuilder(100, None).append(key=None, value="text", timestamp=None)
    with pytest.raises(TypeError, match="header key"):
        BatchBuilder(100, None).append(key=None, value=b"v", timestamp=None, headers=[(1, b"")])
    closed = BatchBuilder(100, None)
    closed.close()
    assert closed.append(key=None, value=b"v", timestamp=None) is None


# ---- sequences --------------------------------------------------------------------------------


def test_sequence_numbers_wrap_like_java() -> None:
    assert next_sequence(5, 3) == 8
    assert next_sequence(2147483647, 1) == 0
    assert next_sequence(2147483640, 10) == 2
    ids = ProducerIdState()
    tp = TopicPartition(TOPIC, 0)
    ids.set_pid(7, 0)
    assert ids.assign(tp, 10) == 0 and ids.assign(tp, 5) == 10 and ids.assign(tp, 1) == 15
    assert ids.is_next_expected(tp, 0) and not ids.is_next_expected(tp, 10)
    ids.acked(tp, 0, 10)
    assert ids.is_next_expected(tp, 10)
    ids.set_pid(8, 0)
    assert ids.assign(tp, 1) == 0, "a new producer id starts sequences again"


async def test_reenqueued_batches_go_back_in_sequence_order() -> None:
    client = AIOKafkaClient()
    acc = MessageAccumulator(
        client.cluster, ProducerConfig(max_batch_size=1000, request_timeout_ms=30000)
    )
    tp = TopicPartition(TOPIC, 0)
    loop = asyncio.get_running_loop()
    batches = []
    futures = []
    for seq in (0, 5, 10):
        b = ProducerBatch(tp, acc.create_builder(), 0.0, loop=loop)
        fut = b.append(None, None, b"v", [])
        assert fut is not None
        futures.append(fut)
        b.encode(1, 0, seq)
        batches.append(b)
    fresh = await acc.add_message(tp, None, b"new", 1.0)
    assert fresh is not None
    acc.reenqueue(batches[2])
    acc.reenqueue(batches[0])
    acc.reenqueue(batches[1])
    queue = acc._batches[tp]
    assert [b.base_sequence for b in queue] == [0, 5, 10, -1]
    for b in (*batches, *queue):
        b.failure(Errors.KafkaConnectionError("test over"))
    for f in (fresh, *futures):
        with pytest.raises(Errors.KafkaConnectionError):
            await f


def _idempotent_sender(acc: MessageAccumulator, ids: ProducerIdState) -> Sender:
    config = ProducerConfig(acks=-1, request_timeout_ms=1000, retry_backoff_ms=10)
    return Sender(AIOKafkaClient(), acc, config, idempotence=ids)


async def test_out_of_order_sequence_is_retried_unless_nothing_is_ahead_of_it() -> None:
    acc = MessageAccumulator(
        AIOKafkaClient().cluster, ProducerConfig(max_batch_size=1000, request_timeout_ms=30000)
    )
    ids = ProducerIdState()
    ids.set_pid(3, 0)
    sender = _idempotent_sender(acc, ids)
    tp = TopicPartition(TOPIC, 0)
    loop = asyncio.get_running_loop()

    def batch(seq: int) -> tuple[ProducerBatch, asyncio.Future[Any]]:
        b = ProducerBatch(tp, acc.create_builder(), 0.0, loop=loop)
        fut = b.append(None, None, b"v", [])
        assert fut is not None
        b.encode(3, 0, seq)
        return b, fut

    ids.acked(tp, 0, 10)  # sequences 0-9 are in the log
    behind, behind_fut = batch(20)  # 10-19 are still being retried: an expected refusal
    sender._settle(behind, {"error_code": 45, "base_offset": -1})
    assert not behind_fut.done() and acc._batches[tp][0] is behind
    assert not sender._pid_reset_needed
    lost, lost_fut = batch(10)  # the very next sequence refused: the broker lost our state
    sender._settle(lost, {"error_code": 45, "base_offset": -1, "error_message": "gap"})
    with pytest.raises(Errors.OutOfOrderSequenceNumber, match=r"t\[0\]: gap"):
        await lost_fut
    assert sender._pid_reset_needed
    dup, dup_fut = batch(10)
    sender._settle(dup, {"error_code": 46, "base_offset": -1})
    assert (await dup_fut).offset == -1, "a duplicate is a success with no offset to report"
    behind.failure(Errors.KafkaConnectionError("test over"))
    with pytest.raises(Errors.KafkaConnectionError):
        await behind_fut


# ---- against the fake broker ------------------------------------------------------------------


def _partition_response(index: int, code: int, base: int) -> dict[str, Any]:
    """One partition's Produce answer: ``code``, and ``base`` as the offset if it is 0."""
    return {
        "index": index,
        "error_code": code,
        "base_offset": base if code == 0 else -1,
        "log_append_time_ms": -1,
        "log_start_offset": 0,
        "record_errors": [],
        "error_message": None,
    }


class ScriptedBroker:
    """Answers Metadata, and Produce with the next scripted error code per request (then 0)."""

    def __init__(self, produce_errors: list[int], partitions: int = 1) -> None:
        self.produce_errors = list(produce_errors)
        self.partitions = partitions
        self.produced: list[tuple[int, dict[str, Any]]] = []
        self.offsets: dict[int, int] = {}
        self.broker: FakeBroker | None = None

    async def start(self) -> ScriptedBroker:
        self.broker = await FakeBroker(self.handle).start()
        return self

    @property
    def bootstrap(self) -> str:
        assert self.broker is not None
        return f"127.0.0.1:{self.broker.port}"

    def requests(self, key: int) -> int:
        assert self.broker is not None
        return sum(1 for r in self.broker.requests if r[0] == key)

    async def handle(self, key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        assert self.broker is not None
        if key == 3:
            reply = metadata_reply(self.broker.port, TOPIC, self.partitions)
            return _native.encode_response(key, version, corr, reply)
        assert key == 0
        self.produced.append((version, body))
        if body["acks"] == 0:
            return None
        code = self.produce_errors.pop(0) if self.produce_errors else 0
        responses = []
        for topic in body["topic_data"]:
            parts = []
            for part in topic["partition_data"]:
                count = len(decode_records(part["records"], TOPIC, 0).records)
                base = self.offsets.get(part["index"], 0)
                if code == 0:
                    self.offsets[part["index"]] = base + count
                parts.append(_partition_response(part["index"], code, base))
            responses.append({"name": topic["name"], "partition_responses": parts})
        return _native.encode_response(key, version, corr, {"responses": responses})

    async def stop(self) -> None:
        assert self.broker is not None
        await self.broker.stop()


async def test_not_leader_refreshes_metadata_and_retries_the_same_bytes() -> None:
    fake = await ScriptedBroker([6, 6]).start()  # NOT_LEADER_OR_FOLLOWER twice
    try:
        async with AIOKafkaProducer(bootstrap_servers=fake.bootstrap, retry_backoff_ms=10) as p:
            metadata_before = fake.requests(3)
            meta = await p.send_and_wait(TOPIC, b"v", key=b"k")
            assert (meta.partition, meta.offset) == (0, 0)
            assert fake.requests(3) > metadata_before, "NOT_LEADER must refresh metadata"
        sent = [body["topic_data"][0]["partition_data"][0]["records"] for _, body in fake.produced]
        assert len(sent) == 3 and sent[0] == sent[1] == sent[2]
        assert all(version <= 12 for version, _ in fake.produced), "no topic id: by name"
    finally:
        await fake.stop()


async def test_non_retriable_error_reaches_the_future_typed_with_topic_partition() -> None:
    fake = await ScriptedBroker([87]).start()  # INVALID_RECORD
    try:
        async with AIOKafkaProducer(bootstrap_servers=fake.bootstrap) as p:
            fut = await p.send(TOPIC, b"v")
            with pytest.raises(Errors.for_code(87), match=r"t\[0\]"):
                await fut
            assert (await p.send_and_wait(TOPIC, b"w")).offset == 0
    finally:
        await fake.stop()


async def test_retriable_errors_give_up_after_the_batch_ttl() -> None:
    fake = await ScriptedBroker([19] * 1000).start()  # NOT_ENOUGH_REPLICAS, forever
    try:
        async with AIOKafkaProducer(
            bootstrap_servers=fake.bootstrap, request_timeout_ms=300, retry_backoff_ms=20
        ) as p:
            fut = await p.send(TOPIC, b"v")
            with pytest.raises(Errors.NotEnoughReplicasError, match=r"t\[0\]"):
                await fut
        assert len(fake.produced) > 2
    finally:
        await fake.stop()


async def test_acks_zero_resolves_without_a_response() -> None:
    fake = await ScriptedBroker([]).start()
    try:
        async with AIOKafkaProducer(bootstrap_servers=fake.bootstrap, acks=0) as p:
            futures = [await p.send(TOPIC, b"v%d" % i) for i in range(10)]
            assert await asyncio.gather(*futures) == [None] * 10
        assert fake.produced and all(body["acks"] == 0 for _, body in fake.produced)
    finally:
        await fake.stop()


async def test_one_batch_in_flight_per_partition_without_idempotence() -> None:
    gate = asyncio.Event()
    in_flight = 0
    most = 0
    fake = ScriptedBroker([])
    plain = fake.handle

    async def slow(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        nonlocal in_flight, most
        if key != 0:
            return await plain(key, version, corr, body)
        in_flight += 1
        most = max(most, in_flight)
        await gate.wait()
        in_flight -= 1
        return await plain(key, version, corr, body)

    fake.handle = slow  # type: ignore[method-assign]
    await fake.start()
    try:
        async with AIOKafkaProducer(bootstrap_servers=fake.bootstrap, max_batch_size=200) as p:
            futures = [await p.send(TOPIC, b"x" * 100, partition=0) for _ in range(2)]
            await asyncio.sleep(0.2)
            assert most == 1, "the second batch must wait for the first"
            gate.set()
            metas = await asyncio.gather(*futures)
        assert [m.offset for m in metas] == [0, 1]
    finally:
        await fake.stop()


@pytest.mark.parametrize("key_len", [None, 0, 10, 63, 64, 200, 8191, 8192, 20_000])
@pytest.mark.parametrize("value_len", [None, 0, 63, 64, 1000, 8126, 8191, 8192, 300_000])
@pytest.mark.parametrize("headers", [[], [("h", b"x" * 70), ("é", None)]])
def test_record_size_estimate_bounds_the_encoded_record(
    key_len: int | None, value_len: int | None, headers: list[tuple[str, bytes | None]]
) -> None:
    from ferrokafka.producer.message_accumulator import BATCH_OVERHEAD, estimate_record_size
    from ferrokafka.records import encode_batch

    key = None if key_len is None else b"k" * key_len
    value = None if value_len is None else b"v" * value_len
    encoded = len(encode_batch([(2**40, key, value, headers)]))
    estimate = BATCH_OVERHEAD + estimate_record_size(key, value, headers)
    assert encoded <= estimate <= encoded + 24


async def test_a_partitions_first_idempotent_batch_goes_out_alone() -> None:
    acc = MessageAccumulator(
        AIOKafkaClient().cluster, ProducerConfig(max_batch_size=1000, request_timeout_ms=30000)
    )
    ids = ProducerIdState()
    ids.set_pid(3, 0)
    sender = _idempotent_sender(acc, ids)
    tp = TopicPartition(TOPIC, 0)
    fresh = ProducerBatch(tp, acc.create_builder(), 0.0, loop=asyncio.get_running_loop())
    assert sender._sendable(fresh), "nothing in flight"
    sender._tp_in_flight[tp] = 1
    assert not sender._sendable(fresh), "the first batch is in flight and not acknowledged yet"
    ids.acked(tp, 0, 5)
    assert sender._sendable(fresh), "once one is acknowledged, batches are pipelined"
    sender._tp_in_flight[tp] = MAX_IN_FLIGHT
    assert not sender._sendable(fresh)


async def test_an_out_of_order_batch_behind_the_acknowledged_ones_is_renumbered() -> None:
    acc = MessageAccumulator(
        AIOKafkaClient().cluster, ProducerConfig(max_batch_size=1000, request_timeout_ms=30000)
    )
    ids = ProducerIdState()
    ids.set_pid(3, 0)
    sender = _idempotent_sender(acc, ids)
    tp = TopicPartition(TOPIC, 0)
    b = ProducerBatch(tp, acc.create_builder(), 0.0, loop=asyncio.get_running_loop())
    fut = b.append(None, None, b"v", [])
    assert fut is not None
    b.encode(3, 0, 0)
    ids.acked(tp, 34, 34)  # the batch after it was appended first
    sender._settle(b, {"error_code": 45, "base_offset": -1})
    assert not fut.done(), "not failed: it is sent again"
    assert acc._batches[tp][0] is b
    assert sender._pid_reset_needed, "under a new producer id"
    ids.set_pid(4, 0)
    sender._pid_reset_needed = False
    payload = sender._prepare(b)
    assert (b.producer_id, b.base_sequence) == (4, 0)
    assert struct.unpack_from(">qhi", payload, 43) == (4, 0, 0)
    b.failure(Errors.KafkaConnectionError("test over"))
    with pytest.raises(Errors.KafkaConnectionError):
        await fut


async def test_an_out_of_order_batch_waiting_for_earlier_ones_gives_up_after_the_ttl() -> None:
    acc = MessageAccumulator(
        AIOKafkaClient().cluster, ProducerConfig(max_batch_size=1000, request_timeout_ms=50)
    )
    ids = ProducerIdState()
    ids.set_pid(3, 0)
    sender = _idempotent_sender(acc, ids)
    tp = TopicPartition(TOPIC, 0)
    b = ProducerBatch(tp, acc.create_builder(), time.monotonic(), loop=asyncio.get_running_loop())
    fut = b.append(None, None, b"v", [])
    assert fut is not None
    b.encode(3, 0, 20)
    ids.acked(tp, 0, 10)  # 10-19 are still out: a refusal of 20 is expected, and retried
    sender._settle(b, {"error_code": 45, "base_offset": -1})
    assert not fut.done()
    acc._batches[tp].clear()
    await asyncio.sleep(0.1)
    sender._settle(b, {"error_code": 45, "base_offset": -1, "error_message": "still refused"})
    with pytest.raises(Errors.OutOfOrderSequenceNumber, match="still refused"):
        await fut
    assert sender._pid_reset_needed


class SequencingBroker(ScriptedBroker):
    """Appends an idempotent producer's Produce batches as Kafka does: a producer's first
    batch on a partition whatever its sequence, then only the next sequence (DUPLICATE for
    one it has, OUT_OF_ORDER otherwise). Its first Produce answer is NOT_LEADER_OR_FOLLOWER,
    as a just-created topic's leader can give; every Produce answer waits ``delay`` s."""

    def __init__(self, delay: float) -> None:
        super().__init__([])
        self.delay = delay
        self.not_leader_once = True
        self.next_seq: dict[int, int] = {}
        self.log: list[bytes] = []

    async def handle(self, key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        if key == 22:  # InitProducerId
            reply = {"error_code": 0, "producer_id": 7, "producer_epoch": 0}
            return _native.encode_response(key, version, corr, reply)
        if key != 0:
            return await super().handle(key, version, corr, body)
        self.produced.append((version, body))
        await asyncio.sleep(self.delay)
        responses = []
        for topic in body["topic_data"]:
            parts = []
            for part in topic["partition_data"]:
                raw = part["records"]
                seq, count = struct.unpack_from(">ii", raw, 53)
                p = part["index"]
                code, base = 0, len(self.log)
                if self.not_leader_once:
                    code, self.not_leader_once = 6, False
                elif p in self.next_seq and seq != self.next_seq[p]:
                    code = 46 if seq < self.next_seq[p] else 45
                if code == 0:
                    self.next_seq[p] = seq + count
                    self.log.extend(r.value or b"" for r in decode_records(raw, TOPIC, p).records)
                parts.append(_partition_response(p, code, base))
            responses.append({"name": topic["name"], "partition_responses": parts})
        return _native.encode_response(key, version, corr, {"responses": responses})


async def test_idempotent_records_land_in_order_when_the_first_batch_is_refused() -> None:
    # A first batch refused NOT_LEADER while the next was already in flight used to let the
    # next be appended first; the first was then refused OUT_OF_ORDER forever.
    fake = SequencingBroker(delay=0.02)
    await fake.start()
    try:
        async with AIOKafkaProducer(
            bootstrap_servers=fake.bootstrap,
            enable_idempotence=True,
            max_batch_size=200,
            retry_backoff_ms=10,
            linger_ms=0,
        ) as p:
            futures = [await p.send(TOPIC, b"r%04d" % i, partition=0) for i in range(200)]
            await asyncio.wait_for(asyncio.gather(*futures), 10)
        assert fake.log == [b"r%04d" % i for i in range(200)]
    finally:
        await fake.stop()


async def test_a_failed_batch_takes_no_more_records() -> None:
    # A batch failed while still open in the queue (no leader within its time to live) must
    # refuse appends, so send()'s short path and append_now start a new batch instead of
    # adding records to one that will never be sent.
    acc = MessageAccumulator(AIOKafkaClient().cluster, ProducerConfig(max_batch_size=1000))
    tp = TopicPartition(TOPIC, 0)
    b = ProducerBatch(tp, acc.create_builder(), 0.0, loop=asyncio.get_running_loop())
    first = b.append(None, None, b"v", [])
    assert first is not None
    b.failure(Errors.LeaderNotAvailableError("test: no leader"))
    assert b.builder.closed()
    assert b.append(None, None, b"w", []) is None
    with pytest.raises(Errors.LeaderNotAvailableError):
        await first


def _no_partitions(cluster: ClusterMetadata) -> None:
    cluster.update_metadata(
        {
            "brokers": [{"node_id": 1, "host": "h", "port": 9092}],
            "topics": [{"name": TOPIC, "error_code": 0, "partitions": []}],
        }
    )


async def test_the_accumulator_names_each_open_batch_and_metadata_updates_pause_shortcuts() -> None:
    """The accumulator writes each batch it opens into its table, which is where send()'s
    shortcuts append; they do so only while the partitions the full path saw hold: a metadata
    update makes the next record of each topic take the full path (which says again)."""
    cluster = ClusterMetadata()
    acc = MessageAccumulator(cluster, ProducerConfig())
    table = acc.open
    tp = TopicPartition(TOPIC, 2)
    await acc.add_message(tp, b"k", b"v", 1.0)
    key = next(b"k%d" % i for i in range(100) if partition_for_key(b"k%d" % i, 3) == 2)
    other = next(b"k%d" % i for i in range(100) if partition_for_key(b"k%d" % i, 3) == 0)
    assert table.send_keyed(TOPIC, key, b"v") is None, "no partition count seen yet"
    table.partition_count(TOPIC, 3)
    assert table.send_keyed(TOPIC, key, b"v") is not None
    assert table.send_keyed(TOPIC, other, b"v") is None, "partition 0 has no open batch"
    assert table.send(TOPIC, b"v") is None, "no sticky partition chosen"
    table.stick(TOPIC, 2)
    assert table.send(TOPIC, b"v") is not None
    assert acc._batches[tp][-1].builder.record_count() == 3
    _no_partitions(cluster)
    assert table.send_keyed(TOPIC, key, b"v") is None
    assert table.send(TOPIC, b"v") is None
    table.partition_count(TOPIC, 3)
    assert table.send(TOPIC, b"v") is not None, "the open batch is still named"
    acc.fail_all(Errors.KafkaConnectionError("test: the sender is gone"))
    assert table.send(TOPIC, b"v") is None, "failed: the full path raises"
    with pytest.raises(Errors.KafkaConnectionError):
        await acc.add_message(tp, None, b"v", 1.0)
    table.opened(TOPIC, 2, _native.BatchRecords(1000))
    table.partition_count(TOPIC, 3)
    table.stick(TOPIC, 2)
    assert table.send(TOPIC, b"v") is None, "a closed table takes no batch"


async def test_keyed_sends_keep_each_keys_order_on_the_java_partition() -> None:
    """Keyed records take send()'s native shortcut once their partition has an open batch:
    each lands on the default partitioner's partition for its key, and a key's records get
    offsets in the order they were sent, across batch rollovers (small batches here)."""
    fake = await ScriptedBroker([], partitions=5).start()
    try:
        async with AIOKafkaProducer(
            bootstrap_servers=fake.bootstrap, max_batch_size=600, linger_ms=5
        ) as p:
            keys = [b"key-%d" % (i % 23) for i in range(2000)]
            futures = [await p.send(TOPIC, b"v%d" % i, key=k) for i, k in enumerate(keys)]
            assert p._keyed_send is not None
            metas = await asyncio.gather(*futures)
        last: dict[bytes, int] = {}
        for key, meta in zip(keys, metas, strict=True):
            assert meta.partition == partition_for_key(key, 5)
            assert meta.offset > last.get(key, -1), f"{key!r} out of order"
            last[key] = meta.offset
        assert sum(fake.offsets.values()) == 2000
    finally:
        await fake.stop()


@pytest.mark.parametrize(
    "options",
    [{"partitioner": lambda key, all_partitions, available: 0}, {"key_serializer": bytes}],
    ids=["custom partitioner", "key serializer"],
)
async def test_keyed_sends_take_the_full_path_when_the_user_decides_the_bytes_or_partition(
    options: dict[str, Any],
) -> None:
    fake = await ScriptedBroker([], partitions=5).start()
    try:
        async with AIOKafkaProducer(bootstrap_servers=fake.bootstrap, **options) as p:
            metas = await asyncio.gather(
                *[await p.send(TOPIC, b"v", key=b"k%d" % i) for i in range(50)]
            )
            assert p._keyed_send is None and p._sticky_send is None
        if "partitioner" in options:
            assert {m.partition for m in metas} == {0}
    finally:
        await fake.stop()


async def test_batches_that_do_not_share_a_request_go_out_together_up_to_the_limit() -> None:
    # A batch on each of 7 partitions, one batch per request (max_request_size holds one): a
    # drain makes one request per node, and the batches left over must not wait for its answer.
    gate = asyncio.Event()
    fake = ScriptedBroker([], partitions=MAX_IN_FLIGHT + 2)
    plain = fake.handle

    async def held(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        if key == 0:
            await gate.wait()
        return await plain(key, version, corr, body)

    fake.handle = held  # type: ignore[method-assign]
    await fake.start()
    try:
        async with AIOKafkaProducer(
            bootstrap_servers=fake.bootstrap, max_batch_size=1200, max_request_size=1500
        ) as p:
            futures = [
                await p.send(TOPIC, b"x" * 1000, partition=i) for i in range(MAX_IN_FLIGHT + 2)
            ]
            await asyncio.sleep(0.2)
            in_flight = len(p._sender._tasks)
            gate.set()
            assert in_flight == MAX_IN_FLIGHT, "every ready batch, up to the in-flight limit"
            metas = await asyncio.gather(*futures)
        assert sorted(m.partition for m in metas) == list(range(MAX_IN_FLIGHT + 2))
        assert len(fake.produced) == MAX_IN_FLIGHT + 2
    finally:
        await fake.stop()


# ---- linger and awaited records ------------------------------------------------------------


def _one_leader(cluster: ClusterMetadata) -> None:
    cluster.update_metadata(
        {
            "brokers": [{"node_id": 1, "host": "h", "port": 9092}],
            "topics": [
                {
                    "name": TOPIC,
                    "error_code": 0,
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition_index": 0,
                            "leader_id": 1,
                            "replica_nodes": [1],
                            "isr_nodes": [1],
                        },
                    ],
                }
            ],
        }
    )


@pytest.mark.parametrize(
    ("awaited", "idle", "sent_now"),
    [(True, True, True), (True, False, False), (False, True, False)],
    ids=["awaited, leader idle", "awaited, leader busy", "not awaited"],
)
async def test_an_awaited_batch_skips_its_linger_only_when_its_leader_is_idle(
    awaited: bool, idle: bool, sent_now: bool
) -> None:
    """linger_ms is an upper bound: a batch someone waits for (a done-callback on one of its
    futures) goes at once when its leader has nothing in flight; otherwise it lingers."""
    cluster = ClusterMetadata()
    _one_leader(cluster)
    acc = MessageAccumulator(cluster, ProducerConfig(linger_ms=10_000))
    tp = TopicPartition(TOPIC, 0)
    future = await acc.add_message(tp, None, b"v", 1.0)
    assert future is not None
    acc.wakeup.clear()
    if awaited:
        future.add_done_callback(lambda _: None)
        assert acc.wakeup.is_set(), "the first waiter wakes the sender"
    ready, wait, _ = acc.drain(
        node_ready=lambda _: True,
        sendable=lambda _: True,
        max_request_size=1 << 20,
        node_idle=lambda _: idle,
    )
    if sent_now:
        assert [b.tp for b in ready[1]] == [tp]
    else:
        assert ready == {} and wait is not None and wait > 1


async def test_awaited_records_are_not_held_for_the_linger_by_the_producer() -> None:
    """send_and_wait with a linger of 10 s returns in far less: nothing is in flight, so the
    awaited batch goes at once (and the next record's too, after the first came back)."""
    fake = await ScriptedBroker([], partitions=1).start()
    try:
        async with AIOKafkaProducer(bootstrap_servers=fake.bootstrap, linger_ms=10_000) as p:
            start = time.monotonic()
            first = await p.send_and_wait(TOPIC, b"a")
            second = await p.send_and_wait(TOPIC, b"b")
            took = time.monotonic() - start
        assert (first.offset, second.offset) == (0, 1)
        assert took < 5, f"waited {took:.1f}s: the linger held awaited records"
    finally:
        await fake.stop()


async def test_a_full_batch_is_followed_by_new_ones_up_to_the_queue_limit_then_sends_wait() -> None:
    """A partition whose batches the sender has not taken yet (its previous request still on
    its way) takes records into new batches behind the full one, up to QUEUED_BATCHES; the
    next record waits until the sender takes the first (a timeout: KafkaTimeoutError)."""
    cluster = ClusterMetadata()
    _one_leader(cluster)
    acc = MessageAccumulator(cluster, ProducerConfig(max_batch_size=100))
    tp = TopicPartition(TOPIC, 0)
    for i in range(QUEUED_BATCHES):  # one record fills a batch of 100 bytes
        assert await acc.add_message(tp, None, b"%060d" % i, 0.05) is not None
    assert len(acc._batches[tp]) == QUEUED_BATCHES
    with pytest.raises(Errors.KafkaTimeoutError, match=r"t\[0\]: no room"):
        await acc.add_message(tp, None, b"late", 0.05)
    waiting = asyncio.create_task(acc.add_message(tp, None, b"next", 5.0))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    ready, _, _ = acc.drain(
        node_ready=lambda _: True, sendable=lambda _: True, max_request_size=1 << 20
    )
    assert len(ready[1]) == 1  # one batch per partition and request
    assert await asyncio.wait_for(waiting, 1) is not None
    assert len(acc._batches[tp]) == QUEUED_BATCHES
    queued = [decode_records(b.builder._build(-1, -1, -1), TOPIC, 0) for b in acc._batches[tp]]
    values = [r.value for batch in queued for r in batch.records]
    assert values == [b"%060d" % i for i in range(1, QUEUED_BATCHES)] + [b"next"]
