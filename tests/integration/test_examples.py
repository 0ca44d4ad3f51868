"""Every script in examples/ runs, as a user would run it (its own process), against the real
broker, and does what its docstring says. A new example without a test here fails
``test_every_example_is_tested``."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import pyarrow.parquet as pq
import pytest
from ferrokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient

from ..conftest import _require_pyspark

if TYPE_CHECKING:
    from ..conftest import TopicFactory

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_TESTED: set[str] = set()
F = TypeVar("F", bound=Callable[..., Any])


def runs(name: str) -> Callable[[F], F]:
    """Marks the test that runs ``examples/<name>``."""
    assert (EXAMPLES / name).is_file(), name
    _TESTED.add(name)
    return lambda test: test


def example_files() -> list[str]:
    return sorted(p.name for p in EXAMPLES.glob("*.py"))


def test_every_example_is_tested() -> None:
    assert set(example_files()) == _TESTED


# ---- what every example has -------------------------------------------------------------------


def _ferrokafka_imports(tree: ast.Module) -> list[str]:
    modules = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
    return [m for m in modules if m.split(".")[0] == "ferrokafka"]


@pytest.mark.parametrize("name", example_files())
def test_example_documents_itself_and_uses_only_the_public_api(name: str) -> None:
    source = (EXAMPLES / name).read_text()
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert doc and "What it shows" in doc and f"python examples/{name}" in doc, name
    used = _ferrokafka_imports(tree)
    assert used, f"{name} does not use ferrokafka"
    private = [m for m in used if any(p.startswith("_") for p in m.split(".")) or ".testing" in m]
    assert not private, f"{name} imports outside the public API: {private}"
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--bootstrap-server" in done.stdout


# ---- running them -----------------------------------------------------------------------------


async def _start(name: str, *args: str, **env: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        str(EXAMPLES / name),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **env},
    )


async def _run(name: str, *args: str, timeout: float = 60, **env: str) -> str:
    """Run an example to its end; its stdout (it must exit 0)."""
    proc = await _start(name, *args, **env)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
        proc.kill()
        out, err = await proc.communicate()
        pytest.fail(f"{name} still ran after {timeout}s: {out.decode()[-2000:]}{err.decode()}")
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{err.decode()[-4000:]}"
    return out.decode()


async def _produce(
    bootstrap: str, records: list[tuple[str, int, bytes | None, bytes]], **config: Any
) -> list[tuple[int, int]]:
    """Send (topic, partition, key, value) records; their (partition, offset)s."""
    async with AIOKafkaProducer(bootstrap_servers=bootstrap, **config) as producer:
        futures = [
            await producer.send(topic, value, key=key, partition=partition)
            for topic, partition, key, value in records
        ]
        return [(m.partition, m.offset) for m in [await f for f in futures]]


async def _read_all(
    bootstrap: str, topic: str, partitions: int, **config: Any
) -> list[tuple[int, int, bytes | None, bytes | None]]:
    """Every record of ``topic`` as (partition, offset, key, value)."""
    out = []
    async with AIOKafkaConsumer(bootstrap_servers=bootstrap, **config) as consumer:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)
        while any([await consumer.position(tp) < end[tp] for tp in tps]):
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                out.extend((r.partition, r.offset, r.key, r.value) for r in records)
    return out


async def _committed(bootstrap: str, group: str) -> dict[int, int]:
    async with AIOKafkaAdminClient(bootstrap_servers=bootstrap) as admin:
        offsets = await admin.list_consumer_group_offsets(group)
    return {tp.partition: om.offset for tp, om in offsets.items()}


@runs("share_worker.py")
async def test_share_worker_does_each_job_once_and_rejects_poison_jobs(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    group = f"workers-{topic}"
    jobs = [(topic, i % 2, None, b"job-%d" % i) for i in range(40)]
    jobs += [(topic, 0, None, b"fail-0"), (topic, 1, None, b"fail-1")]
    placed = await _produce(bootstrap_servers, jobs)
    poison = set(placed[-2:])
    args = ["--bootstrap-server", bootstrap_servers, "--topic", topic, "--group", group]
    args += ["--workers", "5", "--work-ms", "5", "--from-beginning", "--seconds", "12"]
    out = await _run("share_worker.py", *args)
    done = [
        line.split() for line in out.splitlines() if line.startswith("worker") and " done " in line
    ]
    jobs_done = sorted((int(w[3].split("=")[1]), int(w[4].split("=")[1])) for w in done)
    assert jobs_done == sorted(set(placed) - poison), "every good job once"
    assert len({w[1] for w in done}) > 1, "more than one worker did jobs"
    gave_up = {
        (int(w[4].split("=")[1]), int(w[5].split("=")[1])): int(w[7])
        for w in (line.split() for line in out.splitlines() if " gave up " in line)
    }
    assert gave_up == dict.fromkeys(poison, 3), out[-2000:]
    failed = [line for line in out.splitlines() if " failed " in line]
    assert len(failed) == 4, failed  # attempts 1 and 2 of each poison job
    assert out.splitlines()[-1].startswith("stopped: 40 jobs done by 5 workers")


@runs("async_service.py")
async def test_async_service_commits_what_it_processed_when_sent_sigterm(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    total = 200
    await _produce(bootstrap_servers, [(topic, i % 2, None, b"event-%d" % i) for i in range(total)])
    args = ("--bootstrap-server", bootstrap_servers, "--topic", topic, "--group", topic)
    proc = await _start("async_service.py", *args, "--work-ms", "20")
    assert proc.stdout is not None
    processed: dict[int, list[int]] = {0: [], 1: []}
    while sum(map(len, processed.values())) < 20:
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        assert line, "the service ended before processing 20 records"
        if m := re.match(r"processed partition=(\d) offset=(\d+)", line):
            processed[int(m[1])].append(int(m[2]))
    proc.send_signal(signal.SIGTERM)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()[-4000:]
    for m in re.finditer(r"processed partition=(\d) offset=(\d+)", out.decode()):
        processed[int(m[1])].append(int(m[2]))
    # Each partition was processed in order from its start, and it stopped well before the end.
    for offsets in processed.values():
        assert offsets == list(range(len(offsets)))
    count = sum(map(len, processed.values()))
    assert count < total, "SIGTERM did not stop the service"
    assert f"stopped after processing {count} records" in out.decode()
    expected = {p: len(offsets) for p, offsets in processed.items() if offsets}
    printed = {
        int(p): int(o)
        for p, o in re.findall(r"committed partition=(\d) offset=(\d+)", out.decode())
    }
    assert printed == expected
    assert await _committed(bootstrap_servers, topic) == expected

    # Started again, it resumes where the first run committed and processes the rest once.
    rest = await _run("async_service.py", *args, "--work-ms", "0", "--seconds", "8")
    for p in (0, 1):
        again = [int(o) for o in re.findall(rf"processed partition={p} offset=(\d+)", rest)]
        assert again == list(range(expected.get(p, 0), total // 2))
    assert await _committed(bootstrap_servers, topic) == {0: total // 2, 1: total // 2}


@runs("transform_transactions.py")
async def test_transform_transactions_writes_each_committed_input_once(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    source, sink = make_topic(partitions=2), make_topic(partitions=2)
    group = f"{source}-upper"
    committed_values = [b"order-%d" % i for i in range(60)]
    async with AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers, transactional_id=f"{source}-writer"
    ) as producer:
        async with producer.transaction():
            for i, value in enumerate(committed_values[:30]):
                await producer.send(source, value, key=b"k", partition=i % 2)
        # Records of an aborted transaction: a read_committed consumer never sees them.
        await producer.begin_transaction()
        for i in range(10):
            await producer.send(source, b"aborted", key=b"k", partition=i % 2)
        await producer.abort_transaction()
        async with producer.transaction():
            futures = [
                await producer.send(source, value, key=b"k", partition=i % 2)
                for i, value in enumerate(committed_values[30:])
            ]
        last: dict[int, int] = {}
        for meta in [await f for f in futures]:
            last[meta.partition] = max(last.get(meta.partition, -1), meta.offset)

    args = ("--bootstrap-server", bootstrap_servers, "--input", source, "--output", sink)
    out = await _run("transform_transactions.py", *args, "--group", group, "--idle-seconds", "3")
    assert "transformed 60 records" in out
    written = await _read_all(bootstrap_servers, sink, 2, isolation_level="read_committed")
    assert Counter(value for *_, value in written) == Counter(v.upper() for v in committed_values)
    # The input offsets were committed with the transactions: right after each partition's
    # last committed record.
    assert await _committed(bootstrap_servers, group) == {p: o + 1 for p, o in last.items()}

    # A restart finds nothing left to do: nothing is transformed twice.
    out = await _run("transform_transactions.py", *args, "--group", group, "--idle-seconds", "2")
    assert "transformed 0 records" in out
    assert len(await _read_all(bootstrap_servers, sink, 2, isolation_level="read_committed")) == 60


@runs("arrow_to_parquet.py")
async def test_arrow_to_parquet_writes_every_record_of_the_topic(
    bootstrap_servers: str, make_topic: TopicFactory, tmp_path: Path
) -> None:
    topic = make_topic(partitions=3)
    records = [
        (topic, i % 3, None if i % 7 == 0 else b"key-%d" % (i % 5), b"value-%d" % i)
        for i in range(500)
    ]
    placed = await _produce(bootstrap_servers, records)
    output = tmp_path / "events.parquet"
    out = await _run(
        "arrow_to_parquet.py",
        "--bootstrap-server",
        bootstrap_servers,
        "--topic",
        topic,
        "--output",
        str(output),
    )
    assert f"wrote 500 records of {topic}" in out
    table = pq.read_table(output)
    assert table.num_rows == 500
    assert set(table.column("topic").to_pylist()) == {topic}
    got = sorted(
        zip(
            table.column("partition").to_pylist(),
            table.column("offset").to_pylist(),
            table.column("key").to_pylist(),
            table.column("value").to_pylist(),
            strict=True,
        )
    )
    want = sorted(
        (p, o, key, value) for (p, o), (_, _, key, value) in zip(placed, records, strict=True)
    )
    assert got == want


def _keyed(topic: str, partitions: int, counts: dict[str, int]) -> list[Any]:
    """``counts[key]`` records of each key, spread over the partitions; value ``v<i>``."""
    records = []
    for key, n in counts.items():
        for i in range(n):
            records.append((topic, len(records) % partitions, key.encode(), b"v%d" % i))
    return records


@runs("kafka_to_polars.py")
async def test_kafka_to_polars_ranks_the_keys(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=3)
    counts = {f"user-{k}": 10 - k for k in range(6)}
    records = [*_keyed(topic, 3, counts), (topic, 0, None, b"anonymous")]
    await _produce(bootstrap_servers, records)
    out = await _run(
        "kafka_to_polars.py",
        "--bootstrap-server",
        bootstrap_servers,
        "--topic",
        topic,
        "--minutes",
        "60",
        "--top",
        "3",
    )
    lines = out.splitlines()
    assert lines[0] == f"{len(records)} records of {topic}, 7 keys"
    # Key, records, value bytes: user-0 has 10 values v0..v9 (20 bytes), user-1 9 (18).
    assert lines[1:] == ["user-0\t10\t20", "user-1\t9\t18", "user-2\t8\t16"]


@runs("json_orders.py")
async def test_json_orders_totals_the_typed_values_and_shows_the_malformed(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    orders = [
        {"id": i, "customer": f"c{i % 3}", "amount": f"{i}.25", "at": "2026-11-29T10:00:00Z"}
        for i in range(12)
    ]
    records = [(topic, i % 2, None, json.dumps(o).encode()) for i, o in enumerate(orders)]
    records.append((topic, 0, None, b'{"id": "thirteen"}'))
    await _produce(bootstrap_servers, records)
    out = await _run("json_orders.py", "--bootstrap-server", bootstrap_servers, "--topic", topic)
    lines = out.splitlines()
    assert lines[0] == f"13 records of {topic}: 12 orders"
    assert lines[1] == 'malformed: {"id": "thirteen"}'
    # c2: 2+5+8+11 = 26 + 4 * 0.25; c1: 1+4+7+10 = 22 + 1; c0: 0+3+6+9 = 18 + 1.
    assert lines[2:] == ["c2\t4\t27.00", "c1\t4\t23.00", "c0\t4\t19.00"]


@runs("kafka_to_duckdb.py")
async def test_kafka_to_duckdb_profiles_each_partition(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    records = [(topic, i % 2, None, b"x" * (i % 2 + 1)) for i in range(40)]
    await _produce(bootstrap_servers, records)
    out = await _run(
        "kafka_to_duckdb.py",
        "--bootstrap-server",
        bootstrap_servers,
        "--topic",
        topic,
        "--start",
        "5",
        "--end",
        "latest",
    )
    header, *rows = out.splitlines()
    assert header.split("\t")[:4] == ["partition", "records", "first_offset", "last_offset"]
    table = [row.split("\t") for row in rows]
    # Offsets 5-19 of each partition: 15 records; values of 1 and 2 bytes.
    assert [(r[0], r[1], r[2], r[3], r[6]) for r in table] == [
        ("0", "15", "5", "19", "15"),
        ("1", "15", "5", "19", "30"),
    ]


@runs("kafka_to_datafusion.py")
async def test_kafka_to_datafusion_counts_keys_of_the_partitions_asked_for(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=2)
    records = [(topic, 0, b"a", b"1")] * 5 + [(topic, 0, b"b", b"1")] * 3
    records += [(topic, 1, b"c", b"1")] * 9
    await _produce(bootstrap_servers, records)
    out = await _run(
        "kafka_to_datafusion.py",
        "--bootstrap-server",
        bootstrap_servers,
        "--topic",
        topic,
        "--partitions",
        "0",
    )
    assert out.splitlines() == ["a\t5", "b\t3"]
    out = await _run(
        "kafka_to_datafusion.py",
        "--bootstrap-server",
        bootstrap_servers,
        "--topic",
        topic,
        "--top",
        "1",
    )
    assert out.splitlines() == ["c\t9"]


@runs("spark_job.py")
async def test_spark_job_counts_records_per_key(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    _require_pyspark()
    topic, counts_topic = make_topic(partitions=2), make_topic(partitions=1)
    want = {f"user-{k}": k + 1 for k in range(5)}
    records = [(topic, i % 2, key.encode(), b"click") for key, n in want.items() for i in range(n)]
    await _produce(bootstrap_servers, records)
    out = await _run(
        "spark_job.py",
        "--bootstrap-server",
        bootstrap_servers,
        "--topic",
        topic,
        "--output-topic",
        counts_topic,
        timeout=240,
        PYSPARK_PYTHON=sys.executable,
        SPARK_LOCAL_IP="127.0.0.1",
    )
    printed = {k: int(n) for k, n in re.findall(r"key=(\S+) count=(\d+)", out)}
    assert printed == want
    written = await _read_all(bootstrap_servers, counts_topic, 1)
    assert {k.decode(): int(v) for _, _, k, v in written if k and v} == want
    assert len(written) == len(want)


@runs("fastapi_events.py")
async def test_fastapi_app_produces_the_events_it_is_posted(
    bootstrap_servers: str, make_topic: TopicFactory
) -> None:
    topic = make_topic(partitions=3)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = await _start(
        "fastapi_events.py",
        "--bootstrap-server",
        bootstrap_servers,
        "--topic",
        topic,
        "--port",
        str(port),
    )
    assert proc.stderr is not None
    try:
        while True:  # uvicorn logs to stderr once the lifespan (the producer) has started
            line = (await asyncio.wait_for(proc.stderr.readline(), 60)).decode()
            assert line, "the app ended before it started serving"
            if "Application startup complete" in line:
                break
        events = [{"key": f"user-{i % 4}", "payload": {"n": i, "what": "click"}} for i in range(20)]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            answers = await asyncio.gather(*(client.post("/events", json=e) for e in events))
            refused = await client.post("/events", json={"key": "no payload"})
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    # After its graceful shutdown uvicorn re-raises the signal it caught (so a supervisor sees
    # the process end by SIGTERM); the lifespan's shutdown ran before that.
    assert proc.returncode in (0, -signal.SIGTERM), err.decode()[-4000:]
    assert "Application shutdown complete" in err.decode()
    assert "producer stopped" in out.decode()
    assert refused.status_code == 422
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    placed = [a.json() for a in answers]
    assert {p["topic"] for p in placed} == {topic}

    records = {(p, o): (k, v) for p, o, k, v in await _read_all(bootstrap_servers, topic, 3)}
    assert len(records) == len(events)
    for event, where in zip(events, placed, strict=True):
        key, value = records[where["partition"], where["offset"]]
        assert key == event["key"].encode()
        assert value is not None and json.loads(value) == event["payload"]
