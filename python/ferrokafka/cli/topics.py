"""``ferrokafka topics list|describe|create|delete|add-partitions`` through the admin client.
Changes return once every broker's metadata shows them, so that the next command sees them."""

from __future__ import annotations

import argparse
import json
from typing import Any

from .. import errors as Errors
from ..admin import AIOKafkaAdminClient, ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from .admin import AdminCommand
from .errors import CliError
from .names import add_name
from .options import parse_assignment
from .output import Output
from .parsing import positive
from .subcommands import Subcommands

__all__ = ["CONFIG_SOURCES", "DEFAULT_SOURCE", "add_topics_command"]

_SETTLE_S = 30.0
# DescribeConfigs' config_source values (KIP-226).
CONFIG_SOURCES = {
    1: "topic",
    2: "broker",
    3: "broker-default",
    4: "static-broker",
    5: "default",
    6: "broker-logger",
}
DEFAULT_SOURCE = 5


def _config(text: str) -> tuple[str, str]:
    return parse_assignment(text, "--config")


def add_topics_command(subcommands: Subcommands) -> None:
    command = AdminCommand(subcommands, "topics", "list, describe, create, delete topics")

    listing = command.action("list", _list, help="topic names, one per line")
    listing.add_argument("--exclude-internal", action="store_true", help="hide __ topics")

    describe = command.describe(
        _describe, help="partitions with leader, replicas and ISR (and --configs)"
    )
    add_name(describe, "topic", many=True, required=False, help="default: every topic")
    describe.add_argument(
        "--configs", action="store_true", help="also the configs not at their default"
    )

    create = command.action("create", _create, help="create a topic")
    add_name(create, "topic")
    create.add_argument("--partitions", type=positive, default=1, help="default 1")
    create.add_argument("--replication-factor", type=positive, help="default: the broker's default")
    create.add_argument(
        "--config",
        dest="configs",
        type=_config,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a topic config (repeatable), e.g. --config retention.ms=60000",
    )

    delete = command.action("delete", _delete, help="delete topics")
    add_name(delete, "topic", many=True)

    grow = command.action(
        "add-partitions", _add_partitions, help="grow a topic to --partitions N in total"
    )
    add_name(grow, "topic")
    grow.add_argument("--partitions", type=positive, required=True, help="the new total")


def _raise_for(code: int, what: str, message: str | None) -> None:
    if code:
        detail = f": {message}" if message else ""
        error = Errors.for_code(code)
        raise CliError(f"{what}: {error.__name__}{detail}")


async def _list(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    for topic in await admin.describe_topics():
        if args.exclude_internal and (topic.get("is_internal") or topic["name"].startswith("__")):
            continue
        out.line(topic["name"])
    return 0


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    described = await admin.describe_topics(args.topics or None)
    described.sort(key=lambda t: t["name"])
    configs: dict[str, list[dict[str, Any]]] = {}
    if args.configs and described:
        resources = [ConfigResource(ConfigResourceType.TOPIC, t["name"]) for t in described]
        for response in await admin.describe_configs(resources):
            for result in response["results"]:
                configs[result["resource_name"]] = [
                    c for c in result["configs"] if c["config_source"] != DEFAULT_SOURCE
                ]
    if args.format == "json":
        for topic in described:
            entry: dict[str, Any] = {"topic": topic["name"], "partitions": _partitions(topic)}
            if args.configs:
                entry["configs"] = {c["name"]: _value(c) for c in configs.get(topic["name"], [])}
            out.line(json.dumps(entry))
        return 0
    rows = [
        [topic["name"], p["partition"], p["leader"], p["replicas"], p["isr"]]
        for topic in described
        for p in _partitions(topic)
    ]
    out.rows(["TOPIC", "PARTITION", "LEADER", "REPLICAS", "ISR"], rows)
    if args.configs:
        config_rows = [
            [name, c["name"], _value(c), CONFIG_SOURCES.get(c["config_source"], c["config_source"])]
            for name, entries in sorted(configs.items())
            for c in sorted(entries, key=lambda c: c["name"])
        ]
        out.rows(["TOPIC", "CONFIG", "VALUE", "SOURCE"], config_rows)
    return 0


def _value(config: dict[str, Any]) -> str | None:
    return "(sensitive)" if config.get("is_sensitive") else config["value"]


def _partitions(topic: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "partition": p["partition_index"],
            "leader": p["leader_id"],
            "replicas": p["replica_nodes"],
            "isr": p["isr_nodes"],
        }
        for p in sorted(topic["partitions"], key=lambda p: p["partition_index"])
    ]


async def _create(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    new = NewTopic(
        args.topic,
        num_partitions=args.partitions,
        replication_factor=args.replication_factor or -1,
        topic_configs=dict(args.configs) or None,
    )
    response = await admin.create_topics([new])
    for result in response["topics"]:
        _raise_for(
            result["error_code"], f"topic {result['name']!r} not created", result["error_message"]
        )
    await admin.wait_for_topic(args.topic, partitions=args.partitions, timeout=_SETTLE_S)
    out.note(f"created topic {args.topic!r} ({args.partitions} partition(s))")
    return 0


async def _delete(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    response = await admin.delete_topics(list(args.topics))
    for result in response["responses"]:
        _raise_for(
            result["error_code"],
            f"topic {result['name']!r} not deleted",
            result.get("error_message"),
        )
    for topic in args.topics:
        await admin.wait_for_topic(topic, present=False, timeout=_SETTLE_S)
        out.note(f"deleted topic {topic!r}")
    return 0


async def _add_partitions(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    await admin.create_partitions({args.topic: NewPartitions(args.partitions)})
    await admin.wait_for_topic(args.topic, partitions=args.partitions, timeout=_SETTLE_S)
    out.note(f"topic {args.topic!r} has {args.partitions} partitions")
    return 0
