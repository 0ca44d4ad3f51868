"""Abstract interfaces users implement (aiokafka's ``aiokafka.abc``)."""

from __future__ import annotations

import abc
from collections.abc import Awaitable

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
    """Supplies OAUTHBEARER tokens for SASL authentication."""

    @abc.abstractmethod
    async def token(self) -> str:  # pragma: no cover - interface
        """Return a (possibly refreshed) bearer token."""

    def extensions(self) -> dict[str, str]:
        """SASL extensions sent with the token (none by default)."""
        return {}
