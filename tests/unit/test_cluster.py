"""ClusterMetadata: what a metadata response's topic errors leave behind."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from ferrokafka import errors as Errors
from ferrokafka.cluster import ClusterMetadata


def response(**topic_errors: int) -> dict[str, Any]:
    return {
        "brokers": [{"node_id": 1, "host": "h", "port": 9092}],
        "topics": [
            {"name": name, "error_code": code, "partitions": []}
            for name, code in topic_errors.items()
        ],
    }


def test_a_topic_error_is_kept_and_logged_once_when_it_appears(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = ClusterMetadata()
    invalid = Errors.InvalidTopicError.errno
    unknown = Errors.UnknownTopicOrPartitionError.errno
    with caplog.at_level(logging.INFO, logger="ferrokafka.cluster"):
        cluster.update_metadata(response(bad=invalid, gone=unknown), all_topics=False)
        cluster.update_metadata(response(bad=invalid, gone=unknown), all_topics=False)
    assert cluster.topic_error("bad") == invalid
    assert cluster.partitions_for_topic("bad") is None
    logged = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert logged == [
        (logging.ERROR, "metadata for topic 'bad': INVALID_TOPIC (Invalid topic exception.)"),
        (
            logging.WARNING,
            "metadata for topic 'gone': UNKNOWN_TOPIC_OR_PARTITION "
            f"({Errors.UnknownTopicOrPartitionError.description})",
        ),
    ]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="ferrokafka.cluster"):
        cluster.update_metadata(response(gone=0), all_topics=False)  # created since
        cluster.update_metadata(response(bad=invalid), all_topics=False)  # back again
    assert cluster.topic_error("gone") == 0
    assert [r.getMessage() for r in caplog.records] == [
        "metadata for topic 'bad': INVALID_TOPIC (Invalid topic exception.)"
    ]
