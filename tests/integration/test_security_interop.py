"""The Java client (kafka-clients, ``tools/java/SecureInterop.java``) and ferrokafka authenticate
as the same SCRAM user on a SASL_SSL listener and share one consumer group: what Java writes
ferrokafka reads and commits, and the Java consumer of that group starts where ferrokafka
committed and reads exactly what ferrokafka wrote. A Java client with a wrong password is refused
while ferrokafka's session goes on."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka.testing import KafkaBroker, resolve_kafka

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SECURE_INTEROP = ROOT / "tools" / "java" / "SecureInterop.java"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
N = 40  # records each side writes, over two partitions


def java_properties(
    broker: KafkaBroker, mechanism: str, directory: Path, password: str | None = None
) -> Path:
    """A private properties file with the Java client's configs for ``alice``."""
    password = broker.users["alice"] if password is None else password
    configs = {
        "bootstrap.servers": broker.bootstrap_servers,
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": f'{SCRAM} required username="alice" password="{password}";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(broker.ca_file),
    }
    path = directory / f"java-{mechanism}-{uuid.uuid4().hex[:6]}.properties"
    path.touch(mode=0o600)
    path.write_text("".join(f"{k}={v.replace(chr(92), chr(92) * 2)}\n" for k, v in configs.items()))
    return path


async def run_java(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = ["java", "-cp", resolve_kafka().classpath, str(SECURE_INTEROP), *args]
    done = await asyncio.to_thread(
        subprocess.run, cmd, capture_output=True, text=True, timeout=120, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"SecureInterop {args[1]} exited {done.returncode}: {done.stderr}")
    return done


@pytest.fixture
async def topic(sasl_ssl_broker: KafkaBroker) -> AsyncIterator[str]:
    name = f"sec-interop-{uuid.uuid4().hex[:10]}"
    await sasl_ssl_broker.acreate_topic(name, partitions=2)
    yield name
    await sasl_ssl_broker.adelete_topic(name)


async def read(consumer: AIOKafkaConsumer[bytes, bytes], count: int) -> list[Any]:
    records: list[Any] = []
    deadline = time.monotonic() + 30
    while len(records) < count and time.monotonic() < deadline:
        batch = await consumer.getmany(timeout_ms=500)
        records += [r for rs in batch.values() for r in rs]
    return records


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_java_and_ferrokafka_share_a_scram_user_and_a_group(
    sasl_ssl_broker: KafkaBroker, topic: str, tmp_path: Path, mechanism: str
) -> None:
    props = str(java_properties(sasl_ssl_broker, mechanism, tmp_path))
    options = sasl_ssl_broker.client_options("alice", mechanism)
    group = f"g-{uuid.uuid4().hex[:8]}"
    half = N // 2

    done = await run_java(props, "produce", topic, str(N), "java")
    assert done.stdout.strip() == f"produced {N}"

    consumer = AIOKafkaConsumer(
        topic, **options, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False
    )
    async with consumer:
        records = await read(consumer, N)
        assert sorted((r.partition, r.offset, r.key, r.value) for r in records) == sorted(
            (i % 2, i // 2, b"java-k%d" % i, b"java-%d" % i) for i in range(N)
        )
        await consumer.commit()
        committed = {p: await consumer.committed(TopicPartition(topic, p)) for p in (0, 1)}
    assert committed == {0: half, 1: half}

    async with AIOKafkaProducer(**options, acks="all") as producer:
        sent = [
            await producer.send(topic, b"ferro-%d" % i, key=b"ferro-k%d" % i, partition=i % 2)
            for i in range(N)
        ]
        await asyncio.gather(*sent)

    # auto.offset.reset=earliest: only the group's commits keep Java off the first N records.
    done = await run_java(props, "consume", topic, group, str(N))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0] == {"committed": {"0": half, "1": half}}
    assert lines[1:] == [
        {
            "partition": p,
            "offset": half + j,
            "key": f"ferro-k{2 * j + p}",
            "value": f"ferro-{2 * j + p}",
        }
        for p in (0, 1)
        for j in range(half)
    ]

    # And Java's commit is the group's: ferrokafka sees it.
    consumer = AIOKafkaConsumer(topic, **options, group_id=group, enable_auto_commit=False)
    async with consumer:
        assert {p: await consumer.committed(TopicPartition(topic, p)) for p in (0, 1)} == {
            0: N,
            1: N,
        }


async def test_a_java_client_with_a_wrong_password_leaves_ferrokafka_alone(
    sasl_ssl_broker: KafkaBroker, topic: str, tmp_path: Path
) -> None:
    mechanism = "SCRAM-SHA-256"
    wrong = "not-alices-" + uuid.uuid4().hex
    props = str(java_properties(sasl_ssl_broker, mechanism, tmp_path, password=wrong))
    options = sasl_ssl_broker.client_options("alice", mechanism)
    consumer = AIOKafkaConsumer(
        topic, **options, group_id=f"g-{uuid.uuid4().hex[:8]}", auto_offset_reset="earliest"
    )
    async with consumer, AIOKafkaProducer(**options) as producer:
        await (await producer.send(topic, b"before", partition=0))
        assert [r.value for r in await read(consumer, 1)] == [b"before"]

        for command in (["produce", topic, "1", "bad"], ["consume", topic, "g-bad", "1"]):
            done = await run_java(props, *command, check=False)
            assert done.returncode == 2, (command, done.stderr)
            assert "SaslAuthenticationException" in done.stderr
            assert f"invalid credentials with SASL mechanism {mechanism}" in done.stderr
            assert wrong not in done.stderr + done.stdout

        await (await producer.send(topic, b"after", partition=1))
        assert [r.value for r in await read(consumer, 1)] == [b"after"]
