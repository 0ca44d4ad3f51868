"""Share-group test helpers: group configs set through the admin client, records written with
current timestamps, and members polled until a condition holds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from ferrokafka import AIOKafkaShareConsumer
from ferrokafka.admin import AIOKafkaAdminClient, ConfigResource, ConfigResourceType
from ferrokafka.structs import ConsumerRecord

from .produce_util import produce_values


async def produce_current(
    bootstrap_servers: str, topic: str, partitions: int, per_partition: int, **options: Any
) -> None:
    """``produce_values`` with timestamps of now. Records a share group redelivers must outlive
    the test, and the broker's retention check (every 5 minutes) deletes a partition's records
    stamped long ago, rolling its active segment to do so: a redelivery waiting for a lock to
    run out would then find nothing."""
    await produce_values(
        bootstrap_servers,
        topic,
        partitions,
        per_partition,
        timestamp=int(time.time() * 1000),
        **options,
    )


async def configure_share_group(bootstrap_servers: str, group: str, **configs: str) -> None:
    """Set the share group's configs (``share_auto_offset_reset="earliest"`` for
    ``share.auto.offset.reset``) before any member joins."""
    named = {name.replace("_", "."): value for name, value in configs.items()}
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
        await admin.alter_configs([ConfigResource(ConfigResourceType.GROUP, group, named)])


async def poll_until(
    consumer: AIOKafkaShareConsumer[Any, Any],
    done: Callable[[list[ConsumerRecord[Any, Any]]], bool],
    *,
    timeout: float = 30,
    on_record: Callable[[ConsumerRecord[Any, Any]], None] | None = None,
) -> list[ConsumerRecord[Any, Any]]:
    """Every record ``consumer`` is handed until ``done(records so far)``; fails after
    ``timeout`` seconds."""
    got: list[ConsumerRecord[Any, Any]] = []
    deadline = time.monotonic() + timeout
    while not done(got):
        assert time.monotonic() < deadline, f"{len(got)} records so far"
        data = await consumer.getmany(timeout_ms=200)
        for records in data.values():
            for record in records:
                got.append(record)
                if on_record is not None:
                    on_record(record)
    return got


async def quiet_for(consumer: AIOKafkaShareConsumer[Any, Any], seconds: float) -> list[Any]:
    """What ``consumer`` is handed in the next ``seconds`` (the test expects nothing)."""
    got: list[Any] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = await consumer.getmany(timeout_ms=200)
        got.extend(r for records in data.values() for r in records)
        await asyncio.sleep(0)
    return got
