"""A consumer's membership of its group, behind one interface (``GroupMember``): the classic
protocol (``classic.py``), the KIP-848 consumer protocol (``consumer_protocol.py``), and no
group at all (``no_group.py``: ``assign()``, or no ``group_id``). ``group_member`` chooses one
from the consumer's configuration; the consumer calls it without asking which it is."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...client import AIOKafkaClient
from ..subscription_state import SubscriptionState
from .base import GroupMember, GroupMembership
from .classic import ClassicMember
from .consumer_protocol import ConsumerProtocolMember
from .no_group import NoGroupMember
from .offsets import OffsetsCoordinator

if TYPE_CHECKING:
    from ...config import ConsumerConfig

__all__ = [
    "ClassicMember",
    "ConsumerProtocolMember",
    "GroupMember",
    "GroupMembership",
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
        return ConsumerProtocolMember(client, subscription, config)
    return ClassicMember(client, subscription, config)
