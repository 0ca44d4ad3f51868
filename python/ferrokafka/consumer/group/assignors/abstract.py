"""The assignor interface (aiokafka's ``AbstractPartitionAssignor``), for custom assignors too.

An assignor is a class (aiokafka passes classes in ``partition_assignment_strategy``) or an
instance of one. The group coordinator uses:

* ``name``: the protocol name sent in JoinGroup (the group picks one every member supports);
* ``rebalance_protocol``: ``"EAGER"`` (members give up everything before a rebalance) or
  ``"COOPERATIVE"`` (only partitions that move are given up, KIP-429); ``supported_protocols``
  lists every protocol the assignor can run under, preferred first (Java's
  ``supportedProtocols()``);
* ``metadata(topics, owned_partitions=(), generation=-1, rack_id=None)``: this member's
  Subscription for JoinGroup, written as ConsumerProtocolSubscription v3 like the Java client
  (owned partitions and generation are sent for every assignor);
* ``assign(cluster, members, group_instance_ids=None)``: on the group leader, every member's
  Assignment. ``cluster`` only needs ``partitions_for_topic(topic) -> set[int] | None``
  (:class:`ClusterView`); ``members`` maps member id to its decoded Subscription;
  ``group_instance_ids`` maps member id to its ``group.instance.id`` (None for dynamic members)
  as the JoinGroup response gives it, which the Java assignors use to order static members;
* ``on_assignment(assignment, generation=None)``: this member's assignment after each rebalance.

Topics without metadata (unknown, or no partitions) are left out of the assignment, as Java does.

Custom assignors
----------------
Subclass :class:`AbstractPartitionAssignor`, give it a ``name`` no other assignor of the group
uses, and implement ``assign``; override ``subscription_user_data`` to send each member's own
data to the leader (``members[member_id].user_data`` in ``assign``) and ``on_assignment`` to
hear of this member's assignment. Pass the class (each consumer makes its own instance) or a
configured instance in ``partition_assignment_strategy``, alone or with others in preference
order; the group uses one that every member lists. Only the leader's ``assign`` runs, so every
member must give the same name to the same logic::

    class AllToOne(AbstractPartitionAssignor):
        name = "all-to-one"

        @classmethod
        def assign(cls, cluster, members, group_instance_ids=None):
            topics = {t for m in members.values() for t in m.subscription}
            every = [
                (t, p) for t, ps in partitions_per_topic(cluster, topics).items() for p in ps
            ]
            first = min(members)
            return {
                m: ConsumerProtocolMemberAssignment.from_partitions(every if m == first else [])
                for m in members
            }

    AIOKafkaConsumer(..., group_id="g", partition_assignment_strategy=(AllToOne,))

Assignors written for aiokafka work unchanged: a method that does not take the extra arguments
above (``metadata(topics)``, ``assign(cluster, members)``, ``on_assignment(assignment)``) is
called without them. A member ``assign`` leaves out gets no partitions. An exception raised by an
assignor ends the consumer's group membership and is raised by its next ``getone``/``getmany``.
"""

from __future__ import annotations

import abc
import types
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, ClassVar, Concatenate, Generic, ParamSpec, Protocol, TypeVar

from ....structs import TopicPartition
from ..subscription import (
    CONSUMER_PROTOCOL_HIGHEST_VERSION,
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
    java_string_key,
)

__all__ = [
    "AbstractPartitionAssignor",
    "ClusterView",
    "Members",
    "hybridmethod",
    "java_string_key",
    "member_order",
    "partitions_per_topic",
]

_P = ParamSpec("_P")
_R = TypeVar("_R")


Members = Mapping[str, ConsumerProtocolMemberMetadata]
"""The members of a group by member id, each with its decoded Subscription."""


class ClusterView(Protocol):
    """What an assignor reads from cluster metadata (``ferrokafka.cluster.ClusterMetadata``
    satisfies it; tests can pass a tiny stand-in)."""

    def partitions_for_topic(self, topic: str) -> Collection[int] | None: ...


class hybridmethod(Generic[_P, _R]):
    """A method bound to the instance when called on one and to the class otherwise, so an
    assignor keeps its state per instance, or on the class when used as a class (aiokafka)."""

    def __init__(self, func: Callable[Concatenate[Any, _P], _R]) -> None:
        self.__func__ = func
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__

    def __get__(self, obj: object, objtype: type | None = None) -> Callable[_P, _R]:
        bound: Callable[_P, _R] = types.MethodType(
            self.__func__, obj if obj is not None else objtype
        )
        return bound


def member_order(
    members: Iterable[str], group_instance_ids: Mapping[str, str | None] | None = None
) -> list[str]:
    """Members in the Java client's ``MemberInfo`` order: static members (with a
    group.instance.id) first, by instance id; then dynamic members by member id."""
    ids = group_instance_ids or {}

    def key(member_id: str) -> tuple[int, bytes]:
        instance_id = ids.get(member_id)
        if instance_id is not None:
            return (0, java_string_key(instance_id))
        return (1, java_string_key(member_id))

    return sorted(members, key=key)


def partitions_per_topic(cluster: ClusterView, topics: Iterable[str]) -> dict[str, list[int]]:
    """Sorted partition ids of each topic that has metadata and at least one partition."""
    result: dict[str, list[int]] = {}
    for topic in topics:
        partitions = cluster.partitions_for_topic(topic)
        if partitions:
            result[topic] = sorted(partitions)
    return result


class AbstractPartitionAssignor(abc.ABC):
    """Base of ferrokafka's assignors; see the module docstring for the interface."""

    name: ClassVar[str]
    version: ClassVar[int] = CONSUMER_PROTOCOL_HIGHEST_VERSION
    """The ConsumerProtocolSubscription version ``metadata()`` writes."""
    rebalance_protocol: ClassVar[str] = "EAGER"
    supported_protocols: ClassVar[tuple[str, ...]] = ("EAGER",)

    @hybridmethod
    def metadata(
        self_or_cls: Any,
        topics: Iterable[str],
        owned_partitions: Iterable[TopicPartition] = (),
        generation: int = -1,
        rack_id: str | None = None,
    ) -> ConsumerProtocolMemberMetadata:
        """This member's Subscription: ``topics``, the partitions it owns now and the
        generation it got them in (-1 when none), and the assignor's user data."""
        topic_list = sorted(set(topics), key=java_string_key)
        owned = [TopicPartition(tp[0], tp[1]) for tp in owned_partitions]
        return ConsumerProtocolMemberMetadata(
            self_or_cls.version,
            topic_list,
            self_or_cls.subscription_user_data(topic_list, owned, generation),
            owned,
            generation,
            rack_id,
        )

    @hybridmethod
    def subscription_user_data(
        self_or_cls: Any, topics: list[str], owned: list[TopicPartition], generation: int
    ) -> bytes | None:
        """The Subscription's user data (Java's ``subscriptionUserData``); none by default."""
        return None

    @classmethod
    @abc.abstractmethod
    def assign(
        cls,
        cluster: ClusterView,
        members: Mapping[str, ConsumerProtocolMemberMetadata],
        group_instance_ids: Mapping[str, str | None] | None = None,
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        """Every member's assignment (every member of ``members`` gets an entry)."""

    @hybridmethod  # noqa: B027 - an optional hook
    def on_assignment(
        self_or_cls: Any,
        assignment: ConsumerProtocolMemberAssignment,
        generation: int | None = None,
    ) -> None:
        """This member's new assignment and its generation; nothing to keep by default."""

    @classmethod
    def _wrap(
        cls, assignment: Mapping[str, Iterable[TopicPartition]]
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        return {
            member: ConsumerProtocolMemberAssignment.from_partitions(
                partitions, None, CONSUMER_PROTOCOL_HIGHEST_VERSION
            )
            for member, partitions in assignment.items()
        }


class OrderedMembersAssignor(AbstractPartitionAssignor):
    """Base of ferrokafka's own assignors: :meth:`assign` gives ``_partitions_by_member`` the
    partitions of every subscribed topic and the members in Java's member order, and wraps the
    partition lists it returns."""

    @classmethod
    def assign(
        cls,
        cluster: ClusterView,
        members: Members,
        group_instance_ids: Mapping[str, str | None] | None = None,
    ) -> dict[str, ConsumerProtocolMemberAssignment]:
        order = member_order(members, group_instance_ids)
        topics = {t for meta in members.values() for t in meta.subscription}
        partitions = partitions_per_topic(cluster, sorted(topics, key=java_string_key))
        return cls._wrap(cls._partitions_by_member(partitions, members, order))

    @classmethod
    @abc.abstractmethod
    def _partitions_by_member(
        cls, partitions: dict[str, list[int]], members: Members, order: list[str]
    ) -> Mapping[str, Iterable[TopicPartition]]:
        """Each member's partitions. ``partitions``: the sorted partition ids of each
        subscribed topic with metadata, topics in Java's string order; ``order``: ``members``'
        ids in Java's member order."""
