"""The admin commands' command lines, parsed without a broker: ``configs``, ``offsets``,
``reassign``, ``log-dirs``, ``features``, ``users``, ``cluster``, ``transactions`` and ``groups
delete-offsets``."""

from __future__ import annotations

import argparse

import pytest
from ferrokafka.admin import (
    AlterConfigOp,
    AlterConfigOpType,
    ConfigResourceType,
    FeatureUpgradeType,
    OffsetSpec,
    ScramMechanism,
    TopicPartitionReplica,
)
from ferrokafka.cli import build_parser, main
from ferrokafka.cli.configs import _resource
from ferrokafka.cli.features import parse_feature, upgrade_type
from ferrokafka.cli.list_offsets import _spec
from ferrokafka.cli.log_dirs import parse_replica
from ferrokafka.cli.names import resolve_names
from ferrokafka.cli.reassign import parse_move, parse_partition
from ferrokafka.cli.users import parse_mechanism
from ferrokafka.structs import TopicPartition


def parse(*argv: str) -> argparse.Namespace:
    return resolve_names(build_parser().parse_args(list(argv)))


def test_configs_alter_collects_each_operation_in_order() -> None:
    args = parse(
        "configs",
        "alter",
        "-t",
        "events",
        "--set",
        "retention.ms=1000",
        "--delete",
        "segment.ms",
        "--append",
        "cleanup.policy=compact",
        "--subtract",
        "cleanup.policy=delete",
        "--validate-only",
    )
    assert args.changes == [
        AlterConfigOp("retention.ms", "1000", AlterConfigOpType.SET),
        AlterConfigOp("segment.ms", None, AlterConfigOpType.DELETE),
        AlterConfigOp("cleanup.policy", "compact", AlterConfigOpType.APPEND),
        AlterConfigOp("cleanup.policy", "delete", AlterConfigOpType.SUBTRACT),
    ]
    assert args.validate_only
    resource = _resource(args)
    assert (resource.resource_type, resource.name) == (ConfigResourceType.TOPIC, "events")


@pytest.mark.parametrize(
    ("flags", "kind", "name"),
    [
        (["--broker", "2"], ConfigResourceType.BROKER, "2"),
        (["--broker-default"], ConfigResourceType.BROKER, ""),
        (["--broker-logger", "1"], ConfigResourceType.BROKER_LOGGER, "1"),
    ],
)
def test_configs_entities(flags: list[str], kind: ConfigResourceType, name: str) -> None:
    resource = _resource(parse("configs", "describe", *flags))
    assert (resource.resource_type, resource.name) == (kind, name)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["configs", "describe"], "one of the arguments -t/--topic --broker"),
        (["configs", "describe", "-t", "x", "--broker", "1"], "not allowed with argument"),
        (["configs", "alter", "-t", "x", "--set", "novalue"], "NAME=VALUE"),
    ],
)
def test_configs_bad_command_lines(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_configs_alter_without_a_change_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Refused before any connection is made.
    assert main(["configs", "alter", "-t", "x", "-b", "127.0.0.1:1"]) == 2
    assert "nothing to change" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "spec"),
    [
        ([], OffsetSpec.latest()),
        (["--earliest"], OffsetSpec.earliest()),
        (["--max-timestamp"], OffsetSpec.max_timestamp()),
        (["--time", "1700000000000"], OffsetSpec.for_timestamp(1_700_000_000_000)),
    ],
)
def test_offsets_spec(flags: list[str], spec: OffsetSpec) -> None:
    args = parse("offsets", "events", "-p", "0", "-p", "2", *flags)
    assert (args.topic, args.partition, _spec(args)) == ("events", [0, 2], spec)


def test_partitions_and_moves() -> None:
    assert parse_partition("my.topic-1:3") == TopicPartition("my.topic-1", 3)
    assert parse_move("events:0=3,1") == (TopicPartition("events", 0), [3, 1])
    for bad in ("events", "events:x", ":1", "events:-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="TOPIC:PARTITION"):
            parse_partition(bad)
    for bad in ("events:0", "events:0=", "events:0=a,b"):
        with pytest.raises(argparse.ArgumentTypeError, match="BROKER"):
            parse_move(bad)
    args = parse("reassign", "move", "a:0=1,2", "b:1=3")
    assert args.moves == [(TopicPartition("a", 0), [1, 2]), (TopicPartition("b", 1), [3])]
    args = parse("reassign", "elect-leaders", "--unclean", "a:0")
    assert (args.unclean, args.partitions) == (True, [TopicPartition("a", 0)])
    assert parse("reassign", "list").partitions == []


def test_transactions_command_lines() -> None:
    args = parse(
        "transactions", "list", "--state", "Ongoing", "--producer-id", "7", "--duration-ms", "5"
    )
    assert (args.state, args.producer_id, args.duration_ms) == (["Ongoing"], [7], 5)
    args = parse("transactions", "abort", "-t", "events", "-p", "1", "--start-offset", "40")
    assert (args.topic, args.partition, args.start_offset) == ("events", 1, 40)
    assert parse("transactions", "fence", "a", "b").transactional_ids == ["a", "b"]
    with pytest.raises(SystemExit):
        parse("transactions", "list", "--state", "Sleeping")


def test_groups_delete_offsets_command_line() -> None:
    args = parse("groups", "delete-offsets", "g1", "-t", "events", "--topic", "other:2")
    assert (args.group, args.offsets_of) == ("g1", ["events", "other:2"])


def test_quotas_entities_and_changes() -> None:
    from ferrokafka.cli.quotas import _entity

    args = parse(
        "quotas",
        "alter",
        "--user",
        "alice",
        "--client-id-default",
        "--set",
        "request_percentage=25",
    )
    assert _entity(args) == {"user": "alice", "client-id": None}
    assert (args.values, args.remove) == ([("request_percentage", 25.0)], [])
    assert _entity(parse("quotas", "describe")) == {}
    assert _entity(parse("quotas", "describe", "--ip", "10.0.0.1")) == {"ip": "10.0.0.1"}
    with pytest.raises(SystemExit):
        parse("quotas", "alter", "--user", "a", "--set", "producer_byte_rate=fast")
    with pytest.raises(SystemExit):
        parse("quotas", "alter", "--user", "a", "--user-default")


def test_log_dirs_command_lines() -> None:
    assert parse_replica("my.topic-1:3:2=/data/b=x:y") == (
        TopicPartitionReplica("my.topic-1", 3, 2),
        "/data/b=x:y",
    )
    for bad in ("events:0=/d", "events:0:2", "events:0:2=", "events:x:2=/d", ":0:2=/d", "0:2=/d"):
        with pytest.raises(argparse.ArgumentTypeError, match="TOPIC:PARTITION:BROKER=PATH"):
            parse_replica(bad)
    args = parse("log-dirs", "move", "--replica", "a:0:1=/d1", "--replica", "b:2:3=/d2")
    assert args.replicas == [
        (TopicPartitionReplica("a", 0, 1), "/d1"),
        (TopicPartitionReplica("b", 2, 3), "/d2"),
    ]
    args = parse("log-dirs", "describe", "--broker", "1", "--broker", "3", "a", "-t", "b")
    assert (args.brokers, args.topics) == ([1, 3], ["a", "b"])
    assert (parse("log-dirs", "describe").brokers, parse("log-dirs", "describe").topics) == ([], [])
    for argv in (["move"], ["describe", "--broker", "one"]):
        with pytest.raises(SystemExit):
            parse("log-dirs", *argv)


def test_features_command_lines() -> None:
    assert parse_feature("transaction.version=2") == ("transaction.version", 2)
    for bad in ("transaction.version", "transaction.version=-1", "transaction.version=two"):
        with pytest.raises(argparse.ArgumentTypeError, match="--feature"):
            parse_feature(bad)
    args = parse("features", "upgrade", "--feature", "a=2", "--feature", "b=1", "--dry-run")
    assert (args.features, args.dry_run) == ([("a", 2), ("b", 1)], True)
    assert upgrade_type(args) is FeatureUpgradeType.UPGRADE
    args = parse("features", "downgrade", "--feature", "a=1")
    assert (upgrade_type(args), args.dry_run) == (FeatureUpgradeType.SAFE_DOWNGRADE, False)
    args = parse("features", "downgrade", "--feature", "a=0", "--unsafe")
    assert upgrade_type(args) is FeatureUpgradeType.UNSAFE_DOWNGRADE
    for argv in (["upgrade"], ["upgrade", "--feature", "a=1", "--unsafe"]):
        with pytest.raises(SystemExit):
            parse("features", *argv)


def test_users_command_lines() -> None:
    for text in ("SCRAM-SHA-256", "scram-sha-256", "SCRAM_SHA_256"):
        assert parse_mechanism(text) is ScramMechanism.SCRAM_SHA_256
    with pytest.raises(argparse.ArgumentTypeError, match="SCRAM-SHA-256 or SCRAM-SHA-512"):
        parse_mechanism("PLAIN")
    args = parse(
        "users", "alter", "--user", "alice", "--add", "SCRAM-SHA-512", "--delete", "scram-sha-256"
    )
    assert (args.user, args.add, args.delete) == (
        "alice",
        [ScramMechanism.SCRAM_SHA_512],
        [ScramMechanism.SCRAM_SHA_256],
    )
    assert (args.iterations, args.password, args.password_stdin) == (4096, None, False)
    assert parse("users", "alter", "--user", "a", "--iterations", "8192").iterations == 8192
    assert parse("users", "describe").users is None
    assert parse("users", "describe", "--user", "a", "--user", "b").users == ["a", "b"]
    for argv in (
        ["alter", "--add", "SCRAM-SHA-256"],  # no user
        ["alter", "--user", "a", "--iterations", "4095"],  # under the RFC's floor
        ["alter", "--user", "a", "--password", "p", "--password-stdin"],
    ):
        with pytest.raises(SystemExit):
            parse("users", *argv)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--user", "a"], "nothing to change"),
        (["--user", "a", "--add", "SCRAM-SHA-256"], "--add needs the password"),
        (["--user", "a", "--delete", "SCRAM-SHA-256", "--password", "p"], "only for --add"),
        (
            ["--user", "a", "--add", "SCRAM-SHA-256", "--delete", "SCRAM-SHA-256", "--password=p"],
            "SCRAM-SHA-256: given to both --add and --delete",
        ),
    ],
)
def test_users_alter_refusals_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Refused before anything is sent (the address has no broker; connecting would fail).
    assert main(["users", "alter", *argv, "-b", "127.0.0.1:1"]) == 2
    assert message in capsys.readouterr().err


def test_cluster_command_line() -> None:
    assert parse("cluster", "describe").authorized_operations is False
    args = parse("cluster", "describe", "--authorized-operations", "--format", "json")
    assert (args.authorized_operations, args.format) == (True, "json")
