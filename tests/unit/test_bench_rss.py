"""The harness's peak RSS of a run is the client's: a consumer's is read when the client has
closed, before the tally sorts W5's latencies (a Python int each, tens of MB at 50k/s), and
ferrokafka's modules are byte-compiled first, as the peers' installed ones are."""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

import ferrokafka  # noqa: E402
from harness import child, consumers  # noqa: E402
from harness.runner import byte_compile, bytecode_dirs  # noqa: E402
from harness.tally import LATENCY_HEADER, Tally  # noqa: E402
from harness.workloads import QUICK, Context, latency_workload  # noqa: E402


class _Latencies(consumers.Source):
    """A source with no broker: each poll hands the tally a batch of measured records."""

    async def open(self) -> None:
        self.seq = 0

    async def poll(self, tally: Tally) -> None:
        values = []
        for _ in range(100):
            values.append(LATENCY_HEADER.pack(1, self.seq, 0) + b"x" * 10)
            self.seq += 1
        tally._add_latency(values)

    async def close(self) -> None:
        pass


def _spec() -> dict[str, Any]:
    return {
        "role": "consume",
        "client": "fake",
        "bootstrap": "unused:0",
        "topic": "t",
        "partitions": 1,
        "expected": 1000,
        "latency": True,
    }


def test_consumer_peak_is_read_before_the_latencies_are_sorted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    order: list[str] = []
    monkeypatch.setitem(consumers.SOURCES, "fake", _Latencies)

    def rss() -> float:
        order.append("rss")
        return 12.5

    result = Tally.result

    def sorted_result(self: Tally) -> dict[str, Any]:
        order.append("result")
        return result(self)

    monkeypatch.setattr(consumers, "peak_rss_mb", rss)
    monkeypatch.setattr(Tally, "result", sorted_result)
    out = consumers.run(_spec())
    assert order == ["rss", "result"]
    assert out["rss_mb"] == 12.5
    assert out["count"] == 1000
    assert len(out["lat_us"]) == 4


def test_child_keeps_the_runs_own_peak_and_reads_one_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    order: list[str] = []

    def rss() -> float:
        order.append("rss")
        return 99.0

    monkeypatch.setattr(child, "peak_rss_mb", rss)

    def emitted(result: dict[str, Any]) -> dict[str, Any]:
        def run(spec: dict[str, Any]) -> dict[str, Any]:
            order.append("run")
            return result

        order.clear()
        monkeypatch.setattr(consumers, "run", run)
        buf = io.StringIO()
        with redirect_stdout(buf):
            child.main([json.dumps(_spec())])
        last: dict[str, Any] = json.loads(buf.getvalue().splitlines()[-1])
        return last["result"]

    assert emitted({"count": 1, "rss_mb": 12.5})["rss_mb"] == 12.5
    # Read at the end: a peak taken before the run would be the interpreter's alone.
    assert emitted({"count": 1})["rss_mb"] == 99.0
    assert order == ["run", "rss"]


def test_the_harness_byte_compiles_ferrokafka_even_without_a_bytecode_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = Path(ferrokafka.__file__).parent
    assert package in bytecode_dirs()
    assert ROOT / "benches" / "harness" in bytecode_dirs()

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "broken.py").write_text("def (:\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE=1
    assert byte_compile([tmp_path / "pkg", tmp_path / "bad"]) == [tmp_path / "bad"]
    assert list((tmp_path / "pkg" / "__pycache__").glob("mod.*.pyc"))


def test_w5_with_no_latency_client_chosen_runs_nothing() -> None:
    # `--workloads W5 --clients java-perf`: no client measures latency, so there is nothing to
    # warm up either (the warm-up run takes the first chosen client).
    ctx = Context(bootstrap="unused:0", kafka=None, java=None, sizes=QUICK, rounds=1, stall_s=1.0)
    assert latency_workload(ctx, []) == []
    assert ctx.runs == []
