"""The security part of Spark's ``kafka.*`` options: the mapping of ``security.protocol``,
``sasl.*`` and ``ssl.*`` onto the client's keyword arguments and ``SSLContext``, the refusals,
and secrets kept out of reprs, logs and errors."""

from __future__ import annotations

import logging
import pickle
import re
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import pytest
import trustme
from cryptography.hazmat.primitives import serialization
from ferrokafka.spark.options import (
    client_kwargs,
    parse_fetch_options,
    parse_sink_options,
    parse_source_options,
)
from ferrokafka.spark.runtime import _key
from ferrokafka.spark.security import parse_jaas

BS = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "t"}
PASSWORD = "pa55-W0rd-never-shown"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


def jaas(module: str = SCRAM, password: str = PASSWORD, user: str = "alice") -> str:
    return f'{module} required username="{user}" password="{password}";'


def sasl(protocol: str = "SASL_PLAINTEXT", mechanism: str = "SCRAM-SHA-512", **more: str) -> Any:
    return parse_source_options(
        {
            **BS,
            "kafka.security.protocol": protocol,
            "kafka.sasl.mechanism": mechanism,
            "kafka.sasl.jaas.config": jaas(),
            **more,
        },
        streaming=False,
    )


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("module", [PLAIN, SCRAM])
def test_password_mechanisms_map_from_the_jaas_line(mechanism: str, module: str) -> None:
    opts = parse_source_options(
        {
            **BS,
            "kafka.security.protocol": "sasl_plaintext",  # Java upper-cases the protocol
            "kafka.sasl.mechanism": mechanism,
            "kafka.sasl.jaas.config": jaas(module),
        },
        streaming=False,
    )
    kwargs = client_kwargs(opts.client, opts.ssl)
    assert kwargs == {
        "bootstrap_servers": "127.0.0.1:9092",
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": "alice",
        "sasl_plain_password": PASSWORD,
    }


def test_jaas_syntax_as_java_reads_it() -> None:
    module, flag, options = parse_jaas(
        f'  {SCRAM} REQUIRED\n username=bob password="a \\"quoted\\" ;=pw" other="x" ; '
    )
    assert (module, flag) == (SCRAM, "required")
    assert options == {"username": "bob", "password": 'a "quoted" ;=pw', "other": "x"}


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (f'{SCRAM} required username="a" password="{PASSWORD}"', "does not end with ';'"),
        (f'{SCRAM} required; {PLAIN} required password="{PASSWORD}";', "holds 2 login modules"),
        (f'{SCRAM} mandatory password="{PASSWORD}";', "control flag is not one of"),
        (f'{SCRAM} required username="a" password "{PASSWORD}";', "form name=value"),
        (f'{SCRAM} required username="a" password="{PASSWORD};', "cannot be tokenized"),
        (f'{SCRAM} required password="{PASSWORD}";', "has no username"),
        (
            f'{SCRAM} required username="a" password="{PASSWORD}" tokenauth="true";',
            "delegation tokens",
        ),
        (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            f'clientSecret="{PASSWORD}";',
            "login module OAuthBearerLoginModule is not supported through Spark options",
        ),
    ],
)
def test_a_bad_jaas_line_is_refused_without_echoing_it(config: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape("kafka.sasl.jaas.config")) as caught:
        sasl(**{"kafka.sasl.jaas.config": config})
    assert message in str(caught.value)
    assert PASSWORD not in str(caught.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"kafka.sasl.mechanism": "OAUTHBEARER"},
            "kafka.sasl.mechanism 'OAUTHBEARER' is not supported through Spark options",
        ),
        (
            {"kafka.sasl.mechanism": "GSSAPI", "kafka.sasl.kerberos.service.name": "kafka"},
            "kafka.sasl.mechanism 'GSSAPI' is not supported through Spark options",
        ),
        ({"kafka.sasl.mechanism": "scram-sha-256"}, "Invalid value 'scram-sha-256'"),
        (
            {"kafka.sasl.login.callback.handler.class": "com.example.Tokens"},
            "'kafka.sasl.login.callback.handler.class' is not supported through Spark options",
        ),
        ({"kafka.security.protocol": "TLS"}, "Invalid value 'TLS' for option"),
    ],
)
def test_what_cannot_map_names_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        sasl(**options)
    assert message in str(caught.value)
    assert PASSWORD not in str(caught.value)


def test_the_java_default_mechanism_is_gssapi_and_a_jaas_line_is_required() -> None:
    no_mechanism = {**BS, "kafka.security.protocol": "SASL_SSL", "kafka.sasl.jaas.config": jaas()}
    with pytest.raises(
        ValueError, match=re.escape("kafka.sasl.mechanism is not set, so the Kafka client's")
    ):
        parse_source_options(no_mechanism, streaming=False)
    no_jaas = {**BS, "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "PLAIN"}
    with pytest.raises(
        ValueError, match=re.escape("'kafka.sasl.jaas.config' must be specified with")
    ):
        parse_source_options(no_jaas, streaming=False)
    # Without SASL the Java client never reads them, and neither does ferrokafka.
    plain = parse_source_options(
        {**BS, "kafka.sasl.mechanism": "GSSAPI", "kafka.sasl.jaas.config": "oops"},
        streaming=False,
    )
    assert plain.client == {"bootstrap_servers": "127.0.0.1:9092"}


def test_secrets_stay_out_of_reprs_logs_and_pickles(caplog: pytest.LogCaptureFixture) -> None:
    more = {
        "kafka.ssl.keystore.certificate.chain": "-----BEGIN CERTIFICATE-----\nMIIB\n",
        "kafka.ssl.keystore.key": f"-----BEGIN PRIVATE KEY-----\n{PASSWORD}\n",
        "kafka.ssl.key.password": PASSWORD,
    }
    with caplog.at_level(logging.DEBUG):
        source = sasl("SASL_SSL", **more)
        sink = parse_sink_options(
            {
                "kafka.bootstrap.servers": "h:1",
                "kafka.security.protocol": "SASL_SSL",
                "kafka.sasl.mechanism": "PLAIN",
                "kafka.sasl.jaas.config": jaas(PLAIN),
                "kafka.no.such.thing": PASSWORD,
                **more,
            }
        )
        fetch = parse_fetch_options({**BS, **more, "kafka.sasl.jaas.config": jaas()})
    for parsed in (source, source.fetch, sink, fetch):
        assert PASSWORD not in repr(parsed) and PASSWORD not in str(parsed)
        assert "'***'" in repr(parsed)
    assert PASSWORD not in caplog.text
    # What executors get is the real value.
    again = pickle.loads(pickle.dumps(source.fetch))
    assert again.client["sasl_plain_password"].reveal() == PASSWORD
    assert again.ssl["keydata"].reveal().endswith(f"{PASSWORD}\n")


def test_clients_are_cached_per_password() -> None:
    one, other = sasl(), sasl(**{"kafka.sasl.jaas.config": jaas(password="another")})
    assert repr(one.client) == repr(other.client)
    assert _key(one.client, one.ssl) != _key(other.client, other.ssl)
    assert _key(one.client, one.ssl) == _key(sasl().client, sasl().ssl)


# ---- TLS --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    directory = tmp_path_factory.mktemp("pki")
    ca = trustme.CA()
    cert = ca.issue_cert("client")
    key = serialization.load_pem_private_key(cert.private_key_pem.bytes(), password=None)
    chain = b"".join(blob.bytes() for blob in cert.cert_chain_pems).decode()
    plain_key = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    encrypted_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(PASSWORD.encode()),
    ).decode()
    (directory / "ca.pem").write_bytes(ca.cert_pem.bytes())
    (directory / "keystore.pem").write_text(plain_key + chain)
    (directory / "encrypted.pem").write_text(encrypted_key + chain)
    (directory / "store.jks").write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    return {
        "ca_obj": ca,
        "server": ca.issue_cert("localhost"),
        "dir": directory,
        "ca": ca.cert_pem.bytes().decode(),
        "chain": chain,
        "key": plain_key,
        "encrypted_key": encrypted_key,
    }


def tls(**more: str) -> ssl.SSLContext:
    opts = parse_source_options({**BS, "kafka.security.protocol": "SSL", **more}, streaming=False)
    context = client_kwargs(opts.client, opts.ssl)["ssl_context"]
    assert isinstance(context, ssl.SSLContext)
    return context


def has_client_cert(context: ssl.SSLContext, pki: dict[str, Any]) -> bool:
    """Whether a TLS handshake with ``context`` against a server of the test CA that asks for a
    client certificate presents one the server accepts."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    pki["server"].configure_cert(server_context)
    pki["ca_obj"].configure_trust(server_context)
    server_context.verify_mode = ssl.CERT_OPTIONAL
    left, right = socket.socketpair()
    peer: list[Any] = []

    def serve() -> None:
        with server_context.wrap_socket(left, server_side=True) as tls_server:
            peer.append(tls_server.getpeercert())
            tls_server.recv(1)

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        with context.wrap_socket(right, server_hostname="localhost") as tls_client:
            tls_client.sendall(b"x")
    finally:
        thread.join(10)
    return bool(peer and peer[0])


def test_pem_trust_store_as_a_file_or_inline(pki: dict[str, Any]) -> None:
    for opts in (
        {
            "kafka.ssl.truststore.type": "PEM",
            "kafka.ssl.truststore.location": str(pki["dir"] / "ca.pem"),
        },
        {"kafka.ssl.truststore.type": "pem", "kafka.ssl.truststore.certificates": pki["ca"]},
    ):
        context = tls(**opts)
        assert len(context.get_ca_certs()) == 1
        assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
        assert not has_client_cert(context, pki)  # and the server's certificate verified
    assert tls(**{"kafka.ssl.endpoint.identification.algorithm": ""}).check_hostname is False
    versions = tls(**{"kafka.ssl.enabled.protocols": "TLSv1.3"})
    assert versions.minimum_version == versions.maximum_version == ssl.TLSVersion.TLSv1_3


def test_pem_key_store_as_a_file_or_inline(pki: dict[str, Any]) -> None:
    directory: Path = pki["dir"]
    ca = {"kafka.ssl.truststore.location": str(directory / "ca.pem")}
    assert not has_client_cert(tls(**ca), pki)
    file_store = tls(
        **ca,
        **{
            "kafka.ssl.keystore.type": "PEM",
            "kafka.ssl.keystore.location": str(directory / "keystore.pem"),
        },
    )
    assert has_client_cert(file_store, pki)
    inline = tls(
        **ca,
        **{
            "kafka.ssl.keystore.type": "PEM",
            "kafka.ssl.keystore.certificate.chain": pki["chain"],
            "kafka.ssl.keystore.key": pki["key"],
        },
    )
    assert has_client_cert(inline, pki)
    encrypted_inline = tls(
        **ca,
        **{
            "kafka.ssl.keystore.certificate.chain": pki["chain"],
            "kafka.ssl.keystore.key": pki["encrypted_key"],
            "kafka.ssl.key.password": PASSWORD,
        },
    )
    assert has_client_cert(encrypted_inline, pki)
    encrypted_file = {"kafka.ssl.keystore.location": str(directory / "encrypted.pem")}
    with_password = tls(**ca, **encrypted_file, **{"kafka.ssl.key.password": PASSWORD})
    assert has_client_cert(with_password, pki)
    # No password for an encrypted key: an error, not OpenSSL's prompt on the terminal.
    with pytest.raises(ValueError, match=re.escape("give its password as kafka.ssl.key.password")):
        tls(**encrypted_file)
    with pytest.raises(ValueError, match=r"key store .* is not usable") as caught:
        tls(**encrypted_file, **{"kafka.ssl.key.password": "wrong-" + PASSWORD})
    assert PASSWORD not in str(caught.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kafka.ssl.truststore.type": "JKS"}, "'JKS' stores are not supported; give the certif"),
        ({"kafka.ssl.keystore.type": "PKCS12"}, "'PKCS12' stores are not supported; give the"),
        ({"kafka.ssl.truststore.location": "{dir}/store.jks"}, "is not a PEM file"),
        ({"kafka.ssl.keystore.location": "{dir}/store.jks"}, "is not a PEM file"),
        ({"kafka.ssl.truststore.location": "{dir}/missing.pem"}, "cannot read"),
        ({"kafka.ssl.keystore.key": "{key}"}, "needs 'kafka.ssl.keystore.certificate.chain'"),
        ({"kafka.ssl.keystore.password": PASSWORD}, "cannot be used with PEM keystores"),
        ({"kafka.ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}, "kafka.ssl.cipher.suites"),
        ({"kafka.ssl.engine.factory.class": "x.Y"}, "names a Java class"),
        ({"kafka.ssl.endpoint.identification.algorithm": "ldaps"}, "expected https, or empty"),
        ({"kafka.ssl.enabled.protocols": "TLSv1.1"}, "expected TLSv1.2 and/or TLSv1.3"),
    ],
)
def test_tls_options_that_cannot_map(
    pki: dict[str, Any], options: dict[str, str], message: str
) -> None:
    filled = {k: v.format(dir=pki["dir"], key=pki["key"]) for k, v in options.items()}
    with pytest.raises(ValueError) as caught:
        tls(**filled)
    assert message in str(caught.value)
    assert PASSWORD not in str(caught.value) and "PRIVATE KEY" not in str(caught.value)


def test_tls_material_reaches_the_sink_too(pki: dict[str, Any]) -> None:
    sink = parse_sink_options(
        {
            "kafka.bootstrap.servers": "h:1",
            "kafka.security.protocol": "SSL",
            "kafka.ssl.truststore.certificates": pki["ca"],
            "kafka.ssl.keystore.certificate.chain": pki["chain"],
            "kafka.ssl.keystore.key": pki["key"],
        }
    )
    kwargs = client_kwargs(sink.client, sink.ssl)
    assert has_client_cert(kwargs["ssl_context"], pki)
