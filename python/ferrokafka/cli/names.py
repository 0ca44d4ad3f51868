"""Topic and group names given either way: as positional arguments (``topics create events``)
or with Kafka's console tools' flags and kcat's short forms (``-t/--topic``, ``-g/--group``).

:func:`add_name` declares both; :func:`resolve_names` merges them into ``args.<kind>`` (or
``args.<kind>s`` for several) before the handler runs. :func:`add_partitions` declares
``-p/--partition``, which picks partitions of the named topic.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Literal

from .errors import UsageError
from .parsing import non_negative

__all__ = ["add_name", "add_partitions", "resolve_names"]

Kind = Literal["topic", "group"]
_SHORT: dict[Kind, str] = {"topic": "-t", "group": "-g"}


@dataclass(frozen=True)
class _Name:
    kind: Kind
    many: bool
    required: bool

    @property
    def dest(self) -> str:
        return f"{self.kind}s" if self.many else self.kind


def add_name(
    parser: argparse.ArgumentParser,
    kind: Kind,
    *,
    many: bool = False,
    required: bool = True,
    help: str | None = None,
) -> None:
    """Accept ``kind`` names as positional arguments and as ``-t/--topic`` (``-g/--group``),
    the flag repeatable when ``many``."""
    name = _Name(kind, many, required)
    metavar = kind.upper()
    parser.add_argument(
        f"_{name.dest}_positional", nargs="*" if many else "?", metavar=metavar, help=help
    )
    parser.add_argument(
        _SHORT[kind],
        f"--{kind}",
        dest=f"_{name.dest}_flag",
        action="append" if many else "store",
        metavar=metavar,
        help=f"the same, as a flag{' (repeatable)' if many else ''}",
    )
    names: list[_Name] = [*(parser.get_default("_names") or []), name]
    parser.set_defaults(_names=names)


def add_partitions(parser: argparse.ArgumentParser, help: str) -> None:
    """``-p/--partition N``, repeatable, into ``args.partition`` (None when not given)."""
    parser.add_argument("-p", "--partition", action="append", type=non_negative, help=help)


def resolve_names(args: argparse.Namespace) -> argparse.Namespace:
    """Set ``args.<kind>`` (or ``args.<kind>s``) from whichever form was given; a usage error
    when a required name is missing or a single one is given both ways."""
    for name in getattr(args, "_names", None) or []:
        positional = getattr(args, f"_{name.dest}_positional")
        flag = getattr(args, f"_{name.dest}_flag")
        if name.many:
            value: object = [*(positional or []), *(flag or [])]
            missing = not value
        else:
            if positional is not None and flag is not None and positional != flag:
                raise UsageError(f"two {name.kind}s given: {positional!r} and {flag!r}")
            value = flag if flag is not None else positional
            missing = value is None
        if missing and name.required:
            raise UsageError(f"a {name.kind} is needed: {_SHORT[name.kind]} {name.kind.upper()}")
        setattr(args, name.dest, value)
    return args
