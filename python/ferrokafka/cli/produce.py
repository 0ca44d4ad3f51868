"""``ferrokafka produce``: one record per line of stdin (or ``--file``), the key split off at
``-K``, the same headers on each; exits non-zero if any record was not written."""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import io
import os
import sys
import threading
from collections.abc import AsyncIterator
from typing import IO, Any

from .._native import RecordFuture
from ..producer import AIOKafkaProducer
from .errors import CliError, UsageError
from .options import client_options, connection_parent, parse_assignment
from .output import Output
from .parsing import non_negative
from .subcommands import Subcommands

__all__ = ["add_produce_command", "split_line"]

_CHUNK = 1 << 16
_READ_AHEAD = 16  # chunks the reading thread may be ahead of the producer: 1 MiB of input
_STOP_CHECK_S = 0.1  # how often that thread, waiting to hand over a chunk, looks for a stop
_IN_FLIGHT = 10_000  # records sent before waiting for their acknowledgements
_COMPRESSION = ("none", "gzip", "snappy", "lz4", "zstd")

_EPILOG = """\
examples:
  echo hello | ferrokafka produce -t events
  ferrokafka produce -t events -K : -H source=cli < lines.txt      # "key:value" lines
  ferrokafka produce -t events --file dump.txt --compression-type zstd --acks all
"""


def _header(text: str) -> tuple[str, bytes]:
    key, value = parse_assignment(text, "-H")
    return key, value.encode()


def add_produce_command(subcommands: Subcommands) -> None:
    parser = subcommands.add_parser(
        "produce",
        parents=[connection_parent()],
        help="write one record per line of stdin (or a file) to a topic",
        description="Write one record per input line (the line without its newline).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-t", "--topic", required=True)
    parser.add_argument("--file", type=argparse.FileType("rb"), help="read lines from FILE")
    parser.add_argument(
        "-K",
        "--key-separator",
        metavar="SEP",
        help="split each line at the first SEP into key and value (a line without SEP is an error)",
    )
    parser.add_argument(
        "-H",
        "--header",
        dest="headers",
        metavar="KEY=VALUE",
        action="append",
        type=_header,
        default=[],
        help="a header on every record (repeatable)",
    )
    parser.add_argument(
        "-p", "--partition", type=non_negative, help="default: the partitioner's choice"
    )
    parser.add_argument("--compression-type", choices=_COMPRESSION, default="none")
    parser.add_argument("--acks", choices=("0", "1", "all", "-1"), default="all")
    parser.add_argument("--linger-ms", type=non_negative, default=5, help="default 5")
    parser.set_defaults(handler=run_produce)


def run_produce(args: argparse.Namespace) -> int:
    source: IO[bytes] = args.file or sys.stdin.buffer
    try:
        return asyncio.run(_produce(args, source, Output()))
    finally:
        if args.file is not None:
            args.file.close()


def split_line(line: bytes, separator: bytes | None, number: int) -> tuple[bytes | None, bytes]:
    """A line (its newline removed) as ``(key, value)``."""
    if separator is None:
        return None, line
    key, sep, value = line.partition(separator)
    if not sep:
        raise CliError(f"line {number}: no key separator {separator.decode()!r}")
    return key, value


async def _lines(source: IO[bytes]) -> AsyncIterator[bytes]:
    """The lines of ``source`` without their newline (``\n`` or ``\r\n``)."""
    partial = b""
    async for chunk in _chunks(source):
        lines = (partial + chunk).split(b"\n")
        partial = lines.pop()
        for line in lines:
            yield line[:-1] if line.endswith(b"\r") else line
    if partial:
        yield partial[:-1] if partial.endswith(b"\r") else partial


async def _chunks(source: IO[bytes]) -> AsyncIterator[bytes]:
    """What ``source`` holds, as it arrives. A daemon thread reads its file descriptor (not the
    buffered file, whose lock a thread still reading at exit would hold), so that a terminal or a
    slow pipe never blocks the sender and Ctrl-C never waits for a read to return."""
    try:
        fd = source.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        while chunk := source.read(_CHUNK):  # in memory: reading never blocks
            yield chunk
        return
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes | OSError] = asyncio.Queue(maxsize=_READ_AHEAD)
    # Set when the lines are no longer wanted (the producer failed, Ctrl-C): the thread must
    # not wait forever to hand over a chunk nobody will take.
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            chunk: bytes | OSError
            try:
                chunk = os.read(fd, _CHUNK)
            except OSError as exc:  # handed to the reader: it must not wait for input forever
                chunk = exc
            try:
                handed = asyncio.run_coroutine_threadsafe(chunks.put(chunk), loop)
            except RuntimeError:  # the loop is closed
                return
            while not stop.is_set():
                try:
                    handed.result(timeout=_STOP_CHECK_S)
                    break
                except concurrent.futures.TimeoutError:
                    continue
            else:
                handed.cancel()
                return
            if not isinstance(chunk, bytes) or not chunk:
                return

    threading.Thread(target=read, name="ferrokafka-produce-input", daemon=True).start()
    try:
        while item := await chunks.get():
            if isinstance(item, OSError):
                raise CliError(f"cannot read the input: {item}") from item
            yield item
    finally:
        stop.set()


async def _produce(args: argparse.Namespace, source: IO[bytes], out: Output) -> int:
    if args.key_separator == "":
        raise UsageError("-K: the key separator must not be empty")
    options: dict[str, Any] = client_options(args, AIOKafkaProducer)
    options.setdefault("acks", args.acks if args.acks in ("all", "-1") else int(args.acks))
    options.setdefault("linger_ms", args.linger_ms)
    if args.compression_type != "none":
        options.setdefault("compression_type", args.compression_type)
    separator = None if args.key_separator is None else args.key_separator.encode()
    producer = AIOKafkaProducer(**options)
    await producer.start()
    pending: list[RecordFuture] = []
    failures: list[BaseException] = []
    try:
        with out.progress("produced") as meter:
            number = 0
            async for line in _lines(source):
                number += 1
                key, value = split_line(line, separator, number)
                pending.append(
                    await producer.send(
                        args.topic,
                        value=value,
                        key=key,
                        partition=args.partition,
                        headers=args.headers or None,
                    )
                )
                meter.add(1, len(line))
                if len(pending) >= _IN_FLIGHT:
                    failures += await _settle(pending)
            await producer.flush()
            failures += await _settle(pending)
        sent = meter.records - len(failures)
        out.note(meter.summary().replace(f"{meter.records:,} records", f"{sent:,} records", 1))
    finally:
        await producer.stop()
    if failures:
        raise CliError(
            f"{len(failures)} of {meter.records} records were not written; first: "
            f"{type(failures[0]).__name__}: {failures[0]}"
        )
    return 0


async def _settle(pending: list[RecordFuture]) -> list[BaseException]:
    results = await asyncio.gather(*pending, return_exceptions=True)
    pending.clear()
    return [r for r in results if isinstance(r, BaseException)]
