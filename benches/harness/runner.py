"""One run of one client in a child process, with a stall watchdog.

The child prints JSON lines on stdout (``tally``): ``{"progress": n}`` while it works,
``{"ready": true}`` when a latency consumer is polling, ``{"run": {...}}`` for each run of a
child that makes several (W8's Spark session), and ``{"result": {...}}`` last. Other
stdout lines (Kafka's tools print their own figures) are kept as ``lines``. A child started
with ``bare_result`` prints its result as a JSON object of its own (tools/java/ShareMember.java:
``{"records": n, "first_ms": t0, "last_ms": t1}``); with ``sample_rss`` its peak RSS (VmHWM) is
read every 0.1 s while it runs, for programs that do not report their own (a JVM). The watchdog
kills the child (SIGKILL, by its pid) when its progress count has not changed for ``stall_s`` or
the whole run exceeds ``timeout_s``: a hung client fails its run instead of hanging the harness.
The parent reaps the child with ``wait4`` for the process's own CPU time and peak RSS.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCHES = Path(__file__).resolve().parents[1]
ROOT = BENCHES.parent


@dataclass
class Outcome:
    ok: bool
    result: dict[str, Any] | None
    error: str | None
    lines: list[str] = field(default_factory=list)
    #: CPU seconds (user + system) of the whole child process, from wait4. (Its ru_maxrss is
    #: not used: after vfork+exec it starts at the parent's peak; children report VmHWM.)
    #: None when the child was reaped elsewhere and its CPU time is lost.
    proc_cpu: float | None = 0.0
    #: The child's peak RSS in MB as last sampled before it exited (``sample_rss``), or None.
    sampled_rss_mb: float | None = None


def bytecode_dirs() -> list[Path]:
    """The source trees the Python children import from here: ferrokafka's package (an
    editable install runs it from ``python/``) and the harness's own modules."""
    import importlib.util

    spec = importlib.util.find_spec("ferrokafka")
    found = list(spec.submodule_search_locations or []) if spec else []
    return [*(Path(d) for d in found), BENCHES / "harness"]


def byte_compile(dirs: list[Path]) -> list[Path]:
    """Write the bytecode of every module under ``dirs``, as pip does when it installs a wheel
    (the peers' installed modules have theirs). A child that compiles its modules from source
    (no cache, or ``PYTHONDONTWRITEBYTECODE`` set) holds about 2 MB more, which its peak RSS
    would count against the client. Returns the directories that could not be compiled."""
    import compileall

    return [d for d in dirs if not compileall.compile_dir(d, quiet=2)]


def prepare_bytecode(log: Callable[[str], None]) -> None:
    """Byte-compile what the children import (see ``byte_compile``); say what could not be."""
    for d in byte_compile(bytecode_dirs()):
        log(f"could not write the bytecode of {d}: its runs compile from source")


def python_child(spec: dict[str, Any]) -> list[str]:
    """The argv of a Python child running ``spec`` (see ``child``)."""
    import sys

    return [sys.executable, "-m", "harness.child", json.dumps(spec)]


class Child:
    def __init__(
        self,
        argv: list[str],
        *,
        stall_s: float | None,
        timeout_s: float,
        name: str,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        bare_result: bool = False,
        sample_rss: bool = False,
    ) -> None:
        """``on_event`` is called, on the reader thread, with every JSON event that has a
        ``"run"`` key (a child that makes several runs reports each as it ends). With
        ``bare_result`` a JSON object without any of the events' keys is the result; with
        ``sample_rss`` the child's VmHWM is read every 0.1 s (``Outcome.sampled_rss_mb``)."""
        self.name = name
        self.on_event = on_event
        self.bare_result = bare_result
        self._sampled_kb: int | None = None
        self.stall_s = stall_s
        self.timeout_s = timeout_s
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(BENCHES), env.get("PYTHONPATH", "")) if p
        )
        self._stderr = tempfile.TemporaryFile(mode="w+b")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=ROOT,
        )
        self._lock = threading.Lock()
        self._progress: Any = None
        self._last_change = self.started
        self._result: dict[str, Any] | None = None
        self._handler_error: str | None = None
        self._ready = threading.Event()
        self._eof = threading.Event()
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if sample_rss:
            threading.Thread(target=self._sample_rss, daemon=True).start()

    def _sample_rss(self) -> None:
        """VmHWM is a high-water mark: its last reading before the process exits is its peak
        (to within what it grew in the last 0.1 s). A zombie has no VmHWM line."""
        status = f"/proc/{self.proc.pid}/status"
        while not self._eof.is_set():
            try:
                with open(status) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            self._sampled_kb = max(self._sampled_kb or 0, int(line.split()[1]))
                            break
            except OSError:
                return
            self._eof.wait(0.1)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            event = None
            if line.startswith("{"):
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
            if not isinstance(event, dict):
                self.lines.append(line)
                continue
            with self._lock:
                if "progress" in event and event["progress"] != self._progress:
                    self._progress = event["progress"]
                    self._last_change = time.monotonic()
                if event.get("ready"):
                    self._ready.set()
                if "result" in event:
                    self._result = event["result"]
                elif self.bare_result and not {"progress", "ready", "run"} & event.keys():
                    self._result = event
            if "run" in event and self.on_event is not None and self._handler_error is None:
                try:
                    self.on_event(event)
                except Exception as exc:  # said as the run's failure, never a hung reader
                    self._handler_error = f"the harness failed on a run event: {exc!r}"
        self._eof.set()

    def _overdue(self) -> str | None:
        now = time.monotonic()
        if now - self.started > self.timeout_s:
            return f"timed out after {self.timeout_s:.0f}s"
        with self._lock:
            idle = now - self._last_change
            seen = self._progress
        if self.stall_s is not None and idle > self.stall_s:
            return f"stalled: no progress for {self.stall_s:.0f}s (last progress {seen})"
        return None

    def wait_ready(self, timeout_s: float) -> str | None:
        """Wait for ``{"ready": true}``; the reason it did not come otherwise."""
        deadline = time.monotonic() + timeout_s
        while not self._ready.wait(0.05):
            if self._eof.is_set():
                return "exited before it was ready: " + self._stderr_tail()
            if time.monotonic() > deadline:
                return f"not ready after {timeout_s:.0f}s"
        return None

    def kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    def finish(self) -> Outcome:
        """Wait for the child (watchdog on), reap it and return what it reported."""
        reason = None
        while not self._eof.wait(0.1):
            reason = self._overdue()
            if reason is not None:
                self.kill()
                break
        self._reader.join(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        try:
            _, status, usage = os.wait4(self.proc.pid, 0)
        except ChildProcessError:
            # Already reaped by someone else (seen once, in a W5 run): its exit status and CPU
            # time are lost. A result line it printed still counts; without one the run fails.
            self.proc.returncode = 0 if self._result is not None else -1
            proc_cpu: float | None = None
        else:
            self.proc.returncode = os.waitstatus_to_exitcode(status)
            proc_cpu = usage.ru_utime + usage.ru_stime
        if reason is None:
            reason = self._handler_error
        if reason is None and self.proc.returncode != 0:
            reason = f"exit {self.proc.returncode}: {self._stderr_tail()}"
        if reason is None and self._result is None:
            reason = "no result line: " + self._stderr_tail()
        self._stderr.close()
        return Outcome(
            ok=reason is None,
            result=self._result,
            error=reason,
            lines=self.lines,
            proc_cpu=proc_cpu,
            sampled_rss_mb=None if self._sampled_kb is None else self._sampled_kb / 1024,
        )

    def _stderr_tail(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        return lines[-1][:500] if lines else "(no stderr)"


def run(argv: list[str], *, stall_s: float | None, timeout_s: float, name: str) -> Outcome:
    return Child(argv, stall_s=stall_s, timeout_s=timeout_s, name=name).finish()
