"""Secured client listeners of the harness (SSL, SASL_PLAINTEXT, SASL_SSL) proven with a peer
that already speaks them (aiokafka), ferrokafka's TLS against them, the errors of a refused TLS
handshake, and ``ferrokafka broker start --security``."""

from __future__ import annotations

import asyncio
import os
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiokafka
import ferrokafka
import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.config.connection import ConnectionConfig
from ferrokafka.conn import Connection
from ferrokafka.helpers import create_ssl_context
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, SASL_MECHANISMS, ExternalKafka, KafkaBroker
from ferrokafka.testing.maven import cache_root

from .secure_util import consume_commit_and_list

pytestmark = pytest.mark.integration

# (fixture, mechanism): every listener kind, SASL ones with each mechanism.
LISTENERS = [
    ("ssl_broker", None),
    *[("sasl_plaintext_broker", m) for m in SASL_MECHANISMS],
    *[("sasl_ssl_broker", m) for m in SASL_MECHANISMS],
]


@pytest.fixture
def secured_topic(request: pytest.FixtureRequest) -> Iterator[tuple[KafkaBroker, str]]:
    """``(broker, topic)``: the broker named by the test's ``broker`` parameter and a fresh
    topic on it (created through the broker's PLAINTEXT INTERNAL listener)."""
    broker: KafkaBroker = request.getfixturevalue(request.param)
    topic = f"fk-sec-{uuid.uuid4().hex[:10]}"
    broker.create_topic(topic)
    yield broker, topic
    broker.delete_topic(topic)


async def _aiokafka_round_trip(options: dict[str, Any], topic: str, value: bytes) -> None:
    async with aiokafka.AIOKafkaProducer(**options) as producer:
        await producer.send_and_wait(topic, value, key=b"k")
    async with aiokafka.AIOKafkaConsumer(**options, auto_offset_reset="earliest") as consumer:
        consumer.assign([aiokafka.TopicPartition(topic, 0)])
        batch = await consumer.getmany(timeout_ms=10_000)
    assert [r.value for records in batch.values() for r in records] == [value]


@pytest.mark.parametrize(
    ("secured_topic", "mechanism"),
    LISTENERS,
    indirect=["secured_topic"],
    ids=[f"{f.removesuffix('_broker')}-{m or 'tls'}" for f, m in LISTENERS],
)
async def test_aiokafka_produces_and_consumes_over_each_listener(
    secured_topic: tuple[KafkaBroker, str], mechanism: str | None
) -> None:
    broker, topic = secured_topic
    options = broker.client_options(mechanism=mechanism or "PLAIN")
    assert options["security_protocol"] == broker.security_protocol
    await _aiokafka_round_trip(options, topic, f"over {mechanism}".encode())


async def test_aiokafka_wrong_password_is_refused(sasl_plaintext_broker: KafkaBroker) -> None:
    options = sasl_plaintext_broker.client_options(mechanism="SCRAM-SHA-256")
    options["sasl_plain_password"] = "not-" + options["sasl_plain_password"]
    producer = aiokafka.AIOKafkaProducer(**options)
    with pytest.raises(aiokafka.errors.KafkaError):
        await producer.start()
    await producer.stop()


# ---- ferrokafka over TLS ----------------------------------------------------------------------


@pytest.fixture
def tls_topic(ssl_broker: KafkaBroker) -> Iterator[str]:
    topic = f"fk-tls-{uuid.uuid4().hex[:10]}"
    ssl_broker.create_topic(topic, partitions=2)
    yield topic
    ssl_broker.delete_topic(topic)


async def test_ferrokafka_tls_produce_group_consume_commit_admin(
    ssl_broker: KafkaBroker, tls_topic: str
) -> None:
    options = ssl_broker.client_options()
    assert options["security_protocol"] == "SSL"
    assert "localhost" not in options["bootstrap_servers"]  # an IP, checked against its SAN
    values = [f"v{i}".encode() for i in range(20)]
    async with AIOKafkaProducer(**options) as producer:
        for i, value in enumerate(values):
            await producer.send(tls_topic, value, partition=i % 2)
        await producer.flush()

    await consume_commit_and_list(options, tls_topic, values)


async def test_ferrokafka_mutual_tls_with_the_client_certificate(
    mtls_broker: KafkaBroker,
) -> None:
    topic = f"fk-mtls-{uuid.uuid4().hex[:10]}"
    await mtls_broker.acreate_topic(topic)
    try:
        options = mtls_broker.client_options()  # carries the client certificate
        async with AIOKafkaProducer(**options) as producer:
            await producer.send_and_wait(topic, b"mutual", partition=0)
        async with AIOKafkaConsumer(**options, auto_offset_reset="earliest") as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            batch = await consumer.getmany(timeout_ms=10_000)
        assert [r.value for records in batch.values() for r in records] == [b"mutual"]
    finally:
        await mtls_broker.adelete_topic(topic)


# ---- refused handshakes -----------------------------------------------------------------------


async def _connect(address: str, context: ssl.SSLContext) -> None:
    host, port = address.rsplit(":", 1)
    conn = Connection(
        host,
        int(port),
        node_id=-1,
        config=ConnectionConfig(security_protocol="SSL", ssl_context=context),
    )
    try:
        await conn.connect(timeout=10)
    finally:
        conn.close()
        # TLS closes in a round trip: a loop ended at once would leave the socket open.
        await conn.wait_closed()


async def _producer_start_fails(options: dict[str, Any]) -> Errors.KafkaTLSError:
    """Start a producer that must be refused: return the typed error, which must come at once
    (the refusal is not retried until some timeout)."""
    producer = AIOKafkaProducer(**options, request_timeout_ms=20_000)
    began = time.monotonic()
    try:
        with pytest.raises(Errors.KafkaTLSError) as caught:
            await producer.start()
    finally:
        await producer.stop()
    assert time.monotonic() - began < 10
    return caught.value


async def test_a_client_without_the_ca_is_refused_naming_the_broker(
    ssl_broker: KafkaBroker,
) -> None:
    untrusting = create_ssl_context(cafile=str(_unrelated_ca(ssl_broker)))
    address = ssl_broker.bootstrap_servers
    with pytest.raises(Errors.KafkaTLSError) as caught:
        await _connect(address, untrusting)
    message = str(caught.value)
    assert address in message and "certificate failed verification" in message, message
    assert not caught.value.retriable

    options = {**ssl_broker.client_options(), "ssl_context": untrusting}
    error = await _producer_start_fails(options)
    assert address in str(error) and "certificate failed verification" in str(error)


def _unrelated_ca(broker: KafkaBroker) -> Path:
    import trustme

    path = broker.directory / "unrelated-ca.pem"
    if not path.exists():
        trustme.CA().cert_pem.write_to_path(str(path))
    return path


@pytest.fixture(scope="module")
def wrong_host_broker() -> Iterator[KafkaBroker]:
    """An SSL broker whose certificate names only ``wrong.example``."""
    broker = KafkaBroker(
        jvm_options=QUICK_START_JVM_OPTIONS,
        security="ssl",
        server_hostnames=["wrong.example"],
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


async def test_a_certificate_for_another_host_is_refused(wrong_host_broker: KafkaBroker) -> None:
    address = wrong_host_broker.bootstrap_servers
    with pytest.raises(Errors.KafkaTLSError) as caught:
        await _connect(address, wrong_host_broker.ssl_context())
    message = str(caught.value)
    assert address in message and "certificate failed verification" in message, message
    assert "127.0.0.1" in message  # what the certificate does not name

    # The same certificate verifies when the host name is not checked: only the name failed.
    lenient = wrong_host_broker.ssl_context()
    lenient.check_hostname = False
    await _connect(address, lenient)


async def test_a_broker_requiring_a_client_certificate_refuses_a_client_without_one(
    mtls_broker: KafkaBroker,
) -> None:
    address = mtls_broker.bootstrap_servers
    without_cert = mtls_broker.ssl_context(client_cert=False)
    with pytest.raises(Errors.KafkaTLSError) as caught:
        await _connect(address, without_cert)
    message = str(caught.value)
    assert address in message and "refused the client certificate" in message, message

    options = {**mtls_broker.client_options(), "ssl_context": without_cert}
    error = await _producer_start_fails(options)
    assert address in str(error) and "refused the client certificate" in str(error)


# ---- what the harness exposes and keeps secret ------------------------------------------------


def test_secured_harness_exposes_credentials_and_keeps_them_out_of_logs(
    sasl_ssl_broker: KafkaBroker,
) -> None:
    broker = sasl_ssl_broker
    assert broker.security == "sasl_ssl" and broker.security_protocol == "SASL_SSL"
    assert broker.sasl_mechanisms == ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
    assert set(broker.users) == {"admin", "alice"}
    assert len(set(broker.users.values())) == 2
    assert broker.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")
    _certfile, keyfile = broker.client_cert_files
    assert "BEGIN PRIVATE KEY" in keyfile.read_text()  # PKCS#8
    assert broker.plaintext_bootstrap_servers != broker.bootstrap_servers
    assert broker.node(1).internal_port is not None

    server_key = (broker.directory / "tls" / "server.key").read_text()
    key_body = server_key.splitlines()[1]
    log = broker.log_path(1).read_text()
    for password in broker.users.values():
        assert password not in log
        assert password not in repr(broker)
    assert key_body not in log


# ---- the command line -------------------------------------------------------------------------


def _cli(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    package_root = str(Path(ferrokafka.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "ferrokafka", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def test_cli_starts_a_sasl_ssl_broker_and_prints_what_a_client_needs() -> None:
    name = f"pytest-sec-{uuid.uuid4().hex[:10]}"
    started = _cli("broker", "start", "--security", "sasl_ssl", "--name", name)
    state_path = cache_root() / "run" / f"{name}.json"
    try:
        assert started.returncode == 0, started.stderr
        lines = started.stdout.strip().splitlines()
        bootstrap = lines[0]
        assert bootstrap.startswith("127.0.0.1:")
        printed: dict[str, str] = {}
        users: dict[str, str] = {}
        for line in lines[1:]:
            key, _, value = line.partition(": ")
            if key == "user":
                user, password = value.split(" ")
                users[user] = password
            else:
                printed[key] = value
        assert printed["security_protocol"] == "SASL_SSL"
        assert printed["sasl_mechanisms"] == "PLAIN SCRAM-SHA-256 SCRAM-SHA-512 OAUTHBEARER"
        assert set(users) == {"admin", "alice"}
        assert "AIOKafkaProducer(" in printed["example"]
        assert users["alice"] in printed["example"]
        assert state_path.stat().st_mode & 0o077 == 0  # the passwords are its owner's only

        status = _cli("broker", "status", "--name", name)
        assert "running" in status.stdout and "SASL_SSL" in status.stdout
        assert all(password not in status.stdout for password in users.values())

        topic = f"fk-cli-{uuid.uuid4().hex[:8]}"
        options = {
            "bootstrap_servers": bootstrap,
            "security_protocol": printed["security_protocol"],
            "ssl_context": create_ssl_context(cafile=printed["ssl_cafile"]),
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": "alice",
            "sasl_plain_password": users["alice"],
        }

        async def round_trip() -> None:
            async with aiokafka.AIOKafkaProducer(**options) as producer:
                await producer.send_and_wait(topic, b"from the cli's values")

        ExternalKafka(printed["plaintext_bootstrap_servers"]).create_topic(topic)
        asyncio.run(round_trip())
    finally:
        stopped = _cli("broker", "stop", "--name", name)
    assert stopped.returncode == 0, stopped.stderr
    assert not state_path.exists()
