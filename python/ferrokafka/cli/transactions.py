"""``ferrokafka transactions list|describe|producers|abort|fence``: transactional ids and their
state at the coordinators, the producers with state in a partition, ending a hanging
transaction and fencing producers (Kafka's ``kafka-transactions.sh``)."""

from __future__ import annotations

import argparse

from ..admin import AbortTransactionSpec, AIOKafkaAdminClient, TransactionState
from ..structs import TopicPartition
from .admin import AdminCommand, column_names
from .errors import CliError
from .output import Output
from .parsing import non_negative
from .subcommands import Subcommands

__all__ = ["add_transactions_command"]

_STATES = {s.value: s for s in TransactionState if s is not TransactionState.UNKNOWN}


def add_transactions_command(subcommands: Subcommands) -> None:
    command = AdminCommand(
        subcommands, "transactions", "list, describe, abort transactions; fence producers"
    )

    listing = command.report("list", _list, help="every transactional id the brokers coordinate")
    listing.add_argument(
        "--state", action="append", choices=sorted(_STATES), help="only these (repeatable)"
    )
    listing.add_argument("--producer-id", action="append", type=int, help="only these (repeatable)")
    listing.add_argument(
        "--duration-ms", type=non_negative, help="only transactions open for longer"
    )

    describe = command.describe(_describe, help="transactional ids at their coordinator")
    describe.add_argument("transactional_ids", nargs="+", metavar="TRANSACTIONAL_ID")

    producers = command.report(
        "producers",
        _producers,
        help="the producers with state in a partition, and their open transactions",
    )
    _partition(producers)

    abort = command.action(
        "abort",
        _abort,
        help="end a hanging transaction in a partition with an abort marker",
        description="Finds the producer whose open transaction in the partition starts at "
        "--start-offset (see `transactions producers`) and writes an abort marker for it. "
        "Needs ClusterAction on the cluster.",
    )
    _partition(abort)
    abort.add_argument("--start-offset", type=non_negative, required=True)

    fence = command.action(
        "fence",
        _fence,
        help="fence the producers of transactional ids (their open transactions abort)",
    )
    fence.add_argument("transactional_ids", nargs="+", metavar="TRANSACTIONAL_ID")


def _partition(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-t", "--topic", required=True)
    parser.add_argument("-p", "--partition", type=non_negative, required=True)


def _columns(args: argparse.Namespace, *headers: str) -> list[str]:
    return column_names([h.lower().replace("-", "_") for h in headers], args.format)


async def _list(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    listed = await admin.list_transactions(
        states=[_STATES[s] for s in args.state or []],
        producer_ids=args.producer_id or [],
        duration_ms=args.duration_ms,
    )
    out.rows(
        _columns(args, "TRANSACTIONAL-ID", "PRODUCER-ID", "STATE"),
        [[t.transactional_id, t.producer_id, t.state.value] for t in listed],
        args.format,
    )
    return 0


async def _describe(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    described = await admin.describe_transactions(args.transactional_ids)
    out.rows(
        _columns(
            args,
            "TRANSACTIONAL-ID",
            "COORDINATOR",
            "STATE",
            "PRODUCER-ID",
            "EPOCH",
            "TIMEOUT-MS",
            "START-TIME-MS",
            "PARTITIONS",
        ),
        [
            [
                tid,
                d.coordinator_id,
                d.state.value,
                d.producer_id,
                d.producer_epoch,
                d.transaction_timeout_ms,
                d.transaction_start_time_ms,
                [f"{tp.topic}:{tp.partition}" for tp in sorted(d.topic_partitions)],
            ]
            for tid, d in described.items()
        ],
        args.format,
    )
    return 0


async def _producers(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    tp = TopicPartition(args.topic, args.partition)
    states = (await admin.describe_producers([tp]))[tp]
    out.rows(
        _columns(
            args,
            "PRODUCER-ID",
            "EPOCH",
            "LAST-SEQUENCE",
            "LAST-TIMESTAMP",
            "COORDINATOR-EPOCH",
            "TXN-START-OFFSET",
        ),
        [list(s) for s in states],
        args.format,
    )
    return 0


async def _abort(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    tp = TopicPartition(args.topic, args.partition)
    states = (await admin.describe_producers([tp]))[tp]
    open_at = [s for s in states if s.current_transaction_start_offset == args.start_offset]
    if not open_at:
        starts = sorted(
            s.current_transaction_start_offset
            for s in states
            if s.current_transaction_start_offset is not None
        )
        raise CliError(
            f"no transaction in {tp.topic}:{tp.partition} starts at offset {args.start_offset} "
            f"(open ones start at: {', '.join(map(str, starts)) or 'none'})"
        )
    [state] = open_at
    await admin.abort_transaction(AbortTransactionSpec.from_producer_state(tp, state))
    out.note(
        f"aborted producer {state.producer_id}'s transaction in {tp.topic}:{tp.partition} "
        f"(from offset {args.start_offset})"
    )
    return 0


async def _fence(admin: AIOKafkaAdminClient, args: argparse.Namespace, out: Output) -> int:
    for tid, fenced in (await admin.fence_producers(args.transactional_ids)).items():
        out.line(f"{tid}: fenced (producer id {fenced.producer_id}, epoch {fenced.epoch})")
    return 0
