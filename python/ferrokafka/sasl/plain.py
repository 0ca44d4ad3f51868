"""SASL PLAIN (RFC 4616): the user name and password in one message.

The password crosses the wire as is, so PLAIN belongs on TLS (``SASL_SSL``) outside tests.
"""

from __future__ import annotations

from ..errors import AuthenticationFailedError
from .mechanism import SaslMechanism

__all__ = ["PlainMechanism"]


class PlainMechanism(SaslMechanism):
    """``authzid NUL authcid NUL passwd`` with an empty authzid: the broker then authorizes
    as the authenticated user, which is what Kafka's own client sends."""

    name = "PLAIN"
    __slots__ = ("_complete", "_password", "_sent", "_username")

    def __init__(self, username: str, password: str) -> None:
        for what, value in (("user name", username), ("password", password)):
            # A NUL would shift the fields: the broker would read a different user or password.
            if "\0" in value:
                raise ValueError(f"a SASL PLAIN {what} cannot contain a NUL character")
        self._username = username
        self._password = password
        self._sent = False
        self._complete = False

    def __repr__(self) -> str:
        return f"<PlainMechanism user={self._username!r}>"

    def first_message(self) -> bytes:
        self._sent = True
        return b"\0" + self._username.encode() + b"\0" + self._password.encode()

    def respond(self, challenge: bytes) -> bytes | None:
        # PLAIN has no server message (the broker's token is empty): the broker's error code
        # of 0 is the whole answer.
        if not self._sent:
            raise AuthenticationFailedError("SASL PLAIN: the broker spoke before the client")
        self._complete = True
        return None

    @property
    def complete(self) -> bool:
        return self._complete
