"""The transactional producer (KIP-98): its state, and its requests to the transaction
coordinator. The producer's ``send`` path calls in here only when ``transactional_id`` is set.

* ``init`` (at ``start()``): FindCoordinator for the transactional id, then InitProducerId with
  it, which fences any older producer with the same id and finishes its open transaction.
* Before the first record of a partition in a transaction, AddPartitionsToTxn names the
  partition (concurrent sends share one request).
* ``send_offsets``: AddOffsetsToTxn, then TxnOffsetCommit to the group's coordinator.
* ``end``: wait for the sends under way, flush every batch, then EndTxn (commit or abort).

Transaction version 2 (KIP-890 part 2), used when the cluster finalized ``transaction.version``
2 or higher (Kafka 4's default), checked as each transaction begins: the partition leader adds
a partition to the transaction when a Produce of version 12 or later writes to it, and the
group coordinator adds the offsets partition on a TxnOffsetCommit of version 5, so neither
AddPartitionsToTxn nor AddOffsetsToTxn is sent; EndTxn (version 5) bumps the producer's epoch
at every commit and abort and answers with the id and epoch to use next, so a late write of
an earlier transaction is fenced. Under version 1 those three requests stay at the versions
before (Produce 11, TxnOffsetCommit 4, EndTxn 4): their newer versions tell the broker that
the producer follows version 2.

States (as the Java client's and aiokafka's): READY, IN_TRANSACTION, then COMMITTING or
ABORTING, then READY again. A failure the transaction cannot survive but the producer can (a
record that failed, a partition the coordinator refused) is ABORTABLE_ERROR: committing
raises it, aborting works. Fencing by a newer producer with the same transactional id, or a
refused authorization, is FATAL_ERROR: every later transactional call raises it.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import enum
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..config import ProducerConfig
from ..protocol import Api
from ..retry import retrying
from ..structs import OffsetAndMetadata, TopicPartition
from .idempotence import ProducerIdState

if TYPE_CHECKING:
    from .._native import (
        AddOffsetsToTxnRequest,
        AddPartitionsToTxnRequest,
        EndTxnRequest,
        InitProducerIdRequest,
        TxnOffsetCommitRequest,
        TxnOffsetCommitRequestPartition,
    )

__all__ = ["TransactionManager", "TransactionState"]

_Req = TypeVar("_Req", bound=Mapping[str, Any])
_Resp = TypeVar("_Resp")


class _Answer(TypedDict):
    """A response whose error is its top-level ``error_code``."""

    error_code: int


_Answered = TypeVar("_Answered", bound=_Answer)

log = logging.getLogger(__name__)

_COORDINATOR_MOVED = {15, 16}  # COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
#: Worth another try: the coordinator is loading or moved, or the previous transaction's end
#: is still being written (CONCURRENT_TRANSACTIONS).
_RETRIABLE = {14, 15, 16, 51}
#: The producer cannot go on: fenced (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED), its id is
#: unknown or in the wrong state (INVALID_PRODUCER_ID_MAPPING, INVALID_TXN_STATE), or it is not
#: authorized (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
_FATAL = {47, 48, 49, 53, 90}
_FENCED = {47, 90}
_OPERATION_NOT_ATTEMPTED = 55

LAST_PRODUCE_VERSION_BEFORE_TV2 = 11
_LAST_TXN_OFFSET_COMMIT_VERSION_BEFORE_TV2 = 4
_LAST_END_TXN_VERSION_BEFORE_TV2 = 4
_TRANSACTION_VERSION = "transaction.version"
_MOST_HELD_AFTER_END_TXN = 0.01
"""Seconds, at most, that the next transaction's first Produce is held after an EndTxn
(transaction version 2): below the broker's 20 ms wait it is there to avoid."""


class TransactionState(enum.Enum):
    UNINITIALIZED = "uninitialized"
    READY = "ready"
    IN_TRANSACTION = "in a transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "failed (abort the transaction)"
    FATAL_ERROR = "failed fatally (stop the producer)"


def _error(code: int, what: str, message: str | None = None) -> Errors.KafkaError:
    detail = f": {message}" if message else ""
    if code in _FENCED:
        return Errors.ProducerFenced(f"{what}{detail} (error {Errors.for_code(code).message})")
    return Errors.for_code(code)(f"{what}{detail}")


class TransactionManager:
    def __init__(
        self,
        client: AIOKafkaClient,
        config: ProducerConfig,
        ids: ProducerIdState,
    ) -> None:
        assert config.transactional_id is not None, "only a transactional producer has one"
        self.transactional_id = config.transactional_id
        self._client = client
        self._timeout_ms = config.transaction_timeout_ms
        self._ids = ids
        self._request_timeout = config.request_timeout_ms / 1000
        self._retry_backoff = config.retry_backoff_ms / 1000
        self.state = TransactionState.UNINITIALIZED
        self._error: BaseException | None = None
        self._coordinator: int | None = None
        self.partitions: set[TopicPartition] = set()
        """Partitions added to the current transaction."""
        self._pending: dict[TopicPartition, asyncio.Future[None]] = {}
        self._adding: asyncio.Task[None] | None = None
        self._offsets_added = False
        self._bump_epoch = False
        self.v2 = False
        """Whether the transaction follows transaction version 2 (fixed as it begins)."""
        self.produce_not_before = 0.0
        """The event loop's time before which the sender sends no Produce (see _end_txn)."""
        self._sends = 0
        self._sends_done = asyncio.Event()
        self._sends_done.set()

    # -- state -----------------------------------------------------------------------------

    def _raise_if_failed(self) -> None:
        if self.state in (TransactionState.ABORTABLE_ERROR, TransactionState.FATAL_ERROR):
            assert self._error is not None
            raise copy.copy(self._error)

    def _expect(self, call: str, *states: TransactionState) -> None:
        if self.state is TransactionState.FATAL_ERROR:
            self._raise_if_failed()
        if self.state not in states:
            raise Errors.IllegalOperation(
                f"{call}: the producer is {self.state.value} (transactional id "
                f"{self.transactional_id!r})"
            )

    @property
    def can_abort(self) -> bool:
        return self.state in (TransactionState.IN_TRANSACTION, TransactionState.ABORTABLE_ERROR)

    @property
    def is_fatal(self) -> bool:
        return self.state is TransactionState.FATAL_ERROR

    def failed(self, exc: BaseException) -> None:
        """A record of the transaction failed (or a transactional request did): the transaction
        can only be aborted now, or, if the producer was fenced, nothing more can be done."""
        if self.state is TransactionState.FATAL_ERROR:
            return
        if isinstance(exc, Errors.ProducerFenced) or getattr(exc, "errno", None) in _FATAL:
            self.state = TransactionState.FATAL_ERROR
            self._error = exc
            log.error("transactional id %r: %s", self.transactional_id, exc)
        elif self.state in (TransactionState.IN_TRANSACTION, TransactionState.COMMITTING):
            self.state = TransactionState.ABORTABLE_ERROR
            self._error = exc
            log.warning("transaction of %r must be aborted: %s", self.transactional_id, exc)

    def sequence_lost(self, exc: BaseException) -> None:
        """The sender no longer knows a partition's sequence: abort, then take a new epoch."""
        self._bump_epoch = True
        self.failed(exc)

    # -- sends -----------------------------------------------------------------------------

    def send_started(self) -> None:
        """A ``send`` begins (raises unless a transaction is open); ``send_finished`` must
        follow. ``end`` waits for the sends under way before it flushes."""
        if self.state is not TransactionState.IN_TRANSACTION:
            self._raise_if_failed()
            raise Errors.IllegalOperation(
                f"send: no transaction is open (the producer is {self.state.value}); "
                "call begin_transaction() first"
            )
        self._sends += 1
        self._sends_done.clear()

    def send_finished(self) -> None:
        self._sends -= 1
        if self._sends == 0:
            self._sends_done.set()

    @contextlib.contextmanager
    def sending(self) -> Iterator[None]:
        self.send_started()
        try:
            yield
        finally:
            self.send_finished()

    async def add_partition(self, tp: TopicPartition) -> None:
        """Add ``tp`` to the transaction (one AddPartitionsToTxn for every partition asked for
        while none is in flight); raises what the coordinator answered for it."""
        if tp in self.partitions:
            return
        if self.v2:
            # The leader adds it when the first Produce of the transaction reaches it.
            self.partitions.add(tp)
            return
        fut = self._pending.get(tp)
        if fut is None:
            fut = self._pending[tp] = asyncio.get_running_loop().create_future()
        if self._adding is None or self._adding.done():
            self._adding = asyncio.create_task(self._add_pending())
        await asyncio.shield(fut)

    async def _add_pending(self) -> None:
        while self._pending:
            batch = dict(self._pending)
            try:
                await self._add_partitions(list(batch))
            except BaseException as exc:
                for tp, fut in batch.items():
                    self._pending.pop(tp, None)
                    if not fut.done():
                        fut.set_exception(copy.copy(exc))
                        fut.exception()
                if isinstance(exc, Exception):
                    self.failed(exc)
                    continue
                raise
            for tp, fut in batch.items():
                self._pending.pop(tp, None)
                self.partitions.add(tp)
                if not fut.done():
                    fut.set_result(None)

    async def _add_partitions(self, tps: list[TopicPartition]) -> None:
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)

        async def attempt() -> None:
            body: AddPartitionsToTxnRequest = {
                "transactional_id": self.transactional_id,
                "producer_id": self._ids.producer_id,
                "producer_epoch": self._ids.producer_epoch,
                "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()],
            }
            response = await self._to_coordinator(Api.ADD_PARTITIONS_TO_TXN, body)
            failed: list[tuple[int, str]] = []
            for topic in response["results_by_topic"]:
                for part in topic["results_by_partition"]:
                    code = part["partition_error_code"]
                    if code and code != _OPERATION_NOT_ATTEMPTED:
                        failed.append((code, f"{topic['name']}[{part['partition_index']}]"))
            if failed:
                # The worst answer speaks for the request: fatal, then retriable, then the rest.
                failed.sort(key=lambda f: (f[0] not in _FATAL, f[0] not in _RETRIABLE))
                code = failed[0][0]
                names = ", ".join(name for c, name in failed if c == code)
                raise _error(code, f"AddPartitionsToTxn for {names}")

        await self._retrying(attempt)

    # -- offsets ---------------------------------------------------------------------------

    async def send_offsets(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], group_id: str
    ) -> None:
        """Commit ``offsets`` of ``group_id`` as part of the transaction."""
        self._expect("send_offsets_to_transaction", TransactionState.IN_TRANSACTION)
        try:
            if self.v2:
                # The group coordinator adds the offsets partition; once this is sent it may
                # be in the transaction, which then must end with EndTxn.
                self._offsets_added = True
            else:
                await self._add_offsets(group_id)
            await self._txn_offset_commit(offsets, group_id)
        except Exception as exc:
            self.failed(exc)
            raise

    async def _add_offsets(self, group_id: str) -> None:
        async def attempt() -> None:
            body: AddOffsetsToTxnRequest = {
                "transactional_id": self.transactional_id,
                "producer_id": self._ids.producer_id,
                "producer_epoch": self._ids.producer_epoch,
                "group_id": group_id,
            }
            await self._ask(Api.ADD_OFFSETS_TO_TXN, body, f"AddOffsetsToTxn for group {group_id!r}")

        await self._retrying(attempt)
        self._offsets_added = True

    async def _txn_offset_commit(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], group_id: str
    ) -> None:
        by_topic: dict[str, list[TxnOffsetCommitRequestPartition]] = {}
        for tp, om in offsets.items():
            by_topic.setdefault(tp.topic, []).append(
                {
                    "partition_index": tp.partition,
                    "committed_offset": om.offset,
                    "committed_leader_epoch": -1,
                    "committed_metadata": om.metadata,
                }
            )
        group_coordinator: list[int] = []

        async def attempt() -> None:
            if not group_coordinator:
                group_coordinator.append(await self._client.find_coordinator(group_id))
            body: TxnOffsetCommitRequest = {
                "transactional_id": self.transactional_id,
                "group_id": group_id,
                "producer_id": self._ids.producer_id,
                "producer_epoch": self._ids.producer_epoch,
                "generation_id": -1,
                "member_id": "",
                "group_instance_id": None,
                "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()],
            }
            try:
                conn = await self._client.coordinator_connection(group_coordinator[0])
                version = conn.version_for(Api.TXN_OFFSET_COMMIT.key)
                if not self.v2:
                    version = min(version, _LAST_TXN_OFFSET_COMMIT_VERSION_BEFORE_TV2)
                response = await conn.send(Api.TXN_OFFSET_COMMIT, body, version=version)
            except Errors.KafkaConnectionError:
                group_coordinator.clear()
                raise
            for topic in response["topics"]:
                for part in topic["partitions"]:
                    code = part["error_code"]
                    if code:
                        if code in _COORDINATOR_MOVED:
                            group_coordinator.clear()
                        raise _error(
                            code,
                            f"TxnOffsetCommit for group {group_id!r}, "
                            f"{topic['name']}[{part['partition_index']}]",
                        )

        await self._retrying(attempt)

    # -- the transaction's life ------------------------------------------------------------

    async def init(self) -> None:
        """InitProducerId with the transactional id (or, after lost sequences, a new epoch of
        the same producer id); the producer is READY after it."""

        async def attempt() -> None:
            bump = self._bump_epoch and self._ids.has_pid
            body: InitProducerIdRequest = {
                "transactional_id": self.transactional_id,
                "transaction_timeout_ms": self._timeout_ms,
                "producer_id": self._ids.producer_id if bump else -1,
                "producer_epoch": self._ids.producer_epoch if bump else -1,
            }
            what = f"InitProducerId for {self.transactional_id!r}"
            response = await self._ask(Api.INIT_PRODUCER_ID, body, what)
            self._ids.set_pid(response["producer_id"], response["producer_epoch"])

        try:
            await self._retrying(attempt)
        except Exception as exc:
            if getattr(exc, "errno", None) in _FATAL or isinstance(exc, Errors.ProducerFenced):
                self.state = TransactionState.FATAL_ERROR
                self._error = exc
            raise
        self._bump_epoch = False
        self.state = TransactionState.READY
        log.info(
            "transactional id %r: producer id %s epoch %s",
            self.transactional_id,
            self._ids.producer_id,
            self._ids.producer_epoch,
        )

    def begin(self) -> None:
        self._expect("begin_transaction", TransactionState.READY)
        # A change of the cluster's transaction version takes effect between transactions.
        self.v2 = self._client.finalized_feature(_TRANSACTION_VERSION) >= 2
        self.state = TransactionState.IN_TRANSACTION

    async def end(self, commit: bool, flush: Callable[[], Awaitable[None]]) -> None:
        """Commit (or abort) the open transaction: wait for the sends under way, send and
        settle every batch, then EndTxn. A commit raises the transaction's error, if it had
        one (the transaction must then be aborted)."""
        if commit:
            self._raise_if_failed()
            self._expect("commit_transaction", TransactionState.IN_TRANSACTION)
            self.state = TransactionState.COMMITTING
        else:
            self._expect(
                "abort_transaction",
                TransactionState.IN_TRANSACTION,
                TransactionState.ABORTABLE_ERROR,
            )
            self.state = TransactionState.ABORTING
        await self._sends_done.wait()
        await flush()
        if self._adding is not None:
            await asyncio.gather(self._adding, return_exceptions=True)
        self._raise_if_failed()  # a record failed while committing
        bumped = False
        if self.partitions or self._offsets_added:
            try:
                bumped = await self._end_txn(commit)
            except Exception as exc:
                self.failed(exc)
                if not self.is_fatal:
                    # Neither committed nor aborted for sure: abort_transaction() may be called.
                    self.state = TransactionState.ABORTABLE_ERROR
                    self._error = exc
                raise
        self.partitions.clear()
        self._offsets_added = False
        self._error = None
        if bumped:
            self._bump_epoch = False  # EndTxn gave the new epoch that lost sequences need
        if self._bump_epoch:
            try:
                await self.init()
            except Exception as exc:
                if not self.is_fatal:  # abort_transaction() again retries the new epoch
                    self.state = TransactionState.ABORTABLE_ERROR
                    self._error = exc
                raise
        self.state = TransactionState.READY

    async def _end_txn(self, commit: bool) -> bool:
        """EndTxn; whether it gave the producer a new epoch (transaction version 2)."""
        bumped = False

        async def attempt() -> None:
            nonlocal bumped
            body: EndTxnRequest = {
                "transactional_id": self.transactional_id,
                "producer_id": self._ids.producer_id,
                "producer_epoch": self._ids.producer_epoch,
                "committed": commit,
            }
            ending = "commit" if commit else "abort"
            what = f"EndTxn ({ending}) for {self.transactional_id!r}"
            cap = None if self.v2 else _LAST_END_TXN_VERSION_BEFORE_TV2
            loop = asyncio.get_running_loop()
            asked = loop.time()
            response = await self._ask(Api.END_TXN, body, what, max_version=cap)
            answered = loop.time()
            if self.v2:
                # The coordinator completes the transaction after answering (markers to the
                # partitions' leaders, then the completion record): writes like the one the
                # answer waited for. A Produce of the next transaction that reaches a leader
                # before then waits add.partitions.to.txn.retry.backoff.ms (20 ms) in the
                # broker, so the next transaction's first Produce waits about as long as
                # this round trip took instead, when the application is that quick.
                hold = min(answered - asked, _MOST_HELD_AFTER_END_TXN)
                self.produce_not_before = answered + hold
            next_id, next_epoch = response["producer_id"], response["producer_epoch"]
            if next_id >= 0 and (next_id, next_epoch) != (
                self._ids.producer_id,
                self._ids.producer_epoch,
            ):
                # The coordinator bumped the epoch (or, the epoch exhausted, gave a new id):
                # the next transaction writes under it, its sequences from 0.
                self._ids.set_pid(next_id, next_epoch)
                bumped = True

        await self._retrying(attempt)
        return bumped

    # -- requests --------------------------------------------------------------------------

    async def _to_coordinator(
        self, api: Api[_Req, _Resp], body: _Req, *, max_version: int | None = None
    ) -> _Resp:
        if self._coordinator is None:
            self._coordinator = await self._client.find_coordinator(self.transactional_id, 1)
        try:
            conn = await self._client.coordinator_connection(self._coordinator)
            version = conn.version_for(api.key)
            if max_version is not None:
                version = min(version, max_version)
            return await conn.send(api, body, version=version)
        except Errors.KafkaConnectionError:
            self._coordinator = None
            raise

    async def _ask(
        self, api: Api[_Req, _Answered], body: _Req, what: str, *, max_version: int | None = None
    ) -> _Answered:
        """``_to_coordinator``, raising the response's error as ``what`` failing."""
        response = await self._to_coordinator(api, body, max_version=max_version)
        if response["error_code"]:
            raise _error(response["error_code"], what)
        return response

    async def _retrying(self, attempt: Callable[[], Awaitable[None]]) -> None:
        """Run ``attempt`` until it succeeds; retriable errors (a coordinator loading or moved,
        CONCURRENT_TRANSACTIONS, a lost connection) are retried for ``request_timeout_ms``."""

        def retriable(exc: Errors.KafkaError) -> bool:
            code = getattr(exc, "errno", None)
            if code in _COORDINATOR_MOVED:
                self._coordinator = None
            again = (
                code in _RETRIABLE
                or (exc.retriable and code not in _FATAL)
                or isinstance(exc, Errors.KafkaConnectionError)
            )
            if again:
                log.debug("transactional id %r: %s; retrying", self.transactional_id, exc)
            return again

        def timed_out(exc: Errors.KafkaError) -> BaseException:
            return Errors.KafkaTimeoutError(
                f"transactional id {self.transactional_id!r}: {exc} (still failing after "
                f"{self._request_timeout:.0f}s)"
            )

        await retrying(
            attempt,
            timeout=self._request_timeout,
            backoff=self._retry_backoff,
            retriable=retriable,
            timed_out=timed_out,
        )
