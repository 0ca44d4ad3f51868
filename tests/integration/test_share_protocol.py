"""The share-group protocol (KIP-932) spoken by ferrokafka's own encoder to the real broker:
a member joins with ShareGroupHeartbeat and is assigned the topic's partitions, ShareFetch
acquires records under locks (with delivery counts), a RELEASE sent with the next ShareFetch
gives them back with a higher count, ShareAcknowledge accepts them and closes the share
session, and the member leaves. Requests are built by hand here: this is the wire layer the
share consumer stands on."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from ferrokafka import errors as Errors
from ferrokafka.client import AIOKafkaClient
from ferrokafka.protocol import Api
from ferrokafka.records import decode_records, split_acquired
from ferrokafka.share import AcknowledgeType
from ferrokafka.structs import TopicPartition

from .share_util import produce_current

pytestmark = pytest.mark.integration

ACCEPT, RELEASE = int(AcknowledgeType.ACCEPT), int(AcknowledgeType.RELEASE)


async def _coordinator(client: AIOKafkaClient, group: str) -> int:
    """The group's coordinator (retriable while the broker's group topics come up)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return await client.find_coordinator(group)
        except Errors.KafkaError as exc:
            if not exc.retriable or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def _heartbeat(
    client: AIOKafkaClient, coordinator: int, group: str, member: str, epoch: int, topic: str
) -> Any:
    response = await client.send(
        coordinator,
        Api.SHARE_GROUP_HEARTBEAT,
        {
            "group_id": group,
            "member_id": member,
            "member_epoch": epoch,
            "rack_id": None,
            "subscribed_topic_names": [topic] if epoch >= 0 else None,
        },
    )
    assert response["error_code"] == 0, response
    return response


def _fetch_body(
    group: str, member: str, epoch: int, topic_id: bytes, acks: dict[int, list[Any]]
) -> Any:
    return {
        "group_id": group,
        "member_id": member,
        "share_session_epoch": epoch,
        "max_wait_ms": 500,
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "max_records": 500,
        "batch_size": 500,
        "topics": [
            {
                "topic_id": topic_id,
                "partitions": [
                    {"partition_index": p, "acknowledgement_batches": acks.get(p, [])}
                    for p in (0, 1)
                ],
            }
        ],
        "forgotten_topics_data": [],
    }


def _acquired(response: Any, topic: str) -> dict[int, list[tuple[int, int, int]]]:
    """Partition -> [(offset, delivery count, value length)] of the records this member now
    holds (records outside the acquired ranges are not its)."""
    assert response["error_code"] == 0, response
    out: dict[int, list[tuple[int, int, int]]] = {}
    for part in response["responses"][0]["partitions"]:
        assert part["error_code"] == 0 and part["acknowledge_error_code"] == 0, part
        if not part["acquired_records"]:
            continue
        records = decode_records(part["records"], topic, part["partition_index"]).records
        ranges = [
            (a["first_offset"], a["last_offset"], a["delivery_count"])
            for a in part["acquired_records"]
        ]
        held, _, gaps = split_acquired(records, ranges)
        assert gaps == [], "every acquired offset of a plain topic holds a record"
        out[part["partition_index"]] = [
            (r.offset, r.delivery_count or 0, len(r.value or b"")) for r in held
        ]
    return out


async def test_a_share_member_joins_acquires_releases_accepts_and_leaves(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    group = f"share-{topic}"
    member = str(uuid.uuid4())
    async with AIOKafkaClient(bootstrap_servers=bootstrap_servers) as client:
        client.add_topic(topic)
        await client.refresh_metadata()
        info = client.cluster.topic_info(topic)
        assert info is not None and info.topic_id is not None
        topic_id = info.topic_id.bytes
        leader = client.cluster.leader_for_partition(TopicPartition(topic, 0))
        assert leader is not None and leader >= 0
        assert client.cluster.leader_for_partition(TopicPartition(topic, 1)) == leader
        coordinator = await _coordinator(client, group)

        # Join: epoch 0, then heartbeats until both partitions are assigned.
        joined = await _heartbeat(client, coordinator, group, member, 0, topic)
        epoch = joined["member_epoch"]
        assert epoch >= 1
        assigned: set[int] = set()
        assignment = joined["assignment"]
        deadline = time.monotonic() + 30
        while True:
            if assignment is not None:
                assigned = {
                    p
                    for entry in assignment["topic_partitions"]
                    if bytes(entry["topic_id"]) == topic_id
                    for p in entry["partitions"]
                }
            if assigned == {0, 1}:
                break
            assert time.monotonic() < deadline, assignment
            await asyncio.sleep(joined["heartbeat_interval_ms"] / 1000)
            response = await _heartbeat(client, coordinator, group, member, epoch, topic)
            epoch, assignment = response["member_epoch"], response["assignment"]

        # A share group starts at the latest offset: the first fetch opens the share session
        # (epoch 0) at the end of the empty topic; then the records arrive.
        session = 0
        opened = await client.send(
            leader, Api.SHARE_FETCH, _fetch_body(group, member, session, topic_id, {})
        )
        assert opened["acquisition_lock_timeout_ms"] > 0
        assert _acquired(opened, topic) == {}
        await produce_current(bootstrap_servers, topic, 2, 5)

        got: dict[int, list[tuple[int, int, int]]] = {}
        deadline = time.monotonic() + 30
        while sum(len(v) for v in got.values()) < 10:
            assert time.monotonic() < deadline, got
            session += 1
            response = await client.send(
                leader, Api.SHARE_FETCH, _fetch_body(group, member, session, topic_id, {})
            )
            for p, records in _acquired(response, topic).items():
                got.setdefault(p, []).extend(records)
        assert {p: [(o, c) for o, c, _ in rs] for p, rs in got.items()} == {
            p: [(o, 1) for o in range(5)] for p in (0, 1)
        }

        # RELEASE partition 0's records with the next fetch: they come back, delivery count 2.
        release = {0: [{"first_offset": 0, "last_offset": 4, "acknowledge_types": [RELEASE]}]}
        again: dict[int, list[tuple[int, int, int]]] = {}
        deadline = time.monotonic() + 30
        while not again.get(0):
            assert time.monotonic() < deadline, again
            session += 1
            response = await client.send(
                leader, Api.SHARE_FETCH, _fetch_body(group, member, session, topic_id, release)
            )
            release = {}
            again = _acquired(response, topic)
        assert [(o, c) for o, c, _ in again[0]] == [(o, 2) for o in range(5)]

        # Accept everything held, closing the share session (epoch -1).
        accept = [{"first_offset": 0, "last_offset": 4, "acknowledge_types": [ACCEPT]}]
        closed = await client.send(
            leader,
            Api.SHARE_ACKNOWLEDGE,
            {
                "group_id": group,
                "member_id": member,
                "share_session_epoch": -1,
                "topics": [
                    {
                        "topic_id": topic_id,
                        "partitions": [
                            {"partition_index": p, "acknowledgement_batches": accept}
                            for p in (0, 1)
                        ],
                    }
                ],
            },
        )
        assert closed["error_code"] == 0, closed
        assert [p["error_code"] for p in closed["responses"][0]["partitions"]] == [0, 0]

        # Leave the group.
        left = await _heartbeat(client, coordinator, group, member, -1, topic)
        assert left["member_epoch"] == -1
