"""Spark reads and writes on secured listeners, with the ``kafka.security.protocol``,
``kafka.sasl.*`` and ``kafka.ssl.*`` options a job gives Spark's own Kafka connector: SASL
(SCRAM-SHA-512 over SASL_SSL, PLAIN over SASL_PLAINTEXT) and TLS with PEM trust and key stores,
through every way in, with the JVM connector reading the same listener with the same options; a
wrong password failing the job with the SASL error; no secret in logs or errors."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ferrokafka.spark import read_kafka
from ferrokafka.spark.options import parse_source_options
from ferrokafka.testing import KafkaBroker

from .spark_data import expected, produce_rows, spark_rows
from .test_spark_parity import jvm
from .test_spark_read import READERS, load
from .test_spark_write import SOURCE_SCHEMA

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytestmark = pytest.mark.integration

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@contextmanager
def new_topic(broker: KafkaBroker, partitions: int = 2) -> Iterator[str]:
    name = f"spark-sec-{uuid.uuid4().hex[:10]}"
    broker.create_topic(name, partitions=partitions)
    try:
        yield name
    finally:
        broker.delete_topic(name)


def sasl_options(
    broker: KafkaBroker, mechanism: str, password: str | None = None
) -> dict[str, str]:
    """What a Spark user writes for ``alice`` on ``broker``'s listener."""
    module = PLAIN if mechanism == "PLAIN" else SCRAM
    password = broker.users["alice"] if password is None else password
    opts = {
        "kafka.bootstrap.servers": broker.bootstrap_servers,
        "kafka.security.protocol": broker.security_protocol,
        "kafka.sasl.mechanism": mechanism,
        "kafka.sasl.jaas.config": f'{module} required username="alice" password="{password}";',
    }
    if broker.security_protocol == "SASL_SSL":
        opts["kafka.ssl.truststore.type"] = "PEM"
        opts["kafka.ssl.truststore.location"] = str(broker.ca_file)
    return opts


def write(frame: Any, opts: dict[str, str], topic: str) -> None:
    from ferrokafka.spark import register

    register(frame.sparkSession)
    writer = frame.write.format("ferrokafka").mode("append").option("topic", topic)
    for key, value in opts.items():
        writer = writer.option(key, value)
    writer.save()


@pytest.mark.parametrize(
    ("fixture", "mechanism"),
    [("sasl_ssl_broker", "SCRAM-SHA-512"), ("sasl_plaintext_broker", "PLAIN")],
)
def test_sasl_read_and_write_through_every_way_in(
    spark: SparkSession, request: pytest.FixtureRequest, fixture: str, mechanism: str
) -> None:
    broker: KafkaBroker = request.getfixturevalue(fixture)
    opts = sasl_options(broker, mechanism)
    with new_topic(broker) as topic, new_topic(broker, partitions=1) as out:
        # Written through the broker's PLAINTEXT listener: the reads below are what is tested.
        rows = produce_rows(broker.plaintext_bootstrap_servers, topic, 2, 60)
        want = expected(rows)
        read_opts = {**opts, "subscribe": topic, "includeHeaders": "true"}
        for reader in READERS:
            assert spark_rows(load(spark, reader, read_opts)) == want, reader
        # Spark's own connector, same options, same listener.
        assert spark_rows(jvm(spark, read_opts)) == want

        frame = spark.createDataFrame(
            [("t", f"k{i}", b"v%d" % i, None, None) for i in range(300)], SOURCE_SCHEMA
        ).repartition(3)
        write(frame, opts, out)
        back = spark_rows(read_kafka(spark, {**opts, "subscribe": out}), False)
        assert sorted((r[0], r[1]) for r in back) == sorted(
            (b"k%d" % i, b"v%d" % i) for i in range(300)
        )
        assert {r[2] for r in back} == {out}


def test_pem_trust_and_key_stores(
    spark: SparkSession, ssl_broker: KafkaBroker, mtls_broker: KafkaBroker, tmp_path: Path
) -> None:
    ca_pem = ssl_broker.ca_file.read_text()
    cert_file, key_file = mtls_broker.client_cert_files
    key_store = tmp_path / "client-keystore.pem"
    key_store.write_text(key_file.read_text() + cert_file.read_text())
    key_store.chmod(0o600)
    one_way = {
        "kafka.bootstrap.servers": ssl_broker.bootstrap_servers,
        "kafka.security.protocol": "SSL",
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.certificates": ca_pem,
        "kafka.ssl.endpoint.identification.algorithm": "",
    }
    mutual_base = {
        "kafka.bootstrap.servers": mtls_broker.bootstrap_servers,
        "kafka.security.protocol": "SSL",
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.location": str(mtls_broker.ca_file),
        "kafka.ssl.keystore.type": "PEM",
    }
    inline_key = {
        **mutual_base,
        "kafka.ssl.keystore.certificate.chain": cert_file.read_text(),
        "kafka.ssl.keystore.key": key_file.read_text(),
    }
    file_key = {**mutual_base, "kafka.ssl.keystore.location": str(key_store)}
    for broker, opts, readers in (
        (ssl_broker, one_way, ["arrow", "datasource"]),
        (mtls_broker, inline_key, ["pandas", "datasource"]),
        (mtls_broker, file_key, ["arrow"]),
    ):
        with new_topic(broker) as topic:
            rows = produce_rows(broker.plaintext_bootstrap_servers, topic, 2, 40)
            read_opts = {**opts, "subscribe": topic}
            for reader in readers:
                got = spark_rows(load(spark, reader, read_opts), False)
                assert got == expected(rows, False), reader
            if opts is not file_key:  # Java reads a PEM key store file only with a key password
                assert spark_rows(jvm(spark, read_opts), False) == expected(rows, False)

    # Mutual TLS without a key store: refused by the broker, a prompt failure.
    with pytest.raises(Exception) as caught:
        read_kafka(spark, {**mutual_base, "subscribe": "any", "kafka.request.timeout.ms": "5000"})
    assert "refused the client certificate" in str(caught.value), caught.value
    # A JKS store: refused before anything connects, naming the option.
    with pytest.raises(Exception, match="give the certificates as PEM"):
        load(
            spark, "datasource", {**one_way, "subscribe": "any", "kafka.ssl.truststore.type": "JKS"}
        ).collect()


def test_a_wrong_password_fails_the_job_with_the_sasl_error(
    spark: SparkSession, sasl_ssl_broker: KafkaBroker
) -> None:
    wrong = "not-alices-" + uuid.uuid4().hex
    opts = {**sasl_options(sasl_ssl_broker, "SCRAM-SHA-256", wrong), "subscribe": "any"}
    for reader in READERS:
        began = time.monotonic()
        with pytest.raises(Exception) as caught:
            load(spark, reader, opts).collect()
        text = str(caught.value)
        assert "SaslAuthenticationFailed" in text or "Authentication failed" in text, reader
        assert "SCRAM-SHA-256" in text, reader
        assert wrong not in text and sasl_ssl_broker.users["alice"] not in text
        assert time.monotonic() - began < 60, reader

    frame = spark.createDataFrame([("t", "k", b"v", None, None)], SOURCE_SCHEMA)
    with pytest.raises(Exception) as caught:
        write(frame, {k: v for k, v in opts.items() if k != "subscribe"}, "any")
    assert "Authentication failed" in str(caught.value) and wrong not in str(caught.value)


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (
            {"kafka.sasl.mechanism": "OAUTHBEARER"},
            "kafka.sasl.mechanism 'OAUTHBEARER' is not supported through Spark options",
        ),
        (
            {"kafka.sasl.mechanism": "GSSAPI", "kafka.sasl.kerberos.service.name": "kafka"},
            "kafka.sasl.mechanism 'GSSAPI' is not supported through Spark options",
        ),
        (
            {"kafka.sasl.login.callback.handler.class": "com.example.TokenHandler"},
            "'kafka.sasl.login.callback.handler.class' is not supported through Spark options",
        ),
    ],
)
def test_what_cannot_map_fails_the_job_naming_the_option(
    spark: SparkSession, sasl_ssl_broker: KafkaBroker, more: dict[str, str], message: str
) -> None:
    opts = {**sasl_options(sasl_ssl_broker, "SCRAM-SHA-512"), "subscribe": "any", **more}
    for reader in ("arrow", "datasource"):
        with pytest.raises(Exception) as caught:
            load(spark, reader, opts).collect()
        assert message in str(caught.value), reader
        assert sasl_ssl_broker.users["alice"] not in str(caught.value)


def test_no_secret_in_debug_logs_or_reprs(
    spark: SparkSession, sasl_ssl_broker: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    password = sasl_ssl_broker.users["alice"]
    with new_topic(sasl_ssl_broker) as topic:
        rows = produce_rows(sasl_ssl_broker.plaintext_bootstrap_servers, topic, 2, 10)
        opts = {
            **sasl_options(sasl_ssl_broker, "SCRAM-SHA-512"),
            "subscribe": topic,
            "kafka.no.such.option": "x",
        }
        # Planning runs here, on the driver: its client authenticates under DEBUG logging.
        with caplog.at_level(logging.DEBUG):
            assert spark_rows(read_kafka(spark, opts), False) == expected(rows, False)
    assert any(r.name.startswith("ferrokafka") for r in caplog.records)
    assert "no.such.option" in caplog.text  # the records were captured
    assert password not in caplog.text
    plan = load(spark, "datasource", opts)._jdf.queryExecution().toString()
    assert "ferrokafka" in plan and password not in plan
    parsed = parse_source_options(opts, streaming=False)
    assert password not in repr(parsed) and password not in repr(parsed.fetch)
