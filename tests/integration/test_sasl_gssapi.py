"""SASL GSSAPI against a real MIT KDC (``kerberos_realm``) and real SASL_PLAINTEXT and SASL_SSL
listeners whose principal is ``kafka/localhost``: the producer, a consumer in a group, a commit
and an admin call as ``alice``; a missing or unreadable ticket cache, a wrong service name and a
broker address that is not the principal's host as typed errors from ``start()``, promptly; a
client keytab instead of a ticket cache; and KIP-368 re-authentication."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.testing import QUICK_START_JVM_OPTIONS, KafkaBroker
from ferrokafka.testing.kerberos import KerberosRealm

from ..needs import kerberos_or_skip_module
from .secure_util import round_trip, start_fails, where
from .test_sasl_reauthentication import REAUTH_MS, busy_clients_outlive_their_sessions

kerberos_or_skip_module()

pytestmark = pytest.mark.integration

LISTENERS = ["kerberos_broker", "kerberos_ssl_broker"]
IDS = ["sasl_plaintext", "sasl_ssl"]
# The brokers' principal is kafka/localhost; they advertise 127.0.0.1.
DOMAIN = "localhost"


@pytest.fixture
def alice(kerberos_realm: KerberosRealm, monkeypatch: pytest.MonkeyPatch) -> KerberosRealm:
    """The process's Kerberos environment: ``kerberos_realm``'s krb5.conf and a fresh ticket of
    ``alice`` in the default ticket cache."""
    monkeypatch.delenv("KRB5_CLIENT_KTNAME", raising=False)
    for name, value in kerberos_realm.client_env("alice").items():
        monkeypatch.setenv(name, value)
    return kerberos_realm


def gssapi_options(broker: KafkaBroker, **overrides: Any) -> dict[str, Any]:
    """Client options for ``broker``'s listener with GSSAPI as the broker's principal."""
    options: dict[str, Any] = {
        "bootstrap_servers": broker.bootstrap_servers,
        "security_protocol": broker.security_protocol,
        "sasl_mechanism": "GSSAPI",
        "sasl_kerberos_domain_name": DOMAIN,
    }
    if broker.security_protocol == "SASL_SSL":
        options["ssl_context"] = broker.ssl_context()
    options.update(overrides)
    return options


def _clients(options: dict[str, Any]) -> list[Any]:
    # A long request timeout: a failure must come from Kerberos, not from a timeout.
    slow = {**options, "request_timeout_ms": 30_000}
    return [
        AIOKafkaProducer(**slow),
        AIOKafkaConsumer(**slow, group_id=f"g-{uuid.uuid4().hex[:8]}"),
        AIOKafkaAdminClient(**slow),
    ]


async def _assert_refused(
    broker: KafkaBroker, options: dict[str, Any], reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Every kind of client fails to start, promptly, with ``AuthenticationFailedError``
    naming GSSAPI, the broker and the Kerberos ``reason``; the client does not keep
    reconnecting meanwhile."""
    with caplog.at_level(logging.DEBUG, logger="ferrokafka"):
        for client in _clients(options):
            caplog.clear()
            began = time.monotonic()
            error = await start_fails(client)
            assert time.monotonic() - began < 3
            assert isinstance(error, Errors.AuthenticationFailedError), repr(error)
            message = str(error)
            assert f"GSSAPI authentication with {where(broker)} failed" in message, message
            assert reason in message, message
            attempts = [r for r in caplog.records if "authentication" in r.getMessage()]
            assert len(attempts) <= 3, [r.getMessage() for r in attempts]


@pytest.mark.parametrize("listener", LISTENERS, indirect=True, ids=IDS)
async def test_produce_group_consume_commit_admin(
    listener: KafkaBroker, alice: KerberosRealm
) -> None:
    for conn in await round_trip(listener, gssapi_options(listener), "gssapi"):
        assert conn.sasl_authentications == 1
        assert conn.sasl_session_lifetime_ms is not None


@pytest.mark.parametrize("listener", LISTENERS, indirect=True, ids=IDS)
@pytest.mark.parametrize("ccache", ["missing", "empty"])
async def test_no_ticket_is_a_typed_error_from_start(
    listener: KafkaBroker,
    alice: KerberosRealm,
    ccache: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    path = tmp_path / "ccache"
    if ccache == "empty":
        path.write_bytes(b"")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{path}")
    await _assert_refused(
        listener, gssapi_options(listener), "No Kerberos credentials available", caplog
    )


async def test_a_wrong_service_name_is_refused(
    kerberos_broker: KafkaBroker, alice: KerberosRealm, caplog: pytest.LogCaptureFixture
) -> None:
    options = gssapi_options(kerberos_broker, sasl_kerberos_service_name="kafka-wrong")
    reason = f"Server kafka-wrong/localhost@{alice.realm} not found in Kerberos database"
    await _assert_refused(kerberos_broker, options, reason, caplog)


async def test_the_domain_name_names_the_principal_host(
    kerberos_broker: KafkaBroker, alice: KerberosRealm, caplog: pytest.LogCaptureFixture
) -> None:
    assert kerberos_broker.bootstrap_servers.startswith("127.0.0.1:")
    # Without it the client asks for the principal of the host it connects to.
    options = gssapi_options(kerberos_broker, sasl_kerberos_domain_name=None)
    reason = f"Server kafka/127.0.0.1@{alice.realm} not found in Kerberos database"
    await _assert_refused(kerberos_broker, options, reason, caplog)

    async with AIOKafkaAdminClient(**gssapi_options(kerberos_broker)) as admin:
        assert isinstance(await admin.list_topics(), list)


async def test_a_client_keytab_instead_of_a_ticket_cache(
    kerberos_broker: KafkaBroker,
    kerberos_realm: KerberosRealm,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KRB5_CONFIG", str(kerberos_realm.krb5_conf))
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'ccache'}")  # nothing in it yet
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", f"FILE:{kerberos_realm.keytab('alice')}")
    async with AIOKafkaAdminClient(**gssapi_options(kerberos_broker)) as admin:
        assert isinstance(await admin.list_topics(), list)


@pytest.fixture(scope="module")
def kerberos_reauth_broker(kerberos_realm: KerberosRealm) -> Iterator[KafkaBroker]:
    """A SASL_PLAINTEXT GSSAPI listener whose sessions last ``REAUTH_MS``."""
    options = kerberos_realm.broker_options(
        "sasl_plaintext",
        config={"connections.max.reauth.ms": REAUTH_MS},
        jvm_options=QUICK_START_JVM_OPTIONS,
    )
    broker = KafkaBroker(**options)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


async def test_busy_clients_reauthenticate(
    kerberos_reauth_broker: KafkaBroker, alice: KerberosRealm, caplog: pytest.LogCaptureFixture
) -> None:
    await busy_clients_outlive_their_sessions(
        kerberos_reauth_broker, gssapi_options(kerberos_reauth_broker), "GSSAPI", caplog
    )
