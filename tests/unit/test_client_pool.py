"""The connection pool's bookkeeping, against the in-process fake peer (no real broker)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient, _Backoff, parse_bootstrap_servers
from ferrokafka.conn import Connection
from ferrokafka.protocol import coordinator_node_id

from .fake_broker import FakeBroker


def test_parse_bootstrap_servers() -> None:
    assert parse_bootstrap_servers("a:1, b") == [("a", 1), ("b", 9092)]
    assert parse_bootstrap_servers(["[::1]:9093", "[fe80::1]"]) == [
        ("::1", 9093),
        ("fe80::1", 9092),
    ]
    for bad in ["", "a:x", "a:70000", "[::1"]:
        with pytest.raises(ValueError, match="bootstrap_servers"):
            parse_bootstrap_servers(bad)


def test_invalid_options_name_the_option() -> None:
    with pytest.raises(ValueError, match="request_timeout_ms"):
        AIOKafkaClient(request_timeout_ms=-1)
    with pytest.raises(ValueError, match="connections_max_idle_ms"):
        AIOKafkaClient(connections_max_idle_ms=0)
    with pytest.raises(ValueError, match="retry_backoff_ms"):
        AIOKafkaClient(retry_backoff_ms=True)
    with pytest.raises(ValueError, match="security_protocol"):
        AIOKafkaClient(security_protocol="CARRIER_PIGEON")


def test_backoff_grows_exponentially_to_the_cap() -> None:
    b = _Backoff(100, 1000)
    delays = [b.failed(1) for _ in range(6)]
    for n, d in enumerate(delays[:4]):
        assert 0.8 * 0.1 * 2**n <= d <= 1.2 * 0.1 * 2**n
    assert all(d <= 1.2 for d in delays)
    assert b.remaining(1) > 0
    b.succeeded(1)
    assert b.remaining(1) == 0


def test_coordinator_key() -> None:
    assert coordinator_node_id(1) == 2147483646
    assert coordinator_node_id(0) == 2147483647


def _metadata(port: int, broker_ids: list[int]) -> dict[str, Any]:
    return {
        "brokers": [
            {"node_id": b, "host": "127.0.0.1", "port": port, "rack": None} for b in broker_ids
        ],
        "topics": [],
        "cluster_id": "fake",
        "controller_id": broker_ids[0],
    }


async def test_no_socket_before_bootstrap_then_ids_and_idle_close() -> None:
    holder: dict[str, FakeBroker] = {}

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        return _native.encode_response(key, version, corr, _metadata(holder["b"].port, [1, 2]))

    broker = holder["b"] = await FakeBroker(handler).start()
    try:
        client = AIOKafkaClient(
            bootstrap_servers=f"127.0.0.1:{broker.port}", connections_max_idle_ms=300
        )
        assert broker.writers == []
        assert client.connections == {}
        await client.bootstrap()
        assert list(client.connections) == [-1]
        assert client.cluster.broker_ids() == [1, 2]
        # Least-loaded routing now picks real brokers, never the bootstrap node.
        assert {client.least_loaded_node() for _ in range(50)} <= {1, 2}
        await client.send(1, 3, {"topics": None})
        coord = await client.coordinator_connection(2)
        assert coord.node_id == 2147483645
        assert set(client.connections) == {-1, 1, 2147483645}
        assert client.connections[1] is not coord
        await asyncio.sleep(0.8)
        assert client.connections == {}, "idle connections were not closed"
        await client.close()
    finally:
        await broker.stop()


async def test_least_loaded_prefers_fewest_in_flight() -> None:
    gate = asyncio.Event()
    holder: dict[str, FakeBroker] = {}

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        if body.get("topics") == [{"name": "slow", "topic_id": bytes(16)}]:
            await gate.wait()
        return _native.encode_response(key, version, corr, _metadata(holder["b"].port, [1, 2]))

    broker = holder["b"] = await FakeBroker(handler).start()
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{broker.port}")
    try:
        await client.bootstrap()
        await client.ready(1)
        await client.ready(2)
        slow = asyncio.ensure_future(client.send(1, 3, {"topics": [{"name": "slow"}]}))
        await asyncio.sleep(0.05)
        assert client.connections[1].in_flight == 1
        assert {client.least_loaded_node() for _ in range(30)} == {2}
        gate.set()
        await slow
    finally:
        await client.close()
        await broker.stop()


async def test_bootstrap_failure_lists_every_node() -> None:
    client = AIOKafkaClient(bootstrap_servers="127.0.0.1:1,127.0.0.1:2", request_timeout_ms=1000)
    with pytest.raises(Errors.KafkaConnectionError, match=r"node -1 .*node -2"):
        await client.bootstrap()
    await client.close()


async def test_metadata_refreshes_every_max_age() -> None:
    holder: dict[str, FakeBroker] = {}

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        return _native.encode_response(key, version, corr, _metadata(holder["b"].port, [1]))

    broker = holder["b"] = await FakeBroker(handler).start()
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{broker.port}", metadata_max_age_ms=100)
    try:
        await client.bootstrap()
        first = client.cluster.last_refresh
        started = time.monotonic()

        def metadata_requests() -> int:
            return sum(1 for r in broker.requests if r[0] == 3)

        # Event-driven rather than a fixed sleep, so a loaded machine only makes it slower:
        # the refreshes come by themselves, and no faster than one per max age.
        async def four_refreshes() -> None:
            while metadata_requests() < 4:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(four_refreshes(), 10)
        elapsed = time.monotonic() - started
        assert elapsed >= 3 * 0.1 * 0.9, elapsed
        assert metadata_requests() <= elapsed / 0.1 + 2, (metadata_requests(), elapsed)
        assert client.cluster.last_refresh is not None and first is not None
        assert client.cluster.last_refresh > first
    finally:
        await client.close()
        await broker.stop()


async def test_concurrent_refreshes_share_one_request() -> None:
    holder: dict[str, FakeBroker] = {}

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        await asyncio.sleep(0.05)
        return _native.encode_response(key, version, corr, _metadata(holder["b"].port, [1]))

    broker = holder["b"] = await FakeBroker(handler).start()
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{broker.port}")
    try:
        await client.bootstrap()

        def metadata_requests() -> int:
            return sum(1 for r in broker.requests if r[0] == 3)

        before = metadata_requests()
        await asyncio.gather(*(client.refresh_metadata() for _ in range(20)))
        assert metadata_requests() - before == 1
    finally:
        await client.close()
        await broker.stop()


async def test_a_refresh_after_a_topic_is_added_asks_for_it_even_with_one_in_flight() -> None:
    holder: dict[str, Any] = {"gate": asyncio.Event(), "entered": asyncio.Event()}

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        if key == 3 and body["topics"] == []:  # the refresh started before add_topic()
            holder["entered"].set()
            await holder["gate"].wait()
        return _native.encode_response(key, version, corr, _metadata(holder["b"].port, [1]))

    broker = holder["b"] = await FakeBroker(handler).start()
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{broker.port}")
    try:
        await client.bootstrap()
        client.set_topics(set())
        early = asyncio.ensure_future(client.refresh_metadata())
        await asyncio.wait_for(holder["entered"].wait(), 5)
        client.add_topic("new")
        later = asyncio.ensure_future(client.refresh_metadata())
        await asyncio.sleep(0.05)
        holder["gate"].set()
        await asyncio.wait_for(asyncio.gather(early, later), 5)
        asked = [
            sorted(t["name"] for t in body["topics"] or ())
            for key, _, _, body in broker.requests
            if key == 3 and body["topics"] is not None
        ]
        assert asked == [[], ["new"]]
        # Nothing changed since: callers share the request in flight again.
        before = len(broker.requests)
        await asyncio.gather(client.refresh_metadata(), client.refresh_metadata())
        assert len(broker.requests) - before == 1
    finally:
        await client.close()
        await broker.stop()


async def test_a_tracked_topic_missing_from_the_metadata_is_looked_up_again_soon() -> None:
    holder: dict[str, Any] = {"exists": False}

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        md = _metadata(holder["b"].port, [1])
        if holder["exists"]:
            partition = {
                "error_code": 0,
                "partition_index": 0,
                "leader_id": 1,
                "leader_epoch": 0,
                "replica_nodes": [1],
                "isr_nodes": [1],
                "offline_replicas": [],
            }
            md["topics"] = [
                {
                    "error_code": 0,
                    "name": "late",
                    "topic_id": bytes(range(1, 17)),
                    "is_internal": False,
                    "partitions": [partition],
                }
            ]
        return _native.encode_response(key, version, corr, md)

    broker = holder["b"] = await FakeBroker(handler).start()
    # metadata_max_age_ms is 5 minutes: every refresh seen here is the missing topic's.
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{broker.port}", retry_backoff_ms=100)

    def metadata_requests() -> int:
        return sum(1 for r in broker.requests if r[0] == 3)

    try:
        await client.bootstrap()
        client.add_topic("late")
        await client.refresh_metadata()
        before = metadata_requests()
        started = asyncio.get_running_loop().time()

        async def four_more() -> None:
            while metadata_requests() - before < 4:
                await asyncio.sleep(0.01)

        # After 0.1, 0.2, 0.4 and 0.8 s (+-20%): backing off, not polling. Waited for rather
        # than counted after a fixed sleep, so a loaded machine only makes it slower.
        await asyncio.wait_for(four_more(), 10)
        elapsed = asyncio.get_running_loop().time() - started
        assert elapsed >= 1.5 * 0.8, elapsed
        holder["exists"] = True
        deadline = asyncio.get_running_loop().time() + 3
        while client.cluster.partitions_for_topic("late") is None:
            assert asyncio.get_running_loop().time() < deadline, "the topic was never seen"
            await asyncio.sleep(0.05)
        found = metadata_requests()
        await asyncio.sleep(1.5)
        assert metadata_requests() == found, "refreshing fast although nothing is missing"
    finally:
        await client.close()
        await broker.stop()


async def test_a_connection_made_after_the_client_closed_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    holder: dict[str, FakeBroker] = {}

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        return _native.encode_response(key, version, corr, _metadata(holder["b"].port, [1]))

    broker = holder["b"] = await FakeBroker(handler).start()
    gate = asyncio.Event()
    real_connect = Connection.connect
    made: list[Connection] = []

    async def connect_then_wait(self: Connection, timeout: float | None = None) -> None:
        await real_connect(self, timeout)
        if self.node_id == 1:
            made.append(self)
            await gate.wait()  # the client is closed while this connect is finishing

    monkeypatch.setattr(Connection, "connect", connect_then_wait)
    client = AIOKafkaClient(bootstrap_servers=f"127.0.0.1:{broker.port}")
    try:
        await client.bootstrap()
        connecting = asyncio.ensure_future(client.ready(1))
        while not made:
            await asyncio.sleep(0.01)
        await client.close()
        gate.set()
        with pytest.raises(Errors.KafkaConnectionError, match="closed while connecting to node 1"):
            await connecting
        assert made[0].closed
        assert client.connections == {}
    finally:
        await client.close()
        await broker.stop()
