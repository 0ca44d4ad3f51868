"""One broker connection: an asyncio Protocol with pipelined, correlated requests.

The bytes are the native core's business (``_native._FrameDecoder`` splits the stream, and
its encoders and decoders do the messages: see ``encode_request``/``decode_response`` here);
this module owns only waiting: one future per in-flight request, each with its own timeout
armed by ``loop.call_later``.
"""

from __future__ import annotations

import asyncio
import logging
import mmap
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from . import _native
from . import errors as Errors
from ._rng import rng
from .config.connection import ConnectionConfig
from .metrics.network import NodeSensors
from .protocol import Api, ApiKey, key_of
from .sasl import PASSWORD_MECHANISMS, new_mechanism
from .waits import wait_for

if TYPE_CHECKING:
    from ._native import ApiVersionsRequest, SaslAuthenticateRequest, SaslHandshakeRequest

log = logging.getLogger(__name__)

CLIENT_SOFTWARE_NAME = "ferrokafka"
CLIENT_SOFTWARE_VERSION = _native.__version__
#: What ferrokafka speaks, api key -> (name, min version, max version, ...): made once (the
#: native call builds the dict anew, and requests ask for it).
SUPPORTED_APIS = _native.supported_apis()

Body = dict[str, Any]
"""A request or response as a dict of its fields (snake_case names from Kafka's schemas)."""

AUTHENTICATION_ERRORS: tuple[type[Errors.KafkaError], ...] = (
    Errors.AuthenticationFailedError,
    Errors.SaslAuthenticationFailed,
    Errors.UnsupportedSaslMechanismError,
    Errors.IllegalSaslStateError,
    Errors.KafkaTLSError,
)
"""What a failed authentication raises from ``Connection.connect`` (a refused certificate or
SASL exchange): wrong credentials or configuration, which connecting again will not fix."""

Frame = _native.SharedBytes | bytes
"""A received response frame (native-owned bytes), or ``b""`` when none is awaited."""

_Req = TypeVar("_Req", bound=Mapping[str, Any])
_Resp = TypeVar("_Resp")


# As plain ints: compared on every request, where an ``ApiKey`` member's lookup costs more.
_PRODUCE = ApiKey.PRODUCE.value
_FETCH = ApiKey.FETCH.value
_SHARE_FETCH = ApiKey.SHARE_FETCH.value


def encode_request(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: Mapping[str, Any]
) -> bytes:
    """The frame of an ``api_key`` request. A Produce request has its own native encoder, which
    copies each record batch once, from its ``bytes`` into the frame; every other API goes
    through the generic one."""
    if api_key == _PRODUCE:
        return _native.encode_produce_request(version, correlation_id, client_id, body)
    return _native.encode_request(api_key, version, correlation_id, client_id, body)


def decode_response(api_key: int, version: int, frame: Frame) -> Any:
    """The body of an ``api_key`` response ``frame``, sent at ``version``. Fetch and ShareFetch
    responses have their own native decoders, which leave each partition's records in the frame
    (``SharedBytes`` views, no copy); every other API goes through the generic one."""
    if api_key == _FETCH:
        return _native.decode_fetch_response(version, frame)[1]
    if api_key == _SHARE_FETCH:
        return _native.decode_share_fetch_response(version, frame)[1]
    return _native.decode_response(api_key, version, frame)[1]


def _decode(api: Api[Any, _Resp], version: int, frame: Frame) -> _Resp:
    """The typed body of ``api``'s response ``frame``, sent at ``version``."""
    return cast(_Resp, decode_response(api.key, version, frame))


class _Pending:
    """A request awaiting its response: the waiter's future and the request's timer.

    An ``abandoned`` request's waiter was cancelled. The broker answers it all the same, in
    order, so its entry stays until then (or until the timer fires), and the answer is
    dropped: without the entry the answer's correlation id would be unknown, which closes the
    connection and fails every other request on it. Its ``future`` is then the connection's
    own, nobody's result, so waiting for what is in flight (a re-authentication does) still
    waits for that answer."""

    __slots__ = ("abandoned", "api_key", "future", "timer", "version")

    def __init__(
        self,
        api_key: int,
        version: int,
        future: asyncio.Future[Frame],
        timer: asyncio.TimerHandle | None,
    ) -> None:
        self.api_key = api_key
        self.version = version
        self.future = future
        self.timer = timer
        self.abandoned = False

    def abandon(self) -> None:
        self.abandoned = True
        self.future = self.future.get_loop().create_future()

    def fail(self, exc: Errors.KafkaError) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.future.done():
            return
        if self.abandoned:
            self.future.cancel()  # nobody is waiting to hear why
        else:
            self.future.set_exception(exc)


_SCRATCH_SIZE = 256 * 1024
"""Bytes received at once while no large frame is in progress (asyncio's own read size). The
scratch is an anonymous mapping, not a zero-filled bytearray: only the pages the kernel has
written into count in the process's RSS (a connection that only sees small responses keeps a
few pages, not 256 KiB)."""


class _FrameReceiver(asyncio.BufferedProtocol):
    """Receives into buffers the native frame decoder hands out and passes frames to the
    connection. The rest of a large response (a Fetch) is received straight into the storage
    its records are decoded from; everything else goes through a reused scratch buffer."""

    def __init__(self, conn: Connection, max_frame_size: int) -> None:
        self._conn = conn
        self._decoder = _native._FrameDecoder(max_frame_size)
        self._scratch = mmap.mmap(-1, _SCRATCH_SIZE, flags=mmap.MAP_PRIVATE)
        self._scratch_view = memoryview(self._scratch)
        self._window: memoryview | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports do not derive from asyncio.Transport; they have its methods.
        self.transport = cast(asyncio.Transport, transport)

    def get_buffer(self, sizehint: int) -> memoryview:
        self._release_window()
        window = self._window = self._decoder.receive_window()
        return self._scratch_view if window is None else window

    def _release_window(self) -> None:
        """Release the window handed out last, unless the event loop still holds a buffer of
        it (uvloop does until ``buffer_updated`` returns): the decoder hands out the frame it
        fills only once it is released, so the frame cannot change afterwards."""
        if self._window is None:
            return
        try:
            self._window.release()
        except BufferError:
            return
        self._window = None

    def buffer_updated(self, nbytes: int) -> None:
        into_window = self._window is not None
        self._release_window()
        try:
            frames = self._decoder.received(nbytes, into_window, self._scratch)
        except Errors.KafkaError as exc:
            # The stream can no longer be trusted (hostile or corrupt size prefix).
            self._conn.close(exc)
            return
        if self._decoder.held:
            # Complete, but the loop still holds the window's buffer: take it next turn.
            asyncio.get_running_loop().call_soon(self._take_held)
        self._deliver(frames)

    def _take_held(self) -> None:
        self._release_window()
        self._deliver(self._decoder.take())

    def _deliver(self, frames: list[_native.SharedBytes]) -> None:
        for frame in frames:
            self._conn._on_frame(frame)

    def connection_lost(self, exc: Exception | None) -> None:
        self._conn._on_connection_lost(exc)


class Connection:
    """A connection to one broker (or bootstrap address).

    ``node_id`` is the key the pool knows it by: a bootstrap id (-1, -2, ...), a broker id, or a
    coordinator key (2147483647 - broker id). Requests are pipelined: any number may be in
    flight, matched to their responses by correlation id. A request that outlives its timeout
    fails with ``RequestTimedOutError`` and closes the connection (the broker may be stuck, and
    later responses could no longer be trusted); a lost socket fails every waiter at once with
    ``KafkaConnectionError``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        node_id: int,
        config: ConnectionConfig | None = None,
        max_frame_size: int = _native.DEFAULT_MAX_FRAME_SIZE,
        on_close: Callable[[Connection, BaseException | None], None] | None = None,
        sensors: NodeSensors | None = None,
    ) -> None:
        if config is None:
            config = ConnectionConfig()
        self.host = host
        self.port = port
        self.node_id = node_id
        self._client_id = config.client_id
        self._request_timeout = config.request_timeout_ms / 1000
        self._max_frame_size = max_frame_size
        self._ssl_context = config.ssl_context if config.uses_tls else None
        self._sasl_config = config if config.uses_sasl else None
        self.sasl_session_lifetime_ms: int | None = None
        """The broker's SASL session lifetime (SaslAuthenticate v1+; KIP-368): the broker
        closes the connection past it, so the connection authenticates again on its socket
        before then. 0 when the broker sets no limit, None before authentication or without
        SASL."""
        self.sasl_authenticated_at: float | None = None
        """When the SASL exchange ended (``time.monotonic()``), the start of that lifetime."""
        self.sasl_authentications = 0
        """SASL exchanges completed on this socket: 1 after connecting, one more for each
        re-authentication."""
        self._reauth_timer: asyncio.TimerHandle | None = None
        self._reauthentication: asyncio.Task[None] | None = None
        self._tcp_keepalive = config.tcp_keepalive
        self._on_close = on_close
        self._sensors = sensors
        self._receiver: _FrameReceiver | None = None
        self._pending: dict[int, _Pending] = {}
        self._next_correlation_id = 0
        self._closed = False
        self._close_reason: BaseException | None = None
        self._socket_closed = asyncio.Event()
        self._broker_versions: dict[int, tuple[int, int]] = {}
        self.finalized_features: dict[str, int] = {}
        """The cluster's finalized feature levels as this broker last knew them (ApiVersions
        v3+; empty from older brokers), with the metadata epoch they were read at."""
        self.finalized_features_epoch = -1
        self.last_activity = time.monotonic()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Connection node_id={self.node_id} {self.host}:{self.port} {state}>"

    # -- lifecycle -------------------------------------------------------------------------

    async def connect(self, timeout: float | None = None) -> None:
        """Open the socket and negotiate API versions. Raises ``KafkaConnectionError``."""
        loop = asyncio.get_running_loop()
        timeout = self._request_timeout if timeout is None else timeout
        try:
            transport, protocol = await wait_for(
                loop.create_connection(
                    lambda: _FrameReceiver(self, self._max_frame_size),
                    self.host,
                    self.port,
                    ssl=self._ssl_context,
                ),
                timeout,
                discard=lambda made: made[0].close(),
            )
        except ssl.SSLError as exc:
            self._closed = True
            raise self._tls_error(exc) from exc
        except (OSError, asyncio.TimeoutError) as exc:
            self._closed = True
            raise Errors.KafkaConnectionError(
                f"cannot connect to node {self.node_id} at {self.host}:{self.port}: {exc!r}"
            ) from exc
        self._receiver = protocol
        try:
            self._set_socket_options(transport.get_extra_info("socket"))
            await self._negotiate_versions()
            if self._sasl_config is not None:
                await self._authenticate(self._sasl_config)
        except BaseException as exc:
            self.close(exc if isinstance(exc, Exception) else None)
            if isinstance(exc, Exception):
                # A TLS connection closes in a round trip (close_notify both ways): raised at
                # once, a refused login could end the caller's event loop with the socket
                # still open.
                await self.wait_closed()
            raise

    def _set_socket_options(self, sock: socket.socket | None) -> None:
        """TCP_NODELAY (and keep-alive). A peer that reset the connection as it opened makes
        these fail (``EBADF``): that is a lost connection like any other, not a bug."""
        if sock is None:
            return
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tcp_keepalive:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        except OSError as exc:
            raise Errors.KafkaConnectionError(
                f"connection to node {self.node_id} at {self.host}:{self.port} was lost as it "
                f"opened: {exc!r}"
            ) from exc

    async def _negotiate_versions(self) -> None:
        api = Api.API_VERSIONS
        version = SUPPORTED_APIS[api.key][2]
        body: ApiVersionsRequest = {
            "client_software_name": CLIENT_SOFTWARE_NAME,
            "client_software_version": CLIENT_SOFTWARE_VERSION,
        }
        frame = await self.send_raw(api.key, version, body)
        if _native.is_unsupported_version_reply(frame):
            # The broker answered in the v0 layout with its own range; retry within it.
            theirs = {k["api_key"]: k["max_version"] for k in _decode(api, 0, frame)["api_keys"]}
            version = min(version, theirs.get(api.key, 0))
            reply = await self.send(api, body, version=version)
        else:
            reply = _decode(api, version, frame)
        if reply["error_code"]:
            raise Errors.for_code(reply["error_code"])(f"ApiVersions to node {self.node_id} failed")
        self._broker_versions = {
            k["api_key"]: (k["min_version"], k["max_version"]) for k in reply["api_keys"]
        }
        epoch = reply["finalized_features_epoch"]
        self.finalized_features_epoch = -1 if epoch is None else epoch
        self.finalized_features = {
            f["name"]: f["max_version_level"] for f in reply["finalized_features"] or ()
        }

    async def _authenticate(self, config: ConnectionConfig) -> None:
        """SaslHandshake (the mechanism), then SaslAuthenticate rounds until the mechanism is
        satisfied. Raises ``UnsupportedSaslMechanismError`` when the listener does not enable
        the mechanism, ``SaslAuthenticationFailed`` when the broker refuses the credentials,
        ``AuthenticationFailedError`` when the broker's answers fail the mechanism's checks
        (or the token provider fails); each names the mechanism and the broker, none carries
        the password or token. Then arms re-authentication when the broker gave the session a
        lifetime (KIP-368)."""
        name = config.sasl_mechanism
        user = config.sasl_plain_username
        where = f"node {self.node_id} at {self.host}:{self.port}"
        request: SaslHandshakeRequest = {"mechanism": name}
        handshake = await self._exchange(Api.SASL_HANDSHAKE, request)
        code = handshake["error_code"]
        if code:
            enabled = ", ".join(handshake["mechanisms"]) or "none"
            if code == Errors.UnsupportedSaslMechanismError.errno:
                raise Errors.UnsupportedSaslMechanismError(
                    f"SASL mechanism {name} is not enabled on {where}; its listener enables: "
                    f"{enabled}"
                )
            raise Errors.for_code(code)(f"SaslHandshake for {name} with {where} failed")

        mechanism = new_mechanism(
            name,
            config.sasl_plain_username,
            config.sasl_plain_password,
            token_provider=config.sasl_oauth_token_provider,
            host=self.host,
            kerberos_service_name=config.sasl_kerberos_service_name,
            kerberos_domain_name=config.sasl_kerberos_domain_name,
        )
        who = "" if user is None or name not in PASSWORD_MECHANISMS else f" as {user!r}"
        failed = f"{name} authentication{who} with {where} failed"
        try:
            await wait_for(mechanism.prepare(), self._request_timeout)
        except asyncio.TimeoutError:
            waited_for = (
                "no Kerberos service ticket came from the KDC"
                if name == "GSSAPI"
                else "the token provider gave no token"
            )
            raise Errors.AuthenticationFailedError(
                f"{failed}: {waited_for} within {self._request_timeout}s"
            ) from None
        except Exception as exc:
            if name == "GSSAPI" and isinstance(exc, Errors.AuthenticationFailedError):
                # The mechanism's own finding (the Kerberos library's), free of secrets.
                raise Errors.AuthenticationFailedError(f"{failed}: {exc.args[0]}") from None
            # The provider's own error is chained, not quoted: its text is the application's.
            raise Errors.AuthenticationFailedError(
                f"{failed}: the token provider raised {type(exc).__name__}"
            ) from exc
        try:
            token: bytes | None = mechanism.first_message()
        except Errors.AuthenticationFailedError as exc:
            raise Errors.AuthenticationFailedError(f"{failed}: {exc.args[0]}") from None
        lifetime = 0
        while token is not None:
            step: SaslAuthenticateRequest = {"auth_bytes": token}
            reply = await self._exchange(Api.SASL_AUTHENTICATE, step)
            code = reply["error_code"]
            if code:
                # A mechanism that heard the broker's reason (OAUTHBEARER's status) says it
                # best; the broker's error message otherwise.
                detail = mechanism.refusal or reply["error_message"]
                raise Errors.for_code(code)(failed + (f": {detail}" if detail else ""))
            lifetime = reply["session_lifetime_ms"]
            try:
                token = mechanism.respond(reply["auth_bytes"])
            except Errors.AuthenticationFailedError as exc:
                raise Errors.AuthenticationFailedError(f"{failed}: {exc.args[0]}") from None
        again = self.sasl_authentications > 0
        self.sasl_session_lifetime_ms = lifetime
        self.sasl_authenticated_at = time.monotonic()
        self.sasl_authentications += 1
        log.debug(
            "%s%s with %s to %s (session lifetime: %s)",
            "re-authenticated" if again else "authenticated",
            who,
            name,
            where,
            f"{lifetime} ms" if lifetime else "unlimited",
        )
        if lifetime > 0:
            # As Kafka's Java client: at a random point between 85% and 95% of the lifetime,
            # so that many connections made at once do not re-authenticate at once, and the
            # exchange (a token fetch, PBKDF2) ends before the broker's deadline.
            delay = lifetime / 1000 * rng.uniform(0.85, 0.95)
            loop = asyncio.get_running_loop()
            self._reauth_timer = loop.call_later(delay, self._begin_reauthentication)

    async def _exchange(self, api: Api[_Req, _Resp], body: _Req) -> _Resp:
        """A request of the SASL exchange: sent past the hold that keeps other requests back
        during a re-authentication, without counting as the connection's activity."""
        version = self.version_for(api.key)
        frame = await self._write_request(api.key, version, body, None, True, activity=False)
        return _decode(api, version, frame)

    def _begin_reauthentication(self) -> None:
        self._reauth_timer = None
        if self._closed or self._reauthentication is not None or self._sasl_config is None:
            return
        self._reauthentication = asyncio.get_running_loop().create_task(
            self._reauthenticate(self._sasl_config)
        )

    async def _reauthenticate(self, config: ConnectionConfig) -> None:
        """KIP-368 on this socket: new sends wait (the broker takes no other request during
        the exchange), the requests already sent are answered first, then the exchange runs
        again. A failure closes the connection with its error: the broker would close it at
        the session's end anyway."""
        try:
            while self._pending:
                await asyncio.wait([p.future for p in self._pending.values()])
            if self._closed:
                return
            await self._authenticate(config)
        except Exception as exc:
            if not self._closed:
                log.warning("re-authentication with node %s failed: %s", self.node_id, exc)
                self.close(exc)
        finally:
            self._reauthentication = None

    def close(self, reason: BaseException | None = None) -> None:
        """Close the socket and fail every in-flight request. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._close_reason = reason
        if self._reauth_timer is not None:
            self._reauth_timer.cancel()
            self._reauth_timer = None
        if self._receiver is not None and self._receiver.transport is not None:
            self._receiver.transport.close()
        self._fail_all(reason)
        if self._on_close is not None:
            self._on_close(self, reason)

    def _fail_all(self, reason: BaseException | None) -> None:
        pending, self._pending = self._pending, {}
        for p in pending.values():
            exc: Errors.KafkaConnectionError
            if isinstance(reason, Errors.KafkaTLSError):
                exc = Errors.KafkaTLSError(*reason.args)  # already names the broker
            else:
                exc = Errors.KafkaConnectionError(
                    f"connection to node {self.node_id} at {self.host}:{self.port} closed"
                    + (f": {reason}" if reason else "")
                )
            p.fail(exc)

    def _tls_error(self, exc: ssl.SSLError) -> Errors.KafkaTLSError:
        """A failed TLS handshake as one clear error naming the broker."""
        where = f"node {self.node_id} at {self.host}:{self.port}"
        if isinstance(exc, ssl.SSLCertVerificationError):
            return Errors.KafkaTLSError(
                f"TLS to {where} failed: the broker's certificate failed verification "
                f"({exc.verify_message}); check the ssl_context's CA and that the certificate "
                f"names {self.host!r}"
            )
        reason = exc.reason or str(exc)
        if "CERTIFICATE" in reason:
            # The broker's alert: no client certificate, or one its trust store rejects.
            return Errors.KafkaTLSError(
                f"TLS to {where} failed: the broker refused the client certificate ({reason}); "
                f"it requires one its trust store accepts (ssl_context.load_cert_chain)"
            )
        return Errors.KafkaTLSError(f"TLS to {where} failed: {reason}")

    async def wait_closed(self, timeout: float = 1.0) -> None:
        """Wait until the socket is closed after :meth:`close`; abort it after ``timeout``.

        A TLS connection closes in a round trip (close_notify both ways), so an event loop
        that ends right after ``close()`` would leave its socket open."""
        if self._receiver is None or self._receiver.transport is None:
            return
        try:
            await wait_for(self._socket_closed.wait(), timeout)
        except asyncio.TimeoutError:
            self._receiver.transport.abort()
            await self._socket_closed.wait()

    def _on_connection_lost(self, exc: Exception | None) -> None:
        self._socket_closed.set()
        if self._closed:
            return
        if isinstance(exc, ssl.SSLError) and "CERTIFICATE" in (exc.reason or ""):
            # With TLS 1.3 the broker checks the client's certificate after the client's
            # side of the handshake is done: its refusal arrives as the first read's alert.
            # Other TLS errors on an open connection stay plain (retriable) connection losses.
            self.close(self._tls_error(exc))
            return
        self.close(exc or Errors.KafkaConnectionError("connection closed by the broker"))

    # -- state -----------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return not self._closed and self._receiver is not None

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    @property
    def broker_versions(self) -> dict[int, tuple[int, int]]:
        """The broker's (min, max) version per API key, from ApiVersions."""
        return dict(self._broker_versions)

    def version_for(self, api_key: int) -> int:
        """The highest version of ``api_key`` both sides speak."""
        info = SUPPORTED_APIS.get(api_key)
        if info is None:
            raise Errors.IncompatibleBrokerVersion(f"ferrokafka does not speak api key {api_key}")
        _, our_min, our_max, _ = info
        theirs = self._broker_versions.get(api_key)
        if theirs is None:
            raise Errors.IncompatibleBrokerVersion(
                f"node {self.node_id} does not support {info[0]} (api key {api_key})"
            )
        version = min(our_max, theirs[1])
        if version < max(our_min, theirs[0]):
            raise Errors.IncompatibleBrokerVersion(
                f"node {self.node_id} speaks {info[0]} v{theirs[0]}-{theirs[1]}, "
                f"ferrokafka v{our_min}-{our_max}"
            )
        return version

    # -- requests --------------------------------------------------------------------------

    @overload
    async def send(
        self,
        api_key: Api[_Req, _Resp],
        body: _Req,
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> _Resp: ...
    @overload
    async def send(
        self,
        api_key: int,
        body: Mapping[str, Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> Body: ...
    async def send(
        self,
        api_key: Api[Any, Any] | int,
        body: Mapping[str, Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> Any:
        """Send a request and return the decoded response body (typed by an ``Api``)."""
        api_key = key_of(api_key)
        if version is None:
            version = self.version_for(api_key)
        frame = await self.send_raw(api_key, version, body, timeout_ms=timeout_ms)
        return decode_response(api_key, version, frame)

    async def send_raw(
        self,
        api_key: int,
        version: int,
        body: Mapping[str, Any],
        *,
        timeout_ms: int | None = None,
        expect_response: bool = True,
    ) -> Frame:
        """Send a request; return the raw response frame (without size prefix).

        With ``expect_response=False`` (produce with acks=0) nothing is awaited and ``b""``
        is returned once the bytes are handed to the transport.
        """
        reauthentication = self._reauthentication
        if reauthentication is not None:
            # Held until the re-authentication is over (the connection is closed if it failed,
            # which the request then reports).
            await asyncio.wait([reauthentication])
        return await self._write_request(
            api_key, version, body, timeout_ms, expect_response, activity=True
        )

    async def _write_request(
        self,
        api_key: int,
        version: int,
        body: Mapping[str, Any],
        timeout_ms: int | None,
        expect_response: bool,
        *,
        activity: bool,
    ) -> Frame:
        if self._closed or self._receiver is None or self._receiver.transport is None:
            raise Errors.KafkaConnectionError(
                f"connection to node {self.node_id} is not open"
                + (f" ({self._close_reason})" if self._close_reason else "")
            )
        correlation_id = self._next_correlation_id
        self._next_correlation_id = (correlation_id + 1) & 0x7FFFFFFF
        frame = encode_request(api_key, version, correlation_id, self._client_id, body)
        transport = self._receiver.transport
        sent_at = time.monotonic()
        if activity:
            self.last_activity = sent_at
        sensors = self._sensors
        if sensors is not None:
            sensors.sent(len(frame), sent_at)
        if not expect_response:
            transport.write(frame)
            return b""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Frame] = loop.create_future()
        timeout = self._request_timeout if timeout_ms is None else timeout_ms / 1000
        timer = loop.call_later(timeout, self._on_timeout, correlation_id, timeout)
        pending = self._pending[correlation_id] = _Pending(api_key, version, future, timer)
        transport.write(frame)
        try:
            response = await future
        except asyncio.CancelledError:
            if self._pending.get(correlation_id) is pending:
                # The caller gave up, the broker will still answer: keep the entry (and its
                # timer) so that the answer is recognised and dropped.
                pending.abandon()
            raise
        except Errors.KafkaError:
            if sensors is not None:
                sensors.failed(time.monotonic())
            raise
        finally:
            done = time.monotonic()
            if activity:
                self.last_activity = done
        if sensors is not None:
            sensors.received(len(response), (done - sent_at) * 1000, done)
        return response

    def _on_frame(self, frame: Frame) -> None:
        try:
            correlation_id = _native.peek_correlation_id(frame)
        except Errors.KafkaError as exc:
            self.close(exc)
            return
        pending = self._pending.pop(correlation_id, None)
        if pending is None:
            # Kafka answers in order per connection, so an unknown id means the stream is
            # out of step (or a timed-out request's late answer): nothing after it is safe.
            self.close(
                Errors.CorrelationIdError(
                    f"node {self.node_id} answered unknown correlation id {correlation_id}"
                )
            )
            return
        if pending.timer is not None:
            pending.timer.cancel()
        if not pending.future.done():
            # An abandoned request's answer goes to a future nobody reads: dropped.
            pending.future.set_result(frame)

    def _on_timeout(self, correlation_id: int, timeout: float) -> None:
        pending = self._pending.pop(correlation_id, None)
        if pending is None:
            return
        # Abandoned or not, a request unanswered this long means the broker is stuck (and
        # the requests behind it wait in vain): the connection is closed either way.
        name = SUPPORTED_APIS.get(pending.api_key, (str(pending.api_key),))[0]
        exc = Errors.RequestTimedOutError(
            f"{name} v{pending.version} to node {self.node_id} ({self.host}:{self.port}) "
            f"got no response within {timeout:.3f}s"
        )
        pending.fail(exc)
        self.close(exc)
