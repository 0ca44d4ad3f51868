"""The main job on the embedded default: start a local broker, create a topic, and show what
ferrokafka sees of the cluster. Later work grows it into produce + consume + Spark."""

from __future__ import annotations

import asyncio
import time
from typing import TextIO

from . import errors as Errors
from .client import AIOKafkaClient
from .protocol import ApiKey
from .structs import TopicPartition
from .testing import KafkaBroker

__all__ = ["run_demo"]

DEMO_TOPIC = "ferrokafka-demo"
DEMO_PARTITIONS = 4


async def _describe(bootstrap: str, out: TextIO) -> None:
    async with AIOKafkaClient(bootstrap_servers=bootstrap) as client:
        client.add_topic(DEMO_TOPIC)
        await client.refresh_metadata()
        cluster = client.cluster
        out.write(f"cluster id      {cluster.cluster_id}\n")
        out.write(f"controller      {cluster.controller}\n")
        for b in sorted(cluster.brokers()):
            out.write(f"broker          id={b.nodeId} {b.host}:{b.port} rack={b.rack}\n")
        info = cluster.topic_info(DEMO_TOPIC)
        assert info is not None, "the demo topic vanished"
        out.write(f"topic           {info.name} id={info.topic_id}\n")
        for p in sorted(info.partitions):
            part = info.partitions[p]
            out.write(
                f"  partition {p}   leader={part.leader} epoch={part.leader_epoch} "
                f"replicas={list(part.replicas)} isr={list(part.isr)}\n"
            )
        leader = cluster.leader_for_partition(TopicPartition(DEMO_TOPIC, 0))
        assert leader is not None
        conn = await client.ready(leader)
        versions = []
        for key in ApiKey:
            try:
                versions.append(f"{key.name} v{conn.version_for(key)}")
            except Errors.IncompatibleBrokerVersion:
                continue  # an API ferrokafka does not speak yet
        out.write("negotiated      " + ", ".join(versions) + "\n")
        out.write(f"connections     {sorted(client.connections)} (bootstrap node is -1)\n")


def run_demo(out: TextIO) -> int:
    """Start a broker, create the demo topic, print the cluster; stop the broker."""
    started = time.monotonic()
    out.write("starting a local Kafka broker (KRaft, loopback) ...\n")
    out.flush()
    with KafkaBroker() as broker:
        out.write(f"broker up at {broker.bootstrap_servers} in {time.monotonic() - started:.1f}s\n")
        broker.create_topic(DEMO_TOPIC, partitions=DEMO_PARTITIONS)
        out.write(f"created topic {DEMO_TOPIC!r} with {DEMO_PARTITIONS} partitions\n")
        asyncio.run(_describe(broker.bootstrap_servers, out))
    out.write(f"broker stopped; done in {time.monotonic() - started:.1f}s\n")
    return 0
