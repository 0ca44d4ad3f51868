"""The connection pool and metadata against the real Kafka broker (started by the harness)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

import pytest
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import ApiKey, coordinator_node_id
from ferrokafka.structs import TopicPartition

pytestmark = [pytest.mark.integration, pytest.mark.core]


async def test_metadata_of_a_created_topic(bootstrap_servers: str, make_topic: Any) -> None:
    name = make_topic(partitions=3)
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        client.add_topic(name)
        await client.refresh_metadata()
        assert client.cluster.partitions_for_topic(name) == {0, 1, 2}
        broker_ids = client.cluster.broker_ids()
        assert len(broker_ids) == 1
        for p in range(3):
            tp = TopicPartition(name, p)
            assert client.cluster.leader_for_partition(tp) == broker_ids[0]
            assert client.cluster.leader_epoch_for_partition(tp) >= 0
        info = client.cluster.topic_info(name)
        assert info is not None and info.topic_id is not None
        assert client.cluster.cluster_id


async def test_unknown_topic_is_reported_not_invented(bootstrap_servers: str) -> None:
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        client.add_topic("ferrokafka-no-such-topic")
        await client.refresh_metadata()
        assert client.cluster.partitions_for_topic("ferrokafka-no-such-topic") is None
        assert client.cluster.topic_error("ferrokafka-no-such-topic") == 3


async def test_node_ids_bootstrap_first_then_real_ids(bootstrap_servers: str) -> None:
    client = AIOKafkaClient(bootstrap_servers=bootstrap_servers)
    assert client.connections == {}, "constructing a client must open no socket"
    await client.bootstrap()
    try:
        assert list(client.connections) == [-1]
        broker = client.cluster.broker_ids()[0]
        assert client.least_loaded_node() == broker
        await client.send(client.least_loaded_node(), ApiKey.METADATA, {"topics": []})
        assert sorted(client.connections) == [-1, broker]
    finally:
        await client.close()
    assert client.connections == {}


async def test_coordinator_connection_is_a_separate_socket(bootstrap_servers: str) -> None:
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        reply = await client.send_to_any(
            ApiKey.FIND_COORDINATOR,
            {"key": "ferrokafka-group", "key_type": 0, "coordinator_keys": ["ferrokafka-group"]},
        )
        coordinators = reply.get("coordinators") or []
        node = coordinators[0]["node_id"] if coordinators else reply["node_id"]
        data = await client.ready(node)
        coord = await client.coordinator_connection(node)
        assert coord.node_id == 2147483647 - node == coordinator_node_id(node)
        assert coord is not data
        data_port = data._receiver.transport.get_extra_info("sockname")[1]  # type: ignore[union-attr]
        coord_port = coord._receiver.transport.get_extra_info("sockname")[1]  # type: ignore[union-attr]
        assert data_port != coord_port, "coordinator must not share the data socket"
        await coord.send(ApiKey.METADATA, {"topics": []})


async def test_idle_connection_closes(bootstrap_servers: str) -> None:
    async with AIOKafkaClient(
        bootstrap_servers=bootstrap_servers, connections_max_idle_ms=400
    ) as client:
        broker = client.cluster.broker_ids()[0]
        conn = await client.ready(broker)
        assert conn.connected
        deadline = time.monotonic() + 5
        while conn.connected and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not conn.connected
        assert client.connections == {}
        # And the pool reconnects on the next request.
        await client.send(broker, ApiKey.METADATA, {"topics": []})
        assert broker in client.connections


async def test_thousand_concurrent_requests_on_one_connection(bootstrap_servers: str) -> None:
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        broker = client.cluster.broker_ids()[0]
        conn = await client.ready(broker)
        replies = await asyncio.gather(
            *(conn.send(ApiKey.METADATA, {"topics": []}) for _ in range(1000))
        )
        assert len(replies) == 1000
        assert all(r["brokers"][0]["node_id"] == broker for r in replies)
        assert conn.in_flight == 0
        assert client.connections[broker] is conn


@pytest.mark.cluster
async def test_three_node_cluster_metadata(kafka_cluster: Any) -> None:
    name = f"fk-meta-{os.getpid()}-{time.monotonic_ns()}"
    await kafka_cluster.acreate_topic(name, partitions=6, replication_factor=3)
    try:
        async with AIOKafkaClient(bootstrap_servers=kafka_cluster.bootstrap_servers) as client:
            client.add_topic(name)
            await client.refresh_metadata()
            assert client.cluster.broker_ids() == [1, 2, 3]
            leaders = set()
            for p in range(6):
                info = client.cluster.partition_info(TopicPartition(name, p))
                assert info is not None
                assert sorted(info.replicas) == [1, 2, 3]
                assert sorted(info.isr) == [1, 2, 3]
                leaders.add(info.leader)
            assert leaders <= {1, 2, 3} and len(leaders) > 1
            assert client.cluster.controller in {1, 2, 3}
    finally:
        await kafka_cluster.adelete_topic(name)


def _thread_states(pid: int) -> list[str]:
    """The scheduler state of each of a process's threads (``T``: stopped)."""
    states = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        except FileNotFoundError:
            continue  # a thread that has exited
    return states


async def _all_threads_stopped(pid: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        states = _thread_states(pid)
        if all(state in ("T", "t") for state in states):
            return
        assert time.monotonic() < deadline, f"broker {pid} not stopped: {states}"
        await asyncio.sleep(0.01)


@pytest.mark.cluster
async def test_broker_killed_mid_request_fails_waiters_and_pool_reconnects(
    kafka_cluster: Any,
) -> None:
    victim = 3
    async with AIOKafkaClient(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        request_timeout_ms=60000,
        reconnect_backoff_ms=50,
    ) as client:
        conn = await client.ready(victim)
        pid = kafka_cluster.pids[victim]
        os.kill(pid, signal.SIGSTOP)  # freeze: requests stay in flight, unanswered
        try:
            # A thread running on another core stops only when next scheduled: wait until
            # every thread is stopped, or a request sent now could still be answered.
            await _all_threads_stopped(pid)
            waiters = [
                asyncio.ensure_future(conn.send(ApiKey.METADATA, {"topics": []})) for _ in range(10)
            ]
            await asyncio.sleep(0.3)
            assert conn.in_flight == 10
            start = time.monotonic()
            kafka_cluster.kill(victim)
        finally:
            # A SIGKILLed stopped process dies; SIGCONT is harmless if it already has.
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
        results = await asyncio.gather(*waiters, return_exceptions=True)
        elapsed = time.monotonic() - start
        assert all(isinstance(r, Errors.KafkaConnectionError) for r in results), results
        assert elapsed < 5, f"waiters took {elapsed:.1f}s to fail"
        with pytest.raises(Errors.KafkaConnectionError):
            await client.send(victim, ApiKey.METADATA, {"topics": []})
        kafka_cluster.restart_node(victim)
        deadline = time.monotonic() + 60
        while True:
            try:
                reply = await client.send(victim, ApiKey.METADATA, {"topics": []})
                break
            except Errors.KafkaConnectionError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
        assert {b["node_id"] for b in reply["brokers"]} >= {victim}
        assert client.connections[victim] is not conn
