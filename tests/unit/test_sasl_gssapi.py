"""SASL GSSAPI without a KDC: the security-layer answer, the exchange's steps over a stand-in
security context (the real one needs a KDC: tests/integration/test_sasl_gssapi.py), the
Kerberos library's errors as ``AuthenticationFailedError``, the configuration checks, and the
test harness's realm and listener settings."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ferrokafka import AIOKafkaProducer, _native
from ferrokafka import errors as Errors
from ferrokafka.config import ConnectionConfig
from ferrokafka.conn import Connection
from ferrokafka.errors import AuthenticationFailedError
from ferrokafka.protocol import ApiKey
from ferrokafka.sasl import MECHANISMS, GssapiMechanism, new_mechanism
from ferrokafka.sasl.gssapi import _gss_reason, security_layer_reply
from ferrokafka.testing import kerberos
from ferrokafka.testing.kerberos import KerberosRealm
from ferrokafka.testing.security import ENABLED_SASL_MECHANISMS, kerberos_listener_config

from ..needs import kerberos_or_skip_module
from .fake_broker import FakeBroker

kerberos_or_skip_module()

import gssapi  # noqa: E402 (after the check above: outside CI it may be missing)

GSSAPI = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI"}
# Real GSS status codes (RFC 2744): a defective token; an unspecified failure with a Kerberos
# minor code (KRB5_S_PRINCIPAL_UNKNOWN).
GSS_S_DEFECTIVE_TOKEN = 0x90000
GSS_S_FAILURE = 0xD0000
KRB5_CODE = 2529638919


# ---- the security layer ----------------------------------------------------------------------


@pytest.mark.parametrize("offer", [b"\x01\x00\x00\x00", b"\x01\xff\xff\xff", b"\x07\x00\x10\x00"])
def test_the_answer_is_no_security_layer_size_0_no_authzid(offer: bytes) -> None:
    assert security_layer_reply(offer) == b"\x01\x00\x00\x00"


@pytest.mark.parametrize("offer", [b"\x02\x00\x10\x00", b"\x06\x00\x10\x00", b"\x00\x00\x00\x00"])
def test_an_offer_without_no_security_layer_is_refused(offer: bytes) -> None:
    with pytest.raises(AuthenticationFailedError, match=r"requires a security layer \(offered"):
        security_layer_reply(offer)


@pytest.mark.parametrize("offer", [b"", b"\x01\x00\x00", b"\x01\x00\x00\x00user"])
def test_an_offer_of_another_size_is_refused(offer: bytes) -> None:
    with pytest.raises(AuthenticationFailedError, match=f"is {len(offer)} bytes, not 4"):
        security_layer_reply(offer)


# ---- the exchange over a stand-in context ----------------------------------------------------


class _Wrapped:
    def __init__(self, message: bytes) -> None:
        self.message = message


class StandInContext:
    """A security context that completes on the broker's first token; wrapping is a marker."""

    made: list[StandInContext] = []

    def __init__(self, name: Any, usage: str) -> None:
        self.name = name
        self.usage = usage
        self.complete = False
        self.steps: list[bytes | None] = []
        self.wrapped: list[tuple[bytes, bool]] = []
        StandInContext.made.append(self)

    def step(self, token: bytes | None = None) -> bytes | None:
        self.steps.append(token)
        if token is None:
            return b"AP-REQ"
        if token == b"defective":
            raise gssapi.exceptions.GSSError(GSS_S_DEFECTIVE_TOKEN, 0)
        self.complete = True
        return None

    def unwrap(self, token: bytes) -> _Wrapped:
        assert token.startswith(b"W:")
        return _Wrapped(token[2:])

    def wrap(self, message: bytes, encrypt: bool) -> _Wrapped:
        self.wrapped.append((message, encrypt))
        return _Wrapped(b"W:" + message)


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> type[StandInContext]:
    StandInContext.made = []
    monkeypatch.setattr(gssapi, "SecurityContext", StandInContext)
    return StandInContext


async def test_the_exchange_steps(stand_in: type[StandInContext]) -> None:
    mechanism = new_mechanism("GSSAPI", host="broker-1", kerberos_domain_name="kafka.example")
    assert isinstance(mechanism, GssapiMechanism)
    with pytest.raises(AuthenticationFailedError, match="no security context prepared"):
        mechanism.first_message()
    await mechanism.prepare()
    (context,) = stand_in.made
    assert context.usage == "initiate"
    assert str(context.name) == "kafka@kafka.example"
    assert mechanism.first_message() == b"AP-REQ"
    # The broker's AP-REP completes the context; no token of ours: an empty one.
    assert mechanism.respond(b"AP-REP") == b""
    assert not mechanism.complete
    assert mechanism.respond(b"W:\x07\x00\x10\x00") == b"W:\x01\x00\x00\x00"
    assert context.wrapped == [(b"\x01\x00\x00\x00", False)]
    assert mechanism.respond(b"") is None
    assert mechanism.complete
    with pytest.raises(AuthenticationFailedError, match="out of turn"):
        mechanism.respond(b"")


async def test_a_token_after_the_last_step_is_refused(stand_in: type[StandInContext]) -> None:
    mechanism = new_mechanism("GSSAPI", host="localhost")
    await mechanism.prepare()
    mechanism.first_message()
    mechanism.respond(b"AP-REP")
    mechanism.respond(b"W:\x01\x00\x00\x00")
    with pytest.raises(AuthenticationFailedError, match="answered the security-layer reply"):
        mechanism.respond(b"more")
    assert not mechanism.complete


async def test_a_gss_error_names_the_service_and_the_kerberos_reason(
    stand_in: type[StandInContext],
) -> None:
    mechanism = new_mechanism("GSSAPI", host="localhost", kerberos_service_name="kafka-x")
    await mechanism.prepare()
    mechanism.first_message()
    with pytest.raises(AuthenticationFailedError) as info:
        mechanism.respond(b"defective")
    message = str(info.value)
    assert message.endswith(
        "GSSAPI: the broker's context token was refused (service kafka-x@localhost): "
        "Invalid token was supplied"
    ), message


class _UndescribedError(Exception):
    """What python-gssapi raises when no mechanism describes the minor status."""

    maj_code = GSS_S_FAILURE
    min_code = KRB5_CODE

    def get_all_statuses(self, code: int, is_major: bool) -> list[bytes]:
        if is_major:
            return [b"Unspecified GSS failure.  Minor code may provide more information"]
        return [b"gss_display_status call returned failure (major 327680, minor 22)."]


def test_an_undescribed_gss_status_gives_its_code() -> None:
    assert _gss_reason(_UndescribedError()) == f"minor status {KRB5_CODE}"


def test_the_service_is_host_based() -> None:
    assert new_mechanism("GSSAPI", host="10.0.0.7").service == "kafka@10.0.0.7"  # type: ignore[attr-defined]
    named = new_mechanism(
        "GSSAPI", host="10.0.0.7", kerberos_service_name="k", kerberos_domain_name="b.example"
    )
    assert named.service == "k@b.example"  # type: ignore[attr-defined]
    assert "k@b.example" in repr(named)
    with pytest.raises(ValueError, match="GSSAPI needs the broker's host name"):
        new_mechanism("GSSAPI")
    assert "GSSAPI" in MECHANISMS


# ---- the connection -------------------------------------------------------------------------


def _gssapi_peer() -> FakeBroker:
    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        assert key == ApiKey.SASL_HANDSHAKE, "no token may be sent without credentials"
        reply = {"error_code": 0, "mechanisms": ["GSSAPI"]}
        return _native.encode_response(key, version, corr, reply)

    return FakeBroker(handler)


async def test_no_credentials_fail_before_a_token_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    krb5_conf = tmp_path / "krb5.conf"
    krb5_conf.write_text("[libdefaults]\n default_realm = EXAMPLE.TEST\n")
    monkeypatch.setenv("KRB5_CONFIG", str(krb5_conf))
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'no-ccache'}")
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", f"FILE:{tmp_path / 'no-keytab'}")
    broker = await _gssapi_peer().start()
    try:
        config = ConnectionConfig(**GSSAPI, sasl_kerberos_domain_name="localhost")
        conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
        with pytest.raises(Errors.AuthenticationFailedError) as info:
            await asyncio.wait_for(conn.connect(), 10)
        message = str(info.value)
        assert message.startswith(
            f"AuthenticationFailedError: GSSAPI authentication with node -1 at "
            f"127.0.0.1:{broker.port} failed: GSSAPI: could not start the Kerberos security "
            "context (service kafka@localhost): No Kerberos credentials available"
        ), message
        assert [r[0] for r in broker.requests] == [ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE]
        assert info.value.__cause__ is None and info.value.__suppress_context__
    finally:
        await broker.stop()


# ---- configuration --------------------------------------------------------------------------


def test_gssapi_needs_no_user_name_or_password() -> None:
    config = ConnectionConfig(**GSSAPI)
    assert config.uses_sasl
    assert config.sasl_kerberos_service_name == "kafka"
    assert config.sasl_kerberos_domain_name is None


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"sasl_kerberos_service_name": ""}, "sasl_kerberos_service_name must be a non-empty"),
        ({"sasl_kerberos_service_name": "kafka/host"}, "not 'kafka/host'"),
        ({"sasl_kerberos_service_name": "kafka@host"}, "not 'kafka@host'"),
        ({"sasl_kerberos_service_name": None}, "not None"),
        ({"sasl_kerberos_domain_name": ""}, "sasl_kerberos_domain_name must be None or a host"),
        ({"sasl_kerberos_domain_name": "a@REALM"}, "not 'a@REALM'"),
    ],
)
def test_bad_kerberos_names_are_refused(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ConnectionConfig(**GSSAPI, **options)
    with pytest.raises(ValueError, match=match):
        AIOKafkaProducer(bootstrap_servers="127.0.0.1:1", **GSSAPI, **options)


def test_the_names_are_not_checked_without_sasl() -> None:
    config = ConnectionConfig(sasl_mechanism="GSSAPI", sasl_kerberos_domain_name="")
    assert not config.uses_sasl


def test_without_the_gssapi_package_configuring_gssapi_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gssapi", None)  # import gssapi raises ImportError
    with pytest.raises(ValueError) as info:
        ConnectionConfig(**GSSAPI)
    assert "sasl_mechanism 'GSSAPI' needs the gssapi package" in str(info.value)
    assert "pip install 'ferrokafka[gssapi]'" in str(info.value)
    with pytest.raises(ImportError, match=r"ferrokafka\[gssapi\]"):
        new_mechanism("GSSAPI", host="localhost")
    # The other mechanisms do not need it.
    ConnectionConfig(
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_plain_username="u",
        sasl_plain_password="p",
    )


# ---- the test harness's realm and listener ----------------------------------------------------


def test_missing_kerberos_programs_are_named_with_their_packages(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(kerberos, "_SBIN", (str(tmp_path),))
    with pytest.raises(kerberos.KerberosError) as info:
        KerberosRealm().start()
    message = str(info.value)
    for program, package in kerberos.KERBEROS_PROGRAMS.items():
        assert f"{program} (Debian package {package})" in message
    assert "tools/bootstrap --dev installs them" in message


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"realm": "EXAMPLE TEST"}, "realm 'EXAMPLE TEST'"),
        ({"users": ("alice@X",)}, "principal part 'alice@X'"),
        ({"service_hosts": ()}, "service_hosts must name at least one host"),
    ],
)
def test_realm_options_are_checked(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        KerberosRealm(**options)


def test_the_listener_enables_gssapi_beside_the_other_mechanisms(tmp_path: Path) -> None:
    keytab = tmp_path / "kafka.keytab"
    config = kerberos_listener_config(
        "SASL_SSL", service="kafka", principal="kafka/localhost@R.TEST", keytab=keytab
    )
    assert config["sasl.enabled.mechanisms"].split(",") == [*ENABLED_SASL_MECHANISMS, "GSSAPI"]
    assert config["sasl.kerberos.service.name"] == "kafka"
    assert config["listener.name.sasl_ssl.gssapi.sasl.jaas.config"] == (
        "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
        f'keyTab="{keytab}" principal="kafka/localhost@R.TEST";'
    )
    with pytest.raises(ValueError, match="GSSAPI needs a SASL listener, not 'SSL'"):
        kerberos_listener_config("SSL", service="kafka", principal="p", keytab=keytab)


def test_gssapi_is_imported_only_when_gssapi_is_configured() -> None:
    code = (
        "import sys\n"
        "from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer\n"
        "from ferrokafka.config import ConnectionConfig\n"
        "AIOKafkaProducer(bootstrap_servers='127.0.0.1:1')\n"
        "assert 'gssapi' not in sys.modules, 'imported without GSSAPI configured'\n"
        "ConnectionConfig(security_protocol='SASL_PLAINTEXT', sasl_mechanism='GSSAPI')\n"
        "assert 'gssapi' in sys.modules\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
