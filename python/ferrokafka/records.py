"""Decode one partition's raw ``records`` bytes without a broker: the low-level entry under the
consumer (like franz-go's ``ProcessFetchPartition``). The work happens in Rust, in one call per
partition. ``decode_columns`` releases the GIL for inputs of 64 KiB and more; ``decode_records``
holds it (its records are Python objects, made during the decode).

>>> from ferrokafka.records import decode_columns, decode_records, encode_batch
>>> raw = encode_batch([(1000, b"k", b"v", [("h", b"1")])], base_offset=5, compression="zstd")
>>> part = decode_records(raw, "topic", 0)
>>> [(r.offset, r.key, r.value, r.headers) for r in part.records]
[(5, b'k', b'v', (('h', b'1'),))]
>>> part.next_offset
6

``split_acquired`` keeps the records a share-group member acquired (KIP-932), with their
delivery counts, from a ShareFetch partition's records and acquired ranges.

``decode_columns`` gives the same records as Arrow columns in Spark's Kafka schema, built in
Rust and shared with pyarrow without a copy:

>>> cols = decode_columns(raw, "topic", 0).records
>>> cols.to_pyarrow().to_pydict()["offset"]
[5]
"""

from ._native import (
    ArrowColumns,
    DecodedPartition,
    decode_columns,
    decode_records,
    encode_batch,
    split_acquired,
)

__all__ = [
    "ArrowColumns",
    "DecodedPartition",
    "decode_columns",
    "decode_records",
    "encode_batch",
    "split_acquired",
]
