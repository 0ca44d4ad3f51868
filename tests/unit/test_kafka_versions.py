"""What the broker harness does differently for Kafka 3.9 and 4.x, checked without starting a
broker (the core of the integration suite runs on 3.9 in ``tools/test``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ferrokafka.testing import BrokerStartError, KafkaBroker, resolve_kafka
from ferrokafka.testing.distribution import kafka_release, logs_through_log4j2
from ferrokafka.testing.kraft import dynamic_quorum, node_config
from ferrokafka.testing.nodes import KafkaJvm


@pytest.mark.parametrize("version", ["3.8.1", "3.3.0", "2.8.2"])
def test_releases_before_3_9_are_refused_naming_what_is_supported(version: str) -> None:
    with pytest.raises(ValueError, match=rf"3\.9 and 4\.x.*not Kafka {version}.*KIP-853"):
        resolve_kafka(version)
    with pytest.raises(BrokerStartError, match=rf"Kafka {version}"):
        KafkaBroker(version=version).start()


@pytest.mark.parametrize("version", ["4", "x.y", ""])
def test_a_version_that_is_no_release_is_refused(version: str) -> None:
    with pytest.raises(ValueError, match="not a Kafka release version"):
        kafka_release(version)


def test_release_lines() -> None:
    assert kafka_release("3.9.1") == (3, 9)
    assert kafka_release("4.2.0") == (4, 2)
    assert not logs_through_log4j2("3.9.1")
    assert logs_through_log4j2("4.0.0") and logs_through_log4j2("4.2.0")


def _config(version: str) -> dict[str, str]:
    return node_config(
        node_id=1,
        port=9092,
        controller_port=9093,
        data_dir=Path("/tmp/node-1/data"),
        quorum=dynamic_quorum(9093),
        replication_factor=1,
        min_insync_replicas=1,
        overrides=({"group.streams.session.timeout.ms": "12000"},),
        version=version,
    )


def test_a_3_9_node_is_given_only_settings_3_9_knows() -> None:
    newer = _config("4.2.0")
    older = _config("3.9.1")
    assert newer["share.coordinator.state.topic.num.partitions"] == "1"
    assert newer["group.streams.heartbeat.interval.ms"] == "500"
    later = ("share.coordinator.", "group.streams.")
    assert {k for k in older if k.startswith(later)} == {"group.streams.session.timeout.ms"}
    assert {k: v for k, v in newer.items() if not k.startswith(later)} == {
        k: v for k, v in older.items() if not k.startswith(later)
    }
    # What the caller asks for is kept: only the harness's own defaults are left out.
    assert older["group.streams.session.timeout.ms"] == "12000"
    # KIP-848 stays off on 3.9, as a 3.9 broker ships.
    assert "group.coordinator.rebalance.protocols" not in older


@pytest.mark.parametrize(
    ("version", "name", "option"),
    [
        ("3.9.1", "log4j.properties", "-Dlog4j.configuration=file:"),
        ("4.2.0", "log4j2.properties", "-Dlog4j2.configurationFile="),
    ],
)
def test_each_release_line_gets_its_own_logging_configuration(
    tmp_path: Path, version: str, name: str, option: str
) -> None:
    jvm = KafkaJvm.in_directory(tmp_path, "java", "libs/*", version)
    assert jvm.log4j_config == tmp_path / name
    assert [p.name for p in tmp_path.iterdir()] == [name]
    text = jvm.log4j_config.read_text()
    # Same destination (stdout, which the harness sends to the node's log), same levels.
    assert "ferrokafka.log.level" in text
    assert "kafka.request.logger" in text and "state.change.logger" in text
    argv = jvm.argv("-Xmx1m")
    assert argv[:2] == ["java", "-Xmx1m"]
    assert argv[2] == f"{option}{tmp_path / name}"
    assert argv[3:] == ["-cp", "libs/*"]
