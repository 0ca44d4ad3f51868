"""The share consumer's bookkeeping without a broker: what it holds and owes (the ledger), share
session epochs and partition changes, a fetched partition handed out in pieces with delivery
counts and gaps, how much a fetch asks for, and its options checked."""

from __future__ import annotations

from typing import Any

import pytest
from ferrokafka import AIOKafkaShareConsumer
from ferrokafka import errors as Errors
from ferrokafka.records import encode_batch
from ferrokafka.share import AcknowledgeType
from ferrokafka.share.acknowledgements import GAP
from ferrokafka.share.fetched import FetchedSharePartition
from ferrokafka.share.fetcher import FetchSize
from ferrokafka.share.ledger import AckLedger
from ferrokafka.share.session import ShareSession
from ferrokafka.structs import ConsumerRecord, TopicPartition

TP = TopicPartition("t", 0)
ACCEPT, RELEASE, REJECT, RENEW = (int(t) for t in AcknowledgeType)


def _batch(first: int, last: int, types: list[int]) -> dict[str, Any]:
    return {"first_offset": first, "last_offset": last, "acknowledge_types": types}


def test_explicit_mode_holds_each_record_until_it_is_answered_for() -> None:
    ledger = AckLedger(explicit=True)
    ledger.delivered(TP, 1, [(5, 7)])
    assert ledger.unanswered() == 3
    ledger.acknowledge(TP, 5, RELEASE)
    ledger.acknowledge(TP, 6, RENEW)  # renewed: still held, but answered for
    assert ledger.unanswered() == 1
    with pytest.raises(Errors.IllegalStateError, match="not held"):
        ledger.acknowledge(TP, 5, ACCEPT)
    with pytest.raises(Errors.IllegalStateError, match="offset 9"):
        ledger.acknowledge(TP, 9, ACCEPT)
    assert ledger.has_renewals(1)
    ledger.acknowledge(TP, 6, ACCEPT)  # answered for again: the last word is sent
    assert not ledger.has_renewals(1)
    ledger.acknowledge(TP, 7, REJECT)
    assert ledger.unanswered() == 0
    assert ledger.pending_nodes() == [1]
    assert ledger.take(1, renewals=True) == {}
    assert ledger.take(1, renewals=False) == {TP: [_batch(5, 7, [RELEASE, ACCEPT, REJECT])]}
    assert not ledger.has_pending()


def test_implicit_mode_accepts_the_last_poll_as_runs() -> None:
    ledger = AckLedger(explicit=False)
    other = TopicPartition("t", 1)
    ledger.delivered(TP, 1, [(0, 0), (3, 1000)])
    ledger.delivered(other, 2, [(0, 0)])
    ledger.gaps(TP, 1, [(1, 2)])
    assert ledger.unanswered() == 1000
    ledger.accept_unanswered()
    assert ledger.unanswered() == 0
    assert sorted(ledger.pending_nodes()) == [1, 2]
    assert ledger.take(1, renewals=False, only=[other]) == {}
    assert ledger.take(1, renewals=False, only=[TP]) == {
        TP: [_batch(0, 2, [ACCEPT, GAP, GAP]), _batch(3, 1000, [ACCEPT])]
    }
    ledger.release_unhanded(other, 2, [(1, 2)])
    assert ledger.take(2, renewals=False) == {other: [_batch(0, 2, [ACCEPT, RELEASE, RELEASE])]}


def test_share_session_epochs_and_changes() -> None:
    session = ShareSession(1)
    a, b, c = (TopicPartition("t", p) for p in range(3))
    assert not session.is_open and session.epoch == 0
    assert session.changes({a, b}) == ({a, b}, set())  # a full request opens it
    session.answered({a, b}, set())
    assert session.is_open and session.epoch == 1
    assert session.changes({b, c}) == ({c}, {a})  # then only what changed
    session.answered({c}, {a})
    assert session.partitions == {b, c} and session.epoch == 2
    session.epoch = 2**31 - 1
    session.advance()
    assert session.epoch == 1  # the epoch after the largest is 1, never 0
    session.reset()
    assert not session.is_open and session.partitions == set()


def _fetched(raw: bytes, acquired: list[tuple[int, int, int]]) -> FetchedSharePartition:
    return FetchedSharePartition(
        TP,
        1,
        raw,
        [{"first_offset": f, "last_offset": last, "delivery_count": n} for f, last, n in acquired],
        {"check_crcs": True, "key_deserializer": None, "value_deserializer": None},
    )


def test_a_fetched_partition_hands_out_its_acquired_records_in_pieces() -> None:
    raw = encode_batch([(1, None, b"v%d" % i, []) for i in range(10)], base_offset=100)
    # 100-101 are another member's; 102-104 delivered once, 105-107 a third time; the
    # acquired range runs to 109 but the batch ends at 109 too; 108-109 not acquired.
    fetched = _fetched(raw, [(102, 104, 1), (105, 107, 3)])
    records, runs, gaps = fetched.take_records(4)
    assert [(r.offset, r.delivery_count) for r in records] == [
        (102, 1),
        (103, 1),
        (104, 1),
        (105, 3),
    ]
    assert runs == [(102, 105)] and gaps == [] and fetched
    assert fetched.unhanded() == [(106, 107)]
    records, runs, gaps = fetched.take_records(10)
    assert [(r.offset, r.delivery_count) for r in records] == [(106, 3), (107, 3)]
    assert runs == [(106, 107)]
    assert not fetched and fetched.unhanded() == []


def test_offsets_without_records_are_gaps_reported_once() -> None:
    raw = encode_batch([(1, None, b"v", [])], base_offset=3)
    fetched = _fetched(raw, [(0, 5, 1)])
    records, runs, gaps = fetched.take_records(1)
    assert [r.offset for r in records] == [3] and runs == [(3, 3)]
    assert gaps == [(0, 2), (4, 5)]
    assert not fetched and fetched.unhanded() == []
    # Not handed out yet when closing: released, gaps left out once known.
    raw = encode_batch([(1, None, b"v", []), (1, None, b"w", [])], base_offset=1)
    fetched = _fetched(raw, [(0, 3, 1)])
    assert fetched.unhanded() == [(0, 3)]
    records, runs, gaps = fetched.take_records(1)
    assert [r.offset for r in records] == [1] and gaps == [(0, 0), (3, 3)]
    assert fetched.unhanded() == [(2, 2)]
    assert fetched.take_records(5)[2] == []  # gaps are reported once


def test_a_record_its_deserializer_refuses_stops_the_records_before_it() -> None:
    raw = encode_batch([(1, None, b"v%d" % i, []) for i in range(10)], base_offset=100)

    def value_deserializer(value: bytes) -> str:
        if value in (b"v4", b"v5"):
            raise ValueError(value)
        return value.decode()

    fetched = FetchedSharePartition(
        TP,
        1,
        raw,
        [{"first_offset": 100, "last_offset": 111, "delivery_count": 2}],
        {"check_crcs": True, "key_deserializer": None, "value_deserializer": value_deserializer},
    )
    records, runs, gaps = fetched.take_records(500)
    # Nothing after the refused record is handed out, or taken for a gap.
    assert [r.value for r in records] == ["v0", "v1", "v2", "v3"] and runs == [(100, 103)]
    assert gaps == [] and fetched.unhanded() == [(104, 111)]
    offset, error = fetched.refused() or (None, None)
    assert offset == 104 and isinstance(error, ValueError)
    assert (error.topic, error.partition, error.offset) == (TP.topic, TP.partition, 104)  # type: ignore[attr-defined]
    assert fetched.take_records(500) == ([], [], [])  # it stays at the refused record
    arrow, _, gaps = fetched.take_arrow(1)  # Arrow hands it out as it is: no deserializer
    assert arrow.column("offset").to_pylist() == [104] and fetched.refused() is None
    assert gaps == [(110, 111)]  # its decode went to the end (reported once)
    assert fetched.take_records(500) == ([], [], []) and fetched.refused() is not None
    fetched.skip_refused()  # 105, refused too
    records, runs, gaps = fetched.take_records(500)
    assert [(r.offset, r.delivery_count) for r in records] == [(o, 2) for o in range(106, 110)]
    assert runs == [(106, 109)] and gaps == [] and not fetched


def test_a_fetched_partition_as_arrow_then_as_records() -> None:
    pa = pytest.importorskip("pyarrow")
    raw = encode_batch([(1, None, b"v%d" % i, []) for i in range(6)], base_offset=0)
    fetched = _fetched(raw, [(1, 4, 2)])
    batch, runs, gaps = fetched.take_arrow(2)
    assert isinstance(batch, pa.RecordBatch) and gaps == [] and runs == [(1, 2)]
    assert batch.column("offset").to_pylist() == [1, 2]
    assert batch.column("deliveryCount").to_pylist() == [2, 2]
    assert batch.schema.field("deliveryCount").type == pa.int16()
    records, runs, _ = fetched.take_records(10)
    assert [(r.offset, r.delivery_count) for r in records] == [(3, 2), (4, 2)]
    assert runs == [(3, 4)]
    assert fetched.take_arrow(5) == (None, [], [])
    # Two acquired ranges with different counts in one Arrow batch.
    fetched = _fetched(raw, [(0, 1, 1), (2, 5, 4)])
    batch, runs, _ = fetched.take_arrow(10)
    assert batch.column("deliveryCount").to_pylist() == [1, 1, 4, 4, 4, 4]
    assert runs == [(0, 5)] and not fetched
    # Offsets without a row (a control batch at 3, nothing at 5): gaps, found in Rust.
    raw = encode_batch([(1, None, b"v", [])] * 3, base_offset=0) + encode_batch(
        [(1, None, b"w", [])], base_offset=4
    )
    fetched = _fetched(raw, [(0, 5, 2)])
    batch, runs, gaps = fetched.take_arrow(10)
    assert batch.column("offset").to_pylist() == [0, 1, 2, 4]
    assert batch.column("deliveryCount").to_pylist() == [2, 2, 2, 2]
    assert runs == [(0, 2), (4, 4)] and gaps == [(3, 3), (5, 5)]


def test_a_poll_finishes_the_record_batch_its_limit_falls_in() -> None:
    """As Java's share consumer: ``max_poll_records`` records, then the rest of the batch the
    last of them is in (acknowledgements then cover whole batches); a bound given per call
    (``whole_batch`` off) is kept."""
    raw = encode_batch([(1, None, b"a", [])] * 5, base_offset=0) + encode_batch(
        [(1, None, b"b", [])] * 5, base_offset=5
    )
    fetched = _fetched(raw, [(0, 9, 1)])
    records, runs, _ = fetched.take_records(3, whole_batch=True)
    assert [r.offset for r in records] == [0, 1, 2, 3, 4] and runs == [(0, 4)]
    records, runs, _ = fetched.take_records(5, whole_batch=True)  # ends on a batch's end
    assert [r.offset for r in records] == [5, 6, 7, 8, 9] and not fetched
    fetched = _fetched(raw, [(0, 9, 1)])
    records, _, _ = fetched.take_records(3)
    assert [r.offset for r in records] == [0, 1, 2]
    # Only acquired records are handed out: 4 and 5-6 are another member's.
    fetched = _fetched(raw, [(1, 3, 1), (7, 9, 2)])
    records, _, _ = fetched.take_records(1, whole_batch=True)
    assert [r.offset for r in records] == [1, 2, 3]
    records, runs, _ = fetched.take_records(1, whole_batch=True)
    assert [(r.offset, r.delivery_count) for r in records] == [(7, 2), (8, 2), (9, 2)]
    assert runs == [(7, 9)]


def test_an_arrow_poll_finishes_the_record_batch_its_limit_falls_in() -> None:
    pytest.importorskip("pyarrow")
    raw = encode_batch([(1, None, b"a", [])] * 5, base_offset=0) + encode_batch(
        [(1, None, b"b", [])] * 5, base_offset=5
    )
    fetched = _fetched(raw, [(1, 3, 1), (4, 4, 3), (6, 8, 2)])
    batch, runs, _ = fetched.take_arrow(2, whole_batch=True)
    assert batch.column("offset").to_pylist() == [1, 2, 3, 4]
    assert batch.column("deliveryCount").to_pylist() == [1, 1, 1, 3]
    assert runs == [(1, 4)]
    batch, runs, _ = fetched.take_arrow(1, whole_batch=True)
    assert batch.column("offset").to_pylist() == [6, 7, 8] and runs == [(6, 8)]
    assert not fetched
    fetched = _fetched(raw, [(0, 9, 1)])
    batch, _, _ = fetched.take_arrow(6)
    assert batch.column("offset").to_pylist() == [0, 1, 2, 3, 4, 5]


def test_delivery_count_on_records() -> None:
    record: ConsumerRecord[bytes, bytes] = ConsumerRecord(
        "t", 0, 1, 2, 0, None, b"v", None, -1, 1, ()
    )
    assert record.delivery_count is None  # read outside a share group
    record.delivery_count = 3
    assert record.delivery_count == 3
    assert (
        ConsumerRecord(
            "t", 0, 1, 2, 0, None, b"v", None, -1, 1, (), delivery_count=2
        ).delivery_count
        == 2
    )
    with pytest.raises(ValueError, match="at least 1"):
        record.delivery_count = 0
    # Not one of aiokafka's fields: equality and the tuple form stay aiokafka's.
    assert len(record._astuple()) == 11


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({}, "group_id must name the share group"),
        ({"group_id": "g", "share_acknowledgement_mode": "auto"}, "share_acknowledgement_mode"),
        ({"group_id": "g", "share_acquire_mode": "all"}, "share_acquire_mode"),
        ({"group_id": "g", "max_poll_records": 0}, "max_poll_records"),
        (
            {"group_id": "g", "acknowledgement_commit_callback": 5},
            "acknowledgement_commit_callback",
        ),
    ],
)
def test_bad_options_raise_naming_the_option(options: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        AIOKafkaShareConsumer("t", **options)


async def test_calls_before_start_or_subscribe_say_what_is_missing() -> None:
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(group_id="g")
    with pytest.raises(Errors.IllegalStateError, match="not started"):
        await consumer.getmany()
    with pytest.raises(TypeError, match="list of topic names"):
        consumer.subscribe("t")  # type: ignore[arg-type]
    consumer.subscribe(["t"])
    assert consumer.subscription() == frozenset({"t"})
    with pytest.raises(ValueError, match="acknowledge type"):
        consumer.acknowledge_offsets(TP, [1], 9)
    await consumer.stop()
    assert await consumer.getmany() == {}


def test_fetch_size_grows_while_polls_starve_and_shrinks_when_records_wait() -> None:
    size = FetchSize(500, fixed=False)
    size.starved()  # no full fetch yet: no reason to ask for more
    assert size.records == 500
    seen = []
    for _ in range(8):
        size.answered(size.records)  # full
        size.starved()
        seen.append(size.records)
    assert seen == [1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000]  # 16 times, no more
    for _ in range(6):
        size.stale()
    assert size.records == 500  # never below max_poll_records
    size.answered(100)  # the broker had fewer: a bigger ask would not have brought more
    size.starved()
    assert size.records == 500
    fixed = FetchSize(500, fixed=True)
    fixed.answered(500)
    fixed.starved()
    assert fixed.records == 500  # share_acquire_mode="record_limit"
