"""Where each assigned partition starts reading, and ListOffsets.

A partition without a position takes its group's committed offset; without one, it is reset by
``auto_offset_reset`` (earliest or latest, by ListOffsets to the partition's leader), or, with
``none``, fails with ``NoOffsetForPartitionError`` until the application seeks. The same
ListOffsets serves ``beginning_offsets``, ``end_offsets`` and ``offsets_for_times`` (with
read_committed, "latest" is the last stable offset).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..config import ConsumerConfig
from ..protocol import Api
from ..retry import polling
from ..structs import TopicPartition
from .subscription_state import OffsetResetStrategy, SubscriptionState, TopicPartitionState

if TYPE_CHECKING:
    from .._native import ListOffsetsPartition, ListOffsetsRequest

__all__ = ["READ_COMMITTED", "READ_UNCOMMITTED", "OffsetLookup", "Positions"]

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
"""The ``isolation_level`` codes of Fetch and ListOffsets requests."""

OffsetLookup = Callable[[list[TopicPartition]], Awaitable[dict[TopicPartition, int]]]
"""The group's committed offsets of some partitions (those without one are left out)."""


class Positions:
    """Positions and ListOffsets for one consumer."""

    def __init__(
        self,
        client: AIOKafkaClient,
        subscriptions: SubscriptionState,
        config: ConsumerConfig,
        *,
        committed_lookup: OffsetLookup | None,
        fail: Callable[[TopicPartitionState, Errors.KafkaError], None],
    ) -> None:
        self._client = client
        self._subs = subscriptions
        self._isolation = READ_COMMITTED if config.read_committed else READ_UNCOMMITTED
        self._request_timeout_ms = config.request_timeout_ms
        self._retry_backoff = config.retry_backoff_ms / 1000
        self._default_reset = OffsetResetStrategy.from_config(config.auto_offset_reset)
        self._committed = committed_lookup
        self._fail = fail

    async def update(self) -> list[TopicPartition]:
        """Give every assigned partition without a position one: its committed offset, else a
        reset by ``auto_offset_reset`` (ListOffsets). Returns the partitions reset."""
        missing = self._subs.missing_positions()
        if missing:
            committed: dict[TopicPartition, int] = {}
            if self._committed is not None:
                committed = await self._committed(missing)
            for tp in missing:
                if not self._subs.is_assigned(tp):
                    continue
                st = self._subs.state(tp)
                if st.position is not None or st.reset_strategy is not None:
                    continue
                offset = committed.get(tp, -1)
                if offset >= 0:
                    st.seek(offset)
                else:
                    st.request_reset(self._default_reset)
        resets = self._subs.awaiting_reset()
        if not resets:
            return []
        for tp, strategy in list(resets.items()):
            if strategy is OffsetResetStrategy.NONE:
                del resets[tp]
                st = self._subs.state(tp)
                if st.error is None:
                    self._fail(
                        st,
                        Errors.NoOffsetForPartitionError(
                            f"{tp} has no committed offset and auto_offset_reset is 'none'; "
                            "seek to a position first"
                        ),
                    )
        if not resets:
            return []
        found = await self.list_offsets({tp: int(s) for tp, s in resets.items()})
        moved = []
        for tp, (offset, _, epoch) in found.items():
            if self._subs.is_assigned(tp):
                st = self._subs.state(tp)
                # A reset asked for while this one was in flight (seek_to_beginning after a
                # cancelled seek_to_end, say) wins: its own lookup is next, this answer is stale.
                if st.reset_strategy is resets[tp] and offset >= 0:
                    st.seek(offset, epoch)
                    moved.append(tp)
        return moved

    async def list_offsets(
        self,
        timestamps: dict[TopicPartition, int],
        timeout: float | None = None,
    ) -> dict[TopicPartition, tuple[int, int | None, int]]:
        """ListOffsets for each partition (timestamp, or -2 earliest, -1 latest, -3 max
        timestamp) from its leader: ``{tp: (offset, timestamp, leader_epoch)}``; offset -1 when
        no record matches a timestamp. Retries retriable errors until ``timeout``
        (``request_timeout_ms``), then raises ``KafkaTimeoutError``."""
        remaining = dict(timestamps)
        result: dict[TopicPartition, tuple[int, int | None, int]] = {}
        last_error: BaseException | None = None
        unknown: list[TopicPartition] = []
        rounds = 0
        for topic in {tp.topic for tp in remaining}:
            if self._client.cluster.partitions_for_topic(topic) is None:
                self._client.add_topic(topic)

        async def one_round() -> bool:
            """Ask every leader for its partitions still remaining; True once none remain."""
            nonlocal last_error, unknown, rounds
            if rounds:
                if unknown:
                    last_error = Errors.UnknownTopicOrPartitionError(f"no leader for {unknown}")
                with contextlib.suppress(Errors.KafkaError):
                    await self._client.refresh_metadata()
            rounds += 1
            by_node: dict[int, dict[TopicPartition, int]] = {}
            unknown = []
            for tp, ts in remaining.items():
                leader = self._client.cluster.leader_for_partition(tp)
                if leader is None or leader < 0:
                    unknown.append(tp)
                else:
                    by_node.setdefault(leader, {})[tp] = ts
            refused = sorted(
                {
                    tp.topic
                    for tp in unknown
                    if self._client.cluster.topic_error(tp.topic)
                    == Errors.TopicAuthorizationFailedError.errno
                }
            )
            if refused:
                raise Errors.TopicAuthorizationFailedError(
                    f"not authorized to describe topics {refused} (ListOffsets)"
                )
            if by_node:
                results = await asyncio.gather(
                    *(self._list_offsets_node(n, parts) for n, parts in by_node.items()),
                    return_exceptions=True,
                )
                for outcome in results:
                    if isinstance(outcome, BaseException):
                        if not isinstance(outcome, Errors.KafkaError) or not outcome.retriable:
                            raise outcome
                        last_error = outcome
                        continue
                    done, error = outcome
                    result.update(done)
                    for tp in done:
                        remaining.pop(tp, None)
                    if error is not None:
                        last_error = error
            return not remaining

        await polling(
            one_round,
            timeout=self._request_timeout_ms / 1000 if timeout is None else timeout,
            interval=self._retry_backoff,
            timed_out=lambda: Errors.KafkaTimeoutError(
                f"ListOffsets for {sorted(remaining)} did not succeed in time"
                + (f" (last error: {last_error})" if last_error else "")
            ),
        )
        return result

    async def _list_offsets_node(
        self, node_id: int, parts: dict[TopicPartition, int]
    ) -> tuple[dict[TopicPartition, tuple[int, int | None, int]], Errors.KafkaError | None]:
        by_topic: dict[str, list[ListOffsetsPartition]] = {}
        for tp, ts in parts.items():
            by_topic.setdefault(tp.topic, []).append(
                {
                    "partition_index": tp.partition,
                    "current_leader_epoch": self._client.cluster.leader_epoch_for_partition(tp),
                    "timestamp": ts,
                }
            )
        body: ListOffsetsRequest = {
            "replica_id": -1,
            "isolation_level": self._isolation,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()],
            "timeout_ms": self._request_timeout_ms,
        }
        response = await self._client.send(node_id, Api.LIST_OFFSETS, body)
        done: dict[TopicPartition, tuple[int, int | None, int]] = {}
        error: Errors.KafkaError | None = None
        for t in response["topics"]:
            for p in t["partitions"]:
                tp = TopicPartition(t["name"], p["partition_index"])
                code = p["error_code"]
                if code == 0:
                    ts = p.get("timestamp", -1)
                    done[tp] = (p["offset"], None if ts < 0 else ts, p.get("leader_epoch", -1))
                    continue
                cls = Errors.for_code(code)
                exc = cls(f"ListOffsets for {tp} from node {node_id}")
                if not (cls.retriable or cls.invalid_metadata):
                    raise exc
                error = exc
        return done, error
