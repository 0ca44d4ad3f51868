"""The native module's decoding crates read what a broker sends: Cargo.toml admits none of
their releases with a known advisory, and PyO3 stays on the minor version whose object layout
the record allocator was written for (an upgrade is a deliberate step)."""

from __future__ import annotations

import re
from pathlib import Path

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
    """The version requirement of `name` in Cargo.toml (`name = "v"` or `{ version = "v" }`;
    read with a pattern, since tomllib is not in Python 3.10)."""
    text = (ROOT / "Cargo.toml").read_text()
    found = re.search(rf'(?m)^{name} = (?:"([^"]+)"|\{{ *version = "([^"]+)")', text)
    assert found, f"{name} is not a dependency in Cargo.toml"
    return found.group(1) or found.group(2)


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
    lock = (ROOT / "Cargo.lock").read_text()
    packages = re.findall(r'(?m)^name = "([^"]+)"\nversion = "([^"+]+)', lock)
    locked = {name: least(version) for name, version in packages}
    for name, floor in FLOORS.items():
        assert locked[name] >= floor, name


def test_pyo3_is_pinned_to_the_minor_version_of_the_layout_check() -> None:
    req = requirement("pyo3")
    assert req.startswith(("~0.29", "=0.29")), f"pyo3 = {req!r}"
