"""The broker every client reads from: one started here with ``ferrokafka.testing`` (full JIT,
2 GiB heap), or an external one given by its bootstrap address."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class Broker:
    bootstrap: str
    kafka: Any  # KafkaBroker or ExternalKafka: create_topic / delete_topic
    description: str


@contextmanager
def broker(bootstrap: str | None = None) -> Iterator[Broker]:
    from ferrokafka.testing import ExternalKafka, KafkaBroker, kafka_version

    if bootstrap is not None:
        yield Broker(
            bootstrap,
            ExternalKafka(bootstrap).start(),
            f"external at {bootstrap} (ferrokafka.testing pins Kafka {kafka_version()})",
        )
        return
    kafka = KafkaBroker(heap_mb=2048)
    kafka.start()
    try:
        yield Broker(
            kafka.bootstrap_servers,
            kafka,
            f"Apache Kafka {kafka.version} (KRaft, one node, ferrokafka.testing, 2 GiB heap)",
        )
    finally:
        kafka.stop()
