"""Abstract interfaces users implement (aiokafka's ``aiokafka.abc``)."""

from __future__ import annotations

import abc
from collections.abc import Awaitable
from typing import Any

from .structs import TopicPartition

__all__ = ["AbstractTokenProvider", "ConsumerRebalanceListener"]


class ConsumerRebalanceListener(abc.ABC):
    """Callbacks around a group rebalance, passed to ``AIOKafkaConsumer.subscribe``.

    Both callbacks may be plain functions or coroutines; the consumer awaits coroutines. Revocation
    is called before a rebalance with the partitions this member gives up (commit or save their
    progress there); assignment is called after it with the partitions it now owns (``seek``
    there to start from a position of your own).
    """

    @abc.abstractmethod
    def on_partitions_revoked(
        self, revoked: set[TopicPartition]
    ) -> Awaitable[None] | None:  # pragma: no cover - interface
        """Called before the rebalance with the partitions being taken away."""

    @abc.abstractmethod
    def on_partitions_assigned(
        self, assigned: set[TopicPartition]
    ) -> Awaitable[None] | None:  # pragma: no cover - interface
        """Called after the rebalance with the partitions now assigned."""


class AbstractTokenProvider(abc.ABC):
    """Supplies the bearer tokens of SASL ``OAUTHBEARER`` (``sasl_oauth_token_provider``).

    ``token()`` is awaited once per authentication: when a connection opens and each time it
    re-authenticates before the broker's session ends (``connections.max.reauth.ms``). It
    should return a cached token while that one is still valid, and a fresh one after (an
    expired token is refused). A blocking token source belongs on an executor:
    ``await asyncio.get_running_loop().run_in_executor(None, fetch)``.
    """

    def __init__(self, **config: Any) -> None:  # noqa: B027 - aiokafka's signature
        pass

    @abc.abstractmethod
    async def token(self) -> str:  # pragma: no cover - interface
        """The bearer token (a JWT's compact form, for instance), possibly refreshed."""

    def extensions(self) -> dict[str, str]:
        """SASL extensions sent with the token (KIP-342): names of letters, values of
        printable ASCII. None by default."""
        return {}
