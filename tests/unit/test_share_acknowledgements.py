"""Share-group acknowledgements as they go on the wire: the fewest batches of consecutive
offsets, one type for a batch whose offsets share it, one per offset otherwise."""

from __future__ import annotations

import pytest
from ferrokafka.share import AcknowledgeType
from ferrokafka.share.acknowledgements import GAP, PartitionAcknowledgements

ACCEPT, RELEASE, REJECT, RENEW = (int(t) for t in AcknowledgeType)


def test_the_types_are_javas() -> None:
    assert [(t.name, t.value) for t in AcknowledgeType] == [
        ("ACCEPT", 1),
        ("RELEASE", 2),
        ("REJECT", 3),
        ("RENEW", 4),
    ]


def test_runs_of_consecutive_offsets_become_batches() -> None:
    acks = PartitionAcknowledgements()
    assert acks.batches() == [] and not acks
    acks.add_range(10, 14, ACCEPT)
    acks.add(12, RELEASE)  # the last word for an offset wins
    acks.add(15, GAP)
    acks.add(20, REJECT)
    acks.add_range(21, 22, REJECT)
    acks.add(7, ACCEPT)
    assert len(acks) == 10
    assert acks.batches() == [
        {"first_offset": 7, "last_offset": 7, "acknowledge_types": [ACCEPT]},
        {
            "first_offset": 10,
            "last_offset": 15,
            "acknowledge_types": [ACCEPT, ACCEPT, RELEASE, ACCEPT, ACCEPT, GAP],
        },
        {"first_offset": 20, "last_offset": 22, "acknowledge_types": [REJECT]},
    ]
    assert not acks.has_renewals()
    assert len(acks.take()) == 3 and not acks and acks.take() == []


def test_renewals_are_taken_apart_from_the_rest() -> None:
    acks = PartitionAcknowledgements()
    assert not acks.has_renewals()
    acks.add_range(0, 3, RENEW)
    acks.add(4, ACCEPT)
    acks.add(6, RENEW)
    assert acks.has_renewals()
    assert acks.take(renewals=True) == [
        {"first_offset": 0, "last_offset": 3, "acknowledge_types": [RENEW]},
        {"first_offset": 6, "last_offset": 6, "acknowledge_types": [RENEW]},
    ]
    assert not acks.has_renewals() and len(acks) == 1
    acks.add(5, RENEW)
    assert acks.take(renewals=False) == [
        {"first_offset": 4, "last_offset": 4, "acknowledge_types": [ACCEPT]}
    ]
    assert len(acks) == 1 and acks.has_renewals()


@pytest.mark.parametrize(("offset", "type_"), [(-1, ACCEPT), (0, 5), (0, -1)])
def test_bad_acknowledgements_raise(offset: int, type_: int) -> None:
    with pytest.raises(ValueError):
        PartitionAcknowledgements().add(offset, type_)


def test_an_empty_range_raises() -> None:
    with pytest.raises(ValueError, match="empty range"):
        PartitionAcknowledgements().add_range(5, 4, ACCEPT)
