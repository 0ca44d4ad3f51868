"""Secured client listeners for the harness's brokers: TLS material, SASL users, the listener
settings and the storage-format flags that create SCRAM users.

A secured node keeps its controller and inter-broker traffic on PLAINTEXT listeners of their own
(``CONTROLLER`` and ``INTERNAL``), so the broker needs no credentials of its own; only the client
listener (named after its protocol: ``SSL``, ``SASL_PLAINTEXT`` or ``SASL_SSL``) is secured.

Certificates come from ``trustme`` (over ``cryptography``): a throwaway CA, a server certificate
(by default for ``localhost`` and ``127.0.0.1``) and a client certificate for mutual TLS, all
written as PEM files. Kafka takes PEM keys as PKCS#8 only; it reads a key store *file* only with
``ssl.key.password`` set, and decrypts only PBES1 keys that way (Java 17 has no "PBES2" key
factory, and PBES2 is all ``cryptography`` writes), so the broker gets the server key unencrypted
and inline (``ssl.keystore.key`` with ``ssl.keystore.certificate.chain``), while the trust store
is the CA's file. Passwords are random per broker and never logged.
"""

from __future__ import annotations

import base64
import json
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from ..abc import AbstractTokenProvider

__all__ = [
    "ENABLED_SASL_MECHANISMS",
    "OAUTH_SCOPE",
    "SASL_MECHANISMS",
    "SECURITY_OPTIONS",
    "SUPER_USER",
    "ListenerSecurity",
    "Security",
    "SecurityMaterial",
    "UnsecuredTokenProvider",
    "kerberos_listener_config",
    "unsecured_jwt",
]

Security = Literal["ssl", "sasl_plaintext", "sasl_ssl"]
#: The values of ``security=`` (and of ``ferrokafka broker start --security``).
SECURITY_OPTIONS: tuple[str, ...] = get_args(Security)
#: The SASL mechanisms a harness user authenticates with by password (PLAIN users and SCRAM
#: users of both kinds).
SASL_MECHANISMS: tuple[str, ...] = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
#: Every SASL mechanism a secured listener enables: the password ones, and OAUTHBEARER with
#: Kafka's unsecured validator (unsigned JWTs, :func:`unsecured_jwt`; for tests only).
ENABLED_SASL_MECHANISMS: tuple[str, ...] = (*SASL_MECHANISMS, "OAUTHBEARER")
#: The scope an OAUTHBEARER token must carry for the listener to accept it.
OAUTH_SCOPE = "kafka"
#: The user that is a super user under ``authorizer=True``.
SUPER_USER = "admin"
DEFAULT_USERS: tuple[str, ...] = (SUPER_USER, "alice")
DEFAULT_SERVER_HOSTNAMES: tuple[str, ...] = ("localhost", "127.0.0.1")
#: The client certificate's common name; the listener maps it to the principal ``User:<CN>``.
CLIENT_CERT_NAME = "client"

INTERNAL_LISTENER = "INTERNAL"
CONTROLLER_LISTENER = "CONTROLLER"
_STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
_OAUTHBEARER_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
_KRB5_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
_TLS_DIRECTORY = "tls"


def _password() -> str:
    # URL-safe characters only: the value goes unquoted into JAAS lines and into
    # StorageTool's SCRAM syntax ``[name=...,password=...]``.
    return secrets.token_urlsafe(18)


@dataclass(frozen=True)
class ListenerSecurity:
    """How a harness secures its client listener (checked on construction)."""

    protocol: Security
    client_auth: bool = False
    authorizer: bool = False
    server_hostnames: tuple[str, ...] = DEFAULT_SERVER_HOSTNAMES
    users: tuple[str, ...] = DEFAULT_USERS

    def __post_init__(self) -> None:
        if self.protocol not in SECURITY_OPTIONS:
            raise ValueError(f"security must be one of {SECURITY_OPTIONS}, not {self.protocol!r}")
        if self.client_auth and not self.tls:
            raise ValueError("client_auth needs a TLS listener (security='ssl' or 'sasl_ssl')")
        if not self.server_hostnames:
            raise ValueError("server_hostnames must name at least one host")
        for user in self.users:
            if not user or not all(c.isalnum() or c in "_-" for c in user):
                raise ValueError(f"user name {user!r}: use letters, digits, '_' or '-'")
        if self.sasl and SUPER_USER not in self.users:
            raise ValueError(f"users must include {SUPER_USER!r}")

    @property
    def tls(self) -> bool:
        return self.protocol in ("ssl", "sasl_ssl")

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("sasl")

    @property
    def listener_name(self) -> str:
        """The client listener's name, which is also its protocol in Kafka's spelling."""
        return self.protocol.upper()

    def make_material(self, root: Path) -> SecurityMaterial:
        """Random passwords, and the TLS files under ``root/tls`` when the listener uses TLS."""
        users = {user: _password() for user in self.users} if self.sasl else {}
        if not self.tls:
            return SecurityMaterial(self, users)
        directory = root / _TLS_DIRECTORY
        directory.mkdir(mode=0o700)
        return _write_tls(self, directory, users)


@dataclass(frozen=True)
class SecurityMaterial:
    """What one harness run generated: the users' passwords and the TLS files."""

    options: ListenerSecurity
    users: Mapping[str, str]
    ca_file: Path | None = None
    server_cert_file: Path | None = None
    server_key_file: Path | None = None
    client_cert_file: Path | None = None
    client_key_file: Path | None = None

    def __repr__(self) -> str:
        # The dataclass repr would show the users' passwords.
        return (
            f"SecurityMaterial(protocol={self.options.protocol!r}, users={sorted(self.users)}, "
            f"ca_file={self.ca_file})"
        )

    def broker_config(
        self, *, port: int, internal_port: int, controller_port: int, host: str
    ) -> dict[str, str]:
        """A node's listener settings (applied over the plain ones of :mod:`.kraft`)."""
        name = self.options.listener_name
        client = f"{name}://{host}:{port}"
        internal = f"{INTERNAL_LISTENER}://{host}:{internal_port}"
        config = {
            "listeners": f"{client},{CONTROLLER_LISTENER}://{host}:{controller_port},{internal}",
            "advertised.listeners": f"{client},{internal}",
            "inter.broker.listener.name": INTERNAL_LISTENER,
            "listener.security.protocol.map": (
                f"{CONTROLLER_LISTENER}:PLAINTEXT,{INTERNAL_LISTENER}:PLAINTEXT,{name}:{name}"
            ),
        }
        if self.options.tls:
            assert self.server_cert_file is not None and self.server_key_file is not None
            assert self.ca_file is not None
            prefix = f"listener.name.{name.lower()}."
            config.update(
                {
                    f"{prefix}ssl.keystore.type": "PEM",
                    f"{prefix}ssl.keystore.key": _inline_pem(self.server_key_file),
                    f"{prefix}ssl.keystore.certificate.chain": _inline_pem(self.server_cert_file),
                    f"{prefix}ssl.truststore.type": "PEM",
                    f"{prefix}ssl.truststore.location": str(self.ca_file),
                    f"{prefix}ssl.client.auth": "required" if self.options.client_auth else "none",
                    # A client certificate's subject becomes User:<its CN>, not the whole DN.
                    f"{prefix}ssl.principal.mapping.rules": "RULE:^CN=([^,]+).*$/$1/,DEFAULT",
                }
            )
        if self.options.sasl:
            prefix = f"listener.name.{name.lower()}."
            plain_users = " ".join(f'user_{u}="{p}"' for u, p in self.users.items())
            admin_password = self.users[SUPER_USER]
            config["sasl.enabled.mechanisms"] = ",".join(ENABLED_SASL_MECHANISMS)
            config[f"{prefix}plain.sasl.jaas.config"] = (
                f'{_PLAIN_MODULE} required username="{SUPER_USER}" '
                f'password="{admin_password}" {plain_users};'
            )
            for mechanism in SASL_MECHANISMS[1:]:
                config[f"{prefix}{mechanism.lower()}.sasl.jaas.config"] = (
                    f"{_SCRAM_MODULE} required;"
                )
            # The validator is the broker's default for OAUTHBEARER (the unsecured one): it
            # checks sub, exp, iat and the scope named here. The login claim is the broker's
            # own token, which it needs to start the mechanism and never sends.
            config[f"{prefix}oauthbearer.sasl.jaas.config"] = (
                f'{_OAUTHBEARER_MODULE} required unsecuredLoginStringClaim_sub="{SUPER_USER}" '
                f'unsecuredValidatorRequiredScope="{OAUTH_SCOPE}";'
            )
        if self.options.authorizer:
            config["authorizer.class.name"] = _STANDARD_AUTHORIZER
            # The controller and INTERNAL listeners are PLAINTEXT, whose principal is
            # ANONYMOUS: the broker's own requests need it, so it is a super user too.
            config["super.users"] = f"User:{SUPER_USER};User:ANONYMOUS"
        return config

    def format_flags(self) -> list[str]:
        """``StorageTool format`` flags creating every user as a SCRAM user of both kinds."""
        flags = []
        for mechanism in SASL_MECHANISMS[1:]:
            for user, password in self.users.items():
                flags += ["--add-scram", f"{mechanism}=[name={user},password={password}]"]
        return flags


def kerberos_listener_config(
    listener_name: str, *, service: str, principal: str, keytab: Path
) -> dict[str, str]:
    """Settings (over a secured harness's own) that enable GSSAPI beside the other mechanisms
    on the SASL listener ``listener_name``: the broker logs in as ``principal`` from
    ``keytab`` and accepts tickets for it. The JVM also needs the realm's ``krb5.conf``
    (``-Djava.security.krb5.conf``; ``ferrokafka.testing.kerberos.KerberosRealm`` makes both).
    A client principal ``alice@<realm>`` of the default realm is ``User:alice``."""
    if not listener_name.startswith("SASL_"):
        raise ValueError(f"GSSAPI needs a SASL listener, not {listener_name!r}")
    prefix = f"listener.name.{listener_name.lower()}."
    return {
        "sasl.enabled.mechanisms": ",".join((*ENABLED_SASL_MECHANISMS, "GSSAPI")),
        "sasl.kerberos.service.name": service,
        f"{prefix}gssapi.sasl.jaas.config": (
            f'{_KRB5_MODULE} required useKeyTab=true storeKey=true keyTab="{keytab}" '
            f'principal="{principal}";'
        ),
    }


def _write_tls(
    options: ListenerSecurity, directory: Path, users: Mapping[str, str]
) -> SecurityMaterial:
    try:
        import trustme
        from cryptography.hazmat.primitives import serialization
    except ImportError as exc:
        raise RuntimeError(
            "a TLS listener needs trustme and cryptography (pip install 'ferrokafka[testing]')"
        ) from exc

    def pkcs8(key_pem: bytes) -> bytes:
        # trustme writes OpenSSL's traditional key format; Kafka reads only PKCS#8.
        key = serialization.load_pem_private_key(key_pem, password=None)
        return key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def write(name: str, data: bytes) -> Path:
        path = directory / name
        path.touch(mode=0o600)
        path.write_bytes(data)
        return path

    ca = trustme.CA(organization_name="ferrokafka test CA")
    server = ca.issue_cert(*options.server_hostnames, common_name=options.server_hostnames[0])
    client = ca.issue_cert(CLIENT_CERT_NAME, common_name=CLIENT_CERT_NAME)
    return SecurityMaterial(
        options,
        users,
        ca_file=write("ca.pem", ca.cert_pem.bytes()),
        server_cert_file=write(
            "server.pem", b"".join(blob.bytes() for blob in server.cert_chain_pems)
        ),
        server_key_file=write("server.key", pkcs8(server.private_key_pem.bytes())),
        client_cert_file=write(
            "client.pem", b"".join(blob.bytes() for blob in client.cert_chain_pems)
        ),
        client_key_file=write("client.key", pkcs8(client.private_key_pem.bytes())),
    )


def _inline_pem(path: Path) -> str:
    """A PEM file as one ``server.properties`` value: its line breaks as ``\\n`` escapes
    (Kafka's PEM parser needs them; a continued line would lose them)."""
    return "\\n".join(path.read_text().strip().splitlines())


def _b64url(data: dict[str, Any]) -> str:
    """``data`` as JSON in base64url without padding, made of letters and digits only: Kafka's
    unsecured validator decodes with the plain base64 alphabet, which has no ``-`` or ``_``,
    so the JSON gets a trailing space until its encoding needs neither."""
    text = json.dumps(data, separators=(",", ":"))
    while True:
        encoded = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
        if "-" not in encoded and "_" not in encoded:
            return encoded
        text += " "


def unsecured_jwt(
    subject: str,
    *,
    lifetime_s: float = 3600.0,
    scope: Sequence[str] = (OAUTH_SCOPE,),
    issued_at: float | None = None,
    claims: Mapping[str, Any] | None = None,
) -> str:
    """An unsigned JWT (``alg: none``) the harness's OAUTHBEARER listener accepts: principal
    ``subject`` (``User:<subject>``), issued at ``issued_at`` (seconds since the epoch; now by
    default), expiring ``lifetime_s`` later (a negative lifetime makes an expired token),
    with ``scope`` (the listener requires :data:`OAUTH_SCOPE`) and any other ``claims``."""
    now = time.time() if issued_at is None else issued_at
    payload: dict[str, Any] = {
        "sub": subject,
        "iat": int(now),
        "exp": int(now + lifetime_s),
        "scope": list(scope),
        **(claims or {}),
    }
    return f"{_b64url({'alg': 'none'})}.{_b64url(payload)}."


class UnsecuredTokenProvider(AbstractTokenProvider):
    """A ``sasl_oauth_token_provider`` handing out a fresh :func:`unsecured_jwt` for
    ``subject`` at every call (``calls`` counts them), with ``extensions``."""

    def __init__(
        self,
        subject: str = "alice",
        *,
        lifetime_s: float = 3600.0,
        scope: Sequence[str] = (OAUTH_SCOPE,),
        extensions: Mapping[str, str] | None = None,
    ) -> None:
        self.subject = subject
        self.lifetime_s = lifetime_s
        self.scope = tuple(scope)
        self._extensions = dict(extensions or {})
        self.calls = 0
        self.tokens: list[str] = []
        """Every token handed out, so a test can check none leaked."""

    def __repr__(self) -> str:
        return f"UnsecuredTokenProvider(subject={self.subject!r}, calls={self.calls})"

    async def token(self) -> str:
        self.calls += 1
        token = unsecured_jwt(self.subject, lifetime_s=self.lifetime_s, scope=self.scope)
        self.tokens.append(token)
        return token

    def extensions(self) -> dict[str, str]:
        return dict(self._extensions)
