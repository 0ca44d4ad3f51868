"""The harness's own broker collects its heap on demand and reports the pauses in a window
(W5 collects before each run so that no broker pause falls in one client's run and not
another's, and records any that do)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches"))

from harness.broker import BrokerGC, broker  # noqa: E402


def test_pauses_are_read_from_the_log_within_the_window(tmp_path: Path) -> None:
    log = tmp_path / "gc.log"
    log.write_text(
        "[2026-11-26T02:31:17.243+0000] Using G1\n"
        "[2026-11-26T02:31:17.243+0000] GC(78) Pause Young (Normal) (G1 Evacuation Pause)"
        " 453M->182M(512M) 18.741ms\n"
        "[2026-11-26T02:31:22.870+0000] GC(79) Pause Full (System.gc()) 452M->82M(512M)"
        " 112.614ms\n"
        "[2026-11-26T02:31:28.397+0000] GC(80) Pause Remark 453M->182M(512M) 6.3ms\n"
    )
    gc = BrokerGC(log, pid=0)
    at = 1795660277.243  # 2026-11-26T02:31:17.243Z
    assert gc.pauses(at, at + 11.2) == [18.741, 112.614, 6.3]
    assert gc.pauses(at + 1, at + 6) == [112.614]
    assert gc.pauses(at + 12, at + 20) == []


@pytest.mark.timeout(300)
def test_the_harness_broker_collects_and_logs_the_pause() -> None:
    with broker() as b:
        assert b.gc is not None and "1.5 GiB young" in b.description
        before = time.time()
        b.gc.collect()
        pauses = b.gc.pauses(before - 1, time.time() + 1)
        # jcmd GC.run is a full, stop-the-world collection (no ExplicitGCInvokesConcurrent).
        assert len(pauses) >= 1 and all(ms > 0 for ms in pauses)
        assert "Pause Full (Diagnostic Command)" in b.gc.log.read_text()
