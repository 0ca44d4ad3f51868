"""The admin client's transaction operations, routed as Java's ``Admin`` routes them:
DescribeProducers to each partition's leader, ListTransactions to every broker,
DescribeTransactions and InitProducerId (``fence_producers``) to each transactional id's
coordinator, and an abort marker (WriteTxnMarkers) to the partition's leader."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..protocol import Api
from ..structs import TopicPartition
from ._base import AdminBase, by_topic, partition_answers, raise_for
from .transaction_types import (
    AbortTransactionSpec,
    ProducerIdAndEpoch,
    ProducerState,
    TransactionDescription,
    TransactionListing,
    TransactionState,
)

if TYPE_CHECKING:
    from .._native import (
        DescribeProducersRequest,
        DescribeTransactionsRequest,
        InitProducerIdRequest,
        ListTransactionsRequest,
        WriteTxnMarkersRequest,
    )

__all__ = ["TransactionOperations"]

_TRANSACTION = 1
"""FindCoordinator's key type of a transactional id."""


def _known(value: int) -> int | None:
    return None if value < 0 else value


class TransactionOperations(AdminBase):
    """Producers' state in partitions and transactions' state at their coordinators."""

    async def describe_producers(
        self, partitions: Iterable[TopicPartition], timeout_ms: int | None = None
    ) -> dict[TopicPartition, list[ProducerState]]:
        """The producers with state in each partition (asked of its leader), a transaction
        still open among them with its first offset. Retried while leaders move or a topic
        is not known yet, for up to ``timeout_ms`` in all (default ``request_timeout_ms``); a
        partition's error is raised naming it."""

        async def ask(
            leader: int, led: list[TopicPartition]
        ) -> dict[TopicPartition, list[ProducerState]]:
            request: DescribeProducersRequest = {
                "topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic(led).items()]
            }
            response = await self._client.send(leader, Api.DESCRIBE_PRODUCERS, request)
            return {
                tp: [
                    ProducerState(
                        s["producer_id"],
                        s["producer_epoch"],
                        s["last_sequence"],
                        s["last_timestamp"],
                        _known(s["coordinator_epoch"]),
                        _known(s["current_txn_start_offset"]),
                    )
                    for s in p["active_producers"]
                ]
                for tp, p in partition_answers(response["topics"], "describe_producers", leader)
            }

        return await self._per_leader(partitions, "describe_producers", ask, timeout_ms)

    async def list_transactions(
        self,
        states: Iterable[TransactionState] = (),
        producer_ids: Iterable[int] = (),
        duration_ms: int | None = None,
    ) -> list[TransactionListing]:
        """Every transactional id the brokers coordinate (asked of every broker), those in
        ``states``, of ``producer_ids`` or open for longer than ``duration_ms`` when given."""
        request: ListTransactionsRequest = {
            "state_filters": [TransactionState(s).value for s in states],
            "producer_id_filters": list(producer_ids),
            "duration_filter": -1 if duration_ms is None else duration_ms,
        }
        metadata = await self._client.fetch_metadata(topics=set())

        async def list_on(broker: int) -> list[TransactionListing]:
            response = await self._client.send(broker, Api.LIST_TRANSACTIONS, request)
            raise_for(response["error_code"], f"list_transactions: broker {broker}")
            return [
                TransactionListing(
                    t["transactional_id"],
                    t["producer_id"],
                    TransactionState.parse(t["transaction_state"]),
                )
                for t in response["transaction_states"]
            ]

        listed = await asyncio.gather(*(list_on(b["node_id"]) for b in metadata["brokers"]))
        return sorted(t for ts in listed for t in ts)

    async def describe_transactions(
        self, transactional_ids: Iterable[str]
    ) -> dict[str, TransactionDescription]:
        """Each transactional id's state at its coordinator. An id the coordinator does not
        know raises ``TransactionalIdNotFoundError`` naming it; retried while a coordinator
        moves or loads."""
        wanted = list(dict.fromkeys(transactional_ids))

        async def describe(tid: str) -> TransactionDescription:
            coordinator = await self._client.find_coordinator(tid, _TRANSACTION)
            request: DescribeTransactionsRequest = {"transactional_ids": [tid]}
            response = await self._client.send(coordinator, Api.DESCRIBE_TRANSACTIONS, request)
            [state] = response["transaction_states"]
            raise_for(state["error_code"], f"describe_transactions: transactional id {tid!r}")
            return TransactionDescription(
                coordinator_id=coordinator,
                state=TransactionState.parse(state["transaction_state"]),
                producer_id=state["producer_id"],
                producer_epoch=state["producer_epoch"],
                transaction_timeout_ms=state["transaction_timeout_ms"],
                transaction_start_time_ms=_known(state["transaction_start_time_ms"]),
                topic_partitions=frozenset(
                    TopicPartition(t["topic"], p) for t in state["topics"] for p in t["partitions"]
                ),
            )

        described = await asyncio.gather(
            *(self._retrying(functools.partial(describe, tid)) for tid in wanted)
        )
        return dict(zip(wanted, described, strict=True))

    async def abort_transaction(self, spec: AbortTransactionSpec) -> None:
        """Write an abort marker for ``spec``'s producer into its partition (WriteTxnMarkers
        to the leader), ending a hanging transaction its coordinator no longer tracks; the
        spec's values come from ``describe_producers``. Needs ClusterAction on the cluster.
        A refusal (``InvalidProducerEpoch``, ``TransactionCoordinatorFenced``) is raised
        naming the partition and producer; retried while the leader moves."""
        tp = spec.topic_partition
        what = (
            f"abort_transaction: topic {tp.topic!r} partition {tp.partition} producer "
            f"{spec.producer_id} epoch {spec.producer_epoch}"
        )
        request: WriteTxnMarkersRequest = {
            "markers": [
                {
                    "producer_id": spec.producer_id,
                    "producer_epoch": spec.producer_epoch,
                    "transaction_result": False,
                    "topics": [{"name": tp.topic, "partition_indexes": [tp.partition]}],
                    "coordinator_epoch": spec.coordinator_epoch,
                }
            ]
        }

        async def ask(leader: int, _: list[TopicPartition]) -> dict[TopicPartition, None]:
            response = await self._client.send(leader, Api.WRITE_TXN_MARKERS, request)
            answered = [
                p["error_code"]
                for m in response["markers"]
                if m["producer_id"] == spec.producer_id
                for t in m["topics"]
                if t["name"] == tp.topic
                for p in t["partitions"]
                if p["partition_index"] == tp.partition
            ]
            if not answered:
                raise Errors.UnknownError(f"{what}: the leader's answer left the partition out")
            raise_for(answered[0], what)
            return {tp: None}

        await self._per_leader([tp], "abort_transaction", ask)

    async def fence_producers(
        self, transactional_ids: Iterable[str], transaction_timeout_ms: int | None = None
    ) -> dict[str, ProducerIdAndEpoch]:
        """Fence the producers of ``transactional_ids`` (InitProducerId to each id's
        coordinator, as a new producer of the id would): the coordinator bumps the epoch and
        aborts an open transaction, so an older producer of the id fails on its next request.
        Returns each id's producer id and new epoch; retried while a coordinator moves, loads
        or finishes a transaction."""
        wanted = list(dict.fromkeys(transactional_ids))
        timeout = self._timeout_ms(transaction_timeout_ms)

        async def fence(tid: str) -> ProducerIdAndEpoch:
            coordinator = await self._client.find_coordinator(tid, _TRANSACTION)
            request: InitProducerIdRequest = {
                "transactional_id": tid,
                "transaction_timeout_ms": timeout,
                "producer_id": -1,
                "producer_epoch": -1,
            }
            response = await self._client.send(coordinator, Api.INIT_PRODUCER_ID, request)
            raise_for(response["error_code"], f"fence_producers: transactional id {tid!r}")
            return ProducerIdAndEpoch(response["producer_id"], response["producer_epoch"])

        fenced = await asyncio.gather(
            *(
                # A transaction ending at the coordinator answers CONCURRENT_TRANSACTIONS
                # until it has ended.
                self._retrying(functools.partial(fence, tid), also=Errors.ConcurrentTransactions)
                for tid in wanted
            )
        )
        return dict(zip(wanted, fenced, strict=True))
