"""Talking to a group's coordinator: finding it (FindCoordinator, then a connection of its own),
committing offsets and fetching committed ones.

``OffsetsCoordinator`` needs no membership: with generation -1 and an empty member id, the
broker accepts OffsetCommit from any client (what ``commit()`` with explicit offsets does in
``assign()`` mode). Group membership builds on it.

Commits may run concurrently (``commit()`` tasks the application does not await, auto-commit,
the commit before a revocation). Each gets a sequence number per partition, and a commit retried
after a retriable error resends only the partitions no later commit has covered since: an older
offset never lands after a newer one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ... import errors as Errors
from ...client import AIOKafkaClient
from ...metrics import Sensor
from ...protocol import Api
from ...retry import retrying
from ...structs import OffsetAndMetadata, TopicPartition
from ...waits import SharedCall

if TYPE_CHECKING:
    from ..._native import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetFetchRequest,
        OffsetFetchRequestTopics,
    )

__all__ = ["COORDINATOR_MOVED", "OffsetsCoordinator", "commit_failed"]

log = logging.getLogger(__name__)

# The newest versions with topic names (v10 addresses topics by id); v9 is what groups of the
# KIP-848 consumer protocol need.
OFFSET_COMMIT_MAX_VERSION = 9
OFFSET_FETCH_MAX_VERSION = 9

COORDINATOR_MOVED = (
    Errors.NotCoordinatorForGroupError,
    Errors.GroupCoordinatorNotAvailableError,
)
"""Errors saying the group lives on another broker now (or is being moved): find it again."""

# The group has moved on without this member: its commit is refused for good.
_GENERATION_ERRORS = (
    Errors.UnknownMemberIdError,
    Errors.IllegalGenerationError,
    Errors.RebalanceInProgressError,
    Errors.FencedInstanceIdError,
    Errors.FencedMemberEpochError,
)

T = TypeVar("T")
_Req = TypeVar("_Req", bound=Mapping[str, Any])
_Resp = TypeVar("_Resp")


def _retriable(exc: Errors.KafkaError) -> bool:
    return exc.retriable or isinstance(exc, Errors.KafkaConnectionError)


class OffsetsCoordinator:
    """The group coordinator of ``group_id``, for offset commits and fetches."""

    def __init__(
        self,
        client: AIOKafkaClient,
        group_id: str,
        *,
        retry_backoff_ms: int = 100,
        request_timeout_ms: int = 40000,
        group_instance_id: str | None = None,
    ) -> None:
        self._client = client
        self.group_id = group_id
        self.group_instance_id = group_instance_id
        self._retry_backoff = retry_backoff_ms / 1000
        self._request_timeout = request_timeout_ms / 1000
        self.coordinator_id: int | None = None
        self.generation = -1
        self.member_id = ""
        self._lookup = SharedCall(self._find_coordinator, stopped=self._lookup_stopped)
        self._commit_sequence = 0
        self._latest_commit: dict[TopicPartition, int] = {}
        """Per partition, the sequence number of the last commit that included it."""
        self.commit_sensor: Sensor | None = None
        """Records each commit's latency (retries included), when a consumer has metrics."""
        self._announced_coordinator: int | None = None

    # -- the coordinator ---------------------------------------------------------------------

    def coordinator_dead(self, reason: object) -> None:
        if self.coordinator_id is not None:
            log.info(
                "group %s: coordinator %s marked dead (%s)",
                self.group_id,
                self.coordinator_id,
                reason,
            )
        self.coordinator_id = None

    async def ensure_coordinator(self) -> int:
        """The coordinator's broker id, found with FindCoordinator (least-loaded node) when not
        known; concurrent callers share one lookup."""
        if self.coordinator_id is not None:
            return self.coordinator_id
        return await self._lookup()

    def _lookup_stopped(self) -> Errors.KafkaError:
        return Errors.IllegalStateError(f"group {self.group_id!r}: the consumer was closed")

    async def stop_lookup(self) -> None:
        """End a coordinator lookup in flight (it runs in a task of its own, shared by its
        callers): the consumer is closing."""
        await self._lookup.stop()

    async def _retrying(self, attempt: Callable[[], Awaitable[T]], failed: str) -> T:
        """``attempt`` retried on retriable errors and lost connections (a coordinator moved
        or loading) until ``request_timeout_ms``, then ``KafkaTimeoutError(failed: error)``."""
        return await retrying(
            attempt,
            timeout=self._request_timeout,
            backoff=self._retry_backoff,
            retriable=_retriable,
            timed_out=lambda exc: Errors.KafkaTimeoutError(f"{failed}: {exc}"),
        )

    async def _find_coordinator(self) -> int:
        node = await self._retrying(
            self._find_coordinator_once, f"no coordinator found for group {self.group_id!r}"
        )
        self.coordinator_id = node
        if node != self._announced_coordinator:
            broker = self._client.cluster.broker_metadata(node)
            log.info(
                "group %s: coordinator is node %s%s%s",
                self.group_id,
                node,
                "" if broker is None else f" at {broker.host}:{broker.port}",
                ""
                if self._announced_coordinator is None
                else f" (was node {self._announced_coordinator})",
            )
            self._announced_coordinator = node
        return node

    async def _find_coordinator_once(self) -> int:
        return await self._client.find_coordinator(self.group_id)

    async def coordinator_request(
        self,
        api: Api[_Req, _Resp],
        body: _Req | Callable[[int], _Req],
        *,
        max_version: int | None = None,
        timeout_ms: int | None = None,
    ) -> tuple[_Resp, int]:
        """Send a request to the coordinator (found first if not known) and return the
        response with the version it was sent at: the highest both sides speak, at most
        ``max_version``; ``body`` may be a function of that version. A lost connection or a
        timeout marks the coordinator dead (the next request finds it again) and is raised."""
        broker = await self.ensure_coordinator()
        try:
            conn = await self._client.coordinator_connection(broker)
            version = conn.version_for(api.key)
            if max_version is not None:
                version = min(version, max_version)
            payload = body(version) if callable(body) else body
            response = await conn.send(api, payload, version=version, timeout_ms=timeout_ms)
        except (Errors.KafkaConnectionError, Errors.RequestTimedOutError) as exc:
            self.coordinator_dead(exc)
            raise
        return response, version

    # -- offsets -----------------------------------------------------------------------------

    def begin_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> int:
        """A new commit of ``offsets``: its sequence number, which makes every earlier commit
        of these partitions stale."""
        self._commit_sequence += 1
        for tp in offsets:
            self._latest_commit[tp] = self._commit_sequence
        return self._commit_sequence

    async def commit_offsets(
        self,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        *,
        leader_epochs: dict[TopicPartition, int] | None = None,
        sequence: int | None = None,
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """OffsetCommit, retried on retriable errors (coordinator moved or loading, a lost
        connection) until ``request_timeout_ms``. Raises ``CommitFailedError`` when the group
        has moved on without this member, other errors as their classes.

        ``sequence`` (from ``begin_commit``; a new one by default) orders commits: every
        attempt sends only the partitions no later commit has included, so a stale retry never
        overwrites a newer offset. Returns what was committed."""
        if sequence is None:
            sequence = self.begin_commit(offsets)
        tries = 0

        async def attempt() -> dict[TopicPartition, OffsetAndMetadata]:
            nonlocal tries
            if tries:
                log.info("group %s: retrying a commit", self.group_id)
            tries += 1
            current = {
                tp: om for tp, om in offsets.items() if self._latest_commit.get(tp) == sequence
            }
            if current:
                await self._commit_once(current, leader_epochs or {})
            return current

        started = time.monotonic()
        committed = await self._retrying(
            attempt, f"committing offsets for group {self.group_id!r} failed"
        )
        if self.commit_sensor is not None:
            now = time.monotonic()
            self.commit_sensor.record((now - started) * 1000, now)
        return committed

    async def _commit_once(
        self,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        leader_epochs: dict[TopicPartition, int],
    ) -> None:
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
        for tp, om in sorted(offsets.items()):
            by_topic.setdefault(tp.topic, []).append(
                {
                    "partition_index": tp.partition,
                    "committed_offset": om.offset,
                    "committed_leader_epoch": leader_epochs.get(tp, -1),
                    "committed_metadata": om.metadata,
                }
            )
        body: OffsetCommitRequest = {
            "group_id": self.group_id,
            "generation_id_or_member_epoch": self.generation,
            "member_id": self.member_id,
            "group_instance_id": self.group_instance_id,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()],
        }
        response, _ = await self.coordinator_request(
            Api.OFFSET_COMMIT, body, max_version=OFFSET_COMMIT_MAX_VERSION
        )
        errors: dict[TopicPartition, int] = {}
        for t in response["topics"]:
            for p in t["partitions"]:
                if p["error_code"]:
                    errors[TopicPartition(t["name"], p["partition_index"])] = p["error_code"]
        if not errors:
            return
        tp, code = next(iter(sorted(errors.items())))
        cls = Errors.for_code(code)
        if issubclass(cls, COORDINATOR_MOVED):
            self.coordinator_dead(cls.__name__)
        if cls in _GENERATION_ERRORS:
            raise commit_failed(self.group_id, cls.__name__)
        raise cls(
            f"OffsetCommit for group {self.group_id!r}: {len(errors)} partition(s) failed, "
            f"first {tp}"
        )

    async def fetch_committed_offsets(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        """OffsetFetch (read_committed: ``require_stable``); None for partitions without a
        committed offset. Retries retriable errors until ``request_timeout_ms``."""
        if not partitions:
            return {}
        return await self._retrying(
            lambda: self._fetch_once(partitions),
            f"fetching committed offsets of group {self.group_id!r} failed",
        )

    async def _fetch_once(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        by_topic: dict[str, list[int]] = {}
        for tp in sorted(set(partitions)):
            by_topic.setdefault(tp.topic, []).append(tp.partition)

        def body(version: int) -> OffsetFetchRequest:
            if version >= 8:  # v8 asks for several groups at once
                topics: list[OffsetFetchRequestTopics] = [
                    {"name": t, "partition_indexes": p} for t, p in by_topic.items()
                ]
                return {
                    "groups": [{"group_id": self.group_id, "topics": topics}],
                    "require_stable": True,
                }
            return {
                "group_id": self.group_id,
                "topics": [{"name": t, "partition_indexes": p} for t, p in by_topic.items()],
                "require_stable": True,
            }

        response, version = await self.coordinator_request(
            Api.OFFSET_FETCH, body, max_version=OFFSET_FETCH_MAX_VERSION
        )
        group = response["groups"][0] if version >= 8 else response
        if group.get("error_code"):
            cls = Errors.for_code(group["error_code"])
            if issubclass(cls, COORDINATOR_MOVED):
                self.coordinator_dead(cls.__name__)
            raise cls(f"OffsetFetch for group {self.group_id!r}")
        out: dict[TopicPartition, OffsetAndMetadata | None] = {tp: None for tp in partitions}
        for t in group["topics"]:
            for p in t["partitions"]:
                tp = TopicPartition(t["name"], p["partition_index"])
                if p["error_code"]:
                    cls = Errors.for_code(p["error_code"])
                    if cls is Errors.UnknownTopicOrPartitionError:
                        continue
                    raise cls(f"OffsetFetch of {tp} for group {self.group_id!r}")
                if p["committed_offset"] >= 0:
                    out[tp] = OffsetAndMetadata(p["committed_offset"], p.get("metadata") or "")
        return out


def commit_failed(group_id: str, why: str) -> Errors.CommitFailedError:
    """The error of a commit the group no longer accepts from this member."""
    return Errors.CommitFailedError(
        f"Commit cannot be completed since the group {group_id!r} has already "
        f"rebalanced and assigned the partitions to another member ({why}). "
        "This means the time between polls was longer than max_poll_interval_ms, or "
        "the member was removed; raise max_poll_interval_ms or lower max_poll_records."
    )
