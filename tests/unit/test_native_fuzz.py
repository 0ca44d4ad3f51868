"""Property-based fuzzing of the native module's Python-facing API (issue 35).

Hypothesis drives ``ferrokafka._native`` with hostile arguments: the frame decoder against a
reference model of its documented rules (windows used, lied about, held and released; scratch
buffers of every kind, the window itself included), the record-batch decoders on random,
truncated and corrupted batches with odd options, the producer's ``BatchRecords`` and
``StickySends``, and the Arrow input (nulls at every level, slices, tampered C Data Interface
structures, buffers changed between planning and encoding, streams, unsupported types).

The properties, everywhere: a call returns or raises an ``Exception`` (never a
``BaseException`` only, such as PyO3's ``PanicException``, and never a crash); nothing it returns
holds bytes the test did not write; valid inputs round-trip.

The short run is part of ``make test`` (derandomized: the same examples every run).
``FERROKAFKA_FUZZ_EXAMPLES=N`` runs every property with N random examples instead, for long
runs. Known bugs are ``xfail(strict=True)`` reproductions at the end of the file.
"""

from __future__ import annotations

import array
import mmap
import os
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ferrokafka import _native
from ferrokafka import errors as Errors
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

T = TypeVar("T")

_LONG_RUN = int(os.environ.get("FERROKAFKA_FUZZ_EXAMPLES", "0"))


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
