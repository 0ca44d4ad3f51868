"""The package version has one source, Cargo.toml: the native module, the package and the
installed distribution all say the same."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import ferrokafka
from ferrokafka import _native
from ferrokafka.conn import CLIENT_SOFTWARE_VERSION


def test_one_version_everywhere() -> None:
    cargo = (Path(__file__).resolve().parents[2] / "Cargo.toml").read_text()
    match = re.search(r'^version = "([^"]+)"', cargo, re.MULTILINE)
    assert match is not None
    version = match.group(1)
    assert ferrokafka.__version__ == _native.__version__ == version
    assert CLIENT_SOFTWARE_VERSION == version
    assert importlib.metadata.version("ferrokafka") == version
