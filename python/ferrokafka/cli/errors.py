"""How the command fails: one line on stderr (``ferrokafka: error: ...``) and an exit code, never
a traceback unless ``--debug``; Ctrl-C exits 130 once the handler has closed its clients."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "CliError",
    "UsageError",
    "command_logging",
    "run_handler",
]

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a process Ctrl-C ended
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader (``head``) went away


class CliError(Exception):
    """A failure the user can act on; its message is the whole report."""

    exit_code = EXIT_ERROR


class UsageError(CliError):
    """Flags that do not make sense together (argparse reports the rest itself)."""

    exit_code = EXIT_USAGE


@contextlib.contextmanager
def command_logging(verbose: int, debug: bool) -> Iterator[None]:
    """While a command runs, the client's own log lines (reconnect warnings among them) stay
    quiet unless asked for: a failed command says what failed in its one error line. The
    ``ferrokafka`` logger is put back as it was afterwards, for callers of ``main()`` in a
    process of their own (an application's logging, pytest's capture)."""
    level = (
        logging.DEBUG
        if debug
        else {0: logging.CRITICAL + 1, 1: logging.WARNING}.get(verbose, logging.INFO)
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("ferrokafka")
    handlers, old_level, propagate = logger.handlers[:], logger.level, logger.propagate
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(old_level)
        logger.propagate = propagate


def describe(exc: BaseException) -> str:
    """``exc`` as one line: its message, prefixed with its type unless it already says it."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())
    if not text:
        return name
    if text.startswith(name) or isinstance(exc, CliError):
        return text
    return f"{name}: {text}"


def report(message: str) -> None:
    print(f"ferrokafka: error: {message}", file=sys.stderr, flush=True)


def run_handler(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a subcommand's handler, turning whatever it raises into an exit code."""
    debug = bool(getattr(args, "debug", False))
    try:
        return handler(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except CliError as exc:
        if debug:
            raise
        report(describe(exc))
        return exc.exit_code
    except Exception as exc:
        if debug:
            raise
        report(describe(exc))
        return EXIT_ERROR
