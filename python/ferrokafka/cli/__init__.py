"""The ``ferrokafka`` command: kcat-style ``consume`` and ``produce``, ``topics``, ``offsets``,
``configs``, ``groups``, ``transactions``, ``reassign``, ``log-dirs``, ``quotas``, ``users``,
``features``, ``cluster`` and ``share`` (Kafka's console tools' flags, kcat's short forms),
``bench``, and ``broker`` for a local Kafka.

Each subcommand registers itself through an ``add_*_command`` function listed in
:data:`COMMANDS`; :func:`main` runs the chosen handler, turning failures into one line on stderr
and an exit code (:mod:`.errors`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from .. import __version__
from .bench import add_bench_command, run_harness
from .broker import add_broker_command, usage
from .cluster import add_cluster_command
from .configs import add_configs_command
from .consume import add_consume_command
from .demo import add_demo_command
from .errors import command_logging, run_handler
from .features import add_features_command
from .groups import add_groups_command
from .list_offsets import add_offsets_command
from .log_dirs import add_log_dirs_command
from .names import resolve_names
from .produce import add_produce_command
from .quotas import add_quotas_command
from .reassign import add_reassign_command
from .share import add_share_command
from .subcommands import Subcommands
from .topics import add_topics_command
from .transactions import add_transactions_command
from .users import add_users_command

__all__ = ["COMMANDS", "build_parser", "main"]

#: Every subcommand's registration function, in help order.
COMMANDS: list[Callable[[Subcommands], None]] = [
    add_consume_command,
    add_produce_command,
    add_topics_command,
    add_offsets_command,
    add_configs_command,
    add_groups_command,
    add_transactions_command,
    add_reassign_command,
    add_log_dirs_command,
    add_quotas_command,
    add_users_command,
    add_features_command,
    add_cluster_command,
    add_share_command,
    add_bench_command,
    add_broker_command,
    add_demo_command,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ferrokafka",
        description="ferrokafka: an asyncio Kafka client with a Rust core, and its command line",
    )
    parser.add_argument("--version", action="version", version=f"ferrokafka {__version__}")
    parser.add_argument("--debug", action="store_true", help="tracebacks and debug logs")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="client log lines")
    parser.set_defaults(handler=lambda _args: usage(parser))
    subcommands = parser.add_subparsers(metavar="COMMAND")
    for register in COMMANDS:
        register(subcommands)
    return parser


def _harness_args(argv: Sequence[str]) -> list[str] | None:
    """The harness's arguments when ``argv`` is ``[--debug] bench harness ...``: passed on
    untouched, since argparse would read the harness's own flags as ours."""
    rest = list(argv)
    while rest and rest[0] in ("--debug", "-v", "--verbose"):
        rest.pop(0)
    if rest[:2] == ["bench", "harness"]:
        return rest[2:]
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    harness = _harness_args(arguments)
    if harness is not None:
        return run_handler(lambda _args: run_harness(harness), argparse.Namespace(debug=False))
    args = build_parser().parse_args(arguments)
    handler: Callable[[argparse.Namespace], int] = args.handler
    with command_logging(args.verbose, args.debug):
        return run_handler(lambda parsed: handler(resolve_names(parsed)), args)
