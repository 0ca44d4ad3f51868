"""Processes and ports for the broker harness (POSIX only).

A broker is a JVM we spawn ourselves (``posix_spawn``: its pid is the JVM's, there is no shell in
between) and reap with ``waitpid``; or, for ``ferrokafka broker stop``, a pid read back from a
state file, which is only signalled while its command line still names its own config file, so a
recycled pid is never hit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._rng import rng

__all__ = [
    "LOOPBACK",
    "TrackedProcess",
    "free_ports",
    "log_tail",
    "pid_matches",
    "spawn",
    "stop_all",
]

LOOPBACK = "127.0.0.1"


def _ephemeral_port_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_ports(count: int, host: str = LOOPBACK) -> list[int]:
    """``count`` distinct loopback ports that can be bound now.

    They are drawn below the kernel's ephemeral range when possible: a port from that range can
    be taken at any moment as the local end of some outgoing connection, which would make a
    restarted node fail to bind its old port.
    """
    low, _ = _ephemeral_port_range()
    candidates = list(range(20000, low)) if low > 21000 else []
    rng.shuffle(candidates)
    held: list[socket.socket] = []
    try:
        for port in candidates:
            if len(held) == count:
                break
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.bind((host, port))
            except OSError:
                sock.close()
                continue
            held.append(sock)
        while len(held) < count:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            held.append(sock)
        return [s.getsockname()[1] for s in held]
    finally:
        for sock in held:
            sock.close()


def pid_matches(pid: int, marker: str | None) -> bool:
    """Whether ``pid`` is a live (non-zombie) process whose command line contains ``marker``."""
    if Path("/proc/self").exists():
        proc = Path("/proc") / str(pid)
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            return False
        state = stat[stat.rindex(")") + 2 :][:1]
        if state in ("Z", "X", "x"):
            return False
        if marker is None:
            return True
        try:
            return marker.encode() in (proc / "cmdline").read_bytes()
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # not ours to signal
    return True


class TrackedProcess:
    """A broker JVM identified by pid and by a marker in its command line (its config path),
    so a recycled pid is never signalled."""

    def __init__(self, pid: int, marker: str, *, child: bool) -> None:
        self.pid = pid
        self.marker = marker
        self.child = child
        self.returncode: int | None = None
        self.finished = False

    def poll(self) -> bool:
        """True once the process has exited."""
        if self.finished:
            return True
        if self.child:
            try:
                waited, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.child = False  # someone else reaped it; fall back to /proc
            else:
                if waited == 0:
                    return False
                self.returncode = os.waitstatus_to_exitcode(status)
                self.finished = True
                return True
        if not pid_matches(self.pid, self.marker):
            self.finished = True
        return self.finished

    def send(self, sig: int) -> None:
        if self.poll():
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.poll():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def kill(self) -> None:
        self.send(signal.SIGKILL)
        if not self.wait(30.0):
            raise RuntimeError(f"process {self.pid} survived SIGKILL for 30 s")

    def terminate(self, timeout: float) -> None:
        """SIGTERM (a clean Kafka shutdown), then SIGKILL after ``timeout`` seconds."""
        self.send(signal.SIGTERM)
        if not self.wait(timeout):
            self.kill()


def stop_all(processes: Sequence[TrackedProcess], timeout: float, *, sig: int) -> None:
    """Send ``sig`` to every process, then SIGKILL those still running after ``timeout``."""
    # All at once: Kafka nodes stopped one by one would leave the last ones waiting for a
    # controller quorum that is already gone.
    for process in processes:
        process.send(sig)
    deadline = time.monotonic() + timeout
    for process in processes:
        if not process.wait(max(0.0, deadline - time.monotonic())):
            process.kill()


def spawn(
    argv: Sequence[str],
    log_path: Path,
    *,
    new_session: bool,
    env: Mapping[str, str] | None = None,
) -> int:
    """Start ``argv`` (a path, not looked up on ``PATH``) with stdout and stderr appended to
    ``log_path``; ``env`` defaults to this process's environment. Returns the pid."""
    file_actions: list[tuple[Any, ...]] = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(log_path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    # Python ignores SIGPIPE and SIGXFSZ; ignored signals survive exec, so restore them.
    return os.posix_spawn(
        argv[0],
        list(argv),
        dict(os.environ if env is None else env),
        file_actions=file_actions,
        setsid=new_session,
        setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
    )


def log_tail(path: Path, lines: int = 30) -> str:
    """The end of a log, with its first ERROR/FATAL lines when they are further up."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"<no log at {path}: {exc}>"
    all_lines = text.splitlines()
    # The line that explains a failure is often far above the shutdown noise it triggers.
    errors = [ln for ln in all_lines if " ERROR " in ln or " FATAL " in ln][:5]
    tail = all_lines[-lines:]
    picked = [ln for ln in errors if ln not in tail]
    if picked:
        return "\n".join(["first errors:", *picked, "last lines:", *tail])
    return "\n".join(tail)
