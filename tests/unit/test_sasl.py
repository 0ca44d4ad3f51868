"""The SASL mechanisms' client side, without a network: RFC vectors, a reference SCRAM server,
OAUTHBEARER's messages, every way a broker's answer must be refused, and the connection's
authentication step and its re-authentication (KIP-368) against an in-process fake peer."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import time
from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.abc import AbstractTokenProvider
from ferrokafka.client import AIOKafkaClient
from ferrokafka.config import ConnectionConfig
from ferrokafka.conn import Connection
from ferrokafka.errors import AuthenticationFailedError
from ferrokafka.protocol import ApiKey
from ferrokafka.sasl import (
    MECHANISMS,
    PASSWORD_MECHANISMS,
    OAuthBearerMechanism,
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
    for name in PASSWORD_MECHANISMS:
        m = new_mechanism(name, "alice", "hunter2")
        assert "hunter2" not in repr(m)
        assert "alice" in repr(m)
    m = ScramSha256Mechanism("alice", "hunter2")
    m.first_message()
    with pytest.raises(AuthenticationFailedError) as info:
        m.respond(b"r=x,s=AAAA,i=4096")
    assert "hunter2" not in str(info.value)


def test_mechanism_names_are_aiokafkas() -> None:
    assert set(MECHANISMS) == {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER", "GSSAPI"}
    with pytest.raises(ValueError, match="not supported"):
        new_mechanism("KERBEROS", "u", "p")
    with pytest.raises(ValueError, match="token provider"):
        new_mechanism("OAUTHBEARER", "u", "p")


# ---- OAUTHBEARER ------------------------------------------------------------------------------

JWT = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9."


class Provider(AbstractTokenProvider):
    """Hands out ``tokens`` in turn (the last one again when they run out)."""

    def __init__(self, *tokens: str, extensions: dict[str, str] | None = None) -> None:
        self.tokens = list(tokens or [JWT])
        self._extensions = extensions
        self.calls = 0

    async def token(self) -> str:
        self.calls += 1
        return self.tokens[min(self.calls, len(self.tokens)) - 1]

    def extensions(self) -> dict[str, str]:
        return self._extensions if self._extensions is not None else super().extensions()


async def _first(provider: Any) -> bytes:
    m = new_mechanism("OAUTHBEARER", token_provider=provider)
    await m.prepare()
    return m.first_message()


async def test_oauthbearer_initial_response_is_kafkas() -> None:
    assert await _first(Provider()) == b"n,,\x01auth=Bearer " + JWT.encode() + b"\x01\x01"
    with_extensions = Provider(extensions={"traceId": "abc 1", "logicalCluster": "lkc-1"})
    assert await _first(with_extensions) == (
        b"n,,\x01auth=Bearer " + JWT.encode() + b"\x01traceId=abc 1\x01logicalCluster=lkc-1\x01\x01"
    )


async def test_oauthbearer_accepts_an_aiokafka_style_provider_without_extensions() -> None:
    class Bare:
        async def token(self) -> str:
            return JWT

    assert await _first(Bare()) == b"n,,\x01auth=Bearer " + JWT.encode() + b"\x01\x01"


@pytest.mark.parametrize(
    ("token", "extensions", "match"),
    [
        ("", {}, "token"),
        ("has space.secret", {}, "token"),
        ("tok\x01secret", {}, "token"),
        (JWT, {"auth": "x"}, "'auth'"),
        (JWT, {"trace_id": "x"}, "'trace_id'"),
        (JWT, {"traceId": "caf\u00e9"}, "value of extension 'traceId'"),
        (JWT, {"traceId": ""}, "value of extension 'traceId'"),
    ],
)
async def test_oauthbearer_refuses_what_the_broker_would_not_parse(
    token: str, extensions: dict[str, str], match: str
) -> None:
    with pytest.raises(AuthenticationFailedError, match=match) as info:
        await _first(Provider(token, extensions=extensions))
    if token:
        assert token not in str(info.value)


async def test_oauthbearer_answers_a_server_error_with_control_a() -> None:
    m = OAuthBearerMechanism(Provider())
    await m.prepare()
    m.first_message()
    assert m.refusal is None
    assert m.respond(b'{"status":"insufficient_scope", "scope":"kafka"}') == b"\x01"
    assert m.refusal == "status 'insufficient_scope', scope 'kafka'"
    assert not m.complete
    with pytest.raises(AuthenticationFailedError, match="insufficient_scope"):
        m.respond(b"")
    accepted = OAuthBearerMechanism(Provider())
    await accepted.prepare()
    accepted.first_message()
    assert accepted.respond(b"") is None and accepted.complete
    assert JWT not in repr(accepted)
    with pytest.raises(AuthenticationFailedError, match="out of turn"):
        accepted.respond(b"")


def test_oauthbearer_needs_a_prepared_token() -> None:
    with pytest.raises(AuthenticationFailedError, match="no token"):
        OAuthBearerMechanism(Provider()).first_message()


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


def _oauth_peer(*, accept: set[str], lifetime_ms: int = 0) -> FakeBroker:
    """A peer enabling OAUTHBEARER that accepts the tokens in ``accept``, refusing others as
    Kafka's broker does: a JSON status, then error 58 after the client's ``\\x01``."""
    status = b'{"status":"invalid_token"}'

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        if key == ApiKey.SASL_HANDSHAKE:
            reply: dict[str, Any] = {"error_code": 0, "mechanisms": ["OAUTHBEARER"]}
        elif key == ApiKey.SASL_AUTHENTICATE:
            message = bytes(body["auth_bytes"])
            if message == b"\x01":
                reply = {"error_code": 58, "error_message": status.decode()}
            else:
                token = message.split(b"auth=Bearer ", 1)[1].split(b"\x01", 1)[0].decode()
                ok = token in accept
                reply = {
                    "error_code": 0,
                    "auth_bytes": b"" if ok else status,
                    "session_lifetime_ms": lifetime_ms if ok else 0,
                }
        else:
            reply = {"brokers": [], "topics": [], "cluster_id": "c", "controller_id": 1}
        return _native.encode_response(key, version, corr, reply)

    return FakeBroker(handler)


OAUTH = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "OAUTHBEARER"}


async def test_oauthbearer_authenticates_with_the_providers_token() -> None:
    broker = await _oauth_peer(accept={JWT}).start()
    try:
        provider = Provider(extensions={"traceId": "t1"})
        config = ConnectionConfig(**OAUTH, sasl_oauth_token_provider=provider)
        conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
        await conn.connect()
        assert [r[0] for r in broker.requests] == [18, 17, 36]
        assert broker.requests[1][3] == {"mechanism": "OAUTHBEARER"}
        assert bytes(broker.requests[2][3]["auth_bytes"]).endswith(b"\x01traceId=t1\x01\x01")
        assert provider.calls == 1 and conn.sasl_authentications == 1
        conn.close()
    finally:
        await broker.stop()


async def test_a_refused_token_names_the_mechanism_broker_and_status_not_the_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broker = await _oauth_peer(accept=set()).start()
    try:
        config = ConnectionConfig(**OAUTH, sasl_oauth_token_provider=Provider())
        conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
        with caplog.at_level("DEBUG"), pytest.raises(Errors.SaslAuthenticationFailed) as info:
            await conn.connect()
        assert str(info.value) == (
            "[Error 58] SaslAuthenticationFailed: OAUTHBEARER authentication with node -1 at "
            f"127.0.0.1:{broker.port} failed: status 'invalid_token'"
        )
        assert bytes(broker.requests[-1][3]["auth_bytes"]) == b"\x01"
        assert JWT not in caplog.text and JWT not in repr(info.value)
        assert conn.closed
    finally:
        await broker.stop()


async def test_a_failing_token_provider_is_an_authentication_error_chaining_its_own() -> None:
    class Failing(AbstractTokenProvider):
        async def token(self) -> str:
            raise OSError("identity provider unreachable")

    broker = await _oauth_peer(accept={JWT}).start()
    try:
        config = ConnectionConfig(**OAUTH, sasl_oauth_token_provider=Failing())
        conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
        with pytest.raises(Errors.AuthenticationFailedError) as info:
            await conn.connect()
        assert "the token provider raised OSError" in str(info.value)
        assert isinstance(info.value.__cause__, OSError)
        assert [r[0] for r in broker.requests] == [18, 17]
    finally:
        await broker.stop()


# ---- re-authentication (KIP-368) --------------------------------------------------------------


async def _busy(conn: Connection, seconds: float, tasks: int = 3) -> None:
    """``tasks`` senders of Metadata requests, back to back, for ``seconds``."""

    async def one() -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            await conn.send(ApiKey.METADATA, {"topics": []})
            await asyncio.sleep(0.005)

    await asyncio.gather(*(one() for _ in range(tasks)))


def _exchanges(keys: list[int]) -> list[list[int]]:
    """The runs of SASL requests (17, then 36s) in the order the peer got them."""
    runs: list[list[int]] = []
    for key in keys:
        if key == 17:
            runs.append([key])
        elif key == 36:
            runs[-1].append(key)
    return runs


async def test_a_connection_reauthenticates_between_requests_before_its_session_ends() -> None:
    lifetime_ms = 1000
    handshakes: list[float] = []
    inner = _sasl_peer(lifetime_ms=lifetime_ms).handler

    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        if key == ApiKey.SASL_HANDSHAKE:
            handshakes.append(time.monotonic())
        elif key == ApiKey.SASL_AUTHENTICATE:
            await asyncio.sleep(0.02)  # a window for other requests to slip in, if they could
        return await inner(key, version, corr, body)

    broker = await FakeBroker(handler).start()
    try:
        conn = await _authenticate(broker)
        began = conn.sasl_authenticated_at
        assert began is not None
        await _busy(conn, 2.3)
        keys = [r[0] for r in broker.requests]
        # Every exchange ran whole: a handshake and both SCRAM rounds, nothing between them.
        for at in [i for i, k in enumerate(keys) if k == 17]:
            assert keys[at : at + 3] == [17, 36, 36], keys
        assert _exchanges(keys) == [[17, 36, 36]] * len(handshakes)
        assert len(handshakes) >= 3 and conn.sasl_authentications == len(handshakes)
        assert not conn.closed and conn.sasl_session_lifetime_ms == lifetime_ms
        # The first re-authentication began between 85% and 95% of the lifetime (plus the
        # wait for the requests then in flight).
        delay = handshakes[1] - began
        assert 0.85 * lifetime_ms / 1000 <= delay <= 0.95 * lifetime_ms / 1000 + 0.15, delay
        # The held requests went on afterwards.
        assert keys[-1] == ApiKey.METADATA
        conn.close()
    finally:
        await broker.stop()


async def test_each_reauthentication_asks_the_token_provider_again() -> None:
    broker = await _oauth_peer(accept={JWT}, lifetime_ms=200).start()
    try:
        provider = Provider()
        config = ConnectionConfig(**OAUTH, sasl_oauth_token_provider=provider)
        conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
        await conn.connect()
        await _busy(conn, 0.6, tasks=1)
        assert provider.calls >= 3 and provider.calls == conn.sasl_authentications
        assert not conn.closed
        conn.close()
    finally:
        await broker.stop()


async def test_a_refused_reauthentication_closes_the_connection_with_the_refusal() -> None:
    second = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJib2IifQ."
    broker = await _oauth_peer(accept={JWT}, lifetime_ms=200).start()
    try:
        config = ConnectionConfig(**OAUTH, sasl_oauth_token_provider=Provider(JWT, second))
        closed: list[BaseException | None] = []
        conn = Connection(
            "127.0.0.1",
            broker.port,
            node_id=-1,
            config=config,
            on_close=lambda _conn, reason: closed.append(reason),
        )
        await conn.connect()
        with pytest.raises(Errors.KafkaConnectionError, match="invalid_token"):
            await _busy(conn, 2.0, tasks=1)
        assert conn.closed and len(closed) == 1
        assert isinstance(closed[0], Errors.SaslAuthenticationFailed)
        assert second not in str(closed[0])
    finally:
        await broker.stop()


async def test_no_reauthentication_without_a_session_lifetime() -> None:
    broker = await _sasl_peer(lifetime_ms=0).start()
    try:
        conn = await _authenticate(broker)
        await _busy(conn, 0.3, tasks=1)
        assert [r[0] for r in broker.requests].count(17) == 1
        assert conn.sasl_session_lifetime_ms == 0
        conn.close()
    finally:
        await broker.stop()
