"""``ferrokafka configs describe|alter``: the configuration of a topic, a broker, every
broker's cluster-wide default, or a broker's loggers (Kafka's ``kafka-configs.sh``).
``alter`` changes single keys (IncrementalAlterConfigs): the keys not named keep their
values."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from ..admin import (
    AIOKafkaAdminClient,
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResource,
    ConfigResourceType,
)
from .admin import AdminCommand, column_names
from .errors import UsageError
from .options import parse_assignment
from .output import Output
from .subcommands import Subcommands
from .topics import CONFIG_SOURCES, DEFAULT_SOURCE

__all__ = ["add_configs_command"]

# alter's flags: (flag, operation, takes NAME=VALUE).
_CHANGES = (
    ("--set", AlterConfigOpType.SET, True),
    ("--delete", AlterConfigOpType.DELETE, False),
    ("--append", AlterConfigOpType.APPEND, True),
    ("--subtract", AlterConfigOpType.SUBTRACT, True),
)


def _entity(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("-t", "--topic", help="a topic")
    which.add_argument("--broker", metavar="ID", help="a broker, by id")
    which.add_argument("--broker-default", action="store_true", help="the default of every broker")
    which.add_argument("--broker-logger", metavar="ID", help="a broker's log4j loggers")


def _resource(args: argparse.Namespace) -> ConfigResource:
    if args.topic is not None:
        return ConfigResource(ConfigResourceType.TOPIC, args.topic)
    if args.broker_logger is not None:
        return ConfigResource(ConfigResourceType.BROKER_LOGGER, args.broker_logger)
    return ConfigResource(ConfigResourceType.BROKER, "" if args.broker_default else args.broker)


def add_configs_command(subcommands: Subcommands) -> None:
    command = AdminCommand(subcommands, "configs", "describe and alter topic and broker configs")

    describe = command.describe(
        _describe, help="the configs set (NAME VALUE SOURCE); --all for every key"
    )
    _entity(describe)
    describe.add_argument("--all", action="store_true", help="also the keys at their default")

    alter = command.action(
        "alter",
        _alter,
        check=_check_alter,
        help="set, delete, append to or subtract from single configs",
        description="Each flag is repeatable; the keys not named keep their values. --append "
        "and --subtract change list-valued configs item by item (cleanup.policy=compact).",
    )
    _entity(alter)
    for flag, op, assignment in _CHANGES:
        alter.add_argument(
            flag,
            dest="changes",
            action="append",
            type=_change(flag, op, assignment),
            default=[],
            metavar="NAME=VALUE" if assignment else "NAME",
            help=f"{op.name.lower()} a config" + ("" if assignment else " (back to its default)"),
        )
    alter.add_argument(
        "--validate-only", action="store_true", help="check the changes, apply nothing"
    )


def _check_alter(args: argparse.Namespace) -> None:
    if not args.changes:
        raise UsageError("nothing to change: give --set, --delete, --append or --subtract")


def _change(flag: str, op: AlterConfigOpType, assignment: bool) -> Callable[[str], AlterConfigOp]:
    def parse(text: str) -> AlterConfigOp:
        if assignment:
            name, value = parse_assignment(text, flag)
            return AlterConfigOp(name, value, op)
        return AlterConfigOp(text, None, op)

    return parse


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    [response] = await admin.describe_configs([_resource(args)])
    rows = [
        [
            c["name"],
            "(sensitive)" if c["is_sensitive"] else c["value"],
            CONFIG_SOURCES.get(c["config_source"], c["config_source"]),
        ]
        for result in response["results"]
        for c in sorted(result["configs"], key=lambda c: c["name"])
        if args.all or c["config_source"] != DEFAULT_SOURCE
    ]
    out.rows(column_names(["name", "value", "source"], args.format), rows, args.format)
    return 0


async def _alter(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    resource = _resource(args)
    await admin.incremental_alter_configs(
        {resource: args.changes}, validate_only=args.validate_only
    )
    kind = resource.resource_type.name.lower().replace("_", " ")
    what = f"{kind} {resource.name!r}" if resource.name else "the broker default"
    verb = "valid for" if args.validate_only else "altered"
    out.note(f"{len(args.changes)} change(s) {verb} {what}")
    return 0
