"""``ferrokafka`` as a process: failures are one line on stderr and a non-zero exit (no
traceback unless --debug, no password), bad flags exit 2, Ctrl-C exits 130 after a group
member committed what it printed, and ``bench`` runs a small produce-then-consume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ferrokafka import AIOKafkaProducer
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.cli import bench, main

from ..conftest import TopicFactory

pytestmark = pytest.mark.integration

UNREACHABLE = "127.0.0.1:1"  # nothing listens on port 1: refused at once


def spawn(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ferrokafka", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["consume", "-t", "any"],
        ["produce", "-t", "any"],
        ["topics", "list"],
        ["groups", "describe", "any"],
    ],
    ids=lambda argv: argv[0],
)
def test_unreachable_broker_is_one_line_and_exit_1(argv: list[str]) -> None:
    done = spawn(*argv, "-b", UNREACHABLE, "-X", "request_timeout_ms=2000")
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("ferrokafka: error: KafkaConnectionError: ")
    assert UNREACHABLE in lines[0]


def test_passwords_stay_out_of_errors_and_debug_shows_the_traceback() -> None:
    env = {**os.environ, "FERROKAFKA_SASL_PASSWORD": "s3cret-env"}
    argv = ["topics", "list", "-b", UNREACHABLE, "--sasl-username", "alice"]
    done = spawn(*argv, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "s3cret" not in done.stderr
    flagged = spawn(*argv, "--sasl-password", "s3cret-flag", "--debug")
    assert flagged.returncode == 1
    assert "Traceback" in flagged.stderr and "KafkaConnectionError" in flagged.stderr
    assert "s3cret" not in flagged.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["consume"], "the following arguments are required: -t/--topic"),
        (["consume", "-t", "x", "--offset", "soon"], "argument -o/--offset: 'soon'"),
        (["consume", "-t", "x", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["consume", "-t", "x", "-g", "g", "-p", "0"], "-g starts at the group's committed"),
        (["consume", "-t", "x", "-X", "no_such_option=1"], "-X no_such_option: not an option"),
        (["produce", "-t", "x", "-H", "novalue"], "-H: expected key=value"),
        (["groups", "reset-offsets", "g", "--all-topics"], "one of the arguments --to-earliest"),
        (["topics", "create", "t", "--partitions", "0"], "'0': expected a positive integer"),
        (["nope"], "invalid choice: 'nope'"),
    ],
)
def test_bad_flags_exit_2_with_the_reason(argv: list[str], message: str) -> None:
    done = spawn(*argv, "-b", UNREACHABLE)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_ctrl_c_exits_130_and_a_group_member_commits_what_it_printed(
    bootstrap_servers: str, topic: str
) -> None:
    group = f"{topic}-follow"
    follower = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ferrokafka",
            "consume",
            "-b",
            bootstrap_servers,
            "-t",
            topic,
            "-g",
            group,
            "--follow",
            "--from-beginning",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        async def produce() -> None:
            async with AIOKafkaProducer(bootstrap_servers=bootstrap_servers) as producer:
                for i in range(3):
                    await producer.send_and_wait(topic, b"r%d" % i)

        asyncio.run(produce())
        assert follower.stdout is not None
        got = [follower.stdout.readline().strip() for _ in range(3)]
        assert got == ["r0", "r1", "r2"]
        time.sleep(0.5)
        follower.send_signal(signal.SIGINT)
        _, err = follower.communicate(timeout=30)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert follower.returncode == 130
    assert err == ""

    async def committed() -> dict[int, int]:
        async with AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers) as admin:
            found = await admin.list_consumer_group_offsets(group)
        return {tp.partition: om.offset for tp, om in found.items()}

    assert asyncio.run(committed()) == {0: 3}


def test_bench_a_few_records(
    bootstrap_servers: str, make_topic: TopicFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["bench", "-b", bootstrap_servers, "--records", "500", "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    rows = {row["phase"]: row for row in map(json.loads, out.splitlines())}
    assert set(rows) == {"produce", "getmany", "getmany_arrow"}
    for row in rows.values():
        assert row["records"] == 500 and row["records_per_s"] > 0
    assert rows["produce"]["bytes"] == 500 * 100

    # The fresh topic is gone afterwards.
    topics = main(["topics", "list", "-b", bootstrap_servers])
    assert topics == 0 and "ferrokafka-bench-" not in capsys.readouterr().out


def test_bench_harness_needs_a_source_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench, "harness_path", lambda: tmp_path / "benches" / "harness.py")
    assert main(["bench", "harness", "--quick"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ferrokafka: error: bench harness: no ")
    assert "source checkout" in err and len(err.splitlines()) == 1


def test_bench_harness_passes_its_arguments_on() -> None:
    done = spawn("bench", "harness", "--help")
    assert done.returncode == 0, done.stderr
    assert "usage: benches/harness.py" in done.stdout and "--workloads" in done.stdout


def test_an_unreadable_input_is_one_line_not_a_hang(
    bootstrap_servers: str, topic: str, tmp_path: Path
) -> None:
    # stdin is open for writing only: reading it fails (EBADF) in the reading thread, which
    # must hand the error over instead of leaving the command waiting for input forever.
    fd = os.open(tmp_path / "input", os.O_WRONLY | os.O_CREAT)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ferrokafka", "produce", "-b", bootstrap_servers, "-t", topic],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=fd,
        )
    finally:
        os.close(fd)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("ferrokafka: error: cannot read the input: "), done.stderr
    assert "Bad file descriptor" in done.stderr
    assert len(done.stderr.splitlines()) == 1
