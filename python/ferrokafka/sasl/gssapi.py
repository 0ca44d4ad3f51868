"""SASL GSSAPI (Kerberos V5, RFC 4752) as Kafka uses it, client side, over the ``gssapi``
binding (python-gssapi, the ``gssapi`` extra; imported only when a GSSAPI exchange starts).

The exchange: the client's context-establishment tokens (the first carries the Kerberos service
ticket for the host-based name ``<service>@<host>``) and the broker's answers, until the context
is established (mutual authentication: the broker's AP-REP), the client sending an empty token
when the context ends without one. Then the security-layer negotiation: the broker sends four
wrapped octets (a bit mask of the layers it offers, then a maximum message size); the client
answers, wrapped, with "no security layer" (Kafka frames its own traffic), a maximum size of 0 and
no authorization identity, as Kafka's Java client does. The broker's last answer is empty.

Credentials are the process's defaults, as aiokafka's: the ticket cache (``KRB5CCNAME``) or a
client keytab (``KRB5_CLIENT_KTNAME``). The first step may ask the KDC for a service ticket, so
it runs in a thread, in :meth:`GssapiMechanism.prepare`; the others are local computations.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..errors import AuthenticationFailedError
from .mechanism import SaslMechanism

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "INSTALL_HINT",
    "NO_SECURITY_LAYER",
    "GssapiMechanism",
    "import_gssapi",
    "security_layer_reply",
]

INSTALL_HINT = "pip install 'ferrokafka[gssapi]'"
NO_SECURITY_LAYER = 0x01
"""RFC 4752's bit for "no security layer", the only one Kafka uses."""


def import_gssapi() -> Any:
    """The ``gssapi`` module; ``ImportError`` saying how to install it when it is missing."""
    try:
        import gssapi
    except ImportError as exc:
        raise ImportError(
            f"sasl_mechanism 'GSSAPI' needs the gssapi package ({INSTALL_HINT})"
        ) from exc
    return gssapi


def security_layer_reply(offer: bytes) -> bytes:
    """The client's answer (before wrapping) to the broker's unwrapped security-layer ``offer``:
    no security layer, a maximum message size of 0, no authorization identity. Raises
    ``AuthenticationFailedError`` when the offer is not four octets or does not include "no
    security layer"."""
    if len(offer) != 4:
        raise AuthenticationFailedError(
            f"GSSAPI: the broker's security-layer offer is {len(offer)} bytes, not 4"
        )
    if not offer[0] & NO_SECURITY_LAYER:
        raise AuthenticationFailedError(
            f"GSSAPI: the broker requires a security layer (offered layers 0x{offer[0]:02x}); "
            "Kafka clients support none"
        )
    return bytes((NO_SECURITY_LAYER, 0, 0, 0))


def _gss_reason(exc: BaseException) -> str:
    """A GSS error's status texts, minor (the Kerberos detail) first. They name principals,
    realms and ticket caches, never a key or a password."""
    texts: list[str] = []
    get_all_statuses = getattr(exc, "get_all_statuses", None)
    for code, is_major in (
        (getattr(exc, "min_code", 0), False),
        (getattr(exc, "maj_code", 0), True),
    ):
        kind = "major" if is_major else "minor"
        try:
            statuses = list(get_all_statuses(code, is_major)) if code and get_all_statuses else []
        except Exception:  # a status the library cannot describe
            statuses = []
        for status in statuses:
            text = status.decode("utf-8", "replace") if isinstance(status, bytes) else str(status)
            text = text.strip().rstrip(".")
            if text.startswith("gss_display_status call returned failure"):
                text = f"{kind} status {code}"  # no mechanism describes it
            # "Unspecified GSS failure" only points at the minor status.
            if text and "Unspecified GSS failure" not in text and text not in texts:
                texts.append(text)
    return "; ".join(texts) or type(exc).__name__


class GssapiMechanism(SaslMechanism):
    """An exchange with the broker ``host``'s service ``<service_name>@<domain_name or host>``
    (aiokafka's ``sasl_kerberos_service_name`` and ``sasl_kerberos_domain_name``)."""

    name = "GSSAPI"
    __slots__ = ("_complete", "_context", "_first", "_gssapi", "_state", "service")

    def __init__(self, host: str, service_name: str = "kafka", domain_name: str | None = None):
        self._gssapi = import_gssapi()
        self.service = f"{service_name}@{domain_name or host}"
        """The host-based service name of the broker's principal (``kafka@localhost`` is
        ``kafka/localhost@<realm>``)."""
        self._context: Any = None
        self._first: bytes | None = None
        self._state = "start"
        self._complete = False

    def __repr__(self) -> str:
        return f"<GssapiMechanism service={self.service!r} state={self._state}>"

    def _gss(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except self._gssapi.exceptions.GSSError as exc:
            raise AuthenticationFailedError(
                f"GSSAPI: {what} (service {self.service}): {_gss_reason(exc)}"
            ) from None

    def _start(self) -> bytes:
        gssapi = self._gssapi

        def first_step() -> bytes:
            name = gssapi.Name(self.service, gssapi.NameType.hostbased_service)
            self._context = gssapi.SecurityContext(name=name, usage="initiate")
            token = self._context.step()
            return b"" if token is None else bytes(token)

        token: bytes = self._gss("could not start the Kerberos security context", first_step)
        return token

    async def prepare(self) -> None:
        if self._state != "start":
            raise AuthenticationFailedError("GSSAPI: this exchange was already prepared")
        self._first = await asyncio.to_thread(self._start)
        self._state = "context"

    def first_message(self) -> bytes:
        if self._state != "context" or self._first is None:
            raise AuthenticationFailedError("GSSAPI: no security context prepared")
        token, self._first = self._first, None
        return token

    def respond(self, challenge: bytes) -> bytes | None:
        context = self._context
        if self._state == "context":
            if context.complete:
                raise AuthenticationFailedError(
                    "GSSAPI: the broker sent a context token after the context was established"
                )
            token = self._gss(
                "the broker's context token was refused", lambda: context.step(challenge)
            )
            if context.complete:
                self._state = "layer"
            return b"" if token is None else bytes(token)
        if self._state == "layer":
            offer = self._gss(
                "could not unwrap the broker's security-layer offer",
                lambda: context.unwrap(challenge).message,
            )
            reply = security_layer_reply(bytes(offer))
            wrapped = self._gss(
                "could not wrap the security-layer reply", lambda: context.wrap(reply, False)
            )
            self._state = "sent"
            return bytes(wrapped.message)
        if self._state == "sent":
            if challenge:
                raise AuthenticationFailedError(
                    "GSSAPI: the broker answered the security-layer reply with a token"
                )
            self._state = "done"
            self._complete = True
            self._context = None
            return None
        raise AuthenticationFailedError("GSSAPI: the broker sent a token out of turn")

    @property
    def complete(self) -> bool:
        return self._complete
