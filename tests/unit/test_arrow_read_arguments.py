"""ferrokafka.arrow.read / read_async refuse bad arguments when called, with typed errors that
name the argument, before any connection is made."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from ferrokafka.arrow import read, read_async

pytest.importorskip("pyarrow")

BOOTSTRAP = "127.0.0.1:1"  # never connected to: every case fails before


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"topic": ""}, ValueError, "topic must be a non-empty string"),
        ({"partitions": []}, ValueError, "partitions is empty"),
        ({"partitions": [0, 0]}, ValueError, "names a partition twice"),
        ({"partitions": [-1]}, ValueError, "a partition is a non-negative int, got -1"),
        ({"partitions": "01"}, TypeError, "partitions must be partition numbers"),
        ({"start": -2}, ValueError, "start must be 'earliest', 'latest' or an offset >= 0"),
        ({"start": "first"}, ValueError, "start must be 'earliest', 'latest' or an offset"),
        ({"end": True}, ValueError, "end must be"),
        ({"end": {}}, ValueError, "end is an empty mapping"),
        ({"end": {0: -5}}, ValueError, r"end\[0\] must be"),
        ({"start": 1, "start_timestamp": 5}, ValueError, "start or start_timestamp, not both"),
        ({"end": 1, "end_timestamp": 5}, ValueError, "end or end_timestamp, not both"),
        ({"start_timestamp": -1}, ValueError, "start_timestamp must be milliseconds"),
        (
            {"end_timestamp": datetime.datetime(2026, 1, 1)},
            ValueError,
            "end_timestamp is a naive datetime",
        ),
        ({"start_timestamp": {1: "x"}}, ValueError, r"start_timestamp\[1\] must be"),
        ({"poll_timeout_ms": 0}, ValueError, "poll_timeout_ms must be positive"),
        ({"poll_timeout_ms": 1.5}, TypeError, "poll_timeout_ms must be an int"),
        ({"group_id": "g"}, TypeError, "a bounded read sets group_id itself"),
        ({"auto_offset_reset": "earliest"}, TypeError, "sets auto_offset_reset itself"),
        ({"fetch_max_bytes": -1}, ValueError, "fetch_max_bytes"),
        ({"no_such_option": 1}, TypeError, "no_such_option"),
    ],
)
@pytest.mark.parametrize("call", [read, read_async])
def test_bad_arguments_fail_at_the_call(
    call: Any, kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    kwargs = {"topic": "t", **kwargs}
    topic = kwargs.pop("topic")
    with pytest.raises(error, match=match):
        call(BOOTSTRAP, topic, **kwargs)


async def test_a_read_never_started_needs_no_close() -> None:
    reader = read_async(BOOTSTRAP, "t", start=3, end={0: 9})
    assert reader.schema.names == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
    ]
    await reader.close()
    with pytest.raises(StopAsyncIteration):
        await reader.__anext__()


def test_a_close_that_fails_when_the_read_ends_is_a_warning_and_the_thread_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import threading

    import pyarrow as pa
    from ferrokafka import errors as Errors
    from ferrokafka.arrow.blocking import _batches

    batch = pa.record_batch({"a": [1, 2]})

    class Failing:
        """One batch, then the end; closing raises, as a consumer whose broker went away."""

        def __init__(self) -> None:
            self.left = [batch]

        async def __anext__(self) -> Any:
            if not self.left:
                raise StopAsyncIteration
            return self.left.pop()

        async def close(self) -> None:
            raise Errors.KafkaConnectionError("node 1 went away")

    with caplog.at_level("WARNING", logger="ferrokafka.arrow.blocking"):
        assert list(_batches(Failing())) == [batch]  # type: ignore[arg-type]
    assert "closing the read's consumer failed: KafkaConnectionError" in caplog.text
    assert not any(t.name == "ferrokafka-arrow-read" for t in threading.enumerate())
