"""The soak's figures: percentiles, RSS slopes, and the Markdown table printed at the end."""

from __future__ import annotations

import math
from typing import Any


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1), nearest rank."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def slope_per_hour(samples: list[tuple[float, float]], warm_up_s: float) -> float | None:
    """Least-squares slope of ``(seconds, MB)`` samples after ``warm_up_s``, in MB per hour
    (None with fewer than 5 samples after the warm-up)."""
    if not samples:
        return None
    t0 = samples[0][0]
    points = [(t - t0, mb) for t, mb in samples if t - t0 >= warm_up_s]
    if len(points) < 5:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_m = sum(m for _, m in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    if var == 0:
        return None
    cov = sum((t - mean_t) * (m - mean_m) for t, m in points)
    return cov / var * 3600


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table(figures: dict[str, Any]) -> str:
    v = figures["verdict"]
    lines = [
        f"Soak: {figures['minutes']} min, seed {figures['seed']}, {figures['rate']} records/s, "
        f"protocols {figures['protocols']}, Kafka {figures['kafka_version']}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| records sent (producer) | {figures['sent']} |",
        f"| records acknowledged | {v['acknowledged']} |",
        f"| sends failed (not acknowledged) | {v['send_failures']} |",
        f"| records in the topic (read back) | {v['topic_records']} |",
        f"| records processed (all members, repeats included) | {v['processed']} |",
        f"| distinct records processed | {v['distinct_processed']} |",
        f"| **lost** (acknowledged, never processed) | **{v['lost']}** |",
        f"| duplicates processed | {v['duplicates']} |",
    ]
    for cause, n in sorted(v["duplicates_by_cause"].items()):
        lines.append(f"| &nbsp; of which explained: {cause} | {n} |")
    lines += [
        f"| **duplicates unexplained** | **{v['unexplained']}** |",
        f"| producer duplicates / order errors | {v['producer_errors']} |",
        f"| committed-offset samples / ahead of processed | "
        f"{figures['commit_samples']} / {len(figures['commit_violations'])} |",
        f"| member or producer crashes | {len(figures['crashes'])} |",
        f"| faults not recovered within {figures['recover_timeout_s']:.0f} s | "
        f"{sum(1 for f in figures['faults'] if f['recovered_s'] is None)} |",
        "",
        "Recovery: from the fault's start until every partition has processed a record the "
        "producer sent after that start (after heal: from the fault's end: heal, broker "
        "restarted, member started again).",
        "",
        "| fault | group protocol | count | held p50 s | recovery p50 s | recovery p99 s "
        "| after heal p50 s | after heal p99 s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    kinds: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for fault in figures["faults"]:
        kinds.setdefault((fault["kind"], fault["protocol"]), []).append(fault)
    for (kind, protocol), faults in sorted(kinds.items()):
        held = [f["held_s"] for f in faults]
        rec = [f["recovered_s"] for f in faults if f["recovered_s"] is not None]
        after = [f["after_heal_s"] for f in faults if f["after_heal_s"] is not None]
        lines.append(
            f"| {kind} | {protocol} | {len(faults)} | {_s(percentile(held, 0.5))} | "
            f"{_s(percentile(rec, 0.5))} | {_s(percentile(rec, 0.99))} | "
            f"{_s(percentile(after, 0.5))} | {_s(percentile(after, 0.99))} |"
        )
    lines += [
        "",
        "RSS per member slot: the longest-lived incarnation, least-squares slope after its "
        "warm-up.",
        "",
        "| process | incarnations | longest lived min | RSS first / last MB | slope MB/h |",
        "|---|---|---|---|---|",
    ]
    for slot, rss in sorted(figures["rss"].items()):
        lines.append(
            f"| {slot} | {rss['incarnations']} | {rss['minutes']:.1f} | "
            f"{_s(rss['first_mb'])} / {_s(rss['last_mb'])} | {_s(rss['slope_mb_per_h'])} |"
        )
    lines += ["", f"Verdict: **{'PASS' if figures['passed'] else 'FAIL'}**"]
    for problem in figures["problems"]:
        lines.append(f"- {problem}")
    return "\n".join(lines)
