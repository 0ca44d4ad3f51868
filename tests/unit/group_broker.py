"""A scripted one-node cluster that is also the group coordinator, for the group protocol's edge
cases a real broker will not produce on cue (authorization failures without ACLs, a coordinator
that moves at a chosen moment, a commit that fails once and is retried, a JoinGroup held open).

It serves one classic-protocol member at a time: JoinGroup makes it the leader of a new
generation, SyncGroup hands it the assignment it sent, OffsetCommit/OffsetFetch keep offsets.
Every request is handled in its own task, so a held request does not block the connection (as
with a real broker, the client matches answers by correlation id), and ``in_flight`` counts what
was received and not answered yet. Scripted answers: ``fail(api_key, error_code, ...)`` makes
the next requests of that API fail with those codes; ``hold(api_key)`` keeps the next one
unanswered until ``release(api_key)``.

Requests and answers go through the native codec; integration tests use the real broker."""

from __future__ import annotations

import asyncio
import collections
import struct
import uuid
from typing import Any

from ferrokafka import TopicPartition, _native
from ferrokafka.protocol import ApiKey

from .fake_broker import API_VERSIONS_REPLY

NODE = 1


class GroupBroker:
    def __init__(self, topics: dict[str, int] | None = None) -> None:
        self.topics = dict(topics or {"t": 2})
        """Topic name -> partition count, as Metadata reports it (tests may change it)."""
        self.topic_ids = {t: uuid.uuid4().bytes for t in self.topics}
        self.committed: dict[TopicPartition, int] = {}
        self.commits: list[dict[TopicPartition, int]] = []
        """Every OffsetCommit that was applied, in the order it was."""
        self.requests: list[tuple[int, dict[str, Any]]] = []
        self.connections: dict[int, set[int]] = collections.defaultdict(set)
        """API key -> the connections (numbered in accept order) its requests came on."""
        self.in_flight: collections.Counter[int] = collections.Counter()
        self.max_in_flight: collections.Counter[int] = collections.Counter()
        self.generation = 0
        self.protocol: str | None = None
        self._member_ids = 0
        self._assignment = b""
        self._errors: dict[int, list[int]] = collections.defaultdict(list)
        self._holds: dict[int, asyncio.Event] = {}
        self.held: dict[int, asyncio.Event] = {}
        """Set once a held request of that API has arrived."""
        self.server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    # -- scripting -----------------------------------------------------------------------------

    def fail(self, api_key: int, *codes: int) -> None:
        self._errors[api_key].extend(codes)

    def hold(self, api_key: int) -> None:
        self._holds[api_key] = asyncio.Event()
        self.held[api_key] = asyncio.Event()

    def release(self, api_key: int) -> None:
        self._holds.pop(api_key).set()

    def sent(self, api_key: int) -> list[dict[str, Any]]:
        return [body for key, body in self.requests if key == api_key]

    def keys(self) -> list[int]:
        """The API keys of the group requests received, in order (no Metadata, Fetch...)."""
        group_apis = {
            ApiKey.FIND_COORDINATOR,
            ApiKey.JOIN_GROUP,
            ApiKey.SYNC_GROUP,
            ApiKey.HEARTBEAT,
            ApiKey.LEAVE_GROUP,
            ApiKey.OFFSET_COMMIT,
        }
        return [key for key, _ in self.requests if key in group_apis]

    # -- serving -------------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        assert self.server is not None
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def start(self) -> GroupBroker:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def stop(self) -> None:
        for event in self._holds.values():
            event.set()
        if self.server is not None:
            self.server.close()
        for w in self._writers:
            w.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        if self.server is not None:
            await self.server.wait_closed()

    async def __aenter__(self) -> GroupBroker:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _track(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        connection = len(self._writers)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                size = struct.unpack(">i", await reader.readexactly(4))[0]
                frame = await reader.readexactly(size)
                key, version, corr, _client, body = _native.decode_request(frame)
                if key == ApiKey.API_VERSIONS:
                    reply = _native.encode_response(key, version, corr, API_VERSIONS_REPLY)
                    writer.write(reply)
                    continue
                self.requests.append((key, body))
                self.connections[key].add(connection)
                self._track(self._answer(writer, key, version, corr, body))
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _answer(
        self, writer: asyncio.StreamWriter, key: int, version: int, corr: int, body: Any
    ) -> None:
        self.in_flight[key] += 1
        self.max_in_flight[key] = max(self.max_in_flight[key], self.in_flight[key])
        try:
            hold = self._holds.get(key)
            if hold is not None:
                self.held[key].set()
                await hold.wait()
            reply = await self._handle(key, version, body)
        finally:
            self.in_flight[key] -= 1
        if not writer.is_closing():
            writer.write(_native.encode_response(key, version, corr, reply))

    def _error(self, key: int) -> int:
        queue = self._errors.get(key)
        return queue.pop(0) if queue else 0

    async def _handle(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        if key == ApiKey.METADATA:
            return self._metadata()
        if key == ApiKey.FETCH:
            await asyncio.sleep(min(body["max_wait_ms"], 50) / 1000)
            return {"error_code": 0, "session_id": 0, "responses": []}
        if key == ApiKey.LIST_OFFSETS:
            return {
                "topics": [
                    {
                        "name": t["name"],
                        "partitions": [
                            {
                                "partition_index": p["partition_index"],
                                "error_code": 0,
                                "timestamp": -1,
                                "offset": 0,
                                "leader_epoch": 0,
                            }
                            for p in t["partitions"]
                        ],
                    }
                    for t in body["topics"]
                ]
            }
        code = self._error(key)
        if key == ApiKey.FIND_COORDINATOR:
            entry = {
                "key": body["coordinator_keys"][0],
                "node_id": NODE if not code else -1,
                "host": "127.0.0.1" if not code else "",
                "port": self.server.sockets[0].getsockname()[1] if self.server else 0,
                "error_code": code,
                "error_message": None,
            }
            return {"coordinators": [entry]}
        if key == ApiKey.JOIN_GROUP:
            return self._join(body, code)
        if key == ApiKey.SYNC_GROUP:
            if not code:
                for a in body["assignments"]:
                    if a["member_id"] == body["member_id"]:
                        self._assignment = bytes(a["assignment"])
            return {
                "error_code": code,
                "protocol_type": "consumer",
                "protocol_name": self.protocol,
                "assignment": b"" if code else self._assignment,
            }
        if key == ApiKey.HEARTBEAT:
            return {"error_code": code}
        if key == ApiKey.LEAVE_GROUP:
            return {"error_code": code, "members": []}
        if key == ApiKey.OFFSET_COMMIT:
            landed = {}
            for t in body["topics"]:
                for p in t["partitions"]:
                    landed[TopicPartition(t["name"], p["partition_index"])] = p["committed_offset"]
            if not code:
                self.committed.update(landed)
                self.commits.append(landed)
            return {
                "topics": [
                    {
                        "name": t["name"],
                        "partitions": [
                            {"partition_index": p["partition_index"], "error_code": code}
                            for p in t["partitions"]
                        ],
                    }
                    for t in body["topics"]
                ]
            }
        if key == ApiKey.OFFSET_FETCH:
            group = body["groups"][0]
            return {
                "groups": [
                    {
                        "group_id": group["group_id"],
                        "error_code": code,
                        "topics": [
                            {
                                "name": t["name"],
                                "partitions": [
                                    {
                                        "partition_index": p,
                                        "committed_offset": self.committed.get(
                                            TopicPartition(t["name"], p), -1
                                        ),
                                        "metadata": "",
                                        "error_code": 0,
                                    }
                                    for p in t["partition_indexes"]
                                ],
                            }
                            for t in group["topics"] or []
                        ],
                    }
                ]
            }
        raise AssertionError(f"unexpected api key {key}")

    def _join(self, body: dict[str, Any], code: int) -> dict[str, Any]:
        failed = {"error_code": code, "generation_id": -1, "leader": "", "members": []}
        if code:
            return dict(failed, member_id=body["member_id"])
        if not body["member_id"] and body["group_instance_id"] is None:
            self._member_ids += 1
            return dict(failed, error_code=79, member_id=f"member-{self._member_ids}")
        member_id = body["member_id"] or f"static-{body['group_instance_id']}"
        self.generation += 1
        first = body["protocols"][0]
        self.protocol = first["name"]
        return {
            "error_code": 0,
            "generation_id": self.generation,
            "protocol_type": "consumer",
            "protocol_name": self.protocol,
            "leader": member_id,
            "member_id": member_id,
            "members": [
                {
                    "member_id": member_id,
                    "group_instance_id": body["group_instance_id"],
                    "metadata": first["metadata"],
                }
            ],
        }

    def _metadata(self) -> dict[str, Any]:
        port = self.server.sockets[0].getsockname()[1] if self.server else 0
        return {
            "brokers": [{"node_id": NODE, "host": "127.0.0.1", "port": port, "rack": None}],
            "cluster_id": "fake",
            "controller_id": NODE,
            "topics": [
                {
                    "error_code": 0,
                    "name": name,
                    "topic_id": self.topic_ids.setdefault(name, uuid.uuid4().bytes),
                    "is_internal": False,
                    "partitions": [
                        {
                            "error_code": 0,
                            "partition_index": p,
                            "leader_id": NODE,
                            "leader_epoch": 0,
                            "replica_nodes": [NODE],
                            "isr_nodes": [NODE],
                            "offline_replicas": [],
                        }
                        for p in range(count)
                    ],
                }
                for name, count in self.topics.items()
            ],
        }
