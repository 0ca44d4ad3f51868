"""The sans-I/O protocol core (Rust). Bytes in, values out: no sockets, no threads.

Requests and responses cross as dicts of their fields, named in snake_case after Kafka's message
schemas; fields a version lacks may be omitted (their defaults apply) and unknown names are
rejected. Decoding failures raise ``ferrokafka.errors.ProtocolDecodeError`` (a hostile frame
size ``FrameTooLargeError``); an API or version ferrokafka does not speak raises
``ferrokafka.errors.IncompatibleBrokerVersion``; a dict of the wrong shape raises ``TypeError``.
"""

from typing import Any, final

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "FrameDecoder",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "error_codes",
    "is_unsupported_version_reply",
    "peek_correlation_id",
    "supported_apis",
]

DEFAULT_MAX_FRAME_SIZE: int
"""The default cap on one frame (100 MiB)."""

@final
class FrameDecoder:
    """Splits a connection's byte stream into size-prefixed frames.

    A size prefix above ``max_frame_size`` (or negative) raises ``FrameTooLargeError`` as soon
    as its four bytes arrive, before the body is buffered; the decoder then stays failed.
    """

    def __new__(cls, max_frame_size: int = ...) -> FrameDecoder: ...
    def feed(self, data: bytes) -> list[bytes]:
        """Append ``data``; return every frame body (without size prefix) now complete."""
    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned in a frame."""
    @property
    def max_frame_size(self) -> int: ...

def encode_request(
    api_key: int,
    api_version: int,
    correlation_id: int,
    client_id: str | None,
    body: dict[str, Any],
) -> bytes:
    """A complete request frame (size prefix, header v1/v2, body)."""

def decode_response(api_key: int, api_version: int, frame: bytes) -> tuple[int, dict[str, Any]]:
    """(correlation_id, body) of a response frame given without its size prefix."""

def decode_request(frame: bytes) -> tuple[int, int, int, str | None, dict[str, Any]]:
    """(api_key, api_version, correlation_id, client_id, body) of a request frame without its
    size prefix. For fake brokers in tests."""

def encode_response(
    api_key: int, api_version: int, correlation_id: int, body: dict[str, Any]
) -> bytes:
    """A complete response frame (size prefix, header, body). For fake brokers in tests."""

def peek_correlation_id(frame: bytes) -> int:
    """The correlation id at the start of a response frame."""

def is_unsupported_version_reply(frame: bytes) -> bool:
    """True for an ApiVersions reply carrying UNSUPPORTED_VERSION (always in the v0 layout)."""

def supported_apis() -> dict[int, tuple[str, int, int, int]]:
    """api_key -> (name, min_version, max_version, first_flexible_version)."""

def error_codes() -> dict[int, tuple[str, bool]]:
    """Kafka error code -> (Kafka's constant name, retriable) for every code the core knows."""
