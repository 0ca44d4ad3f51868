"""SASL OAUTHBEARER (RFC 7628) as Kafka uses it (KIP-255, KIP-342), client side.

One message: the GS2 header, then ``auth=Bearer <token>`` and any extensions, each ended by
``\\x01`` (Control-A), and a final ``\\x01``. The broker answers with an empty token when it
accepts the bearer token; when it refuses, it answers with a JSON error (``{"status": ...}``),
which RFC 7628 has the client acknowledge with a lone ``\\x01`` before the broker fails the
exchange. The token comes from the application's ``AbstractTokenProvider``, awaited in
:meth:`OAuthBearerMechanism.prepare` once per authentication (tokens expire; a re-authentication
needs a fresh one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import AuthenticationFailedError
from .mechanism import SaslMechanism

__all__ = ["OAuthBearerMechanism", "initial_response"]

_SEPARATOR = "\x01"
# The broker's grammar (Kafka's OAuthBearerClientInitialResponse): a token of base64url
# characters and dots (a JWT's compact form), extension keys of letters, values of printable
# ASCII, spaces and line breaks. Anything else would be refused as a malformed message.
_TOKEN = re.compile(r"[-_.a-zA-Z0-9]+")
_EXTENSION_KEY = re.compile(r"[A-Za-z]+")
_EXTENSION_VALUE = re.compile(r"[\x21-\x7E \t\r\n]+")


def initial_response(token: str, extensions: Mapping[str, str]) -> bytes:
    """The client's first message; raises ``AuthenticationFailedError`` for a token or an
    extension the broker's grammar refuses (the message never echoes the token or a value)."""
    if not isinstance(token, str) or not _TOKEN.fullmatch(token):
        raise AuthenticationFailedError(
            "OAUTHBEARER: the token provider's token is not a non-empty string of base64url "
            "characters and dots"
        )
    parts = [f"auth=Bearer {token}"]
    for key, value in extensions.items():
        if key == "auth" or not isinstance(key, str) or not _EXTENSION_KEY.fullmatch(key):
            raise AuthenticationFailedError(
                f"OAUTHBEARER: extension name {key!r} is invalid (letters only, not 'auth')"
            )
        if not isinstance(value, str) or not _EXTENSION_VALUE.fullmatch(value):
            raise AuthenticationFailedError(
                f"OAUTHBEARER: the value of extension {key!r} is invalid"
            )
        parts.append(f"{key}={value}")
    return ("n,," + _SEPARATOR + _SEPARATOR.join(parts) + _SEPARATOR + _SEPARATOR).encode()


def _refusal(challenge: bytes) -> str:
    """The broker's JSON error as ``status 'x'`` (with the scope or OpenID configuration it
    names), or the raw text when it is not such JSON."""
    text = challenge.decode("utf-8", "replace")
    try:
        error: Any = json.loads(text)
    except ValueError:
        return f"error {text!r}"
    if not isinstance(error, dict) or "status" not in error:
        return f"error {text!r}"
    out = f"status {error['status']!r}"
    for key in ("scope", "openid-configuration"):
        if key in error:
            out += f", {key} {error[key]!r}"
    return out


class OAuthBearerMechanism(SaslMechanism):
    """An exchange with a token from ``provider`` (an ``AbstractTokenProvider``: async
    ``token()``, optional ``extensions()``)."""

    name = "OAUTHBEARER"
    __slots__ = ("_complete", "_extensions", "_provider", "_refusal", "_state", "_token")

    def __init__(self, provider: Any) -> None:
        self._provider = provider
        self._token: str | None = None
        self._extensions: dict[str, str] = {}
        self._state = "start"
        self._complete = False
        self._refusal: str | None = None

    def __repr__(self) -> str:
        return (
            f"<OAuthBearerMechanism provider={type(self._provider).__name__} state={self._state}>"
        )

    async def prepare(self) -> None:
        token = await self._provider.token()
        extensions = getattr(self._provider, "extensions", None)
        self._extensions = dict(extensions() if callable(extensions) else {})
        self._token = token

    def first_message(self) -> bytes:
        if self._state != "start" or self._token is None:
            raise AuthenticationFailedError("OAUTHBEARER: no token prepared for this exchange")
        message = initial_response(self._token, self._extensions)
        self._token = None  # not kept past its use
        self._state = "sent"
        return message

    def respond(self, challenge: bytes) -> bytes | None:
        if self._state == "sent":
            if not challenge:
                self._state = "done"
                self._complete = True
                return None
            # The broker refused the token: acknowledge, and it fails the exchange.
            self._refusal = _refusal(challenge)
            self._state = "refused"
            return _SEPARATOR.encode()
        if self._state == "refused":
            raise AuthenticationFailedError(f"OAUTHBEARER: the broker refused: {self._refusal}")
        raise AuthenticationFailedError("OAUTHBEARER: the broker sent a token out of turn")

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def refusal(self) -> str | None:
        return self._refusal
