"""A throwaway MIT Kerberos realm on loopback for SASL GSSAPI tests: a KDC process of our own
(``krb5kdc -n``, no system service), its database, the broker's service principal and user
principals, each with a keytab, all under a temporary directory removed on stop.

Needs MIT Kerberos's programs (Debian: ``krb5-kdc`` for ``krb5kdc`` and ``kdb5_util``,
``krb5-admin-server`` for ``kadmin.local``, ``krb5-user`` for ``kinit``; ``tools/bootstrap --dev``
installs them)::

    with KerberosRealm() as realm:
        env = realm.client_env("alice")      # KRB5_CONFIG, and KRB5CCNAME with alice's ticket
        realm.jvm_options                    # -Djava.security.krb5.conf=... for the broker

The KDC listens on one port, UDP and TCP, on 127.0.0.1; clients are told to use TCP
(``udp_preference_limit = 1``) and to take host names as given (no DNS canonicalization, no
reverse lookups), so ``kafka/localhost`` is the principal a client asks for when it connects to
``localhost``. Keys are random; the database's master password is random and never logged.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ._harness import LocalHarness, PortTaken
from ._process import LOOPBACK, TrackedProcess, free_ports, log_tail, spawn, stop_all
from .kraft import DEFAULT_JVM_OPTIONS
from .security import Security, kerberos_listener_config

__all__ = [
    "DEFAULT_REALM",
    "KERBEROS_PROGRAMS",
    "KerberosError",
    "KerberosRealm",
    "find_kerberos_programs",
]

DEFAULT_REALM = "FERROKAFKA.TEST"
#: The MIT programs the realm runs, and the Debian package of each.
KERBEROS_PROGRAMS: Mapping[str, str] = {
    "krb5kdc": "krb5-kdc",
    "kdb5_util": "krb5-kdc",
    "kadmin.local": "krb5-admin-server",
    "kinit": "krb5-user",
}
_SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")
_ENCTYPES = "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal"
_TOOL_TIMEOUT_S = 60.0
_POLL_S = 0.05


class KerberosError(RuntimeError):
    """The realm could not be set up or started (programs missing, a tool failed)."""


def find_kerberos_programs() -> dict[str, str]:
    """The path of each of :data:`KERBEROS_PROGRAMS` (``PATH``, then the ``sbin``
    directories, where Debian puts the server programs); ``KerberosError`` naming the missing
    ones and their packages."""
    search = os.pathsep.join([os.environ.get("PATH", ""), *_SBIN])
    found: dict[str, str] = {}
    missing: list[str] = []
    for program, package in KERBEROS_PROGRAMS.items():
        path = shutil.which(program, path=search)
        if path is None:
            missing.append(f"{program} (Debian package {package})")
        else:
            found[program] = path
    if missing:
        raise KerberosError(
            "MIT Kerberos programs not found on PATH or in /usr/sbin: "
            + ", ".join(missing)
            + "; tools/bootstrap --dev installs them (as root)"
        )
    return found


def _udp_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def _free_kdc_port() -> int:
    """A loopback port free for both TCP and UDP (the KDC listens on both)."""
    for _ in range(50):
        (port,) = free_ports(1)
        if _udp_free(port):
            return port
    raise KerberosError("found no loopback port free for both TCP and UDP")


def _cleanup(process: TrackedProcess, root: Path, keep: bool) -> None:
    """Last resort at interpreter exit or when a running realm is garbage collected."""
    with contextlib.suppress(Exception):
        process.kill()
    if not keep:
        shutil.rmtree(root, ignore_errors=True)


class KerberosRealm(LocalHarness):
    """A realm ``realm`` with the broker's service principal ``<service>/<host>`` for each of
    ``service_hosts`` and the user principals ``users``, every one with a keytab."""

    _keep_variable = "FERROKAFKA_KEEP_KDC_DIRS"
    _removed: ClassVar[str] = "on stop"

    def __init__(
        self,
        realm: str = DEFAULT_REALM,
        *,
        users: Iterable[str] = ("admin", "alice"),
        service: str = "kafka",
        service_hosts: Iterable[str] = ("localhost",),
        start_timeout: float = 30.0,
        stop_timeout: float = 10.0,
        keep_dirs: bool | None = None,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if not realm or not all(c.isalnum() or c in ".-" for c in realm):
            raise ValueError(f"realm {realm!r}: use letters, digits, '.' or '-'")
        self.realm = realm
        self.users = tuple(users)
        self.service = service
        self.service_hosts = tuple(service_hosts)
        for name in (*self.users, service, *self.service_hosts):
            if not name or not all(c.isalnum() or c in "._-" for c in name):
                raise ValueError(f"principal part {name!r}: use letters, digits, '.', '_' or '-'")
        if not self.service_hosts:
            raise ValueError("service_hosts must name at least one host")
        super().__init__(
            start_timeout=start_timeout, stop_timeout=stop_timeout, keep_dirs=keep_dirs
        )
        self._base_dir = base_dir
        self._programs: dict[str, str] = {}
        self._process: TrackedProcess | None = None
        self.port = 0
        """The KDC's port (UDP and TCP) on 127.0.0.1, once started."""

    def __repr__(self) -> str:
        state = f"{LOOPBACK}:{self.port}" if self._started else "stopped"
        return f"KerberosRealm({self.realm!r}, users={list(self.users)}, {state})"

    # ---- paths and names ------------------------------------------------------------------

    @property
    def krb5_conf(self) -> Path:
        """The clients' ``krb5.conf`` (``KRB5_CONFIG``; the broker's
        ``-Djava.security.krb5.conf``)."""
        return self.directory / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.directory / "kdc.conf"

    @property
    def log_path(self) -> Path:
        return self.directory / "kdc.log"

    def principal(self, name: str) -> str:
        """``name`` qualified with the realm (``alice`` is ``alice@<realm>``)."""
        return name if "@" in name else f"{name}@{self.realm}"

    def service_principal(self, host: str | None = None) -> str:
        """The broker's principal ``<service>/<host>@<realm>`` (the first service host by
        default)."""
        return self.principal(f"{self.service}/{host or self.service_hosts[0]}")

    def keytab(self, name: str) -> Path:
        """The keytab of user ``name`` or of a service principal ``service/host``."""
        self._require_started()
        path = self.directory / "keytabs" / (name.replace("/", "_") + ".keytab")
        if not path.exists():
            raise KeyError(f"no keytab for {name!r} in {self!r}")
        return path

    @property
    def jvm_options(self) -> tuple[str, ...]:
        """The broker JVM's options pointing Java's Kerberos at this realm."""
        return (f"-Djava.security.krb5.conf={self.krb5_conf}",)

    def broker_config(self, listener_name: str, host: str | None = None) -> dict[str, str]:
        """Settings enabling GSSAPI (beside the harness's other mechanisms) on the SASL
        listener ``listener_name``, as service principal ``<service>/<host>``."""
        return kerberos_listener_config(
            listener_name,
            service=self.service,
            principal=self.service_principal(host),
            keytab=self.keytab(f"{self.service}/{host or self.service_hosts[0]}"),
        )

    def broker_options(
        self,
        security: Security,
        *,
        config: Mapping[str, object] | None = None,
        jvm_options: Sequence[str] = DEFAULT_JVM_OPTIONS,
    ) -> dict[str, Any]:
        """``KafkaBroker`` keyword arguments for a ``security`` (``"sasl_plaintext"`` or
        ``"sasl_ssl"``) listener that also accepts GSSAPI for this realm's principals, with
        ``config`` and ``jvm_options`` besides."""
        return {
            "security": security,
            "jvm_options": (*jvm_options, *self.jvm_options),
            "config": {**(config or {}), **self.broker_config(security.upper())},
        }

    def env(self) -> dict[str, str]:
        """The variables pointing a Kerberos library at this realm's ``krb5.conf`` and KDC
        profile (no ticket cache: see :meth:`client_env`)."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    def ccache(self, name: str) -> Path:
        """Where :meth:`kinit` puts ``name``'s tickets."""
        self._require_started()
        return self.directory / "ccaches" / name.replace("/", "_")

    def kinit(self, name: str) -> Path:
        """A fresh ticket-granting ticket for ``name`` (from its keytab) in its own ticket
        cache file; returns the file."""
        ccache = self.ccache(name)
        self._run(
            "kinit",
            ["-k", "-t", str(self.keytab(name)), "-c", f"FILE:{ccache}", self.principal(name)],
        )
        return ccache

    def client_env(self, name: str) -> dict[str, str]:
        """``KRB5_CONFIG`` and ``KRB5CCNAME`` holding a fresh ticket of ``name``: what a
        ferrokafka client with ``sasl_mechanism="GSSAPI"`` needs in its environment."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5CCNAME": f"FILE:{self.kinit(name)}"}

    # ---- lifecycle --------------------------------------------------------------------------

    def start(self) -> KerberosRealm:
        if self._started:
            return self
        self._programs = find_kerberos_programs()
        self._start_on_fresh_ports(self._launch, self._abort, KerberosError)
        self._started = True
        return self

    def stop(self) -> None:
        if self._process is not None:
            stop_all([self._process], self.stop_timeout, sig=signal.SIGTERM)
            self._process = None
        self._started = False
        self._release_directory()

    def _abort(self) -> None:
        if self._process is not None:
            stop_all([self._process], self.stop_timeout, sig=signal.SIGKILL)
            self._process = None
        self._release_directory()

    def _launch(self) -> None:
        root = self._make_directory("ferrokafka-kdc-", self._base_dir)
        for sub in ("db", "keytabs", "ccaches"):
            (root / sub).mkdir(mode=0o700)
        self.port = _free_kdc_port()
        self._write_configs(root)
        # The master password encrypts the database; the stash file lets the KDC start
        # without asking for it. Never logged.
        master = secrets.token_urlsafe(24)
        self._tool(
            root,
            "kdb5_util",
            ["-r", self.realm, "create", "-s"],
            stdin=f"{master}\n{master}\n",
            what="creating the KDC database",
        )
        for host in self.service_hosts:
            self._add_principal(root, f"{self.service}/{host}")
        for user in self.users:
            self._add_principal(root, user)
        argv = [
            self._programs["krb5kdc"],
            "-n",
            "-r",
            self.realm,
            "-P",
            str(root / "kdc.pid"),
        ]
        env = {**os.environ, **self._env_in(root)}
        pid = spawn(argv, root / "kdc.log.out", new_session=False, env=env)
        self._process = TrackedProcess(pid, str(root / "kdc.pid"), child=True)
        self._finalizer = weakref.finalize(self, _cleanup, self._process, root, self.keep_dirs)
        self._wait_until_listening(root)

    def _env_in(self, root: Path) -> dict[str, str]:
        return {"KRB5_CONFIG": str(root / "krb5.conf"), "KRB5_KDC_PROFILE": str(root / "kdc.conf")}

    def _write_configs(self, root: Path) -> None:
        kdc = f"{LOOPBACK}:{self.port}"
        (root / "kdc.conf").write_text(
            "[kdcdefaults]\n"
            f" kdc_listen = {kdc}\n"
            f" kdc_tcp_listen = {kdc}\n"
            "[realms]\n"
            f" {self.realm} = {{\n"
            f"  database_name = {root / 'db' / 'principal'}\n"
            f"  key_stash_file = {root / 'db' / 'stash'}\n"
            f"  acl_file = {root / 'db' / 'kadm5.acl'}\n"
            f"  supported_enctypes = {_ENCTYPES}\n"
            "  max_life = 24h\n"
            "  max_renewable_life = 0\n"
            " }\n"
            "[logging]\n"
            f" kdc = FILE:{root / 'kdc.log'}\n"
            f" default = FILE:{root / 'kdc.log'}\n"
        )
        (root / "db" / "kadm5.acl").write_text("")
        # The defaults point inside the realm's directory, so that nothing of the machine's
        # (its /etc/krb5.conf realm, a user's ticket cache or client keytab) is used.
        (root / "krb5.conf").write_text(
            "[libdefaults]\n"
            f" default_realm = {self.realm}\n"
            " dns_lookup_kdc = false\n"
            " dns_lookup_realm = false\n"
            " dns_canonicalize_hostname = false\n"
            " rdns = false\n"
            " udp_preference_limit = 1\n"
            " forwardable = false\n"
            f" default_ccache_name = FILE:{root / 'ccaches' / 'default'}\n"
            f" default_client_keytab_name = FILE:{root / 'keytabs' / 'default-client.keytab'}\n"
            "[realms]\n"
            f" {self.realm} = {{\n"
            f"  kdc = {kdc}\n"
            " }\n"
            "[domain_realm]\n"
            + "".join(f" {host} = {self.realm}\n" for host in (*self.service_hosts, LOOPBACK))
        )

    def _add_principal(self, root: Path, name: str) -> None:
        principal = self.principal(name)
        keytab = root / "keytabs" / (name.replace("/", "_") + ".keytab")
        self._tool(
            root,
            "kadmin.local",
            ["-r", self.realm, "-q", f"addprinc -randkey {principal}"],
            what=f"adding principal {principal}",
            expect=f'Principal "{principal}" created',
        )
        self._tool(
            root,
            "kadmin.local",
            ["-r", self.realm, "-q", f"ktadd -norandkey -k {keytab} {principal}"],
            what=f"writing the keytab of {principal}",
            expect="added to keytab",
        )
        if not keytab.exists():
            raise KerberosError(f"kadmin.local wrote no keytab for {principal}")
        keytab.chmod(0o600)

    def _tool(
        self,
        root: Path,
        program: str,
        args: list[str],
        *,
        what: str,
        stdin: str = "",
        expect: str | None = None,
    ) -> str:
        """Run one of the realm's programs; ``KerberosError`` with its output when it fails
        (or, for ``kadmin.local``, which exits 0 when a query fails, when its output lacks
        ``expect``)."""
        result = subprocess.run(
            [self._programs[program], *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**os.environ, **self._env_in(root)},
            timeout=_TOOL_TIMEOUT_S,
            check=False,
        )
        output = result.stdout + result.stderr
        if result.returncode != 0 or (expect is not None and expect not in output):
            raise KerberosError(
                f"{what} failed ({program}, exit {result.returncode}):\n{output.strip()}"
            )
        return result.stdout

    def _run(self, program: str, args: list[str]) -> None:
        self._require_started()
        assert self._root is not None
        self._tool(self._root, program, args, what=f"{program} {' '.join(args[-1:])}")

    def _wait_until_listening(self, root: Path) -> None:
        deadline = time.monotonic() + self.start_timeout
        assert self._process is not None
        while True:
            if self._process.poll():
                tail = log_tail(root / "kdc.log") + "\n" + log_tail(root / "kdc.log.out")
                if "Address already in use" in tail:
                    raise PortTaken()
                raise KerberosError(
                    f"krb5kdc exited with status {self._process.returncode} before it listened "
                    f"on {LOOPBACK}:{self.port}:\n{tail}"
                )
            try:
                with socket.create_connection((LOOPBACK, self.port), timeout=1.0):
                    return
            except OSError:
                pass
            if time.monotonic() >= deadline:
                raise KerberosError(
                    f"krb5kdc did not listen on {LOOPBACK}:{self.port} within "
                    f"{self.start_timeout}s:\n{log_tail(root / 'kdc.log')}"
                )
            time.sleep(_POLL_S)
