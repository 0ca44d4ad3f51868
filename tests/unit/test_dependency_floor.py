"""The native module's decoding crates read what a broker sends: Cargo.toml admits none of
their releases with a known advisory, and PyO3 stays on the minor version whose object layout
the record allocator was written for (an upgrade is a deliberate step)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

#: The lowest release each may be: lz4_flex 0.11.6 fixed RUSTSEC-2026-0041 (block decoding
#: into a reused buffer could leak its earlier contents); flate2 1.1 brings a zlib-rs past its
#: stack overflow on malicious input.
FLOORS = {
    "lz4_flex": (0, 11, 6),
    "flate2": (1, 1, 0),
    "snap": (1, 1, 0),
    "zstd": (0, 13, 0),
}


def requirement(name: str) -> str:
    dep: Any = tomllib.loads((ROOT / "Cargo.toml").read_text())["dependencies"][name]
    return str(dep if isinstance(dep, str) else dep["version"])


def least(req: str) -> tuple[int, ...]:
    """The least version a caret (or tilde) requirement admits."""
    parts = [int(p) for p in req.lstrip("^~=").split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def test_decoding_crates_admit_no_release_with_a_known_advisory() -> None:
    for name, floor in FLOORS.items():
        req = requirement(name)
        assert not req.startswith(("<", ">", "*")), f"{name} = {req!r}: a plain minimum, please"
        assert least(req) >= floor, f"{name} = {req!r} admits releases before {floor}"


def test_the_locked_versions_meet_the_floors() -> None:
    lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
    locked = {p["name"]: least(p["version"].split("+")[0]) for p in lock["package"]}
    for name, floor in FLOORS.items():
        assert locked[name] >= floor, name


def test_pyo3_is_pinned_to_the_minor_version_of_the_layout_check() -> None:
    req = requirement("pyo3")
    assert req.startswith(("~0.29", "=0.29")), f"pyo3 = {req!r}"
