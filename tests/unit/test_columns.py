"""Arrow output: records decoded in Rust into Spark's Kafka schema, shared with pyarrow."""

from __future__ import annotations

import random
from datetime import datetime, timezone

import pyarrow as pa
import pytest
from ferrokafka import errors as Errors
from ferrokafka.records import ArrowColumns, decode_columns, decode_records, encode_batch

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]

SPARK_SCHEMA = pa.schema(
    [
        ("key", pa.binary()),
        ("value", pa.binary()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
        ("timestampType", pa.int32()),
        (
            "headers",
            pa.list_(
                pa.field("element", pa.struct([("key", pa.string()), ("value", pa.binary())]))
            ),
        ),
    ]
)


def random_records(
    rng: random.Random, n: int
) -> list[tuple[int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    def blob() -> bytes | None:
        return None if rng.random() < 0.2 else rng.randbytes(rng.randrange(0, 300))

    return [
        (
            1_700_000_000_000 + rng.randrange(0, 10_000),
            blob(),
            blob(),
            [(f"h{j}", blob()) for j in range(rng.randrange(0, 3))],
        )
        for _ in range(n)
    ]


@pytest.mark.parametrize("codec", CODECS)
def test_columns_equal_records(codec: str) -> None:
    rng = random.Random(codec)
    raw = b"".join(
        encode_batch(random_records(rng, 50), base_offset=100 + 50 * i, compression=codec)
        for i in range(4)
    )
    cols = decode_columns(raw, "events", 5, start_offset=120)
    recs = decode_records(raw, "events", 5, start_offset=120).records
    assert isinstance(cols.records, ArrowColumns)
    assert cols.next_offset == 300 and cols.skipped_below_start == 20
    batch = cols.records.to_pyarrow()
    assert batch.schema == SPARK_SCHEMA
    assert batch.num_rows == len(recs) == 180
    rows = batch.to_pylist()
    for row, rec in zip(rows, recs, strict=True):
        assert (row["key"], row["value"], row["offset"]) == (rec.key, rec.value, rec.offset)
        assert (row["topic"], row["partition"], row["timestampType"]) == ("events", 5, 0)
        assert row["timestamp"] == datetime.fromtimestamp(rec.timestamp / 1000, tz=timezone.utc)
        # Spark's source gives null, not an empty list, for a record without headers.
        headers = row["headers"]
        assert headers is None if not rec.headers else headers is not None
        assert [(h["key"], h["value"]) for h in headers or ()] == list(rec.headers)


def test_export_shares_buffers() -> None:
    raw = encode_batch([(1, b"k", b"v" * 1000, [])] * 10)
    cols = decode_columns(raw, "t", 0).records
    first, second = pa.record_batch(cols), pa.record_batch(cols)
    # Both imports point at the one buffer Rust filled: the values were not copied again.
    a = first.column("value").buffers()[2]
    b = second.column("value").buffers()[2]
    assert a is not None and b is not None
    assert a.address == b.address and a.size >= 10_000
    schema = pa.schema(cols)
    assert schema == SPARK_SCHEMA
    assert len(cols) == cols.num_rows == 10


def test_empty_and_truncated_inputs() -> None:
    empty = decode_columns(b"", "t", 0)
    assert empty.records.num_rows == 0 and empty.next_offset is None
    raw = encode_batch([(1, None, b"x", [])], base_offset=3)
    cut = decode_columns(raw + raw[:30], "t", 0)
    assert cut.truncated and cut.records.num_rows == 1 and cut.next_offset == 4


def test_corruption_is_the_same_typed_error() -> None:
    raw = bytearray(encode_batch([(1, b"k", b"value", [])], base_offset=9))
    raw[-1] ^= 0x01
    with pytest.raises(Errors.CorruptRecordException, match=r'topic "t" partition 1: .*CRC'):
        decode_columns(bytes(raw), "t", 1)
