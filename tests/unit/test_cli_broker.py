"""``ferrokafka broker start --config KEY=VALUE``: what is accepted, what is refused and how."""

from __future__ import annotations

import argparse

import pytest
from ferrokafka.cli.broker import add_broker_command


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ferrokafka")
    add_broker_command(parser.add_subparsers())
    return parser.parse_args(["broker", "start", *argv])


def test_settings_are_collected_in_order_and_values_may_hold_equals_signs() -> None:
    args = _parse("--config", "log.retention.ms=-1", "--config", " a.b = x=y ")
    assert args.config == [("log.retention.ms", "-1"), ("a.b", "x=y")]
    assert _parse().config == []


@pytest.mark.parametrize("bad", ["log.retention.ms", "=1", "a b=1", ""])
def test_a_setting_without_a_key_and_value_is_refused_with_an_example(
    bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        _parse("--config", bad)
    assert exited.value.code == 2
    assert "KEY=VALUE" in capsys.readouterr().err
