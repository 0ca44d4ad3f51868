"""The harness's W12 (transactions) in the report, from a synthetic set of runs: a row per
client and case with the idiom named, a failed run said as failed and never counted, the
cluster's transaction version, and the targets against the Java producer met or not."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

from harness import report  # noqa: E402
from harness.cli import parse  # noqa: E402
from harness.workloads import CTP_CASE, FULL, TXN_CLIENTS  # noqa: E402

SMALL = "small transactions"


def _run(case: str, client: str, rnd: int, txns: int, wall: float, **extra: Any) -> dict[str, Any]:
    per = 10 if case == SMALL else 500
    run: dict[str, Any] = {
        "workload": "W12",
        "case": case,
        "client": client,
        "round": rnd,
        "ok": True,
        "error": None,
        "transaction_version": 2,
        "wall": wall,
        "cpu": wall / 4,
        "count": txns * per,
        "transactions": txns,
        "setup_s": 0.5,
        "rss_mb": 40.0,
        "records_per_s": txns * per / wall,
        "txn_per_s": txns / wall,
    }
    return run | extra


def _report(runs: list[dict[str, Any]]) -> dict[str, Any]:
    versions = {
        "broker": "Apache Kafka 4.2.0",
        "aiokafka": "0.14.0",
        "confluent-kafka": "2.16.1",
        "kafka-clients (Java consumer)": "4.2.0",
    }
    machine = {
        "cores": 2,
        "cpu_model": "test CPU",
        "machine": "x86_64",
        "memory_gib": 8,
        "python": "3.11",
        "versions": versions,
        "ferrokafka": {"start": "abc", "end": "abc"},
        "load_average_1_5_15": {"start": (1.0, 1.0, 1.0), "end": (1.0, 1.0, 1.0)},
    }
    return {
        "command": "benches/harness.py --workloads W12",
        "date": "2026-11-29T14:00:00+00:00",
        "quick": False,
        "rounds": 3,
        "workloads": ["W12"],
        "descriptions": {"W12": "transactions"},
        "machine": machine,
        "not_run": {},
        "elapsed_s": 60.0,
        "runs": runs,
        "summary": report.summary(runs),
    }


def _runs() -> list[dict[str, Any]]:
    """ferrokafka at 600 small transactions/s against Java's 500 (1.2x); in
    consume-transform-produce 40/s against Java's 50 (0.8x); aiokafka's second round failed
    its check."""
    runs = []
    for rnd, jitter in ((1, 1.0), (2, 1.1), (3, 0.9)):
        runs += [
            _run(SMALL, "ferrokafka", rnd, 2000, 2000 / 600 * jitter),
            _run(SMALL, "aiokafka", rnd, 2000, 2000 / 200 * jitter),
            _run(SMALL, "confluent-kafka", rnd, 2000, 2000 / 300 * jitter),
            _run(SMALL, "java", rnd, 2000, 2000 / 500 * jitter),
            _run(CTP_CASE, "ferrokafka", rnd, 400, 400 / 40 * jitter),
            _run(CTP_CASE, "aiokafka", rnd, 400, 400 / 20 * jitter),
            _run(CTP_CASE, "confluent-kafka", rnd, 400, 400 / 30 * jitter),
            _run(CTP_CASE, "java", rnd, 400, 400 / 50 * jitter),
        ]
    failed = next(r for r in runs if (r["case"], r["client"], r["round"]) == (SMALL, "aiokafka", 2))
    failed.update(ok=False, error="read_committed found (count, value bytes) (19990, 1999000)")
    failed["txn_per_s"] = 1e9  # a failed run's figures are never counted
    return runs


def _section(markdown: str) -> str:
    return markdown[markdown.index("\n## W12: ") : markdown.index("\n## Targets")]


def _row(section: str, name: str, case: str) -> list[str]:
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[:2] == [name, case]:
            return cells
    raise AssertionError(f"no row for {name!r}, {case!r} in:\n{section}")


def test_each_client_has_a_row_per_case_naming_its_idiom() -> None:
    section = _section(report.markdown(_report(_runs())))
    version = "The cluster's finalized `transaction.version` (ApiVersions' finalized features): 2."
    assert version in section
    versions = _report([])["machine"]["versions"]
    for client in TXN_CLIENTS:
        name = report.label(client, versions, "transactions")
        for case in (SMALL, CTP_CASE):
            _row(section, name, case)
    fk = _row(section, "ferrokafka `async with producer.transaction()`", SMALL)
    # transactions/s (median), min-max, records/s, records a transaction, ..., vs Java
    assert fk[2] == "600" and fk[3] == "545-667", fk
    assert fk[4] == "6.0 k" and fk[5] == "10", fk
    assert fk[-1] == "1.20x", fk
    java = _row(
        section, "Java KafkaProducer 4.2.0 `beginTransaction()`, `commitTransaction()`", SMALL
    )
    assert java[-1] == "1.00x", java
    ctp = _row(section, "ferrokafka `async with producer.transaction()`", CTP_CASE)
    assert ctp[2] == "40" and ctp[5] == "500" and ctp[-1] == "0.80x", ctp


def test_a_failed_run_is_said_and_not_counted() -> None:
    runs = _runs()
    summ = report.summary(runs)["W12"][SMALL]["aiokafka"]
    assert (summ["runs"], summ["ok"]) == (3, 2)
    assert summ["txn_per_s"]["max"] < 1e9
    assert summ["failures"] == ["read_committed found (count, value bytes) (19990, 1999000)"]
    # Every run of a client failed: its row says so, with the reason.
    for r in runs:
        if r["client"] == "confluent-kafka" and r["case"] == CTP_CASE:
            r.update(ok=False, error="stalled: no progress for 30s (last progress 12)")
    section = _section(report.markdown(_report(runs)))
    row = _row(
        section, "confluent-kafka 2.16.1 `begin_transaction()`, `commit_transaction()`", CTP_CASE
    )
    assert row[2] == "failed" and "3 of 3 runs failed: stalled" in row[3], row


def test_targets_against_the_java_producer() -> None:
    markdown = report.markdown(_report(_runs()))
    targets = markdown[markdown.index("## Targets") :].splitlines()
    what = "ferrokafka `transaction()` / Java KafkaProducer"
    assert f"- W12 {SMALL} transactions/s, {what}: 1.20x (target >= 1x): met" in targets
    assert f"- W12 {CTP_CASE} transactions/s, {what}: 0.80x (target >= 1x): **not met**" in targets
    assert f"- W12 {CTP_CASE} records/s, {what}: 0.80x (target >= 1x): **not met**" in targets
    # No Java figure: said so, never a ratio.
    runs = [r for r in _runs() if r["client"] != "java"]
    targets = report.targets(report.summary(runs))
    line = f"- W12 {SMALL} transactions/s, {what}: no figure (a client failed or did not run)"
    assert line in targets


def test_a_cluster_without_transaction_version_2_is_said() -> None:
    runs = [r | {"transaction_version": 1} for r in _runs()]
    section = _section(report.markdown(_report(runs)))
    assert "finalized features): 1 (**not 2**: the older protocol was measured)." in section


def test_w12_sizes_from_the_command_line() -> None:
    args = parse(["--workloads", "W12", "--w12-transactions", "200", "--w12-records", "20000"])
    assert (args.workloads, args.w12_transactions, args.w12_records) == (["W12"], 200, 20_000)
    assert parse([]).w12_transactions is None  # FULL's
    assert (FULL.w12_transactions, FULL.w12.records, FULL.w12.partitions) == (2000, 200_000, 8)


@pytest.mark.parametrize("flag", ["--w12-transactions", "--w12-records"])
def test_a_bad_w12_size_is_a_usage_error(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse([flag, "0"])
    assert exit_info.value.code == 2
    assert flag in capsys.readouterr().err
