"""The security part of Spark's ``kafka.*`` options: ``security.protocol``, ``sasl.*`` and
``ssl.*`` as the Java client takes them, checked on the driver and turned into ferrokafka's
keyword arguments.

What maps: the protocol; the password mechanisms (``PLAIN``, ``SCRAM-SHA-256``,
``SCRAM-SHA-512``) with the user name and password of a ``PlainLoginModule`` or
``ScramLoginModule`` line in ``sasl.jaas.config``; PEM trust and key stores, as files or inline;
host name checking; the TLS versions. What cannot map (Java classes, JKS and PKCS12 stores,
OAUTHBEARER's and Kerberos's login modules) is refused with the option's name, never ignored, so
a job never connects with weaker security than its options ask for.

Passwords and private keys are kept as :class:`Secret`, whose repr hides the value, so that
they appear in no repr, log record or error message; TLS material stays as paths and strings
(picklable, sent to executors) until :func:`ssl_context` builds the ``SSLContext`` where the
client is made.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import ssl
import tempfile
from collections.abc import Mapping
from typing import Any

__all__ = ["Secret", "is_security_config", "parse_jaas", "security_options", "ssl_context"]

log = logging.getLogger(__name__)

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
#: The Java client's ``sasl.mechanism`` when none is given.
JAVA_DEFAULT_MECHANISM = "GSSAPI"

_PASSWORD_MODULES = (
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule",
)
_CONTROL_FLAGS = ("required", "requisite", "sufficient", "optional")
_JAAS_EXAMPLE = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="..." '
    'password="...";'
)
_PASSWORD_ONLY = "use kafka.sasl.mechanism PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 with " + (
    "a PlainLoginModule or ScramLoginModule line in kafka.sasl.jaas.config"
)
# Java classes the Java client would load: nothing here can run them.
_JAVA_CLASSES = (
    "sasl.login.callback.handler.class",
    "sasl.client.callback.handler.class",
    "sasl.login.class",
    "ssl.engine.factory.class",
)
# Java-only tuning (key manager algorithms, OAUTHBEARER and Kerberos login refresh): no effect.
_NO_EFFECT = (
    "ssl.protocol",
    "ssl.provider",
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.secure.random.implementation",
)
_NO_EFFECT_PREFIXES = ("sasl.login.", "sasl.oauthbearer.", "sasl.kerberos.")
# The configs this module maps (or refuses when their value cannot map).
_MAPPED = frozenset(
    {
        "security.protocol",
        "sasl.mechanism",
        "sasl.jaas.config",
        "sasl.kerberos.service.name",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.certificates",
        "ssl.truststore.password",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.endpoint.identification.algorithm",
        "ssl.enabled.protocols",
    }
)
_TLS_VERSIONS = {
    "TLSV1.2": ssl.TLSVersion.TLSv1_2,
    "TLSV1.3": ssl.TLSVersion.TLSv1_3,
}


class Secret:
    """A password or private key: compared and hashed by value, shown as ``'***'``."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and hmac.compare_digest(
            self._value.encode(), other._value.encode()
        )

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Secret, (self._value,))


def reveal(value: Any) -> Any:
    """``value``, or the text of a :class:`Secret`."""
    return value.reveal() if isinstance(value, Secret) else value


def is_security_config(name: str) -> bool:
    """Whether a Java client config (without ``kafka.``) is handled here."""
    return name == "security.protocol" or name.startswith(("sasl.", "ssl."))


def _option(name: str) -> str:
    return f"kafka.{name}"


# One JAAS entry: `<module class> <flag> (<name>=<value>)* ;`, values quoted or bare words.
_JAAS_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^\s"=;]+)|(=)|(;))', re.DOTALL)


def parse_jaas(config: str) -> tuple[str, str, dict[str, str]]:
    """The login module, control flag and options of a one-entry ``sasl.jaas.config``; raises
    ``ValueError`` without quoting the value (it holds credentials)."""
    tokens: list[tuple[str, str]] = []  # (kind, text): kind "word", "string", "=" or ";"
    pos = 0
    text = config.strip()
    while pos < len(text):
        match = _JAAS_TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise _bad_jaas("it cannot be tokenized")
        quoted, word, equals, _ = match.groups()
        if quoted is not None:
            tokens.append(("string", re.sub(r"\\(.)", r"\1", quoted)))
        elif word is not None:
            tokens.append(("word", word))
        else:
            tokens.append(("=" if equals else ";", ""))
        pos = match.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    entries = _split_entries(tokens)
    if len(entries) != 1:
        raise ValueError(
            f"Option 'kafka.sasl.jaas.config' holds {len(entries)} login modules, should be 1"
        )
    entry = entries[0]
    if len(entry) < 2 or entry[0][0] != "word" or entry[1][0] != "word":
        raise _bad_jaas("it does not start with a login module class and a control flag")
    module, flag = entry[0][1], entry[1][1]
    if flag.lower() not in _CONTROL_FLAGS:
        raise _bad_jaas(f"its control flag is not one of {', '.join(_CONTROL_FLAGS)}")
    options: dict[str, str] = {}
    rest = entry[2:]
    if len(rest) % 3:
        raise _bad_jaas("its options are not all of the form name=value")
    for i in range(0, len(rest), 3):
        (name_kind, name), (eq, _), (value_kind, value) = rest[i : i + 3]
        if name_kind != "word" or eq != "=" or value_kind not in ("word", "string"):
            raise _bad_jaas("its options are not all of the form name=value")
        options[name] = value
    return module, flag.lower(), options


def _split_entries(tokens: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    entries: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    for token in tokens:
        if token[0] == ";":
            if not current:
                raise _bad_jaas("it has an empty entry")
            entries.append(current)
            current = []
        else:
            current.append(token)
    if current:
        raise _bad_jaas("its entry does not end with ';'")
    return entries


def _bad_jaas(why: str) -> ValueError:
    return ValueError(
        f"Option 'kafka.sasl.jaas.config' is not a valid JAAS configuration: {why} "
        f"(expected e.g. {_JAAS_EXAMPLE} The value is not shown: it holds credentials.)"
    )


def _credentials(config: str, mechanism: str) -> dict[str, Any]:
    """``sasl_plain_username`` and ``sasl_plain_password`` from a JAAS line."""
    module, _, options = parse_jaas(config)
    if module not in _PASSWORD_MODULES:
        short = module.rsplit(".", 1)[-1]
        raise ValueError(
            f"Option 'kafka.sasl.jaas.config': login module {short} is not supported through "
            f"Spark options with kafka.sasl.mechanism {mechanism}; {_PASSWORD_ONLY}"
        )
    if options.get("tokenauth", "false").lower() == "true":
        raise ValueError(
            "Option 'kafka.sasl.jaas.config': tokenauth=true (delegation tokens) is not "
            "supported through Spark options"
        )
    missing = [name for name in ("username", "password") if name not in options]
    if missing:
        raise ValueError(
            f"Option 'kafka.sasl.jaas.config' has no {' and no '.join(missing)} "
            f"(expected e.g. {_JAAS_EXAMPLE})"
        )
    return {
        "sasl_plain_username": options["username"],
        "sasl_plain_password": Secret(options["password"]),
    }


def security_options(configs: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The client keyword arguments and the TLS material of the Java configs ``configs``
    (``security.protocol``, ``sasl.*``, ``ssl.*``, named without ``kafka.``)."""
    for name in configs:
        if name in _JAVA_CLASSES:
            raise ValueError(
                f"Option {_option(name)!r} is not supported through Spark options: it names a "
                "Java class, which ferrokafka cannot load"
            )
        if name == "ssl.cipher.suites":
            raise ValueError(
                "Option 'kafka.ssl.cipher.suites' is not supported through Spark options: "
                "ferrokafka's TLS (OpenSSL) uses its own cipher names and defaults"
            )
    raw_protocol = configs.get("security.protocol", "PLAINTEXT")
    protocol = raw_protocol.strip().upper()
    if protocol not in PROTOCOLS:
        raise ValueError(
            f"Invalid value {raw_protocol!r} for option 'kafka.security.protocol': expected "
            f"one of {', '.join(PROTOCOLS)}"
        )
    client: dict[str, Any] = {}
    if "security.protocol" in configs:
        client["security_protocol"] = protocol
    if protocol.startswith("SASL_"):
        client.update(_sasl(configs, protocol))
    else:
        for name in ("sasl.mechanism", "sasl.jaas.config"):
            if name in configs:
                log.debug("Option %r has no effect with security.protocol %s", name, protocol)
    tls = _tls(configs)
    for name in configs:
        if name in _MAPPED:
            continue
        if name in _NO_EFFECT or name.startswith(_NO_EFFECT_PREFIXES):
            log.debug("Option %r is Java-only and has no effect in ferrokafka", name)
        else:
            log.warning("The configuration %r was supplied but isn't a known config.", name)
    return client, tls


def _sasl(configs: Mapping[str, str], protocol: str) -> dict[str, Any]:
    mechanism = configs.get("sasl.mechanism", JAVA_DEFAULT_MECHANISM).strip()
    if mechanism not in PASSWORD_MECHANISMS:
        given = "sasl.mechanism" in configs
        what = (
            f"kafka.sasl.mechanism {mechanism!r}"
            if given
            else f"kafka.sasl.mechanism is not set, so the Kafka client's default {mechanism!r}"
        )
        if mechanism in ("GSSAPI", "OAUTHBEARER"):
            why = (
                "Kerberos login (Krb5LoginModule)"
                if mechanism == "GSSAPI"
                else "tokens come from Java login callback handlers"
            )
            raise ValueError(
                f"Option 'kafka.sasl.mechanism': {what} is not supported through Spark "
                f"options ({why}); {_PASSWORD_ONLY}"
            )
        raise ValueError(
            f"Invalid value {mechanism!r} for option 'kafka.sasl.mechanism': expected one of "
            f"{', '.join(PASSWORD_MECHANISMS)} (names are case-sensitive, as the broker's are)"
        )
    jaas = configs.get("sasl.jaas.config")
    if jaas is None:
        raise ValueError(
            f"Option 'kafka.sasl.jaas.config' must be specified with kafka.security.protocol "
            f"{protocol} and kafka.sasl.mechanism {mechanism} (e.g. {_JAAS_EXAMPLE})"
        )
    out: dict[str, Any] = {"sasl_mechanism": mechanism, **_credentials(jaas, mechanism)}
    if "sasl.kerberos.service.name" in configs:
        out["sasl_kerberos_service_name"] = configs["sasl.kerberos.service.name"]
    return out


def _store_type(configs: Mapping[str, str], store: str) -> None:
    name = f"ssl.{store}.type"
    kind = configs.get(name)
    if kind is not None and kind.strip().upper() != "PEM":
        raise ValueError(
            f"Option {_option(name)!r}: {kind!r} stores are not supported; give the "
            f"certificates as PEM ({_option(name)}=PEM)"
        )


def _tls(configs: Mapping[str, str]) -> dict[str, Any]:
    """The TLS material (paths, PEM text, secrets) and settings, checked."""
    _store_type(configs, "truststore")
    _store_type(configs, "keystore")
    for store in ("truststore", "keystore"):
        name = f"ssl.{store}.password"
        if name in configs:
            raise ValueError(
                f"Option {_option(name)!r} cannot be used with PEM {store}s"
                + (
                    ": give the key's password as kafka.ssl.key.password"
                    if store == "keystore"
                    else ""
                )
            )
    tls: dict[str, Any] = {}
    if "ssl.truststore.location" in configs and "ssl.truststore.certificates" in configs:
        raise ValueError(
            "Options 'kafka.ssl.truststore.location' and 'kafka.ssl.truststore.certificates' "
            "cannot both be given"
        )
    if "ssl.truststore.location" in configs:
        tls["cafile"] = configs["ssl.truststore.location"]
    if "ssl.truststore.certificates" in configs:
        tls["cadata"] = configs["ssl.truststore.certificates"]
    inline = [n for n in ("ssl.keystore.certificate.chain", "ssl.keystore.key") if n in configs]
    if inline and "ssl.keystore.location" in configs:
        raise ValueError(
            f"Options 'kafka.ssl.keystore.location' and {_option(inline[0])!r} cannot both be "
            "given: the key store is a file or inline PEM"
        )
    if len(inline) == 1:
        other = ({"ssl.keystore.certificate.chain", "ssl.keystore.key"} - {inline[0]}).pop()
        raise ValueError(f"Option {_option(inline[0])!r} needs {_option(other)!r} as well")
    if "ssl.keystore.location" in configs:
        tls["certfile"] = configs["ssl.keystore.location"]
    if inline:
        tls["certchain"] = configs["ssl.keystore.certificate.chain"]
        tls["keydata"] = Secret(configs["ssl.keystore.key"])
    if "ssl.key.password" in configs:
        tls["password"] = Secret(configs["ssl.key.password"])
    algorithm = configs.get("ssl.endpoint.identification.algorithm", "https").strip()
    if algorithm.lower() not in ("https", ""):
        raise ValueError(
            f"Invalid value {algorithm!r} for option "
            "'kafka.ssl.endpoint.identification.algorithm': expected https, or empty to turn "
            "host name checks off"
        )
    tls["check_hostname"] = algorithm != ""
    if "ssl.enabled.protocols" in configs:
        versions = []
        for part in configs["ssl.enabled.protocols"].split(","):
            version = _TLS_VERSIONS.get(part.strip().upper())
            if version is None:
                raise ValueError(
                    f"Invalid value {part.strip()!r} in option 'kafka.ssl.enabled.protocols': "
                    "expected TLSv1.2 and/or TLSv1.3"
                )
            versions.append(version)
        tls["min_version"] = min(versions).name
        tls["max_version"] = max(versions).name
    return tls


def _pem_file(path: str, option: str) -> str:
    try:
        with open(path, "rb") as f:
            head = f.read(64 * 1024)
    except OSError as exc:
        raise ValueError(f"Option {option!r}: cannot read {path!r}: {exc.strerror}") from None
    if b"-----BEGIN " not in head:
        raise ValueError(
            f"Option {option!r}: {path!r} is not a PEM file; ferrokafka reads PEM stores only "
            "(convert a JKS or PKCS12 store to PEM)"
        )
    return path


def ssl_context(tls: Mapping[str, Any]) -> ssl.SSLContext:
    """The client ``SSLContext`` of the TLS material that :func:`security_options` made."""
    from ..helpers import create_ssl_context

    cafile = tls.get("cafile")
    if cafile is not None:
        _pem_file(cafile, "kafka.ssl.truststore.location")
    try:
        context = create_ssl_context(cafile=cafile, cadata=tls.get("cadata"))
    except ssl.SSLError as exc:
        raise ValueError(f"The trust store (kafka.ssl.truststore.*) is not usable: {exc}") from None
    password = reveal(tls.get("password"))
    if password is None:
        # Without one, OpenSSL would prompt on the terminal for an encrypted key: a hang.
        password = _no_password
    try:
        if "certfile" in tls:
            context.load_cert_chain(
                _pem_file(tls["certfile"], "kafka.ssl.keystore.location"), password=password
            )
        elif "keydata" in tls:
            _load_inline_key_store(context, tls["certchain"], reveal(tls["keydata"]), password)
    except ssl.SSLError as exc:
        # OpenSSL's reason names what failed (no PEM start line, bad decrypt), never the key.
        raise ValueError(f"The key store (kafka.ssl.keystore.*) is not usable: {exc}") from None
    context.check_hostname = bool(tls.get("check_hostname", True))
    if "min_version" in tls:
        context.minimum_version = ssl.TLSVersion[tls["min_version"]]
        context.maximum_version = ssl.TLSVersion[tls["max_version"]]
    return context


def _no_password() -> str:
    raise ValueError(
        "The private key of the key store is encrypted: give its password as kafka.ssl.key.password"
    )


def _load_inline_key_store(context: ssl.SSLContext, chain: str, key: str, password: Any) -> None:
    # OpenSSL loads a key only from a file: a private one, removed as soon as it is read.
    with tempfile.TemporaryDirectory(prefix="ferrokafka-tls-") as directory:
        path = os.path.join(directory, "keystore.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.strip() + "\n" + chain.strip() + "\n")
        context.load_cert_chain(path, password=password)
