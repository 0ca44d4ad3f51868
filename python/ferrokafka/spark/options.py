"""Spark's Kafka source and sink options, parsed and checked on the driver.

The names and meanings are Spark's own (``spark.read.format("kafka")``), so a job changes only the
format name. Option names are case-insensitive, as in Spark. ``kafka.*`` options are Kafka client
configs (Java names); the ones ferrokafka has are mapped onto its client's keyword arguments, the
ones Spark refuses are refused with Spark's reason, and unknown ones are logged and ignored, as the
Java client does. The security configs (``security.protocol``, ``sasl.*``, ``ssl.*``) are
checked and mapped by :mod:`.security`.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..structs import TopicPartition
from .payloads import ColumnFormat, parse_payload_formats
from .security import is_security_config, reveal, security_options, ssl_context

__all__ = [
    "EARLIEST",
    "LATEST",
    "FetchOptions",
    "OffsetSpec",
    "SinkOptions",
    "SourceOptions",
    "client_kwargs",
    "parse_fetch_options",
    "parse_formats",
    "parse_sink_options",
    "parse_source_options",
]

log = logging.getLogger(__name__)

#: Spark's per-partition offset placeholders in JSON offsets.
EARLIEST = -2
LATEST = -1

# Java client configs -> (ferrokafka keyword, converter).
_INT = int


def _bool(value: str) -> bool:
    lowered = str(value).strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")
    return lowered == "true"


_CLIENT_CONFIGS: dict[str, tuple[str, Any]] = {
    "bootstrap.servers": ("bootstrap_servers", str),
    "client.id": ("client_id", str),
    "request.timeout.ms": ("request_timeout_ms", _INT),
    "retry.backoff.ms": ("retry_backoff_ms", _INT),
    "metadata.max.age.ms": ("metadata_max_age_ms", _INT),
    "connections.max.idle.ms": ("connections_max_idle_ms", _INT),
    "fetch.max.wait.ms": ("fetch_max_wait_ms", _INT),
    "fetch.min.bytes": ("fetch_min_bytes", _INT),
    "fetch.max.bytes": ("fetch_max_bytes", _INT),
    "max.partition.fetch.bytes": ("max_partition_fetch_bytes", _INT),
    "check.crcs": ("check_crcs", _bool),
    "isolation.level": ("isolation_level", str),
    "client.rack": ("client_rack", str),
}
# Producer-only configs for the sink.
_PRODUCER_CONFIGS: dict[str, tuple[str, Any]] = {
    "acks": ("acks", lambda v: v if v == "all" else int(v)),
    "compression.type": ("compression_type", lambda v: None if v == "none" else v),
    "linger.ms": ("linger_ms", _INT),
    "batch.size": ("max_batch_size", _INT),
    "max.request.size": ("max_request_size", _INT),
    "enable.idempotence": ("enable_idempotence", _bool),
    "transactional.id": ("transactional_id", str),
}
# Configs Spark sets itself and refuses from the user, with Spark's reason.
_SOURCE_REFUSED = {
    "auto.offset.reset": "Kafka option 'auto.offset.reset' is not supported. Instead set the "
    "source option 'startingoffsets' to 'earliest' or 'latest' to specify where to start. "
    "Structured Streaming manages which offsets are consumed internally, rather than relying "
    "on the kafkaConsumer to do it. This will ensure that no data is missed when new "
    "topics/partitions are dynamically subscribed. Note that 'startingoffsets' only applies "
    "when a new Streaming query is started, and that resuming will always pick up from where "
    "the query left off. See the docs for more details.",
    "key.deserializer": "Kafka option 'key.deserializer' is not supported as keys are "
    "deserialized as byte arrays with ByteArrayDeserializer. Use DataFrame operations to "
    "explicitly deserialize the keys.",
    "value.deserializer": "Kafka option 'value.deserializer' is not supported as values are "
    "deserialized as byte arrays with ByteArrayDeserializer. Use DataFrame operations to "
    "explicitly deserialize the values.",
    "enable.auto.commit": "Kafka option 'enable.auto.commit' is not supported",
    "interceptor.classes": "Kafka option 'interceptor.classes' is not supported",
}
_SINK_REFUSED = {
    "key.serializer": "Kafka option 'key.serializer' is not supported as keys are serialized "
    "with ByteArraySerializer.",
    "value.serializer": "Kafka option 'value.serializer' is not supported as value are "
    "serialized with ByteArraySerializer.",
}
# Known Kafka configs that have no effect here (a group is never joined: Spark plans offsets).
_IGNORED = {"group.id", "session.timeout.ms", "heartbeat.interval.ms", "max.poll.records"}

_STRATEGIES = ("subscribe", "subscribepattern", "assign")


@dataclass(frozen=True)
class OffsetSpec:
    """Where a range starts or ends: ``kind`` is "earliest", "latest", "offsets" (``offsets``:
    per-partition, -2/-1 meaning earliest/latest), "timestamp" (one ``timestamp`` for every
    partition) or "timestamps" (per-partition)."""

    kind: str
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    timestamp: int | None = None


def parse_formats(options: Mapping[str, Any]) -> tuple[ColumnFormat | None, ColumnFormat | None]:
    """The read's key and value formats (``keyFormat``, ``valueFormat`` and the options that
    go with them, see :mod:`.payloads`); None for a binary column."""
    return parse_payload_formats(_lower(options))


@dataclass(frozen=True)
class FetchOptions:
    """What an executor needs to read offset ranges."""

    client: Mapping[str, Any]
    ssl: Mapping[str, Any]
    include_headers: bool = False
    fail_on_data_loss: bool = True
    poll_timeout_ms: int = 120_000
    key_format: ColumnFormat | None = None
    value_format: ColumnFormat | None = None


@dataclass(frozen=True)
class SourceOptions:
    """The parsed options of a Kafka read."""

    client: Mapping[str, Any]
    ssl: Mapping[str, Any]
    subscribe: tuple[str, ...] | None
    subscribe_pattern: str | None
    assign: tuple[TopicPartition, ...] | None
    starting: OffsetSpec
    ending: OffsetSpec
    timestamp_strategy: str
    fail_on_data_loss: bool
    include_headers: bool
    min_partitions: int | None
    max_records_per_partition: int | None
    poll_timeout_ms: int
    max_offsets_per_trigger: int | None
    min_offsets_per_trigger: int | None
    max_trigger_delay_ms: int
    #: The consumer group a streaming read commits each micro-batch's end offsets to, after
    #: Spark's checkpoint has them (``commitOffsetsToGroup``); None: no commits.
    commit_group: str | None = None
    key_format: ColumnFormat | None = None
    value_format: ColumnFormat | None = None

    @property
    def fetch(self) -> FetchOptions:
        return FetchOptions(
            self.client,
            self.ssl,
            self.include_headers,
            self.fail_on_data_loss,
            self.poll_timeout_ms,
            self.key_format,
            self.value_format,
        )

    @property
    def strategy(self) -> str:
        if self.assign is not None:
            return f"Assign[{', '.join(map(_tp_text, self.assign))}]"
        if self.subscribe is not None:
            return f"Subscribe[{', '.join(self.subscribe)}]"
        return f"SubscribePattern[{self.subscribe_pattern}]"


@dataclass(frozen=True)
class SinkOptions:
    """The parsed options of a Kafka write."""

    client: Mapping[str, Any]
    ssl: Mapping[str, Any]
    producer: Mapping[str, Any]
    topic: str | None


def _tp_text(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"


def _lower(options: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in options.items():
        if value is None:
            continue
        out[str(key).lower()] = value if isinstance(value, str) else _spark_text(value)
    return out


def _spark_text(value: Any) -> str:
    """Spark's option values are strings: ``option("x", True)`` becomes "true"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _split_kafka(
    options: Mapping[str, str], refused: Mapping[str, str], extra: Mapping[str, tuple[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    client: dict[str, Any] = {}
    security: dict[str, str] = {}
    producer: dict[str, Any] = {}
    for key, value in options.items():
        if not key.startswith("kafka."):
            continue
        name = key[len("kafka.") :]
        if name in refused:
            raise ValueError(refused[name])
        if name in _CLIENT_CONFIGS:
            target, convert = _CLIENT_CONFIGS[name]
            client[target] = _convert(key, value, convert)
        elif name in extra:
            target, convert = extra[name]
            producer[target] = _convert(key, value, convert)
        elif is_security_config(name):
            security[name] = value
        elif name in _IGNORED:
            log.debug("Kafka option %r has no effect in ferrokafka's reader", key)
        else:
            log.warning("The configuration %r was supplied but isn't a known config.", name)
    if "bootstrap_servers" not in client:
        raise ValueError(
            "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"
        )
    secured, ssl = security_options(security)
    client.update(secured)
    return client, ssl, producer


def _convert(key: str, value: str, convert: Any) -> Any:
    try:
        return convert(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Invalid value {value!r} for option {key!r}: {exc}") from None


def _positive(options: Mapping[str, str], name: str) -> int | None:
    raw = options.get(name.lower())
    if raw is None:
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError(f'For input string: "{raw}" (option {name})') from None
    if value <= 0:
        # Spark names some options by their lower-case key here.
        shown = name if name == "minPartitions" else name.lower()
        raise ValueError(f"{shown} must be positive")
    return value


def _flag(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name.lower())
    if raw is None:
        return default
    try:
        return _bool(raw)
    except ValueError:
        if name == "includeHeaders":
            raise ValueError(f"{raw} is not a boolean string.") from None
        raise ValueError(f'For input string: "{raw}" (option {name})') from None


def _json(raw: str, option: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise ValueError(
            f'Expected e.g. {{"topicA":{{"0":23,"1":-1}},"topicB":{{"0":-2}}}}, '
            f"got {raw} (option {option!r})"
        ) from None


def _partition_map(raw: str, option: str) -> dict[TopicPartition, int]:
    parsed = _json(raw, option)
    out: dict[TopicPartition, int] = {}
    if not isinstance(parsed, dict):
        raise ValueError(
            f'Expected e.g. {{"topicA":{{"0":23,"1":-1}},"topicB":{{"0":-2}}}}, '
            f"got {raw} (option {option!r})"
        )
    for topic, parts in parsed.items():
        if not isinstance(parts, dict):
            raise ValueError(
                f'Expected e.g. {{"topicA":{{"0":23,"1":-1}},"topicB":{{"0":-2}}}}, '
                f"got {raw} (option {option!r})"
            )
        for partition, value in parts.items():
            try:
                tp = TopicPartition(topic, int(partition))
            except ValueError:
                raise ValueError(
                    f"Invalid partition {partition!r} of topic {topic!r} in option {option!r}"
                ) from None
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(
                    f"Invalid offset {value!r} for {_tp_text(tp)} in option {option!r}"
                )
            out[tp] = value
    return out


def _assign(raw: str) -> tuple[TopicPartition, ...]:
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not all(
        isinstance(parts, list) and all(isinstance(p, int) for p in parts)
        for parts in parsed.values()
    ):
        raise ValueError(
            f'Expected e.g. {{"topicA":[0,1],"topicB":[0,1]}}, got {raw} (option \'assign\')'
        )
    tps = tuple(TopicPartition(t, p) for t, parts in parsed.items() for p in parts)
    if not tps:
        raise ValueError(
            f"No topicpartitions to assign as specified value for option 'assign' is '{raw}'"
        )
    return tps


def _offset_spec(
    options: Mapping[str, str], which: str, streaming: bool, default: str
) -> OffsetSpec:
    """Spark's precedence: a global timestamp, then per-partition timestamps, then offsets."""
    timestamp = options.get(f"{which}timestamp")
    if timestamp is not None:
        try:
            value = int(timestamp)
        except ValueError:
            raise ValueError(
                f"Expected a single long value, got {timestamp} (option {which}Timestamp)"
            ) from None
        return OffsetSpec("timestamp", timestamp=value)
    by_ts = options.get(f"{which}offsetsbytimestamp")
    if by_ts is not None:
        return OffsetSpec("timestamps", _partition_map(by_ts, f"{which}OffsetsByTimestamp"))
    raw = options.get(f"{which}offsets", default).strip()
    if raw.lower() in ("earliest", "latest"):
        return OffsetSpec(raw.lower())
    return OffsetSpec("offsets", _partition_map(raw, f"{which}Offsets"))


def parse_source_options(options: Mapping[str, Any], *, streaming: bool) -> SourceOptions:
    """Check a read's options as Spark does and parse them; raises ``ValueError`` with Spark's
    wording where Spark has one."""
    opts = _lower(options)
    given = [name for name in _STRATEGIES if name in opts]
    if not given:
        raise ValueError(
            "One of the following options must be specified for Kafka source: subscribe, "
            "subscribepattern, assign. See the docs for more details."
        )
    if len(given) > 1:
        raise ValueError(
            "Only one of the following options can be specified for Kafka source: subscribe, "
            "subscribepattern, assign. See the docs for more details."
        )
    subscribe = pattern = assign = None
    if "subscribe" in opts:
        raw = opts["subscribe"]
        subscribe = tuple(t.strip() for t in raw.split(",") if t.strip())
        if not subscribe:
            raise ValueError(
                f"No topics to subscribe to as specified value for option 'subscribe' is '{raw}'"
            )
    elif "subscribepattern" in opts:
        pattern = opts["subscribepattern"].strip()
        if not pattern:
            raise ValueError(
                "Pattern to subscribe is empty as specified value for option "
                f"'subscribePattern' is '{opts['subscribepattern']}'"
            )
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(
                f"Invalid value {pattern!r} for option 'subscribePattern': {exc}"
            ) from None
    else:
        assign = _assign(opts["assign"])

    client, ssl, _ = _split_kafka(opts, _SOURCE_REFUSED, {})
    starting = _offset_spec(opts, "starting", streaming, "earliest" if not streaming else "latest")
    if streaming:
        ending = OffsetSpec("latest")
        if "endingoffsets" in opts:
            raise ValueError("ending offset not valid in streaming queries")
        if "endingoffsetsbytimestamp" in opts:
            raise ValueError("ending timestamp not valid in streaming queries")
    else:
        ending = _offset_spec(opts, "ending", streaming, "latest")
        if starting.kind == "latest":
            raise ValueError("starting offset can't be latest for batch queries on Kafka")
        if ending.kind == "earliest":
            raise ValueError("ending offset can't be earliest for batch queries on Kafka")
        for tp, off in starting.offsets.items():
            if starting.kind == "offsets" and off == LATEST:
                raise ValueError(
                    f"startingOffsets for {_tp_text(tp)} can't be latest for batch queries on Kafka"
                )
        for tp, off in ending.offsets.items():
            if ending.kind == "offsets" and off == EARLIEST:
                raise ValueError(
                    f"ending offset for {_tp_text(tp)} can't be earliest for batch queries on Kafka"
                )
    if not streaming:
        _check_limits(starting, ending)
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in ("error", "latest"):
        raise ValueError(
            f"No value found for '{strategy.upper()}' (option "
            "startingOffsetsByTimestampStrategy: error or latest)"
        )
    key_format, value_format = parse_payload_formats(opts)
    max_trigger_delay = opts.get("maxtriggerdelay", "15m")
    max_per_trigger = _positive(opts, "maxOffsetsPerTrigger")
    min_per_trigger = _positive(opts, "minOffsetsPerTrigger")
    if max_per_trigger is not None and min_per_trigger is not None:
        if min_per_trigger > max_per_trigger:
            raise ValueError(
                f"The value of minOffsetPerTrigger({min_per_trigger}) is higher than the "
                f"maxOffsetsPerTrigger({max_per_trigger})."
            )
    return SourceOptions(
        client=client,
        ssl=ssl,
        subscribe=subscribe,
        subscribe_pattern=pattern,
        assign=assign,
        starting=starting,
        ending=ending,
        timestamp_strategy=strategy,
        fail_on_data_loss=_flag(opts, "failOnDataLoss", True),
        include_headers=_flag(opts, "includeHeaders", False),
        min_partitions=_positive(opts, "minPartitions"),
        max_records_per_partition=_positive(opts, "maxRecordsPerPartition"),
        poll_timeout_ms=_positive(opts, "kafkaConsumer.pollTimeoutMs") or 120_000,
        max_offsets_per_trigger=max_per_trigger,
        min_offsets_per_trigger=min_per_trigger,
        max_trigger_delay_ms=_duration_ms(max_trigger_delay, "maxTriggerDelay"),
        commit_group=_commit_group(opts),
        key_format=key_format,
        value_format=value_format,
    )


def _commit_group(opts: Mapping[str, str]) -> str | None:
    """``commitOffsetsToGroup``: a group id; ``true`` for the group Spark's source would read
    as: ``kafka.group.id``, or else a group of this query's own named from ``groupIdPrefix``
    (default ``spark-kafka-source``) and a random id, as Spark names its streaming queries'
    groups (a restarted query gets a new one); ``false`` (the default) for none."""
    raw = opts.get("commitoffsetstogroup")
    if raw is None or raw.strip().lower() == "false":
        return None
    group = raw.strip()
    if group.lower() == "true":
        group = opts.get("kafka.group.id", "").strip()
        if not group:
            prefix = opts.get("groupidprefix", "spark-kafka-source").strip()
            if not prefix:
                raise ValueError(
                    "Option 'groupIdPrefix' is empty: give a prefix for the group that "
                    "commitOffsetsToGroup=true commits to, or set kafka.group.id"
                )
            group = f"{prefix}-{uuid.uuid4()}"
    if not group:
        raise ValueError(
            "Option 'commitOffsetsToGroup' is empty: give a consumer group's name, true "
            "(the group of kafka.group.id, or one named from groupIdPrefix) or false"
        )
    return group


def _check_limits(starting: OffsetSpec, ending: OffsetSpec) -> None:
    """Per-partition start and end of a batch read: the same partitions, start <= end."""
    if starting.kind != ending.kind or starting.kind not in ("offsets", "timestamps"):
        return
    if set(starting.offsets) != set(ending.offsets):
        raise ValueError(
            "The specified start offset and end offset should have the same topic-partitions.\n"
            f"Topic-partitions for start offset: {_tps(starting.offsets)}, topic-partitions for "
            f"end offset: {_tps(ending.offsets)}."
        )
    what = "offset" if starting.kind == "offsets" else "timestamp"
    for tp, start in starting.offsets.items():
        end = ending.offsets[tp]
        if start >= 0 and end >= 0 and start > end:
            raise ValueError(
                f"The specified start {what} {start} is greater than the end {what} {end} for "
                f"topic {tp.topic} partition {tp.partition}."
            )


def _tps(tps: Any) -> str:
    return ", ".join(_tp_text(tp) for tp in sorted(tps))


_DURATION = re.compile(r"^\s*(\d+)\s*(ms|s|m|min|h|d)?\s*$", re.IGNORECASE)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def _duration_ms(raw: str, option: str) -> int:
    """Spark's time strings: "15m", "30s", "500ms", a bare number meaning milliseconds."""
    match = _DURATION.match(raw)
    if not match:
        raise ValueError(f"Invalid value '{raw}' for option '{option}': expected e.g. 15m, 30s")
    return int(match.group(1)) * _UNIT_MS[(match.group(2) or "ms").lower()]


def parse_fetch_options(options: Mapping[str, Any]) -> FetchOptions:
    """The options an executor reads ranges with: ``kafka.*``, ``includeHeaders``,
    ``failOnDataLoss``, ``kafkaConsumer.pollTimeoutMs`` and the key and value formats."""
    opts = _lower(options)
    client, ssl, _ = _split_kafka(opts, _SOURCE_REFUSED, {})
    key_format, value_format = parse_payload_formats(opts)
    return FetchOptions(
        client=client,
        ssl=ssl,
        include_headers=_flag(opts, "includeHeaders", False),
        fail_on_data_loss=_flag(opts, "failOnDataLoss", True),
        poll_timeout_ms=_positive(opts, "kafkaConsumer.pollTimeoutMs") or 120_000,
        key_format=key_format,
        value_format=value_format,
    )


def parse_sink_options(options: Mapping[str, Any]) -> SinkOptions:
    """Check a write's options as Spark does and parse them."""
    opts = _lower(options)
    client, ssl, producer = _split_kafka(opts, _SINK_REFUSED, _PRODUCER_CONFIGS)
    for name in ("isolation_level", "fetch_max_wait_ms", "fetch_min_bytes", "fetch_max_bytes"):
        client.pop(name, None)
    topic = opts.get("topic")
    return SinkOptions(client=client, ssl=ssl, producer=producer, topic=topic)


def client_kwargs(client: Mapping[str, Any], ssl: Mapping[str, Any]) -> dict[str, Any]:
    """The client's keyword arguments (secrets revealed), with an ``SSLContext`` made from the
    TLS options when the protocol is ``SSL`` or ``SASL_SSL``."""
    kwargs = {name: reveal(value) for name, value in client.items()}
    if str(kwargs.get("security_protocol", "PLAINTEXT")).upper() in ("SSL", "SASL_SSL"):
        kwargs["ssl_context"] = ssl_context(ssl)
    return kwargs
