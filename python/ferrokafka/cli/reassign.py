"""``ferrokafka reassign move|cancel|list|elect-leaders``: move partitions' replicas to other
brokers, follow and cancel the moves, and elect leaders (Kafka's
``kafka-reassign-partitions.sh`` and ``kafka-leader-election.sh``). Partitions are written
``TOPIC:PARTITION``."""

from __future__ import annotations

import argparse

from .. import errors as Errors
from ..admin import AIOKafkaAdminClient, ElectionType
from ..structs import TopicPartition
from .admin import AdminCommand, column_names
from .errors import CliError, describe
from .output import Output
from .subcommands import Subcommands

__all__ = ["add_reassign_command", "parse_move", "parse_partition"]


def parse_partition(text: str) -> TopicPartition:
    """``TOPIC:PARTITION`` (a topic name has no colon)."""
    topic, sep, partition = text.rpartition(":")
    if not sep or not topic or not partition.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected TOPIC:PARTITION, e.g. events:0")
    return TopicPartition(topic, int(partition))


def parse_move(text: str) -> tuple[TopicPartition, list[int]]:
    """``TOPIC:PARTITION=BROKER,BROKER,...`` (the first broker the preferred leader)."""
    where, sep, brokers = text.partition("=")
    ids = brokers.split(",")
    if not sep or not all(b.strip().isdigit() for b in ids):
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected TOPIC:PARTITION=BROKER,BROKER,..., e.g. events:0=2,3"
        )
    return parse_partition(where), [int(b) for b in ids]


def add_reassign_command(subcommands: Subcommands) -> None:
    command = AdminCommand(
        subcommands, "reassign", "move partitions' replicas between brokers, elect leaders"
    )

    move = command.action(
        "move",
        _move,
        help="start moving partitions to the brokers given (the first one leads)",
        description="Returns once the controller has started the moves; `reassign list` "
        "shows those still copying.",
    )
    move.add_argument("moves", nargs="+", type=parse_move, metavar="TOPIC:PARTITION=BROKERS")

    cancel = command.action(
        "cancel", _cancel, help="cancel moves in progress (back to the old replicas)"
    )
    cancel.add_argument("partitions", nargs="+", type=parse_partition, metavar="TOPIC:PARTITION")

    listing = command.report("list", _list, help="the moves in progress")
    listing.add_argument(
        "partitions",
        nargs="*",
        type=parse_partition,
        metavar="TOPIC:PARTITION",
        help="default: all",
    )

    elect = command.action(
        "elect-leaders",
        _elect,
        help="make each partition's preferred replica (or, --unclean, any live one) its leader",
        description="Prints one line per partition: elected, or why not. Exits 1 when a "
        "partition could not get a leader (one already led by its preferred replica is fine).",
    )
    elect.add_argument(
        "partitions",
        nargs="*",
        type=parse_partition,
        metavar="TOPIC:PARTITION",
        help="default: all",
    )
    elect.add_argument(
        "--unclean",
        action="store_true",
        help="for partitions without a leader: any live replica, even out of sync (data loss)",
    )


async def _move(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    await admin.alter_partition_reassignments(dict(args.moves))
    for tp, brokers in args.moves:
        out.note(f"moving {tp.topic}:{tp.partition} to brokers {','.join(map(str, brokers))}")
    return 0


async def _cancel(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    await admin.alter_partition_reassignments(dict.fromkeys(args.partitions))
    out.note(f"cancelled {len(args.partitions)} move(s)")
    return 0


async def _list(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    moving = await admin.list_partition_reassignments(args.partitions or None)
    out.rows(
        column_names(["topic", "partition", "replicas", "adding", "removing"], args.format),
        [
            [
                tp.topic,
                tp.partition,
                list(r.replicas),
                list(r.adding_replicas),
                list(r.removing_replicas),
            ]
            for tp, r in sorted(moving.items())
        ],
        args.format,
    )
    return 0


async def _elect(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    kind = ElectionType.UNCLEAN if args.unclean else ElectionType.PREFERRED
    outcomes = await admin.elect_leaders(kind, args.partitions or None)
    failed = 0
    for tp, error in sorted(outcomes.items()):
        if error is None:
            out.line(f"{tp.topic}:{tp.partition}: elected")
        elif isinstance(error, Errors.ElectionNotNeededError):
            out.line(f"{tp.topic}:{tp.partition}: already led by its preferred replica")
        else:
            failed += 1
            out.line(f"{tp.topic}:{tp.partition}: not elected: {describe(error)}")
    if failed:
        raise CliError(f"{failed} of {len(outcomes)} partition(s) got no new leader")
    return 0
