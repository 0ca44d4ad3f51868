"""The client configurations: every check, the defaults against the public signatures, and
each client handing its one config down."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import ssl
from typing import Any

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer
from ferrokafka.abc import AbstractTokenProvider
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.client import AIOKafkaClient
from ferrokafka.config import AdminConfig, ConnectionConfig, ConsumerConfig, ProducerConfig
from ferrokafka.config.producer import DEFAULT_ACKS, DEFAULT_PARTITIONER
from ferrokafka.consumer.fetcher import Fetcher
from ferrokafka.consumer.group.assignors.range import RangePartitionAssignor

SASL_USER = {"sasl_plain_username": "alice", "sasl_plain_password": "hunter2"}

# One wrong value per checked option: (config, option, value). A new checked option without a
# line here fails test_every_checked_option_has_a_case.
BAD_VALUES: list[tuple[type[ConnectionConfig], str, Any]] = [
    (ConnectionConfig, "bootstrap_servers", "a:x"),
    (ConnectionConfig, "bootstrap_servers", []),
    (ConnectionConfig, "metadata_max_age_ms", 0),
    (ConnectionConfig, "request_timeout_ms", 0),
    (ConnectionConfig, "request_timeout_ms", -1),
    (ConnectionConfig, "retry_backoff_ms", -1),
    (ConnectionConfig, "retry_backoff_ms", True),
    (ConnectionConfig, "reconnect_backoff_ms", -1),
    (ConnectionConfig, "reconnect_backoff_max_ms", 1.5),
    (ConnectionConfig, "metadata_recovery_strategy", "REBOOTSTRAP"),
    (ConnectionConfig, "metadata_recovery_rebootstrap_trigger_ms", 0),
    (ConnectionConfig, "connections_max_idle_ms", 0),
    (ConnectionConfig, "connections_max_idle_ms", "9"),
    (ConnectionConfig, "security_protocol", "SASL_KERBEROS"),
    (ConnectionConfig, "security_protocol", "CARRIER_PIGEON"),
    (ConnectionConfig, "sasl_mechanism", "SCRAM-SHA-1"),
    (ConnectionConfig, "sasl_mechanism", "plain"),
    (ConnectionConfig, "sasl_plain_username", 5),
    (ConnectionConfig, "sasl_plain_password", b"hunter2"),
    (ConnectionConfig, "sasl_oauth_token_provider", "a token"),
    (ConnectionConfig, "api_version", (0, 10)),
    (ConnectionConfig, "tcp_keepalive", 1),
    (ConnectionConfig, "allow_auto_create_topics", "yes"),
    (ConsumerConfig, "key_deserializer", "not callable"),
    (ConsumerConfig, "value_deserializer", 5),
    (ConsumerConfig, "fetch_max_wait_ms", "500"),
    (ConsumerConfig, "fetch_max_bytes", 0),
    (ConsumerConfig, "fetch_min_bytes", -1),
    (ConsumerConfig, "max_partition_fetch_bytes", -1),
    (ConsumerConfig, "auto_offset_reset", "sometimes"),
    (ConsumerConfig, "enable_auto_commit", 0),
    (ConsumerConfig, "auto_commit_interval_ms", 0),
    (ConsumerConfig, "check_crcs", "false"),
    (ConsumerConfig, "partition_assignment_strategy", ()),
    (ConsumerConfig, "max_poll_interval_ms", 0),
    (ConsumerConfig, "rebalance_timeout_ms", 0),
    (ConsumerConfig, "session_timeout_ms", True),
    (ConsumerConfig, "heartbeat_interval_ms", 0),
    (ConsumerConfig, "consumer_timeout_ms", -1),
    (ConsumerConfig, "max_poll_records", 0),
    (ConsumerConfig, "exclude_internal_topics", None),
    (ConsumerConfig, "isolation_level", "dirty"),
    (ConsumerConfig, "client_rack", 3),
    (ConsumerConfig, "group_protocol", "modern"),
    (ConsumerConfig, "group_remote_assignor", ""),
    (ConsumerConfig, "allow_auto_create_topics", "yes"),
    (ProducerConfig, "acks", 2),
    (ProducerConfig, "acks", "none"),
    (ProducerConfig, "acks", True),
    (ProducerConfig, "key_serializer", 42),
    (ProducerConfig, "value_serializer", "json"),
    (ProducerConfig, "compression_type", "brotli"),
    (ProducerConfig, "max_batch_size", 0),
    (ProducerConfig, "partitioner", "murmur2"),
    (ProducerConfig, "max_request_size", -1),
    (ProducerConfig, "linger_ms", -5),
    (ProducerConfig, "enable_idempotence", "yes"),
    (ProducerConfig, "transactional_id", ""),
    (ProducerConfig, "transactional_id", b"tx"),
    (ProducerConfig, "transaction_timeout_ms", 0),
    (ProducerConfig, "allow_auto_create_topics", None),
]


@pytest.mark.parametrize(("config", "option", "value"), BAD_VALUES)
def test_a_wrong_value_raises_value_error_naming_the_option(
    config: type[ConnectionConfig], option: str, value: Any
) -> None:
    with pytest.raises(ValueError, match=option):
        config(**{option: value})


def test_every_checked_option_has_a_case() -> None:
    covered = {(config, option) for config, option, _ in BAD_VALUES}
    inherited = ConnectionConfig.__dataclass_fields__
    for config in (ConnectionConfig, ConsumerConfig, ProducerConfig):
        for f in dataclasses.fields(config):
            if f.metadata.get("check") is not None:
                owner = ConnectionConfig if inherited.get(f.name) is f else config
                assert (owner, f.name) in covered, f"{config.__name__}.{f.name}"


@pytest.mark.parametrize(
    ("config", "options", "match"),
    [
        (ConnectionConfig, {"security_protocol": "SSL"}, "`ssl_context` is mandatory"),
        (
            ConnectionConfig,
            {**SASL_USER, "security_protocol": "SASL_SSL"},
            r"`ssl_context` is mandatory .* \(it is 'SASL_SSL'\)",
        ),
        (
            ConnectionConfig,
            {
                "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "GSSAPI",
                "sasl_kerberos_service_name": "",
            },
            "sasl_kerberos_service_name must be a non-empty name",
        ),
        (
            ConnectionConfig,
            {**SASL_USER, "security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "OAUTHBEARER"},
            "sasl_oauth_token_provider needs to be provided implementing "
            "ferrokafka.abc.AbstractTokenProvider",
        ),
        (
            ConnectionConfig,
            {"security_protocol": "SASL_PLAINTEXT", "sasl_plain_username": "alice"},
            "sasl_plain_username and sasl_plain_password required for PLAIN sasl",
        ),
        (
            ConnectionConfig,
            {
                "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_plain_password": "x",
            },
            "sasl_plain_username and sasl_plain_password required for SCRAM-SHA-512 sasl",
        ),
        (
            ConnectionConfig,
            {**SASL_USER, "security_protocol": "SASL_PLAINTEXT", "sasl_plain_password": "a\0b"},
            "cannot contain a NUL character with PLAIN sasl",
        ),
        (
            ConsumerConfig,
            {"heartbeat_interval_ms": 10000, "session_timeout_ms": 10000},
            r"heartbeat_interval_ms \(10000\) must be lower than session_timeout_ms",
        ),
        (ConsumerConfig, {"group_remote_assignor": "uniform"}, "group_protocol='consumer'"),
        (ConsumerConfig, {"group_instance_id": "i-1"}, "group_instance_id needs a group_id"),
        (ProducerConfig, {"enable_idempotence": True, "acks": 1}, "enable_idempotence"),
        (ProducerConfig, {"transactional_id": "tx", "acks": 0}, "acks=0"),
    ],
)
def test_options_checked_together(
    config: type[ConnectionConfig], options: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        config(**options)


# Every argument error whose aiokafka message names the option in backquotes (the checks of
# aiokafka 0.14's client, consumer and producer constructors, and getmany's max_records), with
# values both clients refuse: ferrokafka's message starts with aiokafka's words, as code may
# match on them, and goes on with its own detail. (aiokafka's sasl_mechanism error names the
# mechanisms in backquotes, not the option.)
AIOKAFKA_WORDED: list[tuple[str, str, dict[str, Any]]] = [
    ("AIOKafkaConsumer", "", {"security_protocol": "CARRIER_PIGEON"}),
    ("AIOKafkaProducer", "", {"security_protocol": "ssl"}),
    ("admin.AIOKafkaAdminClient", "", {"security_protocol": "SASL"}),
    ("AIOKafkaConsumer", "", {"security_protocol": "SSL"}),
    ("AIOKafkaProducer", "", {"security_protocol": "SASL_SSL", **SASL_USER}),
    ("admin.AIOKafkaAdminClient", "", {"security_protocol": "SSL"}),
    ("AIOKafkaConsumer", "", {"max_poll_records": 0}),
    ("AIOKafkaConsumer", "", {"max_poll_records": "10"}),
    ("AIOKafkaConsumer", "getmany", {"max_records": 0}),
    ("AIOKafkaConsumer", "getmany", {"max_records": -3}),
    ("AIOKafkaConsumer", "getmany", {"max_records": 2.5}),
]


async def _refusal(package: str, client: str, method: str, options: dict[str, Any]) -> str:
    """The message of the ``ValueError`` that ``package``'s ``client`` (its constructor, or
    with ``method`` that method of a consumer never started) raises for ``options``."""
    module, _, name = client.rpartition(".")
    cls = getattr(importlib.import_module(".".join(filter(None, (package, module)))), name)
    with pytest.raises(ValueError) as raised:
        if not method:
            cls(**options)
        else:
            consumer = cls()
            try:
                await getattr(consumer, method)(**options)
            finally:
                await consumer.stop()
    return str(raised.value)


@pytest.mark.parametrize(
    ("client", "method", "options"),
    AIOKAFKA_WORDED,
    ids=[f"{c}{'.' + m if m else ''}-{o}" for c, m, o in AIOKAFKA_WORDED],
)
async def test_argument_errors_start_with_aiokafkas_words(
    client: str, method: str, options: dict[str, Any]
) -> None:
    pytest.importorskip("aiokafka")
    theirs = await _refusal("aiokafka", client, method, options)  # (needs a running loop)
    assert re.search(r"`\w+`", theirs), theirs
    ours = await _refusal("ferrokafka", client, method, options)
    assert ours.startswith(theirs) and len(ours) > len(theirs), (theirs, ours)


def test_the_configs_are_frozen() -> None:
    for config in (ConnectionConfig(), ConsumerConfig(), ProducerConfig(), AdminConfig()):
        with pytest.raises(dataclasses.FrozenInstanceError):
            config.request_timeout_ms = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        ConsumerConfig(fetch_max_wait=5)  # type: ignore[call-arg]


def test_stored_forms() -> None:
    config = ConsumerConfig(
        bootstrap_servers=["a:1", "b"], partition_assignment_strategy=[RangePartitionAssignor]
    )
    assert config.bootstrap_servers == ("a:1", "b")
    assert config.bootstrap_addresses == (("a", 1), ("b", 9092))
    assert config.partition_assignment_strategy == (RangePartitionAssignor,)
    # enable_auto_commit is kept as given; auto_commit also needs a group.
    assert config.enable_auto_commit and not config.auto_commit
    assert ConsumerConfig(group_id="g").auto_commit
    assert not ConsumerConfig(group_id="g", enable_auto_commit=False).auto_commit
    assert ConsumerConfig(isolation_level="read_committed").read_committed
    assert ProducerConfig().acks == 1
    assert ProducerConfig(acks="all").acks == -1
    assert ProducerConfig(acks=0).acks == 0
    assert ProducerConfig(enable_idempotence=True).acks == -1
    tx = ProducerConfig(transactional_id="tx")
    assert tx.enable_idempotence and tx.acks == -1
    context = ssl.create_default_context()
    assert ConnectionConfig(security_protocol="SSL", ssl_context=context).ssl_context is context


def test_a_password_stays_out_of_the_repr() -> None:
    assert "hunter2" not in repr(ConsumerConfig(sasl_plain_password="hunter2"))
    config = ProducerConfig(security_protocol="SASL_PLAINTEXT", **SASL_USER)
    assert "hunter2" not in repr(config) and "hunter2" not in str(config)
    assert "alice" in repr(config)


def test_a_wrong_password_type_is_not_echoed() -> None:
    with pytest.raises(ValueError, match="sasl_plain_password must be a str") as info:
        ConnectionConfig(sasl_plain_password=b"hunter2")  # type: ignore[arg-type]
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_configs(mechanism: str) -> None:
    plain = ConnectionConfig(
        security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism, **SASL_USER
    )
    assert plain.uses_sasl and not plain.uses_tls
    context = ssl.create_default_context()
    over_tls = ConnectionConfig(
        security_protocol="SASL_SSL", sasl_mechanism=mechanism, ssl_context=context, **SASL_USER
    )
    assert over_tls.uses_sasl and over_tls.uses_tls and over_tls.ssl_context is context
    # Without SASL the mechanism and credentials are not needed (as in aiokafka).
    assert not ConnectionConfig(sasl_mechanism="GSSAPI").uses_sasl
    assert ConnectionConfig(security_protocol="SSL", ssl_context=context).uses_tls


class _Tokens(AbstractTokenProvider):
    async def token(self) -> str:
        return "t"


def test_oauthbearer_configs() -> None:
    provider = _Tokens()
    config = ConnectionConfig(
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=provider,
    )
    assert config.uses_sasl and config.sasl_oauth_token_provider is provider

    class AiokafkaShaped:  # aiokafka's own AbstractTokenProvider subclasses, say
        async def token(self) -> str:
            return "t"

    ConnectionConfig(
        security_protocol="SASL_SSL",
        ssl_context=ssl.create_default_context(),
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=AiokafkaShaped(),  # type: ignore[arg-type]
    )
    with pytest.raises(ValueError, match="got a str"):
        ConnectionConfig(sasl_oauth_token_provider="secret-token")  # type: ignore[arg-type]


def _signature_defaults(cls: type) -> dict[str, Any]:
    return {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if name not in ("self", "topics", "loop")
    }


def _config_defaults(config: type[ConnectionConfig]) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(config) if f.init}


# Options of the configs that no aiokafka constructor takes.
_CLIENT_ONLY = {
    "reconnect_backoff_ms",
    "reconnect_backoff_max_ms",
    "tcp_keepalive",
    "metadata_recovery_strategy",
    "metadata_recovery_rebootstrap_trigger_ms",
}


@pytest.mark.parametrize(
    ("client", "config", "extra"),
    [
        (AIOKafkaConsumer, ConsumerConfig, _CLIENT_ONLY),
        (AIOKafkaProducer, ProducerConfig, _CLIENT_ONLY | {"allow_auto_create_topics"}),
        (AIOKafkaAdminClient, AdminConfig, _CLIENT_ONLY | {"allow_auto_create_topics"}),
    ],
)
def test_every_keyword_is_a_field_with_the_same_default(
    client: type, config: type[ConnectionConfig], extra: set[str]
) -> None:
    signature = _signature_defaults(client)
    fields = _config_defaults(config)
    assert set(fields) - set(signature) == extra
    assert set(signature) <= set(fields)
    for name, default in signature.items():
        assert fields[name] is default or fields[name] == default, name


def test_the_defaults_are_aiokafkas() -> None:
    aiokafka = pytest.importorskip("aiokafka")
    from aiokafka.admin import AIOKafkaAdminClient as AioAdmin

    # ferrokafka names its clients, and defaults to aiokafka's assignor without importing it.
    differ = {"client_id", "partition_assignment_strategy", "acks", "partitioner"}
    for theirs, config in (
        (aiokafka.AIOKafkaConsumer, ConsumerConfig),
        (aiokafka.AIOKafkaProducer, ProducerConfig),
        (AioAdmin, AdminConfig),
    ):
        ours = _config_defaults(config)
        for name, default in _signature_defaults(theirs).items():
            if name not in differ:
                assert ours[name] == default, (config.__name__, name)
    assert _config_defaults(ProducerConfig)["acks"] is DEFAULT_ACKS
    assert _config_defaults(ProducerConfig)["partitioner"] is DEFAULT_PARTITIONER


def test_each_client_hands_its_config_down() -> None:
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers="localhost:1", fetch_max_wait_ms=7, request_timeout_ms=1234
    )
    config = consumer._config
    assert isinstance(config, ConsumerConfig)
    assert config.fetch_max_wait_ms == 7 and config.request_timeout_ms == 1234
    assert consumer._client.config is config
    fetcher = Fetcher(consumer._client, consumer._subscription, config)
    assert fetcher._max_wait_ms == 7 and fetcher._positions._request_timeout_ms == 1234

    producer = AIOKafkaProducer(bootstrap_servers="localhost:1", linger_ms=5, max_request_size=99)
    assert isinstance(producer._config, ProducerConfig)
    assert producer.client.config is producer._config
    assert producer._sender._max_request_size == 99
    assert producer._message_accumulator._linger == 0.005

    admin = AIOKafkaAdminClient(bootstrap_servers="localhost:1", retry_backoff_ms=7)
    assert isinstance(admin._config, AdminConfig)
    assert admin.client.config is admin._config
    assert admin._config.retry_backoff_ms == 7


def test_the_client_takes_a_config_or_keywords() -> None:
    config = ConnectionConfig(bootstrap_servers="h:1", request_timeout_ms=5)
    assert AIOKafkaClient(config).config is config
    assert AIOKafkaClient(bootstrap_servers="h:1").config.bootstrap_servers == "h:1"
    with pytest.raises(TypeError, match="not both"):
        AIOKafkaClient(config, request_timeout_ms=5)
