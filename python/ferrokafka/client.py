"""The connection pool and metadata owner shared by the consumer, producer and admin client.

Connection keys follow the Java client:

* bootstrap addresses are nodes -1, -2, ... in the order given, used until metadata names the
  real brokers, then left to idle expiry;
* data connections are keyed by broker id;
* a group coordinator gets its own connection keyed ``2147483647 - broker_id``, so group
  traffic never queues behind fetches to the same broker.

No socket is opened before ``bootstrap()``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from . import errors as Errors
from ._rng import rng
from .cluster import ClusterMetadata
from .config.connection import DEFAULT_PORT, ConnectionConfig, parse_bootstrap_servers
from .conn import AUTHENTICATION_ERRORS, Body, Connection
from .metrics import Metrics
from .metrics.network import NetworkMetrics
from .protocol import Api, coordinator_node_id, key_of
from .waits import SharedCall, Signal, finish_tasks, wait_event

if TYPE_CHECKING:
    from ._native import (
        Coordinator,
        FindCoordinatorRequest,
        FindCoordinatorResponse,
        MetadataRequest,
        MetadataResponse,
    )

__all__ = ["DEFAULT_PORT", "AIOKafkaClient", "parse_bootstrap_servers"]

log = logging.getLogger(__name__)

_Req = TypeVar("_Req", bound=Mapping[str, Any])
_Resp = TypeVar("_Resp")

_JITTER = 0.2
"""Reconnect backoffs are drawn within +-20% of their nominal value, as the Java client's, so
that clients that lost the same broker do not all come back at the same instant."""

_UNCONNECTED_SCORE = 1e6
"""``least_loaded_node``'s score of a node without a connection, not in backoff: above any
connected node's (its count of requests in flight), so that an open connection wins."""
_BACKING_OFF_SCORE = 1e9
"""Its score of a node in reconnect backoff (plus the seconds left): above every other node,
so one is chosen only when nothing else is left, the one ready soonest first."""

_MISSING_TOPIC_REFRESH_MIN_S = 0.05
"""The shortest wait between metadata refreshes for a missing topic, whatever
``retry_backoff_ms`` (0 included): keeps a zero backoff from looping on Metadata requests."""
_MISSING_TOPIC_REFRESH_MAX_S = 1.0
"""What that wait doubles up to: 1 s, the Java client's ``retry.backoff.max.ms`` default."""

_IDLE_CHECKS_PER_TIMEOUT = 4
"""The idle reaper looks this many times per ``connections_max_idle_ms``: an idle connection
is closed at most a quarter of that late."""
_IDLE_CHECK_MIN_S = 0.01
"""Its shortest period, for a tiny ``connections_max_idle_ms``: not a busy loop."""
_IDLE_CHECK_MAX_S = 5.0
"""Its longest period: for long idle timeouts (9 min by default) the close comes within 5 s
of it rather than a quarter late."""


class _Backoff:
    """Exponential reconnect backoff per connection key, with +-20% jitter (as Java does)."""

    def __init__(self, base_ms: int, max_ms: int) -> None:
        self._base = base_ms / 1000
        self._max = max(max_ms, base_ms) / 1000
        self._failures: dict[int, int] = {}
        self._not_before: dict[int, float] = {}

    def failed(self, key: int, *, at_least: float = 0.0) -> float:
        n = self._failures.get(key, 0) + 1
        self._failures[key] = n
        delay: float = min(self._base * 2.0 ** (n - 1), self._max)
        delay *= rng.uniform(1 - _JITTER, 1 + _JITTER)
        delay = max(delay, at_least)
        self._not_before[key] = time.monotonic() + delay
        return delay

    def succeeded(self, key: int) -> None:
        self._failures.pop(key, None)
        self._not_before.pop(key, None)

    def remaining(self, key: int) -> float:
        return max(0.0, self._not_before.get(key, 0.0) - time.monotonic())

    def failing(self, key: int) -> bool:
        """Whether the last attempt to reach ``key`` failed."""
        return key in self._failures


def _closed() -> Errors.KafkaError:
    return Errors.IllegalStateError("client is closed")


def _closed_while_connecting(node_id: int) -> Errors.KafkaError:
    return Errors.KafkaConnectionError(f"client closed while connecting to node {node_id}")


class AIOKafkaClient:
    """Connections to a Kafka cluster, and its metadata.

    Takes a ``ConnectionConfig``, or its fields as keywords (aiokafka's ``AIOKafkaClient``
    parameters, plus ``reconnect_backoff_ms`` and ``reconnect_backoff_max_ms`` from the Java
    client): ``AIOKafkaClient(bootstrap_servers="host:9092")``.
    """

    def __init__(
        self,
        config: ConnectionConfig | None = None,
        /,
        *,
        metric_group_prefix: str = "client",
        **options: Any,
    ) -> None:
        if config is None:
            config = ConnectionConfig(**options)
        elif options:
            raise TypeError("AIOKafkaClient takes a ConnectionConfig or keyword options, not both")
        self.config = config
        self.metrics = Metrics(config.client_id or "", metric_group_prefix)
        """This client's metrics (its owner, a consumer or producer, adds its own)."""
        self._network = NetworkMetrics(
            self.metrics, lambda: sum(1 for c in self._conns.values() if c.connected)
        )
        self._ever_connected: set[int] = set()
        self._metadata_max_age = config.metadata_max_age_ms / 1000
        self._retry_backoff = config.retry_backoff_ms / 1000
        idle_ms = config.connections_max_idle_ms
        self._idle_timeout = None if idle_ms is None else idle_ms / 1000
        self._md_updated = Signal()
        self._backoff = _Backoff(config.reconnect_backoff_ms, config.reconnect_backoff_max_ms)
        self._last_metadata = time.monotonic()
        """When metadata last came (construction until then), for the rebootstrap trigger."""

        self.cluster = ClusterMetadata(config.bootstrap_addresses)
        self._addresses: dict[int, tuple[str, int]] = {
            node: (b.host, b.port)
            for node in self.cluster.bootstrap_ids()
            if (b := self.cluster.broker_metadata(node)) is not None
        }
        self._conns: dict[int, Connection] = {}
        self._features: tuple[int, dict[str, int]] = (-1, {})
        self._connecting: dict[int, SharedCall[Connection]] = {}
        """The connection attempt of each key (one at a time, shared by its callers)."""
        self._topics: set[str] = set()
        self._all_topics = True
        self._topics_version = 0
        """Bumped whenever the tracked topics change."""
        self._md_version = 0
        """The ``_topics_version`` the installed metadata was requested with."""
        self._md_refresh = SharedCall(self._refresh_metadata_now, stopped=_closed)
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False
        self._started = False

    # -- lifecycle -------------------------------------------------------------------------

    async def bootstrap(self) -> None:
        """Reach a bootstrap node (-1, -2, ... in order) and load the cluster metadata."""
        if self._closed:
            raise Errors.IllegalStateError("client is closed")
        response = await self._metadata_from_bootstrap("unable to bootstrap from any of")
        self._install_metadata(response)
        if not self._started:
            self._started = True
            self._tasks.append(asyncio.create_task(self._metadata_refresher()))
            if self._idle_timeout is not None:
                self._tasks.append(asyncio.create_task(self._idle_reaper(self._idle_timeout)))

    async def close(self) -> None:
        """Close every connection and stop the background tasks."""
        self._closed = True
        await finish_tasks(self._tasks, "client")
        self._tasks.clear()
        # Runs shared by callers are tasks of their own: they end with the client, and their
        # waiters raise IllegalStateError.
        await self._md_refresh.stop()
        for attempt in self._connecting.values():
            await attempt.stop()
        conns = list(self._conns.values())
        for conn in conns:
            conn.close()
        self._conns.clear()
        await asyncio.gather(*(conn.wait_closed() for conn in conns))

    async def __aenter__(self) -> AIOKafkaClient:
        await self.bootstrap()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- connections -----------------------------------------------------------------------

    @property
    def connections(self) -> dict[int, Connection]:
        """Open connections by key (a copy)."""
        return {k: c for k, c in self._conns.items() if c.connected}

    def _address_for(self, node_id: int) -> tuple[str, int]:
        if node_id in self._addresses:
            return self._addresses[node_id]
        broker = self.cluster.broker_metadata(node_id)
        if broker is None:
            raise Errors.NodeNotReadyError(f"node {node_id} is not in the cluster metadata")
        return broker.host, broker.port

    async def ready(self, node_id: int) -> Connection:
        """The open connection for key ``node_id``, connecting (after any backoff) if needed.

        Concurrent callers share one connection attempt, which runs in a task of its own: a
        caller that is cancelled stops waiting for it, the others (the producer's requests, a
        heartbeat) still get the connection.
        """
        if self._closed:
            raise Errors.IllegalStateError("client is closed")
        conn = self._conns.get(node_id)
        if conn is not None and conn.connected:
            return conn
        attempt = self._connecting.get(node_id)
        if attempt is None:
            attempt = self._connecting[node_id] = SharedCall(
                functools.partial(self._connect, node_id),
                stopped=functools.partial(_closed_while_connecting, node_id),
            )
        return await attempt()

    async def _connect(self, node_id: int) -> Connection:
        delay = self._backoff.remaining(node_id)
        if delay:
            await asyncio.sleep(delay)
        host, port = self._address_for(node_id)
        conn = Connection(
            host,
            port,
            node_id=node_id,
            config=self.config,
            on_close=self._on_connection_closed,
            sensors=self._network.node(node_id),
        )
        try:
            await conn.connect()
        except asyncio.CancelledError:
            conn.close()  # the client is closing: the socket must not outlive it
            raise
        except Errors.KafkaError as exc:
            # A refused authentication is retried no sooner than retry_backoff_ms: a client
            # with a wrong password must not hammer the broker's authenticator.
            floor = self._retry_backoff if isinstance(exc, AUTHENTICATION_ERRORS) else 0.0
            wait = self._backoff.failed(node_id, at_least=floor)
            log.warning("%s; next attempt in %.0f ms", exc, wait * 1000)
            raise
        self._backoff.succeeded(node_id)
        if self._closed:  # closed while connecting: this connection would outlive the client
            conn.close()
            raise Errors.KafkaConnectionError(f"client closed while connecting to node {node_id}")
        self._conns[node_id] = conn
        if conn.finalized_features_epoch > self._features[0]:
            self._features = (conn.finalized_features_epoch, conn.finalized_features)
        self._network.created.record()
        again = node_id in self._ever_connected
        self._ever_connected.add(node_id)
        log.info("%sconnected to node %s at %s:%s", "re" if again else "", node_id, host, port)
        return conn

    def finalized_feature(self, name: str) -> int:
        """The level the cluster finalized for feature ``name`` (``transaction.version``, ...)
        in the newest answer of any connection made so far; 0 when no broker named it, as
        for a feature the cluster does not have. Brokers learn a change of level from the
        metadata log, so the newest epoch wins over what an older connection was told."""
        return self._features[1].get(name, 0)

    def _on_connection_closed(self, conn: Connection, reason: BaseException | None) -> None:
        if self._conns.get(conn.node_id) is conn:
            del self._conns[conn.node_id]
        self._network.closed.record()
        if reason is not None and not self._closed:
            self._backoff.failed(conn.node_id)
            log.info(
                "connection to node %s at %s:%s closed: %s",
                conn.node_id,
                conn.host,
                conn.port,
                reason,
            )

    async def coordinator_connection(self, broker_id: int) -> Connection:
        """The dedicated connection to ``broker_id`` as a group coordinator."""
        key = coordinator_node_id(broker_id)
        self._addresses[key] = self._address_for(broker_id)
        return await self.ready(key)

    def least_loaded_node(self) -> int:
        """The node with the fewest in-flight requests among the known brokers (bootstrap
        nodes until metadata names brokers). Connected nodes win over unconnected ones, and
        nodes in reconnect backoff are chosen only when nothing else is left."""
        candidates = self.cluster.broker_ids() or self.cluster.bootstrap_ids()
        offset = rng.randrange(len(candidates))
        best: int | None = None
        best_score = float("inf")
        for node in candidates[offset:] + candidates[:offset]:
            conn = self._conns.get(node)
            if conn is not None and conn.connected:
                score = float(conn.in_flight)
            elif self._backoff.remaining(node) == 0:
                score = _UNCONNECTED_SCORE
            else:
                score = _BACKING_OFF_SCORE + self._backoff.remaining(node)
            if score < best_score:
                best, best_score = node, score
        assert best is not None
        return best

    # -- requests --------------------------------------------------------------------------

    @overload
    async def send(
        self,
        node_id: int,
        api_key: Api[_Req, _Resp],
        body: _Req,
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> _Resp: ...
    @overload
    async def send(
        self,
        node_id: int,
        api_key: int,
        body: Mapping[str, Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> Body: ...
    async def send(
        self,
        node_id: int,
        api_key: Api[Any, Any] | int,
        body: Mapping[str, Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> Any:
        """Send a request on the connection keyed ``node_id`` and return the response body.

        With an ``Api`` descriptor (``Api.METADATA``) the body is checked as that API's
        request ``TypedDict`` and the response is typed; a plain key gives plain dicts."""
        conn = await self.ready(node_id)
        return await conn.send(key_of(api_key), body, version=version, timeout_ms=timeout_ms)

    @overload
    async def send_to_any(
        self, api_key: Api[_Req, _Resp], body: _Req, *, version: int | None = None
    ) -> _Resp: ...
    @overload
    async def send_to_any(
        self, api_key: int, body: Body, *, version: int | None = None
    ) -> Body: ...
    async def send_to_any(
        self, api_key: Api[Any, Any] | int, body: Mapping[str, Any], *, version: int | None = None
    ) -> Any:
        """Send to the least-loaded node (requests any broker can answer). A node that cannot
        be connected to is passed over for the next one; when none of the known brokers can
        be, the client rebootstraps (``metadata_recovery_strategy``) and tries once more."""
        conn = await self._ready_any()
        return await conn.send(key_of(api_key), body, version=version)

    async def _ready_any(self) -> Connection:
        tried: set[int] = set()
        attempts = len(self.cluster.broker_ids() or self.cluster.bootstrap_ids()) + 1
        for attempt in range(attempts):
            node = self.least_loaded_node()
            try:
                return await self.ready(node)
            except Errors.KafkaConnectionError as exc:
                # Nothing was sent: another broker can answer instead.
                tried.add(node)
                if self._rebootstrap_due(exc):
                    self._install_metadata(await self._rebootstrap(exc))
                    return await self.ready(self.least_loaded_node())
                known = self.cluster.broker_ids() or self.cluster.bootstrap_ids()
                if set(known) <= tried or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    async def find_coordinator(self, key: str, key_type: int = 0) -> int:
        """One FindCoordinator: the broker id coordinating ``key``, a consumer group
        (``key_type`` 0) or a transactional id (1). Raises the broker's error, retriable or not
        (retrying is the caller's); makes sure the broker's address is known."""
        body: FindCoordinatorRequest = {"key": key, "key_type": key_type, "coordinator_keys": [key]}
        response = await self.send_to_any(Api.FIND_COORDINATOR, body)
        # v4+ answer per key in ``coordinators``; older versions at the top level.
        entry: FindCoordinatorResponse | Coordinator = (
            response["coordinators"][0] if response["coordinators"] else response
        )
        code = entry["error_code"]
        if code:
            what = "transactional id" if key_type == 1 else "group"
            detail = entry["error_message"]
            raise Errors.for_code(code)(
                f"FindCoordinator for {what} {key!r}" + (f": {detail}" if detail else "")
            )
        broker_id = entry["node_id"]
        if self.cluster.broker_metadata(broker_id) is None:
            await self.refresh_metadata()
        return broker_id

    # -- metadata --------------------------------------------------------------------------

    def add_topic(self, topic: str) -> None:
        """Track ``topic`` in metadata refreshes (switches off all-topics mode)."""
        if self._all_topics or topic not in self._topics:
            self._topics_version += 1
        self._all_topics = False
        self._topics.add(topic)

    def set_topics(self, topics: set[str] | list[str] | None) -> None:
        """Track exactly ``topics``; ``None`` tracks every topic."""
        before = (self._all_topics, self._topics)
        if topics is None:
            self._all_topics, self._topics = True, set()
        else:
            self._all_topics, self._topics = False, set(topics)
        if (self._all_topics, self._topics) != before:
            self._topics_version += 1

    def _metadata_request(self, topics: set[str] | None = None) -> MetadataRequest:
        wanted = (None if self._all_topics else self._topics) if topics is None else topics
        return {
            "topics": None if wanted is None else [{"name": t} for t in sorted(wanted)],
            "allow_auto_topic_creation": self.config.allow_auto_create_topics,
        }

    def _install_metadata(
        self, response: MetadataResponse, *, all_topics: bool | None = None
    ) -> None:
        self.cluster.update_metadata(
            response, all_topics=self._all_topics if all_topics is None else all_topics
        )
        for broker in self.cluster.brokers():
            node_id = int(broker.nodeId)
            self._addresses[node_id] = (broker.host, broker.port)
            coord = coordinator_node_id(node_id)
            if coord in self._addresses:
                self._addresses[coord] = (broker.host, broker.port)
        self._md_updated.set()
        self._last_metadata = time.monotonic()

    async def fetch_metadata(self, topics: set[str] | None = None) -> MetadataResponse:
        """One Metadata request to the least-loaded node, without installing it."""
        return await self.send_to_any(Api.METADATA, self._metadata_request(topics))

    async def fetch_all_metadata(self, *, install: bool = False) -> MetadataResponse:
        """One Metadata request for every topic of the cluster (creating none); with
        ``install``, it also becomes the cluster metadata (leaders of every partition)."""
        request: MetadataRequest = {"topics": None, "allow_auto_topic_creation": False}
        response = await self.send_to_any(Api.METADATA, request)
        if install:
            self._install_metadata(response, all_topics=True)
        return response

    async def refresh_metadata(self) -> None:
        """Refresh the tracked topics now; concurrent callers share one request.

        A request already in flight is shared only if it asked for the topics tracked now: one
        sent before ``add_topic()`` or ``set_topics()`` lacks the new topics, and a caller that
        read partition counts after it (a group member's view of what it joins with) would see
        a topic as having none, then rejoin when the next refresh showed its partitions."""
        wanted = self._topics_version
        await self._md_refresh()
        if self._md_version < wanted:
            await self._md_refresh()  # started after the first ended: with the topics of now

    async def _refresh_metadata_now(self) -> None:
        version = self._topics_version
        try:
            response = await self.fetch_metadata()
        except Errors.KafkaError as exc:
            # Connecting failed over to every known broker already; an answer that never came
            # (a black-holed broker) counts towards the rebootstrap trigger's time.
            if not self._rebootstrap_due(exc):
                raise
            response = await self._rebootstrap(exc)
        self._install_metadata(response)
        self._md_version = max(self._md_version, version)

    def _rebootstrap_due(self, exc: Errors.KafkaError) -> bool:
        """Whether a failed metadata request calls for a rebootstrap (KIP-899): every broker
        the metadata names failed its last connection attempt and none is connected, or no
        metadata came for ``metadata_recovery_rebootstrap_trigger_ms`` (KIP-1102)."""
        if self.config.metadata_recovery_strategy != "rebootstrap":
            return False
        if isinstance(exc, AUTHENTICATION_ERRORS):
            return False  # the bootstrap brokers would refuse the same credentials
        known = self.cluster.broker_ids()
        if not known:
            return False  # the bootstrap nodes are what is being tried already
        if all(self._backoff.failing(n) and n not in self.connections for n in known):
            return True
        silent = time.monotonic() - self._last_metadata
        return silent * 1000 >= self.config.metadata_recovery_rebootstrap_trigger_ms

    async def _rebootstrap(self, cause: Errors.KafkaError) -> MetadataResponse:
        """Metadata from the ``bootstrap_servers`` again, each tried in turn with a fresh
        backoff; raises ``KafkaConnectionError`` naming each failure if none answers."""
        log.warning(
            "no broker of the cluster metadata is reachable (%s); rebootstrapping from %s",
            cause,
            ", ".join(f"{h}:{p}" for h, p in self.config.bootstrap_addresses),
        )
        for node_id in self.cluster.bootstrap_ids():
            self._backoff.succeeded(node_id)  # a fresh start for each bootstrap address
        response = await self._metadata_from_bootstrap("rebootstrap failed: unable to reach any of")
        log.info("rebootstrapped from %s", list(self.config.bootstrap_addresses))
        return response

    async def _metadata_from_bootstrap(self, failed: str) -> MetadataResponse:
        """Metadata from the first bootstrap node (-1, -2, ... in order) that answers; raises
        ``KafkaConnectionError`` (``failed`` + each node's failure) if none does."""
        failures: list[str] = []
        for node_id in self.cluster.bootstrap_ids():
            try:
                conn = await self.ready(node_id)
                return await conn.send(Api.METADATA, self._metadata_request())
            except AUTHENTICATION_ERRORS:
                # Wrong credentials or mechanism: every broker will refuse them alike, and
                # the caller must say so rather than a generic "cannot connect".
                raise
            except Errors.KafkaError as exc:
                failures.append(f"node {node_id} {self._addresses[node_id]}: {exc}")
        raise Errors.KafkaConnectionError(f"{failed} " + "; ".join(failures))

    force_metadata_update = refresh_metadata

    async def _metadata_refresher(self) -> None:
        """Refresh every ``metadata_max_age_ms``, backing off on failure. While a tracked topic
        is missing from the metadata (not created yet), refresh sooner: after
        ``retry_backoff_ms``, doubling up to 1 s, as the Java client does, so that a consumer
        subscribed to a topic sees it soon after it is created."""
        base = max(self._retry_backoff, _MISSING_TOPIC_REFRESH_MIN_S)
        backoff = base
        while True:
            last = self.cluster.last_refresh or 0.0
            due = last + self._metadata_max_age
            if not self._all_topics and self.cluster.missing_topics(self._topics):
                due = min(due, last + backoff)
                backoff = min(backoff * 2, max(_MISSING_TOPIC_REFRESH_MAX_S, base))
            else:
                backoff = base
            self._md_updated.clear()
            if await wait_event(self._md_updated, max(0.0, due - time.monotonic())):
                continue  # refreshed meanwhile: work out the next one from there
            try:
                await self.refresh_metadata()
            except Errors.KafkaError as exc:
                log.warning("periodic metadata refresh failed: %s", exc)
                await asyncio.sleep(self._retry_backoff)

    async def _idle_reaper(self, idle: float) -> None:
        """Close connections with nothing in flight for ``connections_max_idle_ms``."""
        period = min(max(idle / _IDLE_CHECKS_PER_TIMEOUT, _IDLE_CHECK_MIN_S), _IDLE_CHECK_MAX_S)
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for conn in list(self._conns.values()):
                if conn.in_flight == 0 and now - conn.last_activity >= idle:
                    log.debug("closing idle connection %r", conn)
                    conn.close()

    def describe(self) -> dict[str, Any]:
        """A snapshot for logs and the CLI: brokers, topics and open connections."""
        return {
            "cluster_id": self.cluster.cluster_id,
            "controller": self.cluster.controller,
            "brokers": sorted((b.nodeId, b.host, b.port, b.rack) for b in self.cluster.brokers()),
            "connections": sorted(self.connections),
        }
