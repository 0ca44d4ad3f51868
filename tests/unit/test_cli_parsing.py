"""The command line's parts that need no broker: flag value parsers, the reset plan, the record
layouts, client options from flags, and how failures become exit codes."""

from __future__ import annotations

import argparse
import base64
import io
import json
import logging
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka.cli import _harness_args, broker, build_parser, main
from ferrokafka.cli.errors import CliError, describe, run_handler
from ferrokafka.cli.names import resolve_names
from ferrokafka.cli.offsets import LogOffsets, plan_reset
from ferrokafka.cli.options import client_options, parse_client_option
from ferrokafka.cli.output import Output, Progress
from ferrokafka.cli.parsing import OffsetSpec, parse_offset, parse_timestamp, positive
from ferrokafka.cli.produce import split_line
from ferrokafka.cli.render import RecordWriter, decode
from ferrokafka.structs import ConsumerRecord


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("earliest", OffsetSpec("earliest")),
        ("beginning", OffsetSpec("earliest")),
        ("END", OffsetSpec("latest")),
        ("latest", OffsetSpec("latest")),
        ("42", OffsetSpec("absolute", 42)),
        ("0", OffsetSpec("absolute", 0)),
        ("-5", OffsetSpec("from_end", 5)),
    ],
)
def test_parse_offset(text: str, spec: OffsetSpec) -> None:
    assert parse_offset(text) == spec


def test_parse_offset_rejects_words_it_does_not_know() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="'soon': expected earliest, latest"):
        parse_offset("soon")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (OffsetSpec("earliest"), 10),
        (OffsetSpec("latest"), 20),
        (OffsetSpec("absolute", 15), 15),
        (OffsetSpec("absolute", 5), 10),  # clamped to the log
        (OffsetSpec("absolute", 99), 20),
        (OffsetSpec("from_end", 3), 17),
        (OffsetSpec("from_end", 50), 10),
    ],
)
def test_offset_spec_resolves_within_the_log(spec: OffsetSpec, expected: int) -> None:
    assert spec.resolve(10, 20) == expected


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("1700000000000", 1_700_000_000_000),
        ("1970-01-01T00:00:02Z", 2000),
        ("2024-05-01T12:00:00+02:00", 1_714_557_600_000),
        ("2024-05-01T10:00:00.250+00:00", 1_714_557_600_250),
    ],
)
def test_parse_timestamp(text: str, millis: int) -> None:
    assert parse_timestamp(text) == millis


def test_parse_timestamp_without_zone_is_local_time() -> None:
    import datetime as dt

    local = dt.datetime(2024, 5, 1, 12, 0).astimezone()
    assert parse_timestamp("2024-05-01T12:00") == int(local.timestamp() * 1000)


@pytest.mark.parametrize("text", ["yesterday", "2024-13-01", "-5"])
def test_parse_timestamp_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="expected milliseconds"):
        parse_timestamp(text)


@pytest.mark.parametrize("text", ["0", "-1", "x"])
def test_positive_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="expected a positive integer"):
        positive(text)


def test_plan_reset_every_target() -> None:
    a, b = TopicPartition("t", 0), TopicPartition("t", 1)
    log = LogOffsets({a: 2, b: 0}, {a: 10, b: 5}, {a: 7})
    committed = {a: 4}

    def new(kind: str, value: int = 0) -> list[tuple[int | None, int]]:
        return [(p.current, p.new) for p in plan_reset([a, b], committed, log, (kind, value))]

    assert new("earliest") == [(4, 2), (None, 0)]
    assert new("latest") == [(4, 10), (None, 5)]
    assert new("datetime") == [(4, 7), (None, 5)]  # no record that new: the end
    assert new("offset", 3) == [(4, 3), (None, 3)]
    assert new("offset", 100) == [(4, 10), (None, 5)]
    assert new("shift", -3) == [(4, 2), (None, 0)]
    assert new("shift", 2) == [(4, 6), (None, 2)]  # nothing committed: from the earliest


def test_split_line() -> None:
    assert split_line(b"k:v:w", b":", 1) == (b"k", b"v:w")
    assert split_line(b"plain", None, 1) == (None, b"plain")
    assert split_line(b"k:", b":", 1) == (b"k", b"")
    with pytest.raises(CliError, match="line 7: no key separator ':'"):
        split_line(b"nokey", b":", 7)


def _record(key: bytes | None, value: bytes | None) -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord(
        "t", 1, 42, 1_700_000_000_123, 0, key, value, None, 0, 0, [("h", b"x"), ("n", None)]
    )


def _written(fmt: str, key_decoder: str, value_decoder: str, record: object, **kw: str) -> str:
    out = io.StringIO()
    writer = RecordWriter(Output(stdout=out), fmt, key_decoder, value_decoder, **kw)
    writer.write(record)  # type: ignore[arg-type]
    return out.getvalue()


def test_json_layout_and_decoders() -> None:
    line = json.loads(_written("json", "utf8", "json", _record(b"k", b'{"a": [1]}')))
    assert line == {
        "topic": "t",
        "partition": 1,
        "offset": 42,
        "timestamp": 1_700_000_000_123,
        "key": "k",
        "value": {"a": [1]},
        "headers": [["h", "x"], ["n", None]],
    }
    raw = json.loads(_written("json", "bytes", "bytes", _record(b"\x00\xff", None)))
    assert raw["key"] == base64.b64encode(b"\x00\xff").decode() and raw["value"] is None
    assert raw["headers"] == [["h", "eA=="], ["n", None]]


def test_raw_and_table_layouts() -> None:
    assert _written("raw", "utf8", "utf8", _record(b"k", b"v")) == "v\n"
    assert _written("raw", "utf8", "utf8", _record(b"k", b"v"), key_separator="\t") == "k\tv\n"
    assert _written("raw", "utf8", "utf8", _record(b"k", b"\xffv")) == "\\xffv\n"
    table = _written("table", "utf8", "bytes", _record(b"k", b"a\nb\x00")).splitlines()
    assert table[0].split() == ["PARTITION", "OFFSET", "TIMESTAMP", "KEY", "VALUE"]
    assert table[1].split() == [
        "1",
        "42",
        "2023-11-14T22:13:20.123Z",
        "k",
        "a\\nb\\x00",
        "[h=eA==",
        "n=None]",
    ]


def test_invalid_json_names_the_record() -> None:
    with pytest.raises(CliError, match="value at t partition 1 offset 42: not JSON"):
        _written("json", "utf8", "json", _record(None, b"{oops"))
    assert decode(None, "json", "x") is None


def _connection(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["consume", "-t", "x", *argv])


def test_client_options_from_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FERROKAFKA_SASL_PASSWORD", raising=False)
    args = _connection(
        "-b",
        "h:1",
        "-X",
        "request.timeout.ms=5000",
        "-X",
        "check_crcs=false",
        "-X",
        "client_id=123",
        "-X",
        "group_instance_id=7",
    )
    options = client_options(args, AIOKafkaConsumer)
    assert options == {
        "bootstrap_servers": "h:1",
        "request_timeout_ms": 5000,
        "check_crcs": False,
        "client_id": "123",
        "group_instance_id": 7,
    }


def test_security_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERROKAFKA_SASL_PASSWORD", "from-env")
    args = _connection("-b", "h:1", "--sasl-username", "alice", "--sasl-mechanism", "scram-sha-256")
    options = client_options(args, AIOKafkaProducer)
    assert options["security_protocol"] == "SASL_PLAINTEXT"
    assert options["sasl_mechanism"] == "SCRAM-SHA-256"
    assert (options["sasl_plain_username"], options["sasl_plain_password"]) == ("alice", "from-env")
    tls = client_options(_connection("--security-protocol", "ssl"), AIOKafkaProducer)
    assert tls["security_protocol"] == "SSL" and isinstance(tls["ssl_context"], ssl.SSLContext)


def test_bad_client_options_say_which(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CliError, match="-X nope: not an option of AIOKafkaConsumer"):
        client_options(_connection("-X", "nope=1"), AIOKafkaConsumer)
    with pytest.raises(CliError, match="-X check_crcs: expected true or false"):
        client_options(_connection("-X", "check_crcs=maybe"), AIOKafkaConsumer)
    with pytest.raises(CliError, match=r"--ssl-certfile: no such file 'c\.pem'"):
        client_options(_connection("--ssl-certfile", "c.pem"), AIOKafkaConsumer)
    plain = _connection("--security-protocol", "PLAINTEXT", "--ssl-certfile", "c.pem")
    with pytest.raises(CliError, match="need TLS, not PLAINTEXT"):
        client_options(plain, AIOKafkaConsumer)
    with pytest.raises(
        argparse.ArgumentTypeError, match=r"expected key=value, got 'sasl_plain_password'"
    ):
        parse_client_option("sasl_plain_password")


def test_default_bootstrap_is_the_running_local_broker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(broker, "_state_dir", lambda: tmp_path / "run")
    assert client_options(_connection(), AIOKafkaConsumer)["bootstrap_servers"] == (
        "localhost:9092"
    )
    # A live process whose command line names the recorded config stands for the node.
    config = tmp_path / "node-1" / "server.properties"
    node = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(config)])
    try:
        state = {
            "bootstrap_servers": "127.0.0.1:5555",
            "nodes": [{"node_id": 1, "pid": node.pid, "config": str(config)}],
        }
        (tmp_path / "run").mkdir()
        (tmp_path / "run" / "default.json").write_text(json.dumps(state))
        assert client_options(_connection(), AIOKafkaConsumer)["bootstrap_servers"] == (
            "127.0.0.1:5555"
        )
        # A secured one is reached through its PLAINTEXT listener.
        state["security"] = {"protocol": "SSL", "plaintext_bootstrap_servers": "127.0.0.1:6666"}
        (tmp_path / "run" / "default.json").write_text(json.dumps(state))
        assert client_options(_connection(), AIOKafkaConsumer)["bootstrap_servers"] == (
            "127.0.0.1:6666"
        )
        assert client_options(_connection("-b", "h:1"), AIOKafkaConsumer)["bootstrap_servers"] == (
            "h:1"
        )
    finally:
        node.kill()
        node.wait()
    assert client_options(_connection(), AIOKafkaConsumer)["bootstrap_servers"] == (
        "localhost:9092"
    )


def test_failures_become_one_line_and_an_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    def fails(exc: BaseException) -> object:
        def handler(_args: argparse.Namespace) -> int:
            raise exc

        return handler

    quiet = argparse.Namespace(debug=False)
    assert run_handler(fails(CliError("bad\nthing")), quiet) == 1  # type: ignore[arg-type]
    assert capsys.readouterr().err == "ferrokafka: error: bad thing\n"
    assert run_handler(fails(ValueError("nope")), quiet) == 1  # type: ignore[arg-type]
    assert capsys.readouterr().err == "ferrokafka: error: ValueError: nope\n"
    assert run_handler(fails(KeyboardInterrupt()), quiet) == 130  # type: ignore[arg-type]
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError):
        run_handler(fails(ValueError("x")), argparse.Namespace(debug=True))  # type: ignore[arg-type]
    assert describe(RuntimeError("RuntimeError: said")) == "RuntimeError: said"


def test_bench_harness_arguments_pass_through() -> None:
    assert _harness_args(["bench", "harness", "--quick", "-h"]) == ["--quick", "-h"]
    assert _harness_args(["--debug", "bench", "harness"]) == []
    assert _harness_args(["bench", "--records", "5"]) is None


def test_help_of_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--help"], ["consume", "--help"], ["groups", "reset-offsets", "--help"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 0
        assert capsys.readouterr().out.startswith("usage: ferrokafka")
    assert main(["topics"]) == 2  # no action: its help on stderr
    assert "ACTION" in capsys.readouterr().err


def test_progress_summary() -> None:
    meter = Progress("consumed", total=10)
    meter.add(4, 2048)
    meter.lag = 6
    text = meter.summary()
    assert text.startswith("consumed: 4 records, 2.0 KiB in ")
    assert text.endswith(", 6 to go, lag 6")


@pytest.mark.parametrize(
    ("argv", "attribute", "expected"),
    [
        (["topics", "create", "events"], "topic", "events"),
        (["topics", "create", "-t", "events"], "topic", "events"),
        (["topics", "create", "--topic", "events", "--partitions", "3"], "topic", "events"),
        (["topics", "delete", "a", "-t", "b", "--topic", "c"], "topics", ["a", "b", "c"]),
        (["topics", "describe"], "topics", []),
        (["groups", "describe", "-g", "g1"], "group", "g1"),
        (["groups", "describe", "g1"], "group", "g1"),
        (
            ["groups", "reset-offsets", "--group", "g1", "-t", "x", "--to-latest"],
            "group",
            "g1",
        ),
        (["groups", "delete", "g1", "-g", "g2", "--group", "g3"], "groups", ["g1", "g2", "g3"]),
    ],
)
def test_names_as_positional_or_flag(argv: list[str], attribute: str, expected: object) -> None:
    args = resolve_names(build_parser().parse_args(argv))
    assert getattr(args, attribute) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["topics", "create"], "a topic is needed: -t TOPIC"),
        (["topics", "delete"], "a topic is needed: -t TOPIC"),
        (["topics", "create", "x", "-t", "y"], "two topics given: 'x' and 'y'"),
        (["groups", "describe"], "a group is needed: -g GROUP"),
        (["groups", "delete"], "a group is needed: -g GROUP"),
    ],
)
def test_a_missing_or_doubled_name_is_a_usage_error(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"ferrokafka: error: {message}"


def test_main_puts_the_ferrokafka_logger_back() -> None:
    # A command silences the client's log; an application (or pytest) calling main() in its
    # own process gets its logging back as it was.
    logger = logging.getLogger("ferrokafka")
    before = (logger.handlers[:], logger.level, logger.propagate)
    assert main(["topics", "create"]) == 2
    assert (logger.handlers[:], logger.level, logger.propagate) == before
