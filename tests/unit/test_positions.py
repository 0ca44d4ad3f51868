"""Position resets (``seek_to_beginning``/``seek_to_end`` and ``auto_offset_reset``): an answer to
a reset that was superseded while its ListOffsets was in flight is not applied."""

from __future__ import annotations

from typing import Any

from ferrokafka.config import ConsumerConfig
from ferrokafka.consumer.positions import Positions
from ferrokafka.consumer.subscription_state import OffsetResetStrategy, SubscriptionState
from ferrokafka.structs import TopicPartition

TP = TopicPartition("t", 0)


def _positions(subs: SubscriptionState) -> Positions:
    return Positions(
        None,  # type: ignore[arg-type]  (list_offsets is replaced: no request is sent)
        subs,
        ConsumerConfig(),
        committed_lookup=None,
        fail=lambda st, error: None,
    )


async def test_a_reset_superseded_while_its_lookup_is_in_flight_is_not_applied() -> None:
    subs = SubscriptionState()
    subs.assign_from_user([TP])
    subs.request_reset(TP, OffsetResetStrategy.LATEST)  # a seek_to_end, its caller cancelled
    positions = _positions(subs)

    async def answer_after_a_seek_to_beginning(wanted: dict[TopicPartition, int]) -> Any:
        assert wanted == {TP: int(OffsetResetStrategy.LATEST)}
        subs.request_reset(TP, OffsetResetStrategy.EARLIEST)  # asked while the lookup flies
        return {TP: (2000, -1, 0)}  # the end offset

    positions.list_offsets = answer_after_a_seek_to_beginning  # type: ignore[method-assign]
    assert await positions.update() == []
    st = subs.state(TP)
    assert st.position is None and st.reset_strategy is OffsetResetStrategy.EARLIEST

    async def earliest(wanted: dict[TopicPartition, int]) -> Any:
        assert wanted == {TP: int(OffsetResetStrategy.EARLIEST)}
        return {TP: (0, -1, 0)}

    positions.list_offsets = earliest  # type: ignore[method-assign]
    assert await positions.update() == [TP]
    assert st.position == 0 and st.reset_strategy is None


async def test_an_explicit_seek_while_the_lookup_is_in_flight_wins() -> None:
    subs = SubscriptionState()
    subs.assign_from_user([TP])
    subs.request_reset(TP, OffsetResetStrategy.EARLIEST)
    positions = _positions(subs)

    async def answer_after_a_seek(wanted: dict[TopicPartition, int]) -> Any:
        subs.seek(TP, 42)
        return {TP: (0, -1, 0)}

    positions.list_offsets = answer_after_a_seek  # type: ignore[method-assign]
    assert await positions.update() == []
    assert subs.state(TP).position == 42
