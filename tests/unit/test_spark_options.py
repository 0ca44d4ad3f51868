"""Spark's Kafka source and sink options: parsing, Spark's checks and wording, the mapping of
``kafka.*`` client configs."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from ferrokafka.spark.options import (
    OffsetSpec,
    client_kwargs,
    parse_fetch_options,
    parse_sink_options,
    parse_source_options,
)
from ferrokafka.spark.security import Secret
from ferrokafka.structs import TopicPartition

BS = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def parse(streaming: bool = False, **options: Any) -> Any:
    return parse_source_options({**BS, **options}, streaming=streaming)


def test_defaults_follow_spark() -> None:
    batch = parse(subscribe="a, b")
    assert batch.subscribe == ("a", "b")
    assert batch.starting == OffsetSpec("earliest") and batch.ending == OffsetSpec("latest")
    assert batch.fail_on_data_loss and not batch.include_headers
    assert batch.min_partitions is None and batch.max_records_per_partition is None
    assert batch.max_trigger_delay_ms == 15 * 60_000
    assert parse(True, subscribe="a").starting == OffsetSpec("latest")
    assert batch.client == {"bootstrap_servers": "127.0.0.1:9092"}


def test_option_names_are_case_insensitive() -> None:
    opts = parse_source_options(
        {"KAFKA.BOOTSTRAP.SERVERS": "h:1", "SubscribePattern": "t.*", "FAILONDATALOSS": "False"},
        streaming=False,
    )
    assert opts.subscribe_pattern == "t.*" and not opts.fail_on_data_loss
    assert opts.client["bootstrap_servers"] == "h:1"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "One of the following options must be specified for Kafka source"),
        (
            {"subscribe": "a", "assign": '{"a":[0]}'},
            "Only one of the following options can be specified for Kafka source",
        ),
        ({"subscribe": " , "}, "No topics to subscribe to as specified value for option"),
        ({"subscribePattern": " "}, "Pattern to subscribe is empty"),
        ({"subscribePattern": "("}, "Invalid value '(' for option 'subscribePattern'"),
        ({"assign": "{}"}, "No topicpartitions to assign"),
        ({"assign": '["a"]'}, 'Expected e.g. {"topicA":[0,1],"topicB":[0,1]}'),
        (
            {"subscribe": "a", "startingOffsets": "latest"},
            "starting offset can't be latest for batch queries on Kafka",
        ),
        (
            {"subscribe": "a", "endingOffsets": "earliest"},
            "ending offset can't be earliest for batch queries on Kafka",
        ),
        (
            {"subscribe": "a", "startingOffsets": '{"a":{"0":-1}}'},
            "startingOffsets for a-0 can't be latest for batch queries on Kafka",
        ),
        (
            {"subscribe": "a", "endingOffsets": '{"a":{"3":-2}}'},
            "ending offset for a-3 can't be earliest for batch queries on Kafka",
        ),
        ({"subscribe": "a", "startingOffsets": "{oops"}, "Expected e.g."),
        ({"subscribe": "a", "startingOffsets": '{"a":{"x":1}}'}, "Invalid partition 'x'"),
        ({"subscribe": "a", "startingOffsets": '{"a":{"0":"1"}}'}, "Invalid offset '1'"),
        (
            {"subscribe": "a", "minPartitions": "0"},
            "minPartitions must be positive",
        ),
        (
            {"subscribe": "a", "maxRecordsPerPartition": "many"},
            'For input string: "many"',
        ),
        ({"subscribe": "a", "failOnDataLoss": "maybe"}, 'For input string: "maybe"'),
        ({"subscribe": "a", "includeHeaders": "yes"}, "yes is not a boolean string."),
        ({"subscribe": "a", "maxRecordsPerPartition": "-1"}, "maxrecordsperpartition must be"),
        (
            {"subscribe": "a", "minOffsetsPerTrigger": "10", "maxOffsetsPerTrigger": "5"},
            "The value of minOffsetPerTrigger(10) is higher than the maxOffsetsPerTrigger(5).",
        ),
        (
            {
                "subscribe": "a",
                "startingOffsets": '{"a":{"0":1}}',
                "endingOffsets": '{"a":{"0":5,"1":5}}',
            },
            "The specified start offset and end offset should have the same topic-partitions.",
        ),
        (
            {
                "subscribe": "a",
                "startingOffsets": '{"a":{"0":9}}',
                "endingOffsets": '{"a":{"0":5}}',
            },
            "The specified start offset 9 is greater than the end offset 5 for topic a "
            "partition 0.",
        ),
        (
            {"subscribe": "a", "startingOffsetsByTimestampStrategy": "closest"},
            "No value found for 'CLOSEST'",
        ),
        ({"subscribe": "a", "maxTriggerDelay": "soon"}, "for option 'maxTriggerDelay'"),
        ({"subscribe": "a", "startingTimestamp": "yesterday"}, "Expected a single long value"),
        (
            {"subscribe": "a", "kafka.auto.offset.reset": "earliest"},
            "Kafka option 'auto.offset.reset' is not supported",
        ),
        (
            {"subscribe": "a", "kafka.value.deserializer": "x"},
            "Kafka option 'value.deserializer' is not supported",
        ),
        ({"subscribe": "a", "kafka.enable.auto.commit": "true"}, "'enable.auto.commit'"),
        ({"subscribe": "a", "kafka.request.timeout.ms": "soon"}, "'kafka.request.timeout.ms'"),
    ],
)
def test_invalid_options_raise_at_planning(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        parse(**options)
    assert message in str(info.value)


def test_bootstrap_servers_are_required() -> None:
    with pytest.raises(ValueError, match=r"'kafka\.bootstrap\.servers' must be specified"):
        parse_source_options({"subscribe": "a"}, streaming=False)


def test_streaming_refuses_ending_offsets() -> None:
    with pytest.raises(ValueError, match="ending offset not valid in streaming queries"):
        parse(True, subscribe="a", endingOffsets="latest")
    with pytest.raises(ValueError, match="ending timestamp not valid in streaming queries"):
        parse(True, subscribe="a", endingOffsetsByTimestamp='{"a":{"0":1}}')


def test_offsets_json_and_timestamp_precedence() -> None:
    opts = parse(
        subscribe="a",
        startingOffsets='{"a":{"0":23,"1":-2}}',
        endingOffsets='{"a":{"0":-1,"1":50}}',
    )
    assert opts.starting == OffsetSpec(
        "offsets", {TopicPartition("a", 0): 23, TopicPartition("a", 1): -2}
    )
    assert opts.ending.offsets[TopicPartition("a", 1)] == 50
    # Spark: startingTimestamp wins over startingOffsetsByTimestamp, which wins over offsets.
    both = parse(
        subscribe="a",
        startingTimestamp="1000",
        startingOffsetsByTimestamp='{"a":{"0":5}}',
        startingOffsets='{"a":{"0":1}}',
    )
    assert both.starting == OffsetSpec("timestamp", timestamp=1000)
    by_ts = parse(
        subscribe="a", startingOffsetsByTimestamp='{"a":{"0":5}}', startingOffsets="earliest"
    )
    assert by_ts.starting == OffsetSpec("timestamps", {TopicPartition("a", 0): 5})
    assert parse(subscribe="a", endingTimestamp="7").ending == OffsetSpec("timestamp", timestamp=7)


def test_assign_and_streaming_limits() -> None:
    opts = parse(
        True,
        assign='{"a":[0,1],"b":[2]}',
        maxOffsetsPerTrigger="100",
        minOffsetsPerTrigger="10",
        maxTriggerDelay="30s",
        minPartitions="4",
        includeHeaders=True,
    )
    assert opts.assign == (TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 2))
    assert (opts.max_offsets_per_trigger, opts.min_offsets_per_trigger) == (100, 10)
    assert opts.max_trigger_delay_ms == 30_000 and opts.min_partitions == 4
    assert opts.include_headers and opts.strategy == "Assign[a-0, a-1, b-2]"


def test_kafka_options_map_onto_client_options(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ferrokafka.spark.options"):
        opts = parse(
            subscribe="a",
            **{
                "kafka.client.id": "me",
                "kafka.request.timeout.ms": "5000",
                "kafka.isolation.level": "read_committed",
                "kafka.check.crcs": "false",
                "kafka.max.partition.fetch.bytes": "1024",
                "kafka.group.id": "ignored",
                "kafka.no.such.config": "1",
                "kafka.security.protocol": "SASL_PLAINTEXT",
                "kafka.sasl.mechanism": "PLAIN",
                "kafka.sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule"
                ' required username="alice" password="s3cret";',
            },
        )
    assert opts.client == {
        "bootstrap_servers": "127.0.0.1:9092",
        "client_id": "me",
        "request_timeout_ms": 5000,
        "isolation_level": "read_committed",
        "check_crcs": False,
        "max_partition_fetch_bytes": 1024,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_plain_username": "alice",
        "sasl_plain_password": Secret("s3cret"),
    }
    assert client_kwargs(opts.client, opts.ssl)["sasl_plain_password"] == "s3cret"
    assert "'no.such.config' was supplied but isn't a known config" in caplog.text
    assert "group.id" not in caplog.text


def test_ssl_options_build_a_context(tmp_path: Any) -> None:
    opts = parse(
        subscribe="a",
        **{
            "kafka.security.protocol": "SSL",
            "kafka.ssl.endpoint.identification.algorithm": "",
        },
    )
    kwargs = client_kwargs(opts.client, opts.ssl)
    assert kwargs["security_protocol"] == "SSL"
    assert kwargs["ssl_context"].check_hostname is False
    with pytest.raises(ValueError, match="give the certificates as PEM"):
        parse(
            subscribe="a", **{"kafka.security.protocol": "SSL", "kafka.ssl.truststore.type": "JKS"}
        )


def test_fetch_and_sink_options() -> None:
    fetch = parse_fetch_options({**BS, "includeHeaders": "true", "kafkaConsumer.pollTimeoutMs": 5})
    assert fetch.include_headers and fetch.poll_timeout_ms == 5 and fetch.fail_on_data_loss
    sink = parse_sink_options(
        {**BS, "topic": "out", "kafka.acks": "all", "kafka.compression.type": "lz4"}
    )
    assert sink.topic == "out"
    assert sink.producer == {"acks": "all", "compression_type": "lz4"}
    with pytest.raises(ValueError, match=r"Kafka option 'key\.serializer' is not supported"):
        parse_sink_options({**BS, "kafka.key.serializer": "x"})


def test_commit_offsets_to_group_names_the_group() -> None:
    assert parse(True, subscribe="a").commit_group is None
    assert parse(True, subscribe="a", commitOffsetsToGroup="false").commit_group is None
    assert parse(True, subscribe="a", commitOffsetsToGroup=" lag-view ").commit_group == "lag-view"
    named = parse(True, subscribe="a", commitOffsetsToGroup="TRUE", **{"kafka.group.id": "g1"})
    assert named.commit_group == "g1"
    # kafka.group.id alone commits nothing (as Spark's source).
    assert parse(True, subscribe="a", **{"kafka.group.id": "g1"}).commit_group is None
    # Without kafka.group.id, true names a group of the query's own as Spark names its groups.
    spark_named = parse(True, subscribe="a", commitOffsetsToGroup="true").commit_group
    assert re.fullmatch(r"spark-kafka-source-[0-9a-f-]{36}", spark_named or "")
    assert parse(True, subscribe="a", commitOffsetsToGroup="true").commit_group != spark_named
    prefixed = parse(True, subscribe="a", commitOffsetsToGroup="true", groupIdPrefix="team-x")
    assert re.fullmatch(r"team-x-[0-9a-f-]{36}", prefixed.commit_group or "")
    both = {"kafka.group.id": "g1", "groupIdPrefix": "team-x"}
    assert parse(True, subscribe="a", commitOffsetsToGroup="true", **both).commit_group == "g1"
    with pytest.raises(ValueError, match="'groupIdPrefix' is empty"):
        parse(True, subscribe="a", commitOffsetsToGroup="true", groupIdPrefix=" ")
    with pytest.raises(ValueError, match="'commitOffsetsToGroup' is empty"):
        parse(True, subscribe="a", commitOffsetsToGroup="  ")


def test_a_json_value_format_and_the_schema_it_makes() -> None:
    pytest.importorskip("pyarrow")
    from ferrokafka.spark.schema import KAFKA_SCHEMA, spark_schema

    opts = parse(subscribe="t", valueFormat="JSON", valueSchema="id BIGINT, tags ARRAY<STRING>")
    fmt = opts.value_format
    assert fmt is not None and (fmt.mode, fmt.corrupt_column) == ("PERMISSIVE", "_corrupt_record")
    assert opts.fetch.value_format == fmt
    assert (
        spark_schema(False, None, fmt)
        == KAFKA_SCHEMA.replace("value binary", "value struct<id BIGINT, tags ARRAY<STRING>>")
        + ", `_corrupt_record` string"
    )
    failfast = parse(subscribe="t", valueFormat="json", valueSchema="id INT", mode="failfast")
    assert failfast.value_format is not None
    assert "_corrupt_record" not in spark_schema(True, None, failfast.value_format)
    assert parse(subscribe="t").value_format is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"valueFormat": "protobuf"}, "Invalid value 'protobuf' for option 'valueFormat'"),
        ({"valueFormat": "json"}, "needs the option 'valueSchema'"),
        ({"valueFormat": "avro"}, "needs the option 'valueSchema' \\(an Avro schema"),
        ({"valueFormat": "avro", "valueSchema": "id INT"}, "not an Avro schema"),
        ({"valueFormat": "avro", "valueSchema": '"long"'}, "not a record"),
        ({"valueSchema": "id INT"}, "'valueschema' needs valueFormat=json"),
        ({"valueFormat": "json", "valueSchema": "id INT", "mode": "DROP"}, "mode must be one of"),
        ({"valueFormat": "json", "valueSchema": "id INTERVAL"}, "INTERVAL is not a type"),
        (
            {"valueFormat": "json", "valueSchema": "id INT", "columnNameOfCorruptRecord": "offset"},
            "is a column of the Kafka schema",
        ),
    ],
)
def test_value_format_options_are_checked_on_the_driver(
    options: dict[str, str], message: str
) -> None:
    pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match=message):
        parse(subscribe="t", **options)


_AVRO = '{"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}'


def test_key_formats_make_the_key_a_struct_with_a_corrupt_column_of_its_own() -> None:
    pytest.importorskip("pyarrow")
    from ferrokafka.spark.schema import KAFKA_SCHEMA, spark_schema

    opts = parse(
        subscribe="t",
        keyFormat="json",
        keySchema="k STRING",
        keyColumnNameOfCorruptRecord="_corrupt_key",
        valueFormat="avro",
        valueSchema=_AVRO,
    )
    key, value = opts.key_format, opts.value_format
    assert key is not None and value is not None
    assert (key.column, key.kind, key.corrupt_column) == ("key", "json", "_corrupt_key")
    assert (opts.fetch.key_format, opts.fetch.value_format) == (key, value)
    assert spark_schema(False, key, value) == (
        KAFKA_SCHEMA.replace("key binary", "key struct<k STRING>").replace(
            "value binary", "value struct<`id` BIGINT>"
        )
        + ", `_corrupt_key` string, `_corrupt_record` binary"
    )
    only_key = parse(subscribe="t", keyFormat="json", keySchema="k STRING", mode="FAILFAST")
    assert only_key.value_format is None and only_key.key_format is not None
    assert spark_schema(False, only_key.key_format, None) == KAFKA_SCHEMA.replace(
        "key binary", "key struct<k STRING>"
    )
    # FAILFAST keeps no corrupt-record column: the two names may then be the same.
    parse(
        subscribe="t", keyFormat="json", keySchema="k INT", valueFormat="json",
        valueSchema="v INT", mode="FAILFAST",
    )  # fmt: skip


def test_a_registry_gives_confluent_framing_and_the_value_schema_is_the_reader() -> None:
    pytest.importorskip("pyarrow")
    from ferrokafka.formats import AvroFormat

    opts = parse(
        subscribe="t",
        valueFormat="avro",
        valueSchema=_AVRO,
        schemaRegistryAddress="http://user:secret@registry:8081",
        schemaRegistryTimeoutMs="2500",
    )
    value = opts.value_format
    assert value is not None and value.confluent
    assert "secret" not in repr(opts) and "secret" not in repr(value)
    fmt = value.payload_format()
    assert isinstance(fmt, AvroFormat) and fmt.confluent and fmt.reader_schema == _AVRO
    assert fmt.registry is not None and fmt.registry.timeout == 2.5
    assert fmt.registry.url == "http://registry:8081"
    assert value.payload_format() is fmt  # one per process: schemas fetched once
    inline = parse(
        subscribe="t",
        valueFormat="avro",
        valueSchema=_AVRO,
        avroSchemasById='{"7": {"type": "record", "name": "R", "fields": '
        '[{"name": "id", "type": "int"}]}}',
    ).value_format
    assert inline is not None and inline.registry is None
    assert [schema_id for schema_id, _ in inline.schemas_by_id] == [7]
    assert inline.payload_format().decode(pa_binary([b"\x00\x00\x00\x00\x07\x02"]))[
        0
    ].to_pylist() == [{"id": 1}]
    # Keys framed too when the registry is given: Confluent's serializers frame both.
    both = parse(
        subscribe="t",
        keyFormat="avro",
        keySchema=_AVRO,
        keyColumnNameOfCorruptRecord="_bad_key",
        valueFormat="json",
        valueSchema="v INT",
        schemaRegistryAddress="https://registry",
    )
    assert both.key_format is not None and both.key_format.confluent
    assert both.value_format is not None and not both.value_format.confluent


def pa_binary(values: list[bytes]) -> Any:
    import pyarrow as pa

    return pa.array(values, pa.binary())


_REG = {"schemaRegistryAddress": "http://registry:8081"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"keyFormat": "xml"}, "Invalid value 'xml' for option 'keyFormat'"),
        ({"keyFormat": "json"}, "keyFormat=json needs the option 'keySchema'"),
        ({"keySchema": "k INT"}, "'keyschema' needs keyFormat=json or avro"),
        (
            {"keyColumnNameOfCorruptRecord": "_k"},
            "'keycolumnnameofcorruptrecord' needs keyFormat",
        ),
        ({"mode": "FAILFAST"}, "option 'mode' needs keyFormat or valueFormat"),
        (
            {
                "keyFormat": "json",
                "keySchema": "k INT",
                "valueFormat": "json",
                "valueSchema": "v INT",
            },
            "both keep malformed records in '_corrupt_record'",
        ),
        (
            {"keyFormat": "json", "keySchema": "k INT", "keyColumnNameOfCorruptRecord": "key"},
            "keyColumnNameOfCorruptRecord 'key' is a column of the Kafka schema",
        ),
        (_REG, "'schemaRegistryAddress' needs keyFormat=avro or valueFormat=avro"),
        (
            {**_REG, "valueFormat": "json", "valueSchema": "v INT"},
            "'schemaRegistryAddress' needs keyFormat=avro or valueFormat=avro",
        ),
        ({"avroSchemasById": "{}"}, "'avroSchemasById' needs keyFormat=avro"),
        ({**_REG, "valueFormat": "avro"}, "needs the option 'valueSchema': the reader schema"),
        (
            {"valueFormat": "avro", "avroSchemasById": f'{{"1": {_AVRO}}}'},
            "needs the option 'valueSchema': the reader schema",
        ),
        (
            {"schemaRegistryAddress": "registry:8081", "valueFormat": "avro", "valueSchema": _AVRO},
            "'schemaRegistryAddress' must be an http\\(s\\) URL",
        ),
        (
            {"schemaRegistryTimeoutMs": "100", "valueFormat": "avro", "valueSchema": _AVRO},
            "'schemaRegistryTimeoutMs' needs 'schemaRegistryAddress'",
        ),
        (
            {**_REG, "schemaRegistryTimeoutMs": "0", "valueFormat": "avro", "valueSchema": _AVRO},
            "Invalid value '0' for option 'schemaRegistryTimeoutMs'",
        ),
        (
            {"valueFormat": "avro", "valueSchema": _AVRO, "avroSchemasById": "[1]"},
            "'avroSchemasById' must be a JSON object of schema ids",
        ),
        (
            {"valueFormat": "avro", "valueSchema": _AVRO, "avroSchemasById": '{"x": "1"}'},
            "'x' is not a schema id",
        ),
        (
            {"valueFormat": "avro", "valueSchema": _AVRO, "avroSchemasById": '{"1": "nope"}'},
            "option 'avroSchemasById', schema id 1: not an Avro schema",
        ),
        (
            {"valueFormat": "avro", "valueSchema": '{"type": "record"}', **_REG},
            "option 'valueSchema': not an Avro schema",
        ),
        *(
            (
                {name: "http://registry:8081", "valueFormat": "avro", "valueSchema": _AVRO},
                f"option '{name.lower()}' is not read: give the Schema Registry's address as "
                "'schemaRegistryAddress'",
            )
            for name in ("schemaRegistryUrl", "schema.registry.url", "kafka.schema.registry.url")
        ),
    ],
)
def test_key_and_registry_options_are_checked_on_the_driver(
    options: dict[str, str], message: str
) -> None:
    pytest.importorskip("pyarrow")
    with pytest.raises(ValueError, match=message):
        parse(subscribe="t", **options)
    with pytest.raises(ValueError, match=message):
        parse(True, subscribe="t", **options)
