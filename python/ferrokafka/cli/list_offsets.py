"""``ferrokafka offsets``: the earliest, latest or max-timestamp offset of a topic's partitions,
or the first offset at or after a time (Kafka's ``kafka-get-offsets.sh``), one ListOffsets
per partition leader."""

from __future__ import annotations

import argparse

from ..admin import AIOKafkaAdminClient, OffsetSpec
from ..structs import TopicPartition
from .admin import admin_action, column_names, format_parent
from .names import add_name, add_partitions
from .options import connection_parent
from .output import Output
from .parsing import parse_timestamp
from .subcommands import Subcommands

__all__ = ["add_offsets_command"]


def add_offsets_command(subcommands: Subcommands) -> None:
    offsets = admin_action(
        subcommands,
        "offsets",
        _offsets,
        parents=[connection_parent(), format_parent()],
        help="partitions' earliest, latest or max-timestamp offsets, or the offset at a time",
        description="Prints TOPIC PARTITION OFFSET TIMESTAMP LEADER-EPOCH per partition; "
        "OFFSET -1 when no record matches (a time after the last record).",
    )
    add_name(offsets, "topic", help="the topic")
    add_partitions(offsets, "only this partition (repeatable); default: every partition")
    spec = offsets.add_mutually_exclusive_group()
    spec.add_argument("--earliest", action="store_true", help="each partition's first offset")
    spec.add_argument(
        "--latest", action="store_true", help="the offset after the last record (the default)"
    )
    spec.add_argument(
        "--max-timestamp", action="store_true", help="the record with the largest timestamp"
    )
    spec.add_argument(
        "--time",
        type=parse_timestamp,
        metavar="TIME",
        help="the first offset at or after TIME (ms or ISO-8601; no zone: local time)",
    )
    offsets.add_argument(
        "--read-committed",
        action="store_true",
        help="latest is the last stable offset (before open transactions)",
    )


def _spec(args: argparse.Namespace) -> OffsetSpec:
    if args.earliest:
        return OffsetSpec.earliest()
    if args.max_timestamp:
        return OffsetSpec.max_timestamp()
    if args.time is not None:
        return OffsetSpec.for_timestamp(args.time)
    return OffsetSpec.latest()


async def _offsets(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    if args.partition:
        partitions = [TopicPartition(args.topic, p) for p in args.partition]
    else:
        [topic] = await admin.describe_topics([args.topic])
        partitions = [TopicPartition(args.topic, p["partition_index"]) for p in topic["partitions"]]
    spec = _spec(args)
    isolation = "read_committed" if args.read_committed else "read_uncommitted"
    found = await admin.list_offsets(dict.fromkeys(partitions, spec), isolation)
    out.rows(
        column_names(["topic", "partition", "offset", "timestamp", "leader_epoch"], args.format),
        [[tp.topic, tp.partition, *found[tp]] for tp in sorted(found)],
        args.format,
    )
    return 0
