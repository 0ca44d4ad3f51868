"""commitOffsetsToGroup in the streaming reader, without a broker: a refused commit is a warning
once per set of offsets, not a request and a warning at every trigger."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from ferrokafka import errors as Errors
from ferrokafka.spark.datasource import KafkaDataSource


def _reader(**options: str) -> Any:
    source = KafkaDataSource(
        {"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t", **options}
    )
    return source.streamReader(source.schema())


def test_a_refused_group_commit_is_tried_once_per_set_of_offsets(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reader = _reader(commitOffsetsToGroup="lag-view")
    tries: list[Any] = []

    def refused(make: Any) -> None:
        tries.append(make)
        raise Errors.UnknownMemberIdError("OffsetCommit for group 'lag-view'")

    reader._run = refused
    first = {"t": {"0": 5, "1": 7}}
    with caplog.at_level(logging.WARNING, logger="ferrokafka.spark.datasource"):
        for _ in range(50):  # latestOffset(start) at every trigger with no new data
            reader._commit_to_group(first)
        reader.commit(first)
        assert len(tries) == 1
        reader.commit({"t": {"0": 9, "1": 7}})  # the next micro-batch tries again
        assert len(tries) == 2
    warnings = [
        r
        for r in caplog.records
        if r.levelno >= logging.WARNING and "commitOffsetsToGroup" in r.getMessage()
    ]
    assert len(warnings) == 2
    assert "'lag-view'" in warnings[0].getMessage()
    assert "UnknownMemberIdError" in warnings[0].getMessage()


def test_without_the_option_nothing_is_committed() -> None:
    reader = _reader()

    def never(make: Any) -> None:
        raise AssertionError("no commit expected")

    reader._run = never
    reader.commit({"t": {"0": 5}})
