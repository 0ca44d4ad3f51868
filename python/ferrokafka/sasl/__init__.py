"""SASL mechanisms, client side: pure state machines the connection drives (``conn.py`` sends
their tokens in SaslAuthenticate requests after a SaslHandshake).

Mechanism names are aiokafka's ``sasl_mechanism`` values.
"""

from __future__ import annotations

from typing import Any

from .gssapi import GssapiMechanism
from .mechanism import SaslMechanism
from .oauthbearer import OAuthBearerMechanism
from .plain import PlainMechanism
from .scram import ScramMechanism, ScramSha256Mechanism, ScramSha512Mechanism

__all__ = [
    "MECHANISMS",
    "PASSWORD_MECHANISMS",
    "GssapiMechanism",
    "OAuthBearerMechanism",
    "PlainMechanism",
    "SaslMechanism",
    "ScramMechanism",
    "ScramSha256Mechanism",
    "ScramSha512Mechanism",
    "new_mechanism",
]

PASSWORD_MECHANISMS: dict[str, type[PlainMechanism] | type[ScramMechanism]] = {
    PlainMechanism.name: PlainMechanism,
    ScramSha256Mechanism.name: ScramSha256Mechanism,
    ScramSha512Mechanism.name: ScramSha512Mechanism,
}
"""The mechanisms that authenticate with a user name and password (``sasl_plain_username``,
``sasl_plain_password``), by name."""

MECHANISMS: tuple[str, ...] = (
    *PASSWORD_MECHANISMS,
    OAuthBearerMechanism.name,
    GssapiMechanism.name,
)
"""The mechanisms ferrokafka speaks (aiokafka's): ``OAUTHBEARER`` takes its tokens from
``sasl_oauth_token_provider``, ``GSSAPI`` its Kerberos credentials from the process's ticket
cache or client keytab (with the ``gssapi`` extra)."""


def new_mechanism(
    name: str,
    username: str | None = None,
    password: str | None = None,
    *,
    token_provider: Any = None,
    host: str | None = None,
    kerberos_service_name: str = "kafka",
    kerberos_domain_name: str | None = None,
) -> SaslMechanism:
    """A fresh exchange of mechanism ``name`` (one of ``MECHANISMS``): with ``username`` and
    ``password``, for ``OAUTHBEARER`` with ``token_provider``, for ``GSSAPI`` with the broker's
    ``host`` and the Kerberos service and domain names."""
    if name == GssapiMechanism.name:
        if host is None:
            raise ValueError("GSSAPI needs the broker's host name")
        return GssapiMechanism(host, kerberos_service_name, kerberos_domain_name)
    if name == OAuthBearerMechanism.name:
        if token_provider is None:
            raise ValueError("OAUTHBEARER needs a token provider")
        return OAuthBearerMechanism(token_provider)
    try:
        cls = PASSWORD_MECHANISMS[name]
    except KeyError:
        raise ValueError(f"SASL mechanism {name!r} is not supported") from None
    if username is None or password is None:
        raise ValueError(f"{name} needs a user name and a password")
    return cls(username, password)
