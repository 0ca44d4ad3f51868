"""What the admin client's parts share: the client and options they use, sending at a capped
version, asking partition leaders, retrying, and turning error codes into exceptions."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar, cast

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..protocol import Api
from ..retry import retrying
from ..structs import TopicPartition

__all__ = ["AdminBase", "Body", "by_topic", "partition_answers", "plain", "raise_for"]

Body = dict[str, Any]
T = TypeVar("T")
_Req = TypeVar("_Req", bound=Mapping[str, Any])
_Resp = TypeVar("_Resp")


class AdminBase:
    """The state every part of ``AIOKafkaAdminClient`` works with, set by its ``__init__``."""

    _client: AIOKafkaClient
    _request_timeout_ms: int
    _retry_backoff: float
    """``retry_backoff_ms`` in seconds."""

    def _timeout_ms(self, timeout_ms: int | None) -> int:
        return self._request_timeout_ms if timeout_ms is None else timeout_ms

    async def _send(
        self, node_id: int, api: Api[_Req, _Resp], body: _Req, *, max_version: int | None = None
    ) -> _Resp:
        """Send to ``node_id`` at the negotiated version, capped at ``max_version``."""
        version = None
        if max_version is not None:
            conn = await self._client.ready(node_id)
            version = min(conn.version_for(api.key), max_version)
        return await self._client.send(node_id, api, body, version=version)

    async def _leaders(
        self, partitions: Iterable[TopicPartition], what: str
    ) -> dict[TopicPartition, int]:
        """The leader of each of ``partitions``, from a fresh Metadata answer. An unknown
        topic or partition, or one without a leader, raises its error naming ``what`` and
        the partition."""
        wanted = list(partitions)
        metadata = await self._client.fetch_metadata(topics={tp.topic for tp in wanted})
        known: dict[TopicPartition, int] = {}
        for t in metadata["topics"]:
            raise_for(t["error_code"], f"{what}: topic {t['name']!r}")
            name = t["name"]
            if name is None:  # only topics asked for by id come back nameless
                continue
            for p in t["partitions"]:
                known[TopicPartition(name, p["partition_index"])] = p["leader_id"]
        for tp in wanted:
            leader = known.get(tp)
            if leader is None:
                raise Errors.UnknownTopicOrPartitionError(
                    f"{what}: topic {tp.topic!r} has no partition {tp.partition}"
                )
            if leader < 0:
                raise Errors.LeaderNotAvailableError(
                    f"{what}: topic {tp.topic!r} partition {tp.partition} has no leader"
                )
        return {tp: known[tp] for tp in wanted}

    async def _per_leader(
        self,
        partitions: Iterable[TopicPartition],
        what: str,
        ask: Callable[[int, list[TopicPartition]], Awaitable[dict[TopicPartition, T]]],
        timeout_ms: int | None = None,
    ) -> dict[TopicPartition, T]:
        """``ask(leader, its partitions)`` of every leader of ``partitions`` at once, the
        answers merged; all again, with the leaders looked up again, while a retriable error
        (a leader moved, a topic not known yet) comes back, for up to ``timeout_ms``
        (default ``request_timeout_ms``)."""
        wanted = list(dict.fromkeys(partitions))

        async def attempt() -> dict[TopicPartition, T]:
            leaders = await self._leaders(wanted, what)
            by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
            for tp in wanted:
                by_leader[leaders[tp]].append(tp)
            answers = await asyncio.gather(*(ask(n, tps) for n, tps in by_leader.items()))
            return {tp: value for answer in answers for tp, value in answer.items()}

        if not wanted:
            return {}
        return await self._retrying(attempt, timeout_ms=timeout_ms)

    async def _retrying(
        self,
        attempt: Callable[[], Awaitable[T]],
        also: type[Errors.KafkaError] | None = None,
        timeout_ms: int | None = None,
    ) -> T:
        """Run ``attempt`` until it succeeds, retrying retriable Kafka errors (and ``also``,
        an error that is worth waiting out for this request) with backoff for up to
        ``timeout_ms`` (default ``request_timeout_ms``)."""
        return await retrying(
            attempt,
            timeout=self._timeout_ms(timeout_ms) / 1000,
            backoff=self._retry_backoff,
            retriable=lambda exc: exc.retriable or (also is not None and isinstance(exc, also)),
        )


def raise_for(code: int, what: str, message: str | None = None) -> None:
    """Raise the ferrokafka error class of a non-zero Kafka error ``code``."""
    if code:
        detail = f": {message}" if message else ""
        raise Errors.for_code(code)(f"{what}{detail}")


def raise_for_each(results: Iterable[Mapping[str, Any]], what: str, name: str) -> None:
    """Raise for the first of a response's ``results`` that carries an error, naming it by
    its ``name`` field after ``what`` (with the broker's ``error_message``)."""
    for result in results:
        raise_for(result["error_code"], f"{what} {result[name]!r}", result["error_message"])


def by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """The partition numbers of each topic, in the order given, each once."""
    grouped: dict[str, list[int]] = defaultdict(list)
    for tp in dict.fromkeys(partitions):
        grouped[tp.topic].append(tp.partition)
    return grouped


def partition_answers(
    topics: Iterable[Mapping[str, Any]], what: str, leader: int
) -> Iterator[tuple[TopicPartition, Mapping[str, Any]]]:
    """Each partition's entry of a leader's answer (topics by ``name``, partitions by
    ``partition_index``); an entry's error is raised naming the partition and leader."""
    for t in topics:
        for p in t["partitions"]:
            tp = TopicPartition(t["name"], p["partition_index"])
            raise_for(
                p["error_code"],
                f"{what}: topic {tp.topic!r} partition {tp.partition} (leader {leader})",
                p.get("error_message"),
            )
            yield tp, p


def plain(response: Mapping[str, Any]) -> Body:
    """A decoded response as the plain dict the public methods return (it is one)."""
    return cast(Body, response)
