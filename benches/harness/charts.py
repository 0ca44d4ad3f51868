"""PNG bar charts (matplotlib, no display needed): records/s per client for W1-W4 and W6,
latency percentiles for W5, group timings for W7, rows/s per Spark reader for W8, records/s
through a share group for W9 (a chart per member count), rows/s to typed columns for W11 (a
chart per format), transactions/s for W12 (a chart per case). Bars are medians, whiskers
min-max."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .report import CONSUMER_WORKLOADS, label

FERRO = "#c0392b"
OTHER = "#7f8c8d"


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _name(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", "-".join(parts)).strip("-") + ".png"


def _short(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:.2f} M"
    if v >= 1e4:
        return f"{v / 1e3:.0f} k"
    return f"{v:.3g}"


def _bars(path: Path, title: str, xlabel: str, rows: list[Row]) -> Path:
    """Horizontal bars, one per client: its median with min-max whiskers, or the word
    "failed"/"unsupported" where it has no figure."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(rows) + 1.6))
    names = [r.name.replace("`", "") for r in rows]
    med = [r.figure["median"] if r.figure else 0.0 for r in rows]
    err = [
        [m - (r.figure["min"] if r.figure else 0.0) for m, r in zip(med, rows, strict=True)],
        [(r.figure["max"] if r.figure else 0.0) - m for m, r in zip(med, rows, strict=True)],
    ]
    colors = [FERRO if r.ours else OTHER for r in rows]
    ax.barh(names, med, xerr=err, color=colors, capsize=3)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(textwrap.fill(title, 90), fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.xaxis.set_major_formatter(lambda v, _pos: _short(v))
    for y, (v, r) in enumerate(zip(med, rows, strict=True)):
        right = r.figure["max"] if r.figure else 0.0  # past the whisker
        ax.text(right, y, f"  {_short(v) if r.figure else r.missing}", va="center", fontsize=8)
    ax.set_xlim(0, max((r.figure["max"] for r in rows if r.figure), default=1.0) * 1.15)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


@dataclass
class Row:
    name: str
    ours: bool
    figure: dict[str, Any] | None  # {"median", "min", "max"}
    missing: str = ""


def _rows(case: dict[str, Any], metric: str, versions: dict[str, Any], role: str) -> list[Row]:
    rows = []
    for client, s in case.items():
        missing = "unsupported" if s.get("unsupported") and not s["failures"] else "failed"
        rows.append(
            Row(
                label(client, versions, role),
                client.startswith("ferrokafka"),
                s.get(metric),
                missing,
            )
        )
    return rows


def draw(report: dict[str, Any], out_dir: Path) -> list[Path]:
    versions = report["machine"]["versions"]
    made: list[Path] = []
    for workload, cases in report["summary"].items():
        desc = report["descriptions"].get(workload, "")
        for case_name, case in cases.items():
            if case_name == "setup":
                continue
            if workload in CONSUMER_WORKLOADS:
                rows = _rows(case, "records_per_s", versions, "consumer")
                title = f"{workload}{' ' + case_name if len(cases) > 1 else ''}: {desc}"
                path = out_dir / _name(workload, case_name if len(cases) > 1 else "")
                xlabel = "records/s (median, min-max)"
            elif workload == "W5":
                rows = _rows(case, "p99", versions, "consumer")
                title = f"W5: p99 end-to-end latency, produced at {case_name}"
                path = out_dir / _name("W5", case_name.replace("/s", "per-s"))
                xlabel = "p99 latency, ms (median, min-max over rounds)"
            elif workload == "W6":
                rows = _rows(case, "records_per_s", versions, "producer")
                title = f"W6: producer throughput, {case_name}, {report['descriptions']['W6']}"
                path = out_dir / _name("W6", case_name)
                xlabel = "records/s (median, min-max)"
            elif workload == "W8":
                rows = _rows(case, "records_per_s", versions, "spark")
                title = f"W8: {desc}"
                path = out_dir / _name("W8")
                xlabel = "rows/s (median, min-max)"
            elif workload == "W9":
                rows = _rows(case, "records_per_s", versions, "share")
                title = f"W9: records/s through one share group, {case_name}"
                path = out_dir / _name("W9", case_name)
                xlabel = "records/s, first record to last (median, min-max)"
            elif workload == "W11":
                rows = _rows(case, "records_per_s", versions, "typed")
                title = f"W11 {case_name}: rows/s to typed columns, {desc}"
                path = out_dir / _name("W11", case_name)
                xlabel = "rows/s (median, min-max)"
            elif workload == "W12":
                rows = _rows(case, "txn_per_s", versions, "transactions")
                title = f"W12: transactions/s, {case_name} (acks=all)"
                path = out_dir / _name("W12", case_name)
                xlabel = "transactions/s (median, min-max)"
            elif workload == "W7":
                rows = _rows(case, "settle_s", versions, "group")
                title = "W7: seconds from a 4th member's construction until the group settled"
                path = out_dir / _name("W7")
                xlabel = "seconds (median, min-max)"
            else:
                continue
            if rows:
                made.append(_bars(path, title, xlabel, rows))
    return made
