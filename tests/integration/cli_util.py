"""Running the ``ferrokafka`` command in-process, as the command-line tests do."""

from __future__ import annotations

import pytest
from ferrokafka.cli import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of ``ferrokafka *argv``."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
