"""The flags every cluster command shares: where the cluster is (``-b``, defaulting to the broker
``ferrokafka broker start`` left running, else ``localhost:9092``), how to secure the
connection, ``-X name=value`` for any other client option (aiokafka's names), and ``--debug``."""

from __future__ import annotations

import argparse
import inspect
import os
import re
from collections.abc import Callable
from typing import Any

from ..helpers import create_ssl_context
from .broker import local_bootstrap
from .errors import UsageError, describe

__all__ = [
    "DEFAULT_BOOTSTRAP",
    "PASSWORD_ENV",
    "client_options",
    "common_parent",
    "connection_parent",
    "default_bootstrap",
    "parse_assignment",
    "parse_client_option",
]

DEFAULT_BOOTSTRAP = "localhost:9092"
PASSWORD_ENV = "FERROKAFKA_SASL_PASSWORD"
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
_SECRET = re.compile(r"password|secret|token|key", re.IGNORECASE)
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def default_bootstrap() -> str:
    """The local broker's address when one is running, else ``localhost:9092``."""
    return local_bootstrap() or DEFAULT_BOOTSTRAP


def parse_assignment(text: str, what: str) -> tuple[str, str]:
    """``key=value`` -> ``(key, value)``; the value may be empty or contain ``=``."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{what}: expected key=value, got {_shown(text)!r}")
    return key, value


def parse_client_option(text: str) -> tuple[str, str]:
    """``-X name=value``: ``request.timeout.ms`` and ``request-timeout-ms`` mean
    ``request_timeout_ms``."""
    key, value = parse_assignment(text, "-X")
    if not _KEY.match(key):
        raise argparse.ArgumentTypeError(f"-X: {key!r} is not an option name")
    return re.sub(r"[.-]", "_", key), value


def _shown(text: str) -> str:
    """``text`` for an error message: the value of a secret option is not repeated."""
    key, sep, _ = text.partition("=")
    return f"{key}=***" if sep and _SECRET.search(key) else text


def common_parent() -> argparse.ArgumentParser:
    """``--debug`` and ``-v``, accepted after any subcommand."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show tracebacks and the client's debug log on stderr",
    )
    parent.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS,
        help="the client's log on stderr: -v warnings, -vv info",
    )
    return parent


def connection_parent() -> argparse.ArgumentParser:
    """The connection flags of every command that talks to a cluster."""
    parent = argparse.ArgumentParser(add_help=False, parents=[common_parent()])
    group = parent.add_argument_group("connection")
    group.add_argument(
        "-b",
        "--bootstrap-server",
        metavar="HOST:PORT[,...]",
        help="default: the broker 'ferrokafka broker start' left running, else "
        f"{DEFAULT_BOOTSTRAP}",
    )
    group.add_argument(
        "--security-protocol",
        choices=SECURITY_PROTOCOLS,
        type=str.upper,
        metavar="PROTOCOL",
        help=f"{', '.join(SECURITY_PROTOCOLS)} (default: PLAINTEXT; SASL_PLAINTEXT with "
        "--sasl-username, SSL with --ssl-cafile, SASL_SSL with both)",
    )
    group.add_argument(
        "--sasl-mechanism",
        choices=SASL_MECHANISMS,
        type=str.upper,
        metavar="MECHANISM",
        help=", ".join(SASL_MECHANISMS) + " (default: PLAIN)",
    )
    group.add_argument("--sasl-username", metavar="USER")
    group.add_argument(
        "--sasl-password",
        metavar="PASSWORD",
        help=f"default: ${PASSWORD_ENV} (keeps it off the command line)",
    )
    group.add_argument("--ssl-cafile", metavar="PEM", help="CA certificates to verify brokers")
    group.add_argument("--ssl-certfile", metavar="PEM", help="client certificate (mutual TLS)")
    group.add_argument("--ssl-keyfile", metavar="PEM", help="the client certificate's key")
    group.add_argument(
        "-X",
        dest="client_options",
        metavar="NAME=VALUE",
        action="append",
        type=parse_client_option,
        default=[],
        help="any other client option by its aiokafka name, e.g. -X request_timeout_ms=5000 "
        "(repeatable)",
    )
    return parent


def _converted(name: str, value: str, default: Any) -> Any:
    """``value`` as the type of the option's default (a string for options without one)."""
    if isinstance(default, bool):
        lowered = value.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise UsageError(f"-X {name}: expected true or false, got {value!r}")
    if isinstance(default, int):
        try:
            return int(value)
        except ValueError:
            raise UsageError(f"-X {name}: expected an integer, got {_shown(value)!r}") from None
    if isinstance(default, float):
        try:
            return float(value)
        except ValueError:
            raise UsageError(f"-X {name}: expected a number, got {value!r}") from None
    if value.lower() in ("none", "null"):
        return None
    if default is None and re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def client_options(args: argparse.Namespace, client: Callable[..., Any]) -> dict[str, Any]:
    """Keyword arguments for ``client`` (a client class) from the connection flags; ``-X``
    options are checked against its parameters."""
    options: dict[str, Any] = {"bootstrap_servers": args.bootstrap_server or default_bootstrap()}
    password = args.sasl_password or os.environ.get(PASSWORD_ENV)
    if args.sasl_mechanism:
        options["sasl_mechanism"] = args.sasl_mechanism
    if args.sasl_username is not None:
        options["sasl_plain_username"] = args.sasl_username
    if password:
        options["sasl_plain_password"] = password
    protocol = args.security_protocol
    if protocol is None and (args.sasl_username or args.sasl_mechanism):
        protocol = "SASL_SSL" if args.ssl_cafile else "SASL_PLAINTEXT"
    elif protocol is None and (args.ssl_cafile or args.ssl_certfile):
        protocol = "SSL"
    if protocol:
        options["security_protocol"] = protocol
    if protocol in ("SSL", "SASL_SSL"):
        for flag, path in (
            ("--ssl-cafile", args.ssl_cafile),
            ("--ssl-certfile", args.ssl_certfile),
            ("--ssl-keyfile", args.ssl_keyfile),
        ):
            if path is not None and not os.path.isfile(path):
                raise UsageError(f"{flag}: no such file {path!r}")
        try:
            options["ssl_context"] = create_ssl_context(
                cafile=args.ssl_cafile, certfile=args.ssl_certfile, keyfile=args.ssl_keyfile
            )
        except OSError as exc:
            raise UsageError(f"cannot load the TLS files: {describe(exc)}") from None
    elif args.ssl_certfile or args.ssl_keyfile:
        raise UsageError(f"--ssl-certfile/--ssl-keyfile need TLS, not {protocol}")
    parameters = inspect.signature(client).parameters
    for name, value in args.client_options:
        parameter = parameters.get(name)
        if parameter is None or parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            raise UsageError(f"-X {name}: not an option of {getattr(client, '__name__', client)}")
        options[name] = _converted(name, value, parameter.default)
    return options
