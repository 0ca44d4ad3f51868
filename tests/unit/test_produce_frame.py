"""Produce requests have their own entry point, ``encode_produce_request``, which frames them
with their record batches copied once (straight from their ``bytes``); every other shape goes to
the generic encoder, which judges it. Byte-for-byte equality with the generic encoder is a Rust
property test; here: what Python hands in, and the same bytes as ``encode_request``'s."""

from __future__ import annotations

from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka.protocol import ApiKey

BATCH = _native.encode_batch([(1, b"k", b"v" * 300, [])])


def body(**changes: Any) -> dict[str, Any]:
    request: dict[str, Any] = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 30000,
        "topic_data": [
            {
                "name": "t",
                "partition_data": [{"index": 0, "records": BATCH}, {"index": 3, "records": None}],
            },
            {"name": "u", "partition_data": [{"index": 1, "records": BATCH[:61]}]},
        ],
    }
    request.update(changes)
    return request


def roundtrip(version: int, request: dict[str, Any]) -> dict[str, Any]:
    frame = _native.encode_produce_request(version, 7, "me", request)
    assert frame == _native.encode_request(ApiKey.PRODUCE, version, 7, "me", request)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    key, got_version, corr, client_id, decoded = _native.decode_request(frame[4:])
    assert (key, got_version, corr, client_id) == (ApiKey.PRODUCE, version, 7, "me")
    return decoded


@pytest.mark.parametrize("version", [3, 8, 9, 12])
@pytest.mark.parametrize("txn", [None, "", "txn-1"])
def test_every_field_and_batch_arrives_as_sent(version: int, txn: str | None) -> None:
    decoded = roundtrip(version, body(transactional_id=txn))
    assert decoded["transactional_id"] == txn
    assert (decoded["acks"], decoded["timeout_ms"]) == (-1, 30000)
    topics = decoded["topic_data"]
    assert [t["name"] for t in topics] == ["t", "u"]
    parts = [(p["index"], p["records"]) for t in topics for p in t["partition_data"]]
    assert parts == [(0, BATCH), (3, None), (1, BATCH[:61])]


def test_topics_by_id_from_version_13() -> None:
    topic_id = bytes(range(16))
    request = body(topic_data=[{"topic_id": topic_id, "partition_data": [{"index": 2}]}])
    decoded = roundtrip(13, request)
    assert bytes(decoded["topic_data"][0]["topic_id"]) == topic_id
    assert decoded["topic_data"][0]["partition_data"] == [{"index": 2, "records": None}]


def test_an_empty_request_and_missing_fields_take_the_defaults() -> None:
    decoded = roundtrip(9, {})
    assert decoded == {"transactional_id": None, "acks": 0, "timeout_ms": 0, "topic_data": []}


@pytest.mark.parametrize(
    "bad",
    [
        {"acks": "all"},  # a field of the wrong type
        {"topic_data": [{"name": "t", "partitions": []}]},  # an unknown key
        {"topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": "text"}]}]},
        {"extra": 1},
    ],
)
def test_a_malformed_request_gets_the_generic_encoders_error(bad: dict[str, Any]) -> None:
    with pytest.raises((TypeError, ValueError), match="Produce") as fast:
        _native.encode_produce_request(9, 1, None, body(**bad))
    with pytest.raises((TypeError, ValueError), match="Produce") as generic:
        _native.encode_request(ApiKey.PRODUCE, 9, 1, None, body(**bad))
    assert (type(fast.value), str(fast.value)) == (type(generic.value), str(generic.value))


def test_an_unsupported_version_is_refused() -> None:
    with pytest.raises(Exception, match=r"(?i)version"):
        _native.encode_produce_request(2, 1, None, body())
