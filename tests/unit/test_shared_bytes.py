"""``SharedBytes``: a Fetch response's records and received frames stay in Rust memory, read in
place by the decoders and copied out only on request; anything else is refused by type."""

from __future__ import annotations

import pytest
from ferrokafka import _native
from ferrokafka.protocol import ApiKey
from ferrokafka.records import decode_records, encode_batch


def fetch_response_with(records: bytes) -> _native.SharedBytes:
    body = {
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {
                "topic": "t",
                "partitions": [
                    {
                        "partition_index": 0,
                        "error_code": 0,
                        "high_watermark": 3,
                        "records": records,
                    }
                ],
            }
        ],
    }
    frame = _native.encode_response(ApiKey.FETCH, 12, 7, body)
    (received,) = _native._FrameDecoder().feed(frame)
    return received


def test_fetch_records_arrive_as_shared_bytes_and_decode_in_place() -> None:
    raw = encode_batch([(1, b"k", b"v", []), (2, None, b"w", [])], base_offset=1)
    frame = fetch_response_with(raw)
    assert isinstance(frame, _native.SharedBytes)
    assert _native.peek_correlation_id(frame) == 7
    _, body = _native.decode_fetch_response(12, frame)
    records = body["responses"][0]["partitions"][0]["records"]
    assert isinstance(records, _native.SharedBytes)
    assert len(records) == len(raw) and bytes(records) == raw and records == raw
    assert records[:12] == raw[:12] and records[-1] == raw[-1] and records[::7] == raw[::7]
    with pytest.raises(IndexError):
        records[len(raw)]
    assert [r.value for r in decode_records(records, "t", 0).records] == [b"v", b"w"]
    assert _native.records_end(records) == (3, -1)
    assert _native.batch_position(records, 1) == 0


def _bytes(records: _native.SharedBytes | None) -> bytes | None:
    return None if records is None else bytes(records)


def test_other_objects_are_refused_by_type() -> None:
    with pytest.raises(TypeError, match="expected bytes or SharedBytes, got bytearray"):
        decode_records(bytearray(b"x"), "t", 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got str"):
        _native.peek_correlation_id("frame")  # type: ignore[arg-type]


def test_each_partition_gets_its_own_records_from_one_shared_frame() -> None:
    """Records of several partitions (one null) are ranges of the one received frame; the same
    response given as plain bytes decodes to the same values."""
    raws = [encode_batch([(i, b"k%d" % i, bytes(50 + i), [])], base_offset=i) for i in range(3)]
    parts = [
        {"partition_index": i, "error_code": 0, "high_watermark": 9, "records": raw}
        for i, raw in enumerate(raws)
    ]
    parts.append({"partition_index": 3, "error_code": 0, "high_watermark": 0, "records": None})
    body = {
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {"topic": "a", "partitions": parts[:2]},
            {"topic": "b", "partitions": parts[2:]},
        ],
    }
    frame = _native.encode_response(ApiKey.FETCH, 12, 9, body)
    decoder = _native._FrameDecoder()
    received = decoder.feed(frame[:5]) + decoder.feed(frame[5:] + frame)  # two frames, split
    assert len(received) == 2
    for each in [*received, frame[4:]]:
        _, got = _native.decode_fetch_response(12, each)
        flat = [p["records"] for t in got["responses"] for p in t["partitions"]]
        assert flat[3] is None
        assert all(isinstance(r, _native.SharedBytes) for r in flat[:3])
        assert [bytes(r) for r in flat[:3]] == raws
        assert [decode_records(r, "t", 0).records[0].offset for r in flat[:3]] == [0, 1, 2]
        # The generic decoder gives the same response, its records copied out as bytes.
        assert _native.decode_response(ApiKey.FETCH, 12, each)[1] == {
            **got,
            "responses": [
                {
                    **t,
                    "partitions": [{**p, "records": _bytes(p["records"])} for p in t["partitions"]],
                }
                for t in got["responses"]
            ],
        }
    _, got = _native.decode_fetch_response(12, received[0])
    kept = got["responses"][1]["partitions"][0]["records"]
    del received, got, decoder  # records outlive the frame they are a range of
    assert bytes(kept) == raws[2]
