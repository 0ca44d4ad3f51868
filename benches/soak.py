"""A chaos soak with nothing lost: a three-node KRaft cluster behind fault proxies, an
idempotent producer (``acks=all``) writing sequence-numbered records to 12 partitions, and four
group members that process (record to a log) and commit by hand, while brokers and members are
SIGKILLed and restarted and the network between the clients and the brokers degrades.

At the end it verifies that every acknowledged record was processed, that no committed offset
was ever ahead of a processed record, that every duplicate follows a member's death or a
rebalance before a commit, and that the producer wrote no duplicates and kept each partition's
order; it reports recovery times per fault kind and each member's RSS slope, prints a Markdown
table, writes the raw figures as JSON, and exits non-zero if anything was lost or unexplained.
See benches/soak/driver.py for the faults and the definitions.

    .venv/bin/python benches/soak.py --minutes 30               # the soak of the README
    .venv/bin/python benches/soak.py --minutes 1 --gap 1,3      # the short version of the tests
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from soak.driver import main


def _gap(text: str) -> tuple[float, float]:
    low, _, high = text.partition(",")
    gap = (float(low), float(high or low))
    if not 0 <= gap[0] <= gap[1]:
        raise argparse.ArgumentTypeError(f"--gap wants MIN,MAX seconds with MIN <= MAX: {text!r}")
    return gap


def _positive(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=_positive, default=10.0, help="faults for this long")
    parser.add_argument("--rate", type=_positive, default=2000.0, help="records per second")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument(
        "--protocol",
        choices=["classic", "consumer", "both"],
        default="both",
        help="the group protocol; both: classic for the first half, KIP-848 for the second",
    )
    parser.add_argument(
        "--gap", type=_gap, default=(5.0, 20.0), help="seconds between faults: MIN,MAX"
    )
    parser.add_argument(
        "--recover-timeout",
        type=_positive,
        default=120.0,
        help="seconds after a fault's end before it counts as not recovered",
    )
    parser.add_argument(
        "--drain-timeout", type=_positive, default=180.0, help="seconds to drain at the end"
    )
    parser.add_argument("--out", help="the JSON of raw figures (default: in the work directory)")
    parser.add_argument("--workdir", help="the logs' directory (default: a new temporary one)")
    args = parser.parse_args()
    if args.out and (Path(args.out).is_dir() or not Path(args.out).parent.is_dir()):
        # Checked now, not when the figures are written at the end of the run.
        parser.error(f"--out {args.out}: wants a file path in an existing directory")
    sys.exit(main(args))
