"""SubscriptionState: subscribing by topics, by pattern and assigning
by hand are mutually exclusive (``IllegalStateError``, aiokafka's class, until
``unsubscribe()``), on the state object and through the consumer's API; what a subscription
change does to the assignment; the leader's group subscription."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from ferrokafka import errors as Errors
from ferrokafka.consumer.subscription_state import (
    OffsetResetStrategy,
    SubscriptionState,
    SubscriptionType,
    TopicPartitionState,
)

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)

MODES: dict[str, Callable[[SubscriptionState], None]] = {
    "topics": lambda s: s.subscribe(["t"]),
    "pattern": lambda s: s.subscribe_pattern("t.*"),
    "assign": lambda s: s.assign_from_user([T0]),
}
TYPES = {
    "topics": SubscriptionType.AUTO_TOPICS,
    "pattern": SubscriptionType.AUTO_PATTERN,
    "assign": SubscriptionType.USER_ASSIGNED,
}


@pytest.mark.parametrize("first", list(MODES))
@pytest.mark.parametrize("second", list(MODES))
def test_modes_are_mutually_exclusive(first: str, second: str) -> None:
    s = SubscriptionState()
    MODES[first](s)
    before = (s.subscription_type, s.subscription, s.assigned_partitions())
    if first == second:
        MODES[second](s)  # the same mode again replaces the subscription
        assert s.subscription_type is TYPES[first]
        return
    with pytest.raises(Errors.IllegalStateError, match="mutually exclusive"):
        MODES[second](s)
    assert (s.subscription_type, s.subscription, s.assigned_partitions()) == before
    s.unsubscribe()  # back to NONE: any mode is allowed
    assert s.subscription_type is SubscriptionType.NONE
    assert s.subscription == frozenset() and s.assigned_partitions() == set()
    MODES[second](s)
    assert s.subscription_type is TYPES[second]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("topics", "pattern"),
        ("topics", "assign"),
        ("pattern", "topics"),
        ("pattern", "assign"),
        ("assign", "topics"),
        ("assign", "pattern"),
    ],
)
def test_the_consumer_refuses_mixing(first: str, second: str) -> None:
    c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer(bootstrap_servers="localhost:1", group_id="g")
    calls: dict[str, Callable[[], None]] = {
        "topics": lambda: c.subscribe(["t"]),
        "pattern": lambda: c.subscribe(pattern="t.*"),
        "assign": lambda: c.assign([T0]),
    }
    calls[first]()
    with pytest.raises(Errors.IllegalStateError):
        calls[second]()
    c.unsubscribe()
    calls[second]()


def test_constructor_topics_then_assign_is_refused() -> None:
    c: AIOKafkaConsumer[Any, Any] = AIOKafkaConsumer("t", bootstrap_servers="localhost:1")
    assert c.subscription() == frozenset({"t"})
    with pytest.raises(Errors.IllegalStateError):
        c.assign([T0])


def test_subscription_change_drops_unsubscribed_partitions_for_revocation() -> None:
    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
            pass

        def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
            pass

    s = SubscriptionState()
    listener = Listener()
    s.subscribe(["t", "u"], listener)
    s.assign_from_subscribed({T0, T1, U0})
    assert not s.needs_assignment
    s.seek(T0, 7)
    s.subscribe(["u"], listener)
    assert s.assigned_partitions() == {U0}  # t's partitions are no longer fetched
    assert s.needs_assignment
    assert s.has_unsubscribed
    dropped, to_tell = s.take_unsubscribed()
    assert set(dropped) == {T0, T1} and dropped[T0].position == 7
    assert to_tell is listener
    assert s.take_unsubscribed() == ({}, listener) and not s.has_unsubscribed
    # unsubscribe() hands over the rest, with the listener of the subscription it ends.
    s.unsubscribe()
    dropped, to_tell = s.take_unsubscribed()
    assert set(dropped) == {U0} and to_tell is listener
    # A manual assignment is not the group's: nothing to revoke.
    s.assign_from_user([T0])
    s.unsubscribe()
    assert s.take_unsubscribed() == ({}, None)


def test_group_assignment_must_be_subscribed() -> None:
    s = SubscriptionState()
    s.subscribe(["t"])
    with pytest.raises(Errors.IllegalStateError, match="not subscribed"):
        s.assign_from_subscribed({U0})
    s.unsubscribe()
    s.assign_from_user([T0])
    with pytest.raises(Errors.IllegalStateError):
        s.assign_from_subscribed({T0})


def test_group_subscription_on_the_leader_and_pattern_matching() -> None:
    s = SubscriptionState()
    s.subscribe(["t"])
    assert s.group_subscription == frozenset({"t"})
    s.set_group_subscription({"u", "v"})  # the leader: every member's topics
    assert s.group_subscription == frozenset({"t", "u", "v"})
    assert s.subscription == frozenset({"t"})
    s.unsubscribe()
    s.subscribe_pattern(re.compile("t.*"))
    assert s.match_topics(["t1", "u", "t2"])  # changed: a rebalance is needed
    assert s.subscription == frozenset({"t1", "t2"})
    assert not s.match_topics(["t2", "t1", "x"])  # unchanged


def test_every_subscribe_call_is_counted_the_same_topics_again_included() -> None:
    # A group member rejoins after each call, as aiokafka's does: a new listener then hears
    # of the assignment. A pattern's new matches are not calls.
    s = SubscriptionState()
    assert s.subscribe_count == 0
    s.subscribe(["t"])
    s.subscribe(["t"])
    assert s.subscribe_count == 2 and s.subscription == frozenset({"t"})
    s.unsubscribe()
    s.subscribe_pattern("t.*")
    assert s.subscribe_count == 3
    assert s.match_topics(["t1"])
    assert s.subscribe_count == 3


def test_a_partition_state_owns_its_position_and_fetch_position() -> None:
    st = TopicPartitionState()
    st.seek(10, epoch=3)
    assert (st.position, st.position_epoch, st.fetch_position) == (10, 3, None)
    assert st.next_fetch(buffered=False) == (10, 3), "nothing fetched: from the position"
    st.fetched((25, 4))
    assert st.next_fetch(buffered=True) == (25, 4), "past what is buffered"
    assert st.next_fetch(buffered=False) == (10, 3), "nothing buffered any more"
    st.fetched((25, 4))
    st.consumed_through(14)
    assert (st.position, st.position_epoch) == (15, 3)
    # The whole response: past its control batches and aborted data (end beyond the last
    # record), or past its last record when that is later than the end given.
    assert st.consumed_response(25, 4, 20) == 25 and st.position_epoch == 4
    assert st.consumed_response(25, 5, 30) == 31
    assert st.consumed_response(40, 6, None) == 40
    assert st.fetch_position == (25, 4), "consuming does not move where fetching goes on"
    st.fetched_data_dropped()
    assert st.fetch_position is None and st.position == 40
    st.fetched((50, 6))
    st.request_reset(OffsetResetStrategy.EARLIEST)
    assert (st.position, st.position_epoch, st.fetch_position) == (None, -1, None)
    st.fetched((50, 6))
    st.seek(5)
    assert st.fetch_position is None and st.next_fetch(buffered=True) == (5, -1)
