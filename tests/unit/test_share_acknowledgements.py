"""Share-group acknowledgements as they go on the wire: the fewest batches of consecutive
offsets, one type for a batch whose offsets share it, one per offset otherwise."""

from __future__ import annotations

from typing import Any

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


def test_runs_and_single_offsets_agree_with_a_plain_model() -> None:
    """Random adds and ranges, RENEW among them: the batches say, offset by offset, the last
    word given for each, and renewals are taken apart exactly."""
    import random

    rng = random.Random(7)
    for _ in range(300):
        acks = PartitionAcknowledgements()
        model: dict[int, int] = {}
        for _ in range(rng.randrange(1, 12)):
            kind = rng.choice([GAP, ACCEPT, RELEASE, REJECT, RENEW])
            first = rng.randrange(0, 40)
            if rng.random() < 0.5:
                acks.add(first, kind)
                model[first] = kind
            else:
                last = first + rng.randrange(0, 90)
                acks.add_range(first, last, kind)
                model.update(dict.fromkeys(range(first, last + 1), kind))

        def expand(batches: list[Any]) -> dict[int, int]:
            out: dict[int, int] = {}
            for b in batches:
                span = range(b["first_offset"], b["last_offset"] + 1)
                types = b["acknowledge_types"]
                assert len(types) in (1, len(span)), b
                for i, offset in enumerate(span):
                    out[offset] = types[0] if len(types) == 1 else types[i]
            return out

        assert expand(acks.batches()) == model
        assert len(acks) == len(model)
        assert acks.has_renewals() == (RENEW in model.values())
        renewed = expand(acks.take(renewals=True))
        assert renewed == {o: t for o, t in model.items() if t == RENEW}
        assert not acks.has_renewals()
        assert expand(acks.take(renewals=False)) == {o: t for o, t in model.items() if t != RENEW}
        assert not acks


def test_records_accepted_one_by_one_stay_one_run() -> None:
    # getone() accepts the record before it at each call: each new offset continues the last
    # run (kept as one, not carved against every earlier one: a call costs the same at the
    # thousandth record as at the first), and one that overlaps earlier runs still replaces
    # what they said.
    acks = PartitionAcknowledgements()
    for offset in range(10_000):
        acks.add_range(offset, offset, AcknowledgeType.ACCEPT)
    acks.add_range(10_001, 10_001, AcknowledgeType.ACCEPT)
    assert len(acks._runs) == 2 and len(acks) == 10_001
    acks.add_range(5, 6, AcknowledgeType.RELEASE)
    said = {}
    for batch in acks.take():
        types = batch["acknowledge_types"]
        for i, offset in enumerate(range(batch["first_offset"], batch["last_offset"] + 1)):
            said[offset] = types[0] if len(types) == 1 else types[i]
    assert said == {o: 2 if o in (5, 6) else 1 for o in [*range(10_000), 10_001]}
    acks.add_range(3, 3, AcknowledgeType.ACCEPT)  # after a take, from anywhere again
    assert acks.take() == [{"first_offset": 3, "last_offset": 3, "acknowledge_types": [1]}]
