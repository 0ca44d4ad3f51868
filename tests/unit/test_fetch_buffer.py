"""The fetch buffer on its own: taking records in both forms moves the position, a budget is
honoured across responses, and data from a previous assignment or before a seek is never
handed out."""

from __future__ import annotations

from typing import Any

from ferrokafka.config import ConsumerConfig
from ferrokafka.consumer.fetch_buffer import Buffered, FetchBuffer
from ferrokafka.consumer.output_form import ARROW, RECORDS
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
    got = buffer.drain(None, 4, RECORDS)
    assert [r.offset for r in got[TP]] == [0, 1, 2, 3] and subs.state(TP).position == 4
    # The rest of the first response as Arrow, then the second as records.
    arrow = buffer.drain(None, None, ARROW)[TP]
    assert arrow.column("offset").to_pylist() == list(range(4, 10))
    assert subs.state(TP).position == 10 and events == ["taken"]
    assert [r.offset for r in buffer.drain(None, None, RECORDS)[TP]] == list(range(10, 20))
    assert buffer.queued(TP) == 0 and not buffer.has_buffered()


def test_paused_partitions_keep_their_data() -> None:
    subs, buffer, _ = setup()
    add(subs, buffer, 0, 5)
    subs.pause(TP)
    assert buffer.drain(None, None, RECORDS) == {} and buffer.queued(TP) == 1
    subs.resume(TP)
    assert len(buffer.drain(None, None, RECORDS)[TP]) == 5


def test_a_seek_or_a_new_assignment_makes_the_data_stale() -> None:
    subs, buffer, events = setup()
    add(subs, buffer, 0, 5)
    subs.state(TP).seek(2)  # inside the response: it is handed out from the position
    assert [r.offset for r in buffer.drain(None, None, RECORDS)[TP]] == [2, 3, 4]
    add(subs, buffer, 5, 5)
    subs.state(TP).seek(12)  # past it: stale, dropped rather than handed out
    assert buffer.drain(None, None, RECORDS) == {}
    assert ("drop", TP) in events and buffer.queued(TP) == 0
    add(subs, buffer, 3, 5)
    other = TopicPartition("t", 1)
    subs.assign_from_user([other])
    assert buffer.stale() == [TP]  # no longer assigned
    subs.assign_from_user([TP])  # assigned anew: a new state, not the one it was fetched for
    assert buffer.stale() == [TP]


def getone(buffer: FetchBuffer, wanted: set[TopicPartition] | None = None) -> Any:
    """What the consumer's getone does: the fast path, else a one-record drain."""
    record = buffer.take_one(wanted)
    if record is not None:
        return ("fast", record.topic, record.partition, record.offset)
    for records in buffer.drain(wanted, 1, RECORDS).values():
        r = records[0]
        return ("drain", r.topic, r.partition, r.offset)
    return None


def test_take_one_hands_out_what_a_one_record_drain_would() -> None:
    subs, buffer, events = setup()
    consumed: list[tuple[int, int]] = []
    buffer._on_consumed = lambda n, size: consumed.append((n, size))
    add(subs, buffer, 0, 3)
    add(subs, buffer, 3, 2)
    assert buffer.take_one(None) is None  # not decoded yet: drain decodes it
    got = [getone(buffer) for _ in range(6)]
    assert got == [
        ("drain", "t", 0, 0),
        ("fast", "t", 0, 1),
        ("drain", "t", 0, 2),  # a response's last record: drain moves past the response
        ("drain", "t", 0, 3),
        ("drain", "t", 0, 4),
        None,
    ]
    assert subs.state(TP).position == 5 and events.count("taken") == 2
    assert sum(n for n, _ in consumed) == 5


def two_partitions() -> tuple[SubscriptionState, FetchBuffer, TopicPartition]:
    """A buffer with one response of 4 records (offsets 0-3) for each of TP and a second
    partition, both at position 0; the second partition is returned too."""
    subs, buffer, _ = setup()
    other = TopicPartition("t", 1)
    subs.assign_from_user([TP, other])
    for tp in (TP, other):
        subs.state(tp).seek(0)
        buffer.add(Buffered(tp, subs.state(tp), 0, raw(0, 4), 4, -1, None))
    return subs, buffer, other


def test_take_one_goes_response_by_response_and_respects_the_wanted_set() -> None:
    subs, buffer, other = two_partitions()
    buffer.add(Buffered(TP, subs.state(TP), 4, raw(4, 4), 8, -1, None))
    pending = {tp: list(buffer._buffers[tp]) for tp in (TP, other)}
    order = []
    for _ in range(12):
        g = getone(buffer)
        order.append((g[0], g[2], g[3]))
        if g[2:] == (0, 3):
            # The whole response was handed out before another was decoded.
            assert pending[other][0].items is None and pending[TP][1].items is None
    # A response is handed out record by record (as aiokafka's getone does), its last record
    # by a drain; then partitions take turns response by response, and each partition's
    # records stay in order.
    assert order == [
        ("drain", 0, 0),
        ("fast", 0, 1),
        ("fast", 0, 2),
        ("drain", 0, 3),
        ("drain", 1, 0),
        ("fast", 1, 1),
        ("fast", 1, 2),
        ("drain", 1, 3),
        ("drain", 0, 4),
        ("fast", 0, 5),
        ("fast", 0, 6),
        ("drain", 0, 7),
    ]
    assert subs.state(TP).position == 8 and subs.state(other).position == 4
    assert buffer.queued(TP) == 0 and buffer.queued(other) == 0
    for tp in (TP, other):
        start = subs.state(tp).position
        buffer.add(Buffered(tp, subs.state(tp), start, raw(start, 4), start + 4, -1, None))
    assert [getone(buffer, {other})[2:] for _ in range(3)] == [(1, 4), (1, 5), (1, 6)]
    assert subs.state(TP).position == 8  # not wanted: untouched


def test_take_one_interleaved_with_getmany_goes_on_from_the_position() -> None:
    subs, buffer, other = two_partitions()
    assert getone(buffer)[2:] == (0, 0) and getone(buffer)[2:] == (0, 1)
    # A drain for many records ends the run and goes on where it stopped, then takes turns.
    got = buffer.drain(None, None, RECORDS)
    assert [r.offset for r in got[TP]] == [2, 3] and [r.offset for r in got[other]] == [0, 1, 2, 3]
    assert subs.state(TP).position == 4 and subs.state(other).position == 4


def test_take_one_never_hands_out_held_or_reassigned_data() -> None:
    subs, buffer, _ = setup()
    add(subs, buffer, 0, 5)
    assert getone(buffer) == ("drain", "t", 0, 0)
    subs.pause(TP)
    assert buffer.take_one(None) is None and getone(buffer) is None
    subs.resume(TP)
    assert getone(buffer)[1:] == ("t", 0, 1)  # a pause ends the run: drain goes on
    subs.assign_from_user([TopicPartition("t", 1)])
    subs.assign_from_user([TP])  # assigned anew: the decoded response is stale
    subs.state(TP).seek(2)
    assert buffer.take_one(None) is None
    assert getone(buffer) is None and buffer.queued(TP) == 0


def test_a_drain_that_does_not_advance_hands_out_the_same_records_again() -> None:
    subs, buffer, events = setup()
    consumed: list[tuple[int, int]] = []
    buffer._on_consumed = lambda n, size: consumed.append((n, size))
    add(subs, buffer, 0, 5)
    add(subs, buffer, 5, 5)
    peeked = buffer.drain(None, 3, RECORDS, advance=False)
    assert [r.offset for r in peeked[TP]] == [0, 1, 2]
    assert subs.state(TP).position == 0 and buffer.queued(TP) == 2
    # The list handed out is the application's: changing it changes nothing buffered.
    peeked[TP].clear()
    # One response per poll without advancing: the position is still at its first record.
    again = buffer.drain(None, None, RECORDS, advance=False)
    assert [r.offset for r in again[TP]] == [0, 1, 2, 3, 4]
    arrow = buffer.drain(None, None, ARROW, advance=False)[TP]
    assert arrow.column("offset").to_pylist() == [0, 1, 2, 3, 4]
    assert subs.state(TP).position == 0 and consumed == [] and events == []
    # Taking for good after peeking: from the same place, then on.
    assert [r.offset for r in buffer.drain(None, 2, RECORDS)[TP]] == [0, 1]
    peeked = buffer.drain(None, None, RECORDS, advance=False)
    assert [r.offset for r in peeked[TP]] == [2, 3, 4] and subs.state(TP).position == 2
    assert [r.offset for r in buffer.drain(None, None, RECORDS)[TP]] == [2, 3, 4]
    assert [r.offset for r in buffer.drain(None, None, RECORDS)[TP]] == list(range(5, 10))
    assert subs.state(TP).position == 10 and buffer.queued(TP) == 0
    assert sum(n for n, _ in consumed) == 10


def test_a_drain_that_does_not_advance_passes_responses_with_no_records() -> None:
    subs, _, _ = setup()
    buffer = FetchBuffer(
        subs, ConsumerConfig(isolation_level="read_committed"), on_drop=lambda tp: None
    )
    # An aborted transaction's records: nothing to hand out, so the position moves past them
    # (as kafka-python's does); nothing would ever move past them otherwise.
    aborted = encode_batch(
        [(1000 + i, None, b"x", []) for i in range(3)],
        transactional=True,
        producer_id=7,
        producer_epoch=0,
        base_sequence=0,
    )
    buffer.add(Buffered(TP, subs.state(TP), 0, aborted, 3, -1, [(7, 0)]))
    add(subs, buffer, 3, 2)
    peeked = buffer.drain(None, None, RECORDS, advance=False)
    assert [r.offset for r in peeked[TP]] == [3, 4]
    assert subs.state(TP).position == 3 and buffer.queued(TP) == 1


def test_a_drain_that_does_not_advance_keeps_the_partition_order() -> None:
    subs, buffer, _ = setup()
    other = TopicPartition("t", 1)
    subs.assign_from_user([TP, other])
    for tp in (TP, other):
        subs.state(tp).seek(0)
        buffer.add(Buffered(tp, subs.state(tp), 0, raw(0, 4), 4, -1, None))
    first = buffer.drain(None, 2, RECORDS, advance=False)
    assert list(first) == [TP] and [r.offset for r in first[TP]] == [0, 1]
    assert buffer.drain(None, 2, RECORDS, advance=False) == first
    assert list(buffer.drain(None, 2, RECORDS)) == [TP]
    assert list(buffer.drain(None, 2, RECORDS, advance=False)) == [other]
