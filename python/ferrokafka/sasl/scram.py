"""SASL SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), client side.

Three messages: the client's first (user name and a fresh nonce), the broker's first (the
nonce extended, the salt, the iteration count), the client's final (a proof of the password),
then the broker's final (its signature, which proves the broker knows the credential too).
Both checks RFC 5802 asks of a client are made: the broker's nonce must extend ours, and its
signature must match; either failing is an authentication failure, as is a broker error
(``e=...``).

Names and passwords are sent as UTF-8 without SASLprep, as Kafka's own client and broker do
(a credential made by Kafka's tools is stored that way).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import ClassVar

from ..errors import AuthenticationFailedError
from .mechanism import SaslMechanism

__all__ = ["MIN_ITERATIONS", "ScramMechanism", "ScramSha256Mechanism", "ScramSha512Mechanism"]

MIN_ITERATIONS = 4096
"""The fewest PBKDF2 iterations accepted: Kafka's broker never stores fewer (its
``ScramMechanism`` minimum), so a lower count means a broker trying to cheapen a guess."""

_GS2_HEADER = b"n,,"
"""No channel binding, no authorization identity."""


def _escape_name(name: str) -> str:
    """RFC 5802 ``saslname``: ``=`` and ``,`` would break the attribute syntax."""
    return name.replace("=", "=3D").replace(",", "=2C")


_NONCE_BYTES = 24
"""Random bytes in a client nonce: 192 bits, 32 characters once encoded; what matters is that
no two nonces repeat (RFC 5802 asks only for a "random, unique" one)."""


# hashlib, hmac and secrets are imported where a login uses them: together they keep about
# 0.6 MB resident (OpenSSL's hash bindings), which a process that never logs in with SCRAM
# should not carry.


def _new_nonce() -> str:
    import secrets

    # Printable ASCII without ",": URL-safe base64 letters qualify.
    return secrets.token_urlsafe(_NONCE_BYTES)


def _attributes(message: bytes, what: str) -> dict[str, str]:
    """A SCRAM message's ``k=v`` attributes; a malformed message is an authentication
    failure (it is the broker's answer to our proof)."""
    try:
        text = message.decode()
    except UnicodeDecodeError:
        raise AuthenticationFailedError(f"the broker's {what} is not UTF-8") from None
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or len(key) != 1:
            raise AuthenticationFailedError(f"the broker's {what} is malformed: {text!r}")
        out.setdefault(key, value)
    return out


class ScramMechanism(SaslMechanism):
    """SCRAM with one hash function; the subclasses name it."""

    hash_name: ClassVar[str]
    __slots__ = (
        "_client_first_bare",
        "_complete",
        "_nonce",
        "_password",
        "_server_signature",
        "_state",
        "_username",
    )

    def __init__(
        self, username: str, password: str, *, nonce: Callable[[], str] = _new_nonce
    ) -> None:
        """``nonce`` makes the client nonce (a test passes a fixed one to check vectors)."""
        self._username = username
        self._password = password
        self._nonce = nonce()
        if not self._nonce or "," in self._nonce or not self._nonce.isprintable():
            raise ValueError("a SCRAM nonce is printable characters without ','")
        self._client_first_bare = f"n={_escape_name(username)},r={self._nonce}".encode()
        self._server_signature = b""
        self._state = "start"
        self._complete = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} user={self._username!r} state={self._state}>"

    def first_message(self) -> bytes:
        if self._state != "start":
            raise AuthenticationFailedError(f"{self.name}: the exchange was already started")
        self._state = "sent-first"
        return _GS2_HEADER + self._client_first_bare

    def respond(self, challenge: bytes) -> bytes | None:
        if self._state == "sent-first":
            return self._client_final(challenge)
        if self._state == "sent-final":
            self._check_server_final(challenge)
            return None
        raise AuthenticationFailedError(f"{self.name}: the broker sent a token out of turn")

    @property
    def complete(self) -> bool:
        return self._complete

    # -- the steps ---------------------------------------------------------------------------

    def _client_final(self, server_first: bytes) -> bytes:
        self._state = "failed"
        attrs = _attributes(server_first, "first SCRAM message")
        if "e" in attrs:
            raise AuthenticationFailedError(f"{self.name}: the broker refused: {attrs['e']}")
        if "m" in attrs:
            raise AuthenticationFailedError(f"{self.name}: the broker requires an extension")
        nonce, salt_b64, count = attrs.get("r"), attrs.get("s"), attrs.get("i")
        if nonce is None or salt_b64 is None or count is None:
            raise AuthenticationFailedError(
                f"{self.name}: the broker's first message lacks r, s or i"
            )
        # The broker's nonce must extend ours: otherwise this answer belongs to another
        # exchange (a replay), and a proof computed over it would be handed to a stranger.
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise AuthenticationFailedError(
                f"{self.name}: the broker's nonce does not extend the client's"
            )
        try:
            salt = base64.b64decode(salt_b64, validate=True)
            iterations = int(count)
        except (binascii.Error, ValueError):
            raise AuthenticationFailedError(
                f"{self.name}: the broker's salt or iteration count is malformed"
            ) from None
        if iterations < MIN_ITERATIONS:
            raise AuthenticationFailedError(
                f"{self.name}: the broker asks for {iterations} iterations, fewer than "
                f"the {MIN_ITERATIONS} a Kafka broker stores"
            )

        import hashlib

        salted = hashlib.pbkdf2_hmac(self.hash_name, self._password.encode(), salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash_name, client_key).digest()
        without_proof = b"c=" + base64.b64encode(_GS2_HEADER) + b",r=" + nonce.encode()
        auth_message = self._client_first_bare + b"," + server_first + b"," + without_proof
        signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        self._state = "sent-final"
        return without_proof + b",p=" + base64.b64encode(proof)

    def _check_server_final(self, server_final: bytes) -> None:
        self._state = "failed"
        attrs = _attributes(server_final, "final SCRAM message")
        if "e" in attrs:
            raise AuthenticationFailedError(f"{self.name}: the broker refused: {attrs['e']}")
        try:
            verifier = base64.b64decode(attrs.get("v", ""), validate=True)
        except binascii.Error:
            verifier = b""
        import hmac

        # The broker proves it holds the credential (not just a relay of ours): without this
        # check a man in the middle could accept any password.
        if not verifier or not hmac.compare_digest(verifier, self._server_signature):
            raise AuthenticationFailedError(
                f"{self.name}: the broker's signature is wrong (it does not hold this "
                "user's credential)"
            )
        self._state = "done"
        self._complete = True

    def _hmac(self, key: bytes, message: bytes) -> bytes:
        import hmac

        return hmac.new(key, message, self.hash_name).digest()


class ScramSha256Mechanism(ScramMechanism):
    name = "SCRAM-SHA-256"
    hash_name = "sha256"
    __slots__ = ()


class ScramSha512Mechanism(ScramMechanism):
    name = "SCRAM-SHA-512"
    hash_name = "sha512"
    __slots__ = ()
