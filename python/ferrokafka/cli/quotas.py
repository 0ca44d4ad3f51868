"""``ferrokafka quotas describe|alter``: the client quotas of users, client ids and IPs (Kafka's
``kafka-configs.sh --entity-type users|clients|ips``). An entity is given by ``--user``,
``--client-id`` and ``--ip`` (``--user-default``, ``--client-id-default``, ``--ip-default`` for
the type's default)."""

from __future__ import annotations

import argparse

from ..admin import (
    AIOKafkaAdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    ClientQuotaFilterComponent,
)
from .admin import AdminCommand, column_names
from .errors import UsageError
from .options import parse_assignment
from .output import Output
from .subcommands import Subcommands

__all__ = ["add_quotas_command"]

# (entity type, flag stem)
_TYPES = (("user", "user"), ("client-id", "client-id"), ("ip", "ip"))


def _entity_flags(parser: argparse.ArgumentParser) -> None:
    for kind, flag in _TYPES:
        which = parser.add_mutually_exclusive_group()
        # Unset flags leave no attribute: a type not named is not part of the entity.
        which.add_argument(
            f"--{flag}",
            dest=f"q_{kind}",
            default=argparse.SUPPRESS,
            metavar="NAME",
            help=f"the {kind}",
        )
        which.add_argument(
            f"--{flag}-default",
            dest=f"q_{kind}",
            action="store_const",
            const=None,
            default=argparse.SUPPRESS,
            help=f"every {kind}'s default",
        )


def _entity(args: argparse.Namespace) -> dict[str, str | None]:
    """The entity the flags name: entity type -> name (None, the default)."""
    return {kind: getattr(args, f"q_{kind}") for kind, _ in _TYPES if hasattr(args, f"q_{kind}")}


def _quota(text: str) -> tuple[str, float]:
    name, value = parse_assignment(text, "--set")
    try:
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--set {text!r}: the value must be a number") from None


def add_quotas_command(subcommands: Subcommands) -> None:
    command = AdminCommand(
        subcommands, "quotas", "describe and alter client quotas of users, client ids and IPs"
    )

    describe = command.describe(
        _describe,
        help="the quotas of the entities matching the flags (default: every entity)",
        description="An entity type without a flag matches any name of it.",
    )
    _entity_flags(describe)
    describe.add_argument(
        "--strict", action="store_true", help="only entities with no other entity type"
    )

    alter = command.action("alter", _alter, help="set or remove an entity's quotas")
    _entity_flags(alter)
    alter.add_argument(
        "--set",
        dest="values",
        action="append",
        type=_quota,
        default=[],
        metavar="KEY=VALUE",
        help="e.g. producer_byte_rate=1048576 (repeatable)",
    )
    alter.add_argument(
        "--remove", action="append", default=[], metavar="KEY", help="drop a quota (repeatable)"
    )
    alter.add_argument(
        "--validate-only", action="store_true", help="check the change, apply nothing"
    )


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    components = [
        ClientQuotaFilterComponent.of_default_entity(kind)
        if name is None
        else ClientQuotaFilterComponent.of_entity(kind, name)
        for kind, name in _entity(args).items()
    ]
    found = await admin.describe_client_quotas(ClientQuotaFilter(tuple(components), args.strict))
    out.rows(
        column_names(["entity", "quota", "value"], args.format),
        [
            [str(entity), key, value]
            for entity, values in sorted(found.items(), key=lambda e: str(e[0]))
            for key, value in sorted(values.items())
        ],
        args.format,
    )
    return 0


async def _alter(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    entity = _entity(args)
    if not entity:
        raise UsageError("an entity is needed: --user, --client-id or --ip (or their -default)")
    ops: dict[str, float | None] = {**dict(args.values), **dict.fromkeys(args.remove)}
    if not ops:
        raise UsageError("nothing to change: give --set or --remove")
    target = ClientQuotaEntity.of(entity)
    await admin.alter_client_quotas(
        [ClientQuotaAlteration(target, ops)], validate_only=args.validate_only
    )
    out.note(
        f"{len(ops)} quota change(s) {'valid for' if args.validate_only else 'made to'} {target}"
    )
    return 0
