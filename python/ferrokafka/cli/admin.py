"""What the admin commands (``topics``, ``groups``, ``configs``, ``reassign``...) share: a command
of actions with the connection flags, each action run with a started admin client, the
``--format`` flag and its column names."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..admin import AIOKafkaAdminClient
from .broker import usage
from .options import client_options, connection_parent
from .output import FORMATS, Output
from .subcommands import Subcommands

__all__ = ["AdminAction", "AdminCommand", "admin_action", "column_names", "format_parent"]

AdminAction = Callable[[AIOKafkaAdminClient, argparse.Namespace, Output], Awaitable[int]]


class AdminCommand:
    """A command of actions (its usage shown when no action is given), each taking the
    connection flags and run with a started admin client."""

    def __init__(self, subcommands: Subcommands, name: str, help: str) -> None:
        command = subcommands.add_parser(name, help=help)
        command.set_defaults(handler=lambda _args: usage(command))
        self._actions = command.add_subparsers(metavar="ACTION")
        self._plain = [connection_parent()]
        self._formatted = [*self._plain, format_parent()]

    def action(
        self,
        name: str,
        handler: AdminAction,
        *,
        check: Callable[[argparse.Namespace], None] | None = None,
        **parser_options: Any,
    ) -> argparse.ArgumentParser:
        """Add action ``name``, as :func:`admin_action`."""
        return admin_action(
            self._actions, name, handler, check=check, parents=self._plain, **parser_options
        )

    def report(
        self, name: str, handler: AdminAction, **parser_options: Any
    ) -> argparse.ArgumentParser:
        """Add action ``name`` that prints rows: a table or JSON lines (``--format``)."""
        return admin_action(self._actions, name, handler, parents=self._formatted, **parser_options)

    def describe(self, handler: AdminAction, **parser_options: Any) -> argparse.ArgumentParser:
        """Add the ``describe`` action: like every command's, it prints rows."""
        return self.report("describe", handler, **parser_options)


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


def admin_action(
    subcommands: Subcommands,
    name: str,
    action: AdminAction,
    *,
    check: Callable[[argparse.Namespace], None] | None = None,
    **parser_options: Any,
) -> argparse.ArgumentParser:
    """Add command ``name`` (``parser_options``: ``add_parser``'s) handled by ``action``;
    ``check`` (raising ``UsageError``) runs first, before connecting: a mistyped command line
    should not wait on a broker."""

    def run(args: argparse.Namespace) -> int:
        if check is not None:
            check(args)
        return asyncio.run(_with_admin(args, action))

    parser = subcommands.add_parser(name, **parser_options)
    parser.set_defaults(handler=run)
    return parser


async def _with_admin(args: argparse.Namespace, action: AdminAction) -> int:
    admin = AIOKafkaAdminClient(**client_options(args, AIOKafkaAdminClient))
    try:
        await admin.start()
        return await action(admin, args, Output())
    finally:
        await admin.close()
