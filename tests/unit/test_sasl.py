"""The SASL mechanisms' client side, without a network: RFC vectors, a reference SCRAM server,
every way a broker's answer must be refused, and the connection's authentication step against
an in-process fake peer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.config import ConnectionConfig
from ferrokafka.conn import Connection
from ferrokafka.errors import AuthenticationFailedError
from ferrokafka.protocol import ApiKey
from ferrokafka.sasl import (
    MECHANISMS,
    PlainMechanism,
    ScramSha256Mechanism,
    ScramSha512Mechanism,
    new_mechanism,
)

from .fake_broker import FakeBroker

# RFC 7677 section 3: SCRAM-SHA-256 with user "user", password "pencil".
RFC_NONCE = "rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_FIRST = (
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
)
RFC_CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_client() -> ScramSha256Mechanism:
    return ScramSha256Mechanism("user", "pencil", nonce=lambda: RFC_NONCE)


def test_plain_is_authzid_user_password_separated_by_nul() -> None:
    m = PlainMechanism("alice", "s3cret")
    assert m.first_message() == b"\0alice\0s3cret"
    assert not m.complete
    assert m.respond(b"") is None
    assert m.complete


def test_plain_refuses_a_nul_without_echoing_it() -> None:
    with pytest.raises(ValueError, match="password") as info:
        PlainMechanism("alice", "se\0cret")
    assert "se\0cret" not in str(info.value)


def test_scram_sha_256_rfc7677_vector() -> None:
    m = rfc_client()
    assert m.first_message() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert m.respond(RFC_SERVER_FIRST) == RFC_CLIENT_FINAL
    assert not m.complete
    assert m.respond(RFC_SERVER_FINAL) is None
    assert m.complete


def test_a_wrong_server_signature_fails() -> None:
    m = rfc_client()
    m.first_message()
    m.respond(RFC_SERVER_FIRST)
    forged = b"v=" + base64.b64encode(b"\0" * 32)
    with pytest.raises(AuthenticationFailedError, match="signature"):
        m.respond(forged)
    assert not m.complete


@pytest.mark.parametrize("final", [b"", b"v=", b"v=not base64!", b"x=1"])
def test_a_missing_or_malformed_server_signature_fails(final: bytes) -> None:
    m = rfc_client()
    m.first_message()
    m.respond(RFC_SERVER_FIRST)
    with pytest.raises(AuthenticationFailedError):
        m.respond(final)
    assert not m.complete


@pytest.mark.parametrize(
    "nonce",
    [
        "someoneElsesNonce123",  # not ours at all
        RFC_NONCE,  # ours, not extended
        "rOprNGfwEbeRWgbNEkq",  # a prefix of ours
        "XrOprNGfwEbeRWgbNEkqOabc",  # ours, not at the start
    ],
)
def test_a_nonce_not_extending_ours_fails(nonce: str) -> None:
    m = rfc_client()
    m.first_message()
    with pytest.raises(AuthenticationFailedError, match="nonce"):
        m.respond(f"r={nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096".encode())


def test_a_server_error_fails_naming_it() -> None:
    m = rfc_client()
    m.first_message()
    m.respond(RFC_SERVER_FIRST)
    with pytest.raises(AuthenticationFailedError, match="invalid-proof"):
        m.respond(b"e=invalid-proof")
    m = rfc_client()
    m.first_message()
    with pytest.raises(AuthenticationFailedError, match="unknown-user"):
        m.respond(b"e=unknown-user")


@pytest.mark.parametrize(
    "server_first",
    [
        b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095",
        b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1",
        b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-4096",
    ],
)
def test_fewer_than_4096_iterations_are_refused(server_first: bytes) -> None:
    m = rfc_client()
    m.first_message()
    with pytest.raises(AuthenticationFailedError, match="iterations"):
        m.respond(server_first)


@pytest.mark.parametrize(
    "server_first",
    [
        b"",
        b"garbage",
        b"r=rOprNGfwEbeRWgbNEkqOxyz,i=4096",  # no salt
        b"r=rOprNGfwEbeRWgbNEkqOxyz,s=***,i=4096",
        b"r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=many",
        b"m=ext,r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        b"\xff\xfe",
    ],
)
def test_a_malformed_first_server_message_fails(server_first: bytes) -> None:
    m = rfc_client()
    m.first_message()
    with pytest.raises(AuthenticationFailedError):
        m.respond(server_first)


def test_tokens_out_of_turn_fail() -> None:
    m = rfc_client()
    with pytest.raises(AuthenticationFailedError, match="out of turn"):
        m.respond(RFC_SERVER_FIRST)
    m = rfc_client()
    m.first_message()
    m.respond(RFC_SERVER_FIRST)
    m.respond(RFC_SERVER_FINAL)
    with pytest.raises(AuthenticationFailedError, match="out of turn"):
        m.respond(RFC_SERVER_FINAL)


def test_user_names_are_escaped() -> None:
    m = ScramSha256Mechanism("a=b,c", "pw", nonce=lambda: "n0nce")
    assert m.first_message() == b"n,,n=a=3Db=2Cc,r=n0nce"


def test_nonces_are_fresh_and_printable() -> None:
    firsts = {ScramSha512Mechanism("u", "p").first_message() for _ in range(20)}
    assert len(firsts) == 20
    for first in firsts:
        nonce = first.split(b",r=", 1)[1].decode()
        assert len(nonce) >= 24 and nonce.isprintable() and "," not in nonce


class ReferenceScramServer:
    """The server side of RFC 5802, written from the RFC's formulas (not from the client)."""

    def __init__(self, hash_name: str, password: str, iterations: int = 4096) -> None:
        self.hash_name = hash_name
        self.salt = b"0123456789abcdef"
        self.iterations = iterations
        salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), self.salt, iterations)
        client_key = hmac.new(salted, b"Client Key", hash_name).digest()
        self.stored_key = hashlib.new(hash_name, client_key).digest()
        self.server_key = hmac.new(salted, b"Server Key", hash_name).digest()

    def first(self, client_first: bytes) -> bytes:
        assert client_first.startswith(b"n,,")
        self.client_first_bare = client_first[3:]
        nonce = self.client_first_bare.split(b",r=")[1]
        salt = base64.b64encode(self.salt)
        self.server_first = b"r=" + nonce + b"SERVER,s=" + salt + b",i=%d" % self.iterations
        return self.server_first

    def final(self, client_final: bytes) -> bytes:
        without_proof, proof_b64 = client_final.split(b",p=")
        auth = self.client_first_bare + b"," + self.server_first + b"," + without_proof
        signature = hmac.new(self.stored_key, auth, self.hash_name).digest()
        proof = base64.b64decode(proof_b64)
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if hashlib.new(self.hash_name, client_key).digest() != self.stored_key:
            return b"e=invalid-proof"
        return b"v=" + base64.b64encode(hmac.new(self.server_key, auth, self.hash_name).digest())


@pytest.mark.parametrize(
    ("name", "hash_name"), [("SCRAM-SHA-256", "sha256"), ("SCRAM-SHA-512", "sha512")]
)
def test_scram_against_a_reference_server(name: str, hash_name: str) -> None:
    server = ReferenceScramServer(hash_name, "pässword", iterations=8192)
    m = new_mechanism(name, "alice", "pässword")
    final = m.respond(server.first(m.first_message()))
    assert final is not None
    assert m.respond(server.final(final)) is None
    assert m.complete

    server = ReferenceScramServer(hash_name, "the right one")
    m = new_mechanism(name, "alice", "a wrong one")
    final = m.respond(server.first(m.first_message()))
    assert final is not None
    with pytest.raises(AuthenticationFailedError, match="invalid-proof"):
        m.respond(server.final(final))


def test_no_secret_in_repr_or_errors() -> None:
    for name in MECHANISMS:
        m = new_mechanism(name, "alice", "hunter2")
        assert "hunter2" not in repr(m)
        assert "alice" in repr(m)
    m = ScramSha256Mechanism("alice", "hunter2")
    m.first_message()
    with pytest.raises(AuthenticationFailedError) as info:
        m.respond(b"r=x,s=AAAA,i=4096")
    assert "hunter2" not in str(info.value)


def test_mechanism_names_are_aiokafkas() -> None:
    assert set(MECHANISMS) == {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
    with pytest.raises(ValueError, match="GSSAPI"):
        new_mechanism("GSSAPI", "u", "p")


# ---- the connection's authentication step, against an in-process fake peer --------------------

SCRAM_USER = {
    "security_protocol": "SASL_PLAINTEXT",
    "sasl_mechanism": "SCRAM-SHA-512",
    "sasl_plain_username": "alice",
    "sasl_plain_password": "hunter2",
}


def _sasl_peer(
    *,
    mechanisms: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-512"),
    password: str = "hunter2",
    forge_signature: bool = False,
    lifetime_ms: int = 60_000,
) -> FakeBroker:
    """A peer enabling ``mechanisms`` whose SCRAM user ``alice`` has ``password``."""
    server = ReferenceScramServer("sha512", password)
    rounds = 0

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        nonlocal rounds
        if key == ApiKey.SASL_HANDSHAKE:
            rounds = 0  # a new connection's exchange
            known = body["mechanism"] in mechanisms
            reply: dict[str, Any] = {"error_code": 0 if known else 33, "mechanisms": mechanisms}
        elif key == ApiKey.SASL_AUTHENTICATE:
            rounds += 1
            token = bytes(body["auth_bytes"])
            answer = server.first(token) if rounds == 1 else server.final(token)
            if answer.startswith(b"e="):
                reply = {"error_code": 58, "error_message": "invalid credentials"}
            else:
                if forge_signature and rounds == 2:
                    answer = b"v=" + base64.b64encode(b"\0" * 64)
                reply = {"error_code": 0, "auth_bytes": answer, "session_lifetime_ms": lifetime_ms}
        else:
            reply = {"brokers": [], "topics": [], "cluster_id": "c", "controller_id": 1}
        return _native.encode_response(key, version, corr, reply)

    return FakeBroker(handler)


async def _authenticate(broker: FakeBroker, **options: Any) -> Connection:
    config = ConnectionConfig(**{**SCRAM_USER, **options})
    conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
    await conn.connect()
    return conn


async def test_the_connection_authenticates_after_api_versions() -> None:
    broker = await _sasl_peer().start()
    try:
        conn = await _authenticate(broker)
        assert [r[0] for r in broker.requests] == [18, 17, 36, 36]
        assert broker.requests[1][3] == {"mechanism": "SCRAM-SHA-512"}
        assert conn.sasl_session_lifetime_ms == 60_000
        assert conn.sasl_authenticated_at is not None
        conn.close()
    finally:
        await broker.stop()


async def test_a_mechanism_not_enabled_names_the_broker_and_what_it_enables() -> None:
    broker = await _sasl_peer(mechanisms=("GSSAPI", "OAUTHBEARER")).start()
    try:
        with pytest.raises(Errors.UnsupportedSaslMechanismError) as info:
            await _authenticate(broker)
        assert str(info.value) == (
            "[Error 33] UnsupportedSaslMechanismError: SASL mechanism SCRAM-SHA-512 is not "
            f"enabled on node -1 at 127.0.0.1:{broker.port}; its listener enables: GSSAPI, "
            "OAUTHBEARER"
        )
    finally:
        await broker.stop()


async def test_refused_credentials_are_sasl_authentication_failed() -> None:
    broker = await _sasl_peer(password="another").start()
    try:
        with pytest.raises(Errors.SaslAuthenticationFailed) as info:
            await _authenticate(broker)
        message = str(info.value)
        assert message == (
            "[Error 58] SaslAuthenticationFailed: SCRAM-SHA-512 authentication as 'alice' with "
            f"node -1 at 127.0.0.1:{broker.port} failed: invalid credentials"
        )
    finally:
        await broker.stop()


async def test_a_broker_with_a_wrong_signature_is_refused_and_the_connection_closed() -> None:
    broker = await _sasl_peer(forge_signature=True).start()
    try:
        config = ConnectionConfig(**SCRAM_USER)
        conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
        with pytest.raises(Errors.AuthenticationFailedError) as info:
            await conn.connect()
        message = str(info.value)
        assert "SCRAM-SHA-512" in message and f"127.0.0.1:{broker.port}" in message
        assert "signature is wrong" in message and "hunter2" not in message
        assert conn.closed
    finally:
        await broker.stop()


async def test_bootstrap_raises_the_refusal_and_reconnects_no_sooner_than_retry_backoff() -> None:
    refusing = await _sasl_peer(password="another").start()
    other = await _sasl_peer().start()
    try:
        client = AIOKafkaClient(
            **SCRAM_USER,
            bootstrap_servers=f"127.0.0.1:{refusing.port},127.0.0.1:{other.port}",
            retry_backoff_ms=400,
            reconnect_backoff_ms=1,
            reconnect_backoff_max_ms=1,
        )
        began = time.monotonic()
        with pytest.raises(Errors.SaslAuthenticationFailed):
            await client.bootstrap()
        assert time.monotonic() - began < 2
        assert not other.requests  # a refusal is not a reason to try the next address
        with pytest.raises(Errors.SaslAuthenticationFailed):
            await client.ready(-1)
        assert time.monotonic() - began >= 0.4 * 0.99
        assert [r[0] for r in refusing.requests].count(17) == 2
        await client.close()
    finally:
        await refusing.stop()
        await other.stop()
