"""A minimal in-process Kafka peer for unit tests of edge cases a real broker will not produce
on cue (silence, hostile frame sizes, wrong correlation ids). It speaks through the native codec:
requests are decoded with ``decode_request`` and answers encoded with ``encode_response``.
Integration tests use the real broker; this never replaces it."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from typing import Any

from ferrokafka import _native

Handler = Callable[[int, int, int, dict[str, Any]], Awaitable[bytes | None]]

API_VERSIONS_REPLY: dict[str, Any] = {
    "error_code": 0,
    "api_keys": [
        {"api_key": key, "min_version": lo, "max_version": hi}
        for key, (_, lo, hi, _) in _native.supported_apis().items()
    ],
}


def metadata_reply(
    port: int,
    topic: str,
    partitions: int,
    *,
    topic_id: bytes | None = None,
    leader_epoch: int = 0,
) -> dict[str, Any]:
    """A Metadata answer: this peer as node 1, leading every partition of one topic."""
    entry: dict[str, Any] = {
        "error_code": 0,
        "name": topic,
        "is_internal": False,
        "partitions": [
            {
                "error_code": 0,
                "partition_index": p,
                "leader_id": 1,
                "leader_epoch": leader_epoch,
                "replica_nodes": [1],
                "isr_nodes": [1],
                "offline_replicas": [],
            }
            for p in range(partitions)
        ],
    }
    if topic_id is not None:
        entry["topic_id"] = topic_id
    return {
        "brokers": [{"node_id": 1, "host": "127.0.0.1", "port": port, "rack": None}],
        "topics": [entry],
        "cluster_id": "fake",
        "controller_id": 1,
    }


def share_member_reply(
    key: int, body: dict[str, Any], port: int, group: str, topic: str, topic_id: bytes
) -> dict[str, Any] | None:
    """The answers a share consumer needs before it fetches, from this peer as node 1 leading
    partition 0 of ``topic`` (Metadata, FindCoordinator, ShareGroupHeartbeat assigning that
    partition); None for another request."""
    if key == 3:
        return metadata_reply(port, topic, 1, topic_id=topic_id)
    if key == 10:
        coordinator = {"key": group, "node_id": 1, "host": "127.0.0.1", "port": port}
        return {"coordinators": [{**coordinator, "error_code": 0}]}
    if key == 76:
        return {
            "throttle_time_ms": 0,
            "error_code": 0,
            "error_message": None,
            "member_id": None,
            "member_epoch": 1 if body["member_epoch"] >= 0 else -1,
            "heartbeat_interval_ms": 60_000,
            "assignment": {"topic_partitions": [{"topic_id": topic_id, "partitions": [0]}]},
        }
    return None


def share_partition(first_offset: int | None, values: list[bytes | None]) -> dict[str, Any]:
    """Partition 0's ShareFetch answer: ``values`` at offsets from ``first_offset``, all
    acquired (delivery count 1); no records for None."""
    from ferrokafka.records import encode_batch

    records = None
    acquired: list[dict[str, Any]] = []
    if first_offset is not None:
        records = encode_batch([(1, None, v, []) for v in values], base_offset=first_offset)
        last = first_offset + len(values) - 1
        acquired = [{"first_offset": first_offset, "last_offset": last, "delivery_count": 1}]
    return {
        "partition_index": 0,
        "error_code": 0,
        "error_message": None,
        "acknowledge_error_code": 0,
        "acknowledge_error_message": None,
        "current_leader": {"leader_id": 1, "leader_epoch": 0},
        "records": records,
        "acquired_records": acquired,
    }


def share_reply(
    topic_id: bytes, partitions: list[dict[str, Any]], error_code: int = 0
) -> dict[str, Any]:
    """A ShareFetch (or ShareAcknowledge) answer with these partitions' answers."""
    return {
        "throttle_time_ms": 0,
        "error_code": error_code,
        "error_message": "refused" if error_code else None,
        "acquisition_lock_timeout_ms": 30_000,
        "responses": [{"topic_id": topic_id, "partitions": partitions}] if partitions else [],
        "node_endpoints": [],
    }


class FakeBroker:
    """Answers ApiVersions itself and hands every other request to ``handler``, which returns
    raw bytes to write (or None for silence)."""

    def __init__(
        self,
        handler: Handler,
        *,
        api_versions_max: int | None = None,
        without_apis: tuple[int, ...] = (),
    ) -> None:
        self.handler = handler
        self.api_versions_max = api_versions_max
        self.api_versions = dict(
            API_VERSIONS_REPLY,
            api_keys=[
                k for k in API_VERSIONS_REPLY["api_keys"] if k["api_key"] not in without_apis
            ],
        )
        """What ApiVersions answers: every API ferrokafka speaks but ``without_apis`` (a broker
        that lacks them)."""
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.requests: list[tuple[int, int, int, dict[str, Any]]] = []

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def start(self) -> FakeBroker:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def stop(self) -> None:
        """Close every connection and wait until each handler has returned."""
        if self.server is not None:
            self.server.close()
        for w in self.writers:
            w.close()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks)
        if self.server is not None:
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                frame = await reader.readexactly(size)
                key, version, corr, _client, body = _native.decode_request(frame)
                self.requests.append((key, version, corr, body))
                if (
                    key == 18
                    and self.api_versions_max is not None
                    and (version > self.api_versions_max)
                ):
                    # What an older broker does: UNSUPPORTED_VERSION in the v0 layout.
                    reply = dict(API_VERSIONS_REPLY, error_code=35)
                    reply["api_keys"] = [
                        dict(k, max_version=self.api_versions_max) if k["api_key"] == 18 else k
                        for k in reply["api_keys"]
                    ]
                    writer.write(_native.encode_response(18, 0, corr, reply))
                elif key == 18:
                    writer.write(_native.encode_response(18, version, corr, self.api_versions))
                else:
                    out = await self.handler(key, version, corr, body)
                    if out is not None:
                        writer.write(out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self.tasks.discard(task)
