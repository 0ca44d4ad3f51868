"""Resolve Maven artifacts into a cached folder of jars, with the machine's ``mvn``.

The broker harness needs Apache Kafka's jars; interop tests need ``kafka-clients`` or
``kafka-tools``; the Spark comparison needs Spark's Kafka connector. All of them are "these Maven
coordinates, transitively, as one flat folder of jars". :func:`resolve_jars` does exactly that:

* it writes a throwaway ``pom.xml`` naming the artifacts as dependencies (and pins in
  ``dependencyManagement`` whatever must not float, such as ``slf4j-api`` for Kafka),
* runs ``mvn`` with a pinned ``maven-dependency-plugin`` goal ``copy-dependencies``,
* keeps the jars under ``<cache>/maven/<key>/libs/`` where ``<key>`` is derived from the request,
  and writes a completion marker last, so a later call with the same request returns at once
  without running Maven (offline).

The cache root is ``$FERROKAFKA_CACHE_DIR`` if set, else ``~/.cache/ferrokafka``. Concurrent
resolutions of the same key (several test processes) are serialised with a lock file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = [
    "DEPENDENCY_PLUGIN",
    "Artifact",
    "MavenResolveError",
    "ResolvedJars",
    "cache_root",
    "resolve_jars",
]

#: The plugin goal that copies the resolved jars; pinned because Maven 3.8's default
#: dependency plugin is old and its behaviour differs across versions.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

_MARKER = "resolved.json"
_LIBS = "libs"
# Bump when the layout of a cache entry or the way it is produced changes.
_CACHE_FORMAT = 1
_COORDINATE_PART = re.compile(r"^[A-Za-z0-9_.\-]+$")


class MavenResolveError(RuntimeError):
    """``mvn`` is missing or failed; the message carries the tail of its output."""


@dataclass(frozen=True, order=True)
class Artifact:
    """Maven coordinates ``groupId:artifactId:version`` (optionally a classifier and a type)."""

    group_id: str
    artifact_id: str
    version: str
    classifier: str | None = None
    type: str = "jar"

    def __post_init__(self) -> None:
        for part in (self.group_id, self.artifact_id, self.version, self.type):
            if not _COORDINATE_PART.match(part):
                raise ValueError(f"bad Maven coordinate part {part!r} in {self}")
        if self.classifier is not None and not _COORDINATE_PART.match(self.classifier):
            raise ValueError(f"bad Maven classifier {self.classifier!r}")

    @classmethod
    def parse(cls, coordinates: str) -> Artifact:
        """Parse ``group:artifact:version`` or ``group:artifact:type:classifier:version``
        (Maven's own order) or ``group:artifact:type:version``."""
        parts = coordinates.split(":")
        if len(parts) == 3:
            return cls(parts[0], parts[1], parts[2])
        if len(parts) == 4:
            return cls(parts[0], parts[1], parts[3], type=parts[2])
        if len(parts) == 5:
            return cls(parts[0], parts[1], parts[4], classifier=parts[3], type=parts[2])
        raise ValueError(f"not Maven coordinates: {coordinates!r}")

    def __str__(self) -> str:
        if self.classifier is not None:
            return (
                f"{self.group_id}:{self.artifact_id}:{self.type}:{self.classifier}:{self.version}"
            )
        if self.type != "jar":
            return f"{self.group_id}:{self.artifact_id}:{self.type}:{self.version}"
        return f"{self.group_id}:{self.artifact_id}:{self.version}"

    def to_pom_xml(self, indent: str) -> str:
        lines = [
            "<dependency>",
            f"  <groupId>{escape(self.group_id)}</groupId>",
            f"  <artifactId>{escape(self.artifact_id)}</artifactId>",
            f"  <version>{escape(self.version)}</version>",
        ]
        if self.type != "jar":
            lines.append(f"  <type>{escape(self.type)}</type>")
        if self.classifier is not None:
            lines.append(f"  <classifier>{escape(self.classifier)}</classifier>")
        lines.append("</dependency>")
        return "\n".join(indent + line for line in lines)


@dataclass(frozen=True)
class ResolvedJars:
    """A completed resolution: a folder holding every jar, flat."""

    directory: Path
    jars: tuple[Path, ...]

    @property
    def classpath(self) -> str:
        """A JVM ``-cp`` value naming every jar of the folder (``<dir>/*``)."""
        return str(self.directory / "*")

    def jar(self, artifact_id: str) -> Path:
        """The one jar whose file name is ``<artifact_id>-<version>[-classifier].jar``."""
        pattern = re.compile(rf"^{re.escape(artifact_id)}-\d[^/]*\.jar$")
        found = [j for j in self.jars if pattern.match(j.name)]
        if len(found) != 1:
            raise LookupError(
                f"{len(found)} jars named like {artifact_id!r} in {self.directory}: "
                f"{[j.name for j in found]}"
            )
        return found[0]


def cache_root() -> Path:
    """``$FERROKAFKA_CACHE_DIR`` or ``~/.cache/ferrokafka``."""
    configured = os.environ.get("FERROKAFKA_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "ferrokafka"


def _as_artifacts(items: Iterable[Artifact | str]) -> tuple[Artifact, ...]:
    return tuple(a if isinstance(a, Artifact) else Artifact.parse(a) for a in items)


def _cache_key(
    artifacts: Sequence[Artifact],
    managed: Sequence[Artifact],
    scope: str,
    excludes: Sequence[str],
    transitive: bool,
) -> str:
    request: dict[str, object] = {
        "format": _CACHE_FORMAT,
        "plugin": DEPENDENCY_PLUGIN,
        "scope": scope,
        "artifacts": [str(a) for a in artifacts],
        "managed": sorted(str(a) for a in managed),
        "excludes": sorted(excludes),
    }
    if not transitive:  # only then, so the keys of existing (transitive) entries stay valid
        request["transitive"] = False
    digest = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()[:16]
    first = artifacts[0]
    readable = re.sub(r"[^A-Za-z0-9_.\-]", "_", f"{first.artifact_id}-{first.version}")
    return f"{readable}-{digest}"


def _pom(artifacts: Sequence[Artifact], managed: Sequence[Artifact]) -> str:
    deps = "\n".join(a.to_pom_xml(" " * 4) for a in artifacts)
    pinned = "\n".join(a.to_pom_xml(" " * 6) for a in managed)
    plugin_group, plugin_artifact, plugin_version = DEPENDENCY_PLUGIN.split(":")
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Generated by ferrokafka.testing.maven; safe to delete. -->
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.ferrokafka.cache</groupId>
  <artifactId>resolve</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <properties>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencyManagement>
    <dependencies>
{pinned}
    </dependencies>
  </dependencyManagement>
  <dependencies>
{deps}
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>{plugin_group}</groupId>
        <artifactId>{plugin_artifact}</artifactId>
        <version>{plugin_version}</version>
      </plugin>
    </plugins>
  </build>
</project>
"""


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl  # POSIX only, like the broker harness that needs it

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _read_marker(entry: Path) -> ResolvedJars | None:
    marker = entry / _MARKER
    try:
        recorded = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    libs = entry / _LIBS
    jars = tuple(libs / name for name in recorded.get("jars", []))
    if not jars or not all(j.is_file() for j in jars):
        return None
    return ResolvedJars(directory=libs, jars=jars)


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def resolve_jars(
    artifacts: Iterable[Artifact | str],
    *,
    managed: Iterable[Artifact | str] = (),
    scope: str = "runtime",
    exclude_artifact_ids: Iterable[str] = (),
    transitive: bool = True,
    cache_dir: Path | None = None,
    mvn: str | None = None,
    timeout: float = 1800.0,
) -> ResolvedJars:
    """Resolve ``artifacts`` and their dependencies (``scope`` as Maven's ``includeScope``) into
    ``<cache>/maven/<key>/libs`` and return the jars.

    ``managed`` pins versions through ``dependencyManagement`` without adding dependencies.
    ``transitive=False`` copies only the listed artifacts (Maven's ``excludeTransitive``), for a
    host that already ships their dependencies (Spark's connector jars, for instance).
    A completed entry is reused without running Maven. ``mvn`` defaults to ``$FERROKAFKA_MVN`` or
    ``mvn`` on ``PATH``. Raises :class:`MavenResolveError` if Maven fails or is missing.
    """
    wanted = _as_artifacts(artifacts)
    if not wanted:
        raise ValueError("resolve_jars needs at least one artifact")
    pinned = _as_artifacts(managed)
    excludes = tuple(exclude_artifact_ids)
    root = (cache_dir if cache_dir is not None else cache_root()) / "maven"
    key = _cache_key(wanted, pinned, scope, excludes, transitive)
    entry = root / key

    done = _read_marker(entry)
    if done is not None:
        return done

    with _locked(root / f"{key}.lock"):
        done = _read_marker(entry)  # another process may have finished while we waited
        if done is not None:
            return done
        return _run_maven(entry, wanted, pinned, scope, excludes, transitive, mvn, timeout)


def _run_maven(
    entry: Path,
    wanted: Sequence[Artifact],
    pinned: Sequence[Artifact],
    scope: str,
    excludes: Sequence[str],
    transitive: bool,
    mvn: str | None,
    timeout: float,
) -> ResolvedJars:
    executable = shutil.which(mvn or os.environ.get("FERROKAFKA_MVN") or "mvn")
    if executable is None:
        raise MavenResolveError(
            f"Maven ({mvn or 'mvn'}) is not on PATH; it is needed to resolve {wanted[0]}"
        )
    entry.mkdir(parents=True, exist_ok=True)
    (entry / "pom.xml").write_text(_pom(wanted, pinned))
    # Copy into a scratch folder first and rename at the end, so a crash never leaves a
    # half-filled libs/ that looks complete.
    scratch = Path(tempfile.mkdtemp(prefix=".libs-", dir=entry))
    command = [
        executable,
        "--batch-mode",
        "--no-transfer-progress",
        "-f",
        str(entry / "pom.xml"),
        f"{DEPENDENCY_PLUGIN}:copy-dependencies",
        f"-DincludeScope={scope}",
        f"-DoutputDirectory={scratch}",
    ]
    if excludes:
        command.append(f"-DexcludeArtifactIds={','.join(excludes)}")
    if not transitive:
        command.append("-DexcludeTransitive=true")
    try:
        try:
            completed = subprocess.run(
                command,
                cwd=entry,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            output = exc.stdout if isinstance(exc.stdout, str) else ""
            raise MavenResolveError(
                f"mvn did not finish within {timeout:.0f}s resolving {wanted[0]}:\n{_tail(output)}"
            ) from None
        (entry / "mvn.log").write_text(completed.stdout + completed.stderr)
        if completed.returncode != 0:
            raise MavenResolveError(
                f"mvn exited with {completed.returncode} resolving "
                f"{', '.join(str(a) for a in wanted)} (log: {entry / 'mvn.log'}):\n"
                f"{_tail(completed.stdout + completed.stderr)}"
            )
        jars = sorted(p.name for p in scratch.iterdir() if p.suffix == ".jar")
        if not jars:
            raise MavenResolveError(
                f"mvn copied no jars for {wanted[0]} (log: {entry / 'mvn.log'})"
            )
        libs = entry / _LIBS
        if libs.exists():
            shutil.rmtree(libs)
        scratch.rename(libs)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)
    marker = {
        "artifacts": [str(a) for a in wanted],
        "managed": [str(a) for a in pinned],
        "scope": scope,
        "transitive": transitive,
        "plugin": DEPENDENCY_PLUGIN,
        "jars": jars,
    }
    partial = entry / f"{_MARKER}.tmp"
    partial.write_text(json.dumps(marker, indent=2) + "\n")
    partial.replace(entry / _MARKER)
    return ResolvedJars(directory=libs, jars=tuple(libs / name for name in jars))
