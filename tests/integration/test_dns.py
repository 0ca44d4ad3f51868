"""Every address a broker's name resolves to is tried, in order, as the Java client's
``client.dns.lookup=use_all_dns_ips`` does: a name whose first address is dead still reaches
the broker through the next one."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.testing import KafkaBroker

pytestmark = pytest.mark.integration

NAME = "kafka.ferrokafka.invalid"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port  # nothing listens there once the socket is closed


async def test_a_name_with_a_dead_first_address_reaches_the_broker(
    kafka_broker: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    host, port = kafka_broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
    dead = _closed_port()
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo
    asked: list[Any] = []

    async def resolve(name: Any, service: Any, *args: Any, **kwargs: Any) -> Any:
        if name != NAME:
            return await real(name, service, *args, **kwargs)
        asked.append(name)
        stream = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
        # Two addresses for one name: the first refuses connections.
        return [(*stream, (host, dead)), (*stream, (host, int(port)))]

    monkeypatch.setattr(loop, "getaddrinfo", resolve)
    async with AIOKafkaAdminClient(bootstrap_servers=f"{NAME}:{port}") as admin:
        assert isinstance(await admin.list_topics(), list)
    assert asked, "the name was never resolved"
