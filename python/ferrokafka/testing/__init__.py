"""Run a real Apache Kafka broker (or a KRaft cluster) on loopback, like ``asyncpg.cluster``.

Used by ferrokafka's own tests, the demo and the benchmarks, and usable by applications' tests::

    from ferrokafka.testing import KafkaBroker

    with KafkaBroker() as broker:
        broker.create_topic("events", partitions=3)
        ...  # connect to broker.bootstrap_servers

The broker's jars are resolved from Maven Central with ``mvn`` (cached under
``~/.cache/ferrokafka/maven``) and run with the machine's ``java`` (17+). Importing this package
does not import the client; starting a broker does (readiness goes through ferrokafka itself).

``KafkaBroker(security="ssl" | "sasl_plaintext" | "sasl_ssl")`` secures the client listener
(a throwaway CA and certificates, SASL users with random passwords; see :mod:`.security`);
``broker.client_options()`` gives the keyword arguments a client needs to connect to it. TLS
needs the ``testing`` extra (``trustme``, ``cryptography``).
"""

from .broker import (
    DEFAULT_JVM_OPTIONS,
    KAFKA_VERSION,
    QUICK_START_JVM_OPTIONS,
    BrokerStartError,
    ExternalKafka,
    KafkaBroker,
    KafkaCluster,
    NodeInfo,
    detached_status,
    kafka_version,
    resolve_kafka,
    stop_detached,
)
from .maven import Artifact, MavenResolveError, ResolvedJars, resolve_jars
from .security import SASL_MECHANISMS, SECURITY_OPTIONS, Security

__all__ = [
    "DEFAULT_JVM_OPTIONS",
    "KAFKA_VERSION",
    "QUICK_START_JVM_OPTIONS",
    "SASL_MECHANISMS",
    "SECURITY_OPTIONS",
    "Artifact",
    "BrokerStartError",
    "ExternalKafka",
    "KafkaBroker",
    "KafkaCluster",
    "MavenResolveError",
    "NodeInfo",
    "ResolvedJars",
    "Security",
    "detached_status",
    "kafka_version",
    "resolve_jars",
    "resolve_kafka",
    "stop_detached",
]
