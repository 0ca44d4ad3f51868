"""``ferrokafka consume``: read records from partitions (assigned by flags) or as a member of a
group (``-g``, committing what it printed), from an offset or a time, up to the end offsets seen
at the start (kcat's ``-e``), a count, an offset or a time, or on and on with ``--follow``."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from ..consumer import AIOKafkaConsumer
from ..structs import OffsetAndMetadata, TopicPartition
from .errors import CliError, UsageError
from .names import add_partitions
from .options import client_options, connection_parent
from .output import Output, Progress
from .parsing import OffsetSpec, non_negative, parse_offset, parse_timestamp, positive
from .render import DECODER_HELP, DECODERS, OUTPUT_FORMATS, RecordWriter
from .subcommands import Subcommands

__all__ = ["add_consume_command"]

_POLL_MS = 500
_COMMIT_EVERY_S = 5.0

_EPILOG = """\
Without --follow it stops at the end offsets seen when it started (or at --to-offset/
--to-timestamp, or after --count records). It starts at the beginning unless told otherwise;
with --follow, at the end. With -g it reads as a member of the group: from the group's committed
offsets (else the beginning; with --follow, the end), committing what it printed when it stops.

examples:
  ferrokafka consume -t events --format json -c 10
  ferrokafka consume -t events -p 0 --offset -5          # the last 5 records of partition 0
  ferrokafka consume -t events --from-timestamp 2024-05-01T12:00:00Z
  ferrokafka consume -t events -g audit --follow
"""


def add_consume_command(subcommands: Subcommands) -> None:
    parser = subcommands.add_parser(
        "consume",
        parents=[connection_parent()],
        help="read records from a topic (or as a group member) to stdout",
        description="Read records to stdout, one per line.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-t", "--topic", action="append", required=True, help="topic (repeatable with -g)"
    )
    parser.add_argument("-g", "--group", help="consume as a member of this group and commit")
    add_partitions(parser, "only this partition (repeatable; default all)")
    start = parser.add_mutually_exclusive_group()
    start.add_argument(
        "-o",
        "--offset",
        type=parse_offset,
        help="start at: earliest|beginning, latest|end, N (an offset) or -N (N before the end)",
    )
    start.add_argument(
        "--from-beginning",
        action="store_true",
        help="start at the earliest (with -g: where the group committed nothing)",
    )
    start.add_argument(
        "--from-timestamp",
        type=parse_timestamp,
        metavar="TIME",
        help="start at the first record at or after TIME (ms since the epoch or ISO-8601; "
        "no zone: local time)",
    )
    parser.add_argument(
        "--to-offset", type=non_negative, metavar="N", help="stop before offset N (per partition)"
    )
    parser.add_argument(
        "--to-timestamp",
        type=parse_timestamp,
        metavar="TIME",
        help="stop before the first record at or after TIME",
    )
    parser.add_argument("-c", "--count", type=positive, help="stop after this many records")
    parser.add_argument(
        "-f", "--follow", action="store_true", help="keep waiting for new records (Ctrl-C ends)"
    )
    parser.add_argument(
        "--format",
        choices=OUTPUT_FORMATS,
        default="raw",
        help="raw: the value alone; json: an object per line with topic, partition, offset, "
        "timestamp (ms), key, value and headers ([key, value] pairs, values as UTF-8, or "
        "base64 with --value-decoder bytes); table: aligned columns. Default raw",
    )
    parser.add_argument(
        "--key-decoder", choices=DECODERS, default="utf8", help="default utf8; " + DECODER_HELP
    )
    parser.add_argument(
        "--value-decoder", choices=DECODERS, default="utf8", help="default utf8; see above"
    )
    parser.add_argument(
        "-K",
        "--key-separator",
        metavar="SEP",
        help="--format raw: print the key, SEP, then the value",
    )
    parser.set_defaults(handler=run_consume)


def run_consume(args: argparse.Namespace) -> int:
    _check(args)
    return asyncio.run(_consume(args, Output()))


def _check(args: argparse.Namespace) -> None:
    if args.group is not None:
        if args.partition or args.offset is not None or args.from_timestamp is not None:
            raise UsageError(
                "-g starts at the group's committed offsets: -p, --offset and "
                "--from-timestamp need no group (reset a group with 'groups reset-offsets')"
            )
    elif len(args.topic) > 1:
        raise UsageError("several -t need a group (-g); without one, consume one topic")


class _Stops:
    """Where each partition stops (exclusive); None: never (``--follow``)."""

    def __init__(self, args: argparse.Namespace, consumer: AIOKafkaConsumer[bytes, bytes]) -> None:
        self.args = args
        self.consumer = consumer
        self.at: dict[TopicPartition, int | None] = {}

    async def add(self, partitions: set[TopicPartition]) -> None:
        new = sorted(partitions - self.at.keys())
        if not new:
            return
        limits: dict[TopicPartition, list[int]] = {tp: [] for tp in new}
        if not self.args.follow:
            for tp, end in (await self.consumer.end_offsets(new)).items():
                limits[tp].append(end)
        if self.args.to_offset is not None:
            for tp in new:
                limits[tp].append(self.args.to_offset)
        if self.args.to_timestamp is not None:
            found = await self.consumer.offsets_for_times(
                dict.fromkeys(new, self.args.to_timestamp)
            )
            ends = await self.consumer.end_offsets(new)
            for tp in new:
                hit = found.get(tp)
                limits[tp].append(ends[tp] if hit is None else hit.offset)
        for tp in new:
            self.at[tp] = min(limits[tp]) if limits[tp] else None


async def _assign(args: argparse.Namespace, consumer: AIOKafkaConsumer[bytes, bytes]) -> None:
    """Assign the partitions asked for and seek each to where the flags say to start."""
    topic = args.topic[0]
    known = consumer.partitions_for_topic(topic) or set()
    wanted = set(args.partition) if args.partition else known
    missing = wanted - known
    if missing:
        raise CliError(f"topic {topic!r} has no partition {sorted(missing)} (has {len(known)})")
    partitions = [TopicPartition(topic, p) for p in sorted(wanted)]
    consumer.assign(partitions)
    earliest = await consumer.beginning_offsets(partitions)
    latest = await consumer.end_offsets(partitions)
    if args.from_timestamp is not None:
        found = await consumer.offsets_for_times(dict.fromkeys(partitions, args.from_timestamp))
        for tp in partitions:
            hit = found.get(tp)
            consumer.seek(tp, latest[tp] if hit is None else hit.offset)
        return
    spec: OffsetSpec = args.offset or OffsetSpec(
        "earliest" if args.from_beginning or not args.follow else "latest"
    )
    for tp in partitions:
        consumer.seek(tp, spec.resolve(earliest[tp], latest[tp]))


async def _consume(args: argparse.Namespace, out: Output) -> int:
    options: dict[str, Any] = client_options(args, AIOKafkaConsumer)
    options.setdefault("enable_auto_commit", False)
    options.setdefault("allow_auto_create_topics", False)
    options.setdefault("exclude_internal_topics", False)  # so that they can be named
    if args.group is not None:
        fresh_start = args.from_beginning or not args.follow
        options.setdefault("auto_offset_reset", "earliest" if fresh_start else "latest")
    else:
        options.setdefault("auto_offset_reset", "earliest")
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(group_id=args.group, **options)
    writer = RecordWriter(
        out, args.format, args.key_decoder, args.value_decoder, args.key_separator
    )
    processed: dict[TopicPartition, int] = {}
    await consumer.start()
    try:
        existing = await consumer.topics()
        missing = [t for t in args.topic if t not in existing]
        if missing:
            raise CliError(f"topic {', '.join(map(repr, missing))} does not exist")
        if args.group is None:
            await _assign(args, consumer)
        else:
            consumer.subscribe(topics=list(args.topic))
        with out.progress("consumed", args.count) as meter:
            await _loop(args, consumer, writer, processed, meter)
        out.note(meter.summary())
    finally:
        try:
            if args.group is not None:
                await _commit(consumer, processed)
        finally:
            await consumer.stop()
    return 0


async def _commit(
    consumer: AIOKafkaConsumer[bytes, bytes], processed: dict[TopicPartition, int]
) -> None:
    """Commit what was printed of the partitions still assigned."""
    owned = consumer.assignment()
    offsets: dict[TopicPartition, int | tuple[int, str] | OffsetAndMetadata] = {
        tp: offset for tp, offset in processed.items() if tp in owned
    }
    if offsets:
        await consumer.commit(offsets)


async def _loop(
    args: argparse.Namespace,
    consumer: AIOKafkaConsumer[bytes, bytes],
    writer: RecordWriter,
    processed: dict[TopicPartition, int],
    meter: Progress,
) -> None:
    stops = _Stops(args, consumer)
    remaining: int | None = args.count
    last_commit = time.monotonic()
    while True:
        batch = await consumer.getmany(timeout_ms=_POLL_MS)
        assigned = consumer.assignment()
        await stops.add(assigned)
        for tp, records in batch.items():
            stop = stops.at.get(tp)
            for record in records:
                if stop is not None and record.offset >= stop:
                    break
                writer.write(record)
                processed[tp] = record.offset + 1
                meter.add(1, len(record.key or b"") + len(record.value or b""))
                if remaining is not None:
                    remaining -= 1
                    if remaining == 0:
                        writer.out.flush()
                        return
        writer.out.flush()
        if args.group is not None and time.monotonic() - last_commit > _COMMIT_EVERY_S:
            await _commit(consumer, processed)
            last_commit = time.monotonic()
        if await _finished(consumer, assigned, stops, meter):
            return


async def _finished(
    consumer: AIOKafkaConsumer[bytes, bytes],
    assigned: set[TopicPartition],
    stops: _Stops,
    meter: Progress,
) -> bool:
    """Whether every assigned partition reached its stop; pauses those that did. Positions
    rather than record offsets decide, so that a transaction marker at the end still ends."""
    if not assigned:
        return False
    done = True
    lag = 0
    for tp in assigned:
        position = await consumer.position(tp)
        stop = stops.at.get(tp)
        end = stop if stop is not None else consumer.highwater(tp)
        if end is not None:
            lag += max(end - position, 0)
        if stop is None or position < stop:
            done = False
        elif tp not in consumer.paused():
            consumer.pause(tp)
    meter.lag = lag
    return done
