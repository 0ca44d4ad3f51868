"""Arrow input for the producer: ``_native.plan_arrow_records`` checks the columns and splits
the rows per partition; each chunk encodes to a v2 batch that decodes back to the rows."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.partitioner import partition_for_key
from ferrokafka.records import decode_records

HEADER_TYPE = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
MB = 1 << 20


def plan(data: Any, partitions: int = 1, **kw: Any) -> list[_native.ArrowRecordChunk]:
    opts = {"sticky": 0, "batch_size": MB, "max_request_size": MB, **kw}
    batches = data if isinstance(data, list) else [data]
    return _native.plan_arrow_records(batches, num_partitions=partitions, **opts)


def rows(chunk: _native.ArrowRecordChunk, now_ms: int = 42, **kw: Any) -> list[tuple[Any, ...]]:
    encoded = chunk.encode(now_ms, **kw)
    decoded = decode_records(encoded, "t", chunk.partition)
    return [(r.timestamp, r.key, r.value, list(r.headers)) for r in decoded.records]


def columns(n: int) -> dict[str, list[Any]]:
    return {
        "key": [None if i % 3 == 0 else f"k{i}".encode() for i in range(n)],
        "value": [None if i % 4 == 0 else f"v{i}" for i in range(n)],
        "headers": [
            None if i % 2 else [{"key": "h", "value": None if i % 5 else str(i).encode()}]
            for i in range(n)
        ],
        "timestamp": [None if i % 6 == 0 else 1000 * i + 999 for i in range(n)],
    }


def sample(n: int) -> pa.RecordBatch:
    """Keys, large-string values, headers and microsecond timestamps, with nulls in each."""
    c = columns(n)
    return pa.record_batch(
        {
            "key": pa.array(c["key"], pa.binary()),
            "value": pa.array(c["value"], pa.large_string()),
            "headers": pa.array(c["headers"], HEADER_TYPE),
            "timestamp": pa.array(c["timestamp"], pa.timestamp("us")),
        }
    )


def expected(n: int, start: int = 0, now_ms: int = 42) -> list[tuple[Any, ...]]:
    c = columns(n)
    return [
        (
            now_ms if c["timestamp"][i] is None else c["timestamp"][i] // 1000,
            c["key"][i],
            None if c["value"][i] is None else c["value"][i].encode(),
            [(h["key"], h["value"]) for h in c["headers"][i] or []],
        )
        for i in range(start, n)
    ]


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_rows_round_trip(codec: str) -> None:
    batch = sample(100)
    (chunk,) = plan(batch)
    assert chunk.record_count == 100
    assert rows(chunk, compression=codec) == expected(100)


def test_a_slice_reads_its_own_rows() -> None:
    (chunk,) = plan(sample(100).slice(7, 30))
    assert rows(chunk) == expected(37, start=7)


def test_a_table_s_small_batches_make_full_kafka_batches() -> None:
    table = pa.Table.from_batches([sample(100)]).to_batches(max_chunksize=3)
    assert len(table) == 34
    (chunk,) = plan(table)
    assert rows(chunk) == expected(100)


def test_an_empty_batch_plans_nothing() -> None:
    assert plan(sample(0)) == []


def test_columns_of_nulls_only_are_accepted() -> None:
    batch = pa.record_batch(
        {name: pa.nulls(3) for name in ("key", "value", "headers", "partition", "timestamp")}
    )
    (chunk,) = plan(batch)
    assert rows(chunk) == [(42, None, None, [])] * 3


def test_keyed_rows_go_where_send_puts_them() -> None:
    keys = [b"key-%d" % i for i in range(200)]
    batch = pa.record_batch({"key": pa.array(keys), "value": pa.array([b"v"] * 200)})
    chunks = plan(batch, 5)
    placed = {key: chunk.partition for chunk in chunks for _, key, _, _ in rows(chunk)}
    assert placed == {k: partition_for_key(k, 5) for k in keys}


def test_batches_stay_under_batch_size_and_sizes_bound_the_encoding() -> None:
    batch = sample(1000)
    chunks = plan(batch, 2, batch_size=2000)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.size <= 2000
        assert len(chunk.encode(0)) <= chunk.size
    assert sum(c.record_count for c in chunks) == 1000


def test_errors_name_the_column_or_row_with_first_row() -> None:
    with pytest.raises(TypeError, match='column "key": must be binary or string, got Int64'):
        plan(pa.record_batch({"key": pa.array([1]), "value": pa.array([b"x"])}))
    big = pa.record_batch({"value": pa.array([b"x", b"y" * 2000])})
    with pytest.raises(Errors.MessageSizeTooLargeError, match="row 11: "):
        plan([sample(10), big], max_request_size=1000)
    with pytest.raises(TypeError, match="expected Arrow data"):
        plan(object())
    with pytest.raises(TypeError, match="struct array"):
        plan(pa.array([b"x"]))


class StreamOnly:
    """An exporter of the Arrow C stream interface alone (as polars and DuckDB results are)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._table.__arrow_c_stream__(requested_schema)


def test_streams_are_read_batch_after_batch() -> None:
    chunked = pa.Table.from_batches(pa.Table.from_batches([sample(100)]).to_batches(7))
    for data in (
        chunked,
        StreamOnly(chunked),
        pa.RecordBatchReader.from_batches(chunked.schema, chunked.to_batches()),
    ):
        (chunk,) = plan(data)
        assert rows(chunk) == expected(100), type(data).__name__


def test_buffers_that_break_arrow_s_rules_are_refused_not_read() -> None:
    # Offsets that go backwards (a row of negative length), and bytes that are not UTF-8 in a
    # string column, which pyarrow's quick check lets through: an exporter's buffers are
    # checked in full before a byte of them is read.
    offsets = pa.py_buffer((pa.array([0, 2, 1], pa.int32())).buffers()[1])
    backwards = pa.Array.from_buffers(pa.binary(), 2, [None, offsets, pa.py_buffer(b"ab")])
    with pytest.raises(ValueError, match="the Arrow data is not valid"):
        plan(pa.RecordBatch.from_arrays([backwards], names=["value"]))
    utf8_offsets = pa.py_buffer((pa.array([0, 2], pa.int32())).buffers()[1])
    not_utf8 = pa.Array.from_buffers(
        pa.string(), 1, [None, utf8_offsets, pa.py_buffer(b"\xff\xfe")]
    )
    with pytest.raises(ValueError, match="the Arrow data is not valid"):
        plan(pa.RecordBatch.from_arrays([not_utf8], names=["value"]))


async def test_arrow_batches_count_their_size_in_a_request() -> None:
    """An ArrowBatch is closed and as large as its rows: the sender puts no more of them in one
    request than max_request_size allows (here, one 600 kB batch per 1 MiB request)."""
    from ferrokafka.cluster import ClusterMetadata
    from ferrokafka.config import ProducerConfig
    from ferrokafka.producer.arrow import ArrowBatch
    from ferrokafka.producer.message_accumulator import MessageAccumulator
    from ferrokafka.structs import TopicPartition

    values = pa.array([b"v" * 1000] * 1200)
    chunks = plan(pa.record_batch({"value": values, "partition": pa.array([0, 1] * 600)}), 2)
    batches = [ArrowBatch(c, None, transactional=False, created_ms=1) for c in chunks]
    assert [b.size() for b in batches] == [c.size for c in chunks]
    assert all(b.closed() and b.size() > 600_000 for b in batches)
    acc = MessageAccumulator(ClusterMetadata(), ProducerConfig())
    acc._cluster.leader_for_partition = lambda tp: 1  # type: ignore[method-assign]
    pairs = zip(chunks, batches, strict=True)
    acc.add_batches([(TopicPartition("t", c.partition), b) for c, b in pairs])
    ready, _, _ = acc.drain(node_ready=lambda _: True, sendable=lambda _: True, max_request_size=MB)
    assert [len(b) for b in ready.values()] == [1]
