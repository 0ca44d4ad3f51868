"""``start()``'s wait for subscribed topics a broker creates on first use
(``ferrokafka.consumer.topic_creation``), against a scripted broker: it waits only for a broker
that says (DescribeConfigs) it creates topics, and never fails ``start()`` for a missing topic."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition, _native
from ferrokafka.protocol import ApiKey

from .fake_broker import FakeBroker

NODE = 1
CLUSTER_AUTHORIZATION_FAILED = 31


class AutoCreating:
    """A one-node cluster whose topic ``new`` exists once ``after`` Metadata requests have
    named it, if the broker creates topics (``creates``: its ``auto.create.topics.enable``,
    or an error code for DescribeConfigs)."""

    def __init__(self, creates: str | int, after: int = 3) -> None:
        self.creates = creates
        self.after = after
        self.asked = 0
        self.described = 0
        self.broker = FakeBroker(self.handle)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.broker.port}"

    def exists(self) -> bool:
        return self.creates == "true" and self.asked > self.after

    async def handle(self, key: int, version: int, corr: int, body: dict[str, Any]) -> Any:
        if key == ApiKey.METADATA:
            names = [t["name"] for t in body["topics"] or []]
            if "new" in names and body["allow_auto_topic_creation"]:
                self.asked += 1
            return _native.encode_response(key, version, corr, self._metadata(names))
        if key == ApiKey.DESCRIBE_CONFIGS:
            self.described += 1
            return _native.encode_response(key, version, corr, self._configs(body))
        return None  # (fetches and offsets: the tests stop before they matter)

    def _metadata(self, names: list[str]) -> dict[str, Any]:
        partition = {
            "error_code": 0,
            "partition_index": 0,
            "leader_id": NODE,
            "leader_epoch": 0,
            "replica_nodes": [NODE],
            "isr_nodes": [NODE],
            "offline_replicas": [],
        }
        exists = self.exists()
        return {
            "brokers": [
                {"node_id": NODE, "host": "127.0.0.1", "port": self.broker.port, "rack": None}
            ],
            "cluster_id": "fake",
            "controller_id": NODE,
            "topics": [
                {
                    "error_code": 0 if exists else 3,  # UNKNOWN_TOPIC_OR_PARTITION, as KRaft
                    "name": "new",
                    "topic_id": b"\x01" * 16 if exists else bytes(16),
                    "is_internal": False,
                    "partitions": [partition] if exists else [],
                }
            ]
            if "new" in names
            else [],
        }

    def _configs(self, body: dict[str, Any]) -> dict[str, Any]:
        (resource,) = body["resources"]
        error = self.creates if isinstance(self.creates, int) else 0
        configs = [
            {
                "name": "auto.create.topics.enable",
                "value": self.creates,
                "read_only": True,
                "config_source": 5,
                "is_sensitive": False,
                "synonyms": [],
                "config_type": 1,
                "documentation": None,
            }
        ]
        return {
            "throttle_time_ms": 0,
            "results": [
                {
                    "error_code": error,
                    "error_message": None,
                    "resource_type": resource["resource_type"],
                    "resource_name": resource["resource_name"],
                    "configs": [] if error else configs,
                }
            ],
        }


async def _started(cluster: AutoCreating, **options: Any) -> tuple[set[TopicPartition], float]:
    """Start a consumer subscribed to ``new``: its assignment right after start(), and how
    long start() took."""
    await cluster.broker.start()
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        "new", bootstrap_servers=cluster.bootstrap, retry_backoff_ms=20, **options
    )
    began = time.monotonic()
    try:
        await asyncio.wait_for(consumer.start(), 10)
        return consumer.assignment(), time.monotonic() - began
    finally:
        await consumer.stop()
        await cluster.broker.stop()


async def test_start_waits_for_a_topic_the_broker_creates() -> None:
    cluster = AutoCreating("true")
    assignment, _ = await _started(cluster)
    assert assignment == {TopicPartition("new", 0)}
    assert cluster.described == 1 and cluster.asked > cluster.after


@pytest.mark.parametrize(
    "creates",
    ["false", CLUSTER_AUTHORIZATION_FAILED],
    ids=["the broker does not create topics", "DescribeConfigs refused"],
)
async def test_start_does_not_wait_when_the_broker_does_not_say_it_creates_topics(
    creates: str | int,
) -> None:
    cluster = AutoCreating(creates)
    assignment, took = await _started(cluster)
    assert assignment == set()
    assert cluster.described == 1 and took < 2


async def test_start_asks_nothing_when_the_consumer_may_not_create_topics() -> None:
    cluster = AutoCreating("true")
    assignment, _ = await _started(cluster, allow_auto_create_topics=False)
    assert assignment == set() and cluster.described == 0


async def test_a_topic_never_created_does_not_fail_start() -> None:
    cluster = AutoCreating("true", after=10**6)
    assignment, took = await _started(cluster, request_timeout_ms=1000)
    assert assignment == set()
    assert 0.9 < took < 5
