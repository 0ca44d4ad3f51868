"""SASL mechanisms, client side: pure state machines the connection drives (``conn.py`` sends
their tokens in SaslAuthenticate requests after a SaslHandshake).

Mechanism names are aiokafka's ``sasl_mechanism`` values.
"""

from __future__ import annotations

from .mechanism import SaslMechanism
from .plain import PlainMechanism
from .scram import ScramMechanism, ScramSha256Mechanism, ScramSha512Mechanism

__all__ = [
    "MECHANISMS",
    "NOT_SUPPORTED_YET",
    "PlainMechanism",
    "SaslMechanism",
    "ScramMechanism",
    "ScramSha256Mechanism",
    "ScramSha512Mechanism",
    "new_mechanism",
]

MECHANISMS: dict[str, type[PlainMechanism] | type[ScramMechanism]] = {
    PlainMechanism.name: PlainMechanism,
    ScramSha256Mechanism.name: ScramSha256Mechanism,
    ScramSha512Mechanism.name: ScramSha512Mechanism,
}
"""The mechanisms ferrokafka speaks, by name; each authenticates with a user name and
password (``sasl_plain_username``, ``sasl_plain_password``)."""

NOT_SUPPORTED_YET = ("GSSAPI", "OAUTHBEARER")
"""aiokafka's other mechanism names, refused when a client is configured."""


def new_mechanism(name: str, username: str, password: str) -> SaslMechanism:
    """A fresh exchange of mechanism ``name`` (one of ``MECHANISMS``)."""
    try:
        cls = MECHANISMS[name]
    except KeyError:
        raise ValueError(f"SASL mechanism {name!r} is not supported") from None
    return cls(username, password)
