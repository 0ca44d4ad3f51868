"""``metrics()`` of a producer and a group consumer against the real broker: the Java client's
names, with values that follow what was sent, fetched, consumed and committed."""

from __future__ import annotations

import math
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.metrics import MetricName, flatten

from .group_util import FAST, until
from .kafka_versions import CONSUMER_PROTOCOL

pytestmark = [pytest.mark.integration]

RECORDS = 300


def _by_name(metrics: dict[MetricName, float], group: str) -> dict[str, float]:
    """Untagged (beyond client-id) metrics of ``group`` by name."""
    return {n.name: v for n, v in metrics.items() if n.group == group and len(n.tags) == 1}


async def test_producer_and_consumer_metrics(bootstrap_servers: str, make_topic: Any) -> None:
    topic = make_topic(partitions=2)
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, client_id="metrics-producer", linger_ms=5
    ) as producer:
        futures = [
            await producer.send(topic, b"v%04d" % i, key=b"k%d" % i, partition=i % 2)
            for i in range(RECORDS)
        ]
        for f in futures:
            await f
        in_flight = MetricName.of(
            "requests-in-flight", "producer-metrics", client_id="metrics-producer"
        )
        # The request's task ends just after the last future resolves.
        await until(lambda: producer.metrics()[in_flight] == 0, 5, "no request in flight")
        produced = producer.metrics()
    p = _by_name(produced, "producer-metrics")
    assert p["record-send-total"] == RECORDS
    assert p["record-send-rate"] > 0
    # (A retry is possible: the new topic's leader may not be known by the first send.)
    assert p["record-error-total"] == 0
    assert 0 < p["batch-size-avg"] <= p["batch-size-max"]
    assert p["record-queue-time-max"] >= 0
    assert p["compression-rate-avg"] > 0
    assert p["records-per-request-avg"] >= 1
    assert p["request-total"] >= 2 and p["response-total"] >= 2
    assert p["request-latency-avg"] > 0 and p["request-latency-max"] >= p["request-latency-avg"]
    assert p["connection-creation-total"] >= 1
    assert all(n.tag("client-id") == "metrics-producer" for n in produced)
    nodes = {n.tag("node-id") for n in produced if n.group == "producer-node-metrics"}
    assert "node-1" in nodes or any(t and t.startswith("node-") and t != "node--1" for t in nodes)

    group = f"g-{topic}"
    async with AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group, client_id="metrics-c", **FAST
    ) as consumer:
        seen = 0
        while seen < RECORDS:
            batch = await consumer.getmany(timeout_ms=5000)
            seen += sum(len(v) for v in batch.values())
        await consumer.commit()
        metrics = consumer.metrics()
        live = consumer.metrics()  # lag gauges are read off the partitions now
    f = _by_name(metrics, "consumer-fetch-manager-metrics")
    assert f["records-consumed-total"] == RECORDS
    assert f["bytes-consumed-total"] > RECORDS * 5
    assert f["records-consumed-rate"] > 0 and f["fetch-total"] >= 1
    assert f["fetch-latency-max"] >= f["fetch-latency-avg"] >= 0
    assert f["records-lag-max"] == 0
    lags = {
        (n.tag("topic"), n.tag("partition")): v
        for n, v in live.items()
        if n.name == "records-lag" and n.group == "consumer-fetch-manager-metrics"
    }
    assert lags == {(topic, "0"): 0.0, (topic, "1"): 0.0}
    c = _by_name(metrics, "consumer-coordinator-metrics")
    assert c["assigned-partitions"] == 2
    assert c["rebalance-total"] >= 1 and c["rebalance-latency-max"] > 0
    assert 0 <= c["last-rebalance-seconds-ago"] < 60
    assert c["commit-total"] >= 1 and c["commit-latency-avg"] > 0
    assert c["join-total"] >= 1 and c["sync-total"] >= 1
    n = _by_name(metrics, "consumer-metrics")
    assert n["connection-count"] >= 2  # a broker, and the coordinator's own connection
    assert n["request-error-total"] == 0
    flat = flatten(metrics)
    assert (
        flat["consumer-fetch-manager-metrics:records-consumed-total{client-id=metrics-c}"]
        == RECORDS
    )


async def test_lag_follows_what_is_left(bootstrap_servers: str, topic: str) -> None:
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        for i in range(50):
            await producer.send(topic, b"x%d" % i)
        await producer.flush()
    tp = TopicPartition(topic, 0)
    async with AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers, auto_offset_reset="earliest"
    ) as consumer:
        consumer.assign([tp])
        got = await consumer.getmany(tp, timeout_ms=5000, max_records=20)
        assert len(got[tp]) == 20
        lag = {n.name: v for n, v in consumer.metrics().items() if n.tag("partition") == "0"}
        assert lag["records-lag"] == 30
        assert lag["records-lead"] == 20
        values = _by_name(consumer.metrics(), "consumer-fetch-manager-metrics")
        assert values["records-lag-max"] == 30
        assert values["records-consumed-total"] == 20
        # No group: no coordinator metrics to speak of, and none made up.
        assert not any(n.group == "consumer-coordinator-metrics" for n in consumer.metrics())
        assert math.isfinite(values["fetch-latency-avg"])


async def test_admin_client_metrics(bootstrap_servers: str) -> None:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
        await admin.list_topics()
        values = _by_name(admin.metrics(), "admin-client-metrics")
    assert values["request-total"] >= 2
    assert values["connection-creation-total"] >= 1


@pytest.mark.parametrize("protocol", ["classic", CONSUMER_PROTOCOL])
async def test_coordinator_metrics_under_both_protocols(
    bootstrap_servers: str, make_topic: Any, protocol: str
) -> None:
    topic = make_topic(partitions=3)
    async with AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        group_id=f"g-{topic}",
        group_protocol=protocol,
        **FAST,
    ) as consumer:
        group = "consumer-coordinator-metrics"
        await until(
            lambda: _by_name(consumer.metrics(), group)["heartbeat-total"] >= 2, 20, "heartbeats"
        )
        c = _by_name(consumer.metrics(), group)
    assert c["assigned-partitions"] == 3
    assert c["rebalance-total"] >= 1 and c["rebalance-latency-total"] > 0
    assert c["failed-rebalance-total"] == 0
    assert c["heartbeat-response-time-max"] > 0 and 0 <= c["last-heartbeat-seconds-ago"] < 20
