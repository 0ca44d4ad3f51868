"""Where output goes. Data (records, rows) is the only thing on stdout: a table drawn with rich
when stdout is a terminal, tab-separated or JSON lines when it is not. Progress and summaries go
to stderr, and only when stderr is a terminal. Without rich (the ``cli`` extra) tables and
progress are plain text."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["FORMATS", "Output", "Progress", "cell"]

FORMATS = ("table", "json")


def _rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def cell(value: Any) -> str:
    """A table cell: lists joined with commas, None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(cell(v) for v in value)
    return str(value)


class Output:
    """stdout for data, stderr for people."""

    def __init__(self, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> None:
        self._stdout = stdout
        self._stderr = stderr
        self.rich = _rich_available()

    @property
    def stdout(self) -> IO[str]:
        # Looked up each time: a live progress line on the terminal swaps sys.stdout for a
        # proxy that prints above it.
        return self._stdout or sys.stdout

    @property
    def stderr(self) -> IO[str]:
        return self._stderr or sys.stderr

    @property
    def stdout_tty(self) -> bool:
        return self.stdout.isatty()

    @property
    def stderr_tty(self) -> bool:
        return self.stderr.isatty()

    def line(self, text: str) -> None:
        self.stdout.write(text + "\n")

    def note(self, text: str) -> None:
        """A summary or hint for a person: stderr, and only on a terminal."""
        if self.stderr_tty:
            self.stderr.write(text + "\n")
            self.stderr.flush()

    def rows(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
        fmt: str = "table",
        title: str | None = None,
    ) -> None:
        """Rows as a table (rich on a terminal, tab-separated with a header line when piped),
        or as JSON lines keyed by column name (``fmt="json"``; values kept as they are)."""
        if fmt == "json":
            for row in rows:
                self.line(json.dumps(dict(zip(columns, row, strict=True)), default=str))
        elif self.stdout_tty and self.rich:
            from rich.console import Console
            from rich.table import Table

            table = Table(*columns, title=title, title_justify="left", box=None)
            for row in rows:
                table.add_row(*(cell(v) for v in row))
            Console(file=self.stdout).print(table)
        else:
            if title and self.stdout_tty:
                self.line(title)
            self.line("\t".join(columns))
            for row in rows:
                self.line("\t".join(cell(v) for v in row))
        self.stdout.flush()

    @contextmanager
    def progress(self, what: str, total: int | None = None) -> Iterator[Progress]:
        """A live ``what: N records, B bytes, R/s`` line on a terminal's stderr; silent
        otherwise."""
        meter = Progress(what, total)
        if not self.stderr_tty:
            yield meter
            return
        if self.rich:
            from rich.console import Console
            from rich.live import Live

            with Live(
                meter,
                console=Console(file=self.stderr),
                refresh_per_second=4,
                transient=True,
            ):
                yield meter
        else:
            yield meter


class Progress:
    """Counts records and bytes; renders itself as one line (rich calls ``__rich__``)."""

    def __init__(self, what: str, total: int | None = None) -> None:
        self.what = what
        self.total = total
        self.records = 0
        self.bytes = 0
        self.lag: int | None = None
        self.started = time.monotonic()

    def add(self, records: int, size: int) -> None:
        self.records += records
        self.bytes += size

    def elapsed(self) -> float:
        return max(time.monotonic() - self.started, 1e-9)

    def summary(self) -> str:
        seconds = self.elapsed()
        rate = self.records / seconds
        text = (
            f"{self.what}: {self.records:,} records, {human_bytes(self.bytes)} in "
            f"{seconds:.1f}s ({rate:,.0f} records/s, {human_bytes(self.bytes / seconds)}/s)"
        )
        if self.total is not None:
            text += f", {max(self.total - self.records, 0):,} to go"
        if self.lag is not None:
            text += f", lag {self.lag:,}"
        return text

    def __rich__(self) -> str:
        return self.summary()


def human_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")
