"""A share session: the state a broker keeps for one member's ShareFetches (KIP-932).

The first ShareFetch (epoch 0) opens it with the partitions to fetch; each later request
(ShareFetch or ShareAcknowledge) carries the next epoch and lists only what changed: partitions
to add, with acknowledgements, and partitions to forget. Epoch -1 closes it, which releases
every record still acquired through it. The epoch after 2**31 - 1 is 1.

A broker serves one request of a connection at a time, in order, so epochs are taken and
requests sent under the session's lock: a request that took an epoch is on the wire before
the next one takes its own.
"""

from __future__ import annotations

import asyncio

from ..structs import TopicPartition

__all__ = ["CLOSE_EPOCH", "ShareSession"]

CLOSE_EPOCH = -1
_MAX_EPOCH = 2**31 - 1


class ShareSession:
    def __init__(self, node: int) -> None:
        self.node = node
        self.epoch = 0
        """The epoch the next request carries (0: no session is open)."""
        self.partitions: set[TopicPartition] = set()
        """The partitions the broker has in the session."""
        self.lock = asyncio.Lock()

    @property
    def is_open(self) -> bool:
        return self.epoch > 0

    def changes(
        self, wanted: set[TopicPartition]
    ) -> tuple[set[TopicPartition], set[TopicPartition]]:
        """``(partitions to list, partitions to forget)`` for a ShareFetch of ``wanted``."""
        if not self.is_open:
            return set(wanted), set()
        return wanted - self.partitions, self.partitions - wanted

    def answered(self, listed: set[TopicPartition], forgotten: set[TopicPartition]) -> None:
        """The broker took a ShareFetch that listed and forgot these."""
        if not self.is_open:
            self.partitions = set(listed)
        else:
            self.partitions = (self.partitions | listed) - forgotten
        self.advance()

    def advance(self) -> None:
        self.epoch = 1 if self.epoch >= _MAX_EPOCH else self.epoch + 1

    def reset(self) -> None:
        """The broker has no such session (any more): the next request opens one."""
        self.epoch = 0
        self.partitions.clear()
