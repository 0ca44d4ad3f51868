"""Share groups through the admin client and the command line (KIP-932): list and describe a
group with a member, read where it starts each partition as records are accepted, move that
start back (refused while the group has members) so the records come again, forget it, and
delete the group."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from ferrokafka import AIOKafkaShareConsumer
from ferrokafka import errors as Errors
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.structs import TopicPartition

from .share_util import configure_share_group, poll_until, produce_current, quiet_for

pytestmark = pytest.mark.integration


def _cli(bootstrap_servers: str, *argv: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "ferrokafka", *argv, "-b", bootstrap_servers],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


async def test_share_groups_are_listed_described_moved_and_deleted(
    bootstrap_servers: str, make_topic: Any
) -> None:
    topic = make_topic(partitions=2)
    group = f"share-admin-{topic}"
    tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    await configure_share_group(bootstrap_servers, group, share_auto_offset_reset="earliest")
    await produce_current(bootstrap_servers, topic, 2, 10)
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
        async with AIOKafkaShareConsumer(
            topic, bootstrap_servers=bootstrap_servers, group_id=group, client_id="worker-1"
        ) as member:
            got = await poll_until(member, lambda got: len(got) >= 20)
            await member.commit()  # accepts them (implicit mode)
            assert (group, "Stable") in await admin.list_share_groups()
            (described,) = await admin.describe_share_groups([group])
            assert described["group_state"] == "Stable"
            (m,) = described["members"]
            assert m["client_id"] == "worker-1"
            assert m["subscribed_topic_names"] == [topic]
            assert m["assignment"] == [tp0, tp1]
            # Kafka 4.2's share coordinator may record the start later than the
            # acknowledgements (it can still say 0 here): any offset of the topic is right.
            starts = await admin.list_share_group_offsets(group)
            assert starts.keys() == {tp0, tp1} and set(starts.values()) <= set(range(11))
            assert (await admin.list_share_group_offsets(group, [tp1])).keys() == {tp1}
            # The command line shows it too.
            assert group in _cli(bootstrap_servers, "groups", "list", "--type", "share")
            assert group not in _cli(bootstrap_servers, "groups", "list", "--type", "consumer")
            shown = json.loads(
                _cli(bootstrap_servers, "groups", "describe", group, "--format", "json")
            )
            assert (shown["type"], shown["state"], len(shown["members"])) == ("share", "Stable", 1)
            assert [(o["partition"], o["log_end"]) for o in shown["offsets"]] == [(0, 10), (1, 10)]
            assert all(o["lag"] == 10 - o["start"] for o in shown["offsets"])
            with pytest.raises(Errors.BrokerResponseError, match=group):
                await admin.alter_share_group_offsets(group, {tp0: 0})
        assert len(got) == 20
        # With no member, partition 0 can start over: its records come again (a new
        # delivery: count 1, they had been accepted).
        await admin.alter_share_group_offsets(group, {tp0: 0})
        assert (await admin.list_share_group_offsets(group))[tp0] == 0
        async with AIOKafkaShareConsumer(
            topic, bootstrap_servers=bootstrap_servers, group_id=group
        ) as again:
            replayed = await poll_until(again, lambda got: len(got) >= 10)
            assert await quiet_for(again, 1) == []
        assert sorted((r.partition, r.offset, r.delivery_count) for r in replayed) == [
            (0, o, 1) for o in range(10)
        ]
        # Forgetting the topic's state, then the group.
        await admin.delete_share_group_offsets(group, [topic])
        assert await admin.list_share_group_offsets(group) == {}
        assert await admin.delete_share_groups([group]) == [(group, Errors.NoError)]
        with pytest.raises(Errors.GroupIdNotFound, match=group):
            await admin.describe_share_groups([group])
