"""Connection behaviour on edge cases, against an in-process fake peer (no real broker)."""

from __future__ import annotations

import asyncio
import struct
import time
from typing import Any

import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.config import ConnectionConfig
from ferrokafka.conn import Connection
from ferrokafka.protocol import ApiKey

from .fake_broker import FakeBroker

EMPTY_METADATA: dict[str, Any] = {
    "brokers": [],
    "topics": [],
    "cluster_id": "c",
    "controller_id": 1,
}


async def _answer_metadata(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
    return _native.encode_response(key, version, corr, EMPTY_METADATA)


async def _silence(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
    return None


async def _connect(broker: FakeBroker, **kw: Any) -> Connection:
    conn = Connection("127.0.0.1", broker.port, node_id=-1, **kw)
    await conn.connect()
    return conn


async def test_negotiates_versions_and_answers() -> None:
    broker = await FakeBroker(_answer_metadata).start()
    try:
        conn = await _connect(broker)
        assert conn.version_for(ApiKey.METADATA) == _native.supported_apis()[3][2]
        reply = await conn.send(ApiKey.METADATA, {"topics": None})
        assert reply["cluster_id"] == "c"
        # The first request on the wire was ApiVersions at our highest version.
        assert broker.requests[0][:2] == (18, _native.supported_apis()[18][2])
        conn.close()
    finally:
        await broker.stop()


async def test_pipelined_requests_are_matched_by_correlation_id() -> None:
    # Answer out of order: the peer delays even correlation ids.
    async def handler(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        reply = dict(EMPTY_METADATA, cluster_id=f"c{corr}")
        return _native.encode_response(key, version, corr, reply)

    broker = await FakeBroker(handler).start()
    try:
        conn = await _connect(broker)
        replies = await asyncio.gather(
            *(conn.send(ApiKey.METADATA, {"topics": None}) for _ in range(200))
        )
        ids = [int(r["cluster_id"][1:]) for r in replies]
        assert ids == sorted(ids) and len(set(ids)) == 200
        assert conn.in_flight == 0
        conn.close()
    finally:
        await broker.stop()


async def test_request_timeout_fails_waiter_and_closes() -> None:
    broker = await FakeBroker(_silence).start()
    try:
        conn = await _connect(broker, config=ConnectionConfig(request_timeout_ms=200))
        other = asyncio.ensure_future(conn.send(ApiKey.METADATA, {"topics": None}, timeout_ms=5000))
        start = time.monotonic()
        with pytest.raises(
            Errors.RequestTimedOutError,
            match=f"Metadata v{_native.supported_apis()[3][2]} to node -1",
        ):
            await conn.send(ApiKey.METADATA, {"topics": None})
        assert time.monotonic() - start < 2
        # The connection closed, so the other waiter failed too instead of hanging.
        with pytest.raises(Errors.KafkaConnectionError):
            await other
        assert conn.closed
    finally:
        await broker.stop()


async def test_dead_socket_fails_every_waiter_at_once() -> None:
    broker = await FakeBroker(_silence).start()
    try:
        conn = await _connect(broker, config=ConnectionConfig(request_timeout_ms=30000))
        waiters = [
            asyncio.ensure_future(conn.send(ApiKey.METADATA, {"topics": None})) for _ in range(5)
        ]
        await asyncio.sleep(0.05)
        assert conn.in_flight == 5
        start = time.monotonic()
        await broker.stop()
        results = await asyncio.gather(*waiters, return_exceptions=True)
        assert time.monotonic() - start < 2
        assert all(isinstance(r, Errors.KafkaConnectionError) for r in results)
        with pytest.raises(Errors.KafkaConnectionError, match="not open"):
            await conn.send(ApiKey.METADATA, {"topics": None})
    finally:
        await broker.stop()


async def test_hostile_frame_size_closes_connection_with_typed_error() -> None:
    async def huge(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        return struct.pack(">i", 2_000_000_000) + struct.pack(">i", corr)

    broker = await FakeBroker(huge).start()
    try:
        conn = await _connect(broker, max_frame_size=1 << 20)
        with pytest.raises(Errors.KafkaConnectionError, match="exceeds the maximum"):
            await conn.send(ApiKey.METADATA, {"topics": None})
        assert conn.closed
    finally:
        await broker.stop()


async def test_unknown_correlation_id_closes_connection() -> None:
    async def wrong(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        return _native.encode_response(key, version, corr + 1000, EMPTY_METADATA)

    broker = await FakeBroker(wrong).start()
    try:
        conn = await _connect(broker)
        with pytest.raises(Errors.KafkaConnectionError, match="unknown correlation id"):
            await conn.send(ApiKey.METADATA, {"topics": None})
    finally:
        await broker.stop()


async def test_truncated_response_raises_protocol_decode_error() -> None:
    async def short(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes:
        full = _native.encode_response(key, version, corr, EMPTY_METADATA)
        body_bytes = full[4:-3]
        return struct.pack(">i", len(body_bytes)) + body_bytes

    broker = await FakeBroker(short).start()
    try:
        conn = await _connect(broker)
        with pytest.raises(Errors.ProtocolDecodeError, match="Metadata"):
            await conn.send(ApiKey.METADATA, {"topics": None})
    finally:
        await broker.stop()


async def test_connect_refused_is_typed() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    conn = Connection("127.0.0.1", port, node_id=7)
    with pytest.raises(Errors.KafkaConnectionError, match=f"node 7 at 127.0.0.1:{port}"):
        await conn.connect(timeout=2)


async def test_older_broker_unsupported_api_versions_is_retried_lower() -> None:
    broker = await FakeBroker(_answer_metadata, api_versions_max=2).start()
    try:
        conn = await _connect(broker)
        sent = [(k, v) for k, v, _, _ in broker.requests if k == 18]
        assert sent == [(18, _native.supported_apis()[18][2]), (18, 2)]
        assert conn.version_for(ApiKey.METADATA) == _native.supported_apis()[3][2]
        conn.close()
    finally:
        await broker.stop()


async def test_a_socket_reset_as_it_opens_is_a_typed_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A peer that resets the connection right after accepting it makes setting TCP_NODELAY
    fail with EBADF (seen behind a proxy in front of a killed broker): ``connect`` raises
    ``KafkaConnectionError`` and the connection is closed, as for any lost connection."""
    import asyncio.trsock

    def reset(self: object, *args: object) -> None:
        raise OSError(9, "Bad file descriptor")

    broker = await FakeBroker(_answer_metadata).start()
    try:
        monkeypatch.setattr(asyncio.trsock.TransportSocket, "setsockopt", reset)
        conn = Connection("127.0.0.1", broker.port, node_id=3)
        with pytest.raises(Errors.KafkaConnectionError, match=r"node 3 .* lost as it opened"):
            await conn.connect(timeout=2)
        assert conn.closed
    finally:
        await broker.stop()


async def test_a_refused_login_raises_after_the_socket_is_closed() -> None:
    """connect() that fails (here the broker refuses the SASL mechanism) closes its socket and
    raises only once it is closed: over TLS closing takes a round trip, and a caller whose
    event loop ends at the error would otherwise leave the socket open."""

    async def refuse(key: int, version: int, corr: int, body: dict[str, Any]) -> bytes | None:
        assert key == ApiKey.SASL_HANDSHAKE
        return _native.encode_response(
            key, version, corr, {"error_code": 33, "mechanisms": ["GSSAPI"]}
        )

    broker = await FakeBroker(refuse).start()
    try:
        config = ConnectionConfig(
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="alice",
            sasl_plain_password="secret",
        )
        conn = Connection("127.0.0.1", broker.port, node_id=-1, config=config)
        with pytest.raises(Errors.KafkaError):
            await conn.connect()
        assert conn.closed
        assert conn._socket_closed.is_set(), "raised before the socket was closed"
    finally:
        await broker.stop()
