"""The type of the subparsers each ``add_*_command`` adds its command (or action) to."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

__all__ = ["Subcommands"]

if TYPE_CHECKING:
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]
else:  # argparse's classes are not subscriptable at run time
    Subcommands = argparse._SubParsersAction
