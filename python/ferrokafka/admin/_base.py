"""What the admin client's parts share: the client and options they use, sending at a capped
version, retrying, and turning error codes into exceptions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..protocol import Api
from ..retry import retrying
from ..structs import TopicPartition

__all__ = ["AdminBase", "Body"]

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

    async def _retrying(
        self,
        attempt: Callable[[], Awaitable[T]],
        also: type[Errors.KafkaError] | None = None,
    ) -> T:
        """Run ``attempt`` until it succeeds, retrying retriable Kafka errors (and ``also``,
        an error that is worth waiting out for this request) with backoff for up to
        ``request_timeout_ms``."""
        return await retrying(
            attempt,
            timeout=self._request_timeout_ms / 1000,
            backoff=self._retry_backoff,
            retriable=lambda exc: exc.retriable or (also is not None and isinstance(exc, also)),
        )


def raise_for(code: int, what: str, message: str | None = None) -> None:
    """Raise the ferrokafka error class of a non-zero Kafka error ``code``."""
    if code:
        detail = f": {message}" if message else ""
        raise Errors.for_code(code)(f"{what}{detail}")


def plain(response: Mapping[str, Any]) -> Body:
    """A decoded response as the plain dict the public methods return (it is one)."""
    return cast(Body, response)
