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

This module is the harnesses' lifecycle and faults; each node's ``server.properties`` is written
by :mod:`.kraft`, its JVMs run through :mod:`.nodes`, the release and the JVM come from
:mod:`.distribution`, topics from :mod:`.topics`, and a detached harness is read and stopped by
:mod:`.detached`.

A harness made with ``security=`` secures only its client listener (``bootstrap_servers``); every
node also gets a PLAINTEXT ``INTERNAL`` listener for inter-broker traffic and for the harness's
own readiness checks and topic operations (``plaintext_bootstrap_servers``), see :mod:`.security`.

A harness made with ``faults=True`` puts a :class:`~.faults.FaultProxy` in front of each node's
client listener and has the node advertise the proxy's port, so every client connection passes
through it (:meth:`~_LocalKafka.proxy`: latency, bandwidth, black hole, cuts, refusals; heal);
replication and the harness's own operations use the direct ``INTERNAL`` listener.

Environment:

* ``FERROKAFKA_KAFKA_VERSION`` overrides :data:`KAFKA_VERSION` (3.9 or 4.x);
* ``FERROKAFKA_JAVA`` or ``JAVA_HOME`` chooses the JVM;
* ``FERROKAFKA_KEEP_BROKER_DIRS=1`` keeps the nodes' directories (logs, data) after stop.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ._harness import LocalHarness, PortTaken
from ._process import LOOPBACK, TrackedProcess, free_ports, log_tail, stop_all
from .detached import ROOT_MARKER, detached_status, stop_detached
from .distribution import (
    KAFKA_VERSION,
    BrokerStartError,
    find_java,
    kafka_version,
    resolve_kafka,
)
from .faults import FaultProxy
from .kraft import (
    DEFAULT_JVM_OPTIONS,
    QUICK_START_JVM_OPTIONS,
    config_values,
    dynamic_quorum,
    node_config,
    proxied_listeners,
    random_cluster_id,
    render_properties,
    static_quorum,
)
from .maven import MavenResolveError
from .nodes import KafkaJvm, Node, NodeInfo, wait_for_started_line
from .security import (
    DEFAULT_SERVER_HOSTNAMES,
    ENABLED_SASL_MECHANISMS,
    SASL_MECHANISMS,
    ListenerSecurity,
    Security,
    SecurityMaterial,
    UnsecuredTokenProvider,
)
from .topics import ExternalKafka, TopicOps, client_ops, run_sync

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

if TYPE_CHECKING:
    import ssl

_Harness = TypeVar("_Harness", bound="_LocalKafka")


def _cleanup(processes: list[TrackedProcess], root: Path | None, keep: bool) -> None:
    """Last resort at interpreter exit or when a running harness is garbage collected."""
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
    if root is not None and not keep:
        shutil.rmtree(root, ignore_errors=True)


class _LocalKafka(LocalHarness, TopicOps):
    """What a single node and a cluster share: ports, configs, formatting, processes. The
    constructor is :class:`KafkaCluster`'s."""

    _keep_variable = "FERROKAFKA_KEEP_BROKER_DIRS"
    _removed = "on failure"

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
        security: Security | None = None,
        client_auth: bool = False,
        authorizer: bool = False,
        server_hostnames: Sequence[str] = DEFAULT_SERVER_HOSTNAMES,
        faults: bool = False,
    ) -> None:
        if nodes < 1:
            raise ValueError("a Kafka cluster needs at least one node")
        if faults and security is not None:
            raise ValueError("faults=True needs the PLAINTEXT client listener (security=None)")
        self._faults = faults
        self._proxies: dict[int, FaultProxy] = {}
        if security is None and (client_auth or authorizer):
            raise ValueError("client_auth and authorizer need a secured listener (security=...)")
        self._security = (
            None
            if security is None
            else ListenerSecurity(
                security,
                client_auth=client_auth,
                authorizer=authorizer,
                server_hostnames=tuple(server_hostnames),
            )
        )
        self._material: SecurityMaterial | None = None
        super().__init__(
            start_timeout=start_timeout, stop_timeout=stop_timeout, keep_dirs=keep_dirs
        )
        self.version = version or kafka_version()
        self.replication_factor = replication_factor or min(3, nodes)
        self.min_insync_replicas = min_insync_replicas or (2 if nodes >= 3 else 1)
        self._n = nodes
        self._config = config_values(config)
        self._node_configs = {
            node_id: config_values(values) for node_id, values in (node_configs or {}).items()
        }
        self._features = dict(features or {})
        self._heap_mb = heap_mb
        self._jvm_options = tuple(jvm_options)
        self._base_dir = base_dir
        self._java_hint = java
        self._new_session = new_session
        self._nodes: dict[int, Node] = {}
        self._jvm: KafkaJvm | None = None
        self._cluster_id: str | None = None
        self._processes: list[TrackedProcess] = []  # shared with the exit-time finalizer

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
    def plaintext_bootstrap_servers(self) -> str:
        """Every node's PLAINTEXT address: the ``INTERNAL`` listener of a secured harness (no
        credentials, the principal ANONYMOUS), the client listener otherwise."""
        self._require_started()
        return ",".join(self._nodes[i].plaintext_address for i in self.node_ids)

    @property
    def security(self) -> Security | None:
        """The client listener's security (``security=``), ``None`` for PLAINTEXT."""
        return None if self._security is None else self._security.protocol

    @property
    def security_protocol(self) -> str:
        """aiokafka's ``security_protocol`` for the client listener."""
        return "PLAINTEXT" if self._security is None else self._security.listener_name

    @property
    def sasl_mechanisms(self) -> tuple[str, ...]:
        """The SASL mechanisms the client listener accepts (none without SASL): the password
        mechanisms and OAUTHBEARER (unsecured JWTs, scope ``kafka``)."""
        return ENABLED_SASL_MECHANISMS if self._security is not None and self._security.sasl else ()

    @property
    def users(self) -> dict[str, str]:
        """``user -> password`` of the SASL users (each a PLAIN user and a SCRAM user of both
        mechanisms; ``admin`` is the super user under ``authorizer=True``); empty without
        SASL. Random per start."""
        return dict(self._security_material().users)

    @property
    def ca_file(self) -> Path:
        """The throwaway CA's certificate (PEM), which signed the server and client certs."""
        material = self._security_material()
        if material.ca_file is None:
            raise RuntimeError(f"{self!r} has no TLS listener")
        return material.ca_file

    @property
    def client_cert_files(self) -> tuple[Path, Path]:
        """``(certfile, keyfile)`` of a client certificate the broker trusts (PEM, key
        unencrypted); its principal is ``User:client``."""
        material = self._security_material()
        if material.client_cert_file is None or material.client_key_file is None:
            raise RuntimeError(f"{self!r} has no TLS listener")
        return material.client_cert_file, material.client_key_file

    def ssl_context(self, *, client_cert: bool | None = None) -> ssl.SSLContext:
        """A client ``SSLContext`` trusting the harness's CA (hostname checked), with the
        client certificate when ``client_cert`` (by default: when the broker requires one)."""
        from ..helpers import create_ssl_context

        ca_file = self.ca_file
        assert self._security is not None
        if client_cert is None:
            client_cert = self._security.client_auth
        if not client_cert:
            return create_ssl_context(cafile=str(ca_file))
        certfile, keyfile = self.client_cert_files
        return create_ssl_context(cafile=str(ca_file), certfile=str(certfile), keyfile=str(keyfile))

    def client_options(
        self, user: str = "alice", mechanism: str = "SCRAM-SHA-256"
    ) -> dict[str, Any]:
        """aiokafka-style keyword arguments that connect to the client listener: the
        bootstrap address, ``security_protocol``, ``ssl_context`` and, with SASL, the
        mechanism and ``user``'s credentials (for OAUTHBEARER, a token provider of unsecured
        JWTs for ``user``)."""
        options: dict[str, Any] = {
            "bootstrap_servers": self.bootstrap_servers,
            "security_protocol": self.security_protocol,
        }
        if self._security is None:
            return options
        if self._security.tls:
            options["ssl_context"] = self.ssl_context()
        if self._security.sasl:
            if mechanism == "OAUTHBEARER":
                options.update(
                    sasl_mechanism=mechanism, sasl_oauth_token_provider=UnsecuredTokenProvider(user)
                )
                return options
            if mechanism not in SASL_MECHANISMS:
                raise ValueError(f"mechanism must be one of {ENABLED_SASL_MECHANISMS}")
            options.update(
                sasl_mechanism=mechanism,
                sasl_plain_username=user,
                sasl_plain_password=self.users[user],
            )
        return options

    @property
    def cluster_id(self) -> str:
        self._require_started()
        assert self._cluster_id is not None
        return self._cluster_id

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
        return self._node(node_id).info()

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
            jars = resolve_kafka(self.version)
        except (MavenResolveError, ValueError) as exc:
            raise BrokerStartError(f"cannot get Kafka {self.version}'s jars: {exc}") from exc
        java = find_java(self._java_hint)
        deadline = time.monotonic() + self.start_timeout

        def launch() -> None:
            self._prepare(java, jars.classpath)
            for node in self._nodes.values():
                self._launch(node)
            self._wait_for_started_line([(n, 0) for n in self._nodes.values()], deadline)

        self._start_on_fresh_ports(launch, lambda: self._teardown(force=True), BrokerStartError)
        self._started = True
        try:
            run_sync(
                lambda: client_ops().wait_until_ready(
                    self.plaintext_bootstrap_servers,
                    self._n,
                    max(1.0, deadline - time.monotonic()),
                )
            )
        except BaseException as exc:
            logs = "\n".join(
                f"--- node {n.node_id} ({self._where(n.log_path)}):\n{log_tail(n.log_path, 10)}"
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
        except PortTaken:
            raise BrokerStartError(
                f"node {node_id} cannot bind its ports again:\n{log_tail(node.log_path)}"
            ) from None
        running = sum(1 for n in self._nodes.values() if n.running())
        try:
            run_sync(
                lambda: client_ops().wait_until_ready(
                    node.plaintext_address, running, max(1.0, deadline - time.monotonic())
                )
            )
        except Exception as exc:
            raise BrokerStartError(
                f"node {node_id} restarted but ferrokafka's client did not see {running} "
                f"broker(s) through it: {exc}\n{log_tail(node.log_path)}"
            ) from exc

    # ---- detaching (the CLI's long-running brokers) ------------------------------------------

    def detach(self) -> dict[str, Any]:
        """Let the nodes outlive this object and this interpreter; return what
        :func:`stop_detached` needs to stop them later."""
        self._require_started()
        assert self._root is not None
        self._cancel_finalizer()
        state: dict[str, Any] = {
            "kafka_version": self.version,
            "bootstrap_servers": self.bootstrap_servers,
            "cluster_id": self._cluster_id,
            "directory": str(self._root),
            "keep_dirs": self.keep_dirs,
            "nodes": [
                {
                    "node_id": n.node_id,
                    "pid": n.process.pid if n.process is not None else None,
                    "port": n.port,
                    "controller_port": n.controller_port,
                    **({"internal_port": n.internal_port} if n.internal_port else {}),
                    "config": str(n.config_path),
                    "log": str(n.log_path),
                }
                for n in self._nodes.values()
            ],
        }
        if self._security is not None:
            state["security"] = self._security_state()
        self._processes.clear()
        for n in self._nodes.values():
            n.process = None
        self._started = False
        return state

    def proxy(self, node_id: int) -> FaultProxy:
        """The fault proxy in front of node ``node_id``'s client listener (``faults=True``):
        slow it, black-hole it, cut its connections, refuse new ones, heal it."""
        self._require_started()
        try:
            return self._proxies[node_id]
        except KeyError:
            if not self._faults:
                raise RuntimeError(f"{self!r} has no fault proxies (faults=True)") from None
            raise KeyError(f"no node {node_id}; nodes are {list(self.node_ids)}") from None

    def heal(self) -> None:
        """Undo every fault of every proxy."""
        for proxy in self._proxies.values():
            proxy.heal()

    # ---- internals -------------------------------------------------------------------------

    def _node(self, node_id: int) -> Node:
        self._require_started()
        try:
            return self._nodes[node_id]
        except KeyError:
            raise KeyError(f"no node {node_id}; nodes are {list(self.node_ids)}") from None

    def _security_material(self) -> SecurityMaterial:
        self._require_started()
        if self._material is None:
            raise RuntimeError(f"{self!r} has a PLAINTEXT client listener")
        return self._material

    def _security_state(self) -> dict[str, Any]:
        """What a client of a detached secured harness needs (passwords included)."""
        material = self._security_material()
        return {
            "protocol": self.security_protocol,
            "client_auth": material.options.client_auth,
            "authorizer": material.options.authorizer,
            "sasl_mechanisms": list(self.sasl_mechanisms),
            "users": dict(material.users),
            "ca_file": str(material.ca_file) if material.ca_file else None,
            "client_cert_file": (
                str(material.client_cert_file) if material.client_cert_file else None
            ),
            "client_key_file": str(material.client_key_file) if material.client_key_file else None,
            "plaintext_bootstrap_servers": self.plaintext_bootstrap_servers,
        }

    def _topic_bootstrap(self) -> str:
        live = [n.plaintext_address for n in self._nodes.values() if n.running()]
        if not live:
            raise RuntimeError("no node of the cluster is running")
        return ",".join(live)

    def _quorum_config(self) -> dict[str, str]:
        raise NotImplementedError

    def _format_flags(self) -> list[str]:
        raise NotImplementedError

    def _prepare(self, java: str, classpath: str) -> None:
        """Fresh root directory, ports, configs; format every node's storage."""
        root = self._make_directory("ferrokafka-kafka-", self._base_dir)
        (root / ROOT_MARKER).write_text(f"ferrokafka.testing, Kafka {self.version}\n")
        self._processes.clear()
        self._finalizer = weakref.finalize(self, _cleanup, self._processes, root, self.keep_dirs)
        self._jvm = KafkaJvm.in_directory(root, java, classpath, self.version)
        internal = self._security is not None or self._faults
        per_node = 2 + internal + self._faults
        ports = free_ports(per_node * self._n)
        self._nodes = {}
        for node_id in self.node_ids:
            directory = root / f"node-{node_id}"
            directory.mkdir()
            first = per_node * (node_id - 1)
            self._nodes[node_id] = Node(
                node_id=node_id,
                port=ports[first],
                controller_port=ports[first + 1],
                directory=directory,
                internal_port=ports[first + 2] if internal else None,
                advertised_port=ports[first + 3] if self._faults else None,
            )
        self._material = None if self._security is None else self._security.make_material(root)
        self._cluster_id = random_cluster_id()
        quorum = self._quorum_config()
        for node in self._nodes.values():
            listeners = {}
            if node.advertised_port is not None:
                assert node.internal_port is not None
                listeners = proxied_listeners(
                    port=node.port,
                    advertised_port=node.advertised_port,
                    internal_port=node.internal_port,
                    controller_port=node.controller_port,
                )
                self._start_proxy(node)
            if self._material is not None:
                assert node.internal_port is not None
                listeners = self._material.broker_config(
                    port=node.port,
                    internal_port=node.internal_port,
                    controller_port=node.controller_port,
                    host=LOOPBACK,
                )
            config = node_config(
                node_id=node.node_id,
                port=node.port,
                controller_port=node.controller_port,
                data_dir=node.data_dir,
                quorum=quorum,
                replication_factor=self.replication_factor,
                min_insync_replicas=self.min_insync_replicas,
                overrides=(listeners, self._config, self._node_configs.get(node.node_id, {})),
                version=self.version,
            )
            node.config_path.write_text(render_properties(config))
        flags = self._format_flags()
        if self._material is not None:
            flags += self._material.format_flags()
        for name, level in self._features.items():
            flags += ["--feature", f"{name}={level}"]
        self._jvm.format_storage(self._nodes.values(), self._cluster_id, flags)

    def _start_proxy(self, node: Node) -> None:
        assert node.advertised_port is not None
        old = self._proxies.pop(node.node_id, None)
        if old is not None:
            old.stop()
        proxy = FaultProxy((LOOPBACK, node.port), port=node.advertised_port)
        self._proxies[node.node_id] = proxy.start()

    def _launch(self, node: Node) -> None:
        assert self._jvm is not None
        process = self._jvm.launch(
            node, self._heap_mb, self._jvm_options, new_session=self._new_session
        )
        self._processes.append(process)

    def _wait_for_started_line(self, waiting: list[tuple[Node, int]], deadline: float) -> None:
        wait_for_started_line(waiting, deadline, version=self.version, where=self._where)

    def _teardown(self, *, force: bool) -> None:
        running = [n.process for n in self._nodes.values() if n.process is not None]
        stop_all(running, self.stop_timeout, sig=signal.SIGKILL if force else signal.SIGTERM)
        self._processes.clear()
        for proxy in self._proxies.values():
            proxy.stop()
        self._proxies.clear()
        self._release_directory()

    def __repr__(self) -> str:
        state = self.bootstrap_servers if self._started else "stopped"
        secured = "" if self._security is None else f", security={self._security.protocol!r}"
        return f"{type(self).__name__}(nodes={self._n}, version={self.version!r}{secured}, {state})"


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
        security: Security | None = None,
        client_auth: bool = False,
        authorizer: bool = False,
        server_hostnames: Sequence[str] = DEFAULT_SERVER_HOSTNAMES,
        faults: bool = False,
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
            security=security,
            client_auth=client_auth,
            authorizer=authorizer,
            server_hostnames=server_hostnames,
            faults=faults,
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
        return dynamic_quorum(self._nodes[1].controller_port)

    def _format_flags(self) -> list[str]:
        return ["--standalone"]


class KafkaCluster(_LocalKafka):
    """``nodes`` combined broker+controller nodes (ids 1..n) with a static controller quorum;
    replication factor ``min(3, n)`` and min ISR 2 (1 below three nodes) unless overridden."""

    def _quorum_config(self) -> dict[str, str]:
        return static_quorum((n.node_id, n.controller_port) for n in self._nodes.values())

    def _format_flags(self) -> list[str]:
        return []
