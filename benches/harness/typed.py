"""W11's data: typed records of about 200 B, as JSON and as Avro in Confluent's wire format, the
checksum every reader computes over the decoded columns, and a small Schema Registry.

The record is a typical event of 10 fields: longs, an int, a double, strings, a boolean, a
timestamp, a nullable string, a nested record and an array of strings (``SCHEMA``, ``DDL``).
``rows`` makes them column by column (numpy, seeded), so that millions take about a second.

Every reader proves what it decoded with ``checksum``: the row count and integer sums over every
field (string lengths, list sizes, nulls, the timestamps' microseconds), computed with
``pyarrow.compute`` over a table, or with Spark SQL (``CHECKSUM_SQL``) over the ``value``
struct column. A field decoded wrong, or a record that did not decode, changes a sum.

No Schema Registry can be run here (none is published on Maven Central or PyPI), so the run
serves the one endpoint its readers call, ``GET /schemas/ids/{id}``, from ``Registry``: a
thread of this process with the schemas of the run.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

#: The Avro schema of the records (Confluent's framing names it by ``SCHEMA_ID``).
SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "country", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "items", "type": "int"},
        {"name": "paid", "type": "boolean"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "channel", "type": ["null", "string"]},
        {
            "name": "device",
            "type": {
                "type": "record",
                "name": "Device",
                "fields": [{"name": "os", "type": "string"}, {"name": "version", "type": "int"}],
            },
        },
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
SCHEMA_ID = 1
#: The same record in Spark DDL (the JSON readers' schema).
DDL = (
    "id BIGINT, user STRING, country STRING, amount DOUBLE, items INT, paid BOOLEAN, "
    "at TIMESTAMP, channel STRING, device STRUCT<os: STRING, version: INT>, tags ARRAY<STRING>"
)
#: The same record as a JSON Schema (confluent-kafka's ``JSONDeserializer`` validates with it).
JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "user": {"type": "string"},
        "country": {"type": "string"},
        "amount": {"type": "number"},
        "items": {"type": "integer"},
        "paid": {"type": "boolean"},
        "at": {"type": "string", "format": "date-time"},
        "channel": {"type": ["string", "null"]},
        "device": {
            "type": "object",
            "properties": {"os": {"type": "string"}, "version": {"type": "integer"}},
            "required": ["os", "version"],
        },
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "user", "country", "amount", "items", "paid", "at", "device", "tags"],
}
JSON_SCHEMA_ID = 2
#: The first timestamp (2026-11-29T00:00:00Z), microseconds; the records fall in one day.
START_US = 1_795_910_400_000_000
FORMATS = ("JSON", "Avro")

_COUNTRIES = ["Federal Republic of Germany", "French Republic", "United States of America"]
_CHANNELS = ["web-checkout", "mobile-app", "retail-store", None]
_OSES = ["iOS 18.1 (iPhone 15 Pro)", "Android 15 (Pixel 9)"]
_TAGS = ["new-customer", "promotion-2026", "gift-wrapped", "bulk-order", "vip-tier"]


def arrow_type() -> Any:
    """The records' struct type, as the decoders give it (every field nullable)."""
    import pyarrow as pa

    return pa.struct(
        [
            ("id", pa.int64()),
            ("user", pa.string()),
            ("country", pa.string()),
            ("amount", pa.float64()),
            ("items", pa.int32()),
            ("paid", pa.bool_()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("channel", pa.string()),
            ("device", pa.struct([("os", pa.string()), ("version", pa.int32())])),
            ("tags", pa.list_(pa.string())),
        ]
    )


def rows(n: int, seed: int = 11) -> Any:
    """``n`` records as a struct ``pyarrow.Array`` (``arrow_type``); record ``i`` has id ``i``,
    the other fields drawn from a generator seeded with ``seed``."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    users = pa.array(
        [f"customer-{k:06d}.account@shop-example-domain.org" for k in range(100_000)], pa.string()
    )
    # Four of the five tags in some order: one of the 120 arrangements per record.
    arrangements = pa.array([list(p) for p in itertools.permutations(_TAGS, 4)])
    t = arrow_type()
    device = pa.StructArray.from_arrays(
        [
            pa.array(_OSES, pa.string()).take(rng.integers(0, len(_OSES), n)),
            pa.array(rng.integers(0, 20, n, dtype=np.int32)),
        ],
        fields=list(t.field("device").type),
    )
    columns = [
        pa.array(np.arange(n, dtype=np.int64)),
        users.take(rng.integers(0, len(users), n)),
        pa.array(_COUNTRIES, pa.string()).take(rng.integers(0, len(_COUNTRIES), n)),
        pa.array(np.round(rng.uniform(1, 500, n), 2)),
        pa.array(rng.integers(1, 9, n, dtype=np.int32)),
        pa.array(rng.random(n) < 0.9),
        pa.array(START_US + rng.integers(0, 86_400, n) * 1_000_000, pa.timestamp("us", "UTC")),
        pa.array(_CHANNELS, pa.string()).take(rng.integers(0, len(_CHANNELS), n)),
        device,
        arrangements.take(rng.integers(0, len(arrangements), n)),
    ]
    return pa.StructArray.from_arrays(columns, fields=list(t))


def encode(values: Any, fmt: str) -> list[bytes]:
    """``values`` (``rows``) as payloads: plain JSON text, or Avro datums in Confluent's wire
    format (magic byte 0, ``SCHEMA_ID`` as 4 bytes big-endian, the datum). Written with
    ferrokafka's encoders (Rust): the readers of other libraries decode them independently, and
    the tests check them against fastavro and ``json``."""
    from ferrokafka.formats import AvroFormat, JsonFormat

    if fmt == "JSON":
        out = JsonFormat(DDL).encode(values)
    elif fmt == "Avro":
        out = AvroFormat(SCHEMA, confluent=True, schema_id=SCHEMA_ID).encode(values)
    else:
        raise ValueError(f"no W11 format {fmt!r}")
    return out.to_pylist()


# -- the checksum ------------------------------------------------------------------------------

#: Each figure of the checksum as a Spark SQL aggregate over the ``value`` struct column.
CHECKSUM_SQL: dict[str, str] = {
    "rows": "count(*)",
    "id": "sum(value.id)",
    "user_chars": "sum(length(value.user))",
    "country_chars": "sum(length(value.country))",
    "amount_cents": "sum(cast(round(value.amount * 100) as bigint))",
    "items": "sum(value.items)",
    "paid": "count_if(value.paid)",
    "at_us": f"sum(unix_micros(value.at) - {START_US})",
    "channel_chars": "coalesce(sum(length(value.channel)), 0)",
    "channel_nulls": "count_if(value.channel is null)",
    "os_chars": "sum(length(value.device.os))",
    "version": "sum(value.device.version)",
    "tags": "sum(size(value.tags))",
    "tag_chars": "sum(length(array_join(value.tags, '')))",
}


def checksum(values: Any) -> dict[str, int]:
    """The figures of ``CHECKSUM_SQL`` over a struct array (or chunked array) of records, with
    ``pyarrow.compute``. A null record (one that did not decode) counts as a row and adds
    nothing else."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], arrow_type())
    present = values.filter(values.is_valid()) if values.null_count else values

    def f(name: str) -> Any:
        return present.field(name)

    def total(array: Any) -> int:
        got = pc.sum(array).as_py()
        return int(got or 0)

    device = f("device")
    at = pc.cast(f("at"), pa.int64())
    return {
        "rows": len(values),
        "id": total(f("id")),
        "user_chars": total(pc.utf8_length(f("user"))),
        "country_chars": total(pc.utf8_length(f("country"))),
        "amount_cents": total(pc.cast(pc.round(pc.multiply(f("amount"), 100)), pa.int64())),
        "items": total(pc.cast(f("items"), pa.int64())),
        "paid": total(pc.cast(f("paid"), pa.int64())),
        "at_us": total(pc.subtract(at, START_US)),
        "channel_chars": total(pc.utf8_length(f("channel"))),
        "channel_nulls": f("channel").null_count,
        "os_chars": total(pc.utf8_length(device.field("os"))),
        "version": total(pc.cast(device.field("version"), pa.int64())),
        "tags": total(pc.list_value_length(f("tags"))),
        "tag_chars": total(pc.utf8_length(pc.list_flatten(f("tags")))),
    }


# -- a Schema Registry's one endpoint ----------------------------------------------------------

_BY_ID = re.compile(r"^/schemas/ids/(\d+)$")


class Registry:
    """``GET /schemas/ids/{id}`` of Confluent's Schema Registry REST API over ``schemas`` (id to
    ``(schema text, schema type)``), on 127.0.0.1, from a thread; ``url`` is its address. The
    answer is ``{"schema": text}`` (with ``"schemaType"`` unless Avro, as the registry gives
    it); an unknown id is its 404 with error code 40403; anything else, 404 with 404. Query
    parameters (confluent-kafka sends ``subject``) are ignored. ``requests`` counts the
    lookups by id (each reader caches what it fetched)."""

    def __init__(self, schemas: dict[int, tuple[str, str]]) -> None:
        self.schemas = dict(schemas)
        self.requests: dict[int, int] = {}
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                m = _BY_ID.match(path)
                if m is None:
                    return self._answer(404, {"error_code": 404, "message": "HTTP 404 Not Found"})
                schema_id = int(m.group(1))
                with registry._lock:
                    registry.requests[schema_id] = registry.requests.get(schema_id, 0) + 1
                found = registry.schemas.get(schema_id)
                if found is None:
                    return self._answer(404, {"error_code": 40403, "message": "Schema not found"})
                text, kind = found
                body: dict[str, Any] = {"schema": text}
                if kind != "AVRO":
                    body["schemaType"] = kind
                return self._answer(200, body)

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the harness's stderr is its progress log

        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="w11-registry", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Registry:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)


def registry_schemas() -> dict[int, tuple[str, str]]:
    """The run's schemas by id: the records' Avro schema and their JSON Schema."""
    return {
        SCHEMA_ID: (json.dumps(SCHEMA), "AVRO"),
        JSON_SCHEMA_ID: (json.dumps(JSON_SCHEMA), "JSON"),
    }
