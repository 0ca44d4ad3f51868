"""``ConnectionConfig``: the options every client shares (addresses, timeouts, security).

Each field's docstring is the option's reference: its meaning and unit, its default, and the
name of the same setting in the Java client (aiokafka's names are the field names).
"""

from __future__ import annotations

import ssl
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from .. import _native
from ..abc import AbstractTokenProvider
from ..sasl import MECHANISMS, PASSWORD_MECHANISMS
from ..sasl.gssapi import import_gssapi
from .checks import checked, flag, non_negative, one_of, positive, positive_int

__all__ = [
    "DEFAULT_PORT",
    "LOOP_DEPRECATED",
    "ConnectionConfig",
    "keyword_options",
    "parse_bootstrap_servers",
]

DEFAULT_PORT = 9092

LOOP_DEPRECATED = "The `loop` parameter has been deprecated since aiokafka 0.7.1 and is ignored."


def keyword_options(arguments: Mapping[str, Any], no_ops: Mapping[str, str]) -> dict[str, Any]:
    """The options a client's constructor was given (its ``locals()``, taken first thing), for
    its config: all but ``self``, ``topics`` and ``loop``. Each of ``no_ops`` (name: message)
    given a value other than None warns ``DeprecationWarning`` at the constructor's caller."""
    for name, message in no_ops.items():
        if arguments.get(name) is not None:
            warnings.warn(message, DeprecationWarning, stacklevel=3)
    return {k: v for k, v in arguments.items() if k not in ("self", "topics", "loop")}


def parse_bootstrap_servers(servers: str | list[str] | tuple[str, ...]) -> list[tuple[str, int]]:
    """``"a:1,b:2"`` or ``["a:1", "b"]`` -> ``[("a", 1), ("b", 9092)]``; IPv6 as ``[::1]:9092``."""
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out: list[tuple[str, int]] = []
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        host, port = item, DEFAULT_PORT
        if item.startswith("["):
            end = item.find("]")
            if end < 0:
                raise ValueError(f"bootstrap_servers: unbalanced brackets in {item!r}")
            host = item[1:end]
            rest = item[end + 1 :]
            if rest:
                port = _parse_port(rest.removeprefix(":"), item)
        elif item.count(":") == 1:
            host, port_s = item.split(":")
            port = _parse_port(port_s, item)
        out.append((host, port))
    if not out:
        raise ValueError("bootstrap_servers: no address given")
    return out


def _parse_port(text: str, item: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise ValueError(f"bootstrap_servers: bad port in {item!r}") from None
    if not 0 < port < 65536:
        raise ValueError(f"bootstrap_servers: port out of range in {item!r}")
    return port


def _idle_ms(name: str, value: Any) -> None:
    if value is not None:
        try:
            positive_int(name, value)
        except ValueError:
            raise ValueError(f"{name} must be a positive int or None, got {value!r}") from None


def _api_version(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a version string or 'auto', got {value!r}")


_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def _security_protocol(name: str, value: Any) -> None:
    # Starts with aiokafka's words, which code may match on; then what is allowed.
    if not isinstance(value, str) or value not in _SECURITY_PROTOCOLS:
        raise ValueError(
            "`security_protocol` should be SSL or PLAINTEXT (or SASL_PLAINTEXT or SASL_SSL), "
            f"got {value!r}"
        )


_sasl_mechanism = one_of(*MECHANISMS)


_NEEDS_TOKEN_PROVIDER = (
    "sasl_oauth_token_provider needs to be provided implementing "
    "ferrokafka.abc.AbstractTokenProvider"
)


def _token_provider(name: str, value: Any) -> None:
    # An aiokafka provider (not our class, same shape) is accepted for what it does.
    if value is not None and not (
        isinstance(value, AbstractTokenProvider) or callable(getattr(value, "token", None))
    ):
        raise ValueError(f"{_NEEDS_TOKEN_PROVIDER}, got a {type(value).__name__}")


def _str_or_none(name: str, value: Any) -> None:
    # The type only: the value may be a password, which no message may carry.
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name} must be a str or None, got a {type(value).__name__}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectionConfig:
    """What every client (consumer, producer, admin) needs to reach the cluster.

    Built and checked in one place: a wrong value raises ``ValueError`` naming the option. The
    clients build it from their keyword arguments; ``AIOKafkaClient`` takes it whole.
    """

    bootstrap_servers: str | list[str] | tuple[str, ...] = "localhost"
    """Brokers to load the cluster metadata from, tried in order: ``"host[:port],..."`` or a
    list of ``"host[:port]"`` (port 9092 when left out; IPv6 as ``[::1]:9092``); the rest of
    the cluster is learnt from them. Default ``"localhost"``. Java: ``bootstrap.servers``."""

    bootstrap_addresses: tuple[tuple[str, int], ...] = field(init=False, repr=False, compare=False)
    """Not an option: ``bootstrap_servers`` parsed, ``(host, port)`` in the order given, set
    on construction (parsing is that option's check). What the client connects to; the option
    keeps the value as given (a list stored as a tuple)."""

    client_id: str | None = "ferrokafka-" + _native.__version__
    """Sent with every request, so brokers can tell clients apart in their logs, metrics and
    quotas. Default ``"ferrokafka-<version>"`` (the producer's: ``"ferrokafka-producer-<n>"``).
    Java: ``client.id``."""

    metadata_max_age_ms: int = field(default=300000, metadata=checked(positive))
    """Milliseconds after which the cluster metadata is refreshed even when nothing signalled
    a change (new brokers, partitions, topics). Default 300000 (5 min). Java:
    ``metadata.max.age.ms``."""

    request_timeout_ms: int = field(default=40000, metadata=checked(positive))
    """Milliseconds to wait for a broker's answer to a request; past it the request fails
    with ``RequestTimedOutError`` and its connection is closed. Also the bound of the retry
    loops that wait for metadata, coordinators and offsets. Default 40000. Java:
    ``request.timeout.ms`` (30000 there)."""

    retry_backoff_ms: int = field(default=100, metadata=checked(non_negative))
    """Milliseconds to wait before retrying after a retriable error (a leader moved, a
    coordinator loading, a topic not known yet). Default 100. Java: ``retry.backoff.ms``."""

    reconnect_backoff_ms: int = field(default=50, metadata=checked(non_negative))
    """Milliseconds to wait before connecting again to a broker after a failed attempt,
    doubling on each further failure up to ``reconnect_backoff_max_ms`` (with +-20% jitter).
    Default 50. Java: ``reconnect.backoff.ms``; not an option of aiokafka's clients."""

    reconnect_backoff_max_ms: int = field(default=1000, metadata=checked(non_negative))
    """The most ``reconnect_backoff_ms`` grows to, in milliseconds. Default 1000. Java:
    ``reconnect.backoff.max.ms``; not an option of aiokafka's clients."""

    metadata_recovery_strategy: str = field(
        default="rebootstrap", metadata=checked(one_of("none", "rebootstrap"))
    )
    """What to do when no broker the client knows can be reached (or no metadata came for
    ``metadata_recovery_rebootstrap_trigger_ms``): ``"rebootstrap"`` asks the
    ``bootstrap_servers`` again (their names resolved anew), so a client outlives a cluster
    whose brokers were all replaced (KIP-899, KIP-1102); ``"none"`` keeps trying the brokers it
    knows. Default ``"rebootstrap"``. Java: ``metadata.recovery.strategy``; not an option of
    aiokafka's clients."""

    metadata_recovery_rebootstrap_trigger_ms: int = field(
        default=300000, metadata=checked(positive_int)
    )
    """Milliseconds without any metadata after which the client rebootstraps even if a known
    broker still accepts connections. Default 300000 (5 min). Java:
    ``metadata.recovery.rebootstrap.trigger.ms``; not an option of aiokafka's clients."""

    connections_max_idle_ms: int | None = field(default=540000, metadata=checked(_idle_ms))
    """Milliseconds after which a connection with nothing in flight is closed; None keeps
    idle connections open. Default 540000 (9 min). Java: ``connections.max.idle.ms``."""

    security_protocol: str = field(default="PLAINTEXT", metadata=checked(_security_protocol))
    """``"PLAINTEXT"``, ``"SSL"`` (TLS with ``ssl_context``), ``"SASL_PLAINTEXT"`` (SASL
    authentication, ``sasl_mechanism``) or ``"SASL_SSL"`` (SASL over TLS). Default
    ``"PLAINTEXT"``. Java: ``security.protocol``."""

    ssl_context: ssl.SSLContext | None = None
    """The ``ssl.SSLContext`` for TLS connections (certificates, verification), required with
    ``security_protocol`` ``"SSL"`` and ``"SASL_SSL"`` (as aiokafka requires it;
    ``ferrokafka.helpers.create_ssl_context`` makes one). Default None. Java: the ``ssl.*``
    options."""

    api_version: str | None = field(default=None, metadata=checked(_api_version))
    """Accepted for aiokafka compatibility and ignored: API versions are negotiated with each
    broker (ApiVersions). Default None. Java: none."""

    sasl_mechanism: str = field(default="PLAIN", metadata=checked(_sasl_mechanism))
    """The SASL mechanism used with ``SASL_PLAINTEXT`` and ``SASL_SSL``: ``"PLAIN"``,
    ``"SCRAM-SHA-256"`` or ``"SCRAM-SHA-512"`` (each with ``sasl_plain_username`` and
    ``sasl_plain_password``), ``"OAUTHBEARER"`` (with ``sasl_oauth_token_provider``) or
    ``"GSSAPI"`` (Kerberos, with the ``gssapi`` extra: the process's ticket cache,
    ``KRB5CCNAME``, or client keytab, ``KRB5_CLIENT_KTNAME``). Every mechanism
    re-authenticates before the broker's session ends (its ``connections.max.reauth.ms``).
    Default ``"PLAIN"``. Java: ``sasl.mechanism``."""

    sasl_plain_username: str | None = field(default=None, metadata=checked(_str_or_none))
    """The user name for SASL ``PLAIN`` and ``SCRAM-SHA-*``. Default None. Java: part of
    ``sasl.jaas.config``."""

    sasl_plain_password: str | None = field(
        default=None, repr=False, metadata=checked(_str_or_none)
    )
    """The password for SASL ``PLAIN`` and ``SCRAM-SHA-*``; kept out of ``repr``, logs and
    error messages. Default None. Java: part of ``sasl.jaas.config``."""

    sasl_kerberos_service_name: str = "kafka"
    """The service part of the brokers' Kerberos principal (``GSSAPI``): the client asks for a
    ticket for ``<service>/<host>@<realm>``. Default ``"kafka"``. Java:
    ``sasl.kerberos.service.name``."""

    sasl_kerberos_domain_name: str | None = None
    """The host part of the brokers' Kerberos principal (``GSSAPI``), for every broker: the
    client asks for ``<service>/<domain>@<realm>``; None takes each broker's host name as the
    client connects to it (the bootstrap address, then the advertised ones). Default None.
    Java: none (aiokafka only; the Java client uses the host name)."""

    sasl_oauth_token_provider: AbstractTokenProvider | None = field(
        default=None, metadata=checked(_token_provider)
    )
    """The ``ferrokafka.abc.AbstractTokenProvider`` that supplies ``OAUTHBEARER`` tokens (its
    async ``token()`` is awaited at every authentication, its ``extensions()`` sent along);
    required with ``OAUTHBEARER``. Default None. Java: ``sasl.login.callback.handler.class``."""

    tcp_keepalive: bool = field(default=True, metadata=checked(flag))
    """Whether connections enable TCP keep-alive probes, so that a broker that vanished
    without closing its socket is noticed. Default True. Java: always on; not an option of
    aiokafka's clients."""

    allow_auto_create_topics: bool = field(default=False, metadata=checked(flag))
    """Whether Metadata requests let the broker create a topic they name that does not exist
    (when the broker's ``auto.create.topics.enable`` allows it). Default False for a bare
    ``AIOKafkaClient``; the consumer's default is True, and the producer always allows it.
    Java: ``allow.auto.create.topics`` (a consumer option)."""

    def __post_init__(self) -> None:
        # The one parse of bootstrap_servers, and its check (first, as the first option).
        self._set("bootstrap_addresses", tuple(parse_bootstrap_servers(self.bootstrap_servers)))
        for f in fields(self):
            check = f.metadata.get("check")
            if check is not None:
                check(f.name, getattr(self, f.name))
        self._finish()

    def _finish(self) -> None:
        """The checks that involve more than one option, and the stored form of lists (a
        tuple: the config is immutable). A subclass extends it (calling this one first)."""
        protocol = self.security_protocol
        if self.uses_tls and self.ssl_context is None:
            # aiokafka's words first: code may match on them.
            raise ValueError(
                "`ssl_context` is mandatory if security_protocol=='SSL' or 'SASL_SSL' (it is "
                f"{protocol!r}): an ssl.SSLContext, e.g. from "
                "ferrokafka.helpers.create_ssl_context()"
            )
        if self.uses_sasl:
            mechanism = self.sasl_mechanism
            if mechanism == "GSSAPI":
                self._check_kerberos_options()
            elif mechanism not in PASSWORD_MECHANISMS:
                if self.sasl_oauth_token_provider is None:
                    raise ValueError(_NEEDS_TOKEN_PROVIDER)
            else:
                self._check_password_credentials(mechanism, protocol)
        if isinstance(self.bootstrap_servers, list):
            self._set("bootstrap_servers", tuple(self.bootstrap_servers))

    def _check_kerberos_options(self) -> None:
        service = self.sasl_kerberos_service_name
        if not isinstance(service, str) or not service or "@" in service or "/" in service:
            raise ValueError(
                f"sasl_kerberos_service_name must be a non-empty name without '@' or '/' "
                f"(the service part of the brokers' principal), not {service!r}"
            )
        domain = self.sasl_kerberos_domain_name
        if domain is not None and (
            not isinstance(domain, str) or not domain or "@" in domain or "/" in domain
        ):
            raise ValueError(
                f"sasl_kerberos_domain_name must be None or a host name without '@' or '/', "
                f"not {domain!r}"
            )
        try:
            import_gssapi()
        except ImportError as exc:
            raise ValueError(f"{exc}; security_protocol {self.security_protocol!r}") from exc

    def _check_password_credentials(self, mechanism: str, protocol: str) -> None:
        if self.sasl_plain_username is None or self.sasl_plain_password is None:
            raise ValueError(
                "sasl_plain_username and sasl_plain_password required for "
                f"{mechanism} sasl (security_protocol {protocol!r})"
            )
        if mechanism == "PLAIN" and (
            "\0" in self.sasl_plain_username or "\0" in self.sasl_plain_password
        ):
            # PLAIN separates its fields with NUL: the broker would read other credentials.
            raise ValueError(
                "sasl_plain_username and sasl_plain_password cannot contain a NUL "
                "character with PLAIN sasl"
            )

    @property
    def uses_sasl(self) -> bool:
        """Whether connections authenticate with SASL (``SASL_PLAINTEXT``, ``SASL_SSL``)."""
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def uses_tls(self) -> bool:
        """Whether connections are TLS (``SSL``, ``SASL_SSL``)."""
        return self.security_protocol in ("SSL", "SASL_SSL")

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
