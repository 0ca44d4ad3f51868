"""Spark for tests: Spark's own Kafka connector jars, a standalone cluster run from the installed
PySpark package, and a SparkSession set up for loopback tests.

* :func:`spark_kafka_jars` - the jars ``format("kafka")`` needs on top of PySpark, resolved with
  :mod:`ferrokafka.testing.maven` (for parity tests against Spark's own Kafka source);
* :class:`StandaloneSpark` - a master and ``n`` workers on 127.0.0.1 (``spark://`` URL);
* :func:`spark_session` - the process's SparkSession on a master, replaced when asked for a
  different one (a process has one SparkContext at a time; the driver JVM outlives it).

Spark runs from the installed ``pyspark`` package (``SPARK_HOME`` is set to its folder) with the JVM
of ``JAVA_HOME`` or the ``java`` on ``PATH`` (17+). Python workers run this interpreter
(``PYSPARK_PYTHON = sys.executable``), so they import what the tests import. Nothing here imports
PySpark before it is used.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import time
import urllib.request
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ._harness import LocalHarness, PortTaken
from ._process import LOOPBACK, free_ports, log_tail, spawn
from .maven import resolve_jars

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = [
    "SPARK_KAFKA_VERSION",
    "SparkStartError",
    "StandaloneSpark",
    "spark_kafka_jars",
    "spark_session",
    "stop_spark_session",
]

#: The newest ``spark-sql-kafka-0-10`` on Maven Central (PySpark 4.2.x pairs with it).
SPARK_KAFKA_VERSION = "4.2.0"
#: What the connector needs and PySpark does not ship (versions from the connector's POM). The
#: rest of its dependency tree (scala, hadoop client, lz4, snappy, slf4j, ...) PySpark has, so
#: these are resolved without their dependencies: no second copy on Spark's classpath.
_SPARK_KAFKA_ARTIFACTS = (
    f"org.apache.spark:spark-sql-kafka-0-10_2.13:{SPARK_KAFKA_VERSION}",
    f"org.apache.spark:spark-token-provider-kafka-0-10_2.13:{SPARK_KAFKA_VERSION}",
    "org.apache.kafka:kafka-clients:3.9.2",
    "org.apache.commons:commons-pool2:2.13.1",
)
#: Spark's Avro functions (``from_avro``), the reference of ``valueFormat=avro``; the Avro
#: library itself PySpark ships.
_SPARK_AVRO_ARTIFACTS = (f"org.apache.spark:spark-avro_2.13:{SPARK_KAFKA_VERSION}",)
_MASTER_CLASS = "org.apache.spark.deploy.master.Master"
_WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
_POLL_S = 0.1
# No proxy for loopback, whatever the environment says.
_LOCAL_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class SparkStartError(RuntimeError):
    """Spark could not start; the message carries the tail of the logs."""


def spark_kafka_jars() -> list[Path]:
    """Spark's own Kafka source and the runtime jars it needs that PySpark lacks, and Spark's
    Avro functions, as files for ``spark.jars`` (resolved once with Maven, then from the
    cache)."""
    kafka = resolve_jars(_SPARK_KAFKA_ARTIFACTS, transitive=False).jars
    avro = resolve_jars(_SPARK_AVRO_ARTIFACTS, transitive=False).jars
    return [*kafka, *avro]


def _pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _require_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={java_home}" if java_home else "no java on PATH, JAVA_HOME unset"
        raise SparkStartError(f"no Java runtime for Spark ({where}); Spark 4 needs Java 17+")


# ---- sessions ---------------------------------------------------------------------------------


def _jar_paths(value: str) -> set[str]:
    # Entries may come back from the SparkConf as file: URIs; compare the files.
    return {urlparse(j).path if j.startswith("file:") else j for j in value.split(",") if j}


def _context_matches(master: str, settings: Mapping[str, str]) -> bool:
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if context is None:
        return False
    if context.master != master:
        return False
    current = context.getConf()
    for key, value in settings.items():
        if key.startswith("spark.sql."):
            continue  # session settings: applied to a reused session by the builder
        have = current.get(key)
        if key == "spark.jars" and have is not None:
            if _jar_paths(have) != _jar_paths(value):
                return False
        elif have != value:
            return False
    return True


def stop_spark_session() -> None:
    """Stop this process's SparkContext and its sessions, if one runs (the driver JVM stays,
    for the next session)."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()
    context = SparkContext._active_spark_context
    if context is not None:
        context.stop()


def spark_session(
    master: str = "local[2]",
    *,
    jars: Sequence[Path] = (),
    conf: Mapping[str, str] | None = None,
    app_name: str = "ferrokafka-tests",
) -> SparkSession:
    """The process's SparkSession on ``master``, created if needed.

    A running one is reused when its master, ``jars`` and (non-``spark.sql.*``) settings match;
    otherwise it is stopped and replaced. Settings: driver on 127.0.0.1, no UI or progress bar,
    2 shuffle partitions, UTC session time zone, 512m executors on a ``spark://`` master, then
    ``conf``; log level ERROR. Sets ``SPARK_HOME`` (the ``pyspark`` package), ``PYSPARK_PYTHON``
    and ``PYSPARK_DRIVER_PYTHON`` (this interpreter) in ``os.environ`` before the JVM starts.

    ``jars`` reach the driver's own classpath only when the driver JVM starts (the first session
    of the process); pass the same jars to every session of a process.
    """
    os.environ["SPARK_HOME"] = str(_pyspark_home())
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)  # else the JVM looks up the hostname
    _require_java()
    from pyspark.sql import SparkSession

    settings = {
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.session.timeZone": "UTC",
    }
    if master.startswith("spark://"):
        settings["spark.executor.memory"] = "512m"
    if jars:
        settings["spark.jars"] = ",".join(str(Path(j).resolve()) for j in jars)
    settings.update(conf or {})
    if not _context_matches(master, settings):
        stop_spark_session()
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


# ---- a standalone cluster ---------------------------------------------------------------------


@dataclass
class _Daemon:
    """A master or worker JVM we spawned as the leader of its own process group (executors
    the worker forks join that group). Its exit is observed without reaping it, so neither its
    pid nor its group id can be reused before :meth:`reap`: signalling the group stays safe."""

    name: str
    pid: int
    log_path: Path
    reaped: bool = False

    def exited(self) -> bool:
        if self.reaped:
            return True
        try:
            return os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def signal_group(self, sig: int) -> None:
        if not self.reaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, sig)

    def reap(self) -> None:
        if not self.reaped:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.reaped = True


def _stop_daemons(daemons: list[_Daemon], timeout: float) -> None:
    """SIGTERM every group, SIGKILL whatever is left after ``timeout``, reap the leaders."""
    for daemon in daemons:
        daemon.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while not all(d.exited() for d in daemons) and time.monotonic() < deadline:
        time.sleep(0.05)
    for daemon in daemons:
        daemon.signal_group(signal.SIGKILL)  # a leader that ignored SIGTERM, orphaned executors
        daemon.reap()
    daemons.clear()


class StandaloneSpark(LocalHarness):
    """A Spark standalone master and ``workers`` workers on 127.0.0.1, from the installed
    PySpark package; a context manager. ``start`` returns once every worker has registered.

    Logs (``master.log``, ``worker-<i>.log``) and the workers' directories live in a temporary
    folder, removed on stop unless ``keep_dirs`` (default: ``$FERROKAFKA_KEEP_SPARK_DIRS``)."""

    _keep_variable = "FERROKAFKA_KEEP_SPARK_DIRS"
    _removed = "on stop"

    def __init__(
        self,
        workers: int = 2,
        *,
        cores: int = 1,
        memory: str = "1g",
        start_timeout: float = 60.0,
        stop_timeout: float = 5.0,
        keep_dirs: bool | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("a standalone cluster needs at least one worker")
        super().__init__(
            start_timeout=start_timeout, stop_timeout=stop_timeout, keep_dirs=keep_dirs
        )
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self._daemons: list[_Daemon] = []  # shared with the exit-time finalizer
        self._port = 0
        self._webui_port = 0

    # ---- public state ----------------------------------------------------------------------

    @property
    def master_url(self) -> str:
        self._require_started()
        return self._master_url

    @property
    def webui_url(self) -> str:
        """The master's web UI (``/json/`` is its state as JSON)."""
        self._require_started()
        return self._webui_url

    @property
    def pids(self) -> dict[str, int]:
        """``"master"`` / ``"worker-<i>"`` -> pid, for the daemons running now."""
        return {d.name: d.pid for d in self._daemons if not d.exited()}

    def status(self) -> dict[str, Any]:
        """The master's state as its web UI reports it (``/json/``: ``aliveworkers``,
        ``workers``, ``activeapps``, ...)."""
        self._require_started()
        status = self._fetch_status()
        if status is None:
            raise RuntimeError(f"the Spark master at {self.webui_url} does not answer")
        return status

    def session(
        self,
        *,
        jars: Sequence[Path] = (),
        conf: Mapping[str, str] | None = None,
        app_name: str = "ferrokafka-tests",
    ) -> SparkSession:
        """:func:`spark_session` on this cluster, using every worker's cores; its first job waits
        until every worker runs an executor."""
        settings = {
            "spark.cores.max": str(self.workers * self.cores),
            "spark.executor.cores": str(self.cores),
            "spark.scheduler.minRegisteredResourcesRatio": "1.0",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": f"{self.start_timeout:.0f}s",
            **(conf or {}),
        }
        return spark_session(self.master_url, jars=jars, conf=settings, app_name=app_name)

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self) -> StandaloneSpark:
        """Start the master, then the workers; return once all workers are alive at the master
        (raises :class:`SparkStartError` with the logs' tails)."""
        if self._started:
            raise RuntimeError(f"{self!r} is already started")
        home = _pyspark_home()
        _require_java()
        deadline = time.monotonic() + self.start_timeout
        self._start_on_fresh_ports(
            lambda: self._launch(home, deadline), self._teardown, SparkStartError
        )
        return self

    def stop(self) -> None:
        """Stop the session running on this cluster, if any, then every process of the cluster
        (SIGTERM, SIGKILL after ``stop_timeout``); remove the folder. Idempotent."""
        if self._started and "pyspark" in sys.modules:
            from pyspark import SparkContext

            context = SparkContext._active_spark_context
            if context is not None and context.master == self._master_url:
                stop_spark_session()
        self._teardown()

    def __repr__(self) -> str:
        state = self.master_url if self._started else "stopped"
        return f"StandaloneSpark(workers={self.workers}, {state})"

    # ---- internals -------------------------------------------------------------------------

    @property
    def _master_url(self) -> str:
        return f"spark://{LOOPBACK}:{self._port}"

    @property
    def _webui_url(self) -> str:
        return f"http://{LOOPBACK}:{self._webui_port}"

    def _launch(self, home: Path, deadline: float) -> None:
        root = self._make_directory("ferrokafka-spark-")
        self._finalizer = weakref.finalize(self, _stop_daemons, self._daemons, 0.0)
        (root / "conf").mkdir()  # SPARK_CONF_DIR: no spark-env.sh or defaults from elsewhere
        # Fixed ports or nothing: a master that moved to port+1 would not be where we look. No
        # REST submission server: its fixed port 6066 is taken by any other master on the host.
        properties = root / "spark-defaults.conf"
        properties.write_text("spark.port.maxRetries 0\nspark.master.rest.enabled false\n")
        ports = free_ports(2 + 2 * self.workers)
        self._port, self._webui_port = ports[0], ports[1]
        env = {
            **os.environ,
            "SPARK_HOME": str(home),
            "SPARK_CONF_DIR": str(root / "conf"),
            "SPARK_LOCAL_IP": LOOPBACK,
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:-UsePerfData",
        }
        spark_class = str(home / "bin" / "spark-class")
        common = ["--host", LOOPBACK, "--properties-file", str(properties)]
        ports_args = ["--port", str(self._port), "--webui-port", str(self._webui_port)]
        self._spawn("master", [spark_class, _MASTER_CLASS, *common, *ports_args], env)
        # A worker that finds no master retries only after 5-15 s: start them once it leads.
        self._wait_for(lambda s: s.get("status") == "ALIVE", "the master to lead", deadline)
        for i in range(1, self.workers + 1):
            work_dir = root / f"worker-{i}"
            work_dir.mkdir()
            ports_args = ["--port", str(ports[2 * i]), "--webui-port", str(ports[2 * i + 1])]
            resources = ["--cores", str(self.cores), "--memory", self.memory]
            argv = [spark_class, _WORKER_CLASS, *common, *ports_args, *resources]
            argv += ["--work-dir", str(work_dir), self._master_url]
            self._spawn(f"worker-{i}", argv, env)
        self._wait_for(
            lambda s: s.get("aliveworkers") == self.workers,
            f"{self.workers} worker(s) to register",
            deadline,
        )
        self._started = True

    def _spawn(self, name: str, argv: list[str], env: Mapping[str, str]) -> None:
        assert self._root is not None
        log_path = self._root / f"{name}.log"
        pid = spawn(argv, log_path, new_session=True, env=env)
        self._daemons.append(_Daemon(name, pid, log_path))

    def _fetch_status(self) -> dict[str, Any] | None:
        try:
            with _LOCAL_HTTP.open(f"{self._webui_url}/json/", timeout=2) as response:
                status: dict[str, Any] = json.load(response)
                return status
        except (OSError, ValueError):
            return None

    def _wait_for(
        self, ready: Callable[[dict[str, Any]], bool], what: str, deadline: float
    ) -> None:
        while True:
            for daemon in self._daemons:
                if daemon.exited():
                    tail = log_tail(daemon.log_path)
                    if "Address already in use" in tail or "could not bind on" in tail:
                        raise PortTaken()
                    raise SparkStartError(
                        f"Spark {daemon.name} exited while waiting for {what} "
                        f"({self._where(daemon.log_path)}):\n{tail}"
                    )
            status = self._fetch_status()
            if status is not None and ready(status):
                return
            if time.monotonic() >= deadline:
                tails = "\n".join(
                    f"--- {d.name} ({self._where(d.log_path)}):\n{log_tail(d.log_path, 15)}"
                    for d in self._daemons
                )
                raise SparkStartError(
                    f"timed out after {self.start_timeout:.0f}s waiting for {what} "
                    f"(last status: {status}):\n{tails}"
                )
            time.sleep(_POLL_S)

    def _teardown(self) -> None:
        _stop_daemons(self._daemons, self.stop_timeout)
        self._release_directory()
        self._started = False
