"""The Kafka JVMs of a harness: each node's directory and process, formatting the nodes' storage
(one short-lived ``StorageTool`` JVM per node, all at once), launching a node and waiting until it
logs ``Kafka Server started`` (failing as soon as it exits instead)."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ._harness import PortTaken
from ._process import LOOPBACK, TrackedProcess, log_tail, spawn
from .distribution import BrokerStartError, logs_through_log4j2
from .kraft import FORMAT_JVM_OPTIONS

__all__ = ["STARTED_LINE", "KafkaJvm", "Node", "NodeInfo", "wait_for_started_line"]

STARTED_LINE = b"Kafka Server started"
# Kafka 4.x logs through log4j2, 3.9 through log4j 1.x (reload4j); each reads its own file
# from its own system property and ignores the other's.
_LOG4J2 = ("log4j2.properties", "-Dlog4j2.configurationFile={}")
_LOG4J1 = ("log4j.properties", "-Dlog4j.configuration=file:{}")
_FORMAT_TIMEOUT_S = 120
_POLL_S = 0.05


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
    #: The PLAINTEXT listener the node's brokers talk to each other on when the client
    #: listener is secured (``port`` is then the secured one); ``None`` otherwise.
    internal_port: int | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass
class Node:
    """A node's ports and directory, and its JVM while one runs."""

    node_id: int
    port: int
    controller_port: int
    directory: Path
    process: TrackedProcess | None = None
    internal_port: int | None = None
    advertised_port: int | None = None
    """Where clients are told to connect, when not ``port``: a fault proxy in front of it."""

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
        return f"{LOOPBACK}:{self.port if self.advertised_port is None else self.advertised_port}"

    @property
    def plaintext_address(self) -> str:
        """Where the harness itself reaches the node: its PLAINTEXT listener."""
        port = self.port if self.internal_port is None else self.internal_port
        return f"{LOOPBACK}:{port}"

    def running(self) -> bool:
        return self.process is not None and not self.process.poll()

    def info(self) -> NodeInfo:
        return NodeInfo(
            node_id=self.node_id,
            host=LOOPBACK,
            port=self.port,
            controller_port=self.controller_port,
            directory=self.directory,
            log_path=self.log_path,
            pid=self.process.pid if self.process is not None and self.running() else None,
            internal_port=self.internal_port,
        )


@dataclass(frozen=True)
class KafkaJvm:
    """How a harness runs Kafka: the ``java`` binary, the jars' class path and the logging
    configuration (written into the harness's directory by :meth:`in_directory`), given to the
    JVM by ``log4j_option``."""

    java: str
    classpath: str
    log4j_config: Path
    version: str
    log4j_option: str

    @classmethod
    def in_directory(cls, root: Path, java: str, classpath: str, version: str) -> KafkaJvm:
        name, option = _LOG4J2 if logs_through_log4j2(version) else _LOG4J1
        log4j = resources.files(__package__ or "ferrokafka.testing") / name
        (root / name).write_bytes(log4j.read_bytes())
        return cls(java, classpath, root / name, version, option.format(root / name))

    def argv(self, *options: str) -> list[str]:
        return [self.java, *options, self.log4j_option, "-cp", self.classpath]

    def format_storage(self, nodes: Iterable[Node], cluster_id: str, flags: Sequence[str]) -> None:
        """Format every node's storage, the nodes in parallel; raise BrokerStartError with the
        failed formatters' output."""
        with contextlib.ExitStack() as stack:
            running: list[tuple[Node, subprocess.Popen[bytes], Path]] = []
            for node in nodes:
                out_path = node.directory / "format.log"
                out = stack.enter_context(open(out_path, "wb"))
                argv = [
                    *self.argv(*FORMAT_JVM_OPTIONS, "-Dferrokafka.log.level=WARN"),
                    "kafka.tools.StorageTool",
                    "format",
                    "--cluster-id",
                    cluster_id,
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
                    code = proc.wait(timeout=_FORMAT_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    code = proc.wait()
                if code != 0:
                    failures.append(f"--- node {node.node_id} (exit {code}):\n{log_tail(out_path)}")
        if failures:
            raise BrokerStartError(
                f"formatting Kafka {self.version} storage failed:\n" + "\n".join(failures)
            )

    def launch(
        self, node: Node, heap_mb: int, options: Sequence[str], *, new_session: bool
    ) -> TrackedProcess:
        """Start the node's broker JVM, its output appended to its log."""
        argv = [
            *self.argv(f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m", *options),
            "kafka.Kafka",
            str(node.config_path),
        ]
        pid = spawn(argv, node.log_path, new_session=new_session)
        node.process = TrackedProcess(pid, str(node.config_path), child=True)
        return node.process


def wait_for_started_line(
    waiting: Iterable[tuple[Node, int]],
    deadline: float,
    *,
    version: str,
    where: Callable[[Path], str],
) -> None:
    """Wait until each node logs ``Kafka Server started`` after its log offset; raise
    :class:`PortTaken` or BrokerStartError as soon as one exits, BrokerStartError at
    ``deadline``. ``where`` says where a log can be read, for the messages."""
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
                tail = log_tail(node.log_path)
                if "Address already in use" in tail:
                    raise PortTaken()
                raise BrokerStartError(
                    f"Kafka {version} node {node_id} exited with status "
                    f"{node.process.returncode} before it started "
                    f"({where(node.log_path)}):\n{tail}"
                )
        if not pending:
            break
        if time.monotonic() >= deadline:
            tails = "\n".join(
                f"--- node {i} ({where(n.log_path)}):\n{log_tail(n.log_path)}"
                for i, (n, _) in pending.items()
            )
            raise BrokerStartError(
                f"Kafka {version} node(s) {sorted(pending)} did not log "
                f"{STARTED_LINE.decode()!r} in time:\n{tails}"
            )
        time.sleep(_POLL_S)
