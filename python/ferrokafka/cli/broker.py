"""``ferrokafka broker start|stop|status``: a local Apache Kafka broker (or KRaft cluster) that
outlives the command, for trying the client by hand, the demo and benchmarks. Its state file
(``<cache>/run/<name>.json``) is also how the other subcommands find their default bootstrap."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from ..testing.broker import (
    BrokerStartError,
    KafkaBroker,
    KafkaCluster,
    detached_status,
    kafka_version,
    stop_detached,
)
from ..testing.maven import cache_root
from ..testing.security import SECURITY_OPTIONS
from .subcommands import Subcommands

__all__ = ["add_broker_command", "local_bootstrap", "read_state", "usage"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _state_dir() -> Path:
    return cache_root() / "run"


def _state_path(name: str) -> Path:
    return _state_dir() / f"{name}.json"


def _name(value: str) -> str:
    if not _NAME.match(value):
        raise argparse.ArgumentTypeError(
            f"{value!r}: use letters, digits, '.', '_' or '-' (at most 64)"
        )
    return value


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number")
    return number


def _setting(value: str) -> tuple[str, str]:
    """``KEY=VALUE``: one broker setting, as in server.properties."""
    key, sep, setting = value.partition("=")
    key = key.strip()
    if not sep or not key or any(c.isspace() for c in key):
        raise argparse.ArgumentTypeError(
            f"{value!r}: give a broker setting as KEY=VALUE (e.g. log.retention.ms=-1)"
        )
    return key, setting.strip()


def read_state(path: Path) -> dict[str, Any] | None:
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _write_state(path: Path, state: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # A secured broker's state holds its users' passwords: readable by its owner only.
    partial.touch(mode=0o600)
    partial.write_text(json.dumps(state, indent=2) + "\n")
    partial.replace(path)


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ---- broker -----------------------------------------------------------------------------------


def _broker_start(args: argparse.Namespace) -> int:
    name: str = args.name
    path = _state_path(name)
    previous = read_state(path)
    if previous is not None:
        alive = [pid for pid in detached_status(previous).values() if pid is not None]
        if alive:
            _err(
                f"broker {name!r} is already running at {previous.get('bootstrap_servers')} "
                f"(pids {alive}); stop it first: ferrokafka broker stop --name {name}"
            )
            return 1
        stop_detached(previous)  # stale: remove what it left behind
        path.unlink(missing_ok=True)

    version = args.kafka_version or kafka_version()
    secured = f", {args.security} listener" if args.security else ""
    _err(f"starting Kafka {version} ({args.nodes} node(s){secured}) as {name!r}...")
    options: dict[str, Any] = {}
    if args.config:
        options["config"] = dict(args.config)
    if args.security:
        options.update(
            security=args.security, client_auth=args.client_auth, authorizer=args.authorizer
        )
    elif args.client_auth or args.authorizer:
        _err("ferrokafka: --client-auth and --authorizer need --security")
        return 2
    harness: KafkaBroker | KafkaCluster
    try:
        if args.nodes == 1:
            harness = KafkaBroker(
                version=version, start_timeout=args.timeout, new_session=True, **options
            )
        else:
            harness = KafkaCluster(
                args.nodes, version=version, start_timeout=args.timeout, new_session=True, **options
            )
    except ValueError as exc:
        _err(f"ferrokafka: {exc}")
        return 2
    began = time.monotonic()
    try:
        harness.start()
    except BrokerStartError as exc:
        _err(f"ferrokafka: broker did not start: {exc}")
        return 1
    try:
        state = harness.detach()
        state.update(name=name, started_at=time.time())
        _write_state(path, state)
    except BaseException:
        harness.stop()
        raise
    _err(
        f"started in {time.monotonic() - began:.1f}s; logs under {state['directory']}; "
        f"stop with: ferrokafka broker stop --name {name}"
    )
    print(state["bootstrap_servers"], flush=True)
    if "security" in state:
        print(_client_summary(state["bootstrap_servers"], state["security"]), flush=True)
    return 0


def _client_summary(bootstrap: str, security: dict[str, Any]) -> str:
    """What a client of a secured broker needs, one ``name: value`` per line, and an example."""
    protocol = security["protocol"]
    lines = [f"security_protocol: {protocol}"]
    example = [f"bootstrap_servers={bootstrap!r}", f"security_protocol={protocol!r}"]
    if security.get("ca_file"):
        lines.append(f"ssl_cafile: {security['ca_file']}")
        context = f"cafile={security['ca_file']!r}"
        if security.get("client_cert_file"):
            lines.append(f"ssl_certfile: {security['client_cert_file']}")
            lines.append(f"ssl_keyfile: {security['client_key_file']}")
            if security.get("client_auth"):
                context += (
                    f", certfile={security['client_cert_file']!r}"
                    f", keyfile={security['client_key_file']!r}"
                )
        example.append(f"ssl_context=create_ssl_context({context})")
    users: dict[str, str] = security.get("users") or {}
    if users:
        mechanisms = security["sasl_mechanisms"]
        lines.append(f"sasl_mechanisms: {' '.join(mechanisms)}")
        lines += [f"user: {user} {password}" for user, password in users.items()]
        user = "alice" if "alice" in users else next(iter(users))
        example += [
            "sasl_mechanism='SCRAM-SHA-256'",
            f"sasl_plain_username={user!r}",
            f"sasl_plain_password={users[user]!r}",
        ]
    if security.get("authorizer"):
        lines.append("authorizer: StandardAuthorizer, super user User:admin")
    lines.append(f"plaintext_bootstrap_servers: {security['plaintext_bootstrap_servers']}")
    lines.append(
        "example: from ferrokafka.helpers import create_ssl_context; "
        f"AIOKafkaProducer({', '.join(example)})"
        if security.get("ca_file")
        else f"example: AIOKafkaProducer({', '.join(example)})"
    )
    return "\n".join(lines)


def _broker_stop(args: argparse.Namespace) -> int:
    path = _state_path(args.name)
    state = read_state(path)
    if state is None:
        _err(f"no broker named {args.name!r} (no {path})")
        return 1
    pids = stop_detached(state, timeout=args.timeout)
    path.unlink(missing_ok=True)
    print(f"stopped {args.name!r} (pids {pids})" if pids else f"{args.name!r} was not running")
    return 0


def _broker_status(args: argparse.Namespace) -> int:
    if args.name is not None:
        paths = [_state_path(args.name)]
    else:
        paths = sorted(_state_dir().glob("*.json")) if _state_dir().is_dir() else []
    if not paths:
        print("no brokers started by ferrokafka")
        return 0
    all_running = True
    for path in paths:
        state = read_state(path)
        if state is None:
            print(
                f"{path.stem}: not started"
                if not path.exists()
                else f"{path.stem}: unreadable {path}"
            )
            all_running = False
            continue
        status = detached_status(state)
        up = sum(1 for pid in status.values() if pid is not None)
        word = "running" if up == len(status) else ("stopped" if up == 0 else "degraded")
        all_running = all_running and word == "running"
        nodes = " ".join(f"{i}={pid if pid is not None else '-'}" for i, pid in status.items())
        protocol = (state.get("security") or {}).get("protocol")
        secured = f" {protocol}" if protocol else ""
        print(
            f"{path.stem}: {word} {state.get('bootstrap_servers')}{secured} "
            f"Kafka {state.get('kafka_version')} nodes {nodes}"
        )
    return 0 if args.name is None or all_running else 1


def add_broker_command(subcommands: Subcommands) -> None:
    """``ferrokafka broker start|stop|status``."""
    broker = subcommands.add_parser(
        "broker", help="run a local Apache Kafka broker or KRaft cluster (needs java and mvn)"
    )
    broker.set_defaults(handler=lambda _args: usage(broker))
    actions = broker.add_subparsers(metavar="ACTION")

    start = actions.add_parser(
        "start", help="start a broker that keeps running; prints its bootstrap address"
    )
    start.add_argument("--nodes", type=_positive, default=1, help="KRaft nodes (default 1)")
    start.add_argument("--name", type=_name, default="default", help="default: 'default'")
    start.add_argument("--kafka-version", help="Apache Kafka release (default: the pinned one)")
    start.add_argument("--timeout", type=float, default=120.0, help="start timeout, seconds")
    start.add_argument(
        "--config",
        type=_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a broker setting over the harness's own (server.properties names); repeatable",
    )
    start.add_argument(
        "--security",
        choices=SECURITY_OPTIONS,
        help="secure the client listener (a throwaway CA and certificates, SASL users with "
        "random passwords); prints what a client needs, passwords included",
    )
    start.add_argument(
        "--client-auth", action="store_true", help="TLS: require a client certificate"
    )
    start.add_argument(
        "--authorizer",
        action="store_true",
        help="run StandardAuthorizer (super user: admin); ACLs decide for the other users",
    )
    start.set_defaults(handler=_broker_start)

    stop = actions.add_parser("stop", help="stop a broker started with 'broker start'")
    stop.add_argument("--name", type=_name, default="default")
    stop.add_argument("--timeout", type=float, default=30.0, help="SIGKILL after this long")
    stop.set_defaults(handler=_broker_stop)

    status = actions.add_parser("status", help="list brokers started with 'broker start'")
    status.add_argument("--name", type=_name, default=None, help="only this one")
    status.set_defaults(handler=_broker_status)


def usage(parser: argparse.ArgumentParser) -> int:
    """A command given without its action: its help, on stderr, exit 2."""
    parser.print_help(sys.stderr)
    return 2


def local_bootstrap(name: str = "default") -> str | None:
    """The bootstrap address of the broker ``ferrokafka broker start --name NAME`` left running,
    or None. A secured one is reached through its PLAINTEXT listener, so that the default works
    without security flags."""
    state = read_state(_state_path(name))
    if state is None or not any(pid is not None for pid in detached_status(state).values()):
        return None
    security = state.get("security") or {}
    address = security.get("plaintext_bootstrap_servers") or state.get("bootstrap_servers")
    return address if isinstance(address, str) else None
