"""Record batches written by the Java producer and by librdkafka, captured raw from the real
broker (tools/capture_interop.py), decode to exactly the records they were given."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from ferrokafka.records import decode_columns, decode_records

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "interop"
sys.path.insert(0, str(FIXTURES))
from dataset import COUNT, dataset_record  # noqa: E402

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
EXPECTED = [dataset_record(i) for i in range(COUNT)]


@pytest.mark.parametrize("producer", ["java", "librdkafka"])
@pytest.mark.parametrize("codec", CODECS)
def test_fixture_decodes_to_the_dataset(producer: str, codec: str) -> None:
    raw = (FIXTURES / f"{producer}-{codec}.bin").read_bytes()
    part = decode_records(raw, "interop", 0)
    assert part.batches > 1 and not part.truncated and part.next_offset == COUNT
    got = [(r.timestamp, r.key, r.value, list(r.headers)) for r in part.records]
    assert got == EXPECTED
    assert [r.offset for r in part.records] == list(range(COUNT))
    cols = decode_columns(raw, "interop", 0).records.to_pyarrow()
    assert cols.column("value").to_pylist() == [v for _, _, v, _ in EXPECTED]
    assert cols.column("key").to_pylist() == [k for _, k, _, _ in EXPECTED]


def test_fixture_codec_is_the_one_named() -> None:
    # Byte 22 of a batch is the low byte of its attributes: bits 0-2 are the codec.
    for codec_id, codec in enumerate(CODECS):
        for producer in ("java", "librdkafka"):
            raw = (FIXTURES / f"{producer}-{codec}.bin").read_bytes()
            assert raw[22] & 0x07 == codec_id, (producer, codec)


@pytest.mark.parametrize("read_committed", [False, True])
def test_committed_java_transaction(read_committed: bool) -> None:
    raw = (FIXTURES / "java-transactional.bin").read_bytes()
    part = decode_records(raw, "interop", 0, read_committed=read_committed)
    # The COMMIT marker takes offset COUNT and is never returned.
    assert part.next_offset == COUNT + 1 and part.skipped_control == 1
    assert [(r.timestamp, r.key, r.value, list(r.headers)) for r in part.records] == EXPECTED
    assert raw[22] & 0x10, "the batches are transactional"


def test_aborted_java_transaction_is_dropped_under_read_committed() -> None:
    raw = (FIXTURES / "java-transactional.bin").read_bytes()
    producer_id = int.from_bytes(raw[43:51], "big", signed=True)
    # Same bytes, but the broker says this producer's transaction from offset 0 was aborted:
    # the marker is a COMMIT, so the data stays aborted only up to it; records all go.
    part = decode_records(
        raw, "interop", 0, read_committed=True, aborted_transactions=[(producer_id, 0)]
    )
    assert part.records == [] and part.skipped_aborted == COUNT
    assert decode_records(raw, "interop", 0, aborted_transactions=[(producer_id, 0)]).records
