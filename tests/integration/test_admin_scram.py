"""SCRAM credentials through the admin client on a SASL broker: a user created by the admin
client (the salted password computed here, RFC 5802) then authenticates with its password; its
credentials are described, replaced and deleted, and a deleted credential no longer
authenticates."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from ferrokafka import errors as Errors
from ferrokafka.admin import (
    AIOKafkaAdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from ferrokafka.testing import KafkaBroker

pytestmark = [pytest.mark.integration]

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512


@pytest.fixture
async def admin(sasl_plaintext_broker: KafkaBroker) -> AsyncIterator[AIOKafkaAdminClient]:
    options = sasl_plaintext_broker.client_options(user="admin")
    async with AIOKafkaAdminClient(**options) as client:
        yield client


async def _authenticates(broker: KafkaBroker, user: str, password: str, mechanism: str) -> bool:
    options: dict[str, Any] = {
        **broker.client_options(mechanism=mechanism),
        "sasl_plain_username": user,
        "sasl_plain_password": password,
        "request_timeout_ms": 10000,
    }
    try:
        async with AIOKafkaAdminClient(**options) as client:
            await client.describe_cluster()
    except Errors.KafkaError:
        return False
    return True


async def test_scram_user_created_described_used_and_deleted(
    admin: AIOKafkaAdminClient, sasl_plaintext_broker: KafkaBroker
) -> None:
    user = f"carol-{uuid.uuid4().hex[:6]}"
    # One change per user and request, as the controller requires.
    await admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, SHA512, "first-pw", iterations=8192)]
    )
    await admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, SHA256, "other-pw")]
    )
    described = await admin.describe_user_scram_credentials([user])
    assert sorted(described[user]) == [
        ScramCredentialInfo(SHA256, 4096),
        ScramCredentialInfo(SHA512, 8192),
    ]
    assert user in await admin.describe_user_scram_credentials()

    broker = sasl_plaintext_broker
    assert await _authenticates(broker, user, "first-pw", "SCRAM-SHA-512")
    assert await _authenticates(broker, user, "other-pw", "SCRAM-SHA-256")
    assert not await _authenticates(broker, user, "wrong", "SCRAM-SHA-512")

    # Replaced, then deleted: the old password, then the mechanism, stop working.
    await admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, SHA512, "second-pw", iterations=4096)]
    )
    assert await _authenticates(broker, user, "second-pw", "SCRAM-SHA-512")
    assert not await _authenticates(broker, user, "first-pw", "SCRAM-SHA-512")
    await admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, SHA512)])
    assert (await admin.describe_user_scram_credentials([user]))[user] == [
        ScramCredentialInfo(SHA256, 4096)
    ]
    assert not await _authenticates(broker, user, "second-pw", "SCRAM-SHA-512")


async def test_scram_errors_name_the_user(admin: AIOKafkaAdminClient) -> None:
    nobody = f"nobody-{uuid.uuid4().hex[:6]}"
    with pytest.raises(Errors.DuplicateResourceError, match=nobody):
        await admin.alter_user_scram_credentials(
            [
                UserScramCredentialUpsertion(nobody, SHA256, "a"),
                UserScramCredentialUpsertion(nobody, SHA512, "b"),
            ]
        )
    with pytest.raises(Errors.ResourceNotFoundError, match=nobody):
        await admin.describe_user_scram_credentials([nobody])
    with pytest.raises(Errors.ResourceNotFoundError, match=nobody):
        await admin.alter_user_scram_credentials([UserScramCredentialDeletion(nobody, SHA256)])
    with pytest.raises(Errors.UnacceptableCredentialError, match=nobody):
        await admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion(nobody, SHA256, "pw", iterations=10)]
        )
