"""``ferrokafka cluster describe``: the cluster id, the brokers with their racks and the broker
given as controller (DescribeCluster, as Java's ``Admin.describeCluster`` and Kafka's
``kafka-cluster.sh cluster-id`` read it)."""

from __future__ import annotations

import argparse

from ..admin import AIOKafkaAdminClient
from .admin import AdminCommand, column_names
from .output import Output
from .subcommands import Subcommands

__all__ = ["add_cluster_command"]


def add_cluster_command(subcommands: Subcommands) -> None:
    command = AdminCommand(subcommands, "cluster", "describe the cluster")
    describe = command.describe(
        _describe,
        help="the cluster id and every live broker, with its rack and whether it is the "
        "controller given",
        description="Under KRaft the controller quorum is out of clients' reach: the broker "
        "given as controller is a live broker the answering one picks.",
    )
    what = "also list what this client may do on the cluster (ACL operations)"
    describe.add_argument("--authorized-operations", action="store_true", help=what)


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    found = await admin.describe_cluster_result(args.authorized_operations)
    controller = found.controller.nodeId if found.controller is not None else None
    columns = ["cluster_id", "broker", "host", "port", "rack", "controller"]
    if args.authorized_operations:
        columns.append("authorized_operations")
    rows: list[list[object]] = []
    for broker in found.brokers:
        row: list[object] = [
            found.cluster_id,
            broker.nodeId,
            broker.host,
            broker.port,
            broker.rack,
            broker.nodeId == controller,
        ]
        if args.authorized_operations:
            ops = found.authorized_operations
            row.append(None if ops is None else sorted(op.name for op in ops))
        rows.append(row)
    out.rows(column_names(columns, args.format), rows, args.format)
    return 0
