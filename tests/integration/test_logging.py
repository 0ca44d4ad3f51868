"""The ``ferrokafka`` loggers at INFO during a group consume session: one line per event that
matters (connections with node and address, the coordinator, the join with its generation and
member id, the partitions assigned and revoked), none per record, no secrets."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer

from .group_util import FAST

pytestmark = [pytest.mark.integration]

RECORDS = 2000


async def test_group_session_logs_events_not_records(
    bootstrap_servers: str, make_topic: Any, caplog: pytest.LogCaptureFixture
) -> None:
    topic = make_topic(partitions=2)
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
        for i in range(RECORDS):
            await producer.send(topic, b"r%05d" % i, partition=i % 2)
        await producer.flush()
    group = f"g-{topic}"
    caplog.set_level(logging.INFO, logger="ferrokafka")
    caplog.clear()
    async with AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group, **FAST
    ) as consumer:
        seen = 0
        while seen < RECORDS:
            seen += sum(len(v) for v in (await consumer.getmany(timeout_ms=5000)).values())
        await consumer.commit()
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("ferrokafka") and r.levelno >= logging.INFO
    ]
    text = "\n".join(lines)
    host, port = bootstrap_servers.split(",")[0].rsplit(":", 1)
    assert re.search(rf"connected to node -1 at {re.escape(host)}:{port}", text), text
    assert re.search(r"connected to node \d+ at ", text), text
    assert re.search(rf"group {group}: coordinator is node \d+ at ", text), text
    joined = re.search(rf"group {group}: joined generation (\d+) as (\S+)", text)
    assert joined, text
    generation = joined.group(1)
    assert (
        f"group {group}: generation {generation}, partitions assigned: {topic}[0], {topic}[1]"
        in text
    )
    assert (
        f"group {group}: generation {generation}, partitions revoked: {topic}[0], {topic}[1]"
        in text
    )
    # Events, not records: a few dozen lines at most for thousands of records.
    assert len(lines) < 40, text
    assert all(
        r.name.startswith("ferrokafka.") for r in caplog.records if r.name.startswith("ferrokafka")
    )


async def test_a_lost_connection_and_the_reconnection_are_logged_and_counted(
    bootstrap_servers: str, topic: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ferrokafka")
    async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers, client_id="lost") as producer:
        meta = await producer.send_and_wait(topic, b"before")
        leader = producer.client.cluster.leader_for_partition(meta.topic_partition)
        assert leader is not None and leader >= 0
        conn = producer.client.connections[leader]
        caplog.clear()
        # The socket goes away under the client (as when a broker or a route drops it).
        assert conn._receiver is not None and conn._receiver.transport is not None
        conn._receiver.transport.abort()
        await producer.send_and_wait(topic, b"after")
        values = {n.name: v for n, v in producer.metrics().items() if n.group == "producer-metrics"}
    text = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("ferrokafka"))
    assert re.search(rf"connection to node {leader} at \S+:\d+ closed: ", text), text
    assert re.search(rf"reconnected to node {leader} at \S+:\d+", text), text
    assert values["connection-close-total"] >= 1
    assert values["connection-creation-total"] >= 3  # bootstrap, the leader, the leader again
