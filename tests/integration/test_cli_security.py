"""The command line's security flags against a SASL_SSL broker: TLS verified against
``--ssl-cafile``, SCRAM with the password taken from the environment; a wrong password fails
in one line that does not repeat it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from ferrokafka.testing import KafkaBroker

pytestmark = pytest.mark.integration


def spawn(*argv: str, password: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ferrokafka", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "FERROKAFKA_SASL_PASSWORD": password},
    )


def test_sasl_ssl_round_trip_and_a_wrong_password(sasl_ssl_broker: KafkaBroker) -> None:
    broker = sasl_ssl_broker
    topic = f"fk-cli-sasl-{uuid.uuid4().hex[:10]}"
    broker.create_topic(topic)
    try:
        secured = [
            "-b", broker.bootstrap_servers, "--security-protocol", "SASL_SSL",
            "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", "alice",
            "--ssl-cafile", str(broker.ca_file),
        ]  # fmt: skip
        password = broker.users["alice"]
        produced = spawn("produce", "-t", topic, *secured, password=password, stdin="a\nb\n")
        assert produced.returncode == 0, produced.stderr
        consumed = spawn("consume", "-t", topic, "--format", "json", *secured, password=password)
        assert consumed.returncode == 0, consumed.stderr
        assert [json.loads(line)["value"] for line in consumed.stdout.splitlines()] == ["a", "b"]

        wrong = spawn("topics", "list", *secured, password="not-" + password)
        assert wrong.returncode == 1
        assert len(wrong.stderr.splitlines()) == 1
        assert wrong.stderr.startswith("ferrokafka: error: ")
        assert "Authentication" in wrong.stderr
        assert password not in wrong.stderr and "not-" not in wrong.stderr
    finally:
        broker.delete_topic(topic)
