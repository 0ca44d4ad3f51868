"""``ferrokafka users describe|alter``: users' SCRAM credentials (Kafka's ``kafka-configs.sh
--entity-type users`` with ``SCRAM-SHA-256`` / ``SCRAM-SHA-512`` configs). The password is
salted here and never sent: the broker gets a random salt and the salted password."""

from __future__ import annotations

import argparse
import sys

from ..admin import (
    AIOKafkaAdminClient,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from ..admin.scram import MIN_ITERATIONS
from .admin import AdminCommand, column_names
from .errors import UsageError
from .output import Output
from .subcommands import Subcommands

__all__ = ["add_users_command", "parse_mechanism"]


def _mechanism_name(mechanism: ScramMechanism) -> str:
    return mechanism.name.replace("_", "-")


def parse_mechanism(text: str) -> ScramMechanism:
    """``SCRAM-SHA-256`` or ``SCRAM-SHA-512`` (any case, ``_`` for ``-`` too)."""
    try:
        return ScramMechanism[text.strip().upper().replace("-", "_")]
    except KeyError:
        names = " or ".join(_mechanism_name(m) for m in ScramMechanism)
        raise argparse.ArgumentTypeError(f"{text!r}: the mechanism is {names}") from None


def _iterations(text: str) -> int:
    if not text.isdigit() or int(text) < MIN_ITERATIONS:
        raise argparse.ArgumentTypeError(
            f"--iterations {text!r}: a whole number of at least {MIN_ITERATIONS}"
        )
    return int(text)


def add_users_command(subcommands: Subcommands) -> None:
    command = AdminCommand(subcommands, "users", "describe and alter users' SCRAM credentials")

    describe = command.describe(
        _describe,
        help="each credential's mechanism and iteration count (default: every user with one)",
        description="A user named with --user that has no credential is an error.",
    )
    describe.add_argument(
        "--user", dest="users", action="append", metavar="NAME", help="a user (repeatable)"
    )

    alter = command.action(
        "alter",
        _alter,
        check=_check_alter,
        help="add, replace or delete a user's SCRAM credentials",
        description="--add sets the password for a mechanism (replacing that mechanism's "
        "credential); --delete removes one. The password comes from --password or, kept out "
        "of the process list and shell history, a line of standard input (--password-stdin).",
    )
    alter.add_argument("--user", required=True, metavar="NAME", help="the user")
    for flag, what in (
        ("--add", "SCRAM-SHA-256 or SCRAM-SHA-512"),
        ("--delete", "a mechanism's credential to delete"),
    ):
        alter.add_argument(
            flag,
            action="append",
            default=[],
            type=parse_mechanism,
            metavar="MECHANISM",
            help=f"{what} (repeatable)",
        )
    alter.add_argument(
        "--iterations",
        type=_iterations,
        default=MIN_ITERATIONS,
        help=f"the added credentials' iteration count (default {MIN_ITERATIONS})",
    )
    password = alter.add_mutually_exclusive_group()
    password.add_argument("--password", help="the password of the added credentials")
    password.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    found = await admin.describe_user_scram_credentials(args.users)
    out.rows(
        column_names(["user", "mechanism", "iterations"], args.format),
        [
            [user, _mechanism_name(info.mechanism), info.iterations]
            for user, infos in sorted(found.items())
            for info in sorted(infos)
        ],
        args.format,
    )
    return 0


def _password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise UsageError("--password-stdin: standard input gave no password")
        return line
    if not args.password:
        raise UsageError("--add needs the password: --password or --password-stdin")
    password: str = args.password
    return password


def _check_alter(args: argparse.Namespace) -> None:
    if not args.add and not args.delete:
        raise UsageError("nothing to change: give --add or --delete")
    if both := sorted(set(args.add) & set(args.delete)):
        raise UsageError(f"{_mechanism_name(both[0])}: given to both --add and --delete")
    if not args.add and (args.password is not None or args.password_stdin):
        raise UsageError("a password is only for --add")
    if args.add:
        args.password = _password(args)


async def _alter(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    adds: list[ScramMechanism] = list(dict.fromkeys(args.add))
    deletes: list[ScramMechanism] = list(dict.fromkeys(args.delete))
    password: str = args.password or ""
    changes: list[tuple[UserScramCredentialUpsertion | UserScramCredentialDeletion, str]] = [
        (UserScramCredentialUpsertion(args.user, m, password, args.iterations), "set") for m in adds
    ]
    changes += [(UserScramCredentialDeletion(args.user, m), "deleted") for m in deletes]
    # One request per change: the controller refuses two changes to one user in a request.
    for change, done in changes:
        await admin.alter_user_scram_credentials([change])
        out.note(f"{args.user}: {_mechanism_name(change.mechanism)} credential {done}")
    return 0
