"""``ferrokafka groups list|describe|reset-offsets|delete|delete-offsets``: consumer groups (and
share groups, KIP-932, in ``list`` and ``describe``), their members, committed offsets and lag,
moving a group's committed offsets while it has no members (as Kafka's
``kafka-consumer-groups.sh --reset-offsets`` does), deleting groups that have none, and
deleting a group's offsets of some partitions."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .. import errors as Errors
from ..admin import AIOKafkaAdminClient
from ..consumer import AIOKafkaConsumer
from ..consumer.group.subscription import ConsumerProtocolMemberAssignment
from ..structs import TopicPartition
from .admin import AdminCommand
from .errors import CliError, UsageError
from .names import add_name
from .offsets import LogOffsets, Plan, plan_reset
from .options import client_options
from .output import Output
from .parsing import parse_timestamp
from .subcommands import Subcommands

__all__ = ["add_groups_command"]

_EMPTY_STATES = ("Empty", "Dead")
_SHARE = "share"  # ListGroups' protocol type of a share group (KIP-932)
# Why a group was not deleted, in words, for the answers a user can act on.
_NOT_DELETED: dict[type[Errors.BrokerResponseError], str] = {
    Errors.NonEmptyGroup: "it has active members (stop its consumers first)",
    Errors.GroupIdNotFound: "no such group",
}


def add_groups_command(subcommands: Subcommands) -> None:
    command = AdminCommand(
        subcommands, "groups", "list, describe and delete consumer groups, reset their offsets"
    )

    listing = command.action("list", _list, help="group ids, one per line")
    listing.add_argument(
        "--type",
        choices=["consumer", "share"],
        help="only consumer groups (classic and KIP-848) or only share groups (KIP-932)",
    )

    describe = command.describe(
        _describe, help="state, members and their assignments, committed offsets and lag"
    )
    add_name(describe, "group", help="the group's id")

    reset = command.report(
        "reset-offsets",
        _reset,
        help="move a group's committed offsets (the group must have no members)",
        usage="%(prog)s [-h] [connection options] [--format {table,json}] [--dry-run]\n"
        "    (-t TOPIC | --all-topics)\n"
        "    (--to-earliest | --to-latest | --to-datetime TIME | --to-offset N | --shift-by N)\n"
        "    (GROUP | -g GROUP)",
        description="Prints the plan (GROUP TOPIC PARTITION CURRENT-OFFSET NEW-OFFSET) and, "
        "unless --dry-run, commits it. New offsets are kept within each partition's log.",
    )
    add_name(reset, "group", help="the group's id")
    which = reset.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "-t", "--topic", action="append", help="every partition of this topic (repeatable)"
    )
    which.add_argument(
        "--all-topics", action="store_true", help="every partition the group committed"
    )
    to = reset.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="each partition's first offset")
    to.add_argument("--to-latest", action="store_true", help="each partition's end offset")
    to.add_argument(
        "--to-datetime",
        type=parse_timestamp,
        metavar="TIME",
        help="the first offset at or after TIME (ms or ISO-8601; no zone: local time)",
    )
    to.add_argument("--to-offset", type=int, metavar="N", help="offset N in every partition")
    to.add_argument(
        "--shift-by",
        type=int,
        metavar="N",
        help="committed offset + N (may be negative; from the earliest where nothing is committed)",
    )
    reset.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")

    delete = command.action(
        "delete",
        _delete,
        help="delete groups that have no members, with their committed offsets",
        description="Prints one line per group: deleted, or why not. Exits 1 when any group "
        "was not deleted.",
    )
    add_name(delete, "group", many=True, help="the groups' ids")

    forget = command.action(
        "delete-offsets",
        _delete_offsets,
        help="delete a group's committed offsets of topics or partitions",
        description="The group then starts those partitions by its auto.offset.reset. A group "
        "with members keeps the offsets of the topics they are subscribed to.",
    )
    add_name(forget, "group", help="the group's id")
    forget.add_argument(
        "-t",
        "--topic",
        dest="offsets_of",
        action="append",
        required=True,
        metavar="TOPIC[:PARTITION]",
        help="a topic's partitions, or one partition (repeatable)",
    )


async def _list(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    for group_id, protocol_type in sorted(await admin.list_consumer_groups()):
        kind = "share" if protocol_type == _SHARE else "consumer"
        if args.type in (None, kind):
            out.line(group_id)
    return 0


async def _group(admin: AIOKafkaAdminClient, group_id: str) -> dict[str, Any]:
    for response in await admin.describe_consumer_groups([group_id]):
        for group in response["groups"]:
            if group["group_id"] == group_id:
                return dict(group)
    raise CliError(f"group {group_id!r} not found")


def _member(described: Mapping[str, Any], assignment: list[TopicPartition]) -> dict[str, Any]:
    """A member as ``describe`` shows it, from a consumer or share group's description."""
    return {
        "member_id": described["member_id"],
        "client_id": described["client_id"],
        "host": described["client_host"],
        "assignment": assignment,
    }


# describe's offset tables: (column, key of the offset's entry) each.
_OFFSET_COLUMNS = (
    ("TOPIC", "topic"),
    ("PARTITION", "partition"),
    ("CURRENT-OFFSET", "committed"),
    ("LOG-END-OFFSET", "log_end"),
    ("LAG", "lag"),
    ("CLIENT-ID", "client_id"),
    ("HOST", "host"),
)
_SHARE_OFFSET_COLUMNS = (
    ("TOPIC", "topic"),
    ("PARTITION", "partition"),
    ("START-OFFSET", "start"),
    ("LOG-END-OFFSET", "log_end"),
    ("LAG", "lag"),
)


def _show(
    args: argparse.Namespace,
    out: Output,
    summary: Sequence[tuple[str, str, Any]],
    members: list[dict[str, Any]],
    offsets: list[dict[str, Any]],
    offset_columns: Sequence[tuple[str, str]],
) -> int:
    """What ``describe`` prints of a group: a line of its ``summary`` ((JSON key, column,
    value) each), its members, then its ``offsets`` in ``offset_columns``; with ``--format
    json``, all of it as one object."""
    if args.format == "json":
        entry = {
            "group": args.group,
            **{key: value for key, _, value in summary},
            "members": [
                {**m, "assignment": [[tp.topic, tp.partition] for tp in m["assignment"]]}
                for m in members
            ],
            "offsets": offsets,
        }
        out.line(json.dumps(entry))
        return 0
    out.rows(
        ["GROUP", *(column for _, column, _ in summary), "MEMBERS"],
        [[args.group, *(value for _, _, value in summary), len(members)]],
    )
    if members:
        out.rows(
            ["MEMBER-ID", "CLIENT-ID", "HOST", "ASSIGNMENT"],
            [
                [
                    m["member_id"],
                    m["client_id"],
                    m["host"],
                    [f"{tp.topic}-{tp.partition}" for tp in m["assignment"]],
                ]
                for m in members
            ],
        )
    out.rows(
        [column for column, _ in offset_columns],
        [[o[key] for _, key in offset_columns] for o in offsets],
    )
    return 0


def _assignment(member: dict[str, Any]) -> list[TopicPartition]:
    if "assignment" in member:  # KIP-848 groups come decoded
        return sorted(member["assignment"])
    data = member.get("member_assignment") or b""
    if not data:
        return []
    decoded = ConsumerProtocolMemberAssignment.decode(data)
    return sorted(TopicPartition(t, p) for t, p in decoded.partitions())


async def _log_offsets(args: argparse.Namespace, partitions: list[TopicPartition]) -> LogOffsets:
    """Earliest and latest offsets (and lookups by time) through a consumer without a group."""
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        **client_options(args, AIOKafkaConsumer)
    )
    await consumer.start()
    try:
        earliest = await consumer.beginning_offsets(partitions) if partitions else {}
        latest = await consumer.end_offsets(partitions) if partitions else {}
        at_time: dict[TopicPartition, int] = {}
        when = getattr(args, "to_datetime", None)
        if when is not None and partitions:
            found = await consumer.offsets_for_times(dict.fromkeys(partitions, when))
            at_time = {tp: latest[tp] if hit is None else hit.offset for tp, hit in found.items()}
        return LogOffsets(earliest, latest, at_time)
    finally:
        await consumer.stop()


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    if (args.group, _SHARE) in await admin.list_consumer_groups():
        return await _describe_share(admin, args, out)
    group = await _group(admin, args.group)
    members = [_member(m, _assignment(m)) for m in group.get("members") or []]
    owner = {tp: m for m in members for tp in m["assignment"]}
    committed = await admin.list_consumer_group_offsets(args.group)
    partitions = sorted(set(committed) | set(owner))
    ends = (await _log_offsets(args, partitions)).latest
    offsets = []
    for tp in partitions:
        om = committed.get(tp)
        current = om.offset if om is not None and om.offset >= 0 else None
        end = ends.get(tp)
        member = owner.get(tp)
        offsets.append(
            {
                "topic": tp.topic,
                "partition": tp.partition,
                "committed": current,
                "log_end": end,
                "lag": None if current is None or end is None else max(end - current, 0),
                "member_id": member["member_id"] if member else None,
                "client_id": member["client_id"] if member else None,
                "host": member["host"] if member else None,
            }
        )
    summary = [
        ("state", "STATE", group.get("group_state")),
        ("protocol_type", "PROTOCOL-TYPE", group.get("protocol_type")),
        ("protocol", "PROTOCOL", group.get("protocol_data")),
    ]
    return _show(args, out, summary, members, offsets, _OFFSET_COLUMNS)


async def _describe_share(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    """A share group: its members (several may fetch from one partition) and where it starts
    each partition, with the records after that start as its lag."""
    (group,) = await admin.describe_share_groups([args.group])
    starts = await admin.list_share_group_offsets(args.group)
    partitions = sorted(starts)
    ends = (await _log_offsets(args, partitions)).latest
    offsets = []
    for tp in partitions:
        start = starts[tp] if starts[tp] >= 0 else None
        end = ends.get(tp)
        offsets.append(
            {
                "topic": tp.topic,
                "partition": tp.partition,
                "start": start,
                "log_end": end,
                "lag": None if start is None or end is None else max(end - start, 0),
            }
        )
    members = [_member(m, m["assignment"]) for m in group["members"]]
    summary = [
        ("type", "TYPE", _SHARE),
        ("state", "STATE", group["group_state"]),
        ("assignor", "ASSIGNOR", group["assignor_name"]),
    ]
    return _show(args, out, summary, members, offsets, _SHARE_OFFSET_COLUMNS)


async def _reset(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    group = await _group(admin, args.group)
    active = group.get("members") or []
    if active or group.get("group_state") not in _EMPTY_STATES:
        raise CliError(
            f"group {args.group!r} has {len(active)} active member(s) (state "
            f"{group.get('group_state')}): offsets can only be reset while it has none; "
            "stop its consumers first"
        )
    committed = await admin.list_consumer_group_offsets(args.group)
    if args.all_topics:
        partitions = sorted(committed)
    else:
        partitions = []
        described = await admin.describe_topics(list(args.topic))
        for topic in described:
            partitions += [
                TopicPartition(topic["name"], p["partition_index"]) for p in topic["partitions"]
            ]
        partitions.sort()
    if not partitions:
        raise UsageError(f"group {args.group!r} has no committed offsets to reset")
    log = await _log_offsets(args, partitions)
    current = {tp: om.offset for tp, om in committed.items() if om.offset >= 0}
    plan = plan_reset(partitions, current, log, _target(args))
    _print_plan(args, plan, out)
    if not args.dry_run:
        await _commit(args, plan)
        out.note(f"committed {len(plan)} offset(s) for group {args.group!r}")
    return 0


async def _delete(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    results = await admin.delete_consumer_groups(list(args.groups))
    failed = 0
    for group_id, error in results:
        if error is Errors.NoError:
            out.line(f"group {group_id!r}: deleted")
            continue
        failed += 1
        why = _NOT_DELETED.get(error) or error.description.rstrip(".") or error.__name__
        out.line(f"group {group_id!r}: not deleted: {why} ({error.message})")
    if failed:
        raise CliError(f"{failed} of {len(results)} group(s) not deleted")
    return 0


async def _delete_offsets(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    partitions: list[TopicPartition] = []
    whole: list[str] = []
    for text in args.offsets_of:
        topic, sep, partition = text.rpartition(":")
        if sep and topic and partition.isdigit():
            partitions.append(TopicPartition(topic, int(partition)))
        else:
            whole.append(text)
    if whole:
        for topic in await admin.describe_topics(whole):
            partitions += [
                TopicPartition(topic["name"], p["partition_index"]) for p in topic["partitions"]
            ]
    await admin.delete_consumer_group_offsets(args.group, partitions)
    out.note(f"deleted group {args.group!r}'s offsets of {len(partitions)} partition(s)")
    return 0


def _target(args: argparse.Namespace) -> tuple[str, int]:
    if args.to_earliest:
        return ("earliest", 0)
    if args.to_latest:
        return ("latest", 0)
    if args.to_datetime is not None:
        return ("datetime", args.to_datetime)
    if args.to_offset is not None:
        return ("offset", args.to_offset)
    return ("shift", args.shift_by)


def _print_plan(args: argparse.Namespace, plan: list[Plan], out: Output) -> None:
    out.rows(
        ["group", "topic", "partition", "current", "new"]
        if args.format == "json"
        else ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"],
        [[args.group, p.partition.topic, p.partition.partition, p.current, p.new] for p in plan],
        args.format,
    )


async def _commit(args: argparse.Namespace, plan: list[Plan]) -> None:
    """Commit as a consumer of the group that assigns itself the partitions: with no
    generation, which the coordinator accepts only while the group is empty."""
    options = client_options(args, AIOKafkaConsumer)
    options["enable_auto_commit"] = False
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(group_id=args.group, **options)
    await consumer.start()
    try:
        consumer.assign([p.partition for p in plan])
        await consumer.commit({p.partition: p.new for p in plan})
    finally:
        await consumer.stop()
