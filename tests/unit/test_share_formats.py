"""The share consumer's ``getmany_arrow`` with payload formats, against a scripted peer that
answers one ShareFetch with five acquired records and records every acknowledgement it is
sent: FAILFAST hands out the records before a malformed one, releases it (as the Java share
consumer releases a record its deserializer refuses) and hands out the rest later; a format
that fails to get a writer schema, or a poll cancelled while it waits for one, gives back what
it took, acknowledging nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaShareConsumer, _native
from ferrokafka import errors as Errors
from ferrokafka.formats import JsonFormat
from ferrokafka.share import AcknowledgeType

from .fake_broker import FakeBroker, share_member_reply, share_partition, share_reply

pytest.importorskip("pyarrow")

TOPIC, GROUP = "t", "sg"
TOPIC_ID = bytes(range(1, 17))
VALUES: list[bytes | None] = [b'{"i": 0}', b'{"i": 1}', b"not json", b'{"i": 3}', b'{"i": 4}']


class Peer:
    """Node 1, leading partition 0 of ``t``: the first ShareFetch acquires ``VALUES`` at offsets
    0-4, later ones acquire nothing; ``answers`` maps each offset to the acknowledgement types
    it was sent, in order."""

    def __init__(self) -> None:
        self.answers: dict[int, list[int]] = {}
        self.fetches = 0
        self.fake = FakeBroker(self.handle)

    def _acknowledged(self, body: dict[str, Any]) -> None:
        for topic in body["topics"]:
            for part in topic["partitions"]:
                for batch in part["acknowledgement_batches"]:
                    types = batch["acknowledge_types"]
                    for k, offset in enumerate(
                        range(batch["first_offset"], batch["last_offset"] + 1)
                    ):
                        kind = types[0] if len(types) == 1 else types[k]
                        self.answers.setdefault(offset, []).append(kind)

    async def handle(self, key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        member = share_member_reply(key, body, self.fake.port, GROUP, TOPIC, TOPIC_ID)
        if member is not None:
            return _native.encode_response(key, version, corr, member)
        assert key in (78, 79), key  # ShareFetch, ShareAcknowledge
        self._acknowledged(body)
        parts = []
        if key == 78 and body["share_session_epoch"] >= 0:
            self.fetches += 1
            if self.fetches == 1:
                parts = [share_partition(0, VALUES)]
        reply = share_reply(TOPIC_ID, parts)
        return _native.encode_response(key, version, corr, reply)


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    peer = Peer()
    await peer.fake.start()
    try:
        yield peer
    finally:
        await peer.fake.stop()


def _consumer(peer: Peer, mode: str = "implicit") -> AIOKafkaShareConsumer[bytes, bytes]:
    return AIOKafkaShareConsumer(
        TOPIC,
        bootstrap_servers=f"127.0.0.1:{peer.fake.port}",
        group_id=GROUP,
        share_acknowledgement_mode=mode,
        retry_backoff_ms=10,
        fetch_max_wait_ms=50,
    )


async def _poll(consumer: AIOKafkaShareConsumer[bytes, bytes], fmt: Any) -> list[Any]:
    """The offsets and ``i`` of the next poll that hands anything out."""
    for _ in range(100):
        got = await consumer.getmany_arrow(timeout_ms=50, value_format=fmt)
        if got:
            (batch,) = got.values()
            ids = [None if v is None else v["i"] for v in batch.column("value").to_pylist()]
            return list(zip(batch.column("offset").to_pylist(), ids, strict=True))
    raise AssertionError("nothing handed out")


ACCEPT, RELEASE = int(AcknowledgeType.ACCEPT), int(AcknowledgeType.RELEASE)


async def test_failfast_hands_out_what_precedes_releases_the_malformed_and_keeps_the_rest(
    peer: Peer,
) -> None:
    failfast = JsonFormat("i INT", mode="FAILFAST")
    async with _consumer(peer) as consumer:
        assert await _poll(consumer, failfast) == [(0, 0), (1, 1)]
        with pytest.raises(Errors.PayloadFormatError, match=r"offset 2.*was released") as info:
            await consumer.getmany_arrow(timeout_ms=50, value_format=failfast)
        assert (info.value.topic, info.value.partition, info.value.offset) == (TOPIC, 0, 2)
        assert await _poll(consumer, failfast) == [(3, 3), (4, 4)]
    assert peer.answers == {0: [ACCEPT], 1: [ACCEPT], 2: [RELEASE], 3: [ACCEPT], 4: [ACCEPT]}


async def test_permissive_hands_out_everything_with_the_corrupt_record(peer: Peer) -> None:
    async with _consumer(peer, "explicit") as consumer:
        got = await consumer.getmany_arrow(timeout_ms=2000, value_format=JsonFormat("i INT"))
        (batch,) = got.values()
        assert batch.column("offset").to_pylist() == [0, 1, 2, 3, 4]
        assert batch.column("_corrupt_record").to_pylist() == [None, None, "not json", None, None]
        consumer.acknowledge_batch(batch, AcknowledgeType.ACCEPT)
    assert peer.answers == {k: [ACCEPT] for k in range(5)}


class FailingOnce(JsonFormat):
    """A format whose first ``prepare`` fails as a registry that does not answer does, or
    (``hang``) waits until cancelled."""

    def __init__(self, *, hang: bool) -> None:
        super().__init__("i INT")
        self.hang = hang
        self.prepared = 0

    async def prepare(self, batch: Any, column: str) -> None:
        self.prepared += 1
        if self.prepared > 1:
            return
        if self.hang:
            await asyncio.sleep(60)
        raise Errors.PayloadSchemaError("no registry", TOPIC, 0, 0, 7)


@pytest.mark.parametrize("hang", [False, True], ids=["fails", "cancelled"])
async def test_a_failed_or_cancelled_schema_lookup_gives_everything_back(
    peer: Peer, hang: bool
) -> None:
    fmt = FailingOnce(hang=hang)
    async with _consumer(peer, "explicit") as consumer:
        for _ in range(100):
            # Two of the five: the other three wait in the buffer meanwhile.
            taking = consumer.getmany_arrow(timeout_ms=50, max_records=2, value_format=fmt)
            poll = asyncio.ensure_future(taking)
            if hang:
                await asyncio.sleep(0.2)
                if fmt.prepared:  # it waits with records taken: another poll takes none
                    assert await consumer.getmany_arrow(timeout_ms=100) == {}
                poll.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await poll
            else:
                with pytest.raises(Errors.PayloadSchemaError):
                    await poll
            if fmt.prepared:
                break
        assert await _poll(consumer, fmt) == [(k, None if k == 2 else k) for k in range(5)]
        assert peer.answers == {}  # nothing answered for before the application has them
        consumer.acknowledge_offsets(next(iter(consumer.assignment())), range(5), ACCEPT)
    assert peer.answers == {k: [ACCEPT] for k in range(5)}


class ApplyFailingOnce(JsonFormat):
    """A format whose first decode fails with an error no format is meant to raise."""

    def __init__(self) -> None:
        super().__init__("i INT")
        self.applied = 0

    def apply(self, batch: Any, column: str) -> Any:
        self.applied += 1
        if self.applied == 1:
            raise RuntimeError("decoder broke")
        return super().apply(batch, column)


async def test_an_unforeseen_decode_error_gives_everything_back(peer: Peer) -> None:
    fmt = ApplyFailingOnce()
    async with _consumer(peer, "explicit") as consumer:
        for _ in range(100):
            try:
                got = await consumer.getmany_arrow(timeout_ms=50, value_format=fmt)
            except RuntimeError:
                break
            assert got == {}
        else:
            raise AssertionError("the failing decode never ran")
        # Nothing was lost or left blocked: the next polls hand out all five.
        assert await _poll(consumer, fmt) == [(k, None if k == 2 else k) for k in range(5)]
        assert peer.answers == {}
        consumer.acknowledge_offsets(next(iter(consumer.assignment())), range(5), ACCEPT)
    assert peer.answers == {k: [ACCEPT] for k in range(5)}
