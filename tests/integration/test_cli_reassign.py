"""``ferrokafka reassign`` on the three-node placement cluster: a move started, listed while
throttled, cancelled, then run to its end; leaders elected. The metadata shows each outcome."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from ferrokafka.admin import AIOKafkaAdminClient, NewTopic

from .cli_util import cli
from .conftest import PlacementCluster

pytestmark = [pytest.mark.integration, pytest.mark.cluster]


async def _create(bootstrap: str, replicas: list[int]) -> str:
    name = f"fk-cli-reassign-{uuid.uuid4().hex[:10]}"
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.create_topics([NewTopic(name, -1, -1, replica_assignments={0: replicas})])
        await admin.wait_for_topic(name, partitions=1, timeout=30)
    return name


async def _placed(bootstrap: str, topic: str) -> tuple[list[int], int]:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        [described] = await admin.describe_topics([topic])
    [p] = described["partitions"]
    return list(p["replica_nodes"]), p["leader_id"]


def _until(bootstrap: str, topic: str, replicas: list[int], leader: int | None = None) -> None:
    deadline = time.monotonic() + 60
    while True:
        placed = asyncio.run(_placed(bootstrap, topic))
        if placed[0] == replicas and leader in (None, placed[1]):
            return
        assert time.monotonic() < deadline, placed
        time.sleep(0.2)


def test_move_list_elect(
    placement_cluster: PlacementCluster, capsys: pytest.CaptureFixture[str]
) -> None:
    bootstrap = placement_cluster.bootstrap_servers
    b = ["-b", bootstrap]
    topic = asyncio.run(_create(bootstrap, [1, 2]))

    code, out, err = cli(capsys, "reassign", "move", f"{topic}:0=2,3", *b)
    assert (code, out) == (0, ""), err
    _until(bootstrap, topic, [2, 3])
    code, out, err = cli(capsys, "reassign", "list", f"{topic}:0", "--format", "json", *b)
    assert (code, out) == (0, ""), err

    # 2 is now the preferred leader; 1 or 3 may still lead.
    code, out, err = cli(capsys, "reassign", "elect-leaders", f"{topic}:0", *b)
    assert code == 0, err
    assert out.strip() in (
        f"{topic}:0: elected",
        f"{topic}:0: already led by its preferred replica",
    )
    _until(bootstrap, topic, [2, 3], leader=2)
    code, out, _ = cli(capsys, "reassign", "elect-leaders", f"{topic}:0", *b)
    assert out.strip() == f"{topic}:0: already led by its preferred replica"

    code, _, err = cli(capsys, "reassign", "cancel", f"{topic}:0", *b)
    assert code == 1 and "NoReassignmentInProgressError" in err and topic in err
    code, out, err = cli(capsys, "reassign", "elect-leaders", f"{topic}:7", *b)
    assert code == 1 and "UnknownTopicOrPartitionError" in out
