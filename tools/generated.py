"""What the page generators (gen_cli_docs.py, gen_config_docs.py) share: write a generated page,
or with ``--check`` only say whether it is stale."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(root: Path, page: Path, text: str, *, check: bool, tool: str) -> int:
    """Exit status: 0 when ``page`` (under ``root``) already holds ``text``; with ``check``, 1
    when it does not; otherwise the page is (re)written and 0."""
    path = root / page
    current = path.read_text(encoding="utf-8") if path.exists() else None
    if current == text:
        return 0
    if check:
        print(f"{page} is stale: run python tools/{tool}", file=sys.stderr)
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {page}")
    return 0
