"""Write docs/cli.md, the command line's page: a short guide with examples, then the ``--help``
of every subcommand, rendered by argparse at 100 columns.

    python tools/gen_cli_docs.py          rewrite the page when stale
    python tools/gen_cli_docs.py --check  write nothing; exit 1 when the page is stale

argparse's layout differs a little between Python versions: run it with the project's venv.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = Path("docs/cli.md")
WIDTH = 100

sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tools"))  # when imported by a test, not run

from generated import write_or_check  # noqa: E402

INTRO = """\
# The command line

`ferrokafka` is installed with the package (`pip install ferrokafka[cli]` adds
[rich](https://github.com/Textualize/rich) for tables and live progress on a terminal; without it
the output is plain text). `python -m ferrokafka` is the same command. In the spirit of
[kcat](https://github.com/edenhill/kcat) and Kafka's own console tools, it reads and writes
records, manages topics and consumer groups, measures throughput and runs a local broker:

| command | what it does |
|---|---|
| `consume` | records of a topic (or read as a group member) to stdout |
| `produce` | one record per line of stdin or a file |
| `topics` | `list`, `describe`, `create`, `delete`, `add-partitions` |
| `groups` | `list`, `describe` (members, committed offsets, lag), `reset-offsets`, `delete` |
| `bench` | produce then consume N records; `bench harness` runs the comparison harness |
| `broker` | `start`, `stop`, `status` of a local Apache Kafka broker or KRaft cluster |
| `demo` | the main job: a local broker, a topic, the cluster as ferrokafka sees it |

## Connecting

Every command that talks to a cluster takes `-b/--bootstrap-server HOST:PORT[,...]`. Without it,
the broker `ferrokafka broker start` left running is used (a secured one through its PLAINTEXT
listener), else `localhost:9092`. Security flags follow the client's options:
`--security-protocol`, `--sasl-mechanism`, `--sasl-username`, `--sasl-password` (or the
`FERROKAFKA_SASL_PASSWORD` environment variable, which keeps it off the command line and out of
`ps`), `--ssl-cafile`, `--ssl-certfile`, `--ssl-keyfile`. Any other client option goes through
`-X name=value` with aiokafka's name (`-X request_timeout_ms=5000`; `request.timeout.ms` is
read the same way).

```sh
ferrokafka broker start                        # prints its bootstrap address
ferrokafka topics list                         # uses that broker
ferrokafka topics list -b kafka-1:9092,kafka-2:9092
FERROKAFKA_SASL_PASSWORD=... ferrokafka topics list -b kafka:9093 \\
    --security-protocol SASL_SSL --sasl-mechanism SCRAM-SHA-512 --sasl-username alice \\
    --ssl-cafile ca.pem
```

## Output, errors and exit codes

On stdout there is only data: records, or rows. A table is drawn with rich when stdout is a
terminal and is tab-separated with a header line when it is piped; `--format json` gives one
JSON object per line. Progress (records/s, bytes, lag left) and summaries go to stderr, and only
when stderr is a terminal.

A failure is one line on stderr, `ferrokafka: error: ...`, with exit code 1 (2 for bad flags);
`--debug` shows the traceback and the client's debug log, `-v`/`-vv` its warnings/info lines.
Ctrl-C closes the clients (a group member commits what it printed first) and exits 130.

## consume

```sh
ferrokafka consume -t events                            # every record, then exit
ferrokafka consume -t events --format json -c 10        # the first 10 as JSON lines
ferrokafka consume -t events -p 0 --offset -5           # the last 5 records of partition 0
ferrokafka consume -t events --from-timestamp 2024-05-01T12:00:00Z --to-timestamp 1714572000000
ferrokafka consume -t events -f                         # new records as they come
ferrokafka consume -t events -g audit -f                # as a member of group audit, committing
```

Without `--follow` it stops at the end offsets seen when it started, as `kcat -e` does. It
starts at the beginning, or at the end with `--follow`; with `-g`, at the group's committed
offsets. A JSON line holds `topic`, `partition`, `offset`, `timestamp` (ms), `key`, `value` and
`headers` (a list of `[key, value]` pairs, values as UTF-8 text). Keys and values are decoded
as UTF-8 by default; `--value-decoder json` embeds JSON values as JSON, `--value-decoder bytes`
writes them (and header values) as base64 in JSON and unchanged in `--format raw` (so
`consume > file` keeps binary values whole).

## produce

```sh
echo hello | ferrokafka produce -t events
ferrokafka produce -t events -K : < lines.txt           # "key:value" per line
ferrokafka produce -t events -H source=cli -H team=data --compression-type zstd --acks all
ferrokafka produce -t events --file dump.txt -p 3
```

Each line (without its newline) is one record. It exits 1 if any record was not written,
saying how many and the first error.

## topics

```sh
ferrokafka topics create events --partitions 6 --replication-factor 3 --config retention.ms=86400000
ferrokafka topics describe events --configs             # leaders, replicas, ISR, configs
ferrokafka topics add-partitions events --partitions 12
ferrokafka topics delete events
```

A change returns once every broker's metadata shows it.

## groups

```sh
ferrokafka groups list
ferrokafka groups describe audit                        # state, members, committed offsets, lag
ferrokafka groups reset-offsets audit --topic events --to-datetime 2024-05-01T00:00:00 --dry-run
ferrokafka groups reset-offsets audit --all-topics --shift-by -100
ferrokafka groups delete audit old-audit                # groups without members, and their offsets
```

`reset-offsets` prints its plan and, unless `--dry-run`, commits it; like Kafka's tool it refuses
while the group has members. New offsets are kept within each partition's log.

`delete` prints one line per group, `deleted` or why not (a group with members is not deleted,
nor is one its coordinator does not know), and exits 1 when any group was not deleted.

## bench

```sh
ferrokafka bench --records 1000000 --record-size 200    # a fresh topic, deleted afterwards
ferrokafka bench harness --quick                        # benches/harness.py (source checkout)
```

It prints records/s and MB/s of producing, of reading back with `getmany`, and with
`getmany_arrow` when pyarrow is installed.

## Reference

The `--help` of each command.
"""


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def render() -> str:
    # argparse wraps at the terminal's width less 2.
    os.environ["COLUMNS"] = str(WIDTH + 2)
    from ferrokafka.cli import build_parser

    lines = [INTRO.rstrip("\n")]
    for path, parser in _commands(build_parser()):
        name = " ".join(("ferrokafka", *path))
        lines += ["", f"### `{name}`", "", "```text", parser.format_help().rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args(argv)
    text = render()
    return write_or_check(ROOT, PAGE, text, check=args.check, tool="gen_cli_docs.py")


if __name__ == "__main__":
    sys.exit(main())
