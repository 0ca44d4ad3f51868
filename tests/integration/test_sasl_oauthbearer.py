"""SASL OAUTHBEARER against real listeners (Kafka's unsecured JWT validator): produce, consume
in a group, commit and admin over SASL_PLAINTEXT and SASL_SSL with aiokafka's token-provider
interface; a token the broker refuses (expired, or without the scope the listener requires)
as a typed error from ``start()`` naming the mechanism, the broker and its status, with the
token in no log record, error or repr."""

from __future__ import annotations

import logging
import uuid

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.testing import KafkaBroker
from ferrokafka.testing.security import UnsecuredTokenProvider

from .secure_util import oauth_options, round_trip, start_fails

pytestmark = pytest.mark.integration

LISTENERS = ["sasl_plaintext_broker", "sasl_ssl_broker"]


@pytest.mark.parametrize("listener", LISTENERS, indirect=True)
async def test_produce_group_consume_commit_admin(listener: KafkaBroker) -> None:
    provider = UnsecuredTokenProvider("alice", extensions={"traceId": "t-1"})
    options = oauth_options(listener, provider)
    connections = await round_trip(listener, options, "oauth")
    assert all(c.sasl_authentications == 1 for c in connections)
    # One token per authentication: every connection asked the provider.
    assert provider.calls >= len(connections)


@pytest.mark.parametrize("listener", LISTENERS, indirect=True)
@pytest.mark.parametrize(
    ("refused", "status"),
    [
        (UnsecuredTokenProvider("alice", lifetime_s=-60), "status 'invalid_token'"),
        (UnsecuredTokenProvider("alice", scope=("other",)), "status 'insufficient_scope'"),
    ],
    ids=["expired", "missing-scope"],
)
async def test_a_refused_token_is_a_typed_error_from_start(
    listener: KafkaBroker,
    refused: UnsecuredTokenProvider,
    status: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    options = {**oauth_options(listener, refused), "request_timeout_ms": 30_000}
    where = f"node -1 at {listener.bootstrap_servers}"
    with caplog.at_level(logging.DEBUG):
        for client in (
            AIOKafkaProducer(**options),
            AIOKafkaConsumer(**options, group_id=f"g-{uuid.uuid4().hex[:8]}"),
            AIOKafkaAdminClient(**options),
        ):
            error = await start_fails(client)
            assert isinstance(error, Errors.SaslAuthenticationFailed), repr(error)
            message = str(error)
            assert f"OAUTHBEARER authentication with {where} failed: {status}" in message
            for token in refused.tokens:
                assert token not in message and token not in repr(error)
    assert refused.tokens
    for token in refused.tokens:
        assert token not in caplog.text
        # The signature-less JWT's parts, too: no log shows the claims' encoding.
        assert token.split(".")[1] not in caplog.text
