"""The client side of a SASL mechanism, as a pure state machine: no I/O, no clock.

The connection drives it: it awaits ``prepare()`` (the one step that may wait: an OAUTHBEARER
token from the application), sends ``first_message()``, then hands each token the broker
answers to ``respond()`` and sends what comes back, until ``respond()`` returns None (the
exchange is over and the broker's last word checked). A mechanism that finds the broker's
answer wrong raises ``AuthenticationFailedError``; its message never carries a secret.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

__all__ = ["SaslMechanism"]


class SaslMechanism(ABC):
    """One authentication exchange (a new object per connection)."""

    __slots__ = ()

    name: ClassVar[str]
    """The mechanism's IANA name, as the broker's ``sasl.enabled.mechanisms`` lists it."""

    async def prepare(self) -> None:  # noqa: B027 - a step most mechanisms do not need
        """Gather what the first message needs before it is made; nothing by default."""

    @abstractmethod
    def first_message(self) -> bytes:
        """The client's first token."""

    @abstractmethod
    def respond(self, challenge: bytes) -> bytes | None:
        """The token answering the broker's ``challenge``, or None when the exchange is
        complete (the broker's final token checked)."""

    @property
    @abstractmethod
    def complete(self) -> bool:
        """Whether the exchange ended successfully."""

    @property
    def refusal(self) -> str | None:
        """Why the broker refused, when it said so in a mechanism token before failing the
        exchange with an error code (OAUTHBEARER's JSON status); None otherwise."""
        return None
