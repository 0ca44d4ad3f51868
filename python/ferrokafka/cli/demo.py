"""``ferrokafka demo``: the main job (see :mod:`ferrokafka.demo`)."""

from __future__ import annotations

import argparse
import sys

from .subcommands import Subcommands

__all__ = ["add_demo_command"]


def _demo(args: argparse.Namespace) -> int:
    from ..demo import run_demo

    return run_demo(sys.stdout)


def add_demo_command(subcommands: Subcommands) -> None:
    demo = subcommands.add_parser(
        "demo", help="the main job: start a local broker, create a topic, show the cluster"
    )
    demo.set_defaults(handler=_demo)
