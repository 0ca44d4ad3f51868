"""A consumer's membership of its group, behind one interface (``GroupMember``): the classic
protocol (``classic.py``), the KIP-848 consumer protocol (``kip848.py``), and no group at all
(``no_group.py``: ``assign()``, or no ``group_id``). ``group_member`` chooses one from the
consumer's configuration; the consumer calls it without asking which it is. The classic
protocol's assignors are in ``assignors/``, its Subscription and Assignment in
``subscription.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...client import AIOKafkaClient
from ..subscription_state import SubscriptionState
from .base import GroupMember, GroupMembership
from .classic import ClassicMember
from .kip848 import Kip848Member
from .no_group import NoGroupMember
from .offsets import OffsetsCoordinator

if TYPE_CHECKING:
    from ...config import ConsumerConfig

__all__ = [
    "ClassicMember",
    "GroupMember",
    "GroupMembership",
    "Kip848Member",
    "NoGroupMember",
    "OffsetsCoordinator",
    "group_member",
]


def group_member(
    client: AIOKafkaClient, subscription: SubscriptionState, config: ConsumerConfig
) -> GroupMember:
    """The member ``config`` asks for: none without a ``group_id``, else the one of its
    ``group_protocol``."""
    if config.group_id is None:
        return NoGroupMember(client, subscription, config)
    if config.group_protocol == "consumer":
        return Kip848Member(client, subscription, config)
    return ClassicMember(client, subscription, config)
