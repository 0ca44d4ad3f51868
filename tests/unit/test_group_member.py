"""The consumer's group member interface (``ferrokafka.consumer.group``): every member implements
it, the configuration chooses the member, and the consumer works through it alone: without a
``group_id`` (the no-group member assigns every partition of a subscription and keeps no
offsets, with aiokafka's errors), and with one in ``assign()`` mode (commits as generation -1).
Against the scripted one-node cluster of group_broker.py."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.config import ConsumerConfig
from ferrokafka.consumer import group_coordinator
from ferrokafka.consumer.group import (
    ClassicMember,
    GroupMember,
    Kip848Member,
    NoGroupMember,
    group_member,
)
from ferrokafka.consumer.group.assignors.range import RangePartitionAssignor
from ferrokafka.consumer.group.assignors.roundrobin import RoundRobinPartitionAssignor
from ferrokafka.consumer.subscription_state import SubscriptionState
from ferrokafka.protocol import ApiKey

from .group_broker import GroupBroker

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.mark.parametrize("member", [NoGroupMember, ClassicMember, Kip848Member])
def test_every_member_implements_the_interface(member: type[GroupMember]) -> None:
    assert issubclass(member, GroupMember)
    assert not inspect.isabstract(member), member.__abstractmethods__


def test_aiokafkas_import_path_names_the_members() -> None:
    assert group_coordinator.GroupCoordinator is ClassicMember
    assert group_coordinator.NoGroupCoordinator is NoGroupMember
    assert group_coordinator.BaseCoordinator is GroupMember


@pytest.mark.parametrize(
    ("aiokafka_path", "module"),
    [
        ("coordinator.protocol", "consumer.group.subscription"),
        ("coordinator.assignors", "consumer.group.assignors"),
        ("coordinator.assignors.abstract", "consumer.group.assignors.abstract"),
        ("coordinator.assignors.range", "consumer.group.assignors.range"),
        ("coordinator.assignors.roundrobin", "consumer.group.assignors.roundrobin"),
        ("coordinator.assignors.sticky", "consumer.group.assignors.sticky"),
        (
            "coordinator.assignors.sticky.sticky_assignor",
            "consumer.group.assignors.sticky.sticky_assignor",
        ),
    ],
)
def test_aiokafkas_import_paths_give_the_group_modules_objects(
    aiokafka_path: str, module: str
) -> None:
    """``ferrokafka.coordinator...`` (aiokafka's paths) re-exports the very objects of
    ``ferrokafka.consumer.group...``: an ``isinstance`` or ``is`` check holds whichever path
    the application imported from."""
    shim = importlib.import_module(f"ferrokafka.{aiokafka_path}")
    home = importlib.import_module(f"ferrokafka.{module}")
    assert shim.__all__, aiokafka_path
    for name in shim.__all__:
        assert getattr(shim, name) is getattr(home, name), (aiokafka_path, name)
    assert set(shim.__all__) <= set(getattr(home, "__all__", shim.__all__))
    assert "aiokafka's import path" in (shim.__doc__ or "")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, NoGroupMember),
        ({"group_id": "g"}, ClassicMember),
        ({"group_id": "g", "group_protocol": "classic"}, ClassicMember),
        ({"group_id": "g", "group_protocol": "consumer"}, Kip848Member),
    ],
)
def test_the_configuration_chooses_the_member(
    options: dict[str, Any], expected: type[GroupMember]
) -> None:
    config = ConsumerConfig(**options)
    member = group_member(AIOKafkaClient(config), SubscriptionState(), config)
    assert type(member) is expected


async def test_the_classic_member_defaults_to_round_robin_and_instantiates_at_start() -> None:
    config = ConsumerConfig(group_id="g")
    member: Any = group_member(AIOKafkaClient(config), SubscriptionState(), config)
    assert member._assignors == []  # a user's assignor is made by start(), not the constructor
    await member.start()  # no subscription: nothing to join, nothing to send
    try:
        assert [type(a) for a in member._assignors] == [RoundRobinPartitionAssignor]
    finally:
        await member.close()

    chosen = ConsumerConfig(group_id="g", partition_assignment_strategy=[RangePartitionAssignor])
    member = group_member(AIOKafkaClient(chosen), SubscriptionState(), chosen)
    assert member._assignor_choices == [RangePartitionAssignor]


async def test_the_no_group_member_keeps_no_offsets() -> None:
    config = ConsumerConfig()
    subscription = SubscriptionState()
    member = group_member(AIOKafkaClient(config), subscription, config)
    subscription.assign_from_user([T0])
    await member.start()  # assign(): nothing to fetch or join
    assert member.assignment_ready.is_set() and not member.failed.is_set()
    member.polled()
    member.raise_if_failed()
    assert await member.committed_positions([T0]) == {}
    for check in (member.require_group, member.refuse_commit):
        with pytest.raises(Errors.IllegalOperation, match="Requires group_id"):
            check()
    with pytest.raises(Errors.IllegalOperation, match="Requires group_id"):
        await member.commit({})
    with pytest.raises(Errors.IllegalOperation, match="Requires group_id"):
        await member.fetch_committed_offsets([T0])
    await member.close()


async def test_without_a_group_a_subscription_takes_every_partition_and_commits_fail() -> None:
    async with GroupBroker() as broker:
        consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            "t", bootstrap_servers=broker.bootstrap, request_timeout_ms=5000
        )
        await consumer.start()
        try:
            assert isinstance(consumer._coordinator, NoGroupMember)
            assert consumer.assignment() == {T0, T1}
            with pytest.raises(Errors.IllegalOperation, match="Requires group_id"):
                await consumer.commit()
            # The group is asked for before the offsets are checked, as aiokafka does.
            with pytest.raises(Errors.IllegalOperation, match="Requires group_id"):
                await consumer.commit({T0: -5})
            with pytest.raises(Errors.IllegalOperation, match="Requires group_id"):
                await consumer.committed(T0)
            with pytest.raises(Errors.IllegalOperation, match="Requires group_id"):
                await consumer.seek_to_committed(T0)
            consumer.unsubscribe()
            assert consumer.assignment() == set()
            consumer.subscribe(["t"])
            assert consumer.assignment() == {T0, T1}
        finally:
            await consumer.stop()
        assert broker.keys() == []  # no group request at all


async def test_with_a_group_assign_mode_commits_as_generation_minus_one() -> None:
    async with GroupBroker() as broker:
        consumer: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(
            bootstrap_servers=broker.bootstrap,
            group_id="g",
            enable_auto_commit=False,
            request_timeout_ms=5000,
        )
        await consumer.start()
        try:
            consumer.assign([T0])
            await consumer.commit({T0: 7})
            assert await consumer.committed(T0) == 7
        finally:
            await consumer.stop()
        (commit,) = broker.sent(ApiKey.OFFSET_COMMIT)
        assert commit["generation_id_or_member_epoch"] == -1 and commit["member_id"] == ""
        assert ApiKey.JOIN_GROUP not in broker.keys()
