"""Log lines that need no broker: a partition's leader moving is one INFO line, and a metadata
refresh that changes nothing logs nothing."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from ferrokafka.cluster import ClusterMetadata


def metadata(leaders: dict[int, int], epoch: int) -> dict[str, Any]:
    return {
        "brokers": [{"node_id": n, "host": f"b{n}", "port": 9092} for n in (1, 2)],
        "topics": [
            {
                "name": "orders",
                "error_code": 0,
                "partitions": [
                    {
                        "partition_index": p,
                        "leader_id": leader,
                        "leader_epoch": epoch,
                        "replica_nodes": [1, 2],
                        "isr_nodes": [1, 2],
                        "error_code": 0,
                    }
                    for p, leader in leaders.items()
                ],
            }
        ],
    }


def test_a_leader_change_is_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    cluster = ClusterMetadata()
    with caplog.at_level(logging.INFO, logger="ferrokafka.cluster"):
        cluster.update_metadata(metadata({0: 1, 1: 2}, 3))  # first seen: not news
        cluster.update_metadata(metadata({0: 1, 1: 2}, 3))  # unchanged
        cluster.update_metadata(metadata({0: 2, 1: 2}, 4))
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("ferrokafka.cluster", logging.INFO, "partition orders[0]: leader 1 -> 2 (leader epoch 4)")
    ]
