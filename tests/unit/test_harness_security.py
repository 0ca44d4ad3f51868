"""What the harness writes for a secured client listener (no broker needed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ferrokafka.testing import KafkaBroker
from ferrokafka.testing.security import ListenerSecurity


def _config(material: object, **ports: int) -> dict[str, str]:
    from ferrokafka.testing.security import SecurityMaterial

    assert isinstance(material, SecurityMaterial)
    return material.broker_config(
        port=ports.get("port", 1000),
        internal_port=ports.get("internal_port", 1001),
        controller_port=ports.get("controller_port", 1002),
        host="127.0.0.1",
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"protocol": "tls"}, "security must be one of"),
        ({"protocol": "sasl_plaintext", "client_auth": True}, "client_auth needs a TLS"),
        ({"protocol": "ssl", "server_hostnames": ()}, "at least one host"),
        ({"protocol": "sasl_ssl", "users": ("alice",)}, "must include 'admin'"),
        ({"protocol": "sasl_ssl", "users": ("admin", "a b")}, "user name 'a b'"),
    ],
)
def test_listener_options_are_checked(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ListenerSecurity(**options)  # type: ignore[arg-type]


def test_the_harness_refuses_broker_options_without_a_secured_listener() -> None:
    with pytest.raises(ValueError, match="need a secured listener"):
        KafkaBroker(authorizer=True)


def test_sasl_plaintext_listener_users_and_scram_format_flags(tmp_path: Path) -> None:
    material = ListenerSecurity("sasl_plaintext", authorizer=True).make_material(tmp_path)
    assert set(material.users) == {"admin", "alice"}
    assert material.ca_file is None and not (tmp_path / "tls").exists()
    config = _config(material)
    assert config["listeners"] == (
        "SASL_PLAINTEXT://127.0.0.1:1000,CONTROLLER://127.0.0.1:1002,INTERNAL://127.0.0.1:1001"
    )
    assert config["advertised.listeners"] == (
        "SASL_PLAINTEXT://127.0.0.1:1000,INTERNAL://127.0.0.1:1001"
    )
    assert config["inter.broker.listener.name"] == "INTERNAL"
    assert config["sasl.enabled.mechanisms"] == "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER"
    plain = config["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    for user, password in material.users.items():
        assert f'user_{user}="{password}"' in plain
    assert (
        "ScramLoginModule" in config["listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config"]
    )
    assert config["super.users"] == "User:admin;User:ANONYMOUS"
    assert "StandardAuthorizer" in config["authorizer.class.name"]
    flags = material.format_flags()
    assert flags.count("--add-scram") == 4
    alice = material.users["alice"]
    assert f"SCRAM-SHA-256=[name=alice,password={alice}]" in flags
    assert f"SCRAM-SHA-512=[name=alice,password={alice}]" in flags
    assert all(password not in repr(material) for password in material.users.values())


def test_tls_material_is_pem_with_pkcs8_keys(tmp_path: Path) -> None:
    material = ListenerSecurity(
        "ssl", client_auth=True, server_hostnames=("wrong.example",)
    ).make_material(tmp_path)
    assert material.users == {}
    assert material.ca_file is not None and material.server_key_file is not None
    assert material.client_key_file is not None
    assert material.server_key_file.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert material.client_key_file.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert material.server_key_file.stat().st_mode & 0o077 == 0
    config = _config(material)
    assert config["listener.security.protocol.map"] == (
        "CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,SSL:SSL"
    )
    assert config["listener.name.ssl.ssl.client.auth"] == "required"
    assert config["listener.name.ssl.ssl.truststore.location"] == str(material.ca_file)
    inline = config["listener.name.ssl.ssl.keystore.key"]
    assert "\n" not in inline and inline.startswith("-----BEGIN PRIVATE KEY-----\\n")

    from cryptography import x509

    server = x509.load_pem_x509_certificate(
        config["listener.name.ssl.ssl.keystore.certificate.chain"].replace("\\n", "\n").encode()
    )
    names = server.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["wrong.example"]
