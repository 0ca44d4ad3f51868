"""``AIOKafkaAdminClient``: topic management and cluster description.

Requests that KRaft forwards to the controller (CreateTopics, DeleteTopics) go to the
least-loaded broker, as the Java Admin client does since KIP-590.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..protocol import ApiKey
from .new_topic import NewTopic

__all__ = ["AIOKafkaAdminClient"]


class AIOKafkaAdminClient:
    """An admin client. ``start()`` connects; ``close()`` disconnects."""

    def __init__(
        self,
        *,
        bootstrap_servers: str | list[str] = "localhost",
        client_id: str = "ferrokafka-admin",
        request_timeout_ms: int = 40000,
        connections_max_idle_ms: int = 540000,
        retry_backoff_ms: int = 100,
        metadata_max_age_ms: int = 300000,
    ) -> None:
        self._request_timeout_ms = request_timeout_ms
        self._retry_backoff = retry_backoff_ms / 1000
        self._client = AIOKafkaClient(
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
            request_timeout_ms=request_timeout_ms,
            connections_max_idle_ms=connections_max_idle_ms,
            retry_backoff_ms=retry_backoff_ms,
            metadata_max_age_ms=metadata_max_age_ms,
        )

    @property
    def client(self) -> AIOKafkaClient:
        return self._client

    async def start(self) -> None:
        await self._client.bootstrap()

    async def close(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> AIOKafkaAdminClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def create_topics(
        self,
        new_topics: list[NewTopic],
        timeout_ms: int | None = None,
        validate_only: bool = False,
    ) -> dict[str, Any]:
        """Send CreateTopics; returns the decoded response (per-topic ``error_code``s are
        reported there, as aiokafka does, not raised)."""
        body = {
            "topics": [t.to_request() for t in new_topics],
            "timeout_ms": self._request_timeout_ms if timeout_ms is None else timeout_ms,
            "validate_only": validate_only,
        }
        return await self._client.send_to_any(ApiKey.CREATE_TOPICS, body)

    async def delete_topics(
        self, topics: list[str], timeout_ms: int | None = None
    ) -> dict[str, Any]:
        """Send DeleteTopics; returns the decoded response with per-topic ``error_code``s."""
        body = {
            "topic_names": list(topics),
            "topics": [{"name": t} for t in topics],
            "timeout_ms": self._request_timeout_ms if timeout_ms is None else timeout_ms,
        }
        return await self._client.send_to_any(ApiKey.DELETE_TOPICS, body)

    async def list_topics(self) -> list[str]:
        response = await self._client.fetch_metadata(topics=None)
        return sorted(t["name"] for t in response["topics"] if t["name"])

    async def describe_cluster(self) -> dict[str, Any]:
        response = await self._client.fetch_metadata(topics=set())
        return {
            "cluster_id": response.get("cluster_id"),
            "controller_id": response.get("controller_id"),
            "brokers": [
                {"node_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": b["rack"]}
                for b in response["brokers"]
            ],
        }

    async def describe_topics(self, topics: list[str] | None = None) -> list[dict[str, Any]]:
        response = await self._client.fetch_metadata(topics=None if topics is None else set(topics))
        result: list[dict[str, Any]] = response["topics"]
        return result

    async def wait_for_topic(
        self, name: str, *, partitions: int | None = None, present: bool = True, timeout: float
    ) -> None:
        """Wait until every broker's metadata shows ``name`` with a leader for each partition
        (``present=True``) or no longer knows it (``present=False``)."""
        deadline = time.monotonic() + timeout
        last: str = "no answer yet"
        while True:
            try:
                if await self._topic_state_everywhere(name, partitions, present):
                    return
                last = "not yet propagated to every broker"
            except Errors.KafkaError as exc:
                last = str(exc)
            if time.monotonic() >= deadline:
                state = "appear" if present else "disappear"
                raise Errors.KafkaTimeoutError(
                    f"topic {name!r} did not {state} within {timeout:.1f}s ({last})"
                )
            await asyncio.sleep(self._retry_backoff)

    async def _topic_state_everywhere(
        self, name: str, partitions: int | None, present: bool
    ) -> bool:
        await self._client.refresh_metadata()
        for broker in self._client.cluster.broker_ids():
            response = await self._client.send(
                broker,
                ApiKey.METADATA,
                {"topics": [{"name": name}], "allow_auto_topic_creation": False},
            )
            topic = next((t for t in response["topics"] if t["name"] == name), None)
            exists = topic is not None and topic["error_code"] == 0
            if not present:
                if exists:
                    return False
                continue
            if not exists or topic is None:
                return False
            parts = topic["partitions"]
            if partitions is not None and len(parts) != partitions:
                return False
            if any(p["leader_id"] < 0 or p["error_code"] for p in parts):
                return False
        return True
