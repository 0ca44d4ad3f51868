"""Secrets never leak: with every logger at DEBUG, a full session over a secured listener
(produce, consume in a group, commit, admin, and a refused attempt with a wrong secret) leaves
no password, token or private key in any log record, in the repr of any client, config or
connection, or in any error's message, repr or chained cause."""

from __future__ import annotations

import logging
import traceback
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.config import ConsumerConfig, ProducerConfig
from ferrokafka.helpers import create_ssl_context
from ferrokafka.testing import KafkaBroker
from ferrokafka.testing.security import UnsecuredTokenProvider

from .secure_util import oauth_options

pytestmark = pytest.mark.integration


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record of every logger, at DEBUG, with its arguments rendered."""
    root = logging.getLogger()
    before = root.level
    root.setLevel(logging.DEBUG)
    with caplog.at_level(logging.DEBUG):
        yield caplog
    root.setLevel(before)


def _texts(*objects: Any) -> list[str]:
    """What a user could see of ``objects``: repr and str, and for errors the whole chain."""
    out: list[str] = []
    for obj in objects:
        out += [repr(obj), str(obj)]
        if isinstance(obj, BaseException):
            out.append("".join(traceback.format_exception(obj)))
    return out


async def _session(options: dict[str, Any], topic: str) -> list[str]:
    """Produce, consume in a group, commit and list through ``options``; what was seen."""
    seen: list[Any] = []
    async with AIOKafkaProducer(**options) as producer:
        seen += [producer, producer.client, *producer.client.connections.values()]
        await producer.send_and_wait(topic, b"secret-test", partition=0)
    group = f"g-{uuid.uuid4().hex[:8]}"
    consumer = AIOKafkaConsumer(topic, **options, group_id=group, auto_offset_reset="earliest")
    async with consumer:
        records = await consumer.getmany(timeout_ms=10_000)
        while not records:
            records = await consumer.getmany(timeout_ms=10_000)
        await consumer.commit()
        seen += [consumer, consumer._client, *consumer._client.connections.values(), records]
    async with AIOKafkaAdminClient(**options) as admin:
        seen += [admin, await admin.describe_consumer_groups([group])]
    seen += [ProducerConfig(**options), ConsumerConfig(**options)]
    return _texts(*seen)


async def _refused(options: dict[str, Any]) -> list[str]:
    consumer = AIOKafkaConsumer(**options, request_timeout_ms=10_000)
    try:
        with pytest.raises(Errors.KafkaError) as caught:
            await consumer.start()
    finally:
        await consumer.stop()
    return _texts(caught.value)


def _assert_absent(secrets: list[str], texts: list[str], logs: pytest.LogCaptureFixture) -> None:
    assert logs.records, "nothing was logged: the check would prove nothing"
    rendered = [logs.text, *texts]
    rendered += [repr(r.args) for r in logs.records]
    rendered += [
        "".join(traceback.format_exception(*r.exc_info)) for r in logs.records if r.exc_info
    ]
    for secret in secrets:
        for text in rendered:
            assert secret not in text, f"a secret leaked into: {text[:300]}"


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_no_password_at_debug(
    sasl_ssl_broker: KafkaBroker, mechanism: str, debug_logs: pytest.LogCaptureFixture
) -> None:
    broker = sasl_ssl_broker
    options = broker.client_options(mechanism=mechanism)
    topic = f"fk-secret-{uuid.uuid4().hex[:10]}"
    await broker.acreate_topic(topic, partitions=1)
    try:
        texts = await _session(options, topic)
        wrong = f"wrong-{uuid.uuid4().hex}"
        texts += await _refused({**options, "sasl_plain_password": wrong})
    finally:
        await broker.adelete_topic(topic)
    assert any("authenticated" in r.getMessage() for r in debug_logs.records)
    _assert_absent([options["sasl_plain_password"], wrong], texts, debug_logs)


async def test_no_token_at_debug(
    sasl_ssl_broker: KafkaBroker, debug_logs: pytest.LogCaptureFixture
) -> None:
    broker = sasl_ssl_broker
    provider = UnsecuredTokenProvider("alice")
    refused = UnsecuredTokenProvider("alice", scope=("other",))
    topic = f"fk-secret-{uuid.uuid4().hex[:10]}"
    await broker.acreate_topic(topic, partitions=1)
    try:
        texts = await _session(oauth_options(broker, provider), topic)
        texts += await _refused(oauth_options(broker, refused))
    finally:
        await broker.adelete_topic(topic)
    tokens = provider.tokens + refused.tokens
    assert provider.tokens and refused.tokens
    # The whole token, and its claims part on its own (the part that identifies the user).
    _assert_absent(tokens + [t.split(".")[1] for t in tokens], texts, debug_logs)


async def test_no_private_key_or_key_password_at_debug(
    mtls_broker: KafkaBroker, tmp_path: Path, debug_logs: pytest.LogCaptureFixture
) -> None:
    from cryptography.hazmat.primitives import serialization

    broker = mtls_broker
    cert_file, key_file = broker.client_cert_files
    key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    key_password = f"key-{uuid.uuid4().hex}"
    encrypted = tmp_path / "client-encrypted.key"
    encrypted.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(key_password.encode()),
        )
    )
    context = create_ssl_context(
        cafile=str(broker.ca_file),
        certfile=str(cert_file),
        keyfile=str(encrypted),
        password=key_password,
    )
    options = {**broker.client_options(), "ssl_context": context}
    topic = f"fk-secret-{uuid.uuid4().hex[:10]}"
    await broker.acreate_topic(topic, partitions=1)
    try:
        texts = await _session(options, topic)
    finally:
        await broker.adelete_topic(topic)
    key_lines = [
        line
        for pem in (key_file.read_text(), encrypted.read_text())
        for line in pem.splitlines()
        if line and not line.startswith("-----")
    ]
    _assert_absent([key_password, *key_lines], texts, debug_logs)
