"""``ferrokafka groups`` against the real broker: list, reset-offsets (a dry run changes
nothing, a run moves the committed offsets, a group with members is refused), and delete (a
group without members goes with its offsets; one with members, or unknown, is reported and the
exit status is 1)."""

from __future__ import annotations

import asyncio
import json

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.cli import main

from ..conftest import TopicFactory

pytestmark = pytest.mark.integration


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def _prepare(bootstrap: str, topic: str, group: str) -> None:
    """Ten records over two partitions; the group committed 3 on partition 0, 4 on 1."""
    async with AIOKafkaProducer(bootstrap_servers=bootstrap) as producer:
        for i in range(10):
            await producer.send_and_wait(topic, b"v%d" % i, partition=i % 2)
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        consumer.assign(partitions)
        await consumer.commit({partitions[0]: 3, partitions[1]: 4})
    finally:
        await consumer.stop()


async def _committed(bootstrap: str, group: str) -> dict[int, int]:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        found = await admin.list_consumer_group_offsets(group)
    return {tp.partition: om.offset for tp, om in found.items()}


@pytest.fixture
def group_topic(bootstrap_servers: str, make_topic: TopicFactory) -> tuple[str, str]:
    topic = make_topic(partitions=2)
    group = f"{topic}-g"
    asyncio.run(_prepare(bootstrap_servers, topic, group))
    return topic, group


def test_list_shows_the_group(
    bootstrap_servers: str, group_topic: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, group = group_topic
    code, out, _ = cli(capsys, "groups", "list", "-b", bootstrap_servers)
    assert code == 0 and group in out.splitlines()


def test_reset_offsets_dry_run_then_run(
    bootstrap_servers: str, group_topic: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    topic, group = group_topic
    base = ["groups", "reset-offsets", group, "-b", bootstrap_servers, "--format", "json"]

    code, out, err = cli(capsys, *base, "--topic", topic, "--to-earliest", "--dry-run")
    assert code == 0, err
    plan = [json.loads(line) for line in out.splitlines()]
    assert [(p["partition"], p["current"], p["new"]) for p in plan] == [(0, 3, 0), (1, 4, 0)]
    assert asyncio.run(_committed(bootstrap_servers, group)) == {0: 3, 1: 4}

    code, out, err = cli(capsys, *base, "--all-topics", "--shift-by", "-2")
    assert code == 0, err
    assert asyncio.run(_committed(bootstrap_servers, group)) == {0: 1, 1: 2}

    code, _, err = cli(capsys, *base, "--topic", topic, "--to-offset", "100")
    assert code == 0, err  # kept within the log: the end offsets
    assert asyncio.run(_committed(bootstrap_servers, group)) == {0: 5, 1: 5}

    code, _, err = cli(capsys, *base, "--topic", topic, "--to-earliest")
    assert code == 0, err
    assert asyncio.run(_committed(bootstrap_servers, group)) == {0: 0, 1: 0}


def test_reset_offsets_refused_while_the_group_has_members(
    bootstrap_servers: str, group_topic: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    topic, group = group_topic

    argv = ["groups", "reset-offsets", group, "-b", bootstrap_servers]
    argv += ["--all-topics", "--to-latest"]
    code, _, err = asyncio.run(_with_member(bootstrap_servers, topic, group, capsys, argv))
    assert code == 1
    assert err.startswith(f"ferrokafka: error: group {group!r} has 1 active member(s)")
    assert len(err.splitlines()) == 1
    assert asyncio.run(_committed(bootstrap_servers, group)) == {0: 3, 1: 4}


def test_delete_removes_groups_without_members(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    topic = make_topic(partitions=2)
    first, second = f"{topic}-g1", f"{topic}-g2"
    for group in (first, second):
        asyncio.run(_prepare(bootstrap_servers, topic, group))
    assert asyncio.run(_committed(bootstrap_servers, first)) == {0: 3, 1: 4}

    code, out, err = cli(capsys, "groups", "delete", first, "-g", second, "-b", bootstrap_servers)

    assert code == 0, err
    assert out.splitlines() == [f"group {first!r}: deleted", f"group {second!r}: deleted"]
    assert err == ""
    code, out, _ = cli(capsys, "groups", "list", "-b", bootstrap_servers)
    assert code == 0
    assert not {first, second} & set(out.splitlines())
    assert asyncio.run(_committed(bootstrap_servers, first)) == {}


def test_delete_reports_each_group_not_deleted(
    bootstrap_servers: str, group_topic: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    topic, group = group_topic
    missing = f"{group}-missing"

    code, out, err = asyncio.run(
        _with_member(
            bootstrap_servers,
            topic,
            group,
            capsys,
            ["groups", "delete", group, missing, "-b", bootstrap_servers],
        )
    )

    assert code == 1
    assert out.splitlines() == [
        f"group {group!r}: not deleted: it has active members (stop its consumers first) "
        "(NON_EMPTY_GROUP)",
        f"group {missing!r}: not deleted: no such group (GROUP_ID_NOT_FOUND)",
    ]
    assert err == "ferrokafka: error: 2 of 2 group(s) not deleted\n"
    assert asyncio.run(_committed(bootstrap_servers, group)) == {0: 3, 1: 4}


async def _with_member(
    bootstrap_servers: str,
    topic: str,
    group: str,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
) -> tuple[int, str, str]:
    """Run the command while ``group`` has an active member: (exit code, stdout, stderr)."""
    member: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    await member.start()
    try:
        while not member.assignment():
            await member.getmany(timeout_ms=200)
        # The command runs its own event loop: give it a thread.
        code = await asyncio.to_thread(main, argv)
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    finally:
        await member.stop()
