"""Property-based fuzzing of the native module's Python-facing API (issue 35).

Hypothesis drives ``ferrokafka._native`` with hostile arguments: the frame decoder against a
reference model of its documented rules (windows used, lied about, held and released; scratch
buffers of every kind, the window itself included), the record-batch decoders on random,
truncated and corrupted batches with odd options, the producer's ``BatchRecords`` and
``OpenBatches``, and the Arrow input (nulls at every level, slices, tampered C Data Interface
structures, buffers changed between planning and encoding, streams, unsupported types).

The properties, everywhere: a call returns or raises an ``Exception`` (never a
``BaseException`` only, such as PyO3's ``PanicException``, and never a crash); nothing it returns
holds bytes the test did not write; valid inputs round-trip.

The short run is part of ``make test`` (derandomized: the same examples every run).
``FERROKAFKA_FUZZ_EXAMPLES=N`` runs every property with N random examples instead, for long
runs. The bugs it found have minimal reproductions at the end of the file.
"""

from __future__ import annotations

import array
import asyncio
import ctypes
import mmap
import os
import random
import struct
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pytest
from ferrokafka import _native
from ferrokafka import errors as Errors
from ferrokafka.structs import TopicPartition
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from .arrow_c import ArrowArray, capsule_pointer

T = TypeVar("T")

_LONG_RUN = int(os.environ.get("FERROKAFKA_FUZZ_EXAMPLES", "0"))
# A long run takes as long as it takes: no per-test timeout then.
pytestmark = [pytest.mark.timeout(0)] if _LONG_RUN else []


def fuzz(examples: int) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Hypothesis settings for one property: `examples` derandomized examples in the short run
    (``make test``), or FERROKAFKA_FUZZ_EXAMPLES random ones."""
    return settings(
        max_examples=_LONG_RUN or examples,
        derandomize=not _LONG_RUN,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


def attempt(call: Callable[..., T], *args: Any, **kwargs: Any) -> T | Exception:
    """The call's result or its `Exception`. Anything else that escapes the native module
    (PyO3's PanicException derives from BaseException only) fails the property."""
    try:
        return call(*args, **kwargs)
    except Exception as exc:
        return exc
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise AssertionError(
            f"{type(exc).__module__}.{type(exc).__name__} is not an Exception: {exc}"
        ) from exc


I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
MB = 1 << 20


# ---- the frame decoder ---------------------------------------------------------------------


class FrameTooLarge(Exception):
    """The model's FrameTooLargeError."""


class Closed(Exception):
    """The model's BufferError of a closed window."""


@dataclass
class ModelView:
    """A memoryview over a receive window, and where it lies in the frame's model storage."""

    view: memoryview
    storage: bytearray
    start: int
    released: bool = False


@dataclass
class ModelWindow:
    """A ReceiveWindow object (a view's ``obj``) and its id in the model."""

    owner: Any
    id: int
    storage: bytearray
    start: int


@dataclass
class FrameModel:
    """What `_FrameDecoder` must do, written from its documentation: frames of ``direct_min``
    bytes or more are received into zeroed storage of their own (`direct`, the model's copy
    of it), written by feeding and through receive windows; a complete one is handed out only
    once no window buffer is exported; a size prefix above the cap (or negative) fails the
    decoder for good."""

    max_frame_size: int
    direct_min: int
    buf: bytearray = field(default_factory=bytearray)
    direct: bytearray | None = None
    filled: int = 0
    failed: bool = False
    exports: int = 0
    current: int = 0

    def close(self) -> None:
        self.current += 1

    def complete(self) -> bool:
        return self.direct is not None and self.filled == len(self.direct)

    @property
    def held(self) -> bool:
        return self.complete() and self.exports > 0

    @property
    def buffered(self) -> int:
        return len(self.buf) + (self.filled if self.direct is not None else 0)

    def window(self) -> tuple[bytearray, int] | None:
        if self.direct is None or self.complete():
            return None
        return self.direct, self.filled

    def take_in(self, data: bytes) -> None:
        if self.direct is not None:
            n = min(len(self.direct) - self.filled, len(data))
            self.direct[self.filled : self.filled + n] = data[:n]
            self.filled += n
            data = data[n:]
        self.buf += data

    def frames(self) -> list[bytes]:
        if self.held:
            return []
        out: list[bytes] = []
        while True:
            if self.direct is not None:
                if not self.complete():
                    return out
                out.append(bytes(self.direct))
                self.direct, self.filled = None, 0
                continue
            if self.failed:
                raise FrameTooLarge
            if len(self.buf) < 4:
                return out
            size = int.from_bytes(self.buf[:4], "big", signed=True)
            if size < 0 or size > self.max_frame_size:
                self.failed = True
                raise FrameTooLarge
            if len(self.buf) < 4 + size:
                if size >= self.direct_min:
                    self.direct = bytearray(size)
                    body = self.buf[4:]
                    self.direct[: len(body)] = body
                    self.filled = len(body)
                    self.buf.clear()
                return out
            out.append(bytes(self.buf[4 : 4 + size]))
            del self.buf[: 4 + size]


def frame_streams(max_frame_size: int, hostile: bool) -> st.SearchStrategy[bytes]:
    """Size-prefixed frames; when `hostile`, now and then a hostile size prefix (negative, over
    the cap, or of a frame that never ends) or junk."""
    over = st.integers(min(max_frame_size + 1, 2**31 - 1), 2**31 - 1)
    frame = st.builds(
        lambda n, seed: struct.pack(">i", n) + random.Random(seed).randbytes(n),
        st.one_of(st.integers(0, 40), st.integers(0, 3000), st.integers(0, 3000)),
        st.integers(0, 2**32),
    )
    part = frame
    if hostile:
        prefix = st.one_of(
            st.integers(-(2**31), -1), over, st.integers(0, min(max_frame_size, 2**16))
        )
        part = st.one_of(
            frame, frame, frame, prefix.map(lambda n: struct.pack(">i", n)), st.binary(max_size=12)
        )
    return st.lists(part, min_size=1, max_size=6).map(b"".join)


SCRATCH_KINDS = [
    "bytearray",
    "bytes",
    "mmap",
    "array_B",
    "slice",
    "strided",
    "array_i",
    "window",
    "stale_window",
    "owner",
    "released",
    "none",
    "str",
]
FRAME_OPS = (
    ["feed"] * 3
    + ["feed_junk", "feed_wrong_type", "window", "write_view", "claim", "release"]
    + ["recv_into"] * 4
    + ["owner_export", "take", "take"]
    + ["scratch"] * 3
)


@given(
    hostile=st.integers(0, 3).map(lambda n: n == 0),
    caps=st.integers(0, 4),
    direct_min=st.sampled_from([0, 1, 2, 17, 100, 100, 1000, 2**64 - 1]),
    data=st.data(),
)
@fuzz(250)
def test_frame_decoder_follows_its_model_whatever_the_caller_does(
    hostile: bool, caps: int, direct_min: int, data: st.DataObject
) -> None:
    # A hostile stream fails the decoder early: most examples keep to well-formed frames (and
    # lie about them) to reach deeper states.
    if hostile:
        max_frame_size = [0, 3, 64, 5000, _native.DEFAULT_MAX_FRAME_SIZE][caps]
    else:
        max_frame_size = [5000, _native.DEFAULT_MAX_FRAME_SIZE][caps % 2]
    stream = data.draw(frame_streams(max_frame_size, hostile), label="stream")
    # Each step: an operation and three numbers its arguments are made of.
    steps = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(FRAME_OPS),
                st.integers(0, 2**16),
                st.integers(0, 2**16),
                st.integers(0, 2**16),
            ),
            min_size=5,
            max_size=40,
        ),
        label="steps",
    )
    decoder = _native._FrameDecoder(max_frame_size=max_frame_size, direct_min=direct_min)
    model = FrameModel(max_frame_size, max(direct_min, 1))
    assert decoder.max_frame_size == max_frame_size
    views: list[ModelView] = []
    windows: list[ModelWindow] = []
    handed_out: list[tuple[Any, bytes]] = []
    mmaps: list[mmap.mmap] = []
    pos = 0

    def next_bytes(n: int) -> bytes:
        """The next `n` bytes of the stream (fewer at its end), not yet consumed."""
        return stream[pos : pos + n]

    def consume(n: int) -> None:
        nonlocal pos
        pos += n

    def live_views() -> list[ModelView]:
        return [v for v in views if not v.released]

    def release(v: ModelView) -> None:
        v.view.release()
        v.released = True
        model.exports -= 1

    def expect(real: list[Any] | Exception, model_call: Callable[[], list[bytes]]) -> None:
        try:
            want: list[bytes] | type[Exception] = model_call()
        except FrameTooLarge:
            want = Errors.FrameTooLargeError
        except ValueError:
            want = ValueError
        note(f"  -> {real!r} (model: {want!r})")
        if isinstance(want, list):
            assert not isinstance(real, Exception), f"raised {real!r}, model: frames {want!r}"
            got = [bytes(f) for f in real]
            assert got == want, "frames differ from what was sent (or zeros where unwritten)"
            handed_out.extend(zip(real, want, strict=True))
        else:
            assert type(real) is want, f"got {real!r}, the model raises {want.__name__}"

    def fed(chunk: bytes) -> Callable[[], list[bytes]]:
        def run() -> list[bytes]:
            model.take_in(chunk)
            return model.frames()

        return run

    def claimed(n: int) -> Callable[[], list[bytes]]:
        def run() -> list[bytes]:
            w = model.window()
            if w is None or n > len(w[0]) - w[1]:
                raise ValueError
            model.filled += n
            return model.frames()

        return run

    def open_window() -> memoryview | None:
        got = attempt(decoder.receive_window)
        assert not isinstance(got, Exception), got
        want = model.window()
        note(f"  window -> {got!r} (model: {want and (len(want[0]), want[1])})")
        if want is None:
            assert got is None
            return None
        assert isinstance(got, memoryview)
        storage, start = want
        assert len(got) == len(storage) - start
        assert not got.readonly and got.contiguous
        # A fresh window shows what was written there before (zeros, or bytes written
        # through an earlier window beyond what it was told).
        assert bytes(got) == bytes(storage[start:]), "the window shows unwritten memory"
        model.close()
        model.exports += 1
        views.append(ModelView(got, storage, start))
        windows.append(ModelWindow(got.obj, model.current, storage, start))
        return got

    for op, a, b, c in steps:
        note(f"{op} {a} {b} {c}")
        live = live_views()
        if op == "feed":
            chunk = next_bytes(a % 701 if b % 4 else len(stream))
            consume(len(chunk))
            model.close()
            expect(attempt(decoder.feed, chunk), fed(chunk))
        elif op == "feed_junk" and hostile:
            junk = random.Random(a).randbytes(b % 10)
            model.close()
            expect(attempt(decoder.feed, junk), fed(junk))
        elif op == "feed_wrong_type":
            # Refused while its arguments are read: nothing happens, not even a window closing.
            bad: Any = [bytearray(b"ab"), memoryview(b"ab"), "ab", None, 3][a % 5]
            assert isinstance(attempt(decoder.feed, bad), TypeError)
        elif op == "window":
            open_window()
        elif op == "recv_into":
            # What a buffered protocol does, honest or not: write stream bytes at the start of
            # the newest window (asking for one if none is held), then claim some number of
            # them arrived, with the window released first or still held.
            if not live and open_window() is None:
                continue
            v = live_views()[-1]
            chunk = next_bytes(len(v.view) if b % 2 else a % (len(v.view) + 1))
            v.view[: len(chunk)] = chunk
            v.storage[v.start : v.start + len(chunk)] = chunk
            n = [len(chunk), len(chunk), len(chunk) + 1, len(v.view), len(v.view) + 1, 0][c % 6]
            if b % 3 == 0:
                release(v)
            model.close()
            got = attempt(decoder.received, n, True, bytearray(1))
            expect(got, claimed(n))
            if not isinstance(got, Exception):
                consume(n)  # a lie skips stream bytes: the frame boundary stays
        elif op == "write_view" and live:
            # A write through any view still held, stale ones included: the frame may change
            # until it is handed out, never after.
            v = live[a % len(live)]
            if len(v.view) == 0:
                continue
            at = b % len(v.view)
            chunk = random.Random(c).randbytes(1 + a % (len(v.view) - at))
            v.view[at : at + len(chunk)] = chunk
            v.storage[v.start + at : v.start + at + len(chunk)] = chunk
        elif op == "claim":
            n = [a % 5001, a % 5001, 2**64 - 1, -1][b % 4]
            if not 0 <= n < 2**64:
                assert isinstance(attempt(decoder.received, n, True, b""), OverflowError)
                continue
            model.close()
            got = attempt(decoder.received, n, True, b"")
            expect(got, claimed(n))
            if not isinstance(got, Exception):
                consume(n)
        elif op == "release" and live:
            release(live[a % len(live)])
        elif op == "owner_export" and windows:
            w = windows[a % len(windows)]
            exported: memoryview | Exception = attempt(memoryview, w.owner)
            if w.id == model.current:
                assert isinstance(exported, memoryview), exported
                model.exports += 1
                views.append(ModelView(exported, w.storage, w.start))
            else:
                assert isinstance(exported, BufferError), exported
        elif op == "scratch":
            kind = SCRATCH_KINDS[a % len(SCRATCH_KINDS)]
            nbytes = b % 301
            content = next_bytes(nbytes)
            scratch: Any
            fails: type[Exception] | None = None
            source: bytes | None = None  # what the decoder reads, if it reads
            if kind in ("bytearray", "bytes", "mmap", "array_B", "slice"):
                raw = content + bytes(nbytes - len(content) + c % 4)
                if kind == "bytearray":
                    scratch = bytearray(raw)
                elif kind == "bytes":
                    scratch = raw
                elif kind == "mmap":
                    scratch = mmap.mmap(-1, max(len(raw), 1))
                    scratch[: len(raw)] = raw
                    mmaps.append(scratch)
                elif kind == "array_B":
                    scratch = array.array("B", raw)
                else:
                    scratch = memoryview(bytearray(b"\xee" + raw))[1:]
                source = bytes(scratch)
            elif kind == "strided":
                scratch = memoryview(bytearray(content * 2 + b"x"))[::2]
                fails = ValueError if len(scratch) > 1 else None
                source = bytes(scratch)
            elif kind == "array_i":
                scratch, fails = memoryview(array.array("i", [1, 2, 3])), BufferError
            elif kind in ("window", "stale_window"):
                if not live:
                    continue
                v = live[-1] if kind == "window" else live[c % len(live)]
                scratch = v.view
                current = model.window()
                # The storage of the frame being received may not feed itself.
                fails = ValueError if current is not None and current[0] is v.storage else None
                source = bytes(v.storage[v.start :])
            elif kind == "owner":
                if not windows:
                    continue
                # Every window is closed once bytes are reported: no buffer to read.
                scratch, fails = windows[c % len(windows)].owner, BufferError
            elif kind == "released":
                scratch = memoryview(bytearray(10))
                scratch.release()
                fails = ValueError
            else:
                scratch, fails = (None if kind == "none" else "abc"), TypeError
            if fails is None and source is not None:
                if nbytes > len(source):
                    fails = ValueError
                source = source[:nbytes]
            model.close()
            got = attempt(decoder.received, nbytes, False, scratch)
            note(f"  scratch {kind} of {nbytes}: {got!r}")
            if fails is not None:
                assert isinstance(got, fails), f"{kind}: {got!r}, expected {fails.__name__}"
            else:
                assert source is not None
                expect(got, fed(source))
                consume(nbytes)
        elif op == "take":
            expect(attempt(decoder.take), model.frames)
        assert decoder.held == model.held
        assert decoder.buffered == model.buffered

    # Release everything: whatever is complete comes out, as the model says.
    for v in live_views():
        release(v)
    expect(attempt(decoder.take), model.frames)
    assert not decoder.held
    # A frame handed out never changes, whatever was written through windows since.
    for frame, want in handed_out:
        assert bytes(frame) == want, "a frame changed after it was handed out"
    for m in mmaps:
        m.close()


@given(
    size=I32,
    cap=st.one_of(st.integers(0, 2**31 + 5), st.just(2**64 - 1)),
    direct_min=st.one_of(st.integers(0, 2**31 + 5), st.just(2**64 - 1)),
    body=st.binary(max_size=64),
)
@fuzz(100)
def test_any_size_prefix_under_any_cap_is_a_frame_or_fails_the_decoder(
    size: int, cap: int, direct_min: int, body: bytes
) -> None:
    decoder = _native._FrameDecoder(max_frame_size=cap, direct_min=direct_min)
    body = body[: max(size, 0)]  # this frame's bytes, no more
    got = attempt(decoder.feed, struct.pack(">i", size) + body)
    if size < 0 or size > cap:
        assert isinstance(got, Errors.FrameTooLargeError), got
        # Failed for good: nothing more comes out, whatever follows.
        assert isinstance(attempt(decoder.feed, struct.pack(">i", 0)), Errors.FrameTooLargeError)
        assert isinstance(attempt(decoder.take), Errors.FrameTooLargeError)
        return
    assert not isinstance(got, Exception), got
    if len(body) >= size:
        assert [bytes(f) for f in got] == [body]
        assert decoder.buffered == 0
        return
    assert got == []
    direct = size >= max(direct_min, 1)
    # Received directly, the size prefix is not kept.
    assert decoder.buffered == len(body) + (0 if direct else 4)
    window = decoder.receive_window()
    if direct:
        # Received directly: the window is the rest of the frame, zeros so far (its storage
        # is not touched until written: a hostile 2 GiB frame costs no memory).
        assert window is not None and len(window) == size - len(body)
        assert not any(window[:4096])
        window.release()
    else:
        assert window is None


# ---- record batches ------------------------------------------------------------------------

Header = tuple[str, bytes | None]
Rec = tuple[int, bytes | None, bytes | None, list[Header]]

HEADER_KEYS = st.text(st.characters(codec="utf-8"), max_size=8)
# Timestamps of every size: deltas within a batch wrap on both sides, as Kafka's do.
TIMESTAMPS = st.one_of(st.integers(-1, 2**41), st.integers(-(2**63), 2**63 - 1))
RECORDS = st.tuples(
    TIMESTAMPS,
    st.none() | st.binary(max_size=24),
    st.none() | st.binary(max_size=120) | st.just(b"v" * 3000),
    st.lists(st.tuples(HEADER_KEYS, st.none() | st.binary(max_size=12)), max_size=3),
)


@dataclass
class BatchSpec:
    """One batch as written: its records and header fields, where it lies in the bytes."""

    records: list[Rec]
    codec: str
    base_offset: int
    transactional: bool
    producer_id: int
    log_append_time: bool
    start: int = 0
    end: int = 0
    raw_size: int = 0  # its records section uncompressed

    @property
    def last_offset(self) -> int:
        return self.base_offset + max(len(self.records) - 1, 0)

    def decoded(self) -> list[tuple[Any, ...]]:
        """(offset, timestamp, timestamp type, key, value, headers) of each record."""
        max_ts = max((r[0] for r in self.records), default=-1)
        return [
            (
                self.base_offset + i,
                max_ts if self.log_append_time else ts,
                int(self.log_append_time),
                key,
                value,
                [tuple(h) for h in headers],
            )
            for i, (ts, key, value, headers) in enumerate(self.records)
        ]


@st.composite
def batch_streams(draw: st.DrawFn, max_batches: int = 4) -> tuple[bytes, list[BatchSpec]]:
    """Record batches one after another, as a partition's fetched records are."""
    offset = draw(st.integers(0, 2**40))
    specs: list[BatchSpec] = []
    out = bytearray()
    for _ in range(draw(st.integers(1, max_batches))):
        records = draw(st.lists(RECORDS, max_size=6))
        transactional = draw(st.booleans())
        spec = BatchSpec(
            records=records,
            codec=draw(st.sampled_from(CODECS)),
            base_offset=offset,
            transactional=transactional,
            producer_id=draw(st.sampled_from([-1, 7, 8])) if transactional else -1,
            log_append_time=draw(st.booleans()),
        )
        batch = _native.encode_batch(
            records,
            base_offset=offset,
            compression=spec.codec,
            transactional=transactional,
            producer_id=spec.producer_id,
            producer_epoch=draw(st.integers(-1, 2**15 - 1)),
            base_sequence=draw(I32),
            log_append_time=spec.log_append_time,
        )
        spec.start, spec.end = len(out), len(out) + len(batch)
        spec.raw_size = len(_native.encode_batch(records)) - 61
        out += batch
        specs.append(spec)
        offset = spec.last_offset + 1 + draw(st.sampled_from([0, 0, 1, 1000]))
    return bytes(out), specs


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def fix_crcs(data: bytearray) -> None:
    """Give every batch whose length field still fits the bytes a matching CRC (so a change
    reaches the record parser and the decompressors with check_crcs on)."""
    pos = 0
    while pos + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        end = pos + 12 + length
        if length < 49 or end > len(data):
            return
        struct.pack_into(">I", data, pos + 17, crc32c(bytes(data[pos + 21 : end])))
        pos = end


def record_rows(records: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (r.offset, r.timestamp, r.timestamp_type, r.key, r.value, [tuple(h) for h in r.headers])
        for r in records
    ]


def column_rows(columns: Any, topic: str, partition: int) -> list[tuple[Any, ...]]:
    """decode_columns' rows as record_rows has them (timestamps back in ms, which the
    columns hold in µs)."""
    batch = columns.to_pyarrow()
    assert batch.num_rows == columns.num_rows == len(columns)
    assert set(batch.column("topic").to_pylist()) <= {topic}
    assert set(batch.column("partition").to_pylist()) <= {partition}
    micros = batch.column("timestamp").cast(pa.int64()).to_pylist()
    return [
        (offset, us // 1000, ts_type, key, value, [(h["key"], h["value"]) for h in headers or []])
        for offset, us, ts_type, key, value, headers in zip(
            batch.column("offset").to_pylist(),
            micros,
            batch.column("timestampType").to_pylist(),
            batch.column("key").to_pylist(),
            batch.column("value").to_pylist(),
            batch.column("headers").to_pylist(),
            strict=True,
        )
    ]


def summary(d: Any) -> tuple[Any, ...]:
    return (
        d.next_offset,
        d.last_leader_epoch,
        d.truncated,
        d.batches,
        d.skipped_below_start,
        d.skipped_control,
        d.skipped_aborted,
    )


def decode_both(data: Any, topic: str, partition: int, **options: Any) -> Any:
    """decode_records and decode_columns of the same input: they must agree, row for row and
    in their summaries, or raise the same error. Returns decode_records' outcome."""
    records = attempt(_native.decode_records, data, topic, partition, **options)
    columns = attempt(_native.decode_columns, data, topic, partition, **options)
    if isinstance(records, Exception) or isinstance(columns, Exception):
        assert type(records) is type(columns), (records, columns)
        assert str(records) == str(columns)
        return records
    assert summary(records) == summary(columns)
    want = record_rows(records.records)
    # The columns hold µs: ms values beyond ±2^63 µs are clamped there.
    limit = (2**63 - 1) // 1000
    want = [(o, max(min(t, limit), -limit - 1), *rest) for o, t, *rest in want]
    assert column_rows(columns.records, topic, partition) == want
    return records


@given(
    stream=batch_streams(),
    data=st.data(),
)
@fuzz(120)
def test_valid_batches_round_trip_under_any_options(
    stream: tuple[bytes, list[BatchSpec]], data: st.DataObject
) -> None:
    raw, specs = stream
    cut = data.draw(st.one_of(st.just(len(raw)), st.integers(0, len(raw))), label="cut")
    raw = raw[:cut]
    start_offset = data.draw(
        st.one_of(
            st.sampled_from([-(2**63), 0, 2**63 - 1]),
            st.integers(specs[0].base_offset - 2, specs[-1].last_offset + 2),
        ),
        label="start_offset",
    )
    read_committed = data.draw(st.booleans(), label="read_committed")
    aborted = data.draw(
        st.lists(
            st.tuples(st.sampled_from([-1, 7, 8, 9]), st.integers(0, specs[-1].last_offset + 1)),
            max_size=3,
        ),
        label="aborted_transactions",
    )
    limit = data.draw(
        st.sampled_from([0, 1, 64, 4096, 2**20, 2**28, 2**32, 2**32 + 1, 2**63, 2**64 - 1]),
        label="max_decompressed_batch",
    )
    topic = data.draw(HEADER_KEYS, label="topic")
    partition = data.draw(I32, label="partition")
    as_shared = data.draw(st.booleans(), label="as SharedBytes")
    records: Any = raw
    if as_shared:
        (records,) = _native._FrameDecoder().feed(struct.pack(">i", len(raw)) + raw)
    got = decode_both(
        records,
        topic,
        partition,
        start_offset=start_offset,
        read_committed=read_committed,
        aborted_transactions=aborted,
        max_decompressed_batch=limit,
    )

    whole = [s for s in specs if s.end <= cut]
    want: list[tuple[Any, ...]] = []
    skipped_below = skipped_aborted = 0
    too_large = False
    for s in whole:
        if (
            read_committed
            and s.transactional
            and s.producer_id >= 0
            and any(pid == s.producer_id and first <= s.last_offset for pid, first in aborted)
        ):
            skipped_aborted += len(s.records)
            continue
        if s.codec != "none" and s.raw_size > limit:
            too_large = True
            break
        for row in s.decoded():
            if row[0] >= start_offset:
                want.append(row)
            else:
                skipped_below += 1
    if too_large:
        assert isinstance(got, Errors.CorruptRecordException), got
        assert "limit" in str(got)
        return
    assert not isinstance(got, Exception), got
    assert record_rows(got.records) == want
    assert summary(got) == (
        whole[-1].last_offset + 1 if whole else None,
        -1 if whole else None,
        cut != (whole[-1].end if whole else 0),
        len(whole),
        skipped_below,
        0,
        skipped_aborted,
    )
    for r in got.records:
        assert (r.topic, r.partition) == (topic, partition)
        assert r.serialized_key_size == (-1 if r.key is None else len(r.key))
        assert r.serialized_value_size == (-1 if r.value is None else len(r.value))
    # The header-only readers agree with the decoder.
    assert _native.records_end(records) == ((whole[-1].last_offset + 1, -1) if whole else None)
    for s in whole:
        assert _native.batch_position(records, s.base_offset) == s.start


Mutation = tuple[str, int, int]


def mutate(data: bytes, mutations: list[Mutation]) -> bytearray:
    """Apply byte-level mutations: bit flips, bytes set, hostile int32s and varints written
    over what was there (counts, lengths), cuts, insertions and deletions."""
    out = bytearray(data)
    hostile32 = [-1, -2, 0, 1, 2**31 - 1, -(2**31), 0x7FFF, 1_000_000, 49, 48]
    varints = [b"\x01", b"\x7f", b"\xff\xff\xff\xff\x0f", b"\xfe\xff\xff\xff\x0f", b"\x80" * 10]
    for kind, at, value in mutations:
        if not out and kind != "insert":
            continue
        at %= max(len(out), 1)
        if kind == "flip":
            out[at] ^= 1 << (value % 8)
        elif kind == "set":
            out[at] = value % 256
        elif kind == "int32":
            out[at : at + 4] = struct.pack(">i", hostile32[value % len(hostile32)])
        elif kind == "varint":
            v = varints[value % len(varints)]
            out[at : at + len(v)] = v
        elif kind == "cut":
            del out[at:]
        elif kind == "insert":
            out[at:at] = random.Random(value).randbytes(value % 9)
        elif kind == "delete":
            del out[at : at + value % 9]
    return out


MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "set", "int32", "int32", "varint", "cut", "insert", "delete"]),
        st.integers(0, 2**16),
        st.integers(0, 2**16),
    ),
    min_size=1,
    max_size=4,
)
# Field offsets in a batch header: the length, the attributes (codec bits), the last offset
# delta, the record count, and the first record's length.
HEADER_FIELDS = [8, 21, 23, 57, 61]


@given(stream=batch_streams(max_batches=2), mutations=MUTATIONS, data=st.data())
@fuzz(250)
def test_corrupted_batches_are_errors_or_records_made_of_their_bytes(
    stream: tuple[bytes, list[BatchSpec]], mutations: list[Mutation], data: st.DataObject
) -> None:
    raw, specs = stream
    # Aim some mutations at the header fields of a batch.
    aimed = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(specs), st.sampled_from(HEADER_FIELDS), st.integers(0, 2**16)
            ),
            max_size=2,
        )
    )
    mutations = [("int32", s.start + f, v) for s, f, v in aimed] + mutations
    corrupt = mutate(raw, mutations)
    check_crcs = data.draw(st.booleans(), label="fix CRCs and check them")
    if check_crcs:
        fix_crcs(corrupt)
    limits = [0, 1, 100, 4096, 2**24, 2**32 + 1, 2**64 - 1]
    limit = data.draw(st.sampled_from(limits), label="max_decompressed_batch")
    got = decode_both(bytes(corrupt), "t", 0, check_crcs=check_crcs, max_decompressed_batch=limit)
    if isinstance(got, Exception):
        assert isinstance(got, Errors.CorruptRecordException), got
        assert (got.topic, got.partition) == ("t", 0)  # type: ignore[attr-defined]
        return
    if all(s.codec == "none" for s in specs):
        # Uncompressed: every byte handed out was read from the input, nowhere else.
        for r in got.records:
            for part in (r.key, r.value, *(v for _, v in r.headers)):
                assert part is None or part in corrupt
            for key, _ in r.headers:
                assert key.encode() in corrupt
    assert _native.records_end(bytes(corrupt)) == (
        (got.next_offset, got.last_leader_epoch) if got.batches else None
    )


@given(stream=batch_streams(max_batches=1), at=st.integers(21), bit=st.integers(0, 7))
@fuzz(100)
def test_the_crc_catches_any_one_bit_changed(
    stream: tuple[bytes, list[BatchSpec]], at: int, bit: int
) -> None:
    raw, _ = stream
    corrupt = bytearray(raw)
    at = 21 + at % (len(raw) - 21)
    corrupt[at] ^= 1 << bit
    got = decode_both(bytes(corrupt), "t", 0)
    assert isinstance(got, Errors.CorruptRecordException), got
    assert "CRC" in str(got) or "crc" in str(got)


@given(
    head=st.sampled_from(
        [b"", bytes(16) + b"\x02", bytes(8) + struct.pack(">i", 49) + bytes(4) + b"\x02"]
    ),
    tail=st.binary(max_size=600),
    options=st.fixed_dictionaries(
        {},
        optional={
            "check_crcs": st.booleans(),
            "read_committed": st.booleans(),
            "start_offset": I64,
            "max_decompressed_batch": st.sampled_from([0, 1, 4096, 2**24]),
            "aborted_transactions": st.lists(st.tuples(I64, I64), max_size=3),
        },
    ),
)
@fuzz(150)
def test_random_bytes_never_crash_the_record_decoders(
    head: bytes, tail: bytes, options: dict[str, Any]
) -> None:
    data = head + tail
    got = decode_both(data, "t", 0, **options)
    assert not isinstance(got, Exception) or isinstance(got, Errors.CorruptRecordException), got
    end = attempt(_native.records_end, data)
    assert end is None or isinstance(end, tuple), end
    position = attempt(_native.batch_position, data, 0)
    assert position is None or (isinstance(position, int) and 0 <= position < len(data))


@given(
    arguments=st.fixed_dictionaries(
        {
            "topic": st.one_of(HEADER_KEYS, st.just("\ud800"), st.just(b"t"), st.none()),
            "partition": st.one_of(I32, st.sampled_from([2**31, -(2**31) - 1, "0", None])),
        },
        optional={
            "check_crcs": st.sampled_from([True, False, 1, None]),
            "start_offset": st.one_of(I64, st.sampled_from([2**63, -(2**63) - 1, 1.5])),
            "max_decompressed_batch": st.sampled_from([-1, 2**64, 2**64 - 1, 0, "1"]),
            "aborted_transactions": st.sampled_from(
                [None, [], [(1,)], [(1, 2, 3)], "x", [1], [(2**63, 0)], [(None, 0)]]
            ),
            "key_deserializer": st.sampled_from([None, len, 5]),
        },
    ),
    records=st.sampled_from([b"", b"\x00" * 61, bytearray(61), memoryview(b"x"), "x", None]),
)
@fuzz(100)
def test_arguments_of_the_wrong_type_or_range_are_exceptions(
    arguments: dict[str, Any], records: Any
) -> None:
    topic, partition = arguments.pop("topic"), arguments.pop("partition")
    for decode in (_native.decode_records, _native.decode_columns):
        options = dict(arguments)
        if decode is _native.decode_columns:
            options.pop("key_deserializer", None)
        got = attempt(decode, records, topic, partition, **options)
        valid_topic = isinstance(topic, str) and topic != "\ud800"
        valid_partition = isinstance(partition, int) and -(2**31) <= partition < 2**31
        if not (valid_topic and valid_partition and isinstance(records, bytes)):
            assert isinstance(got, Exception), got
    for reader in (
        _native.records_end,
        _native.peek_correlation_id,
        _native.is_unsupported_version_reply,
    ):
        read: Any = attempt(reader, records)
        if not isinstance(records, bytes):
            assert isinstance(read, TypeError), read


@given(
    records=st.lists(RECORDS, min_size=1, max_size=5),
    codec=st.sampled_from(CODECS),
    fail_at=st.integers(0, 5),
    part=st.sampled_from(["key", "value"]),
)
@fuzz(60)
def test_a_deserializer_that_raises_ends_the_records_at_its_record(
    records: list[Rec], codec: str, fail_at: int, part: str
) -> None:
    seen: list[Any] = []

    def deserialize(v: bytes | None) -> Any:
        if len(seen) == fail_at:
            raise ValueError("cannot read it")
        seen.append(v)
        return ("read", v)

    batch = _native.encode_batch(records, base_offset=100, compression=codec)
    got = attempt(_native.decode_records, batch, "t", 3, **{f"{part}_deserializer": deserialize})
    if fail_at >= len(records):
        assert not isinstance(got, Exception), got
        assert [getattr(r, part) for r in got.records] == [
            ("read", r[1 if part == "key" else 2]) for r in records
        ]
        assert got.next_offset == 100 + len(records)
    elif fail_at == 0:
        assert isinstance(got, ValueError), got
        assert (got.topic, got.partition, got.offset) == ("t", 3, 100)  # type: ignore[attr-defined]
    else:
        assert not isinstance(got, Exception), got
        assert len(got.records) == fail_at
        assert got.next_offset == 100 + fail_at


# ---- protocol messages ---------------------------------------------------------------------

GOLDEN_DIR = Path(__file__).parent.parent / "fixtures" / "golden"


def golden_frames() -> list[tuple[int, int, str, bytes]]:
    """(api_key, version, "request" or "response", frame) of every golden frame captured."""
    keys = {name: key for key, (name, *_) in _native.supported_apis().items()}
    frames = []
    for path in sorted(GOLDEN_DIR.glob("*/*.bin")):
        name, version, kind = path.stem.rsplit("-", 2)
        frames.append((keys[name], int(version[1:]), kind, path.read_bytes()))
    return frames


GOLDEN = golden_frames()
PROTOCOL_ERRORS = (Errors.ProtocolDecodeError, Errors.IncompatibleBrokerVersion)


@given(
    seed=st.sampled_from(GOLDEN),
    mutations=MUTATIONS,
    version=st.one_of(st.none(), st.integers(-1, 20), st.sampled_from([2**15, -(2**15) - 1])),
)
@fuzz(300)
def test_mutated_protocol_frames_are_errors_or_decode_to_what_encodes_back(
    seed: tuple[int, int, str, bytes], mutations: list[Mutation], version: int | None
) -> None:
    api_key, golden_version, kind, frame = seed
    data = bytes(mutate(frame, mutations))
    v = golden_version if version is None else version
    if kind == "response":
        got = attempt(_native.decode_response, api_key, v, data)
        if not -(2**15) <= v < 2**15:
            assert isinstance(got, OverflowError), got
            return
        if isinstance(got, Exception):
            assert isinstance(got, PROTOCOL_ERRORS), got
            return
        correlation_id, body = got
        again = _native.encode_response(api_key, v, correlation_id, body)
        assert _native.decode_response(api_key, v, again[4:]) == got
    else:
        request = attempt(_native.decode_request, data)
        if isinstance(request, Exception):
            assert isinstance(request, PROTOCOL_ERRORS), request
            return
        again = _native.encode_request(*request)
        assert _native.decode_request(again[4:]) == request
    corr = attempt(_native.peek_correlation_id, data)
    if len(data) < 4:
        assert isinstance(corr, Errors.ProtocolDecodeError), corr
    else:
        assert corr == struct.unpack(">i", data[:4])[0]
    assert attempt(_native.is_unsupported_version_reply, data) in (True, False)


@given(
    records=st.lists(st.none() | st.binary(max_size=200), min_size=1, max_size=4),
    version=st.integers(4, 18),
    mutations=st.none() | MUTATIONS,
    shared=st.booleans(),
)
@fuzz(150)
def test_fetch_records_are_ranges_of_the_frame_they_came_in(
    records: list[bytes | None], version: int, mutations: list[Mutation] | None, shared: bool
) -> None:
    partition = {
        "error_code": 0,
        "high_watermark": 5,
        "last_stable_offset": 5,
        "log_start_offset": 0,
        "aborted_transactions": [],
        "preferred_read_replica": -1,
    }
    body = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {
                "topic": "t",
                "topic_id": bytes(range(16)),
                "partitions": [
                    {**partition, "partition_index": i, "records": r} for i, r in enumerate(records)
                ],
            }
        ],
    }
    frame = _native.encode_response(1, version, 9, body)[4:]
    if mutations:
        frame = bytes(mutate(frame, mutations))
    data: Any = frame
    if shared:
        (data,) = _native._FrameDecoder().feed(struct.pack(">i", len(frame)) + frame)
    got = attempt(_native.decode_fetch_response, version, data)
    if isinstance(got, Exception):
        assert isinstance(got, PROTOCOL_ERRORS) and mutations, got
        return
    _, decoded = got
    found = [p["records"] for t in decoded["responses"] for p in t["partitions"]]
    for r in found:
        assert r is None or bytes(r) in frame, "records that are not bytes of the frame"
    if not mutations:
        assert [None if r is None else bytes(r) for r in found] == records


# ---- the producer's batches ----------------------------------------------------------------

ODD_TIMESTAMPS = st.sampled_from([2**63, -(2**63) - 1, 1.5, "0"])
ODD_BYTES = st.sampled_from(["k", bytearray(b"k"), 5, memoryview(b"k")])
ODD_HEADERS = st.sampled_from([[(b"k", b"v")], [("k",)], "h", None, [("k", "v")], [5]])
ADDS = st.tuples(
    st.one_of(st.none(), TIMESTAMPS, ODD_TIMESTAMPS),
    st.one_of(st.none(), st.binary(max_size=40), ODD_BYTES),
    st.one_of(st.none(), st.binary(max_size=300), st.just(b"x" * 5000), ODD_BYTES),
    st.one_of(
        st.lists(st.tuples(HEADER_KEYS, st.none() | st.binary(max_size=10)), max_size=3),
        ODD_HEADERS,
    ),
)


def valid_add(timestamp: Any, key: Any, value: Any, headers: Any) -> bool:
    return (
        (timestamp is None or (isinstance(timestamp, int) and -(2**63) <= timestamp < 2**63))
        and (key is None or isinstance(key, bytes))
        and (value is None or isinstance(value, bytes))
        and isinstance(headers, list)
        and all(
            isinstance(h, tuple)
            and len(h) == 2
            and isinstance(h[0], str)
            and (h[1] is None or isinstance(h[1], bytes))
            for h in headers
        )
    )


@pytest.fixture(scope="module")
def event_loop_for_futures() -> Iterator[asyncio.AbstractEventLoop]:
    """The loop record futures belong to (never run: the properties read futures directly)."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@given(
    batch_size=st.one_of(st.integers(0, 20_000), st.sampled_from([2**64 - 1, -1, 2**64])),
    adds=st.lists(ADDS, max_size=12),
    codec=st.sampled_from([*CODECS, "brotli", ""]),
    producer=st.tuples(I64, st.integers(-(2**15) - 1, 2**15), st.one_of(I32, st.just(2**31))),
    base_offset=st.integers(-1, 2**40),
)
@fuzz(120)
def test_producer_batches_take_what_fits_and_encode_what_they_took(
    event_loop_for_futures: asyncio.AbstractEventLoop,
    batch_size: int,
    adds: list[tuple[Any, Any, Any, Any]],
    codec: str,
    producer: tuple[int, int, int],
    base_offset: int,
) -> None:
    made = attempt(_native.BatchRecords, batch_size)
    if not 0 <= batch_size < 2**64:
        assert isinstance(made, OverflowError), made
        return
    assert isinstance(made, _native.BatchRecords), made
    batch = made
    batch.set_loop(event_loop_for_futures)
    taken: list[tuple[int | None, Any, Any, Any]] = []
    futures = []
    for timestamp, key, value, headers in adds:
        before = (batch.record_count, batch.size, batch.closed)
        got = attempt(batch.add, timestamp, key, value, headers)
        if not valid_add(timestamp, key, value, headers):
            assert isinstance(got, (TypeError, ValueError, OverflowError)), got
            # Refused as it is read: the batch is as it was.
            assert (batch.record_count, batch.size, batch.closed) == before
            continue
        assert not isinstance(got, Exception), got
        if got is None:
            # Closed, or no room: a first record is always taken.
            assert before[0] > 0 or before[2]
            assert batch.closed and batch.record_count == before[0]
            continue
        assert not before[2] and timestamp in (None, got)
        taken.append((got, key, value, headers))
        futures.append(batch.last_future(got))
        assert batch.record_count == len(taken)
        assert batch.record_count == 1 or batch.size <= batch_size
    pid, epoch, sequence = producer
    encoded = attempt(
        batch.encode,
        compression=codec,
        transactional=False,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=sequence,
    )
    if not (-(2**15) <= epoch < 2**15 and -(2**31) <= sequence < 2**31):
        assert isinstance(encoded, OverflowError), encoded
        return
    if codec not in CODECS:
        assert isinstance(encoded, ValueError), encoded
        return
    assert isinstance(encoded, bytes), encoded
    plain = batch.encode(
        compression="none",
        transactional=False,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=sequence,
    )
    assert len(plain) == batch.size
    decoded = _native.decode_records(encoded, "t", 0)
    assert [
        (r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in decoded.records
    ] == [(ts, key, value, [tuple(h) for h in headers]) for ts, key, value, headers in taken]
    # The outcome reaches every record's future.
    assert all(not f.done() for f in futures)
    batch.resolve(TopicPartition("t", 2), base_offset, -1, None)
    for i, f in enumerate(futures):
        assert f.done()
        metadata = f.result()
        assert (metadata.topic, metadata.partition) == ("t", 2)
        assert metadata.offset == (base_offset + i if base_offset >= 0 else -1)
        assert metadata.timestamp == taken[i][0]
    assert batch.closed


@given(
    limit=st.one_of(st.integers(0, 600), st.sampled_from([2**64 - 1, -1])),
    sends=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "missing", 5]),
            st.one_of(st.none(), st.binary(max_size=20), st.sampled_from([bytearray(b"k"), 7])),
            st.one_of(st.binary(max_size=400), st.sampled_from(["v", bytearray(b"v"), None, 7])),
        ),
        max_size=10,
    ),
    batch_size=st.integers(0, 2000),
    counts=st.tuples(st.integers(0, 4), st.integers(0, 4)),
)
@fuzz(80)
def test_open_batches_take_fitting_bytes_records_for_open_batches_only(
    event_loop_for_futures: asyncio.AbstractEventLoop,
    limit: int,
    sends: list[tuple[Any, Any, Any]],
    batch_size: int,
    counts: tuple[int, int],
) -> None:
    """Whatever the limit, topic, key, value and partition counts, a shortcut send gives a
    future (the record is in the batch, which it fits) or None (the batch is untouched)."""
    made = attempt(_native.OpenBatches, limit)
    if not 0 <= limit < 2**64:
        assert isinstance(made, OverflowError), made
        return
    assert isinstance(made, _native.OpenBatches), made
    table = made
    batch = _native.BatchRecords(batch_size)
    batch.set_loop(event_loop_for_futures)
    table.opened("a", 0, batch)
    table.stick("a", 0)
    table.partition_count("a", counts[0])
    table.stick("b", 0)
    table.partition_count("b", counts[1])
    for topic, key, value in sends:
        count = batch.record_count
        got = (
            attempt(table.send, topic, value)
            if key is None
            else attempt(table.send_keyed, topic, key, value)
        )
        assert got is None or isinstance(got, _native.RecordFuture), got
        assert batch.record_count == count + isinstance(got, _native.RecordFuture)
        if isinstance(got, _native.RecordFuture):
            fits = _native.BATCH_HEADER_LEN + _native.record_size_bound(
                key if type(key) is bytes else None, value, []
            )
            assert topic == "a" and type(value) in (bytes, type(None)) and fits <= limit


# ---- Arrow input ---------------------------------------------------------------------------

BYTES_TYPES = {
    "binary": pa.binary(),
    "large_binary": pa.large_binary(),
    "string": pa.string(),
    "large_string": pa.large_string(),
    "null": pa.null(),
}
TIMESTAMP_TYPES = {
    "int64": (pa.int64(), 1),
    "s": (pa.timestamp("s"), 0),
    "ms": (pa.timestamp("ms", tz="UTC"), 1),
    "us": (pa.timestamp("us"), 1000),
    "ns": (pa.timestamp("ns", tz="Europe/Paris"), 1_000_000),
}
# One change that makes the columns unproducible (TypeError), applied to every batch.
ODD_COLUMNS = [
    "extra_column",
    "value_int32",
    "value_dictionary",
    "value_string_view",
    "key_fixed_size",
    "headers_list_of_int",
    "headers_wrong_names",
    "headers_int_key",
    "headers_large_list",
    "partition_int16",
    "timestamp_string",
    "timestamp_date",
    "no_value",
]


def odd_column(kind: str, n: int) -> tuple[str, pa.Array]:
    """A column that cannot be produced, for a batch of `n` rows. Every type is given: pyarrow
    infers the null type for an empty list, and a null-typed optional column is allowed."""
    entry = pa.struct([("key", pa.string()), ("value", pa.binary())])
    makers: dict[str, Callable[[], tuple[str, pa.Array]]] = {
        "extra_column": lambda: ("extra", pa.array(range(n), pa.int32())),
        "value_int32": lambda: ("value", pa.array(range(n), pa.int32())),
        "value_dictionary": lambda: ("value", pa.array(["v"] * n, pa.string()).dictionary_encode()),
        "value_string_view": lambda: ("value", pa.array(["v"] * n, pa.string_view())),
        "key_fixed_size": lambda: ("key", pa.array([b"kk"] * n, pa.binary(2))),
        "headers_list_of_int": lambda: ("headers", pa.array([[1]] * n, pa.list_(pa.int32()))),
        "headers_wrong_names": lambda: (
            "headers",
            pa.array(
                [[{"k": "a", "v": b"b"}]] * n,
                pa.list_(pa.struct([("k", pa.string()), ("v", pa.binary())])),
            ),
        ),
        "headers_int_key": lambda: (
            "headers",
            pa.array(
                [[{"key": 1, "value": b"b"}]] * n,
                pa.list_(pa.struct([("key", pa.int32()), ("value", pa.binary())])),
            ),
        ),
        "headers_large_list": lambda: ("headers", pa.array([[]] * n, pa.large_list(entry))),
        "partition_int16": lambda: ("partition", pa.array([0] * n, pa.int16())),
        "timestamp_string": lambda: ("timestamp", pa.array(["0"] * n, pa.string())),
        "timestamp_date": lambda: ("timestamp", pa.array([0] * n, pa.date32())),
    }
    return makers[kind]()


@dataclass
class ArrowSend:
    """What one plan_arrow_records call gets, and what the rows in it should become."""

    objects: list[Any]
    rows: list[tuple[Any, ...]]  # (key, value, headers, timestamp ms or None, partition or None)
    problems: set[type[Exception]]
    max_row: int  # an upper bound of one row's encoded size


def encoded(v: bytes | str | None) -> bytes | None:
    return v.encode() if isinstance(v, str) else v


def rarely_none(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
    """`strategy`, or None one time in sixteen."""
    return st.tuples(st.integers(0, 15), strategy).map(lambda t: None if t[0] == 0 else t[1])


@st.composite
def arrow_sends(draw: st.DrawFn, num_partitions: int, clean: bool = False) -> ArrowSend:
    """Arrow data to produce: record batches, struct arrays (with null rows), tables and
    readers (streams), sliced or not, with nulls in every column and in the header lists and
    entries, sometimes with a column that cannot be produced. `clean`: only batches and
    struct arrays, of rows that can be produced."""
    key_type = draw(st.sampled_from([None, *BYTES_TYPES]))
    value_type = draw(st.sampled_from(list(BYTES_TYPES)))
    headers = draw(st.sampled_from([None, "null", "list"]))
    header_key_type = draw(st.sampled_from(["string", "large_string"]))
    header_value_type = draw(st.sampled_from(["binary", "large_binary", "string"]))
    partition_type = draw(st.sampled_from([None, "int32", "int64", "null"]))
    timestamp_type = draw(st.sampled_from([None, "null", *TIMESTAMP_TYPES]))
    odd = draw(st.none() | st.sampled_from(ODD_COLUMNS)) if draw(st.integers(0, 5)) == 0 else None
    wrappings = ["batch", "struct", "table", "reader", "stream_object"]
    wrapping = draw(st.sampled_from(wrappings[:2] if clean else wrappings))
    if clean:
        odd = None

    def sometimes_none(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T | None]:
        return strategy if clean else rarely_none(strategy)

    problems: set[type[Exception]] = set()
    if odd is not None:
        problems.add(TypeError)

    def values_of(kind: str | None, n: int) -> list[Any]:
        if kind is None or kind == "null":
            return [None] * n
        text = "string" in kind
        item = HEADER_KEYS if text else st.binary(max_size=30)
        return draw(st.lists(st.none() | item, min_size=n, max_size=n))

    batches: list[pa.RecordBatch | pa.StructArray] = []
    rows: list[tuple[Any, ...]] = []
    max_row = 0
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(0, 6))
        columns: dict[str, pa.Array] = {}
        keys = values_of(key_type, n)
        values = values_of(value_type, n)
        if key_type is not None:
            columns["key"] = pa.array(keys, BYTES_TYPES[key_type])
        columns["value"] = pa.array(values, BYTES_TYPES[value_type])
        header_rows: list[Any] = [None] * n
        if headers == "null":
            columns["headers"] = pa.nulls(n)
        elif headers == "list":
            entry = st.fixed_dictionaries(
                {
                    "key": sometimes_none(HEADER_KEYS),
                    "value": st.none()
                    | (HEADER_KEYS if header_value_type == "string" else st.binary(max_size=10)),
                }
            )
            header_rows = draw(
                st.lists(
                    st.none() | st.lists(sometimes_none(entry), max_size=3), min_size=n, max_size=n
                )
            )
            entry_type = pa.struct(
                [("key", BYTES_TYPES[header_key_type]), ("value", BYTES_TYPES[header_value_type])]
            )
            columns["headers"] = pa.array(header_rows, pa.list_(entry_type))
        partitions: list[int | None] = [None] * n
        if partition_type == "null":
            columns["partition"] = pa.nulls(n)
        elif partition_type is not None:
            partition = st.none() | st.integers(0, num_partitions - 1)
            if draw(st.integers(0, 4)) == 0 and not clean:
                partition = st.integers(-1, num_partitions)  # out of range now and then
            partitions = draw(st.lists(partition, min_size=n, max_size=n))
            columns["partition"] = pa.array(partitions, getattr(pa, partition_type)())
        timestamps: list[int | None] = [None] * n
        if timestamp_type == "null":
            columns["timestamp"] = pa.nulls(n)
        elif timestamp_type is not None:
            arrow_type, per_ms = TIMESTAMP_TYPES[timestamp_type]
            span = 2**40 * max(per_ms, 1)
            timestamps = draw(
                st.lists(st.none() | st.integers(-span, span), min_size=n, max_size=n)
            )
            columns["timestamp"] = pa.array(timestamps, arrow_type)
            if per_ms == 0:  # seconds
                timestamps = [None if t is None else t * 1000 for t in timestamps]
            else:
                timestamps = [None if t is None else t // per_ms for t in timestamps]
        if odd == "no_value":
            del columns["value"]
        elif odd is not None:
            name, array = odd_column(odd, n)
            columns[name] = array
        row_nulls = [False] * n
        if wrapping == "struct":
            row_nulls = draw(
                st.lists(
                    st.integers(0, 30).map(lambda v: v == 0 and not clean), min_size=n, max_size=n
                )
            )
            batch: Any = pa.StructArray.from_arrays(
                list(columns.values()), names=list(columns), mask=pa.array(row_nulls, pa.bool_())
            )
        else:
            batch = pa.RecordBatch.from_pydict(columns)
        start = draw(st.integers(0, n))
        length = draw(st.integers(0, n - start))
        if draw(st.booleans()):
            batch = batch.slice(start, length)
        else:
            start, length = 0, n
        for i in range(start, start + length):
            if row_nulls[i]:
                problems.add(ValueError)
                continue
            hs = header_rows[i] or []
            if any(e is None or e["key"] is None for e in hs):
                problems.add(ValueError)
            p = partitions[i]
            if p is not None and not 0 <= p < num_partitions:
                problems.add(ValueError)
            hs = [(e["key"], encoded(e["value"])) for e in hs if e is not None]
            row = (encoded(keys[i]), encoded(values[i]), hs, timestamps[i], p)
            rows.append(row)
            size = 30 + sum(len(x or b"") + 5 for x in row[:2])
            size += sum(len((k or "").encode()) + len(v or b"") + 10 for k, v in hs)
            max_row = max(max_row, size)
        batches.append(batch)
    objects: list[Any]
    if wrapping in ("batch", "struct") or odd is not None:
        objects = batches
    else:
        schema = batches[0].schema
        if wrapping == "table":
            objects = [pa.Table.from_batches(batches, schema)]
        else:
            reader = pa.RecordBatchReader.from_batches(schema, batches)
            objects = [reader if wrapping == "reader" else StreamOnly(reader)]
    return ArrowSend(objects, rows, problems, max_row)


class StreamOnly:
    """An object exporting only the Arrow PyCapsule stream interface (as polars does)."""

    def __init__(self, reader: pa.RecordBatchReader) -> None:
        self.reader = reader

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.reader.__arrow_c_stream__(requested_schema)


def is_subsequence(part: list[Any], whole: list[Any]) -> bool:
    it = iter(whole)
    return all(any(x == y for y in it) for x in part)


def check_chunks(
    chunks: list[Any],
    rows: list[tuple[Any, ...]],
    num_partitions: int,
    batch_size: int,
    now_ms: int,
    codec: str,
) -> None:
    """The chunks hold every row once, each in its partition (its own, its key's murmur2, or
    a sticky one), in order within a partition, within their sizes, and encode to batches
    that decode to the rows."""
    got: dict[int, list[tuple[Any, ...]]] = {}
    for chunk in chunks:
        assert 0 <= chunk.partition < num_partitions
        plain = chunk.encode(now_ms)
        assert len(plain) <= chunk.size
        assert chunk.record_count == 1 or chunk.size <= batch_size
        batch = chunk.encode(now_ms, compression=codec)
        records = _native.decode_records(batch, "t", chunk.partition).records
        assert len(records) == chunk.record_count
        got.setdefault(chunk.partition, []).extend(
            (r.key, r.value, [tuple(h) for h in r.headers], r.timestamp) for r in records
        )

    def home(row: tuple[Any, ...]) -> int | None:
        key, _, _, _, partition = row
        if partition is not None:
            return int(partition)
        if key is not None:
            return (_native.murmur2(key) & 0x7FFFFFFF) % num_partitions
        return None

    want = [(k, v, h, now_ms if t is None else t) for k, v, h, t, _ in rows]
    flat = [r for rs in got.values() for r in rs]
    assert sorted(map(repr, flat)) == sorted(map(repr, want)), "rows lost, added or changed"
    for p, rs in got.items():
        candidates = [w for w, row in zip(want, rows, strict=True) if home(row) in (p, None)]
        assert is_subsequence(rs, candidates), f"partition {p}: rows out of order or misplaced"


@given(
    num_partitions=st.sampled_from([0, 1, 1, 2, 3, 7]),
    data=st.data(),
    sticky=st.sampled_from([0, 1, 2, 5, 2**32 - 1, 0, 1, 3, 2**32, -1]),
    batch_size=st.sampled_from([0, 60, 200, 1000, MB, 2**64 - 1]),
    max_request_size=st.sampled_from([0, 90, 300, MB, MB, 2**64 - 1, 2**64 - 1]),
    now_ms=st.integers(-(2**40), 2**41),
    codec=st.sampled_from(CODECS),
)
@fuzz(200)
def test_arrow_rows_are_refused_with_an_exception_or_produced_exactly(
    num_partitions: int,
    data: st.DataObject,
    sticky: int,
    batch_size: int,
    max_request_size: int,
    now_ms: int,
    codec: str,
) -> None:
    send = data.draw(arrow_sends(max(num_partitions, 1)), label="send")
    got = attempt(
        _native.plan_arrow_records,
        send.objects,
        num_partitions=num_partitions,
        sticky=sticky,
        batch_size=batch_size,
        max_request_size=max_request_size,
    )
    if not 0 <= sticky < 2**32:
        assert isinstance(got, OverflowError), got
        return
    problems = set(send.problems)
    if num_partitions == 0:
        problems.add(ValueError)
    if max_request_size < 61 + send.max_row and send.rows:
        problems.add(Errors.MessageSizeTooLargeError)
    if isinstance(got, Exception):
        assert type(got) in problems, f"{got!r}; expected one of {problems}"
        return
    assert not (problems - {Errors.MessageSizeTooLargeError}), f"accepted, despite {problems}"
    check_chunks(got, send.rows, num_partitions, batch_size, now_ms, codec)


# A released ArrowArray: a valid address for a dictionary that must be refused unread.
_RELEASED = ArrowArray()

# Changes to an exported structure that the importer must refuse or survive: counts that do
# not match the type, nulls where it follows pointers, a dictionary, a released child, and
# lengths, offsets and null counts that stay within the buffers (shrinking, never growing:
# a length past the buffers is a lie the C Data Interface cannot show).
TAMPERS = [
    "n_children",
    "n_buffers",
    "length",
    "offset",
    "null_count",
    "buffer",
    "children",
    "child",
    "dictionary",
    "release",
]


def pointer_array(field: Any) -> Any:
    """A pointer to what a structure's pointer field points to, not sharing the field (ctypes
    reads a pointer field as an object over the field itself, which a change to the field
    changes too)."""
    address = ctypes.cast(field, ctypes.c_void_p).value
    return ctypes.cast(address or 0, ctypes.POINTER(ctypes.c_void_p))


class TamperedExport:
    """Exports `batch` as pyarrow does, then changes one field of the ArrowArray at `path`
    (child indices from the top). `restore()` puts it back while the capsule still owns the
    array; once the importer has moved the array out (the capsule's own is released), the
    fields belong to the import, and a change the importer accepted stays (each one is
    harmless to the exporter's release callback)."""

    def __init__(self, batch: pa.RecordBatch, path: list[int], tamper: str, value: int) -> None:
        self.batch, self.path, self.tamper, self.value = batch, path, tamper, value
        self.capsules: Any = None
        self.undo: list[Callable[[], None]] = []
        self.top: ArrowArray | None = None

    def __arrow_c_array__(self, requested_schema: Any = None) -> tuple[Any, Any]:
        capsules: tuple[Any, Any] = self.batch.__arrow_c_array__()
        self.capsules = capsules
        self.top = ArrowArray.from_address(capsule_pointer(capsules[1], b"arrow_array"))
        target = self.top
        for i in self.path:
            if i >= target.n_children:
                return capsules
            target = ArrowArray.from_address(target.children[i])
        value, tamper = self.value, self.tamper
        if tamper in ("n_children", "n_buffers"):
            self.set(target, tamper, [-1, 0, 1, 2, 3, 4, 2**40][value % 7])
        elif tamper == "length":
            self.set(
                target, tamper, -1 - value % 3 if value % 4 == 0 else value % (target.length + 1)
            )
        elif tamper == "offset":
            room = target.length  # within the buffers: shrink the length as much
            shift = value % (room + 1)
            self.set(target, "length", target.length - shift)
            self.set(target, "offset", target.offset + shift if value % 5 else -1)
        elif tamper == "null_count":
            self.set(target, tamper, value % (target.length + 4) - 2)
        elif tamper == "buffer" and target.n_buffers > 0:
            buffers = pointer_array(target.buffers)
            i = value % target.n_buffers
            saved = buffers[i]
            buffers[i] = None
            self.undo.append(lambda: buffers.__setitem__(i, saved))
        elif tamper == "children" and target.n_children > 0:
            saved_children = pointer_array(target.children)
            target.children = None
            self.undo.append(lambda: setattr(target, "children", saved_children))
        elif tamper == "child" and target.n_children > 0:
            children = pointer_array(target.children)
            i = value % target.n_children
            saved = children[i]
            children[i] = None
            self.undo.append(lambda: children.__setitem__(i, saved))
        elif tamper == "dictionary":
            self.set(target, tamper, ctypes.addressof(_RELEASED))
        elif tamper == "release" and self.path:
            self.set(target, tamper, None)
        return capsules

    def set(self, target: ArrowArray, name: str, value: Any) -> None:
        saved = getattr(target, name)
        setattr(target, name, value)
        self.undo.append(lambda: setattr(target, name, saved))

    def restore(self) -> None:
        if self.top is not None and self.top.release:
            for undo in reversed(self.undo):
                undo()
        self.capsules = None


@given(
    send=arrow_sends(num_partitions=1, clean=True),
    path=st.lists(st.integers(0, 5), max_size=3),
    tamper=st.sampled_from(TAMPERS),
    value=st.integers(0, 2**16),
)
@fuzz(200)
def test_tampered_exports_are_refused_or_read_within_their_buffers(
    send: ArrowSend, path: list[int], tamper: str, value: int
) -> None:
    tampered = [TamperedExport(b, path, tamper, value) for b in send.objects]
    try:
        got = attempt(
            _native.plan_arrow_records,
            tampered,
            num_partitions=1,
            sticky=0,
            batch_size=MB,
            max_request_size=MB,
        )
    finally:
        for t in tampered:
            t.restore()
    if isinstance(got, Exception):
        assert isinstance(got, (ValueError, TypeError)), got
        return
    # Accepted (a shorter length, an offset within the data, a null count of -1, no validity
    # bitmap): whatever is sent are bytes of the data, nothing else.
    written = {x for row in send.rows for x in (row[0], row[1])} | {None, b""}
    header_bytes = {x for row in send.rows for h in row[2] for x in (encoded(h[0]), h[1])}
    for chunk in got:
        for r in _native.decode_records(chunk.encode(0), "t", 0).records:
            assert r.key in written and r.value in written, "bytes that were not written"
            for k, v in r.headers:
                assert k.encode() in header_bytes | {b""} and v in header_bytes | {None, b""}


@given(
    values=st.lists(st.binary(max_size=20), min_size=1, max_size=8),
    keys=st.lists(HEADER_KEYS, min_size=8, max_size=8),
    header_counts=st.lists(st.integers(0, 2), min_size=8, max_size=8),
    writes=st.lists(
        st.tuples(
            st.sampled_from(
                ["value_offsets", "value_data", "key_offsets", "key_data", "list_offsets"]
            ),
            st.integers(0, 2**16),
            st.one_of(I32, st.integers(0, 255)),
        ),
        min_size=1,
        max_size=4,
    ),
    batch_size=st.sampled_from([100, MB]),
    codec=st.sampled_from(CODECS),
)
@fuzz(150)
def test_buffers_changed_between_planning_and_encoding_are_refused_or_sent_as_they_are(
    values: list[bytes],
    keys: list[str],
    header_counts: list[int],
    writes: list[tuple[str, int, int]],
    batch_size: int,
    codec: str,
) -> None:
    """The caller's memory (numpy arrays through pa.py_buffer) is checked when planned, then
    written over before the rows are encoded: offsets anywhere, data bytes, list offsets."""
    n = len(values)
    keys = keys[:n]
    header_counts = header_counts[:n]

    def offsets_of(items: list[bytes]) -> np.ndarray[Any, np.dtype[np.int32]]:
        return np.cumsum([0, *map(len, items)], dtype=np.int32)

    value_offsets = offsets_of(values)
    value_data = np.frombuffer(b"".join(values) or b"\0", dtype=np.uint8).copy()
    key_bytes = [k.encode() for k in keys]
    key_offsets = offsets_of(key_bytes)
    key_data = np.frombuffer(b"".join(key_bytes) or b"\0", dtype=np.uint8).copy()
    list_offsets = np.cumsum([0, *header_counts], dtype=np.int32)
    entries = pa.array(
        [{"key": f"h{i}", "value": b"x" * i} for i in range(int(list_offsets[-1]))],
        pa.struct([("key", pa.string()), ("value", pa.binary())]),
    )
    buffers = {
        "value_offsets": value_offsets,
        "value_data": value_data,
        "key_offsets": key_offsets,
        "key_data": key_data,
        "list_offsets": list_offsets,
    }
    batch = pa.RecordBatch.from_arrays(
        [
            pa.Array.from_buffers(
                pa.binary(), n, [None, pa.py_buffer(value_offsets), pa.py_buffer(value_data)]
            ),
            pa.Array.from_buffers(
                pa.string(), n, [None, pa.py_buffer(key_offsets), pa.py_buffer(key_data)]
            ),
            pa.ListArray.from_buffers(
                pa.list_(entries.type), n, [None, pa.py_buffer(list_offsets)], children=[entries]
            ),
        ],
        names=["value", "key", "headers"],
    )
    chunks = _native.plan_arrow_records(
        [batch], num_partitions=3, sticky=0, batch_size=batch_size, max_request_size=MB
    )
    original = {name: b.copy() for name, b in buffers.items()}
    for name, at, value in writes:
        b = buffers[name]
        b[at % len(b)] = value if b.dtype == np.int32 else value % 256
    data_now = bytes(value_data), bytes(key_data)
    for chunk in chunks:
        got = attempt(chunk.encode, 0, compression=codec)
        if isinstance(got, Exception):
            assert isinstance(got, ValueError), got
            assert "changed after send_arrow" in str(got) or "was planned" in str(got), got
            continue
        # Sent as the memory now is: values and keys are bytes of the buffers, nothing else.
        for r in _native.decode_records(got, "t", chunk.partition).records:
            assert r.value is not None and r.value in data_now[0]
            assert r.key is not None and r.key in data_now[1]
            for k, v in r.headers:
                assert k.startswith("h") and v == b"x" * int(k[1:])
    # Put back, the rows are what they were.
    for name, b in buffers.items():
        b[:] = original[name]
    sent: list[tuple[Any, Any, int]] = []
    for chunk in chunks:
        batch_bytes = chunk.encode(0, compression=codec)
        sent.extend(
            (r.key, r.value, len(r.headers))
            for r in _native.decode_records(batch_bytes, "t", chunk.partition).records
        )
    assert sorted(sent) == sorted(zip(key_bytes, values, header_counts, strict=True))


class FailingStream:
    """A stream of record batches whose producer raises after `fail_at` of them (pyarrow then
    reports the error through the stream's get_next and get_last_error)."""

    def __init__(self, batches: list[pa.RecordBatch], fail_at: int) -> None:
        self.batches, self.fail_at = batches, fail_at

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        def produce() -> Iterator[pa.RecordBatch]:
            for i, batch in enumerate(self.batches):
                if i == self.fail_at:
                    raise RuntimeError(f"the producer of batch {i} failed")
                yield batch

        reader = pa.RecordBatchReader.from_batches(self.batches[0].schema, produce())
        return reader.__arrow_c_stream__(requested_schema)


class OddExporter:
    """An object whose Arrow PyCapsule methods return what they should not."""

    def __init__(self, kind: str, batch: pa.RecordBatch) -> None:
        self.kind, self.batch = kind, batch

    def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
        schema, array = self.batch.__arrow_c_array__()
        return {
            "swapped": (array, schema),
            "schema_twice": (schema, schema),
            "one": (schema,),
            "three": (schema, array, array),
            "not_capsules": (1, 2),
            "none": None,
            "column": pa.array([b"a", b"b"]).__arrow_c_array__(),
            "null_rows": pa.array([{"value": b"a"}, None]).__arrow_c_array__(),
        }[self.kind]


@given(
    rows=st.lists(st.lists(st.binary(max_size=8), max_size=4), min_size=1, max_size=4),
    fail_at=st.integers(0, 4),
    odd=st.sampled_from(
        ["swapped", "schema_twice", "one", "three", "not_capsules", "none", "column", "null_rows"]
    ),
)
@fuzz(60)
def test_streams_and_exporters_that_misbehave_are_exceptions(
    rows: list[list[bytes]], fail_at: int, odd: str
) -> None:
    batches = [pa.record_batch({"value": pa.array(r, pa.binary())}) for r in rows]

    def plan(data: Any) -> Any:
        return attempt(
            _native.plan_arrow_records,
            [data],
            num_partitions=1,
            sticky=0,
            batch_size=MB,
            max_request_size=MB,
        )

    got = plan(FailingStream(batches, fail_at))
    if fail_at < len(batches):
        assert isinstance(got, ValueError), got
        assert f"the producer of batch {fail_at} failed" in str(got)
    else:
        assert not isinstance(got, Exception), got
        assert sum(c.record_count for c in got) == sum(map(len, rows))
    # A stream of arrays that are not record batches (a chunked column).
    column = pa.chunked_array([pa.array(r, pa.binary()) for r in rows], pa.binary())
    assert isinstance(plan(column), TypeError)
    got = plan(OddExporter(odd, batches[0]))
    assert isinstance(got, (TypeError, ValueError)), got


# ---- bugs this suite found: minimal reproductions -------------------------------------------


def run_isolated(code: str, address_space: int = 3 << 30) -> subprocess.CompletedProcess[str]:
    """Run `code` in a fresh interpreter whose address space is capped, so that an
    allocation the size of a hostile count fails there (and aborts that process, not this
    one) instead of taking this machine's memory."""
    prelude = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({address_space}, resource.RLIM_INFINITY))
        """
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "RUST_BACKTRACE": "0"},
    )


def survived(done: subprocess.CompletedProcess[str]) -> bool:
    return done.returncode == 0 and "survived" in done.stdout


def test_timestamps_whose_delta_wraps_round_trip() -> None:
    batch = _native.encode_batch([(-2, None, b"a", []), (2**63 - 1, None, b"b", [])])
    decoded = _native.decode_records(batch, "t", 0)
    assert [r.timestamp for r in decoded.records] == [-2, 2**63 - 1]  # got [-2, -2**63]


def test_a_base_offset_near_the_top_gives_no_wrapped_offsets(
    event_loop_for_futures: asyncio.AbstractEventLoop,
) -> None:
    batch = _native.BatchRecords(1000)
    batch.set_loop(event_loop_for_futures)
    futures = [batch.last_future(batch.add(0, None, b"x", []) or 0) for _ in range(2)]
    batch.resolve(TopicPartition("t", 0), 2**63 - 1, -1, None)
    offsets = [attempt(lambda f=f: f.result().offset) for f in futures]
    # The second record's offset does not exist: unknown (-1) or an error, never -2^63.
    assert offsets[0] == 2**63 - 1
    assert offsets[1] == -1 or isinstance(offsets[1], Exception), offsets


def test_a_hostile_partition_count_is_not_an_allocation() -> None:
    done = run_isolated(
        """
        import pyarrow as pa
        from ferrokafka import _native
        batch = pa.record_batch({"value": pa.array([b"x"])})
        try:
            _native.plan_arrow_records(
                [batch], num_partitions=2**32 - 1, sticky=0, batch_size=1 << 20,
                max_request_size=1 << 20,
            )
        except Exception as exc:
            print("refused", type(exc).__name__)
        print("survived")
        """
    )
    assert survived(done), f"exit status {done.returncode}: {done.stderr[:500]}"


def hostile_snappy_batch() -> bytes:
    """A batch whose snappy records section is one raw block that claims 4 GiB - 1 bytes
    (its varint length prefix) and holds one literal byte."""
    template = _native.encode_batch([(0, None, b"x", [])], compression="snappy")
    body = b"\xff\xff\xff\xff\x0f" + b"\x00a"
    batch = bytearray(template[:61] + body)
    struct.pack_into(">i", batch, 8, 61 - 12 + len(body))
    fix_crcs(batch)
    return bytes(batch)


def test_a_snappy_block_claiming_4_gib_is_refused_without_allocating_it() -> None:
    done = run_isolated(
        f"""
        from ferrokafka import _native
        from ferrokafka.errors import CorruptRecordException
        try:
            _native.decode_records({hostile_snappy_batch()!r}, "t", 0,
                                   max_decompressed_batch=8 << 30)
        except CorruptRecordException as exc:
            print("refused", exc)
        print("survived")
        """
    )
    assert survived(done), f"exit status {done.returncode}: {done.stderr[:500]}"


def test_a_keyboard_interrupt_in_a_deserializer_is_not_swallowed() -> None:
    batch = _native.encode_batch([(0, None, b"a", []), (1, None, b"b", [])])

    def deserialize(value: bytes | None) -> bytes | None:
        if value == b"b":
            raise KeyboardInterrupt
        return value

    with pytest.raises(KeyboardInterrupt):
        _native.decode_records(batch, "t", 0, value_deserializer=deserialize)


def test_an_empty_slice_past_the_start_is_no_rows() -> None:
    batch = pa.record_batch({"value": pa.array([b"x", b"yz"])})
    chunks = _native.plan_arrow_records(
        [batch.slice(1, 0)], num_partitions=1, sticky=0, batch_size=MB, max_request_size=MB
    )
    assert chunks == []


def test_header_keys_changed_to_invalid_utf8_after_planning_are_refused() -> None:
    key_data = np.frombuffer(b"h", dtype=np.uint8).copy()
    keys = pa.Array.from_buffers(
        pa.string(), 1, [None, pa.py_buffer(np.array([0, 1], np.int32)), pa.py_buffer(key_data)]
    )
    entries = pa.StructArray.from_arrays([keys, pa.array([b"v"])], names=["key", "value"])
    headers = pa.ListArray.from_arrays(pa.array([0, 1], pa.int32()), entries)
    batch = pa.RecordBatch.from_arrays([pa.array([b"x"]), headers], names=["value", "headers"])
    (chunk,) = _native.plan_arrow_records(
        [batch], num_partitions=1, sticky=0, batch_size=MB, max_request_size=MB
    )
    key_data[0] = 0xFF
    # Refused (a ValueError naming the row), or sent as a batch that decodes.
    got: Any = attempt(chunk.encode, 0)
    if isinstance(got, bytes):
        decoded = attempt(_native.decode_records, got, "t", 0)
        assert not isinstance(decoded, Exception), f"sent a batch that does not decode: {decoded}"
    else:
        assert isinstance(got, ValueError), got


def test_append_value_without_a_loop_leaves_the_batch_as_it_was() -> None:
    batch = _native.BatchRecords(1000)
    assert isinstance(attempt(batch.append_value, b"x"), RuntimeError)
    assert batch.record_count == 0
