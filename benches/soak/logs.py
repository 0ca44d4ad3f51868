"""The files the soak's children write and the driver reads.

The producer's acknowledgement log has one line per acknowledged record,
``<partition> <offset> <seq> <gid>``, and one ``F <partition> <seq> <gid>`` line per send that
failed. A member incarnation's processing log (one file per incarnation, append-only, fsync'd
before every commit) has:

- ``A <time> <partitions>``: partitions assigned (comma-separated; ``-`` for none);
- ``R <time> <partitions>``: partitions revoked (or lost);
- ``P <partition> <offset> <seq> <gid> <timestamp>``: a record processed (its create time,
  ms, set by the producer when it sent the record);
- ``C <time> <partition>:<offset>,...``: offsets committed (the broker acknowledged them);
- ``S <time>``: a clean stop after the final commit.

A record value is ``<gid>,<partition>,<seq>`` in ASCII.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def encode_value(gid: int, partition: int, seq: int) -> bytes:
    return f"{gid},{partition},{seq}".encode()


def decode_value(value: bytes) -> tuple[int, int, int]:
    gid, partition, seq = value.split(b",")
    return int(gid), int(partition), int(seq)


def partitions_text(partitions: list[int]) -> str:
    return ",".join(map(str, sorted(partitions))) or "-"


def parse_partitions(text: str) -> list[int]:
    return [] if text == "-" else [int(p) for p in text.split(",")]


class Tail:
    """Reads the complete lines appended to a file since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._rest = b""

    def lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        data = self._rest + data
        cut = data.rfind(b"\n") + 1
        self._rest = data[cut:]
        return data[:cut].decode().splitlines()


class Progress:
    """The highest offset per partition seen in a set of logs, updated by tailing them: the
    producer's acknowledgements or the members' processed records."""

    def __init__(self, directory: Path, pattern: str) -> None:
        self.directory = directory
        self.pattern = pattern
        self.high: dict[int, int] = {}
        self.newest: dict[int, int] = {}
        """The newest create time (ms) of a processed record, per partition."""
        self._tails: dict[Path, Tail] = {}

    def refresh(self) -> dict[int, int]:
        for path in self.directory.glob(self.pattern):
            if path not in self._tails:
                self._tails[path] = Tail(path)
        high = self.high
        for tail in self._tails.values():
            for line in tail.lines():
                fields = line.split()
                if fields[0] == "P":
                    partition, offset = int(fields[1]), int(fields[2])
                    created = int(fields[5])
                    if created > self.newest.get(partition, 0):
                        self.newest[partition] = created
                elif fields[0][0].isdigit():
                    partition, offset = int(fields[0]), int(fields[1])
                else:
                    continue
                if offset > high.get(partition, -1):
                    high[partition] = offset
        return high


@dataclass
class Session:
    """One incarnation's hold on one partition, from assignment to revocation or death."""

    incarnation: str
    partition: int
    start: float
    end: float | None = None
    ended_by: str = "death"
    """``revoked`` (a rebalance), ``stop`` (a clean stop) or ``death`` (no end logged)."""
    committed_at_end: bool = False
    """Whether the line before the end was a commit of this partition (the revocation's
    commit succeeded)."""
    committed: int = -1
    """The last offset this session committed for its partition (the next to read)."""
    offsets: list[int] = field(default_factory=list)


@dataclass
class Incarnation:
    name: str
    sessions: list[Session]
    commits: int
    clean_stop: bool


def read_member_log(path: Path) -> Incarnation:
    """The sessions of one incarnation's log; a torn last line (SIGKILL) is ignored."""
    name = path.stem
    open_sessions: dict[int, Session] = {}
    sessions: list[Session] = []
    commits = 0
    clean = False
    just_committed: set[int] = set()
    with open(path, "rb") as f:
        data = f.read()
    for raw in data.split(b"\n")[:-1]:
        fields = raw.decode().split()
        kind = fields[0]
        last_committed, just_committed = just_committed, set()
        if kind == "P":
            partition = int(fields[1])
            session = open_sessions.get(partition)
            if session is None:  # processed without an assignment logged: its own session
                session = Session(name, partition, start=0.0)
                open_sessions[partition] = session
                sessions.append(session)
            session.offsets.append(int(fields[2]))
        elif kind == "A":
            for partition in parse_partitions(fields[2]):
                if partition not in open_sessions:
                    session = Session(name, partition, start=float(fields[1]))
                    open_sessions[partition] = session
                    sessions.append(session)
        elif kind == "R":
            for partition in parse_partitions(fields[2]):
                session = open_sessions.pop(partition, None)
                if session is not None:
                    session.end, session.ended_by = float(fields[1]), "revoked"
                    session.committed_at_end = partition in last_committed
        elif kind == "C":
            commits += 1
            for item in fields[2].split(","):
                partition, offset = map(int, item.split(":"))
                just_committed.add(partition)
                session = open_sessions.get(partition)
                if session is not None:
                    session.committed = max(session.committed, offset)
        elif kind == "S":
            clean = True
            for session in open_sessions.values():
                session.end, session.ended_by = float(fields[1]), "stop"
            open_sessions.clear()
    return Incarnation(name, sessions, commits, clean)


def fsync(f: object) -> None:
    f.flush()  # type: ignore[attr-defined]
    os.fsync(f.fileno())  # type: ignore[attr-defined]
