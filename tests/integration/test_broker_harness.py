"""The real-broker harness itself: processes, ports, directories, faults and the CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import ferrokafka
import pytest
from ferrokafka.testing import (
    QUICK_START_JVM_OPTIONS,
    BrokerStartError,
    KafkaBroker,
    KafkaCluster,
    resolve_kafka,
)
from ferrokafka.testing.maven import Artifact, cache_root

pytestmark = pytest.mark.integration


def _alive(pid: int) -> bool:
    """A live process (a zombie left for an init that does not reap counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return not Path("/proc/self").exists()
    return stat[stat.rindex(")") + 2] not in "ZX"


def _accepts(address: str) -> bool:
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


def _wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# ---- Maven ------------------------------------------------------------------------------------


def test_artifact_coordinates_round_trip() -> None:
    plain = Artifact.parse("org.apache.kafka:kafka-clients:4.2.0")
    assert (plain.group_id, plain.artifact_id, plain.version) == (
        "org.apache.kafka",
        "kafka-clients",
        "4.2.0",
    )
    assert str(plain) == "org.apache.kafka:kafka-clients:4.2.0"
    classified = Artifact.parse("org.apache.kafka:kafka-clients:jar:test:4.2.0")
    assert classified.classifier == "test" and classified.version == "4.2.0"
    assert Artifact.parse(str(classified)) == classified
    with pytest.raises(ValueError):
        Artifact.parse("kafka-clients")
    with pytest.raises(ValueError):
        Artifact("org.apache.kafka", "kafka clients", "4.2.0")


def test_second_resolve_is_cached_and_needs_no_maven(monkeypatch: pytest.MonkeyPatch) -> None:
    first = resolve_kafka()
    assert first.jar("kafka_2.13").is_file()
    assert first.jar("log4j-slf4j-impl").is_file()
    assert first.jar("slf4j-api").name == "slf4j-api-1.7.36.jar"
    assert first.directory.is_relative_to(cache_root() / "maven")
    monkeypatch.setenv("PATH", "")  # no mvn, no java: the cache alone must answer
    began = time.monotonic()
    second = resolve_kafka()
    assert time.monotonic() - began < 1.0
    assert second == first


# ---- one node ---------------------------------------------------------------------------------


@pytest.mark.core
def test_single_broker_runs_then_leaves_nothing_behind(tmp_path: Path) -> None:
    broker = KafkaBroker(base_dir=tmp_path, jvm_options=QUICK_START_JVM_OPTIONS)
    broker.start()
    try:
        pid = broker.pids[1]
        assert broker.pid == pid and _alive(pid)
        assert broker.bootstrap_servers == f"127.0.0.1:{broker.port}"
        assert broker.port != broker.controller_port
        assert _accepts(broker.bootstrap_servers)
        assert _accepts(f"127.0.0.1:{broker.controller_port}")
        root = broker.directory
        assert root.parent == tmp_path
        assert b"Kafka Server started" in broker.log_path(1).read_bytes()
        info = broker.node(1)
        assert (info.node_id, info.host, info.pid) == (1, "127.0.0.1", pid)
        name = f"fk-harness-{uuid.uuid4().hex[:8]}"
        broker.create_topic(name, partitions=2)
        broker.delete_topic(name)
    finally:
        broker.stop()
    assert _wait_gone(pid, timeout=0.5), "stop() returned while the JVM still ran"
    assert not root.exists()
    assert broker.pids == {}
    assert not _accepts(f"127.0.0.1:{info.port}")
    broker.stop()  # idempotent


async def test_async_topic_wrappers_and_sync_calls_inside_a_loop(tmp_path: Path) -> None:
    with KafkaBroker(
        base_dir=tmp_path, jvm_options=QUICK_START_JVM_OPTIONS
    ) as broker:  # sync start() from inside a running loop
        name = f"fk-harness-{uuid.uuid4().hex[:8]}"
        await broker.acreate_topic(name, partitions=3)
        await broker.adelete_topic(name)
        broker.create_topic(name)  # the sync wrapper must not trip over the running loop
        broker.delete_topic(name)


def test_killed_node_is_gone_and_stop_still_cleans_up(tmp_path: Path) -> None:
    with KafkaBroker(base_dir=tmp_path, jvm_options=QUICK_START_JVM_OPTIONS) as broker:
        pid = broker.pids[1]
        root = broker.directory
        broker.kill(1)
        assert not _alive(pid)
        assert broker.pids == {} and not broker.node_running(1)
        assert not _accepts(broker.bootstrap_servers)
    assert not root.exists()


def test_failed_start_raises_with_the_log_tail(tmp_path: Path) -> None:
    # The JVM refuses to start with this stack size: the process exits before Kafka logs
    # anything, and the harness must report why instead of waiting for its timeout.
    broker = KafkaBroker(base_dir=tmp_path, jvm_options=["-Xss1k"], start_timeout=60)
    began = time.monotonic()
    with pytest.raises(BrokerStartError) as failure:
        broker.start()
    assert time.monotonic() - began < 30
    assert "stack size" in str(failure.value)
    assert list(tmp_path.iterdir()) == []
    assert broker.pids == {}


# ---- three nodes ------------------------------------------------------------------------------


@pytest.mark.cluster
def test_three_node_cluster_lifecycle_and_faults(tmp_path: Path) -> None:
    cluster = KafkaCluster(3, base_dir=tmp_path, jvm_options=QUICK_START_JVM_OPTIONS)
    cluster.start()
    try:
        assert cluster.node_ids == (1, 2, 3)
        pids = cluster.pids
        assert sorted(pids) == [1, 2, 3] and len(set(pids.values())) == 3
        assert all(_alive(pid) for pid in pids.values())
        addresses = cluster.bootstrap_servers.split(",")
        assert addresses == [cluster.address(i) for i in (1, 2, 3)]
        ports = [p for n in cluster.nodes for p in (n.port, n.controller_port)]
        assert len(set(ports)) == 6
        assert all(n.host == "127.0.0.1" for n in cluster.nodes)
        assert all(a.startswith("127.0.0.1:") and _accepts(a) for a in addresses)
        assert len({cluster.log_path(i) for i in (1, 2, 3)}) == 3
        root = cluster.directory

        name = f"fk-harness-{uuid.uuid4().hex[:8]}"
        cluster.create_topic(name, partitions=3)  # replication factor 3 by default

        cluster.kill(2)
        assert not _alive(pids[2])
        assert sorted(cluster.pids) == [1, 3]
        assert not _accepts(cluster.address(2))

        cluster.restart_node(2)
        assert cluster.pids[2] != pids[2] and _alive(cluster.pids[2])
        assert _accepts(cluster.address(2))
        assert b"restarting node 2" in cluster.log_path(2).read_bytes()

        cluster.stop_node(3)
        assert not _alive(pids[3]) and sorted(cluster.pids) == [1, 2]
        cluster.restart_node(3)
        assert sorted(cluster.pids) == [1, 2, 3]
        cluster.delete_topic(name)
        final = cluster.pids
    finally:
        cluster.stop()
    assert not any(_alive(pid) for pid in final.values())
    assert not root.exists()
    assert not any(_accepts(a) for a in addresses)


# ---- the CLI ----------------------------------------------------------------------------------


def _cli(*args: str, timeout: float = 100.0) -> subprocess.CompletedProcess[str]:
    package_root = str(Path(ferrokafka.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "ferrokafka", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def test_cli_broker_start_outlives_the_command_and_stop_ends_it() -> None:
    name = f"pytest-{uuid.uuid4().hex[:10]}"
    started = _cli("broker", "start", "--name", name, "--config", "log.retention.ms=-1")
    state_path = cache_root() / "run" / f"{name}.json"
    try:
        assert started.returncode == 0, started.stderr
        address = started.stdout.strip().splitlines()[-1]
        assert address.startswith("127.0.0.1:")
        # The command has exited; the broker it started must still serve.
        assert _accepts(address)
        state = json.loads(state_path.read_text())
        pids = [node["pid"] for node in state["nodes"]]
        assert len(pids) == 1 and all(_alive(pid) for pid in pids)
        directory = Path(state["directory"])
        assert directory.is_dir()
        # --config reaches the node's server.properties, over the harness's own settings.
        properties = Path(state["nodes"][0]["config"]).read_text().splitlines()
        assert "log.retention.ms=-1" in properties

        status = _cli("broker", "status", "--name", name)
        assert status.returncode == 0 and "running" in status.stdout, status.stdout
        again = _cli("broker", "start", "--name", name)
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        stopped = _cli("broker", "stop", "--name", name)
    assert stopped.returncode == 0, stopped.stderr
    assert all(_wait_gone(pid) for pid in pids)
    assert not _accepts(address)
    assert not directory.exists()
    assert not state_path.exists()
    missing = _cli("broker", "status", "--name", name)
    assert missing.returncode == 1
