"""The soak's verdict, from the files its children wrote and the topic read back at the end.

- Lost: an acknowledged record (partition, offset) no member processed.
- Duplicates: a record processed more than once. Each repeat is explained when the earlier
  processing's hold on the partition ended (its member was killed, or the partition was revoked
  in a rebalance or at a clean stop) before that hold committed past the record; a record
  processed twice within one hold, or processed again although the earlier hold had committed
  past it, is unexplained. A rebalance's repeats are told apart: the revocation's commit failed
  (the member had been fenced or expelled), or it succeeded and the record was returned to the
  member after it, while ``on_partitions_revoked`` was still running.
- The producer: in the topic, each partition's sequence numbers in offset order go up by one,
  skipping only the sends that failed (no duplicate, no reordering), and every acknowledged
  record is in the topic at its acknowledged offset.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from .logs import Incarnation, Session, read_member_log


@dataclass
class Acks:
    offsets: dict[int, array[int]]
    seqs: dict[int, array[int]]
    failed: dict[int, set[int]]
    """Sequence numbers whose send failed, per partition."""

    @property
    def count(self) -> int:
        return sum(len(a) for a in self.offsets.values())


def read_acks(path: Path) -> Acks:
    offsets: dict[int, array[int]] = {}
    seqs: dict[int, array[int]] = {}
    failed: dict[int, set[int]] = {}
    with open(path, "rb") as f:
        data = f.read()
    for raw in data.split(b"\n")[:-1]:
        fields = raw.split()
        if fields[0] == b"F":
            failed.setdefault(int(fields[1]), set()).add(int(fields[2]))
            continue
        partition = int(fields[0])
        offsets.setdefault(partition, array("q")).append(int(fields[1]))
        seqs.setdefault(partition, array("q")).append(int(fields[2]))
    return Acks(offsets, seqs, failed)


@dataclass
class Verdict:
    acknowledged: int = 0
    send_failures: int = 0
    processed: int = 0
    distinct_processed: int = 0
    lost: int = 0
    lost_examples: list[str] = field(default_factory=list)
    duplicates: int = 0
    duplicates_by_cause: Counter[str] = field(default_factory=Counter)
    unexplained: int = 0
    unexplained_examples: list[str] = field(default_factory=list)
    producer_errors: int = 0
    producer_examples: list[str] = field(default_factory=list)
    topic_records: int = 0

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["duplicates_by_cause"] = dict(self.duplicates_by_cause)
        return out


def verify_processing(
    acks: Acks, logs: list[Path], killed: set[str], verdict: Verdict
) -> list[Incarnation]:
    incarnations = [read_member_log(path) for path in sorted(logs)]
    ends = {p: (max(a) if len(a) else -1) for p, a in acks.offsets.items()}
    for inc in incarnations:
        for s in inc.sessions:
            if s.offsets:
                ends[s.partition] = max(ends.get(s.partition, -1), max(s.offsets))
    counts = {p: bytearray(end + 1) for p, end in ends.items()}
    for inc in incarnations:
        for s in inc.sessions:
            seen = counts[s.partition]
            for o in s.offsets:
                verdict.processed += 1
                if seen[o] < 255:
                    seen[o] += 1
    for p, offsets in acks.offsets.items():
        seen = counts[p]
        for o in offsets:
            if not seen[o]:
                verdict.lost += 1
                if len(verdict.lost_examples) < 20:
                    verdict.lost_examples.append(f"partition {p} offset {o}")
    verdict.distinct_processed = sum(len(c) - c.count(0) for c in counts.values())
    # The holds in which each repeated record was processed, in order of their start.
    holds: dict[tuple[int, int], list[Session]] = {}
    for inc in incarnations:
        for s in inc.sessions:
            seen = counts[s.partition]
            for o in s.offsets:
                if seen[o] > 1:
                    holds.setdefault((s.partition, o), []).append(s)
    for (p, o), sessions in holds.items():
        sessions.sort(key=lambda s: s.start)
        for earlier, later in pairwise(sessions):
            verdict.duplicates += 1
            cause = _cause(earlier, later, o, killed)
            if cause is None:
                verdict.unexplained += 1
                if len(verdict.unexplained_examples) < 20:
                    verdict.unexplained_examples.append(
                        f"partition {p} offset {o}: {earlier.incarnation} (from "
                        f"{earlier.start:.3f}, ended by {earlier.ended_by} at {earlier.end}, "
                        f"committed {earlier.committed}) then {later.incarnation} (from "
                        f"{later.start:.3f})"
                    )
            else:
                verdict.duplicates_by_cause[cause] += 1
    return incarnations


def _cause(earlier: Session, later: Session, offset: int, killed: set[str]) -> str | None:
    if earlier is later or offset < earlier.committed:
        return None
    if earlier.ended_by == "death":
        return "member killed" if earlier.incarnation in killed else None
    if earlier.ended_by == "revoked":
        if earlier.committed_at_end:
            # The revocation's commit succeeded, yet the record was processed after it: the
            # consumer returned it while on_partitions_revoked was running.
            return "rebalance: returned during the revocation callback, after its commit"
        return "rebalance: the revocation's commit failed (member fenced or expelled)"
    return "clean stop before commit"


def verify_producer(
    acks: Acks, topic: dict[int, tuple[array[int], array[int]]], verdict: Verdict
) -> None:
    """``topic``: per partition, the offsets and sequence numbers read back, in offset order."""

    def error(text: str) -> None:
        verdict.producer_errors += 1
        if len(verdict.producer_examples) < 20:
            verdict.producer_examples.append(text)

    for p, (offsets, seqs) in sorted(topic.items()):
        verdict.topic_records += len(offsets)
        failed = acks.failed.get(p, set())
        expected = 0
        at: dict[int, int] = {}
        for offset, seq in zip(offsets, seqs, strict=True):
            while expected in failed and seq != expected:
                expected += 1
            if seq != expected:
                error(f"partition {p} offset {offset}: seq {seq}, expected {expected}")
            expected = max(expected, seq + 1)
            at[offset] = seq
        for offset, seq in zip(acks.offsets.get(p, ()), acks.seqs.get(p, ()), strict=True):
            if at.get(offset) != seq:
                error(
                    f"partition {p}: acknowledged seq {seq} at offset {offset}, "
                    f"the topic has {at.get(offset)}"
                )
