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
