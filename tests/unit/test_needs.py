"""The GSSAPI tests' check of the machine: skipped with one line outside CI, never under CI."""

from __future__ import annotations

import pytest
from ferrokafka.testing import kerberos

from .. import needs


def _no_kdc() -> dict[str, str]:
    raise kerberos.KerberosError("MIT Kerberos programs not found on PATH or in /usr/sbin: krb5kdc")


def test_missing_kerberos_skips_the_module_with_its_reason_outside_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kerberos, "find_kerberos_programs", _no_kdc)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        needs.kerberos_or_skip_module()
    reason = str(info.value)
    assert reason.startswith("GSSAPI tests: MIT Kerberos programs not found") and "\n" not in reason


def test_under_ci_nothing_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kerberos, "find_kerberos_programs", _no_kdc)
    monkeypatch.setenv("CI", "true")
    needs.kerberos_or_skip_module()  # returns: the tests then fail on what is missing
