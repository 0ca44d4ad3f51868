"""What the Kafka and the Spark harnesses share: a temporary directory for their processes'
configs, data and logs (removed on stop unless kept), a start that tries again on fresh ports when
a process finds its chosen port taken, and the context-manager protocol."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, TypeVar

__all__ = ["LocalHarness", "PortTaken"]

_START_ATTEMPTS = 3
_Harness = TypeVar("_Harness", bound="LocalHarness")


class PortTaken(Exception):
    """A process could not bind a port chosen for it: something took it since it was free."""


class LocalHarness:
    """Processes started on loopback under one temporary directory. Subclasses implement
    ``start`` (through :meth:`_start_on_fresh_ports`) and ``stop``, and name the environment
    variable that keeps the directory by default (``_keep_variable``) and when it goes
    otherwise (``_removed``, for error messages)."""

    _keep_variable: ClassVar[str]
    _removed: ClassVar[str]

    def __init__(
        self, *, start_timeout: float, stop_timeout: float, keep_dirs: bool | None
    ) -> None:
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        if keep_dirs is None:
            keep_dirs = os.environ.get(self._keep_variable, "") not in ("", "0")
        self.keep_dirs = keep_dirs
        self._root: Path | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._started = False

    @property
    def directory(self) -> Path:
        """The temporary directory holding the processes' configs, data and logs."""
        self._require_started()
        assert self._root is not None
        return self._root

    def start(self: _Harness) -> _Harness:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: _Harness) -> _Harness:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _require_started(self) -> None:
        if not self._started:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() first")

    def _make_directory(self, prefix: str, base_dir: str | os.PathLike[str] | None = None) -> Path:
        base = os.fspath(base_dir) if base_dir is not None else None
        self._root = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
        return self._root

    def _start_on_fresh_ports(
        self, launch: Callable[[], None], abort: Callable[[], None], error: type[Exception]
    ) -> None:
        """Run ``launch``; when it raises :class:`PortTaken`, ``abort`` and launch again (it
        picks fresh ports), three times at most, then raise ``error``. Any other exception
        aborts and is raised."""
        for attempt in range(_START_ATTEMPTS):
            try:
                launch()
                return
            except PortTaken:
                abort()
                if attempt == _START_ATTEMPTS - 1:
                    raise error("three attempts found the chosen ports taken") from None
            except BaseException:
                abort()
                raise

    def _where(self, log_path: Path) -> str:
        """Where a process's log can be read, for error messages."""
        if self.keep_dirs:
            return f"log {log_path}"
        return f"log removed {self._removed}; {self._keep_variable}=1 keeps it"

    def _cancel_finalizer(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None

    def _release_directory(self) -> None:
        """Cancel the exit-time clean-up and remove the directory unless it is kept."""
        self._cancel_finalizer()
        if self._root is not None and not self.keep_dirs:
            shutil.rmtree(self._root, ignore_errors=True)
