"""``ferrokafka share consume``: read records as a member of a share group (KIP-932), each
answered for as ``--ack`` says (accept by default; release or reject for trying things), until
``--count`` records or ``--idle-ms`` without one (``--follow``: on and on)."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import time
from typing import Any

from ..admin import AIOKafkaAdminClient, ConfigResource, ConfigResourceType
from ..share import AcknowledgeType, AIOKafkaShareConsumer
from .options import client_options, connection_parent
from .output import Output
from .parsing import positive
from .render import DECODER_HELP, DECODERS, OUTPUT_FORMATS, RecordWriter
from .subcommands import Subcommands

__all__ = ["add_share_command"]

_POLL_MS = 500

_EPILOG = """\
Members of one share group take records from the same partitions, each record locked to one
member until it is answered for: accept (done), release (delivered again, to any member, its
delivery count one higher) or reject (archived). A share group starts at the end of its topics;
--auto-offset-reset earliest sets the group's share.auto.offset.reset config first (it applies
to every member of the group).

examples:
  ferrokafka share consume -g workers -t jobs --auto-offset-reset earliest -c 10
  ferrokafka share consume -g workers -t jobs --ack release --format json   # see delivery_count
  ferrokafka share consume -g workers -t jobs --follow
"""


def add_share_command(subcommands: Subcommands) -> None:
    parser = subcommands.add_parser(
        "share",
        help="share groups (KIP-932): consume as a member",
        description="Share groups (KIP-932, queues for Kafka).",
    )
    actions = parser.add_subparsers(metavar="ACTION", required=True)
    consume = actions.add_parser(
        "consume",
        parents=[connection_parent()],
        help="read records as a member of a share group, acknowledging each",
        description="Read records as a share-group member to stdout, one per line.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    consume.add_argument("-g", "--group", required=True, help="the share group")
    consume.add_argument("-t", "--topic", action="append", required=True, help="topic (repeatable)")
    consume.add_argument(
        "--ack",
        choices=["accept", "release", "reject"],
        default="accept",
        help="how each printed record is answered for (default accept)",
    )
    consume.add_argument(
        "--auto-offset-reset",
        choices=["earliest", "latest"],
        help="set the group's share.auto.offset.reset before joining",
    )
    consume.add_argument("-c", "--count", type=positive, help="stop after this many records")
    consume.add_argument(
        "--idle-ms",
        type=positive,
        default=5000,
        help="stop when no record came for this long (default 5000; not with --follow)",
    )
    consume.add_argument(
        "-f", "--follow", action="store_true", help="keep waiting for records (Ctrl-C ends)"
    )
    consume.add_argument(
        "--format",
        choices=OUTPUT_FORMATS,
        default="raw",
        help="raw: the value alone; json: an object per line (with delivery_count); table",
    )
    consume.add_argument(
        "--key-decoder", choices=DECODERS, default="utf8", help="default utf8; " + DECODER_HELP
    )
    consume.add_argument(
        "--value-decoder", choices=DECODERS, default="utf8", help="default utf8; see above"
    )
    consume.set_defaults(handler=run_share_consume)


def run_share_consume(args: argparse.Namespace) -> int:
    return asyncio.run(_consume(args, Output()))


async def _consume(args: argparse.Namespace, out: Output) -> int:
    options: dict[str, Any] = client_options(args, AIOKafkaShareConsumer)
    if args.auto_offset_reset is not None:
        accepted = inspect.signature(AIOKafkaAdminClient).parameters
        admin_options = {k: v for k, v in options.items() if k in accepted}
        async with AIOKafkaAdminClient(**admin_options) as admin:
            await admin.alter_configs(
                [
                    ConfigResource(
                        ConfigResourceType.GROUP,
                        args.group,
                        {"share.auto.offset.reset": args.auto_offset_reset},
                    )
                ]
            )
    kind = AcknowledgeType[args.ack.upper()]
    consumer: AIOKafkaShareConsumer[bytes, bytes] = AIOKafkaShareConsumer(
        *args.topic,
        group_id=args.group,
        share_acknowledgement_mode="explicit",
        **options,
    )
    writer = RecordWriter(out, args.format, args.key_decoder, args.value_decoder, None)
    await consumer.start()
    try:
        with out.progress("consumed", args.count) as meter:
            remaining: int | None = args.count
            last = time.monotonic()
            while remaining is None or remaining > 0:
                data = await consumer.getmany(timeout_ms=_POLL_MS, max_records=remaining)
                for records in data.values():
                    for record in records:
                        writer.write(record)
                        consumer.acknowledge(record, kind)
                        meter.add(1, len(record.key or b"") + len(record.value or b""))
                        if remaining is not None:
                            remaining -= 1
                writer.out.flush()
                if data:
                    last = time.monotonic()
                    await consumer.commit()
                elif not args.follow and (time.monotonic() - last) * 1000 >= args.idle_ms:
                    break
        out.note(meter.summary())
    finally:
        await consumer.stop()
    return 0
