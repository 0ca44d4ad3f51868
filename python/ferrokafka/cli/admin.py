"""What ``topics`` and ``groups`` share: each action runs with a started admin client, and
their ``--format`` flag."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable

from ..admin import AIOKafkaAdminClient
from .options import client_options
from .output import FORMATS, Output

__all__ = ["AdminAction", "format_parent", "handle_with_admin"]

AdminAction = Callable[[AIOKafkaAdminClient, argparse.Namespace, Output], Awaitable[int]]


def format_parent() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--format",
        choices=FORMATS,
        default="table",
        help="table (tab-separated when piped) or json lines; default table",
    )
    return parent


def handle_with_admin(parser: argparse.ArgumentParser, action: AdminAction) -> None:
    """Make ``action`` the handler of ``parser``'s command."""

    def run(args: argparse.Namespace) -> int:
        return asyncio.run(_with_admin(args, action))

    parser.set_defaults(handler=run)


async def _with_admin(args: argparse.Namespace, action: AdminAction) -> int:
    admin = AIOKafkaAdminClient(**client_options(args, AIOKafkaAdminClient))
    try:
        await admin.start()
        return await action(admin, args, Output())
    finally:
        await admin.close()
