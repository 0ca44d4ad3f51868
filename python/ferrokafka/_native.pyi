"""The sans-I/O protocol core (Rust). Bytes in, values out: no sockets, no threads.

Requests and responses cross as dicts of their fields, named in snake_case after Kafka's message
schemas; fields a version lacks may be omitted (their defaults apply) and unknown names are
rejected. Decoding failures raise ``ferrokafka.errors.ProtocolDecodeError`` (a hostile frame
size ``FrameTooLargeError``); an API or version ferrokafka does not speak raises
``ferrokafka.errors.IncompatibleBrokerVersion``; a dict of the wrong shape raises ``TypeError``.
"""

import mmap
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, final, overload

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "ArrowColumns",
    "ConsumerRecord",
    "DecodedPartition",
    "FrameDecoder",
    "ReceiveWindow",
    "SharedBytes",
    "__version__",
    "_records_direct_alloc",
    "arena_cache_info",
    "batch_position",
    "decode_columns",
    "decode_records",
    "decode_request",
    "decode_response",
    "encode_batch",
    "encode_request",
    "encode_response",
    "error_codes",
    "is_unsupported_version_reply",
    "murmur2",
    "peek_correlation_id",
    "records_end",
    "set_arena_cache",
    "set_malloc_trim_threshold",
    "supported_apis",
]

__version__: str
"""The package version (Cargo.toml's)."""
DEFAULT_MAX_FRAME_SIZE: int
"""The default cap on one frame (100 MiB)."""

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
class FrameDecoder:
    """Splits a connection's byte stream into size-prefixed frames.

    A size prefix above ``max_frame_size`` (or negative) raises ``FrameTooLargeError`` as soon
    as its four bytes arrive, before the body is buffered; the decoder then stays failed.
    A frame of ``direct_min`` bytes or more is received into its own storage: once its size is
    known, ``receive_window()`` offers the rest of it to ``recv_into``.
    """

    def __new__(cls, max_frame_size: int = ..., direct_min: int = ...) -> FrameDecoder: ...
    def feed(self, data: bytes) -> list[SharedBytes]:
        """Append ``data``; return every frame body (without size prefix) now complete."""
    def receive_window(self) -> memoryview | None:
        """The rest of the large frame being received (writable), or None: feed instead."""
    def received(
        self, nbytes: int, window: bool, scratch: bytearray | mmap.mmap
    ) -> list[SharedBytes]:
        """``nbytes`` arrived in the last ``receive_window()`` (``window``) or at the start of
        ``scratch`` (any contiguous buffer); return every frame now complete."""
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
    body: dict[str, Any],
) -> bytes:
    """A complete request frame (size prefix, header v1/v2, body)."""

def decode_response(api_key: int, api_version: int, frame: _Bytes) -> tuple[int, dict[str, Any]]:
    """(correlation_id, body) of a response frame given without its size prefix. A Fetch
    response's ``records`` are ``SharedBytes`` (no copy)."""

def decode_request(frame: bytes) -> tuple[int, int, int, str | None, dict[str, Any]]:
    """(api_key, api_version, correlation_id, client_id, body) of a request frame without its
    size prefix. For fake brokers in tests."""

def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: dict[str, Any]
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
    ) -> ConsumerRecord[_KT, _VT]: ...
    def _astuple(self) -> tuple[Any, ...]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __class_getitem__(cls, item: Any) -> Any: ...

_R = TypeVar("_R", covariant=True)

@final
class ArrowColumns:
    """One partition's records as Arrow columns in Spark's Kafka schema (``key`` binary,
    ``value`` binary, ``topic`` string, ``partition`` int32, ``offset`` int64, ``timestamp``
    timestamp[us, UTC], ``timestampType`` int32, ``headers`` list<struct<key string, value
    binary>>). Implements the Arrow PyCapsule interface: ``pyarrow.record_batch(cols)`` reads
    the buffers in place."""

    @property
    def num_rows(self) -> int: ...
    def __len__(self) -> int: ...
    def __arrow_c_schema__(self) -> Any: ...
    def __arrow_c_array__(self, requested_schema: Any | None = None) -> tuple[Any, Any]: ...
    def to_pyarrow(self) -> Any:
        """A ``pyarrow.RecordBatch`` over the same buffers (needs pyarrow)."""

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
    max_decompressed_batch: int = 268435456,
    key_deserializer: Callable[[bytes | None], Any] | None = None,
    value_deserializer: Callable[[bytes | None], Any] | None = None,
) -> DecodedPartition[list[ConsumerRecord[Any, Any]]]:
    """Decode one partition's raw ``records`` bytes (record batches v2, any codec).

    A deserializer that raises ends the records at its record (``next_offset`` is that
    record's offset); on the first record its exception is raised, with ``topic``,
    ``partition`` and ``offset`` attributes set.

    Raises ``ferrokafka.errors.CorruptRecordException`` naming topic, partition, batch offset
    and byte position for a CRC mismatch, a legacy (magic < 2) message set, a corrupt record,
    or a batch that decompresses past ``max_decompressed_batch``.
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
    max_decompressed_batch: int = 268435456,
) -> DecodedPartition[ArrowColumns]:
    """Like ``decode_records``, but into Arrow columns built in Rust (one copy of each value)."""

def batch_position(records: _Bytes, base_offset: int) -> int | None:
    """The byte position where the batch with ``base_offset`` starts in a partition's records
    bytes (from batch headers only); None when there is no such batch."""

def records_end(records: _Bytes) -> tuple[int, int] | None:
    """``(next_offset, last_leader_epoch)`` of the last whole batch in a partition's records
    bytes, read from batch headers only (no CRC check): where the next fetch starts. None when
    no batch is whole."""

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
