"""What the broker harness writes for each KRaft node, checked without starting one."""

from __future__ import annotations

import re
from pathlib import Path

from ferrokafka.testing.kraft import (
    config_values,
    dynamic_quorum,
    node_config,
    random_cluster_id,
    render_properties,
    static_quorum,
)


def test_cluster_ids_are_kafka_uuids_that_no_parser_takes_for_a_flag() -> None:
    for _ in range(200):
        cluster_id = random_cluster_id()
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", cluster_id)
        assert not cluster_id.startswith("-")


def test_settings_are_written_as_server_properties_spells_them() -> None:
    assert config_values({"a": True, "b": False, "c": 3, "d": "x"}) == {
        "a": "true",
        "b": "false",
        "c": "3",
        "d": "x",
    }
    assert config_values(None) == {}
    text = render_properties({"node.id": "1", "log.dirs": "/tmp/d"})
    assert text.splitlines()[1:] == ["node.id=1", "log.dirs=/tmp/d"]
    assert text.startswith("#") and text.endswith("\n")


def test_quorums() -> None:
    assert dynamic_quorum(9093) == {"controller.quorum.bootstrap.servers": "127.0.0.1:9093"}
    assert static_quorum([(1, 9093), (2, 9095)]) == {
        "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9095"
    }


def test_node_config_has_the_node_its_quorum_and_the_overrides_last() -> None:
    config = node_config(
        node_id=2,
        port=9092,
        controller_port=9093,
        data_dir=Path("/tmp/node-2/data"),
        quorum=static_quorum([(1, 9091), (2, 9093)]),
        replication_factor=3,
        min_insync_replicas=2,
        overrides=({"num.partitions": "4", "broker.rack": "a"}, {"broker.rack": "b"}),
    )
    assert config["node.id"] == "2"
    assert config["process.roles"] == "broker,controller"
    assert config["listeners"] == "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093"
    assert config["advertised.listeners"] == config["listeners"]
    assert config["controller.quorum.voters"] == "1@127.0.0.1:9091,2@127.0.0.1:9093"
    assert config["log.dirs"] == "/tmp/node-2/data"
    assert config["offsets.topic.replication.factor"] == "3"
    assert config["transaction.state.log.min.isr"] == "2"
    # The harness's defaults first, then each override in order.
    assert config["num.partitions"] == "4"
    assert config["broker.rack"] == "b"
