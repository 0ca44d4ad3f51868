"""What the admin commands (``topics``, ``groups``, ``configs``, ``reassign``...) share: a command
of actions with the connection flags, each action run with a started admin client, the
``--format`` flag and its column names."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from ..admin import AIOKafkaAdminClient
from .broker import usage
from .options import client_options, connection_parent
from .output import FORMATS, Output

if TYPE_CHECKING:
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = ["AdminAction", "admin_command", "column_names", "format_parent", "handle_with_admin"]

AdminAction = Callable[[AIOKafkaAdminClient, argparse.Namespace, Output], Awaitable[int]]


def admin_command(
    subcommands: Subcommands, name: str, help: str
) -> tuple[Subcommands, argparse.ArgumentParser]:
    """Add command ``name`` (its usage shown when no action is given); its actions and the
    parent parser of the connection flags they take."""
    command = subcommands.add_parser(name, help=help)
    command.set_defaults(handler=lambda _args: usage(command))
    return command.add_subparsers(metavar="ACTION"), connection_parent()


def column_names(names: Sequence[str], fmt: str) -> list[str]:
    """``names`` (``snake_case``) as JSON keys, or as table headers (``UPPER-CASE``)."""
    return list(names) if fmt == "json" else [n.upper().replace("_", "-") for n in names]


def format_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (tab-separated when piped) or json lines; default table",
    )
    return parent


def handle_with_admin(
    parser: argparse.ArgumentParser,
    action: AdminAction,
    check: Callable[[argparse.Namespace], None] | None = None,
) -> None:
    """Make ``action`` the handler of ``parser``'s command; ``check`` (raising ``UsageError``)
    runs first, before connecting: a mistyped command line should not wait on a broker."""

    def run(args: argparse.Namespace) -> int:
        if check is not None:
            check(args)
        return asyncio.run(_with_admin(args, action))

    parser.set_defaults(handler=run)


async def _with_admin(args: argparse.Namespace, action: AdminAction) -> int:
    admin = AIOKafkaAdminClient(**client_options(args, AIOKafkaAdminClient))
    try:
        await admin.start()
        return await action(admin, args, Output())
    finally:
        await admin.close()
