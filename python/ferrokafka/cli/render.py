"""How ``consume`` writes a record: its key and value decoded (``bytes``, ``utf8``, ``json``)
and laid out as ``raw`` (the value alone, one per line, as kcat does), ``json`` (one object per
line) or ``table`` (aligned columns for reading)."""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import IO, Any

from ..structs import ConsumerRecord
from .errors import CliError
from .output import Output

__all__ = ["DECODERS", "OUTPUT_FORMATS", "RecordWriter", "decode"]

DECODERS = ("bytes", "utf8", "json")
OUTPUT_FORMATS = ("raw", "json", "table")

DECODER_HELP = (
    "utf8 (invalid bytes shown as \\xNN), json (parsed; invalid JSON is an error), or bytes: "
    "base64 in --format json, written unchanged in --format raw, \\xNN-escaped in --format table"
)


def decode(data: bytes | None, decoder: str, where: str) -> Any:
    """``data`` as the decoder reads it; None stays None. ``bytes`` gives the bytes."""
    if data is None or decoder == "bytes":
        return data
    if decoder == "json":
        try:
            return json.loads(data)
        except ValueError as exc:
            raise CliError(f"{where}: not JSON ({exc}); try --value-decoder utf8") from None
    return data.decode("utf-8", errors="backslashreplace")


def _escaped(data: bytes) -> str:
    return repr(data)[2:-1]


def _text(value: Any, decoder: str) -> str:
    """A decoded key or value as one field of text."""
    if value is None:
        return ""
    if decoder == "bytes":
        assert isinstance(value, bytes)
        return _escaped(value)
    if decoder == "json":
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _json_field(value: Any, decoder: str) -> Any:
    if decoder == "bytes" and value is not None:
        return base64.b64encode(value).decode("ascii")
    return value


def _header_value(data: bytes | None, decoder: str) -> str | None:
    if data is None:
        return None
    if decoder == "bytes":
        return base64.b64encode(data).decode("ascii")
    return data.decode("utf-8", errors="backslashreplace")


class RecordWriter:
    """Writes records to ``out`` in one format."""

    def __init__(
        self,
        output: Output,
        fmt: str,
        key_decoder: str,
        value_decoder: str,
        key_separator: str | None = None,
    ) -> None:
        self.output = output
        self.fmt = fmt
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder
        self.key_separator = key_separator
        self._header_done = False

    @property
    def out(self) -> IO[str]:
        return self.output.stdout

    def write(self, record: ConsumerRecord[bytes, bytes]) -> None:
        where = f"{record.topic} partition {record.partition} offset {record.offset}"
        key = decode(record.key, self.key_decoder, f"key at {where}")
        value = decode(record.value, self.value_decoder, f"value at {where}")
        if self.fmt == "json":
            self._json(record, key, value)
        elif self.fmt == "table":
            self._table(record, key, value)
        else:
            self._raw(key, value)

    def _raw(self, key: Any, value: Any) -> None:
        prefix = ""
        if self.key_separator is not None:
            prefix = _text(key, self.key_decoder) + self.key_separator
        if self.value_decoder == "bytes" and value is not None and hasattr(self.out, "buffer"):
            # Binary values go out unchanged, so that `consume > file` keeps them whole.
            self.out.write(prefix)
            self.out.flush()
            self.out.buffer.write(value + b"\n")
            self.out.buffer.flush()
            return
        self.out.write(prefix + _text(value, self.value_decoder) + "\n")

    def _json(self, record: ConsumerRecord[bytes, bytes], key: Any, value: Any) -> None:
        line = {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
            "key": _json_field(key, self.key_decoder),
            "value": _json_field(value, self.value_decoder),
            "headers": [[k, _header_value(v, self.value_decoder)] for k, v in record.headers],
        }
        if record.delivery_count is not None:  # read through a share group
            line["delivery_count"] = record.delivery_count
        self.out.write(json.dumps(line, ensure_ascii=False) + "\n")

    def _table(self, record: ConsumerRecord[bytes, bytes], key: Any, value: Any) -> None:
        if not self._header_done:
            self.out.write(f"{'PARTITION':>9} {'OFFSET':>10} {'TIMESTAMP':<23} {'KEY':<16} VALUE\n")
            self._header_done = True
        when = dt.datetime.fromtimestamp(record.timestamp / 1000, dt.timezone.utc)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
        shown_key = _text(key, self.key_decoder).replace("\n", "\\n")
        shown_value = _text(value, self.value_decoder).replace("\n", "\\n")
        headers = " ".join(f"{k}={_header_value(v, self.value_decoder)}" for k, v in record.headers)
        tail = f"  [{headers}]" if headers else ""
        self.out.write(
            f"{record.partition:>9} {record.offset:>10} {stamp:<23} {shown_key:<16} "
            f"{shown_value}{tail}\n"
        )
