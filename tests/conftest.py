"""Fixtures over ``ferrokafka.testing``: a real Kafka broker per session, random topics per test,
Spark (a local session, a standalone cluster), and a guard that fails any test whose event loop
logged an unhandled exception.

``FERROKAFKA_BOOTSTRAP=host:port`` makes ``kafka_broker`` use that running broker instead of
starting one. A broker or a Spark that cannot start is a test error, never a skip. Only a missing
PySpark (an optional extra) skips the Spark tests, and not under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.metadata
import os
import re
import uuid
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pytest
from ferrokafka.testing import (
    QUICK_START_JVM_OPTIONS,
    ExternalKafka,
    KafkaBroker,
    KafkaCluster,
    kafka_version,
)
from ferrokafka.testing.distribution import kafka_release
from ferrokafka.testing.kerberos import KerberosRealm
from ferrokafka.testing.security import Security
from ferrokafka.testing.spark import (
    StandaloneSpark,
    spark_kafka_jars,
    spark_session,
    stop_spark_session,
)

from .needs import CLUSTER_START_S, in_ci

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_LOOP_ERRORS = pytest.StashKey[list[dict[str, Any]]]()
_LOOP_ERRORS_SEEN = pytest.StashKey[int]()


class TopicFactory(Protocol):
    def __call__(
        self,
        partitions: int = 1,
        replication_factor: int | None = None,
        configs: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> str: ...


def _topic_name(test_name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", test_name).strip("-")[:60]
    return f"fk-{slug}-{uuid.uuid4().hex[:10]}"


# ---- brokers ----------------------------------------------------------------------------------

KEEP_DATA = {"log.retention.ms": "-1"}
"""Tests write records with fixed (past) timestamps; time-based retention would delete them
at the broker's next retention check (every 5 minutes), in the middle of a test."""


Node = TypeVar("Node", KafkaBroker, KafkaCluster)


def _running(node: Node) -> Iterator[Node]:
    """Start ``node`` (a broker or a cluster), yield it, stop it: a session fixture's body."""
    node.start()
    try:
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[KafkaBroker | ExternalKafka]:
    """One real broker for the whole session (or the external one named by
    ``FERROKAFKA_BOOTSTRAP``)."""
    external = os.environ.get("FERROKAFKA_BOOTSTRAP")
    if external:
        yield ExternalKafka(external).start()
        return
    yield from _running(KafkaBroker(jvm_options=QUICK_START_JVM_OPTIONS, config=KEEP_DATA))


@pytest.fixture(scope="session")
def bootstrap_servers(kafka_broker: KafkaBroker | ExternalKafka) -> str:
    return kafka_broker.bootstrap_servers


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[KafkaCluster]:
    """A three-node KRaft cluster (replication factor 3, min ISR 2), started on first use.
    Tests may kill and restart its nodes; they should restart what they kill."""
    yield from _running(
        KafkaCluster(
            3, jvm_options=QUICK_START_JVM_OPTIONS, config=KEEP_DATA, start_timeout=CLUSTER_START_S
        )
    )


# Secured brokers: one per listener kind, each started on first use and kept for the session.
# The harness's own topic operations go through each node's PLAINTEXT INTERNAL listener.


def _secured_broker(security: Security, **options: Any) -> Iterator[KafkaBroker]:
    yield from _running(
        KafkaBroker(
            jvm_options=QUICK_START_JVM_OPTIONS, config=KEEP_DATA, security=security, **options
        )
    )


@pytest.fixture(scope="session")
def ssl_broker() -> Iterator[KafkaBroker]:
    """A broker whose client listener is SSL (``ssl_broker.ca_file``, ``.ssl_context()``;
    client certificates are accepted, not required)."""
    yield from _secured_broker("ssl")


@pytest.fixture(scope="session")
def mtls_broker() -> Iterator[KafkaBroker]:
    """A broker whose SSL client listener requires a client certificate
    (``mtls_broker.client_cert_files``)."""
    yield from _secured_broker("ssl", client_auth=True)


@pytest.fixture(scope="session")
def sasl_plaintext_broker() -> Iterator[KafkaBroker]:
    """A broker whose client listener is SASL_PLAINTEXT with PLAIN, SCRAM-SHA-256 and
    SCRAM-SHA-512 (``sasl_plaintext_broker.users``: ``admin`` and ``alice``)."""
    yield from _secured_broker("sasl_plaintext")


@pytest.fixture(scope="session")
def sasl_ssl_broker() -> Iterator[KafkaBroker]:
    """A broker whose client listener is SASL_SSL (the mechanisms and users of
    ``sasl_plaintext_broker``, the CA in ``sasl_ssl_broker.ca_file``)."""
    yield from _secured_broker("sasl_ssl")


@pytest.fixture(scope="session")
def acl_broker() -> Iterator[KafkaBroker]:
    """A SASL_PLAINTEXT broker with ``StandardAuthorizer``: ``admin`` is a super user,
    ``alice`` may do only what ACLs allow her."""
    yield from _secured_broker("sasl_plaintext", authorizer=True)


# Kerberos: one MIT KDC for the session (ferrokafka.testing.kerberos), and SASL brokers that
# enable GSSAPI beside their other mechanisms as kafka/localhost@FERROKAFKA.TEST.


@pytest.fixture(scope="session")
def kerberos_realm() -> Iterator[KerberosRealm]:
    """A throwaway realm (``FERROKAFKA.TEST``) on loopback with the principals
    ``kafka/localhost``, ``admin`` and ``alice``, each with a keytab."""
    with KerberosRealm() as realm:
        yield realm


def _kerberos_broker(realm: KerberosRealm, security: Security) -> Iterator[KafkaBroker]:
    options = realm.broker_options(security, config=KEEP_DATA, jvm_options=QUICK_START_JVM_OPTIONS)
    yield from _running(KafkaBroker(**options))


@pytest.fixture(scope="session")
def kerberos_broker(kerberos_realm: KerberosRealm) -> Iterator[KafkaBroker]:
    """A SASL_PLAINTEXT broker accepting GSSAPI for ``kerberos_realm``'s principals (its
    principal is ``kafka/localhost``: clients connecting to 127.0.0.1 need
    ``sasl_kerberos_domain_name="localhost"``)."""
    yield from _kerberos_broker(kerberos_realm, "sasl_plaintext")


@pytest.fixture(scope="session")
def kerberos_ssl_broker(kerberos_realm: KerberosRealm) -> Iterator[KafkaBroker]:
    """``kerberos_broker`` over SASL_SSL (the CA in ``kerberos_ssl_broker.ca_file``)."""
    yield from _kerberos_broker(kerberos_realm, "sasl_ssl")


# ---- test timeouts and the session's brokers -------------------------------------------------

#: The session fixtures that start JVMs, and the seconds their start may take. A session
#: fixture starts inside the setup of the first test that uses it, and pytest-timeout counts
#: that setup against the test's own limit: each test using one gets the start's time on top.
START_BUDGETS_S = {
    "kafka_broker": 120.0,
    "kafka_cluster": CLUSTER_START_S,
    "placement_cluster": CLUSTER_START_S,
    "racked_cluster": CLUSTER_START_S,
    "cluster": CLUSTER_START_S,  # test_faults.py's, behind fault proxies
    "ssl_broker": 120.0,
    "mtls_broker": 120.0,
    "sasl_plaintext_broker": 120.0,
    "sasl_ssl_broker": 120.0,
    "acl_broker": 120.0,
    "kerberos_broker": 120.0,
    "kerberos_ssl_broker": 120.0,
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    try:
        default = float(config.getini("timeout") or 0)
    except ValueError:  # pytest-timeout is not installed: no limits to extend
        return
    budgets = dict(START_BUDGETS_S)
    if os.environ.get("FERROKAFKA_BOOTSTRAP"):
        budgets["kafka_broker"] = 0.0  # the external broker is running already
    for item in items:
        budget = sum(budgets.get(name, 0.0) for name in getattr(item, "fixturenames", ()))
        if not budget:
            continue
        mark = item.get_closest_marker("timeout")
        own = float(mark.args[0]) if mark is not None and mark.args else default
        if own > 0:
            item.add_marker(pytest.mark.timeout(own + budget))


# ---- broker versions --------------------------------------------------------------------------


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a ``requires_kafka_4`` test when the run's broker (``FERROKAFKA_KAFKA_VERSION``) is
    older, saying why; a mark without its reason is an error."""
    mark = item.get_closest_marker("requires_kafka_4")
    if mark is None:
        return
    reason = mark.args[0] if mark.args else mark.kwargs.get("reason")
    if not reason:
        pytest.fail(f"{item.nodeid}: requires_kafka_4 needs a reason", pytrace=False)
    version = kafka_version()
    if kafka_release(version) < (4, 0):
        pytest.skip(f"needs Kafka 4.0+, the run's broker is {version}: {reason}")


# ---- topics -----------------------------------------------------------------------------------


@pytest.fixture
def make_topic(
    kafka_broker: KafkaBroker | ExternalKafka, request: pytest.FixtureRequest
) -> Iterator[TopicFactory]:
    """``make_topic(partitions=3, ...)`` creates a fresh topic on the session broker and returns
    its name; every topic made is deleted after the test. Callable from async tests too."""
    created: list[str] = []

    def make(
        partitions: int = 1,
        replication_factor: int | None = None,
        configs: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> str:
        topic = name or _topic_name(request.node.name)
        kafka_broker.create_topic(
            topic, partitions=partitions, replication_factor=replication_factor, configs=configs
        )
        created.append(topic)
        return topic

    yield make
    for topic in created:
        kafka_broker.delete_topic(topic)


@pytest.fixture
def topic(make_topic: TopicFactory) -> str:
    """A fresh single-partition topic, deleted after the test."""
    return make_topic(partitions=1)


# ---- Spark ------------------------------------------------------------------------------------
# A process has one SparkContext at a time, so `spark` (local[2]) and `spark_cluster` (a standalone
# cluster) take turns. `spark` is function-scoped over a session that lives as long as it is not
# replaced: it hands back the running local session (instant), or re-creates it when a module's
# `spark_cluster` replaced it (a few seconds: the driver JVM stays). `spark_cluster.session` does
# the same on the cluster. Every session gets Spark's own Kafka source on spark.jars, since jars
# reach the driver's classpath only when the driver JVM starts, with the first session of the run.


def _pyspark_version() -> tuple[int, int] | None:
    """(major, minor) of the installed PySpark, without importing it; None if it is missing."""
    try:
        release = importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return None
    major, minor = release.split(".")[:2]
    return int(major), int(minor)


def pytest_configure(config: pytest.Config) -> None:
    version = _pyspark_version()
    if version is not None and version < (4, 2):
        # PySpark 4.0 and 4.1 leave the socket of every collect() to the garbage collector
        # (pyspark.util._load_from_socket: "closed when garbage-collected"; 4.2 closes it), and
        # filterwarnings=error turns its ResourceWarning into a failure of whichever test the
        # collector runs in. Run by tools/spark-versions.
        config.addinivalue_line("filterwarnings", "ignore:unclosed <socket.socket:ResourceWarning")


def _require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        reason = "PySpark is not installed (pip install 'ferrokafka[spark]')"
        if in_ci():
            pytest.fail(f"{reason}; under CI=true the Spark tests must run", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def spark_jars() -> Iterator[list[Path]]:
    """Spark's own Kafka source and the jars it needs beyond PySpark (every session gets them);
    stops whichever Spark session is left at the end of the run."""
    _require_pyspark()
    yield spark_kafka_jars()
    stop_spark_session()


@pytest.fixture
def spark(spark_jars: list[Path]) -> SparkSession:
    """The run's local[2] SparkSession, with ``format("kafka")`` available."""
    return spark_session("local[2]", jars=spark_jars)


@dataclass
class SparkOnCluster:
    """A standalone cluster and the way to its session."""

    standalone: StandaloneSpark
    jars: list[Path]

    @property
    def session(self) -> SparkSession:
        """The session on the cluster (re-created if a test switched to `spark` meanwhile)."""
        return self.standalone.session(jars=self.jars)


@pytest.fixture(scope="module")
def spark_cluster(spark_jars: list[Path]) -> Iterator[SparkOnCluster]:
    """A standalone Spark (master + 2 workers, 1 core and 1g each) with a session on it, for one
    module; stopping it stops that session, and the next `spark` starts a local one again."""
    with StandaloneSpark(workers=2) as standalone:
        on_cluster = SparkOnCluster(standalone, spark_jars)
        on_cluster.session  # noqa: B018 - start it now: executors launch during setup
        yield on_cluster


# ---- unhandled exceptions in event loops ------------------------------------------------------


def _loop_error_report(errors: list[dict[str, Any]]) -> str:
    lines = [f"the event loop logged {len(errors)} unhandled exception(s):"]
    for context in errors:
        exc = context.get("exception")
        lines.append(f"- {context.get('message', '')}: {exc!r}" if exc else f"- {context}")
    return "\n".join(lines)


def _new_loop_errors(item: pytest.Item) -> list[dict[str, Any]]:
    errors = item.stash.get(_LOOP_ERRORS, [])
    seen = item.stash.get(_LOOP_ERRORS_SEEN, 0)
    item.stash[_LOOP_ERRORS_SEEN] = len(errors)
    return errors[seen:]


@pytest.fixture(autouse=True)
def _fail_on_unhandled_loop_exceptions(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Record what any asyncio loop hands to its *default* exception handler during the test
    (a loop with a handler the test installed is the test's business)."""
    gc.collect()  # let earlier tests' garbage report itself before recording starts
    # What is alive now (every imported module, the session's fixtures) is left out of the
    # collections below and later: each then scans only what was made since, not the whole heap
    # of PySpark, pyarrow and hypothesis (three full collections a test were most of the suite's
    # time). A frozen object that becomes cyclic garbage later is never freed: a test's own
    # objects are made after this point, so what it leaves behind is still collected and reported.
    gc.freeze()
    errors: list[dict[str, Any]] = []
    original = asyncio.BaseEventLoop.call_exception_handler

    def recording(self: asyncio.BaseEventLoop, context: dict[str, Any]) -> None:
        if self.get_exception_handler() is None:
            errors.append(context)
        original(self, context)

    monkeypatch.setattr(asyncio.BaseEventLoop, "call_exception_handler", recording)
    request.node.stash[_LOOP_ERRORS] = errors
    yield
    # Tasks that died unobserved report when collected; the test's loop is closed by now.
    gc.collect()
    late = _new_loop_errors(request.node)
    if late:
        pytest.fail(_loop_error_report(late), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    # Fail the test itself (not only its teardown) when its body left loop errors behind.
    result = yield
    gc.collect()
    errors = _new_loop_errors(item)
    if errors:
        pytest.fail(_loop_error_report(errors), pytrace=False)
    return result
