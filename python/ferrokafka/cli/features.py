"""``ferrokafka features describe|upgrade|downgrade``: the cluster's feature levels
(``metadata.version``, ``transaction.version``...), the levels in force and those the brokers
can run, and moving them (Kafka's ``kafka-features.sh``)."""

from __future__ import annotations

import argparse

from ..admin import AIOKafkaAdminClient, FeatureUpdate, FeatureUpgradeType
from .admin import AdminCommand, column_names
from .errors import UsageError
from .options import parse_assignment
from .output import Output
from .subcommands import Subcommands

__all__ = ["add_features_command", "parse_feature", "upgrade_type"]


def parse_feature(text: str) -> tuple[str, int]:
    """``NAME=LEVEL``, the level a whole number (0 disables the feature)."""
    name, level = parse_assignment(text, "--feature")
    if not level.isdigit():
        raise argparse.ArgumentTypeError(
            f"--feature {text!r}: the level must be a whole number, e.g. transaction.version=2"
        )
    return name, int(level)


def add_features_command(subcommands: Subcommands) -> None:
    command = AdminCommand(
        subcommands, "features", "describe, upgrade and downgrade the cluster's feature levels"
    )

    command.describe(
        _describe,
        help="each feature's supported levels, its finalized level (0: off) and the epoch",
        description="The supported range is what the answering broker can run; the epoch is "
        "the offset in the metadata log of the levels in force.",
    )

    for action, moving, refused in (
        ("upgrade", "raise", "a level some broker cannot run, or a lower one (see downgrade)."),
        (
            "downgrade",
            "lower",
            "a level where metadata would be lost, unless --unsafe. Level 0 disables the feature.",
        ),
    ):
        change = command.action(
            action,
            _change,
            help=f"{moving} features' finalized levels",
            description=f"The controller refuses, naming the feature, {refused}",
        )
        change.add_argument(
            "--feature",
            dest="features",
            action="append",
            type=parse_feature,
            required=True,
            metavar="NAME=LEVEL",
            help="e.g. transaction.version=2 (repeatable)",
        )
        if action == "downgrade":
            change.add_argument(
                "--unsafe",
                action="store_true",
                help="downgrade even where metadata would be lost (refused otherwise)",
            )
        change.add_argument(
            "--dry-run", action="store_true", help="check the change, apply nothing"
        )
        change.set_defaults(downgrade=action == "downgrade", unsafe=False)


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    found = await admin.describe_features()
    columns = ["feature", "supported_min_version", "supported_max_version"]
    rows = []
    for name in sorted(set(found.supported_features) | set(found.finalized_features)):
        supported = found.supported_features.get(name)
        finalized = found.finalized_features.get(name)
        rows.append(
            [
                name,
                supported.min_version if supported else None,
                supported.max_version if supported else None,
                finalized.max_version if finalized else 0,
                found.finalized_features_epoch,
            ]
        )
    out.rows(
        column_names([*columns, "finalized_version_level", "epoch"], args.format),
        rows,
        args.format,
    )
    return 0


def upgrade_type(args: argparse.Namespace) -> FeatureUpgradeType:
    if not args.downgrade:
        return FeatureUpgradeType.UPGRADE
    return FeatureUpgradeType.UNSAFE_DOWNGRADE if args.unsafe else FeatureUpgradeType.SAFE_DOWNGRADE


async def _change(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    levels: dict[str, int] = {}
    for name, level in args.features:
        if levels.setdefault(name, level) != level:
            raise UsageError(f"--feature {name}: given two levels, {levels[name]} and {level}")
    kind = upgrade_type(args)
    await admin.update_features(
        {name: FeatureUpdate(level, kind) for name, level in levels.items()},
        validate_only=args.dry_run,
    )
    done = "can be set" if args.dry_run else "set"
    for name, level in sorted(levels.items()):
        out.note(f"{name} {done} to level {level}")
    return 0
