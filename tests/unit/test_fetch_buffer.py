"""The fetch buffer on its own: taking records in both forms moves the position, a budget is
honoured across responses, and data from a previous assignment or before a seek is never
handed out."""

from __future__ import annotations

from typing import Any

from ferrokafka.config import ConsumerConfig
from ferrokafka.consumer.fetch_buffer import Buffered, FetchBuffer
from ferrokafka.consumer.subscription_state import SubscriptionState
from ferrokafka.records import encode_batch
from ferrokafka.structs import TopicPartition

TP = TopicPartition("t", 0)


def raw(base: int, count: int) -> bytes:
    return encode_batch(
        [(1000 + i, None, b"v%d" % i, []) for i in range(base, base + count)], base_offset=base
    )


def setup() -> tuple[SubscriptionState, FetchBuffer, list[Any]]:
    subs = SubscriptionState()
    subs.assign_from_user([TP])
    subs.state(TP).seek(0)
    events: list[Any] = []
    buffer = FetchBuffer(
        subs,
        ConsumerConfig(),
        on_drop=lambda tp: events.append(("drop", tp)),
        on_taken=lambda: events.append("taken"),
    )
    return subs, buffer, events


def add(subs: SubscriptionState, buffer: FetchBuffer, base: int, count: int) -> None:
    buffer.add(Buffered(TP, subs.state(TP), base, raw(base, count), base + count, -1, None))


def test_records_and_arrow_take_in_order_and_move_the_position() -> None:
    subs, buffer, events = setup()
    add(subs, buffer, 0, 10)
    add(subs, buffer, 10, 10)
    assert buffer.queued(TP) == 2 and buffer.has_buffered()
    got = buffer.drain(None, 4, "records")
    assert [r.offset for r in got[TP]] == [0, 1, 2, 3] and subs.state(TP).position == 4
    # The rest of the first response as Arrow, then the second as records.
    arrow = buffer.drain(None, None, "arrow")[TP]
    assert arrow.column("offset").to_pylist() == list(range(4, 10))
    assert subs.state(TP).position == 10 and events == ["taken"]
    assert [r.offset for r in buffer.drain(None, None, "records")[TP]] == list(range(10, 20))
    assert buffer.queued(TP) == 0 and not buffer.has_buffered()


def test_paused_partitions_keep_their_data() -> None:
    subs, buffer, _ = setup()
    add(subs, buffer, 0, 5)
    subs.pause(TP)
    assert buffer.drain(None, None, "records") == {} and buffer.queued(TP) == 1
    subs.resume(TP)
    assert len(buffer.drain(None, None, "records")[TP]) == 5


def test_a_seek_or_a_new_assignment_makes_the_data_stale() -> None:
    subs, buffer, events = setup()
    add(subs, buffer, 0, 5)
    subs.state(TP).seek(2)  # inside the response: it is handed out from the position
    assert [r.offset for r in buffer.drain(None, None, "records")[TP]] == [2, 3, 4]
    add(subs, buffer, 5, 5)
    subs.state(TP).seek(12)  # past it: stale, dropped rather than handed out
    assert buffer.drain(None, None, "records") == {}
    assert ("drop", TP) in events and buffer.queued(TP) == 0
    add(subs, buffer, 3, 5)
    other = TopicPartition("t", 1)
    subs.assign_from_user([other])
    assert buffer.stale() == [TP]  # no longer assigned
    subs.assign_from_user([TP])  # assigned anew: a new state, not the one it was fetched for
    assert buffer.stale() == [TP]
