"""The benchmark harness: ferrokafka beside every peer client, same broker, same
data, one run. Starts a local broker (or uses ``--bootstrap``), writes each dataset once, runs
each client in its own process, alternating rounds, and writes a Markdown table per workload,
a JSON file with every raw figure and the machine, and PNG charts into ``--out``.

    .venv/bin/python benches/harness.py                       # everything, 3 rounds
    .venv/bin/python benches/harness.py --quick               # small sizes, one round
    .venv/bin/python benches/harness.py --workloads W1,W3 --clients ferrokafka,aiokafka

The code is the package next to this file, ``benches/harness/`` (which ``import harness``
finds first: a package wins over a module of the same name in one directory).
"""

import sys

from harness.cli import main

if __name__ == "__main__":
    sys.exit(main())
