"""SCRAM credentials through the admin client on a SASL broker: a user created by the admin
client (the salted password computed here, RFC 5802) then authenticates with its password; its
credentials are described, replaced and deleted, and a deleted credential no longer
authenticates; Kafka's ``kafka-configs`` and this client read what the other wrote; the same
through ``ferrokafka users``."""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
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

from .cli_util import cli
from .java_util import kafka_tool

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


async def _comes_to(
    broker: KafkaBroker, user: str, password: str, mechanism: str, expected: bool
) -> bool:
    """Whether logging in as ``user`` comes to succeed (``expected``) or fail within 30 s. The
    controller answers a credential change once it is committed; each broker applies it from
    the metadata log a moment later (longer on a loaded machine): a login and a describe
    right after the change can still see the credentials before it."""
    deadline = asyncio.get_running_loop().time() + 30
    while await _authenticates(broker, user, password, mechanism) != expected:
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.2)
    return True


async def _described_as(
    admin: AIOKafkaAdminClient, user: str, expected: list[ScramCredentialInfo]
) -> bool:
    """Whether the broker comes to describe ``user``'s credentials as ``expected`` within 30 s:
    it answers from its metadata, which applies a committed change a moment later."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        try:
            described = sorted((await admin.describe_user_scram_credentials([user]))[user])
        except Errors.ResourceNotFoundError:
            described = []
        if described == expected:
            return True
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.2)


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
    assert await _described_as(
        admin, user, [ScramCredentialInfo(SHA256, 4096), ScramCredentialInfo(SHA512, 8192)]
    )
    assert user in await admin.describe_user_scram_credentials()

    broker = sasl_plaintext_broker
    assert await _comes_to(broker, user, "first-pw", "SCRAM-SHA-512", True)
    assert await _comes_to(broker, user, "other-pw", "SCRAM-SHA-256", True)
    assert not await _authenticates(broker, user, "wrong", "SCRAM-SHA-512")

    # Replaced, then deleted: the old password, then the mechanism, stop working.
    await admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, SHA512, "second-pw", iterations=4096)]
    )
    assert await _comes_to(broker, user, "second-pw", "SCRAM-SHA-512", True)
    assert await _comes_to(broker, user, "first-pw", "SCRAM-SHA-512", False)
    await admin.alter_user_scram_credentials([UserScramCredentialDeletion(user, SHA512)])
    assert await _described_as(admin, user, [ScramCredentialInfo(SHA256, 4096)])
    assert await _comes_to(broker, user, "second-pw", "SCRAM-SHA-512", False)


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


async def test_scram_credentials_as_kafka_configs(
    admin: AIOKafkaAdminClient, sasl_plaintext_broker: KafkaBroker, tmp_path: Path
) -> None:
    """Kafka's ``kafka-configs`` (Java's Admin) reads what this client wrote, and this client
    reads, and logs in with, what it wrote."""
    broker = sasl_plaintext_broker
    user = f"dave-{uuid.uuid4().hex[:6]}"
    config = tmp_path / "admin.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="admin" password="{broker.users["admin"]}";\n'
    )
    tool = (
        "kafka.admin.ConfigCommand",
        "--bootstrap-server",
        broker.bootstrap_servers,
        "--command-config",
        str(config),
    )
    which = ("--entity-type", "users", "--entity-name", user)
    await admin.alter_user_scram_credentials(
        [UserScramCredentialUpsertion(user, SHA512, "ours-pw", iterations=5000)]
    )
    await asyncio.to_thread(
        kafka_tool,
        *tool,
        "--alter",
        *which,
        "--add-config",
        "SCRAM-SHA-256=[iterations=4500,password=java-pw]",
    )
    java = await asyncio.to_thread(kafka_tool, *tool, "--describe", *which)
    assert "SCRAM-SHA-512=iterations=5000" in java and "SCRAM-SHA-256=iterations=4500" in java
    assert sorted((await admin.describe_user_scram_credentials([user]))[user]) == [
        ScramCredentialInfo(SHA256, 4500),
        ScramCredentialInfo(SHA512, 5000),
    ]
    assert await _authenticates(broker, user, "java-pw", "SCRAM-SHA-256")
    assert await _authenticates(broker, user, "ours-pw", "SCRAM-SHA-512")


def test_scram_credentials_from_the_command_line(
    sasl_plaintext_broker: KafkaBroker,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``ferrokafka users alter|describe``: what it sets logs in, what it reads is what the
    admin client reads, and a user without credentials is an error naming the user."""
    broker = sasl_plaintext_broker
    connect = [
        *("-b", broker.bootstrap_servers, "--security-protocol", "SASL_PLAINTEXT"),
        *("--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", "admin"),
        *("--sasl-password", broker.users["admin"]),
    ]
    user = f"erin-{uuid.uuid4().hex[:6]}"
    both = ("--add", "SCRAM-SHA-512", "--add", "SCRAM-SHA-256")
    alter = ("users", "alter", "--user", user)
    with_password = ("--iterations", "8192", "--password", "pw-1")
    code, out, err = cli(capsys, *alter, *both, *with_password, *connect)
    assert (code, out) == (0, ""), err

    async def described() -> dict[str, list[ScramCredentialInfo]]:
        async with AIOKafkaAdminClient(**broker.client_options(user="admin")) as admin:
            return await admin.describe_user_scram_credentials([user])

    def shown() -> list[dict[str, object]]:
        describe = ("users", "describe", "--user", user, "--format", "json")
        code, out, err = cli(capsys, *describe, *connect)
        assert code == 0, err
        return [json.loads(line) for line in out.splitlines()]

    assert shown() == [
        {"user": user, "mechanism": m.name.replace("_", "-"), "iterations": i}
        for m, i in sorted(asyncio.run(described())[user])
    ]
    assert {row["mechanism"]: row["iterations"] for row in shown()} == {
        "SCRAM-SHA-256": 8192,
        "SCRAM-SHA-512": 8192,
    }
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        assert asyncio.run(_authenticates(broker, user, "pw-1", mechanism))

    # A new password from standard input replaces one mechanism's; a deletion ends the other.
    monkeypatch.setattr("sys.stdin", io.StringIO("pw-2\n"))
    code, _, err = cli(capsys, *alter, "--add", "SCRAM-SHA-256", "--password-stdin", *connect)
    assert code == 0, err
    code, _, err = cli(capsys, *alter, "--delete", "SCRAM-SHA-512", *connect)
    assert code == 0, err
    assert shown() == [{"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 4096}]
    assert asyncio.run(_authenticates(broker, user, "pw-2", "SCRAM-SHA-256"))
    assert not asyncio.run(_authenticates(broker, user, "pw-1", "SCRAM-SHA-256"))
    assert not asyncio.run(_authenticates(broker, user, "pw-1", "SCRAM-SHA-512"))

    nobody = f"nobody-{uuid.uuid4().hex[:6]}"
    code, _, err = cli(capsys, "users", "describe", "--user", nobody, *connect)
    assert code == 1 and "ResourceNotFound" in err and nobody in err
