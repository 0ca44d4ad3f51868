"""The Python-visible record decoder: ConsumerRecords straight from Rust, typed errors."""

from __future__ import annotations

import json

import pytest
from ferrokafka import errors as Errors
from ferrokafka.records import decode_records, encode_batch
from ferrokafka.structs import ConsumerRecord

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
RECORDS = [
    (1_700_000_000_000, b"key-0", b"value-0" * 20, [("trace", b"abc"), ("empty", None)]),
    (1_700_000_000_005, None, b"no key", []),
    (1_700_000_000_009, b"k2", None, []),
]


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec(codec: str) -> None:
    raw = encode_batch(RECORDS, base_offset=40, compression=codec)
    part = decode_records(raw, "events", 3)
    assert part.next_offset == 43 and not part.truncated and part.batches == 1
    got = [(r.timestamp, r.key, r.value, list(r.headers)) for r in part.records]
    assert got == [(ts, k, v, list(h)) for ts, k, v, h in RECORDS]
    first = part.records[0]
    assert isinstance(first, ConsumerRecord)
    assert (first.topic, first.partition, first.offset, first.timestamp_type) == (
        "events",
        3,
        40,
        0,
    )
    assert first.serialized_key_size == 5 and first.serialized_value_size == 140
    assert part.records[1].serialized_key_size == -1
    assert part.records[2].serialized_value_size == -1
    assert isinstance(first.checksum, int)
    assert part.records[1].headers == ()


def test_deserializers_are_applied() -> None:
    raw = encode_batch([(1, b"1", json.dumps({"a": 1}).encode(), [])])
    part = decode_records(
        raw, "t", 0, key_deserializer=lambda b: int(b or 0), value_deserializer=json.loads
    )
    assert (part.records[0].key, part.records[0].value) == (1, {"a": 1})


def test_a_failing_deserializer_ends_the_records_at_its_record() -> None:
    raw = encode_batch([(1, key, b"v", []) for key in (b"1", b"2", b"x", b"4")], base_offset=5)
    part = decode_records(raw, "t", 3, key_deserializer=int)
    # The records before it, and the position to go on from: the failing record itself.
    assert [(r.offset, r.key) for r in part.records] == [(5, 1), (6, 2)]
    assert part.next_offset == 7
    # Decoded from there, it raises the deserializer's own exception, telling where.
    with pytest.raises(ValueError, match="invalid literal") as raised:
        decode_records(raw, "t", 3, key_deserializer=int, start_offset=7)
    exc = raised.value
    assert (exc.topic, exc.partition, exc.offset) == ("t", 3, 7)  # type: ignore[attr-defined]
    if hasattr(exc, "__notes__"):
        assert 'key deserializer failed on topic "t" partition 3 offset 7' in exc.__notes__[0]


def test_start_offset_and_truncation() -> None:
    raw = encode_batch(RECORDS, base_offset=10) + encode_batch(RECORDS, base_offset=13)[:-5]
    part = decode_records(raw, "t", 0, start_offset=11)
    assert [r.offset for r in part.records] == [11, 12]
    assert part.skipped_below_start == 1
    assert part.truncated and part.next_offset == 13


def test_corruption_is_a_typed_error_naming_where() -> None:
    raw = bytearray(encode_batch(RECORDS, base_offset=7))
    raw[70] ^= 0xFF
    with pytest.raises(
        Errors.CorruptRecordException,
        match=r'topic "t" partition 2: batch at offset 7 \(byte 0\): CRC-32C mismatch',
    ):
        decode_records(bytes(raw), "t", 2)
    legacy = bytearray(encode_batch(RECORDS))
    legacy[16] = 1
    with pytest.raises(Errors.CorruptRecordException, match="legacy message set"):
        decode_records(bytes(legacy), "t", 0)


def test_bad_compression_name() -> None:
    with pytest.raises(ValueError, match="compression"):
        encode_batch(RECORDS, compression="brotli")


def test_large_input_decodes_with_gil_released() -> None:
    many = [(i, None, b"x" * 100, []) for i in range(5000)]
    raw = encode_batch(many, compression="lz4")
    raw = raw * 1  # one batch of ~0.5 MB decompressed
    part = decode_records(raw, "t", 0)
    assert len(part.records) == 5000 and part.records[-1].offset == 4999


def test_module_doctest_holds() -> None:
    import doctest

    import ferrokafka.records

    result = doctest.testmod(ferrokafka.records)
    assert result.attempted >= 3 and result.failed == 0


def test_records_allocated_directly_behave_as_constructed_ones() -> None:
    """Decoded records skip ``object.__new__`` (see ``new_record`` in rust/py/records.rs) once
    the layout check at import passed; such records must be indistinguishable from ones built
    by the constructor, survive being recycled through the class's freelist many times, and
    hold (then release) exactly one reference to each value."""
    import gc
    import sys

    from ferrokafka import _native

    assert _native._records_direct_alloc()
    value = b"v" * 300
    raw = encode_batch([(5, b"k", value, [("h", b"x")])] * 50, base_offset=10)
    topic = "".join(["ev", "ents"])  # not interned: only this test holds it
    before = sys.getrefcount(topic)
    for round_ in range(200):  # far more objects than the freelist holds, recycled
        records = decode_records(raw, topic, 2).records
        assert [r.offset for r in records] == list(range(10, 60)), round_
        assert sys.getrefcount(topic) == before + 50  # one reference per record
    first = records[0]
    built = ConsumerRecord(
        "events", 2, 10, 5, 0, b"k", value, first.checksum, 1, 300, (("h", b"x"),)
    )
    assert first == built and repr(first) == repr(built)
    assert type(first) is ConsumerRecord and not hasattr(first, "__dict__")
    first.value = b"changed"  # fields stay writable, as on aiokafka's dataclass
    assert first.value == b"changed" and first != built
    del first.key
    with pytest.raises(AttributeError):
        _ = first.key
    del records, first, built
    gc.collect()
    assert sys.getrefcount(topic) == before


def test_records_and_futures_are_recycled_through_their_free_lists() -> None:
    """Records and producer futures are made and dropped once per record; freed ones wait in
    their class's free list (see rust/py/free_list.rs) and are handed out again whole: a
    recycled object reads back as a fresh one, and the lists never outgrow their bounds."""
    import asyncio
    import gc

    from ferrokafka import _native
    from ferrokafka.structs import TopicPartition

    def held() -> dict[str, int]:
        return dict(_native._free_lists())

    gc.collect()
    raw = encode_batch([(5, b"k", b"v%d" % i, []) for i in range(300)], base_offset=7)
    expected = [(7 + i, b"v%d" % i) for i in range(300)]
    records = decode_records(raw, "t", 1).records
    before = held()["ConsumerRecord"]
    del records
    freed = held()["ConsumerRecord"]
    assert freed == min(before + 300, 4096)
    again = decode_records(raw, "t", 1).records
    assert held()["ConsumerRecord"] == freed - 300  # taken back from the list
    for round_ in range(30):  # 9,000 records through the list
        assert [(r.offset, r.value) for r in again] == expected, round_
        assert all(r.key == b"k" and r.partition == 1 and r.topic == "t" for r in again)
        again = decode_records(raw, "t", 1).records
    keep = [decode_records(raw, "t", 1).records for _ in range(20)]  # 6,000 at once
    assert held()["ConsumerRecord"] == 0
    del keep
    assert held()["ConsumerRecord"] == 4096  # the rest went back to the allocator
    assert [(r.offset, r.value) for r in again] == expected

    loop = asyncio.new_event_loop()
    try:
        for round_ in range(3):
            batch = _native.BatchRecords(1 << 20)
            batch.set_loop(loop)
            futures = [batch.last_future(batch.add(0, None, b"x", []) or 0) for _ in range(2000)]
            assert all(not f.done() for f in futures), round_
            batch.resolve(TopicPartition("t", 0), 100, -1, None)
            assert [f.result().offset for f in futures] == list(range(100, 2100)), round_
            del futures, batch
            assert held()["RecordFuture"] == 1024
    finally:
        loop.close()
