"""The transactional producer against a scripted coordinator, for answers the real broker gives
only under load or failure: CONCURRENT_TRANSACTIONS, a moved coordinator, fencing and a refused
authorization, a lost sequence (the epoch is bumped when the transaction is aborted).
``tests/integration/test_transactions.py`` runs the ordinary paths against the real broker."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.producer import AIOKafkaProducer
from ferrokafka.protocol import ApiKey

from .fake_broker import FakeBroker, metadata_reply
from .test_producer_unit import TOPIC


class Coordinator:
    """One node that is leader of ``TOPIC`` and transaction coordinator. ``errors`` scripts,
    per API key, the error codes of the next answers (then 0)."""

    def __init__(self, errors: dict[int, list[int]]) -> None:
        self.errors = {key: list(codes) for key, codes in errors.items()}
        self.epoch = 0
        self.broker: FakeBroker | None = None

    async def start(self) -> Coordinator:
        self.broker = await FakeBroker(self.handle).start()
        return self

    async def stop(self) -> None:
        assert self.broker is not None
        await self.broker.stop()

    @property
    def bootstrap(self) -> str:
        assert self.broker is not None
        return f"127.0.0.1:{self.broker.port}"

    def bodies(self, key: int) -> list[dict[str, Any]]:
        assert self.broker is not None
        return [body for k, _, _, body in self.broker.requests if k == key]

    def _code(self, key: int) -> int:
        codes = self.errors.get(key)
        return codes.pop(0) if codes else 0

    async def handle(self, key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        assert self.broker is not None
        port = self.broker.port
        reply: dict[str, Any]
        if key == ApiKey.METADATA:
            reply = metadata_reply(port, TOPIC, 1)
        elif key == ApiKey.FIND_COORDINATOR:
            answer = {"node_id": 1, "host": "127.0.0.1", "port": port, "error_message": None}
            code = self._code(key)
            if version >= 4:
                reply = {"coordinators": [dict(answer, key=body["coordinator_keys"][0])]}
                reply["coordinators"][0]["error_code"] = code
            else:
                reply = dict(answer, error_code=code)
        elif key == ApiKey.INIT_PRODUCER_ID:
            code = self._code(key)
            if not code:
                self.epoch += 1
            reply = {"error_code": code, "producer_id": 42, "producer_epoch": self.epoch}
        elif key == ApiKey.ADD_PARTITIONS_TO_TXN:
            code = self._code(key)
            reply = {
                "results_by_topic": [
                    {
                        "name": t["name"],
                        "results_by_partition": [
                            {"partition_index": p, "partition_error_code": code}
                            for p in t["partitions"]
                        ],
                    }
                    for t in body["topics"]
                ]
            }
        elif key == ApiKey.END_TXN:
            reply = {"error_code": self._code(key)}
        elif key == ApiKey.PRODUCE:
            code = self._code(key)
            reply = {
                "responses": [
                    {
                        "name": t["name"],
                        "partition_responses": [
                            {
                                "index": p["index"],
                                "error_code": code,
                                "base_offset": -1 if code else 0,
                                "log_append_time_ms": -1,
                                "log_start_offset": 0,
                                "record_errors": [],
                                "error_message": None,
                            }
                            for p in t["partition_data"]
                        ],
                    }
                    for t in body["topic_data"]
                ]
            }
        else:
            raise AssertionError(f"unexpected request {key}")
        return _native.encode_response(key, version, corr, reply)


async def _producer(fake: Coordinator) -> AIOKafkaProducer:
    producer = AIOKafkaProducer(
        bootstrap_servers=fake.bootstrap,
        transactional_id="tx",
        retry_backoff_ms=5,
        request_timeout_ms=5000,
    )
    await producer.start()
    return producer


async def test_retriable_coordinator_answers_are_retried_and_a_moved_one_looked_up_again() -> None:
    # COORDINATOR_LOAD_IN_PROGRESS at init; NOT_COORDINATOR when adding the partition;
    # CONCURRENT_TRANSACTIONS twice at the end.
    fake = await Coordinator({22: [14], 24: [16], 26: [51, 51]}).start()
    try:
        producer = await _producer(fake)
        await producer.begin_transaction()
        await producer.send_and_wait(TOPIC, b"v")
        await producer.commit_transaction()
        await producer.stop()
        assert len(fake.bodies(ApiKey.FIND_COORDINATOR)) == 2, "looked up again after the move"
        assert len(fake.bodies(ApiKey.ADD_PARTITIONS_TO_TXN)) == 2
        ends = fake.bodies(ApiKey.END_TXN)
        assert [e["committed"] for e in ends] == [True, True, True]
        produced = fake.bodies(ApiKey.PRODUCE)
        assert produced and all(p["transactional_id"] == "tx" for p in produced)
    finally:
        await fake.stop()


async def test_an_unauthorized_transactional_id_fails_start() -> None:
    fake = await Coordinator({22: [53]}).start()  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    try:
        producer = AIOKafkaProducer(bootstrap_servers=fake.bootstrap, transactional_id="tx")
        with pytest.raises(Errors.TransactionalIdAuthorizationFailed, match="'tx'"):
            await producer.start()
        await producer.stop()
    finally:
        await fake.stop()


async def test_fencing_while_adding_a_partition_is_fatal() -> None:
    fake = await Coordinator({24: [90]}).start()  # PRODUCER_FENCED
    try:
        producer = await _producer(fake)
        await producer.begin_transaction()
        with pytest.raises(Errors.ProducerFenced, match=r"t\[0\]"):
            await producer.send(TOPIC, b"v")
        for call in (producer.abort_transaction, producer.commit_transaction):
            with pytest.raises(Errors.ProducerFenced):
                await call()
        await producer.stop()
        assert fake.bodies(ApiKey.END_TXN) == [], "nothing more is asked of the coordinator"
    finally:
        await fake.stop()


async def test_a_lost_sequence_aborts_then_takes_a_new_epoch() -> None:
    fake = await Coordinator({0: [45]}).start()  # OUT_OF_ORDER_SEQUENCE_NUMBER
    try:
        producer = await _producer(fake)
        await producer.begin_transaction()
        future = await producer.send(TOPIC, b"v")
        with pytest.raises(Errors.OutOfOrderSequenceNumber):
            await future
        with pytest.raises(Errors.OutOfOrderSequenceNumber):
            await producer.commit_transaction()
        await producer.abort_transaction()
        inits = fake.bodies(ApiKey.INIT_PRODUCER_ID)
        assert len(inits) == 2
        assert (inits[1]["producer_id"], inits[1]["producer_epoch"]) == (42, 1), "a bump"
        assert [e["committed"] for e in fake.bodies(ApiKey.END_TXN)] == [False]
        async with producer.transaction():
            await producer.send_and_wait(TOPIC, b"w")
        last = fake.bodies(ApiKey.PRODUCE)[-1]["topic_data"][0]["partition_data"][0]["records"]
        # v2 batch header: attributes at byte 21 (0x10: transactional), producer id at 43,
        # its epoch at 51, the base sequence at 53.
        assert struct.unpack_from(">h", last, 21)[0] & 0x10
        assert struct.unpack_from(">qhi", last, 43) == (42, 2, 0), "new epoch, sequence 0"
        await producer.stop()
    finally:
        await fake.stop()


async def test_a_failed_epoch_bump_leaves_the_abort_to_be_retried() -> None:
    # The produce loses its sequence; the abort's InitProducerId (the bump) is refused once
    # (UNSUPPORTED_VERSION, neither retriable nor fatal): abort_transaction() raises and may be
    # called again, which takes the new epoch.
    fake = await Coordinator({0: [45], ApiKey.INIT_PRODUCER_ID: [0, 35]}).start()
    try:
        producer = await _producer(fake)
        await producer.begin_transaction()
        future = await producer.send(TOPIC, b"v")
        with pytest.raises(Errors.OutOfOrderSequenceNumber):
            await future
        with pytest.raises(Errors.UnsupportedVersionError):
            await producer.abort_transaction()
        with pytest.raises(Errors.IllegalOperation):
            await producer.begin_transaction()
        await producer.abort_transaction()
        inits = fake.bodies(ApiKey.INIT_PRODUCER_ID)
        assert [(i["producer_id"], i["producer_epoch"]) for i in inits] == [
            (-1, -1),
            (42, 1),
            (42, 1),
        ]
        async with producer.transaction():
            await producer.send_and_wait(TOPIC, b"w")
        last = fake.bodies(ApiKey.PRODUCE)[-1]["topic_data"][0]["partition_data"][0]["records"]
        assert struct.unpack_from(">qhi", last, 43) == (42, 2, 0), "new epoch, sequence 0"
        await producer.stop()
    finally:
        await fake.stop()
