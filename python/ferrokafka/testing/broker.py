"""Real Apache Kafka brokers (KRaft, no ZooKeeper) on loopback, for tests, the demo and benchmarks.

The broker's jars come from Maven Central through :mod:`ferrokafka.testing.maven`; the JVM is the
machine's ``java``. Every node is a combined broker+controller:

* :class:`KafkaBroker` - one node whose controller quorum is a single-node *dynamic* quorum
  (``controller.quorum.bootstrap.servers``, formatted with ``--standalone``);
* :class:`KafkaCluster` - ``n`` nodes (default 3) with a *static* quorum
  (``controller.quorum.voters``), replication factor 3 and min ISR 2 by default.

A start is "ready" when every node has logged ``Kafka Server started`` *and* ferrokafka's own client
sees all brokers in Metadata (``_client_ops.wait_until_ready``). Topic creation and deletion go
through ferrokafka's admin client as well. The harness only ever signals the processes it started,
by pid, and removes its temporary directories on stop.

Environment:

* ``FERROKAFKA_KAFKA_VERSION`` overrides :data:`KAFKA_VERSION` (4.x only);
* ``FERROKAFKA_JAVA`` or ``JAVA_HOME`` chooses the JVM;
* ``FERROKAFKA_KEEP_BROKER_DIRS=1`` keeps the nodes' directories (logs, data) after stop.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, TypeVar

from ._process import LOOPBACK, TrackedProcess, free_ports, pid_matches, spawn
from .maven import MavenResolveError, ResolvedJars, resolve_jars

__all__ = [
    "DEFAULT_JVM_OPTIONS",
    "KAFKA_VERSION",
    "QUICK_START_JVM_OPTIONS",
    "BrokerStartError",
    "ExternalKafka",
    "KafkaBroker",
    "KafkaCluster",
    "NodeInfo",
    "detached_status",
    "kafka_version",
    "resolve_kafka",
    "stop_detached",
]

#: The Apache Kafka release the harness runs unless ``FERROKAFKA_KAFKA_VERSION`` says otherwise.
KAFKA_VERSION = "4.2.0"
SCALA_BINARY_VERSION = "2.13"
#: Kafka logs through slf4j 1.x; a newer slf4j-api pulled in transitively would find no binding.
SLF4J_VERSION = "1.7.36"

STARTED_LINE = b"Kafka Server started"
HOST = LOOPBACK
#: JVM options for brokers (heap size is separate: ``heap_mb``). Full JIT, as benchmarks want.
DEFAULT_JVM_OPTIONS: tuple[str, ...] = (
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:+ExitOnOutOfMemoryError",
    "-XX:-UsePerfData",
    "-Djava.awt.headless=true",
)
#: For test suites: the C1 compiler only, which starts a node about a third faster (three nodes
#: on two cores: ~7 s instead of ~10.5 s) at some cost in peak broker throughput.
QUICK_START_JVM_OPTIONS: tuple[str, ...] = (*DEFAULT_JVM_OPTIONS, "-XX:TieredStopAtLevel=1")
# The storage formatter is a short-lived JVM: favour start-up time over throughput.
_FORMAT_JVM_OPTIONS = (
    "-Xmx256m",
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-XX:-UsePerfData",
)
_LOG4J2_RESOURCE = "log4j2.properties"
_ROOT_MARKER = ".ferrokafka-harness"
_TAIL_LINES = 30
_POLL_S = 0.05

_T = TypeVar("_T")
_Harness = TypeVar("_Harness", bound="_LocalKafka")


class BrokerStartError(RuntimeError):
    """A broker could not be set up or did not become ready; the message carries the tail of
    the node's log."""


def kafka_version() -> str:
    """The Kafka version to run: ``$FERROKAFKA_KAFKA_VERSION`` or :data:`KAFKA_VERSION`."""
    return os.environ.get("FERROKAFKA_KAFKA_VERSION") or KAFKA_VERSION


def _major_minor(version: str) -> tuple[int, int]:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a Kafka release version: {version!r}") from None


def _log4j_version(version: str) -> str:
    # The log4j2 release each Kafka line was built against (Kafka does not declare it in the
    # broker's POM, so it has to be added by hand).
    return "2.25.3" if _major_minor(version) >= (4, 2) else "2.24.3"


def resolve_kafka(version: str | None = None) -> ResolvedJars:
    """The broker's jars (``kafka_2.13`` at runtime scope plus log4j2), resolved with Maven and
    cached; a second call is instant and offline."""
    version = version or kafka_version()
    if _major_minor(version) < (4, 0):
        raise ValueError(f"the harness runs Kafka 4.x (KRaft + log4j2), not {version}")
    log4j = _log4j_version(version)
    return resolve_jars(
        [
            f"org.apache.kafka:kafka_{SCALA_BINARY_VERSION}:{version}",
            f"org.apache.logging.log4j:log4j-api:{log4j}",
            f"org.apache.logging.log4j:log4j-core:{log4j}",
            f"org.apache.logging.log4j:log4j-slf4j-impl:{log4j}",
        ],
        managed=[f"org.slf4j:slf4j-api:{SLF4J_VERSION}"],
        scope="runtime",
    )


def _find_java(java: str | None) -> str:
    candidates: list[str] = []
    if java:
        candidates.append(java)
    if os.environ.get("FERROKAFKA_JAVA"):
        candidates.append(os.environ["FERROKAFKA_JAVA"])
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    candidates.append("java")
    for candidate in candidates:
        found = shutil.which(candidate)
        if found:
            return os.path.abspath(found)
    raise BrokerStartError(f"no Java runtime found (tried {candidates}); Kafka needs Java 17+")


def _random_cluster_id() -> str:
    # Kafka's textual UUID: URL-safe base64 of 16 bytes without padding. Kafka itself never
    # hands out ids starting with '-' because command-line parsers take them for flags.
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


def _log_tail(path: Path, lines: int = _TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"<no log at {path}: {exc}>"
    all_lines = text.splitlines()
    # The line that explains a failure is often far above the shutdown noise it triggers.
    errors = [ln for ln in all_lines if " ERROR " in ln or " FATAL " in ln][:5]
    tail = all_lines[-lines:]
    picked = [ln for ln in errors if ln not in tail]
    if picked:
        return "\n".join(["first errors:", *picked, "last lines:", *tail])
    return "\n".join(tail)


def _run_sync(factory: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run a coroutine to completion from synchronous code, even inside a running loop (then
    in a worker thread with its own loop; the caller's loop is blocked meanwhile)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ferrokafka-harness") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


def _client_ops() -> ModuleType:
    # Imported late: the client (and the native core under it) is only needed once a broker
    # runs, and importing the harness must stay cheap.
    from . import _client_ops as ops

    return ops


# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeInfo:
    """One node of a harness, as it is now."""

    node_id: int
    host: str
    port: int
    controller_port: int
    directory: Path
    log_path: Path
    pid: int | None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass
class _Node:
    node_id: int
    port: int
    controller_port: int
    directory: Path
    process: TrackedProcess | None = None

    @property
    def config_path(self) -> Path:
        return self.directory / "server.properties"

    @property
    def log_path(self) -> Path:
        return self.directory / "kafka.log"

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def running(self) -> bool:
        return self.process is not None and not self.process.poll()


class _PortInUse(Exception):
    pass


def _render_properties(config: Mapping[str, str]) -> str:
    lines = ["# Generated by ferrokafka.testing; removed when the harness stops."]
    for key, value in config.items():
        lines.append(f"{key}={value}")
    return "\n".join(lines) + "\n"


def _config_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _cleanup(processes: list[TrackedProcess], root: Path | None, keep: bool) -> None:
    """Last resort at interpreter exit or when a running harness is garbage collected."""
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
    if root is not None and not keep:
        shutil.rmtree(root, ignore_errors=True)


class _TopicOps:
    """Topic management through ferrokafka's admin client (shared by local and external)."""

    replication_factor: int

    def _topic_bootstrap(self) -> str:
        raise NotImplementedError

    async def acreate_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        configs: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        """Create ``name`` and wait until its partitions have leaders."""
        await _client_ops().create_topic(
            self._topic_bootstrap(),
            name,
            partitions=partitions,
            replication_factor=replication_factor or self.replication_factor,
            configs=dict(configs) if configs is not None else None,
            timeout=timeout,
        )

    async def adelete_topic(self, name: str, timeout: float = 30.0) -> None:
        """Delete ``name`` and wait until no broker lists it."""
        await _client_ops().delete_topic(self._topic_bootstrap(), name, timeout=timeout)

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int | None = None,
        configs: Mapping[str, str] | None = None,
        timeout: float = 30.0,
    ) -> None:
        """Synchronous :meth:`acreate_topic`."""
        _run_sync(
            lambda: self.acreate_topic(name, partitions, replication_factor, configs, timeout)
        )

    def delete_topic(self, name: str, timeout: float = 30.0) -> None:
        """Synchronous :meth:`adelete_topic`."""
        _run_sync(lambda: self.adelete_topic(name, timeout))


class ExternalKafka(_TopicOps):
    """A broker somebody else runs (e.g. ``FERROKAFKA_BOOTSTRAP``), with the harness's topic
    interface. ``start``/``stop`` do nothing: it is not ours to manage."""

    def __init__(self, bootstrap_servers: str, *, replication_factor: int = 1) -> None:
        self._bootstrap_servers = bootstrap_servers
        self.replication_factor = replication_factor

    @property
    def bootstrap_servers(self) -> str:
        return self._bootstrap_servers

    def _topic_bootstrap(self) -> str:
        return self._bootstrap_servers

    def start(self, timeout: float = 60.0) -> ExternalKafka:
        """Wait until the external broker answers Metadata."""
        _run_sync(lambda: _client_ops().wait_until_ready(self._bootstrap_servers, 1, timeout))
        return self

    def stop(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"ExternalKafka({self._bootstrap_servers!r})"


class _LocalKafka(_TopicOps):
    """What a single node and a cluster share: ports, configs, formatting, processes."""

    _quorum_kind = "static"

    def __init__(
        self,
        nodes: int,
        *,
        version: str | None = None,
        config: Mapping[str, object] | None = None,
        node_configs: Mapping[int, Mapping[str, object]] | None = None,
        features: Mapping[str, int] | None = None,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        heap_mb: int = 512,
        jvm_options: Sequence[str] = DEFAULT_JVM_OPTIONS,
        start_timeout: float = 90.0,
        stop_timeout: float = 30.0,
        keep_dirs: bool | None = None,
        base_dir: str | os.PathLike[str] | None = None,
        java: str | None = None,
        new_session: bool = False,
    ) -> None:
        if nodes < 1:
            raise ValueError("a Kafka cluster needs at least one node")
        self.version = version or kafka_version()
        self.replication_factor = replication_factor or min(3, nodes)
        self.min_insync_replicas = min_insync_replicas or (2 if nodes >= 3 else 1)
        self._n = nodes
        self._config = {k: _config_value(v) for k, v in (config or {}).items()}
        self._node_configs = {
            node_id: {k: _config_value(v) for k, v in values.items()}
            for node_id, values in (node_configs or {}).items()
        }
        self._features = dict(features or {})
        self._heap_mb = heap_mb
        self._jvm_options = tuple(jvm_options)
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        if keep_dirs is None:
            keep_dirs = os.environ.get("FERROKAFKA_KEEP_BROKER_DIRS", "") not in ("", "0")
        self._keep_dirs = keep_dirs
        self._base_dir = base_dir
        self._java_hint = java
        self._new_session = new_session
        self._nodes: dict[int, _Node] = {}
        self._root: Path | None = None
        self._jars: ResolvedJars | None = None
        self._java: str | None = None
        self._cluster_id: str | None = None
        self._processes: list[TrackedProcess] = []  # shared with the exit-time finalizer
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._started = False

    # ---- public state ----------------------------------------------------------------------

    @property
    def node_ids(self) -> tuple[int, ...]:
        return tuple(range(1, self._n + 1))

    @property
    def bootstrap_servers(self) -> str:
        """Every node's client address, ``127.0.0.1:port[,...]`` (stable across restarts)."""
        self._require_started()
        return ",".join(self._nodes[i].address for i in self.node_ids)

    @property
    def cluster_id(self) -> str:
        self._require_started()
        assert self._cluster_id is not None
        return self._cluster_id

    @property
    def directory(self) -> Path:
        """The temporary root holding every node's config, data and log."""
        self._require_started()
        assert self._root is not None
        return self._root

    @property
    def pids(self) -> dict[int, int]:
        """``node_id -> pid`` of the nodes running now."""
        return {
            i: n.process.pid
            for i, n in self._nodes.items()
            if n.process is not None and n.running()
        }

    @property
    def nodes(self) -> tuple[NodeInfo, ...]:
        return tuple(self.node(i) for i in self.node_ids)

    @property
    def is_running(self) -> bool:
        return self._started

    def node(self, node_id: int) -> NodeInfo:
        n = self._node(node_id)
        return NodeInfo(
            node_id=n.node_id,
            host=HOST,
            port=n.port,
            controller_port=n.controller_port,
            directory=n.directory,
            log_path=n.log_path,
            pid=n.process.pid if n.process is not None and n.running() else None,
        )

    def address(self, node_id: int) -> str:
        return self._node(node_id).address

    def log_path(self, node_id: int) -> Path:
        """The node's combined stdout/stderr/log4j output (gone after stop unless kept)."""
        return self._node(node_id).log_path

    def node_running(self, node_id: int) -> bool:
        return self._node(node_id).running()

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self: _Harness) -> _Harness:
        """Format and start every node; return once all are ready (raises BrokerStartError)."""
        if self._started:
            raise RuntimeError(f"{self!r} is already started")
        try:
            self._jars = resolve_kafka(self.version)
        except (MavenResolveError, ValueError) as exc:
            raise BrokerStartError(f"cannot get Kafka {self.version}'s jars: {exc}") from exc
        self._java = _find_java(self._java_hint)
        deadline = time.monotonic() + self.start_timeout
        for attempt in range(3):
            try:
                self._prepare()
                for node in self._nodes.values():
                    self._launch(node)
                self._wait_for_started_line([(n, 0) for n in self._nodes.values()], deadline)
                break
            except _PortInUse:
                self._teardown(force=True)
                if attempt == 2:
                    raise BrokerStartError("three attempts found the chosen ports taken") from None
            except BaseException:
                self._teardown(force=True)
                raise
        self._started = True
        try:
            _run_sync(
                lambda: _client_ops().wait_until_ready(
                    self.bootstrap_servers,
                    self._n,
                    max(1.0, deadline - time.monotonic()),
                )
            )
        except BaseException as exc:
            logs = "\n".join(
                f"--- node {n.node_id} ({self._where(n)}):\n{_log_tail(n.log_path, 10)}"
                for n in self._nodes.values()
            )
            self._started = False
            self._teardown(force=True)
            if isinstance(exc, Exception):
                raise BrokerStartError(
                    f"Kafka {self.version} logged its start but ferrokafka's client did not see "
                    f"{self._n} broker(s): {exc}\n{logs}"
                ) from exc
            raise
        return self

    def stop(self) -> None:
        """SIGTERM every running node (SIGKILL after ``stop_timeout``), then remove the
        directories. Idempotent."""
        self._teardown(force=False)
        self._started = False

    def __enter__(self: _Harness) -> _Harness:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ---- faults ----------------------------------------------------------------------------

    def kill(self, node_id: int) -> None:
        """SIGKILL one node and wait until its process is gone."""
        node = self._node(node_id)
        if node.process is not None:
            node.process.kill()

    def stop_node(self, node_id: int, timeout: float | None = None) -> None:
        """SIGTERM one node (a clean, controlled shutdown) and wait until it has exited."""
        node = self._node(node_id)
        if node.process is not None:
            node.process.terminate(self.stop_timeout if timeout is None else timeout)

    def restart_node(self, node_id: int, timeout: float | None = None) -> None:
        """Stop the node if it runs, start it again on the same ports and data, and wait until
        it has logged its start and serves Metadata listing every running node."""
        self._require_started()
        node = self._node(node_id)
        if node.running():
            self.stop_node(node_id)
        deadline = time.monotonic() + (self.start_timeout if timeout is None else timeout)
        with open(node.log_path, "ab") as log:
            log.write(f"\n---- ferrokafka: restarting node {node_id} ----\n".encode())
            offset = log.tell()
        self._launch(node)
        try:
            self._wait_for_started_line([(node, offset)], deadline)
        except _PortInUse:
            raise BrokerStartError(
                f"node {node_id} cannot bind its ports again:\n{_log_tail(node.log_path)}"
            ) from None
        running = sum(1 for n in self._nodes.values() if n.running())
        try:
            _run_sync(
                lambda: _client_ops().wait_until_ready(
                    node.address, running, max(1.0, deadline - time.monotonic())
                )
            )
        except Exception as exc:
            raise BrokerStartError(
                f"node {node_id} restarted but ferrokafka's client did not see {running} "
                f"broker(s) through it: {exc}\n{_log_tail(node.log_path)}"
            ) from exc

    # ---- detaching (the CLI's long-running brokers) ------------------------------------------

    def detach(self) -> dict[str, Any]:
        """Let the nodes outlive this object and this interpreter; return what
        :func:`stop_detached` needs to stop them later."""
        self._require_started()
        assert self._root is not None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        state: dict[str, Any] = {
            "kafka_version": self.version,
            "bootstrap_servers": self.bootstrap_servers,
            "cluster_id": self._cluster_id,
            "directory": str(self._root),
            "keep_dirs": self._keep_dirs,
            "nodes": [
                {
                    "node_id": n.node_id,
                    "pid": n.process.pid if n.process is not None else None,
                    "port": n.port,
                    "controller_port": n.controller_port,
                    "config": str(n.config_path),
                    "log": str(n.log_path),
                }
                for n in self._nodes.values()
            ],
        }
        self._processes.clear()
        for n in self._nodes.values():
            n.process = None
        self._started = False
        return state

    # ---- internals -------------------------------------------------------------------------

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() first")

    def _node(self, node_id: int) -> _Node:
        self._require_started()
        try:
            return self._nodes[node_id]
        except KeyError:
            raise KeyError(f"no node {node_id}; nodes are {list(self.node_ids)}") from None

    def _topic_bootstrap(self) -> str:
        live = [n.address for n in self._nodes.values() if n.running()]
        if not live:
            raise RuntimeError("no node of the cluster is running")
        return ",".join(live)

    def _quorum_config(self) -> dict[str, str]:
        raise NotImplementedError

    def _format_flags(self) -> list[str]:
        raise NotImplementedError

    def _node_config(self, node: _Node) -> dict[str, str]:
        rf = str(self.replication_factor)
        isr = str(self.min_insync_replicas)
        listeners = f"PLAINTEXT://{HOST}:{node.port},CONTROLLER://{HOST}:{node.controller_port}"
        config = {
            "process.roles": "broker,controller",
            "node.id": str(node.node_id),
            **self._quorum_config(),
            "listeners": listeners,
            "advertised.listeners": listeners,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": str(node.data_dir),
            "auto.create.topics.enable": "false",
            "num.partitions": "1",
            "default.replication.factor": rf,
            "min.insync.replicas": isr,
            # Internal topics: one partition each, replicated like everything else.
            "offsets.topic.num.partitions": "1",
            "offsets.topic.replication.factor": rf,
            "transaction.state.log.num.partitions": "1",
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": isr,
            "share.coordinator.state.topic.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": rf,
            "share.coordinator.state.topic.min.isr": isr,
            # Groups: no initial rebalance delay; KIP-848 timing (broker-side) small but legal,
            # and minimums low enough that tests may ask for short client-side timeouts.
            "group.initial.rebalance.delay.ms": "0",
            "group.min.session.timeout.ms": "1000",
            "group.consumer.heartbeat.interval.ms": "500",
            "group.consumer.min.heartbeat.interval.ms": "100",
            "group.consumer.session.timeout.ms": "10000",
            "group.consumer.min.session.timeout.ms": "1000",
            "group.share.heartbeat.interval.ms": "500",
            "group.share.min.heartbeat.interval.ms": "100",
            "group.share.session.timeout.ms": "10000",
            "group.share.min.session.timeout.ms": "1000",
            "group.streams.initial.rebalance.delay.ms": "0",
            "group.streams.heartbeat.interval.ms": "500",
            "group.streams.min.heartbeat.interval.ms": "100",
            "group.streams.session.timeout.ms": "10000",
            "group.streams.min.session.timeout.ms": "1000",
            # A killed node is fenced after 6 s rather than 9 s.
            "broker.heartbeat.interval.ms": "1000",
            "broker.session.timeout.ms": "6000",
        }
        config.update(self._config)
        config.update(self._node_configs.get(node.node_id, {}))
        return config

    def _prepare(self) -> None:
        """Fresh root directory, ports, configs; format every node's storage."""
        base = os.fspath(self._base_dir) if self._base_dir is not None else None
        self._root = Path(tempfile.mkdtemp(prefix="ferrokafka-kafka-", dir=base))
        (self._root / _ROOT_MARKER).write_text(f"ferrokafka.testing, Kafka {self.version}\n")
        self._processes.clear()
        self._finalizer = weakref.finalize(
            self, _cleanup, self._processes, self._root, self._keep_dirs
        )
        log4j = resources.files(__package__ or "ferrokafka.testing") / _LOG4J2_RESOURCE
        (self._root / _LOG4J2_RESOURCE).write_bytes(log4j.read_bytes())
        ports = free_ports(2 * self._n)
        self._nodes = {}
        for node_id in self.node_ids:
            directory = self._root / f"node-{node_id}"
            directory.mkdir()
            self._nodes[node_id] = _Node(
                node_id=node_id,
                port=ports[2 * (node_id - 1)],
                controller_port=ports[2 * (node_id - 1) + 1],
                directory=directory,
            )
        self._cluster_id = _random_cluster_id()
        for node in self._nodes.values():
            node.config_path.write_text(_render_properties(self._node_config(node)))
        self._format_all()

    def _java_argv(self, *options: str) -> list[str]:
        assert self._java is not None and self._jars is not None and self._root is not None
        return [
            self._java,
            *options,
            f"-Dlog4j2.configurationFile={self._root / _LOG4J2_RESOURCE}",
            "-cp",
            self._jars.classpath,
        ]

    def _format_all(self) -> None:
        assert self._cluster_id is not None
        flags = self._format_flags()
        for name, level in self._features.items():
            flags += ["--feature", f"{name}={level}"]
        with contextlib.ExitStack() as stack:
            running: list[tuple[_Node, subprocess.Popen[bytes], Path]] = []
            for node in self._nodes.values():
                out_path = node.directory / "format.log"
                out = stack.enter_context(open(out_path, "wb"))
                argv = [
                    *self._java_argv(*_FORMAT_JVM_OPTIONS, "-Dferrokafka.log.level=WARN"),
                    "kafka.tools.StorageTool",
                    "format",
                    "--cluster-id",
                    self._cluster_id,
                    "--config",
                    str(node.config_path),
                    *flags,
                ]
                proc = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
                )
                running.append((node, proc, out_path))
            failures = []
            for node, proc, out_path in running:
                try:
                    code = proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    code = proc.wait()
                if code != 0:
                    failures.append(
                        f"--- node {node.node_id} (exit {code}):\n{_log_tail(out_path)}"
                    )
        if failures:
            raise BrokerStartError(
                f"formatting Kafka {self.version} storage failed:\n" + "\n".join(failures)
            )

    def _launch(self, node: _Node) -> None:
        argv = [
            *self._java_argv(f"-Xms{self._heap_mb}m", f"-Xmx{self._heap_mb}m", *self._jvm_options),
            "kafka.Kafka",
            str(node.config_path),
        ]
        pid = spawn(argv, node.log_path, new_session=self._new_session)
        node.process = TrackedProcess(pid, str(node.config_path), child=True)
        self._processes.append(node.process)

    def _wait_for_started_line(self, waiting: Iterable[tuple[_Node, int]], deadline: float) -> None:
        """Wait until each node logs ``Kafka Server started`` after its offset; fail as soon
        as one exits."""
        pending = {node.node_id: (node, offset) for node, offset in waiting}
        keep = len(STARTED_LINE) - 1
        while pending:
            for node_id, (node, offset) in list(pending.items()):
                begin = max(0, offset - keep)
                try:
                    with open(node.log_path, "rb") as log:
                        log.seek(begin)
                        chunk = log.read()
                except FileNotFoundError:
                    chunk = b""
                if STARTED_LINE in chunk:
                    del pending[node_id]
                    continue
                pending[node_id] = (node, max(offset, begin + len(chunk)))
                assert node.process is not None
                if node.process.poll():
                    tail = _log_tail(node.log_path)
                    if "Address already in use" in tail:
                        raise _PortInUse()
                    raise BrokerStartError(
                        f"Kafka {self.version} node {node_id} exited with status "
                        f"{node.process.returncode} before it started "
                        f"({self._where(node)}):\n{tail}"
                    )
            if not pending:
                break
            if time.monotonic() >= deadline:
                tails = "\n".join(
                    f"--- node {i} ({self._where(n)}):\n{_log_tail(n.log_path)}"
                    for i, (n, _) in pending.items()
                )
                raise BrokerStartError(
                    f"Kafka {self.version} node(s) {sorted(pending)} did not log "
                    f"{STARTED_LINE.decode()!r} in time:\n{tails}"
                )
            time.sleep(_POLL_S)

    def _where(self, node: _Node) -> str:
        if self._keep_dirs:
            return f"log {node.log_path}"
        return "log removed on failure; FERROKAFKA_KEEP_BROKER_DIRS=1 keeps it"

    def _teardown(self, *, force: bool) -> None:
        running = [n.process for n in self._nodes.values() if n.process is not None]
        if force:
            for process in running:
                process.send(signal.SIGKILL)
        else:
            # Signal every node at once: stopping them one by one would leave the last ones
            # waiting for a controller quorum that is already gone.
            for process in running:
                process.send(signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        for process in running:
            if not process.wait(max(0.0, deadline - time.monotonic())):
                process.kill()
        self._processes.clear()
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if self._root is not None and not self._keep_dirs:
            shutil.rmtree(self._root, ignore_errors=True)

    def __repr__(self) -> str:
        state = self.bootstrap_servers if self._started else "stopped"
        return f"{type(self).__name__}(nodes={self._n}, version={self.version!r}, {state})"


class KafkaBroker(_LocalKafka):
    """One combined broker+controller node with a single-node dynamic controller quorum."""

    def __init__(
        self,
        *,
        version: str | None = None,
        config: Mapping[str, object] | None = None,
        features: Mapping[str, int] | None = None,
        heap_mb: int = 512,
        jvm_options: Sequence[str] = DEFAULT_JVM_OPTIONS,
        start_timeout: float = 90.0,
        stop_timeout: float = 30.0,
        keep_dirs: bool | None = None,
        base_dir: str | os.PathLike[str] | None = None,
        java: str | None = None,
        new_session: bool = False,
    ) -> None:
        super().__init__(
            1,
            version=version,
            config=config,
            features=features,
            heap_mb=heap_mb,
            jvm_options=jvm_options,
            start_timeout=start_timeout,
            stop_timeout=stop_timeout,
            keep_dirs=keep_dirs,
            base_dir=base_dir,
            java=java,
            new_session=new_session,
        )

    @property
    def port(self) -> int:
        return self._node(1).port

    @property
    def controller_port(self) -> int:
        return self._node(1).controller_port

    @property
    def pid(self) -> int | None:
        return self.pids.get(1)

    def _quorum_config(self) -> dict[str, str]:
        node = self._nodes[1]
        return {"controller.quorum.bootstrap.servers": f"{HOST}:{node.controller_port}"}

    def _format_flags(self) -> list[str]:
        return ["--standalone"]


class KafkaCluster(_LocalKafka):
    """``nodes`` combined broker+controller nodes (ids 1..n) with a static controller quorum;
    replication factor ``min(3, n)`` and min ISR 2 (1 below three nodes) unless overridden."""

    def __init__(
        self,
        nodes: int = 3,
        *,
        version: str | None = None,
        config: Mapping[str, object] | None = None,
        node_configs: Mapping[int, Mapping[str, object]] | None = None,
        features: Mapping[str, int] | None = None,
        replication_factor: int | None = None,
        min_insync_replicas: int | None = None,
        heap_mb: int = 512,
        jvm_options: Sequence[str] = DEFAULT_JVM_OPTIONS,
        start_timeout: float = 120.0,
        stop_timeout: float = 30.0,
        keep_dirs: bool | None = None,
        base_dir: str | os.PathLike[str] | None = None,
        java: str | None = None,
        new_session: bool = False,
    ) -> None:
        super().__init__(
            nodes,
            version=version,
            config=config,
            node_configs=node_configs,
            features=features,
            replication_factor=replication_factor,
            min_insync_replicas=min_insync_replicas,
            heap_mb=heap_mb,
            jvm_options=jvm_options,
            start_timeout=start_timeout,
            stop_timeout=stop_timeout,
            keep_dirs=keep_dirs,
            base_dir=base_dir,
            java=java,
            new_session=new_session,
        )

    def _quorum_config(self) -> dict[str, str]:
        voters = ",".join(f"{n.node_id}@{HOST}:{n.controller_port}" for n in self._nodes.values())
        return {"controller.quorum.voters": voters}

    def _format_flags(self) -> list[str]:
        return []


# --------------------------------------------------------------------------------------------
# Detached brokers (``ferrokafka broker start``): stopped later from a recorded state.


def detached_status(state: Mapping[str, Any]) -> dict[int, int | None]:
    """``node_id -> pid`` for each node of a detached harness, ``None`` where it is gone."""
    status: dict[int, int | None] = {}
    for node in state.get("nodes", []):
        pid = node.get("pid")
        alive = isinstance(pid, int) and pid_matches(pid, str(node["config"]))
        status[int(node["node_id"])] = pid if alive else None
    return status


def stop_detached(state: Mapping[str, Any], timeout: float = 30.0) -> list[int]:
    """Stop the nodes recorded by :meth:`detach` (only those pids, and only while their command
    line still names their config), remove the harness's directory; return the pids signalled."""
    processes = []
    for node in state.get("nodes", []):
        pid = node.get("pid")
        if isinstance(pid, int) and pid_matches(pid, str(node["config"])):
            processes.append(TrackedProcess(pid, str(node["config"]), child=False))
    for process in processes:
        process.send(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for process in processes:
        if not process.wait(max(0.0, deadline - time.monotonic())):
            process.kill()
    directory = state.get("directory")
    if directory and not state.get("keep_dirs"):
        root = Path(directory)
        # Only ever delete a directory this harness made.
        if (root / _ROOT_MARKER).is_file():
            shutil.rmtree(root, ignore_errors=True)
    return [p.pid for p in processes]
