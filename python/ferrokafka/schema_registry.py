"""Writer schemas of Confluent-framed Avro records, fetched by id from a Schema Registry
(``GET {url}/schemas/ids/{id}``, whose answer is ``{"schema": "<Avro schema JSON>"}``) and
kept by id: a registered id's schema never changes, so each is fetched once.

The request is ``urllib`` in a worker thread (``asyncio.to_thread``): one request per new id
is not worth an HTTP client dependency, and the Rust core does no I/O. A 5xx answer or a
connection error is retried a few times with a growing pause; a 404 is :class:`SchemaNotFound`
at once. ``user:password@`` in the URL is sent as HTTP basic auth.
"""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.parse

__all__ = ["SchemaNotFound", "SchemaRegistry", "SchemaRegistryUnavailable"]


class SchemaNotFound(LookupError):
    """The registry has no schema of this id (HTTP 404)."""


class SchemaRegistryUnavailable(ConnectionError):
    """The registry did not answer with a schema: connection errors or 5xx answers on every
    try, another error status, or an answer that is not ``{"schema": ...}``."""


class SchemaRegistry:
    """A Schema Registry at ``url`` (``http(s)://[user:password@]host:port[/path]``).
    ``timeout`` is per request, in seconds; a failed request is tried ``retries`` more
    times."""

    def __init__(
        self, url: str, *, timeout: float = 10.0, retries: int = 3, backoff: float = 0.2
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"registry_url must be an http(s) URL, got {url!r}")
        self._auth: str | None = None
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            self._auth = f"Basic {token}"
        host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
        if ":" in parts.hostname:  # an IPv6 address
            host = f"[{parts.hostname}]" + ("" if parts.port is None else f":{parts.port}")
        self.url = urllib.parse.urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._schemas: dict[int, str] = {}

    def __repr__(self) -> str:
        # The URL without credentials.
        return f"SchemaRegistry({self.url!r})"

    def cached(self, schema_id: int) -> str | None:
        """The schema of ``schema_id`` if it was fetched."""
        return self._schemas.get(schema_id)

    async def schema(self, schema_id: int) -> str:
        """The schema JSON text of ``schema_id``; :class:`SchemaNotFound`,
        :class:`SchemaRegistryUnavailable`."""
        known = self._schemas.get(schema_id)
        if known is not None:
            return known
        text = await asyncio.to_thread(self._fetch, schema_id)
        self._schemas[schema_id] = text
        return text

    def _fetch(self, schema_id: int) -> str:
        # Imported here, where a lookup needs them: urllib.request brings http.client and the
        # email package, over 3 MB resident, into every process that imports the client.
        import time
        import urllib.error
        import urllib.request

        address = f"{self.url}/schemas/ids/{schema_id}"
        request = urllib.request.Request(address, headers={"Accept": "application/json"})
        if self._auth is not None:
            request.add_header("Authorization", self._auth)
        why = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                    body = answer.read()
            except urllib.error.HTTPError as exc:
                exc.close()  # the error holds the answer's socket
                if exc.code == 404:
                    raise SchemaNotFound(
                        f"the registry at {self.url} has no schema id {schema_id} (HTTP 404)"
                    ) from None
                why = f"HTTP {exc.code} {exc.reason}"
                if exc.code < 500:
                    break
                continue
            except (urllib.error.URLError, OSError) as exc:
                why = str(getattr(exc, "reason", exc))
                continue
            try:
                schema = json.loads(body)["schema"]
            except (ValueError, KeyError, TypeError):
                raise SchemaRegistryUnavailable(
                    f"{address}: the answer is not {{'schema': ...}}: {body[:200]!r}"
                ) from None
            if not isinstance(schema, str):
                raise SchemaRegistryUnavailable(f"{address}: 'schema' is not text")
            return schema
        raise SchemaRegistryUnavailable(f"{address}: no schema after {attempt + 1} tries: {why}")
