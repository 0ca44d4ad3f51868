"""The sans-I/O protocol core (Rust). Bytes in, values out: no sockets, no threads.

Requests and responses cross as dicts of their fields, named in snake_case after Kafka's message
schemas; fields a version lacks may be omitted (their defaults apply) and unknown names are
rejected. Their shapes are the ``TypedDict``s at the end of this stub, generated from the Rust
message declarations (for type checking only: at run time they are plain dicts).

Decoding failures raise ``ferrokafka.errors.ProtocolDecodeError`` (a hostile frame size
``FrameTooLargeError``); an API or version ferrokafka does not speak raises
``ferrokafka.errors.IncompatibleBrokerVersion``; a dict of the wrong shape raises ``TypeError``.
"""

import asyncio
import contextvars
import mmap
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping, Sequence
from typing import Any, Generic, TypedDict, TypeVar, final, overload, type_check_only

from typing_extensions import NotRequired

from .structs import RecordMetadata, TopicPartition

__all__ = [
    "BATCH_HEADER_LEN",
    "DEFAULT_MAX_DECOMPRESSED_BATCH",
    "DEFAULT_MAX_FRAME_SIZE",
    "ArrowColumns",
    "ArrowRecordChunk",
    "AvroReader",
    "BatchRecords",
    "ConsumerRecord",
    "DecodedPartition",
    "Generation",
    "GetOne",
    "OpenBatches",
    "PollClock",
    "ReceiveWindow",
    "RecordFuture",
    "RecordFutureIter",
    "RecordRun",
    "RecordStream",
    "SendMethod",
    "SendStep",
    "SharedBytes",
    "Step",
    "TopicBatches",
    "_FrameDecoder",
    "__version__",
    "_free_lists",
    "_records_direct_alloc",
    "arena_cache_info",
    "avro_schema_ids",
    "batch_last_offsets",
    "batch_position",
    "decode_columns",
    "decode_fetch_response",
    "decode_held_records",
    "decode_json",
    "decode_records",
    "decode_request",
    "decode_response",
    "decode_share_fetch_response",
    "encode_avro",
    "encode_batch",
    "encode_json",
    "encode_produce_request",
    "encode_request",
    "encode_response",
    "error_codes",
    "is_unsupported_version_reply",
    "murmur2",
    "peek_correlation_id",
    "plan_arrow_records",
    "record_size_bound",
    "records_end",
    "set_arena_cache",
    "set_malloc_trim_threshold",
    "split_acquired",
    "split_acquired_offsets",
    "supported_apis",
]

__version__: str
"""The package version (Cargo.toml's)."""
DEFAULT_MAX_FRAME_SIZE: int
"""The default cap on one frame (100 MiB)."""
BATCH_HEADER_LEN: int
"""Bytes of a v2 record batch's header (baseOffset through recordsCount)."""
DEFAULT_MAX_DECOMPRESSED_BATCH: int
"""The default cap on what one record batch may decompress to (256 MiB):
``max_decompressed_batch``'s default."""

@final
class SharedBytes:
    """Immutable bytes owned by the native module (received frames, a partition's fetched
    records): ferrokafka's decoders read them in place; ``bytes(x)`` copies them out."""

    def __len__(self) -> int: ...
    def __bytes__(self) -> bytes: ...
    @overload
    def __getitem__(self, index: int, /) -> int: ...
    @overload
    def __getitem__(self, index: slice, /) -> bytes: ...
    def __eq__(self, other: object, /) -> bool: ...

_Bytes = bytes | SharedBytes

@final
class _FrameDecoder:
    """Splits a connection's byte stream into size-prefixed frames (the connection's own).

    A size prefix above ``max_frame_size`` (or negative) raises ``FrameTooLargeError`` as soon
    as its four bytes arrive, before the body is buffered; the decoder then stays failed.
    A frame of ``direct_min`` bytes or more is received into its own storage: once its size is
    known, ``receive_window()`` offers the rest of it to ``recv_into``. That storage starts
    zeroed; a window is closed (exports no new buffer) once the decoder is told of received
    bytes, and the frame it fills is handed out only once every buffer of it is released
    (``held`` until then; ``take()`` hands it out): a frame handed out never changes.
    """

    def __new__(cls, max_frame_size: int = ..., direct_min: int = ...) -> _FrameDecoder: ...
    def feed(self, data: bytes) -> list[SharedBytes]:
        """Append ``data``; return every frame body (without size prefix) now complete."""
    def receive_window(self) -> memoryview | None:
        """The rest of the large frame being received (writable), or None: feed instead.
        Release the memoryview once done with it: the frame waits for that."""
    def take(self) -> list[SharedBytes]:
        """Every frame now complete (a held one, once its window is released)."""
    @property
    def held(self) -> bool:
        """Whether a complete frame waits for its receive window to be released."""
    def received(
        self, nbytes: int, window: bool, scratch: bytearray | mmap.mmap
    ) -> list[SharedBytes]:
        """``nbytes`` arrived in the last ``receive_window()`` (``window``) or at the start of
        ``scratch`` (any contiguous buffer, not over the frame being received); return every
        frame now complete."""
    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned in a frame."""
    @property
    def max_frame_size(self) -> int: ...

@final
class ReceiveWindow:
    """The unreceived part of a large frame, exported as a writable buffer."""

    def __len__(self) -> int: ...

def encode_request(
    api_key: int,
    api_version: int,
    correlation_id: int,
    client_id: str | None,
    body: Mapping[str, Any],
) -> bytes:
    """A complete request frame (size prefix, header v1/v2, body)."""

def encode_produce_request(
    api_version: int,
    correlation_id: int,
    client_id: str | None,
    body: Mapping[str, Any],
) -> bytes:
    """A complete Produce request frame, as ``encode_request`` makes it, with each record batch
    (``bytes`` or ``SharedBytes``) copied once, straight into the frame. A body of another shape
    than lists of dicts is encoded (or refused) as ``encode_request`` does."""

def decode_response(api_key: int, api_version: int, frame: _Bytes) -> tuple[int, dict[str, Any]]:
    """(correlation_id, body) of a response frame given without its size prefix. Its bytes
    fields are ``bytes`` (copies); ``decode_fetch_response`` leaves a Fetch response's records
    in the frame."""

def decode_fetch_response(api_version: int, frame: _Bytes) -> tuple[int, FetchResponse]:
    """(correlation_id, body) of a Fetch response frame given without its size prefix, each
    partition's ``records`` a ``SharedBytes`` range of the frame (no copy; of one copy of the
    frame when it is plain ``bytes``)."""

def decode_share_fetch_response(api_version: int, frame: _Bytes) -> tuple[int, ShareFetchResponse]:
    """``decode_fetch_response`` for a ShareFetch response frame."""

def decode_request(frame: bytes) -> tuple[int, int, int, str | None, dict[str, Any]]:
    """(api_key, api_version, correlation_id, client_id, body) of a request frame without its
    size prefix. For fake brokers in tests."""

def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: Mapping[str, Any]
) -> bytes:
    """A complete response frame (size prefix, header, body). For fake brokers in tests."""

def peek_correlation_id(frame: _Bytes) -> int:
    """The correlation id at the start of a response frame."""

def is_unsupported_version_reply(frame: _Bytes) -> bool:
    """True for an ApiVersions reply carrying UNSUPPORTED_VERSION (always in the v0 layout)."""

def supported_apis() -> dict[int, tuple[str, int, int, int]]:
    """api_key -> (name, min_version, max_version, first_flexible_version)."""

def error_codes() -> dict[int, tuple[str, bool]]:
    """Kafka error code -> (Kafka's constant name, retriable) for every code the core knows."""

_KT = TypeVar("_KT")
_VT = TypeVar("_VT")

@final
class ConsumerRecord(Generic[_KT, _VT]):
    """A record read from Kafka, with aiokafka's fields in aiokafka's order."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    """0 CreateTime, 1 LogAppendTime."""
    key: _KT | None
    value: _VT | None
    checksum: int | None
    """The CRC-32C of the batch the record came from."""
    serialized_key_size: int
    """Bytes of the key on the wire (-1 for a null key)."""
    serialized_value_size: int
    headers: Sequence[tuple[str, bytes | None]]
    delivery_count: int | None
    """How many times a share group has handed the record out, this time included (KIP-932):
    1 the first time; None for a record read outside a share group."""
    def __new__(
        cls,
        topic: str,
        partition: int,
        offset: int,
        timestamp: int,
        timestamp_type: int,
        key: _KT | None,
        value: _VT | None,
        checksum: int | None,
        serialized_key_size: int,
        serialized_value_size: int,
        headers: Sequence[tuple[str, bytes | None]],
        *,
        delivery_count: int | None = None,
    ) -> ConsumerRecord[_KT, _VT]: ...
    def _astuple(self) -> tuple[Any, ...]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __class_getitem__(cls, item: Any) -> Any: ...

_R = TypeVar("_R", covariant=True)
_T = TypeVar("_T")

@final
class ArrowColumns:
    """Arrow columns made in Rust: one partition's records in Spark's Kafka schema (``key``
    binary, ``value`` binary, ``topic`` string, ``partition`` int32, ``offset`` int64,
    ``timestamp`` timestamp[us, UTC], ``timestampType`` int32, ``headers`` list<struct<key
    string, value binary>>), or a decoded payload column. Implements the Arrow PyCapsule
    interface: ``pyarrow.record_batch(cols)`` reads the buffers in place."""

    @property
    def num_rows(self) -> int: ...
    def __len__(self) -> int: ...
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_array__(self, requested_schema: Any | None = None) -> tuple[Any, Any]: ...
    def to_pyarrow(self) -> Any:
        """A ``pyarrow.RecordBatch`` over the same buffers (needs pyarrow)."""

@final
class ArrowRecordChunk:
    """Rows of an Arrow batch bound for one partition (from ``plan_arrow_records``)."""

    @property
    def partition(self) -> int: ...
    @property
    def record_count(self) -> int: ...
    @property
    def size(self) -> int:
        """An upper bound of the encoded, uncompressed batch in bytes."""
    def encode(
        self,
        now_ms: int,
        *,
        compression: str = "none",
        transactional: bool = False,
        producer_id: int = ...,
        producer_epoch: int = ...,
        base_sequence: int = ...,
    ) -> bytes:
        """The rows as one v2 record batch (rows without a timestamp get ``now_ms``; the
        producer id, epoch and base sequence default to -1, none)."""

def plan_arrow_records(
    batches: Sequence[Any],
    *,
    num_partitions: int,
    sticky: int,
    batch_size: int,
    max_request_size: int,
) -> list[ArrowRecordChunk]:
    """Check Arrow data (objects exporting ``__arrow_c_array__`` or ``__arrow_c_stream__``;
    every buffer is validated) of records to produce (columns ``key``, ``value``,
    ``headers``, ``partition``, ``timestamp``) and split their rows into per-partition chunks
    of at most ``batch_size`` bytes. TypeError for a bad column, ValueError for a bad row,
    ``MessageSizeTooLargeError`` for a row over ``max_request_size`` (rows numbered across the
    batches); then no chunk is returned."""

@final
class Generation:
    """A counter moved on every change of a consumer's subscription state that could alter
    which records may be handed out."""

    def __new__(cls) -> Generation: ...
    def bump(self) -> None: ...

@final
class PollClock:
    """When the application last took a record through the per-record path (on
    ``time.monotonic()``'s scale), and whether the group member wants its own
    ``raise_if_failed()`` and ``polled()`` called per record instead (``attention``)."""

    attention: bool
    def __new__(cls, now: float) -> PollClock: ...
    @property
    def last(self) -> float: ...

@final
class RecordRun:
    """The next records of one fetched response (``buf``: its ``items``, ``taken`` and
    ``state``), handed out one at a time (all but its last), each moving the partition's
    position past it, while the position is the one the run left and ``generation`` has not
    moved. When it ends it sets ``buf.taken`` and calls ``on_consumed(records, bytes)`` once."""

    def __new__(
        cls,
        buf: Any,
        generation: Generation,
        raw_len: int,
        on_consumed: Callable[[int, int], object] | None = None,
    ) -> RecordRun: ...
    def take(self) -> ConsumerRecord[Any, Any] | None:
        """The next record; None when there is none to hand out now (the run has ended)."""
    def close(self) -> None: ...
    @property
    def ended(self) -> bool: ...

@final
class RecordStream(Generic[_T]):
    """``async for``'s iterator: each step a ``Step`` over the consumer's fetch buffer."""

    def __new__(
        cls, owner: Any, slow: Callable[[], Awaitable[_T]], member: Any = None
    ) -> RecordStream[_T]: ...
    def __aiter__(self) -> RecordStream[_T]: ...
    def __anext__(self) -> Step[_T]: ...

@final
class GetOne(Generic[_T]):
    """A consumer's own ``getone``: each call with no argument is a step of ``stream`` while
    ``owner_class.getone`` is ``function``; any other call is ``other(*partitions)``."""

    @staticmethod
    def make(
        stream: RecordStream[_T],
        owner_class: type,
        function: Callable[..., Any],
        other: Callable[..., Awaitable[_T]],
        /,
    ) -> GetOne[_T]: ...
    def __call__(self, *partitions: Any) -> Awaitable[_T]: ...

@final
class SendMethod:
    """A producer's own ``send``: ``send(topic, value, key=...)`` makes a ``SendStep`` while
    ``owner_class.send`` is ``function``; any other call is ``other(*args, **kwargs)``."""

    @staticmethod
    def make(
        batches: OpenBatches,
        owner_class: type,
        function: Callable[..., Any],
        slow: Callable[[Any, Any, Any], Awaitable[RecordFuture]],
        other: Callable[..., Awaitable[RecordFuture]],
        /,
    ) -> SendMethod: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Awaitable[RecordFuture]: ...

@final
class SendStep(Coroutine[Any, Any, RecordFuture]):
    """One ``send()`` as a coroutine: when first run, the record joins its open batch and the
    step completes with its future, else it runs ``slow(topic, value, key)``'s coroutine.
    Nothing is sent before it runs."""

    def __await__(self) -> Generator[Any, None, RecordFuture]: ...
    def __iter__(self) -> SendStep: ...
    def __next__(self) -> Any: ...
    def send(self, value: Any, /) -> Any: ...
    def throw(self, *args: Any) -> Any: ...
    def close(self) -> None: ...

@final
class Step(Coroutine[Any, Any, _T]):
    """One record as a coroutine: when first run, the next record of ``buffer.run`` if it has
    one (completing at once), else whatever ``slow()``'s coroutine gives. Nothing is taken
    before it runs."""

    def __new__(
        cls, buffer: Any, slow: Callable[[], Awaitable[_T]], member: Any = None
    ) -> Step[_T]: ...
    def __await__(self) -> Generator[Any, None, _T]: ...
    def __iter__(self) -> Step[_T]: ...
    def __next__(self) -> Any: ...
    def send(self, value: Any, /) -> Any: ...
    def throw(self, *args: Any) -> Any: ...
    def close(self) -> None: ...

@final
class DecodedPartition(Generic[_R]):
    """What ``decode_records`` (a list of ``ConsumerRecord``) or ``decode_columns`` (an
    ``ArrowColumns``) read from one partition's records bytes."""

    @property
    def records(self) -> _R: ...
    @property
    def next_offset(self) -> int | None:
        """The position after the last whole batch (None when none was whole)."""
    @property
    def last_leader_epoch(self) -> int | None:
        """The partition leader epoch of the last whole batch (None when none was whole)."""
    @property
    def truncated(self) -> bool:
        """The bytes ended inside a batch (normal at the fetch size limit)."""
    @property
    def batches(self) -> int: ...
    @property
    def skipped_below_start(self) -> int: ...
    @property
    def skipped_control(self) -> int: ...
    @property
    def skipped_aborted(self) -> int: ...

def record_size_bound(
    key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes | None]]
) -> int:
    """An upper bound of a record's size in an uncompressed v2 batch, its length prefix
    included."""

def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash of a record key (the Java client's ``Utils.murmur2``), signed."""

def set_malloc_trim_threshold(bytes: int) -> bool:
    """Keep up to ``bytes`` of freed C heap mapped (glibc's trim threshold and top pad); False
    where the C library is not glibc."""

def set_arena_cache(limit: int) -> int:
    """Keep up to ``limit`` freed CPython small-object arenas mapped for reuse (see
    ``ferrokafka.memory``); returns the previous limit."""

def arena_cache_info() -> tuple[int, int, int, int]:
    """``(limit, cached, hits, misses)`` of the arena cache."""

def _free_lists() -> list[tuple[str, int]]:
    """How many freed objects each per-record class keeps for reuse now (``ConsumerRecord``,
    ``RecordFuture``), by class name."""

def _records_direct_alloc() -> bool:
    """Whether ``ConsumerRecord`` objects are allocated directly (the layout check at import
    passed) rather than through ``object.__new__``."""

def decode_records(
    records: _Bytes,
    topic: str,
    partition: int,
    *,
    check_crcs: bool = True,
    read_committed: bool = False,
    aborted_transactions: Sequence[tuple[int, int]] | None = None,
    start_offset: int = 0,
    max_decompressed_batch: int = ...,
    key_deserializer: Callable[[bytes | None], Any] | None = None,
    value_deserializer: Callable[[bytes | None], Any] | None = None,
) -> DecodedPartition[list[ConsumerRecord[Any, Any]]]:
    """Decode one partition's raw ``records`` bytes (record batches v2, any codec).

    A deserializer that raises ends the records at its record (``next_offset`` is that
    record's offset); on the first record its exception is raised, with ``topic``,
    ``partition`` and ``offset`` attributes set.

    Raises ``ferrokafka.errors.CorruptRecordException`` naming topic, partition, batch offset
    and byte position for a CRC mismatch, a legacy (magic < 2) message set, a corrupt record,
    or a batch that decompresses past ``max_decompressed_batch`` (by default
    ``DEFAULT_MAX_DECOMPRESSED_BATCH``, 256 MiB). The GIL is held throughout: the records are
    Python objects, made during the decode.
    """

def decode_columns(
    records: _Bytes,
    topic: str,
    partition: int,
    *,
    check_crcs: bool = True,
    read_committed: bool = False,
    aborted_transactions: Sequence[tuple[int, int]] | None = None,
    start_offset: int = 0,
    max_decompressed_batch: int = ...,
) -> DecodedPartition[ArrowColumns]:
    """Like ``decode_records``, but into Arrow columns built in Rust (one copy of each value).
    ``records`` of 64 KiB or more are decoded with the GIL released (they make no Python object
    until the columns are done); smaller ones with it held."""

def decode_json(
    payloads: Any, schema: Any, *, fail_fast: bool = False
) -> tuple[ArrowColumns, list[tuple[int, str]]]:
    """Decode ``payloads`` (an Arrow record batch whose first column holds the payloads:
    binary, large binary or string) as JSON into a struct column of ``schema``'s fields (an
    object with ``__arrow_c_schema__``), by Spark's ``from_json`` rules. Returns the column (as
    one-column ``ArrowColumns`` named ``value``) and the rows that did not fit, each with why;
    with ``fail_fast``, decoding stops at the first of them and the column holds the rows
    before it. TypeError for a type JSON is not read into."""

def encode_json(values: Any) -> ArrowColumns:
    """Each row of the struct column that is the first column of ``values`` (an Arrow record
    batch) as a JSON object, as Spark's ``to_json`` writes it; a null row a null payload.
    Returns a one-column ``ArrowColumns`` (``value``, binary). TypeError for a type not
    written."""

@final
class AvroReader:
    """Reads Avro payloads with the writer schemas it is given (one for plain datums, one per
    id for Confluent's framing), resolved to an optional reader schema (Avro schema JSON text).
    ValueError for a reader schema that is not Avro, or has no column type."""

    def __new__(cls, reader_schema: str | None = None) -> AvroReader: ...
    def add_writer(self, schema_id: int | None, schema: str) -> None:
        """Add the writer schema of ``schema_id`` (None: of plain datums). ValueError for a
        schema that is not Avro or (without a reader schema) has no column type."""

    def has_writer(self, schema_id: int) -> bool:
        """Whether the writer schema of ``schema_id`` was added."""

    def decode(
        self, payloads: Any, *, confluent: bool, fail_fast: bool = False
    ) -> tuple[ArrowColumns, list[tuple[int, str]]]:
        """Decode the payloads (the first column of an Arrow record batch, binary) into a
        struct column; returns it (a one-column ``ArrowColumns``) and the rows that did not
        decode, each with why. With ``fail_fast`` decoding stops at the first of them.
        ValueError ``(message, row, schema_id)`` when, with no reader schema, two schema ids
        of the batch give different columns (the row is the first of the second id)."""

def avro_schema_ids(payloads: Any) -> list[tuple[int, int]]:
    """The distinct schema ids of the Confluent-framed payloads (the first column of an Arrow
    record batch, binary), each with the first row that has it, in row order."""

def encode_avro(values: Any, schema: str, schema_id: int | None = None) -> ArrowColumns:
    """Each row of the struct column that is the first column of ``values`` (an Arrow record
    batch) as an Avro datum of ``schema`` (JSON text), with Confluent's header of
    ``schema_id`` when given; a null row a null payload. Returns a one-column
    ``ArrowColumns`` (``value``, binary). ValueError naming the field and row that does not
    fit the schema."""

def split_acquired(
    records: list[ConsumerRecord[Any, Any]], acquired: Sequence[tuple[int, int, int]]
) -> tuple[list[ConsumerRecord[Any, Any]], list[tuple[int, int]], list[tuple[int, int]]]:
    """Split one partition's decoded records (ascending) by a ShareFetch's acquired ranges
    ``(first, last, delivery count)`` (KIP-932): ``(the held records, each given its
    ``delivery_count``; their offsets as runs (first, last); the acquired offsets without a
    record, as runs)``. Records outside every range are left out; when none is, the held list
    is ``records`` itself."""

def decode_held_records(
    records: _Bytes,
    topic: str,
    partition: int,
    acquired: Sequence[tuple[int, int, int]],
    *,
    check_crcs: bool = True,
    start_offset: int = 0,
    max_decompressed_batch: int = ...,
    key_deserializer: Callable[[bytes | None], Any] | None = None,
    value_deserializer: Callable[[bytes | None], Any] | None = None,
) -> tuple[
    list[ConsumerRecord[Any, Any]],
    list[tuple[int, int]],
    list[tuple[int, int]],
    tuple[int, Exception] | None,
]:
    """Decode one partition's records bytes from a ShareFetch, making records only for the
    offsets in ``acquired`` (``(first, last, delivery count)`` ranges, KIP-932), each with its
    ``delivery_count``, from ``start_offset`` on: ``(records, their offsets as runs, the
    acquired offsets without a record as runs, refused)``. ``refused`` is None, or ``(offset,
    exception)`` when a deserializer raised an ``Exception`` for the acquired record at
    ``offset`` (``topic``, ``partition`` and ``offset`` attributes set on it): the records and
    runs then stop before it. Raises ``CorruptRecordException`` as ``decode_records`` does."""

def split_acquired_offsets(
    offsets: Sequence[int], acquired: Sequence[tuple[int, int, int]]
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
    """``split_acquired`` over bare offsets (an Arrow batch's ``offset`` column): ``(row spans
    (start, end, delivery count), held runs, gap runs)``."""

def batch_last_offsets(records: _Bytes) -> list[int]:
    """The last offset of each whole batch in a partition's records bytes, in order (from batch
    headers only)."""

def batch_position(records: _Bytes, base_offset: int) -> int | None:
    """The byte position where the batch with ``base_offset`` starts in a partition's records
    bytes (from batch headers only); None when there is no such batch."""

def records_end(records: _Bytes) -> tuple[int, int] | None:
    """``(next_offset, last_leader_epoch)`` of the last whole batch in a partition's records
    bytes, read from batch headers only (no CRC check): where the next fetch starts. None when
    no batch is whole."""

@final
class BatchRecords:
    """One producer batch's records, encoded as they are appended, and its outcome, which
    its records' ``RecordFuture``s read. The first record is always taken; later ones while
    the batch stays within ``batch_size`` bytes (uncompressed, header included)."""

    def __new__(cls, batch_size: int) -> BatchRecords: ...
    def set_loop(
        self,
        event_loop: asyncio.AbstractEventLoop,
        on_awaited: Callable[[], object] | None = None,
    ) -> None:
        """The event loop the records' futures belong to, and what to call (no arguments)
        when the first of them gets a done-callback while the batch is pending."""
    @property
    def awaited(self) -> bool:
        """Whether some record's future has a done-callback (someone awaits the batch)."""
    def add(
        self,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]],
    ) -> int | None:
        """Append a record (``timestamp`` in epoch ms, None for now); its timestamp, or None
        when the batch is closed or has no room for it (then it is closed)."""
    def append_value(self, value: bytes) -> RecordFuture | None:
        """An unkeyed record without headers, stamped now; its future, or None when the batch
        is closed or full."""
    def last_future(self, timestamp: int) -> RecordFuture:
        """The future of the record just added (``timestamp``: what ``add`` returned)."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def size(self) -> int:
        """Bytes of the batch if encoded now without compression, header included."""
    @property
    def record_count(self) -> int: ...
    def encode(
        self,
        *,
        compression: str,
        transactional: bool,
        producer_id: int,
        producer_epoch: int,
        base_sequence: int,
    ) -> bytes:
        """The v2 record batch (the records stay, for a retry)."""
    def resolve(
        self,
        tp: TopicPartition,
        base_offset: int,
        log_append_time: int,
        log_start_offset: int | None,
    ) -> None:
        """The broker has the batch: every record's future gets its ``RecordMetadata``."""
    def resolve_noack(self) -> None:
        """acks=0: every record's future gets None."""
    def fail(self, exc: BaseException) -> None:
        """Every record's future raises (a copy of) ``exc``."""
    def _run_callbacks(self) -> None: ...

@final
class RecordFuture(Awaitable[RecordMetadata]):
    """What ``send()`` returns: the record's future, done when its batch is (with its
    ``RecordMetadata``, None with acks=0, or the batch's error). It behaves as an
    ``asyncio.Future`` for awaiting, callbacks, cancellation and asyncio's functions
    (``gather``, ``wait``, ``wait_for``, ``shield``); cancelling it does not unsend the
    record."""

    _asyncio_future_blocking: bool
    def done(self) -> bool: ...
    def cancelled(self) -> bool: ...
    def result(self) -> RecordMetadata: ...
    def exception(self) -> BaseException | None: ...
    def add_done_callback(
        self,
        fn: Callable[[RecordFuture], object],
        *,
        context: contextvars.Context | None = None,
    ) -> None: ...
    def remove_done_callback(self, fn: Callable[[RecordFuture], object]) -> int: ...
    def cancel(self, msg: Any | None = None) -> bool: ...
    def get_loop(self) -> asyncio.AbstractEventLoop: ...
    def _make_cancelled_error(self) -> asyncio.CancelledError: ...
    @property
    def _cancel_message(self) -> Any: ...
    @property
    def _loop(self) -> asyncio.AbstractEventLoop: ...
    def __await__(self) -> Generator[Any, None, RecordMetadata]: ...
    def __iter__(self) -> Generator[Any, None, RecordMetadata]: ...

@final
class TopicBatches:
    """One topic's entry in an ``OpenBatches`` table."""

@final
class OpenBatches:
    """A producer's open batches: for each topic, each partition's batch taking records, and
    the topic's sticky partition (KIP-480). The accumulator writes a batch in when it opens
    it; ``send()``'s shortcuts append to them. A shortcut applies to a record with no
    partition, timestamp or headers whose key (if any) and value are ``bytes`` and fit
    ``max_request_size``, whose partition has an open batch, and whose topic's partitions the
    full path has seen since the metadata last changed (``partition_count``)."""

    def __new__(cls, max_request_size: int) -> OpenBatches: ...
    def opened(self, topic: str, partition: int, records: BatchRecords) -> None: ...
    def partition_count(self, topic: str, partitions: int) -> None: ...
    def sticky(self, topic: str) -> int | None: ...
    def stick(self, topic: str, partition: int) -> None: ...
    def metadata_changed(self) -> None: ...
    def close(self) -> None: ...
    def send(self, topic: str, value: object) -> RecordFuture | None:
        """An unkeyed record's future (to the sticky partition), or None: take the full path."""
    def send_keyed(self, topic: str, key: object, value: object) -> RecordFuture | None:
        """A keyed record's future (to the default partitioner's partition for the key), or
        None: take the full path."""

@final
class RecordFutureIter:
    """``await`` on a ``RecordFuture``."""

    def __iter__(self) -> RecordFutureIter: ...
    def __next__(self) -> Any: ...

def encode_batch(
    records: Sequence[tuple[int, bytes | None, bytes | None, Sequence[tuple[str, bytes | None]]]],
    *,
    base_offset: int = 0,
    compression: str = "none",
    transactional: bool = False,
    producer_id: int = ...,
    producer_epoch: int = ...,
    base_sequence: int = ...,
    log_append_time: bool = False,
) -> bytes:
    """One record batch from ``(timestamp, key, value, headers)`` tuples."""

# BEGIN GENERATED by tools/gen_stub.py from rust/protocol/messages: do not edit
@type_check_only
class ProduceRequest(TypedDict):
    """Produce request (key 0), v3-13."""

    transactional_id: str | None  # v3+
    acks: int
    timeout_ms: int
    topic_data: list[TopicProduceData]

@type_check_only
class TopicProduceData(TypedDict):
    name: NotRequired[str]  # v0-12
    topic_id: NotRequired[bytes]  # v13+
    partition_data: list[PartitionProduceData]

@type_check_only
class PartitionProduceData(TypedDict):
    index: int
    records: bytes | None

@type_check_only
class ProduceResponse(TypedDict):
    """Produce response (key 0), v3-13."""

    responses: list[TopicProduceResponse]
    throttle_time_ms: int  # v1+
    node_endpoints: list[NodeEndpoint] | None  # tag 0, v10+

@type_check_only
class TopicProduceResponse(TypedDict):
    name: str  # v0-12
    topic_id: bytes  # v13+
    partition_responses: list[PartitionProduceResponse]

@type_check_only
class PartitionProduceResponse(TypedDict):
    index: int
    error_code: int
    base_offset: int
    log_append_time_ms: int  # v2+
    log_start_offset: int  # v5+
    record_errors: list[BatchIndexAndErrorMessage]  # v8+
    error_message: str | None  # v8+
    current_leader: LeaderIdAndEpoch | None  # tag 0, v10+

@type_check_only
class BatchIndexAndErrorMessage(TypedDict):
    batch_index: int  # v8+
    batch_index_error_message: str | None  # v8+

@type_check_only
class LeaderIdAndEpoch(TypedDict):
    leader_id: int
    leader_epoch: int

@type_check_only
class NodeEndpoint(TypedDict):
    node_id: int
    host: str
    port: int
    rack: str | None

@type_check_only
class FetchRequest(TypedDict):
    """Fetch request (key 1), v4-18."""

    replica_id: NotRequired[int]  # v0-14
    max_wait_ms: int
    min_bytes: int
    max_bytes: NotRequired[int]  # v3+
    isolation_level: int  # v4+
    session_id: NotRequired[int]  # v7+
    session_epoch: NotRequired[int]  # v7+
    topics: list[FetchTopic]
    forgotten_topics_data: NotRequired[list[ForgottenTopic]]  # v7+
    rack_id: NotRequired[str]  # v11+
    cluster_id: NotRequired[str | None]  # tag 0, v12+
    replica_state: NotRequired[ReplicaState | None]  # tag 1, v15+

@type_check_only
class FetchTopic(TypedDict):
    topic: NotRequired[str]  # v0-12
    topic_id: NotRequired[bytes]  # v13+
    partitions: list[FetchPartition]

@type_check_only
class FetchPartition(TypedDict):
    partition: int
    current_leader_epoch: NotRequired[int]  # v9+
    fetch_offset: int
    last_fetched_epoch: NotRequired[int]  # v12+
    log_start_offset: NotRequired[int]  # v5+
    partition_max_bytes: int
    replica_directory_id: NotRequired[bytes | None]  # tag 0, v17+
    high_watermark: NotRequired[int | None]  # tag 1, v18+

@type_check_only
class ForgottenTopic(TypedDict):
    topic: NotRequired[str]  # v7-12
    topic_id: NotRequired[bytes]  # v13+
    partitions: list[int]  # v7+

@type_check_only
class ReplicaState(TypedDict):
    replica_id: NotRequired[int]  # v15+
    replica_epoch: NotRequired[int]  # v15+

@type_check_only
class FetchResponse(TypedDict):
    """Fetch response (key 1), v4-18."""

    throttle_time_ms: int  # v1+
    error_code: int  # v7+
    session_id: int  # v7+
    responses: list[FetchableTopicResponse]
    node_endpoints: list[NodeEndpoint] | None  # tag 0, v16+

@type_check_only
class FetchableTopicResponse(TypedDict):
    topic: str  # v0-12
    topic_id: bytes  # v13+
    partitions: list[PartitionData]

@type_check_only
class PartitionData(TypedDict):
    partition_index: int
    error_code: int
    high_watermark: int
    last_stable_offset: int  # v4+
    log_start_offset: int  # v5+
    aborted_transactions: list[AbortedTransaction] | None  # v4+
    preferred_read_replica: int  # v11+
    records: SharedBytes | None
    diverging_epoch: FetchEpochEndOffset | None  # tag 0, v12+
    current_leader: LeaderIdAndEpoch | None  # tag 1, v12+
    snapshot_id: SnapshotId | None  # tag 2, v12+

@type_check_only
class AbortedTransaction(TypedDict):
    producer_id: int  # v4+
    first_offset: int  # v4+

@type_check_only
class FetchEpochEndOffset(TypedDict):
    epoch: int  # v12+
    end_offset: int  # v12+

@type_check_only
class SnapshotId(TypedDict):
    end_offset: int
    epoch: int

@type_check_only
class ListOffsetsRequest(TypedDict):
    """ListOffsets request (key 2), v1-11."""

    replica_id: NotRequired[int]
    isolation_level: NotRequired[int]  # v2+
    topics: list[ListOffsetsTopic]
    timeout_ms: NotRequired[int]  # v10+

@type_check_only
class ListOffsetsTopic(TypedDict):
    name: str
    partitions: list[ListOffsetsPartition]

@type_check_only
class ListOffsetsPartition(TypedDict):
    partition_index: int
    current_leader_epoch: NotRequired[int]  # v4+
    timestamp: int

@type_check_only
class ListOffsetsResponse(TypedDict):
    """ListOffsets response (key 2), v1-11."""

    throttle_time_ms: int  # v2+
    topics: list[ListOffsetsTopicResponse]

@type_check_only
class ListOffsetsTopicResponse(TypedDict):
    name: str
    partitions: list[ListOffsetsPartitionResponse]

@type_check_only
class ListOffsetsPartitionResponse(TypedDict):
    partition_index: int
    error_code: int
    timestamp: int  # v1+
    offset: int  # v1+
    leader_epoch: int  # v4+

@type_check_only
class MetadataRequest(TypedDict):
    """Metadata request (key 3), v1-13."""

    topics: list[MetadataRequestTopic] | None
    allow_auto_topic_creation: NotRequired[bool]  # v4+
    include_cluster_authorized_operations: NotRequired[bool]  # v8-10
    include_topic_authorized_operations: NotRequired[bool]  # v8+

@type_check_only
class MetadataRequestTopic(TypedDict):
    topic_id: NotRequired[bytes]  # v10+
    name: str | None

@type_check_only
class MetadataResponse(TypedDict):
    """Metadata response (key 3), v1-13."""

    throttle_time_ms: int  # v3+
    brokers: list[MetadataResponseBroker]
    cluster_id: str | None  # v2+
    controller_id: int  # v1+
    topics: list[MetadataResponseTopic]
    cluster_authorized_operations: int  # v8-10
    error_code: int  # v13+

@type_check_only
class MetadataResponseBroker(TypedDict):
    node_id: int
    host: str
    port: int
    rack: str | None  # v1+

@type_check_only
class MetadataResponseTopic(TypedDict):
    error_code: int
    name: str | None
    topic_id: bytes  # v10+
    is_internal: bool  # v1+
    partitions: list[MetadataResponsePartition]
    topic_authorized_operations: int  # v8+

@type_check_only
class MetadataResponsePartition(TypedDict):
    error_code: int
    partition_index: int
    leader_id: int
    leader_epoch: int  # v7+
    replica_nodes: list[int]
    isr_nodes: list[int]
    offline_replicas: list[int]  # v5+

@type_check_only
class OffsetCommitRequest(TypedDict):
    """OffsetCommit request (key 8), v2-10."""

    group_id: str
    generation_id_or_member_epoch: NotRequired[int]  # v1+
    member_id: str  # v1+
    group_instance_id: NotRequired[str | None]  # v7+
    retention_time_ms: NotRequired[int]  # v2-4
    topics: list[OffsetCommitRequestTopic]

@type_check_only
class OffsetCommitRequestTopic(TypedDict):
    name: NotRequired[str]  # v0-9
    topic_id: NotRequired[bytes]  # v10+
    partitions: list[OffsetCommitRequestPartition]

@type_check_only
class OffsetCommitRequestPartition(TypedDict):
    partition_index: int
    committed_offset: int
    committed_leader_epoch: NotRequired[int]  # v6+
    committed_metadata: str | None

@type_check_only
class OffsetCommitResponse(TypedDict):
    """OffsetCommit response (key 8), v2-10."""

    throttle_time_ms: int  # v3+
    topics: list[OffsetCommitResponseTopic]

@type_check_only
class OffsetCommitResponseTopic(TypedDict):
    name: str  # v0-9
    topic_id: bytes  # v10+
    partitions: list[OffsetCommitResponsePartition]

@type_check_only
class OffsetCommitResponsePartition(TypedDict):
    partition_index: int
    error_code: int

@type_check_only
class OffsetFetchRequest(TypedDict):
    """OffsetFetch request (key 9), v1-10."""

    group_id: NotRequired[str]  # v0-7
    topics: NotRequired[list[OffsetFetchRequestTopic] | None]  # v0-7
    groups: NotRequired[list[OffsetFetchRequestGroup]]  # v8+
    require_stable: NotRequired[bool]  # v7+

@type_check_only
class OffsetFetchRequestTopic(TypedDict):
    name: str  # v0-7
    partition_indexes: list[int]  # v0-7

@type_check_only
class OffsetFetchRequestGroup(TypedDict):
    group_id: str  # v8+
    member_id: NotRequired[str | None]  # v9+
    member_epoch: NotRequired[int]  # v9+
    topics: list[OffsetFetchRequestTopics] | None  # v8+

@type_check_only
class OffsetFetchRequestTopics(TypedDict):
    name: NotRequired[str]  # v8-9
    topic_id: NotRequired[bytes]  # v10+
    partition_indexes: list[int]  # v8+

@type_check_only
class OffsetFetchResponse(TypedDict):
    """OffsetFetch response (key 9), v1-10."""

    throttle_time_ms: int  # v3+
    topics: list[OffsetFetchResponseTopic]  # v0-7
    error_code: int  # v2-7
    groups: list[OffsetFetchResponseGroup]  # v8+

@type_check_only
class OffsetFetchResponseTopic(TypedDict):
    name: str  # v0-7
    partitions: list[OffsetFetchResponsePartition]  # v0-7

@type_check_only
class OffsetFetchResponsePartition(TypedDict):
    partition_index: int  # v0-7
    committed_offset: int  # v0-7
    committed_leader_epoch: int  # v5-7
    metadata: str | None  # v0-7
    error_code: int  # v0-7

@type_check_only
class OffsetFetchResponseGroup(TypedDict):
    group_id: str  # v8+
    topics: list[OffsetFetchResponseTopics]  # v8+
    error_code: int  # v8+

@type_check_only
class OffsetFetchResponseTopics(TypedDict):
    name: str  # v8-9
    topic_id: bytes  # v10+
    partitions: list[OffsetFetchResponsePartitions]  # v8+

@type_check_only
class OffsetFetchResponsePartitions(TypedDict):
    partition_index: int  # v8+
    committed_offset: int  # v8+
    committed_leader_epoch: int  # v8+
    metadata: str | None  # v8+
    error_code: int  # v8+

@type_check_only
class FindCoordinatorRequest(TypedDict):
    """FindCoordinator request (key 10), v0-6."""

    key: NotRequired[str]  # v0-3
    key_type: NotRequired[int]  # v1+
    coordinator_keys: NotRequired[list[str]]  # v4+

@type_check_only
class FindCoordinatorResponse(TypedDict):
    """FindCoordinator response (key 10), v0-6."""

    throttle_time_ms: int  # v1+
    error_code: int  # v0-3
    error_message: str | None  # v1-3
    node_id: int  # v0-3
    host: str  # v0-3
    port: int  # v0-3
    coordinators: list[Coordinator]  # v4+

@type_check_only
class Coordinator(TypedDict):
    key: str  # v4+
    node_id: int  # v4+
    host: str  # v4+
    port: int  # v4+
    error_code: int  # v4+
    error_message: str | None  # v4+

@type_check_only
class JoinGroupRequest(TypedDict):
    """JoinGroup request (key 11), v0-9."""

    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: NotRequired[int]  # v1+
    member_id: str
    group_instance_id: NotRequired[str | None]  # v5+
    protocol_type: str
    protocols: list[JoinGroupRequestProtocol]
    reason: NotRequired[str | None]  # v8+

@type_check_only
class JoinGroupRequestProtocol(TypedDict):
    name: str
    metadata: bytes

@type_check_only
class JoinGroupResponse(TypedDict):
    """JoinGroup response (key 11), v0-9."""

    throttle_time_ms: int  # v2+
    error_code: int
    generation_id: int
    protocol_type: str | None  # v7+
    protocol_name: str | None
    leader: str
    skip_assignment: bool  # v9+
    member_id: str
    members: list[JoinGroupResponseMember]

@type_check_only
class JoinGroupResponseMember(TypedDict):
    member_id: str
    group_instance_id: str | None  # v5+
    metadata: bytes

@type_check_only
class HeartbeatRequest(TypedDict):
    """Heartbeat request (key 12), v0-4."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: NotRequired[str | None]  # v3+

@type_check_only
class HeartbeatResponse(TypedDict):
    """Heartbeat response (key 12), v0-4."""

    throttle_time_ms: int  # v1+
    error_code: int

@type_check_only
class LeaveGroupRequest(TypedDict):
    """LeaveGroup request (key 13), v0-5."""

    group_id: str
    member_id: NotRequired[str]  # v0-2
    members: NotRequired[list[MemberIdentity]]  # v3+

@type_check_only
class MemberIdentity(TypedDict):
    member_id: str  # v3+
    group_instance_id: str | None  # v3+
    reason: NotRequired[str | None]  # v5+

@type_check_only
class LeaveGroupResponse(TypedDict):
    """LeaveGroup response (key 13), v0-5."""

    throttle_time_ms: int  # v1+
    error_code: int
    members: list[MemberResponse]  # v3+

@type_check_only
class MemberResponse(TypedDict):
    member_id: str  # v3+
    group_instance_id: str | None  # v3+
    error_code: int  # v3+

@type_check_only
class SyncGroupRequest(TypedDict):
    """SyncGroup request (key 14), v0-5."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: NotRequired[str | None]  # v3+
    protocol_type: NotRequired[str | None]  # v5+
    protocol_name: NotRequired[str | None]  # v5+
    assignments: list[SyncGroupRequestAssignment]

@type_check_only
class SyncGroupRequestAssignment(TypedDict):
    member_id: str
    assignment: bytes

@type_check_only
class SyncGroupResponse(TypedDict):
    """SyncGroup response (key 14), v0-5."""

    throttle_time_ms: int  # v1+
    error_code: int
    protocol_type: str | None  # v5+
    protocol_name: str | None  # v5+
    assignment: bytes

@type_check_only
class DescribeGroupsRequest(TypedDict):
    """DescribeGroups request (key 15), v0-6."""

    groups: list[str]
    include_authorized_operations: NotRequired[bool]  # v3+

@type_check_only
class DescribeGroupsResponse(TypedDict):
    """DescribeGroups response (key 15), v0-6."""

    throttle_time_ms: int  # v1+
    groups: list[DescribeGroupsDescribedGroup]

@type_check_only
class DescribeGroupsDescribedGroup(TypedDict):
    error_code: int
    error_message: str | None  # v6+
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str
    members: list[DescribedGroupMember]
    authorized_operations: int  # v3+

@type_check_only
class DescribedGroupMember(TypedDict):
    member_id: str
    group_instance_id: str | None  # v4+
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes

@type_check_only
class ListGroupsRequest(TypedDict):
    """ListGroups request (key 16), v0-5."""

    states_filter: NotRequired[list[str]]  # v4+
    types_filter: NotRequired[list[str]]  # v5+

@type_check_only
class ListGroupsResponse(TypedDict):
    """ListGroups response (key 16), v0-5."""

    throttle_time_ms: int  # v1+
    error_code: int
    groups: list[ListedGroup]

@type_check_only
class ListedGroup(TypedDict):
    group_id: str
    protocol_type: str
    group_state: str  # v4+
    group_type: str  # v5+

@type_check_only
class SaslHandshakeRequest(TypedDict):
    """SaslHandshake request (key 17), v0-1."""

    mechanism: str

@type_check_only
class SaslHandshakeResponse(TypedDict):
    """SaslHandshake response (key 17), v0-1."""

    error_code: int
    mechanisms: list[str]

@type_check_only
class ApiVersionsRequest(TypedDict):
    """ApiVersions request (key 18), v0-4."""

    client_software_name: NotRequired[str]  # v3+
    client_software_version: NotRequired[str]  # v3+

@type_check_only
class ApiVersionsResponse(TypedDict):
    """ApiVersions response (key 18), v0-4."""

    error_code: int
    api_keys: list[ApiVersionsResponseKey]
    throttle_time_ms: int  # v1+
    supported_features: list[SupportedFeatureKey] | None  # tag 0, v3+
    finalized_features_epoch: int | None  # tag 1, v3+
    finalized_features: list[FinalizedFeatureKey] | None  # tag 2, v3+
    zk_migration_ready: bool | None  # tag 3, v3+

@type_check_only
class ApiVersionsResponseKey(TypedDict):
    api_key: int
    min_version: int
    max_version: int

@type_check_only
class SupportedFeatureKey(TypedDict):
    name: str  # v3+
    min_version: int  # v3+
    max_version: int  # v3+

@type_check_only
class FinalizedFeatureKey(TypedDict):
    name: str  # v3+
    max_version_level: int  # v3+
    min_version_level: int  # v3+

@type_check_only
class CreateTopicsRequest(TypedDict):
    """CreateTopics request (key 19), v2-7."""

    topics: list[CreatableTopic]
    timeout_ms: NotRequired[int]
    validate_only: bool  # v1+

@type_check_only
class CreatableTopic(TypedDict):
    name: str
    num_partitions: int
    replication_factor: int
    assignments: list[CreatableReplicaAssignment]
    configs: list[CreatableTopicConfig]

@type_check_only
class CreatableReplicaAssignment(TypedDict):
    partition_index: int
    broker_ids: list[int]

@type_check_only
class CreatableTopicConfig(TypedDict):
    name: str
    value: str | None

@type_check_only
class CreateTopicsResponse(TypedDict):
    """CreateTopics response (key 19), v2-7."""

    throttle_time_ms: int  # v2+
    topics: list[CreatableTopicResult]

@type_check_only
class CreatableTopicResult(TypedDict):
    name: str
    topic_id: bytes  # v7+
    error_code: int
    error_message: str | None  # v1+
    num_partitions: int  # v5+
    replication_factor: int  # v5+
    configs: list[CreatableTopicConfigs] | None  # v5+
    topic_config_error_code: int | None  # tag 0, v5+

@type_check_only
class CreatableTopicConfigs(TypedDict):
    name: str  # v5+
    value: str | None  # v5+
    read_only: bool  # v5+
    config_source: int  # v5+
    is_sensitive: bool  # v5+

@type_check_only
class DeleteTopicsRequest(TypedDict):
    """DeleteTopics request (key 20), v1-6."""

    topics: NotRequired[list[DeleteTopicState]]  # v6+
    topic_names: NotRequired[list[str]]  # v0-5
    timeout_ms: int

@type_check_only
class DeleteTopicState(TypedDict):
    name: str | None  # v6+
    topic_id: bytes  # v6+

@type_check_only
class DeleteTopicsResponse(TypedDict):
    """DeleteTopics response (key 20), v1-6."""

    throttle_time_ms: int  # v1+
    responses: list[DeletableTopicResult]

@type_check_only
class DeletableTopicResult(TypedDict):
    name: str | None
    topic_id: bytes  # v6+
    error_code: int
    error_message: str | None  # v5+

@type_check_only
class DeleteRecordsRequest(TypedDict):
    """DeleteRecords request (key 21), v0-2."""

    topics: list[DeleteRecordsTopic]
    timeout_ms: NotRequired[int]

@type_check_only
class DeleteRecordsTopic(TypedDict):
    name: str
    partitions: list[DeleteRecordsPartition]

@type_check_only
class DeleteRecordsPartition(TypedDict):
    partition_index: int
    offset: int

@type_check_only
class DeleteRecordsResponse(TypedDict):
    """DeleteRecords response (key 21), v0-2."""

    throttle_time_ms: int
    topics: list[DeleteRecordsTopicResult]

@type_check_only
class DeleteRecordsTopicResult(TypedDict):
    name: str
    partitions: list[DeleteRecordsPartitionResult]

@type_check_only
class DeleteRecordsPartitionResult(TypedDict):
    partition_index: int
    low_watermark: int
    error_code: int

@type_check_only
class InitProducerIdRequest(TypedDict):
    """InitProducerId request (key 22), v0-6."""

    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: NotRequired[int]  # v3+
    producer_epoch: NotRequired[int]  # v3+
    enable_2pc: NotRequired[bool]  # v6+
    keep_prepared_txn: NotRequired[bool]  # v6+

@type_check_only
class InitProducerIdResponse(TypedDict):
    """InitProducerId response (key 22), v0-6."""

    throttle_time_ms: int
    error_code: int
    producer_id: int
    producer_epoch: int
    ongoing_txn_producer_id: int  # v6+
    ongoing_txn_producer_epoch: int  # v6+

@type_check_only
class OffsetForLeaderEpochRequest(TypedDict):
    """OffsetForLeaderEpoch request (key 23), v2-4."""

    replica_id: NotRequired[int]  # v3+
    topics: list[OffsetForLeaderTopic]

@type_check_only
class OffsetForLeaderTopic(TypedDict):
    topic: str
    partitions: list[OffsetForLeaderPartition]

@type_check_only
class OffsetForLeaderPartition(TypedDict):
    partition: int
    current_leader_epoch: NotRequired[int]  # v2+
    leader_epoch: int

@type_check_only
class OffsetForLeaderEpochResponse(TypedDict):
    """OffsetForLeaderEpoch response (key 23), v2-4."""

    throttle_time_ms: int  # v2+
    topics: list[OffsetForLeaderTopicResult]

@type_check_only
class OffsetForLeaderTopicResult(TypedDict):
    topic: str
    partitions: list[OffsetForLeaderEpochEpochEndOffset]

@type_check_only
class OffsetForLeaderEpochEpochEndOffset(TypedDict):
    error_code: int
    partition: int
    leader_epoch: int  # v1+
    end_offset: int

@type_check_only
class AddPartitionsToTxnRequest(TypedDict):
    """AddPartitionsToTxn request (key 24), v0-3."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    topics: list[AddPartitionsToTxnTopic]

@type_check_only
class AddPartitionsToTxnTopic(TypedDict):
    name: str
    partitions: list[int]

@type_check_only
class AddPartitionsToTxnResponse(TypedDict):
    """AddPartitionsToTxn response (key 24), v0-3."""

    throttle_time_ms: int
    results_by_topic: list[AddPartitionsToTxnTopicResult]

@type_check_only
class AddPartitionsToTxnTopicResult(TypedDict):
    name: str
    results_by_partition: list[AddPartitionsToTxnPartitionResult]

@type_check_only
class AddPartitionsToTxnPartitionResult(TypedDict):
    partition_index: int
    partition_error_code: int

@type_check_only
class AddOffsetsToTxnRequest(TypedDict):
    """AddOffsetsToTxn request (key 25), v0-4."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str

@type_check_only
class AddOffsetsToTxnResponse(TypedDict):
    """AddOffsetsToTxn response (key 25), v0-4."""

    throttle_time_ms: int
    error_code: int

@type_check_only
class EndTxnRequest(TypedDict):
    """EndTxn request (key 26), v0-5."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    committed: bool

@type_check_only
class EndTxnResponse(TypedDict):
    """EndTxn response (key 26), v0-5."""

    throttle_time_ms: int
    error_code: int
    producer_id: int  # v5+
    producer_epoch: int  # v5+

@type_check_only
class WriteTxnMarkersRequest(TypedDict):
    """WriteTxnMarkers request (key 27), v1-1."""

    markers: list[WritableTxnMarker]

@type_check_only
class WritableTxnMarker(TypedDict):
    producer_id: int
    producer_epoch: int
    transaction_result: bool
    topics: list[WritableTxnMarkerTopic]
    coordinator_epoch: int

@type_check_only
class WritableTxnMarkerTopic(TypedDict):
    name: str
    partition_indexes: list[int]

@type_check_only
class WriteTxnMarkersResponse(TypedDict):
    """WriteTxnMarkers response (key 27), v1-1."""

    markers: list[WritableTxnMarkerResult]

@type_check_only
class WritableTxnMarkerResult(TypedDict):
    producer_id: int
    topics: list[WritableTxnMarkerTopicResult]

@type_check_only
class WritableTxnMarkerTopicResult(TypedDict):
    name: str
    partitions: list[WritableTxnMarkerPartitionResult]

@type_check_only
class WritableTxnMarkerPartitionResult(TypedDict):
    partition_index: int
    error_code: int

@type_check_only
class TxnOffsetCommitRequest(TypedDict):
    """TxnOffsetCommit request (key 28), v0-5."""

    transactional_id: str
    group_id: str
    producer_id: int
    producer_epoch: int
    generation_id: NotRequired[int]  # v3+
    member_id: NotRequired[str]  # v3+
    group_instance_id: NotRequired[str | None]  # v3+
    topics: list[TxnOffsetCommitRequestTopic]

@type_check_only
class TxnOffsetCommitRequestTopic(TypedDict):
    name: str
    partitions: list[TxnOffsetCommitRequestPartition]

@type_check_only
class TxnOffsetCommitRequestPartition(TypedDict):
    partition_index: int
    committed_offset: int
    committed_leader_epoch: NotRequired[int]  # v2+
    committed_metadata: str | None

@type_check_only
class TxnOffsetCommitResponse(TypedDict):
    """TxnOffsetCommit response (key 28), v0-5."""

    throttle_time_ms: int
    topics: list[TxnOffsetCommitResponseTopic]

@type_check_only
class TxnOffsetCommitResponseTopic(TypedDict):
    name: str
    partitions: list[TxnOffsetCommitResponsePartition]

@type_check_only
class TxnOffsetCommitResponsePartition(TypedDict):
    partition_index: int
    error_code: int

@type_check_only
class DescribeAclsRequest(TypedDict):
    """DescribeAcls request (key 29), v1-3."""

    resource_type_filter: int
    resource_name_filter: str | None
    pattern_type_filter: NotRequired[int]  # v1+
    principal_filter: str | None
    host_filter: str | None
    operation: int
    permission_type: int

@type_check_only
class DescribeAclsResponse(TypedDict):
    """DescribeAcls response (key 29), v1-3."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    resources: list[DescribeAclsResource]

@type_check_only
class DescribeAclsResource(TypedDict):
    resource_type: int
    resource_name: str
    pattern_type: int  # v1+
    acls: list[AclDescription]

@type_check_only
class AclDescription(TypedDict):
    principal: str
    host: str
    operation: int
    permission_type: int

@type_check_only
class CreateAclsRequest(TypedDict):
    """CreateAcls request (key 30), v1-3."""

    creations: list[AclCreation]

@type_check_only
class AclCreation(TypedDict):
    resource_type: int
    resource_name: str
    resource_pattern_type: NotRequired[int]  # v1+
    principal: str
    host: str
    operation: int
    permission_type: int

@type_check_only
class CreateAclsResponse(TypedDict):
    """CreateAcls response (key 30), v1-3."""

    throttle_time_ms: int
    results: list[AclCreationResult]

@type_check_only
class AclCreationResult(TypedDict):
    error_code: int
    error_message: str | None

@type_check_only
class DeleteAclsRequest(TypedDict):
    """DeleteAcls request (key 31), v1-3."""

    filters: list[DeleteAclsFilter]

@type_check_only
class DeleteAclsFilter(TypedDict):
    resource_type_filter: int
    resource_name_filter: str | None
    pattern_type_filter: NotRequired[int]  # v1+
    principal_filter: str | None
    host_filter: str | None
    operation: int
    permission_type: int

@type_check_only
class DeleteAclsResponse(TypedDict):
    """DeleteAcls response (key 31), v1-3."""

    throttle_time_ms: int
    filter_results: list[DeleteAclsFilterResult]

@type_check_only
class DeleteAclsFilterResult(TypedDict):
    error_code: int
    error_message: str | None
    matching_acls: list[DeleteAclsMatchingAcl]

@type_check_only
class DeleteAclsMatchingAcl(TypedDict):
    error_code: int
    error_message: str | None
    resource_type: int
    resource_name: str
    pattern_type: int  # v1+
    principal: str
    host: str
    operation: int
    permission_type: int

@type_check_only
class DescribeConfigsRequest(TypedDict):
    """DescribeConfigs request (key 32), v1-4."""

    resources: list[DescribeConfigsResource]
    include_synonyms: bool  # v1+
    include_documentation: NotRequired[bool]  # v3+

@type_check_only
class DescribeConfigsResource(TypedDict):
    resource_type: int
    resource_name: str
    configuration_keys: list[str] | None

@type_check_only
class DescribeConfigsResponse(TypedDict):
    """DescribeConfigs response (key 32), v1-4."""

    throttle_time_ms: int
    results: list[DescribeConfigsResult]

@type_check_only
class DescribeConfigsResult(TypedDict):
    error_code: int
    error_message: str | None
    resource_type: int
    resource_name: str
    configs: list[DescribeConfigsResourceResult]

@type_check_only
class DescribeConfigsResourceResult(TypedDict):
    name: str
    value: str | None
    read_only: bool
    config_source: int  # v1+
    is_sensitive: bool
    synonyms: list[DescribeConfigsSynonym]  # v1+
    config_type: int  # v3+
    documentation: str | None  # v3+

@type_check_only
class DescribeConfigsSynonym(TypedDict):
    name: str  # v1+
    value: str | None  # v1+
    source: int  # v1+

@type_check_only
class AlterConfigsRequest(TypedDict):
    """AlterConfigs request (key 33), v0-2."""

    resources: list[AlterConfigsResource]
    validate_only: bool

@type_check_only
class AlterConfigsResource(TypedDict):
    resource_type: int
    resource_name: str
    configs: list[AlterableConfig]

@type_check_only
class AlterableConfig(TypedDict):
    name: str
    value: str | None

@type_check_only
class AlterConfigsResponse(TypedDict):
    """AlterConfigs response (key 33), v0-2."""

    throttle_time_ms: int
    responses: list[AlterConfigsResourceResponse]

@type_check_only
class AlterConfigsResourceResponse(TypedDict):
    error_code: int
    error_message: str | None
    resource_type: int
    resource_name: str

@type_check_only
class AlterReplicaLogDirsRequest(TypedDict):
    """AlterReplicaLogDirs request (key 34), v1-2."""

    dirs: list[AlterReplicaLogDir]

@type_check_only
class AlterReplicaLogDir(TypedDict):
    path: str
    topics: list[AlterReplicaLogDirTopic]

@type_check_only
class AlterReplicaLogDirTopic(TypedDict):
    name: str
    partitions: list[int]

@type_check_only
class AlterReplicaLogDirsResponse(TypedDict):
    """AlterReplicaLogDirs response (key 34), v1-2."""

    throttle_time_ms: int
    results: list[AlterReplicaLogDirTopicResult]

@type_check_only
class AlterReplicaLogDirTopicResult(TypedDict):
    topic_name: str
    partitions: list[AlterReplicaLogDirPartitionResult]

@type_check_only
class AlterReplicaLogDirPartitionResult(TypedDict):
    partition_index: int
    error_code: int

@type_check_only
class DescribeLogDirsRequest(TypedDict):
    """DescribeLogDirs request (key 35), v1-4."""

    topics: list[DescribableLogDirTopic] | None

@type_check_only
class DescribableLogDirTopic(TypedDict):
    topic: str
    partitions: list[int]

@type_check_only
class DescribeLogDirsResponse(TypedDict):
    """DescribeLogDirs response (key 35), v1-4."""

    throttle_time_ms: int
    error_code: int  # v3+
    results: list[DescribeLogDirsResult]

@type_check_only
class DescribeLogDirsResult(TypedDict):
    error_code: int
    log_dir: str
    topics: list[DescribeLogDirsTopic]
    total_bytes: int  # v4+
    usable_bytes: int  # v4+

@type_check_only
class DescribeLogDirsTopic(TypedDict):
    name: str
    partitions: list[DescribeLogDirsPartition]

@type_check_only
class DescribeLogDirsPartition(TypedDict):
    partition_index: int
    partition_size: int
    offset_lag: int
    is_future_key: bool

@type_check_only
class SaslAuthenticateRequest(TypedDict):
    """SaslAuthenticate request (key 36), v0-2."""

    auth_bytes: bytes

@type_check_only
class SaslAuthenticateResponse(TypedDict):
    """SaslAuthenticate response (key 36), v0-2."""

    error_code: int
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int  # v1+

@type_check_only
class CreatePartitionsRequest(TypedDict):
    """CreatePartitions request (key 37), v0-3."""

    topics: list[CreatePartitionsTopic]
    timeout_ms: NotRequired[int]
    validate_only: bool

@type_check_only
class CreatePartitionsTopic(TypedDict):
    name: str
    count: int
    assignments: list[CreatePartitionsAssignment] | None

@type_check_only
class CreatePartitionsAssignment(TypedDict):
    broker_ids: list[int]

@type_check_only
class CreatePartitionsResponse(TypedDict):
    """CreatePartitions response (key 37), v0-3."""

    throttle_time_ms: int
    results: list[CreatePartitionsTopicResult]

@type_check_only
class CreatePartitionsTopicResult(TypedDict):
    name: str
    error_code: int
    error_message: str | None

@type_check_only
class DeleteGroupsRequest(TypedDict):
    """DeleteGroups request (key 42), v0-2."""

    groups_names: list[str]

@type_check_only
class DeleteGroupsResponse(TypedDict):
    """DeleteGroups response (key 42), v0-2."""

    throttle_time_ms: int
    results: list[DeletableGroupResult]

@type_check_only
class DeletableGroupResult(TypedDict):
    group_id: str
    error_code: int

@type_check_only
class ElectLeadersRequest(TypedDict):
    """ElectLeaders request (key 43), v0-2."""

    election_type: NotRequired[int]  # v1+
    topic_partitions: list[ElectLeadersTopicPartitions] | None
    timeout_ms: NotRequired[int]

@type_check_only
class ElectLeadersTopicPartitions(TypedDict):
    topic: str
    partitions: list[int]

@type_check_only
class ElectLeadersResponse(TypedDict):
    """ElectLeaders response (key 43), v0-2."""

    throttle_time_ms: int
    error_code: int  # v1+
    replica_election_results: list[ReplicaElectionResult]

@type_check_only
class ReplicaElectionResult(TypedDict):
    topic: str
    partition_result: list[ElectLeadersPartitionResult]

@type_check_only
class ElectLeadersPartitionResult(TypedDict):
    partition_id: int
    error_code: int
    error_message: str | None

@type_check_only
class IncrementalAlterConfigsRequest(TypedDict):
    """IncrementalAlterConfigs request (key 44), v0-1."""

    resources: list[IncrementalAlterConfigsResource]
    validate_only: bool

@type_check_only
class IncrementalAlterConfigsResource(TypedDict):
    resource_type: int
    resource_name: str
    configs: list[IncrementalAlterableConfig]

@type_check_only
class IncrementalAlterableConfig(TypedDict):
    name: str
    config_operation: int
    value: str | None

@type_check_only
class IncrementalAlterConfigsResponse(TypedDict):
    """IncrementalAlterConfigs response (key 44), v0-1."""

    throttle_time_ms: int
    responses: list[IncrementalAlterConfigsResult]

@type_check_only
class IncrementalAlterConfigsResult(TypedDict):
    error_code: int
    error_message: str | None
    resource_type: int
    resource_name: str

@type_check_only
class AlterPartitionReassignmentsRequest(TypedDict):
    """AlterPartitionReassignments request (key 45), v0-0."""

    timeout_ms: NotRequired[int]
    topics: list[ReassignableTopic]

@type_check_only
class ReassignableTopic(TypedDict):
    name: str
    partitions: list[ReassignablePartition]

@type_check_only
class ReassignablePartition(TypedDict):
    partition_index: int
    replicas: list[int] | None

@type_check_only
class AlterPartitionReassignmentsResponse(TypedDict):
    """AlterPartitionReassignments response (key 45), v0-0."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    responses: list[ReassignableTopicResponse]

@type_check_only
class ReassignableTopicResponse(TypedDict):
    name: str
    partitions: list[ReassignablePartitionResponse]

@type_check_only
class ReassignablePartitionResponse(TypedDict):
    partition_index: int
    error_code: int
    error_message: str | None

@type_check_only
class ListPartitionReassignmentsRequest(TypedDict):
    """ListPartitionReassignments request (key 46), v0-0."""

    timeout_ms: NotRequired[int]
    topics: list[ListPartitionReassignmentsTopics] | None

@type_check_only
class ListPartitionReassignmentsTopics(TypedDict):
    name: str
    partition_indexes: list[int]

@type_check_only
class ListPartitionReassignmentsResponse(TypedDict):
    """ListPartitionReassignments response (key 46), v0-0."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    topics: list[OngoingTopicReassignment]

@type_check_only
class OngoingTopicReassignment(TypedDict):
    name: str
    partitions: list[OngoingPartitionReassignment]

@type_check_only
class OngoingPartitionReassignment(TypedDict):
    partition_index: int
    replicas: list[int]
    adding_replicas: list[int]
    removing_replicas: list[int]

@type_check_only
class OffsetDeleteRequest(TypedDict):
    """OffsetDelete request (key 47), v0-0."""

    group_id: str
    topics: list[OffsetDeleteRequestTopic]

@type_check_only
class OffsetDeleteRequestTopic(TypedDict):
    name: str
    partitions: list[OffsetDeleteRequestPartition]

@type_check_only
class OffsetDeleteRequestPartition(TypedDict):
    partition_index: int

@type_check_only
class OffsetDeleteResponse(TypedDict):
    """OffsetDelete response (key 47), v0-0."""

    error_code: int
    throttle_time_ms: int
    topics: list[OffsetDeleteResponseTopic]

@type_check_only
class OffsetDeleteResponseTopic(TypedDict):
    name: str
    partitions: list[OffsetDeleteResponsePartition]

@type_check_only
class OffsetDeleteResponsePartition(TypedDict):
    partition_index: int
    error_code: int

@type_check_only
class DescribeClientQuotasRequest(TypedDict):
    """DescribeClientQuotas request (key 48), v0-1."""

    components: list[QuotaFilterComponent]
    strict: bool

@type_check_only
class QuotaFilterComponent(TypedDict):
    entity_type: str
    match_type: int
    match_name: str | None

@type_check_only
class DescribeClientQuotasResponse(TypedDict):
    """DescribeClientQuotas response (key 48), v0-1."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    entries: list[DescribedQuotaEntry] | None

@type_check_only
class DescribedQuotaEntry(TypedDict):
    entity: list[QuotaEntityPart]
    values: list[QuotaValue]

@type_check_only
class QuotaEntityPart(TypedDict):
    entity_type: str
    entity_name: str | None

@type_check_only
class QuotaValue(TypedDict):
    key: str
    value: float

@type_check_only
class AlterClientQuotasRequest(TypedDict):
    """AlterClientQuotas request (key 49), v0-1."""

    entries: list[AlterQuotaEntry]
    validate_only: bool

@type_check_only
class AlterQuotaEntry(TypedDict):
    entity: list[QuotaEntityPart]
    ops: list[QuotaOp]

@type_check_only
class QuotaOp(TypedDict):
    key: str
    value: float
    remove: bool

@type_check_only
class AlterClientQuotasResponse(TypedDict):
    """AlterClientQuotas response (key 49), v0-1."""

    throttle_time_ms: int
    entries: list[AlteredQuotaEntry]

@type_check_only
class AlteredQuotaEntry(TypedDict):
    error_code: int
    error_message: str | None
    entity: list[QuotaEntityPart]

@type_check_only
class DescribeUserScramCredentialsRequest(TypedDict):
    """DescribeUserScramCredentials request (key 50), v0-0."""

    users: list[ScramUserName] | None

@type_check_only
class ScramUserName(TypedDict):
    name: str

@type_check_only
class DescribeUserScramCredentialsResponse(TypedDict):
    """DescribeUserScramCredentials response (key 50), v0-0."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    results: list[DescribeUserScramCredentialsResult]

@type_check_only
class DescribeUserScramCredentialsResult(TypedDict):
    user: str
    error_code: int
    error_message: str | None
    credential_infos: list[ScramCredentialInfo]

@type_check_only
class ScramCredentialInfo(TypedDict):
    mechanism: int
    iterations: int

@type_check_only
class AlterUserScramCredentialsRequest(TypedDict):
    """AlterUserScramCredentials request (key 51), v0-0."""

    deletions: list[ScramCredentialDeletion]
    upsertions: list[ScramCredentialUpsertion]

@type_check_only
class ScramCredentialDeletion(TypedDict):
    name: str
    mechanism: int

@type_check_only
class ScramCredentialUpsertion(TypedDict):
    name: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes

@type_check_only
class AlterUserScramCredentialsResponse(TypedDict):
    """AlterUserScramCredentials response (key 51), v0-0."""

    throttle_time_ms: int
    results: list[AlterUserScramCredentialsResult]

@type_check_only
class AlterUserScramCredentialsResult(TypedDict):
    user: str
    error_code: int
    error_message: str | None

@type_check_only
class UpdateFeaturesRequest(TypedDict):
    """UpdateFeatures request (key 57), v1-2."""

    timeout_ms: NotRequired[int]
    feature_updates: list[FeatureUpdateKey]
    validate_only: bool  # v1+

@type_check_only
class FeatureUpdateKey(TypedDict):
    feature: str
    max_version_level: int
    upgrade_type: NotRequired[int]  # v1+

@type_check_only
class UpdateFeaturesResponse(TypedDict):
    """UpdateFeatures response (key 57), v1-2."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    results: list[UpdatableFeatureResult]  # v0-1

@type_check_only
class UpdatableFeatureResult(TypedDict):
    feature: str
    error_code: int
    error_message: str | None

@type_check_only
class DescribeClusterRequest(TypedDict):
    """DescribeCluster request (key 60), v0-1."""

    include_cluster_authorized_operations: bool
    endpoint_type: NotRequired[int]  # v1+

@type_check_only
class DescribeClusterResponse(TypedDict):
    """DescribeCluster response (key 60), v0-1."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    endpoint_type: int  # v1+
    cluster_id: str
    controller_id: int
    brokers: list[DescribeClusterBroker]
    cluster_authorized_operations: int

@type_check_only
class DescribeClusterBroker(TypedDict):
    broker_id: int
    host: str
    port: int
    rack: str | None

@type_check_only
class DescribeProducersRequest(TypedDict):
    """DescribeProducers request (key 61), v0-0."""

    topics: list[DescribeProducersTopic]

@type_check_only
class DescribeProducersTopic(TypedDict):
    name: str
    partition_indexes: list[int]

@type_check_only
class DescribeProducersResponse(TypedDict):
    """DescribeProducers response (key 61), v0-0."""

    throttle_time_ms: int
    topics: list[DescribeProducersTopicResponse]

@type_check_only
class DescribeProducersTopicResponse(TypedDict):
    name: str
    partitions: list[DescribeProducersPartition]

@type_check_only
class DescribeProducersPartition(TypedDict):
    partition_index: int
    error_code: int
    error_message: str | None
    active_producers: list[ProducerState]

@type_check_only
class ProducerState(TypedDict):
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int

@type_check_only
class DescribeTransactionsRequest(TypedDict):
    """DescribeTransactions request (key 65), v0-0."""

    transactional_ids: list[str]

@type_check_only
class DescribeTransactionsResponse(TypedDict):
    """DescribeTransactions response (key 65), v0-0."""

    throttle_time_ms: int
    transaction_states: list[DescribedTransaction]

@type_check_only
class DescribedTransaction(TypedDict):
    error_code: int
    transactional_id: str
    transaction_state: str
    transaction_timeout_ms: int
    transaction_start_time_ms: int
    producer_id: int
    producer_epoch: int
    topics: list[DescribeTransactionsTopic]

@type_check_only
class DescribeTransactionsTopic(TypedDict):
    topic: str
    partitions: list[int]

@type_check_only
class ListTransactionsRequest(TypedDict):
    """ListTransactions request (key 66), v0-1."""

    state_filters: list[str]
    producer_id_filters: list[int]
    duration_filter: NotRequired[int]  # v1+

@type_check_only
class ListTransactionsResponse(TypedDict):
    """ListTransactions response (key 66), v0-1."""

    throttle_time_ms: int
    error_code: int
    unknown_state_filters: list[str]
    transaction_states: list[ListedTransaction]

@type_check_only
class ListedTransaction(TypedDict):
    transactional_id: str
    producer_id: int
    transaction_state: str

@type_check_only
class ConsumerGroupHeartbeatRequest(TypedDict):
    """ConsumerGroupHeartbeat request (key 68), v0-1."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: NotRequired[int]
    subscribed_topic_names: list[str] | None
    subscribed_topic_regex: NotRequired[str | None]  # v1+
    server_assignor: str | None
    topic_partitions: list[GroupTopicPartitions] | None

@type_check_only
class GroupTopicPartitions(TypedDict):
    topic_id: bytes
    partitions: list[int]

@type_check_only
class ConsumerGroupHeartbeatResponse(TypedDict):
    """ConsumerGroupHeartbeat response (key 68), v0-1."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    member_id: str | None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: GroupAssignment | None

@type_check_only
class GroupAssignment(TypedDict):
    topic_partitions: list[GroupTopicPartitions]

@type_check_only
class ConsumerGroupDescribeRequest(TypedDict):
    """ConsumerGroupDescribe request (key 69), v0-1."""

    group_ids: list[str]
    include_authorized_operations: bool

@type_check_only
class ConsumerGroupDescribeResponse(TypedDict):
    """ConsumerGroupDescribe response (key 69), v0-1."""

    throttle_time_ms: int
    groups: list[ConsumerGroupDescribeDescribedGroup]

@type_check_only
class ConsumerGroupDescribeDescribedGroup(TypedDict):
    error_code: int
    error_message: str | None
    group_id: str
    group_state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: list[Member]
    authorized_operations: int

@type_check_only
class Member(TypedDict):
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    subscribed_topic_regex: str | None
    assignment: Assignment
    target_assignment: Assignment
    member_type: int  # v1+

@type_check_only
class Assignment(TypedDict):
    topic_partitions: list[TopicPartitions]

@type_check_only
class TopicPartitions(TypedDict):
    topic_id: bytes
    topic_name: str
    partitions: list[int]

@type_check_only
class DescribeTopicPartitionsRequest(TypedDict):
    """DescribeTopicPartitions request (key 75), v0-0."""

    topics: list[DescribeTopicPartitionsTopic]
    response_partition_limit: NotRequired[int]
    cursor: TopicPartitionsCursor | None

@type_check_only
class DescribeTopicPartitionsTopic(TypedDict):
    name: str

@type_check_only
class TopicPartitionsCursor(TypedDict):
    topic_name: str
    partition_index: int

@type_check_only
class DescribeTopicPartitionsResponse(TypedDict):
    """DescribeTopicPartitions response (key 75), v0-0."""

    throttle_time_ms: int
    topics: list[DescribedTopic]
    next_cursor: TopicPartitionsCursor | None

@type_check_only
class DescribedTopic(TypedDict):
    error_code: int
    name: str | None
    topic_id: bytes
    is_internal: bool
    partitions: list[DescribedTopicPartition]
    topic_authorized_operations: int

@type_check_only
class DescribedTopicPartition(TypedDict):
    error_code: int
    partition_index: int
    leader_id: int
    leader_epoch: int
    replica_nodes: list[int]
    isr_nodes: list[int]
    eligible_leader_replicas: list[int] | None
    last_known_elr: list[int] | None
    offline_replicas: list[int]

@type_check_only
class ShareGroupHeartbeatRequest(TypedDict):
    """ShareGroupHeartbeat request (key 76), v1-1."""

    group_id: str
    member_id: str
    member_epoch: int
    rack_id: str | None
    subscribed_topic_names: list[str] | None

@type_check_only
class ShareGroupHeartbeatResponse(TypedDict):
    """ShareGroupHeartbeat response (key 76), v1-1."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    member_id: str | None
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: GroupAssignment | None

@type_check_only
class ShareGroupDescribeRequest(TypedDict):
    """ShareGroupDescribe request (key 77), v1-1."""

    group_ids: list[str]
    include_authorized_operations: bool

@type_check_only
class ShareGroupDescribeResponse(TypedDict):
    """ShareGroupDescribe response (key 77), v1-1."""

    throttle_time_ms: int
    groups: list[DescribedShareGroup]

@type_check_only
class DescribedShareGroup(TypedDict):
    error_code: int
    error_message: str | None
    group_id: str
    group_state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: list[ShareGroupMember]
    authorized_operations: int

@type_check_only
class ShareGroupMember(TypedDict):
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    assignment: Assignment

@type_check_only
class ShareFetchRequest(TypedDict):
    """ShareFetch request (key 78), v1-2."""

    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    max_wait_ms: int
    min_bytes: int
    max_bytes: NotRequired[int]
    max_records: int
    batch_size: int
    share_acquire_mode: NotRequired[int]  # v2+
    is_renew_ack: NotRequired[bool]  # v2+
    topics: list[ShareFetchTopic]
    forgotten_topics_data: list[ShareForgottenTopic]

@type_check_only
class ShareFetchTopic(TypedDict):
    topic_id: bytes
    partitions: list[ShareFetchPartition]

@type_check_only
class ShareFetchPartition(TypedDict):
    partition_index: int
    acknowledgement_batches: list[AcknowledgementBatch]

@type_check_only
class AcknowledgementBatch(TypedDict):
    first_offset: int
    last_offset: int
    acknowledge_types: list[int]

@type_check_only
class ShareForgottenTopic(TypedDict):
    topic_id: bytes
    partitions: list[int]

@type_check_only
class ShareFetchResponse(TypedDict):
    """ShareFetch response (key 78), v1-2."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    acquisition_lock_timeout_ms: int
    responses: list[ShareFetchableTopicResponse]
    node_endpoints: list[NodeEndpoint]

@type_check_only
class ShareFetchableTopicResponse(TypedDict):
    topic_id: bytes
    partitions: list[SharePartitionData]

@type_check_only
class SharePartitionData(TypedDict):
    partition_index: int
    error_code: int
    error_message: str | None
    acknowledge_error_code: int
    acknowledge_error_message: str | None
    current_leader: LeaderIdAndEpoch
    records: SharedBytes | None
    acquired_records: list[AcquiredRecords]

@type_check_only
class AcquiredRecords(TypedDict):
    first_offset: int
    last_offset: int
    delivery_count: int

@type_check_only
class ShareAcknowledgeRequest(TypedDict):
    """ShareAcknowledge request (key 79), v1-2."""

    group_id: str | None
    member_id: str | None
    share_session_epoch: int
    is_renew_ack: NotRequired[bool]  # v2+
    topics: list[AcknowledgeTopic]

@type_check_only
class AcknowledgeTopic(TypedDict):
    topic_id: bytes
    partitions: list[AcknowledgePartition]

@type_check_only
class AcknowledgePartition(TypedDict):
    partition_index: int
    acknowledgement_batches: list[AcknowledgementBatch]

@type_check_only
class ShareAcknowledgeResponse(TypedDict):
    """ShareAcknowledge response (key 79), v1-2."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    acquisition_lock_timeout_ms: int  # v2+
    responses: list[ShareAcknowledgeTopicResponse]
    node_endpoints: list[NodeEndpoint]

@type_check_only
class ShareAcknowledgeTopicResponse(TypedDict):
    topic_id: bytes
    partitions: list[AcknowledgePartitionData]

@type_check_only
class AcknowledgePartitionData(TypedDict):
    partition_index: int
    error_code: int
    error_message: str | None
    current_leader: LeaderIdAndEpoch

@type_check_only
class DescribeShareGroupOffsetsRequest(TypedDict):
    """DescribeShareGroupOffsets request (key 90), v0-1."""

    groups: list[ShareOffsetsRequestGroup]

@type_check_only
class ShareOffsetsRequestGroup(TypedDict):
    group_id: str
    topics: list[ShareOffsetsRequestTopic] | None

@type_check_only
class ShareOffsetsRequestTopic(TypedDict):
    topic_name: str
    partitions: list[int]

@type_check_only
class DescribeShareGroupOffsetsResponse(TypedDict):
    """DescribeShareGroupOffsets response (key 90), v0-1."""

    throttle_time_ms: int
    groups: list[ShareOffsetsGroup]

@type_check_only
class ShareOffsetsGroup(TypedDict):
    group_id: str
    topics: list[ShareOffsetsTopic]
    error_code: int
    error_message: str | None

@type_check_only
class ShareOffsetsTopic(TypedDict):
    topic_name: str
    topic_id: bytes
    partitions: list[ShareOffsetsPartition]

@type_check_only
class ShareOffsetsPartition(TypedDict):
    partition_index: int
    start_offset: int
    leader_epoch: int
    lag: int  # v1+
    error_code: int
    error_message: str | None

@type_check_only
class AlterShareGroupOffsetsRequest(TypedDict):
    """AlterShareGroupOffsets request (key 91), v0-0."""

    group_id: str
    topics: list[AlterShareOffsetsTopic]

@type_check_only
class AlterShareOffsetsTopic(TypedDict):
    topic_name: str
    partitions: list[AlterShareOffsetsPartition]

@type_check_only
class AlterShareOffsetsPartition(TypedDict):
    partition_index: int
    start_offset: int

@type_check_only
class AlterShareGroupOffsetsResponse(TypedDict):
    """AlterShareGroupOffsets response (key 91), v0-0."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    responses: list[AlterShareOffsetsTopicResult]

@type_check_only
class AlterShareOffsetsTopicResult(TypedDict):
    topic_name: str
    topic_id: bytes
    partitions: list[AlterShareOffsetsPartitionResult]

@type_check_only
class AlterShareOffsetsPartitionResult(TypedDict):
    partition_index: int
    error_code: int
    error_message: str | None

@type_check_only
class DeleteShareGroupOffsetsRequest(TypedDict):
    """DeleteShareGroupOffsets request (key 92), v0-0."""

    group_id: str
    topics: list[DeleteShareOffsetsTopic]

@type_check_only
class DeleteShareOffsetsTopic(TypedDict):
    topic_name: str

@type_check_only
class DeleteShareGroupOffsetsResponse(TypedDict):
    """DeleteShareGroupOffsets response (key 92), v0-0."""

    throttle_time_ms: int
    error_code: int
    error_message: str | None
    responses: list[DeleteShareOffsetsTopicResult]

@type_check_only
class DeleteShareOffsetsTopicResult(TypedDict):
    topic_name: str
    topic_id: bytes
    error_code: int
    error_message: str | None

# END GENERATED
