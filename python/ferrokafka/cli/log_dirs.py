"""``ferrokafka log-dirs describe|move``: brokers' log directories and the replicas in them, and
moving replicas between a broker's directories (Kafka's ``kafka-log-dirs.sh --describe``, and
the ``log_dirs`` of ``kafka-reassign-partitions.sh``'s JSON). Replicas are written
``TOPIC:PARTITION:BROKER``."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from ..admin import AIOKafkaAdminClient, TopicPartitionReplica
from .admin import AdminCommand, column_names
from .errors import UsageError
from .names import add_name
from .output import Output
from .subcommands import Subcommands

__all__ = ["add_log_dirs_command", "parse_replica"]


def parse_replica(text: str) -> tuple[TopicPartitionReplica, str]:
    """``TOPIC:PARTITION:BROKER=PATH`` (a topic name has neither ``:`` nor ``=``; the path
    may have both)."""
    where, sep, path = text.partition("=")
    topic, partition, broker = [*where.rsplit(":", 2), "", ""][:3]
    if not sep or not path or not topic or not partition.isdigit() or not broker.isdigit():
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected TOPIC:PARTITION:BROKER=PATH, e.g. events:0:2=/data/kafka-b"
        )
    return TopicPartitionReplica(topic, int(partition), int(broker)), path


def add_log_dirs_command(subcommands: Subcommands) -> None:
    command = AdminCommand(
        subcommands, "log-dirs", "describe brokers' log directories, move replicas between them"
    )

    describe = command.describe(
        _describe,
        help="each broker's log directories, their errors and the replicas in them",
        description="One row per replica: SIZE in bytes, OFFSET-LAG behind the leader (for a "
        "future replica, the copy a move is making, behind the current one). A directory "
        "holding none of them gets a row of its own, for its ERROR.",
    )
    describe.add_argument(
        "--broker",
        dest="brokers",
        action="append",
        type=_broker_id,
        default=[],
        metavar="ID",
        help="a broker to describe (repeatable; default: every broker)",
    )
    add_name(describe, "topic", many=True, required=False, help="only these topics' replicas")

    move = command.action(
        "move",
        _move,
        help="move replicas to another log directory of their broker",
        description="Returns once each broker has accepted; the broker copies the replica in "
        "the background (`log-dirs describe` shows the copy as a future replica until it "
        "takes over).",
    )
    move.add_argument(
        "--replica",
        dest="replicas",
        action="append",
        type=parse_replica,
        required=True,
        metavar="TOPIC:PARTITION:BROKER=PATH",
        help="a replica and the directory (an absolute path on its broker) to move it to "
        "(repeatable)",
    )


def _broker_id(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected a broker id, e.g. 1")
    return int(text)


async def _check_brokers(admin: AIOKafkaAdminClient, flag: str, brokers: Iterable[int]) -> None:
    """A usage error naming the brokers the cluster does not have: the admin client would
    only fail to find their address."""
    known = {int(b.nodeId) for b in (await admin.describe_cluster_result()).brokers}
    unknown = sorted(set(brokers) - known)
    if unknown:
        raise UsageError(
            f"{flag}: no broker {', '.join(map(str, unknown))} in the cluster "
            f"(its brokers: {', '.join(map(str, sorted(known)))})"
        )


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    await _check_brokers(admin, "--broker", args.brokers)
    described = await admin.describe_log_dirs(args.brokers or None)
    topics = set(args.topics)
    rows: list[list[Any]] = []
    for broker, dirs in sorted(described.items()):
        for path, d in sorted(dirs.items()):
            error = type(d.error).__name__ if d.error else None
            replicas = [
                [broker, path, error, tp.topic, tp.partition, r.size, r.offset_lag, r.is_future]
                for tp, r in sorted(d.replicas.items())
                if not topics or tp.topic in topics
            ]
            rows += replicas or [[broker, path, error, None, None, None, None, None]]
    columns = ["broker", "log_dir", "error", "topic", "partition", "size", "offset_lag"]
    out.rows(column_names([*columns, "is_future"], args.format), rows, args.format)
    return 0


async def _move(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    moves: dict[TopicPartitionReplica, str] = {}
    for replica, path in args.replicas:
        if moves.setdefault(replica, path) != path:
            raise UsageError(
                f"--replica {replica.topic}:{replica.partition}:{replica.broker_id}: given two "
                f"directories, {moves[replica]!r} and {path!r}"
            )
    await _check_brokers(admin, "--replica", (r.broker_id for r in moves))
    await admin.alter_replica_log_dirs(moves)
    for r, path in moves.items():
        out.note(f"moving {r.topic}:{r.partition} on broker {r.broker_id} to {path}")
    return 0
