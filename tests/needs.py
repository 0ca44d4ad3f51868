"""What a group of tests needs from the machine, and what happens when it is missing: outside CI
the group is skipped with one line saying why; under ``CI=true`` nothing is skipped, and the
tests fail on what is missing."""

from __future__ import annotations

import importlib.util
import os

import pytest

CLUSTER_START_S = 240.0
"""How long a test's three-node cluster may take to start, or one of its nodes to restart:
three JVMs beside the rest of ``make test`` on two cores have taken over two minutes."""


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def kerberos_or_skip_module() -> None:
    """At the top of a GSSAPI test module: MIT Kerberos's programs and the ``gssapi`` binding
    (``tools/bootstrap --dev`` installs both, as root)."""
    if in_ci():
        return
    from ferrokafka.testing.kerberos import KerberosError, find_kerberos_programs

    try:
        find_kerberos_programs()
    except KerberosError as e:
        pytest.skip(f"GSSAPI tests: {e}", allow_module_level=True)
    if importlib.util.find_spec("gssapi") is None:
        pytest.skip(
            "GSSAPI tests: the gssapi binding is not installed (tools/bootstrap --dev builds it "
            "where MIT Kerberos's headers are)",
            allow_module_level=True,
        )
