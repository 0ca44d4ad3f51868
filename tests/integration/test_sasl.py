"""SASL against real listeners: PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 over SASL_PLAINTEXT and
SASL_SSL, for the producer, a consumer in a group and the admin client; refused credentials
and mechanisms as typed errors from ``start()``, promptly; the password kept out of every log
record, error and repr."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.config import ConsumerConfig, ProducerConfig
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, SASL_MECHANISMS, KafkaBroker

from .secure_util import round_trip, start_fails, where

pytestmark = pytest.mark.integration

# (listener fixture, mechanism): every mechanism over plaintext and over TLS.
COMBINATIONS = [
    (listener, mechanism)
    for listener in ("sasl_plaintext_broker", "sasl_ssl_broker")
    for mechanism in SASL_MECHANISMS
]
IDS = [f"{listener.removesuffix('_broker')}-{m}" for listener, m in COMBINATIONS]


@pytest.mark.parametrize(("listener", "mechanism"), COMBINATIONS, indirect=["listener"], ids=IDS)
async def test_produce_group_consume_commit_admin(listener: KafkaBroker, mechanism: str) -> None:
    options = listener.client_options(mechanism=mechanism)
    assert options["security_protocol"] in ("SASL_PLAINTEXT", "SASL_SSL")
    for conn in await round_trip(listener, options, "sasl"):
        assert conn.sasl_authenticated_at is not None
        assert conn.sasl_session_lifetime_ms == 0  # no connections.max.reauth.ms


def _clients(options: dict[str, Any]) -> list[Any]:
    # A long request timeout: a failure must come from the broker's refusal, not a timeout.
    slow = {**options, "request_timeout_ms": 30_000}
    return [
        AIOKafkaProducer(**slow),
        AIOKafkaConsumer(**slow, group_id=f"g-{uuid.uuid4().hex[:8]}"),
        AIOKafkaAdminClient(**slow),
    ]


async def _assert_refused(
    broker: KafkaBroker,
    options: dict[str, Any],
    secret: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    mechanism = options["sasl_mechanism"]
    with caplog.at_level(logging.DEBUG):
        for client in _clients(options):
            assert secret not in repr(client)
            error = await start_fails(client)
            assert isinstance(error, Errors.SaslAuthenticationFailed), repr(error)
            message = str(error)
            assert mechanism in message and where(broker) in message, message
            assert "[Error 58]" in message and "invalid" in message.lower(), message
            assert secret not in message and secret not in repr(error)
    for record in caplog.records:
        assert secret not in record.getMessage(), record.getMessage()
    assert secret not in caplog.text
    assert any(where(broker) in r.getMessage() for r in caplog.records)  # it was logged


@pytest.mark.parametrize(("listener", "mechanism"), COMBINATIONS, indirect=["listener"], ids=IDS)
async def test_a_wrong_password_is_a_typed_error_from_start(
    listener: KafkaBroker, mechanism: str, caplog: pytest.LogCaptureFixture
) -> None:
    options = listener.client_options(mechanism=mechanism)
    wrong = "wrong-" + uuid.uuid4().hex
    options["sasl_plain_password"] = wrong
    await _assert_refused(listener, options, wrong, caplog)


@pytest.mark.parametrize(("listener", "mechanism"), COMBINATIONS, indirect=["listener"], ids=IDS)
async def test_an_unknown_user_is_a_typed_error_from_start(
    listener: KafkaBroker, mechanism: str, caplog: pytest.LogCaptureFixture
) -> None:
    options = listener.client_options(mechanism=mechanism)
    options["sasl_plain_username"] = f"nobody-{uuid.uuid4().hex[:6]}"
    await _assert_refused(listener, options, options["sasl_plain_password"], caplog)


def test_the_password_stays_out_of_reprs(sasl_plaintext_broker: KafkaBroker) -> None:
    options = sasl_plaintext_broker.client_options(mechanism="PLAIN")
    password = options["sasl_plain_password"]
    for text in (
        repr(AIOKafkaProducer(**options)),
        repr(AIOKafkaConsumer(**options)),
        repr(ProducerConfig(**options)),
        repr(ConsumerConfig(**options)),
        str(ConsumerConfig(**options)),
    ):
        assert password not in text


@pytest.fixture(scope="module")
def scram_512_only_broker() -> Iterator[KafkaBroker]:
    """A SASL_PLAINTEXT listener that enables only SCRAM-SHA-512."""
    broker = KafkaBroker(
        jvm_options=QUICK_START_JVM_OPTIONS,
        security="sasl_plaintext",
        config={"sasl.enabled.mechanisms": "SCRAM-SHA-512"},
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256"])
async def test_a_mechanism_the_listener_does_not_enable(
    scram_512_only_broker: KafkaBroker, mechanism: str
) -> None:
    broker = scram_512_only_broker
    options = broker.client_options(mechanism=mechanism)
    for client in _clients(options):
        error = await start_fails(client)
        assert isinstance(error, Errors.UnsupportedSaslMechanismError), repr(error)
        message = str(error)
        assert f"SASL mechanism {mechanism} is not enabled on {where(broker)}" in message
        assert message.endswith("its listener enables: SCRAM-SHA-512"), message
        assert options["sasl_plain_password"] not in message

    # The mechanism it enables works on the same listener.
    async with AIOKafkaAdminClient(**broker.client_options(mechanism="SCRAM-SHA-512")) as admin:
        await admin.list_topics()
